//! The elementwise kernels' loops on AVX2 (found at run time by [`super::FloatKernel`]):
//! eight elements a step in two vectors of four f64 lanes, the encoder's selects as blends,
//! the table read by gathers, the words packed; the tail of fewer than eight elements by the
//! portable loops. Split from `elementwise.rs`, unchanged.

use super::*;

impl FloatKernel {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode_avx2<W: Word>(&self, words: &[W], out: &mut [f64]) {
        use std::arch::x86_64::*;
        if self.binary32_top && std::mem::size_of::<W>() == 2 {
            return self.decode_bf16_avx2(words, out);
        }
        let n = words.len() / 8 * 8;
        for (o, w) in out[..n].chunks_exact_mut(8).zip(words[..n].chunks_exact(8)) {
            let (v0, v1) = self.values8(w);
            // SAFETY: o holds eight f64s.
            unsafe {
                _mm256_storeu_pd(o.as_mut_ptr(), v0);
                _mm256_storeu_pd(o.as_mut_ptr().add(4), v1);
            }
        }
        self.decode_lanes(&words[n..], &mut out[n..])
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn encode_avx2<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        use std::arch::x86_64::*;
        if self.narrow_bf16 && std::mem::size_of::<W>() == 2 {
            return self.encode_bf16_avx2(xs, out);
        }
        let lanes = Lanes::new(&self.enc);
        let n = xs.len() / 8 * 8;
        for (o, x) in out[..n].chunks_exact_mut(8).zip(xs[..n].chunks_exact(8)) {
            // SAFETY: x holds eight f64s.
            let (x0, x1) = unsafe {
                (
                    _mm256_loadu_pd(x.as_ptr()),
                    _mm256_loadu_pd(x.as_ptr().add(4)),
                )
            };
            store8(lanes.encode(x0), lanes.encode(x1), o);
        }
        self.encode_lanes(&xs[n..], &mut out[n..])
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_avx2(&self, xs: &[f64], out: &mut [f64]) {
        use std::arch::x86_64::*;
        if self.narrow_bf16 {
            return self.quantize_bf16_avx2(xs, out);
        }
        let lanes = Lanes::new(&self.enc);
        let n = xs.len() / 4 * 4;
        for (o, x) in out[..n].chunks_exact_mut(4).zip(xs[..n].chunks_exact(4)) {
            // SAFETY: x and o hold four f64s.
            unsafe {
                let w = lanes.encode(_mm256_loadu_pd(x.as_ptr()));
                _mm256_storeu_pd(o.as_mut_ptr(), self.gather4_64(w));
            }
        }
        self.quantize_lanes(&xs[n..], &mut out[n..])
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn binop_avx2<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        use std::arch::x86_64::*;
        // Quotients keep the f64 loop (the binary32 path is the golden's for + − · only).
        if self.narrow_bf16 && std::mem::size_of::<W>() == 2 && op != ElemOp::Div {
            return self.binop_bf16_avx2(op, a, b, out);
        }
        let lanes = Lanes::new(&self.enc);
        let n = a.len() / 8 * 8;
        let steps = out[..n]
            .chunks_exact_mut(8)
            .zip(a[..n].chunks_exact(8).zip(b[..n].chunks_exact(8)));
        let f = |x: __m256d, y: __m256d| match op {
            ElemOp::Add => _mm256_add_pd(x, y),
            ElemOp::Sub => _mm256_sub_pd(x, y),
            ElemOp::Mul => _mm256_mul_pd(x, y),
            ElemOp::Div => _mm256_div_pd(x, y),
        };
        for (o, (x, y)) in steps {
            let ((x0, x1), (y0, y1)) = (self.values8(x), self.values8(y));
            store8(lanes.encode(f(x0, y0)), lanes.encode(f(x1, y1)), o);
        }
        self.binop_lanes(op, &a[n..], &b[n..], &mut out[n..])
    }

    /// Plain bf16 words of f64s (`W` = u16), eight a step: each f64 rounded to 24 bits by
    /// round-to-odd (truncated, the last bit set if anything was cut), which binary32 then
    /// holds exactly, then rounded to nearest even at bit 16 of the binary32 word as
    /// [`Self::binop_bf16_avx2`] does. Rounding to odd at p + 2 or more bits and then to
    /// nearest at p gives the nearest at p (Boldo and Melquiond, "Emulation of FMA and
    /// correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008): the
    /// one correctly rounded result, not ml_dtypes' double rounding through binary32. A step
    /// with a nonzero |x| below 2^−126 (where binary32 has fewer than 24 bits) takes the
    /// general encoder; beyond binary32's range the conversion gives ±∞, bf16's overflow too.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn encode_bf16_avx2<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        use std::arch::x86_64::*;
        assert!(std::mem::size_of::<W>() == 2);
        let lanes = Lanes::new(&self.enc);
        let n = xs.len() / 8 * 8;
        let steps = out[..n].chunks_exact_mut(8).zip(xs[..n].chunks_exact(8));
        for (o, x) in steps {
            match self.bf16_step(x) {
                Ok(w) => {
                    let w = _mm_packus_epi32(
                        _mm256_castsi256_si128(w),
                        _mm256_extracti128_si256::<1>(w),
                    );
                    // SAFETY: o holds eight u16s.
                    unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), w) };
                }
                Err((x0, x1)) => store8(lanes.encode(x0), lanes.encode(x1), o),
            }
        }
        self.encode_lanes(&xs[n..], &mut out[n..])
    }

    /// [`Self::quantize`] of plain bf16: the words of [`Self::bf16_step`] shifted up are the
    /// binary32 values, widened to f64 (the canonical NaN word gives `f64::NAN`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_bf16_avx2(&self, xs: &[f64], out: &mut [f64]) {
        use std::arch::x86_64::*;
        let lanes = Lanes::new(&self.enc);
        let n = xs.len() / 8 * 8;
        let steps = out[..n].chunks_exact_mut(8).zip(xs[..n].chunks_exact(8));
        for (o, x) in steps {
            let (v0, v1) = match self.bf16_step(x) {
                Ok(w) => {
                    let f = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w));
                    (
                        _mm256_cvtps_pd(_mm256_castps256_ps128(f)),
                        _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(f)),
                    )
                }
                Err((x0, x1)) => (
                    self.gather4_64(lanes.encode(x0)),
                    self.gather4_64(lanes.encode(x1)),
                ),
            };
            // SAFETY: o holds eight f64s.
            unsafe {
                _mm256_storeu_pd(o.as_mut_ptr(), v0);
                _mm256_storeu_pd(o.as_mut_ptr().add(4), v1);
            }
        }
        self.quantize_lanes(&xs[n..], &mut out[n..])
    }

    /// The plain bf16 words of eight f64s (`x`) in the low halves of eight 32-bit lanes, as
    /// [`Self::encode_bf16_avx2`] describes; `Err` with the f64s when one is tiny (nonzero,
    /// below 2^−126), for the general encoder.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn bf16_step(
        &self,
        x: &[f64],
    ) -> Result<std::arch::x86_64::__m256i, (std::arch::x86_64::__m256d, std::arch::x86_64::__m256d)>
    {
        use std::arch::x86_64::*;
        assert!(x.len() == 8);
        let q = |v: u64| _mm256_set1_epi64x(v as i64);
        let (cut, keep, sticky) = (q((1 << 29) - 1), q(!((1 << 29) - 1)), q(1 << 29));
        let (abs64, min_normal) = (q(!(1 << 63)), q(2f64.powi(-126).to_bits()));
        let d = |v: u32| _mm256_set1_epi32(v as i32);
        let (abs_bits, inf, half, one) = (d(0x7fff_ffff), d(0x7f80_0000), d(0x7fff), d(1));
        // Four f64s rounded to odd at 24 bits, as f32s, and whether any is tiny.
        let odd24 = |x: __m256d| {
            let u = _mm256_castpd_si256(x);
            let exact = _mm256_cmpeq_epi64(_mm256_and_si256(u, cut), _mm256_setzero_si256());
            let u = _mm256_or_si256(
                _mm256_and_si256(u, keep),
                _mm256_andnot_si256(exact, sticky),
            );
            let a = _mm256_and_si256(u, abs64);
            let tiny = _mm256_andnot_si256(
                _mm256_cmpeq_epi64(a, _mm256_setzero_si256()),
                _mm256_cmpgt_epi64(min_normal, a),
            );
            (_mm256_cvtpd_ps(_mm256_castsi256_pd(u)), tiny)
        };
        // SAFETY: x holds eight f64s.
        let (x0, x1) = unsafe {
            (
                _mm256_loadu_pd(x.as_ptr()),
                _mm256_loadu_pd(x.as_ptr().add(4)),
            )
        };
        let ((f0, t0), (f1, t1)) = (odd24(x0), odd24(x1));
        let tiny = _mm256_or_si256(t0, t1);
        if _mm256_testz_si256(tiny, tiny) == 0 {
            return Err((x0, x1));
        }
        let u = _mm256_castps_si256(_mm256_set_m128(f1, f0));
        let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(u), one);
        let w = _mm256_srli_epi32::<16>(_mm256_add_epi32(u, _mm256_add_epi32(half, odd)));
        let is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_bits), inf);
        Ok(_mm256_blendv_epi8(w, d(self.f.nan() as u32), is_nan))
    }

    /// a ∘ b of bf16 words (`W` = u16) on the golden's own binary32 path
    /// ([`FloatFormat::narrow`]: `FloatFormat::add` and `mul` of bf16 are
    /// `Narrow::from_f32(to_f32(a) ∘ to_f32(b))`), on eight f32 lanes: the words shifted up are
    /// their binary32 values, f32's sum or product is rounded to nearest even at bit 16 (a
    /// subnormal, ∞ and a carry past the largest finite value alike), NaN made the canonical
    /// NaN.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn binop_bf16_avx2<W: Word>(
        &self,
        op: ElemOp,
        a: &[W],
        b: &[W],
        out: &mut [W],
    ) {
        use std::arch::x86_64::*;
        assert!(std::mem::size_of::<W>() == 2);
        let all = |v: u32| _mm256_set1_epi32(v as i32);
        let (abs_bits, inf, half, one) = (all(0x7fff_ffff), all(0x7f80_0000), all(0x7fff), all(1));
        let nan = all(self.f.nan() as u32);
        let n = a.len() / 8 * 8;
        let steps = out[..n]
            .chunks_exact_mut(8)
            .zip(a[..n].chunks_exact(8).zip(b[..n].chunks_exact(8)));
        // SAFETY (the loads and the store): each chunk holds eight u16s.
        let load = |w: &[W]| unsafe {
            let w = _mm256_cvtepu16_epi32(_mm_loadu_si128(w.as_ptr().cast()));
            _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w))
        };
        for (o, (x, y)) in steps {
            let (x, y) = (load(x), load(y));
            let r = match op {
                ElemOp::Add => _mm256_add_ps(x, y),
                ElemOp::Sub => _mm256_sub_ps(x, y),
                ElemOp::Mul => _mm256_mul_ps(x, y),
                ElemOp::Div => unreachable!("quotients take binop_avx2's f64 loop"),
            };
            let u = _mm256_castps_si256(r);
            let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(u), one);
            let w = _mm256_srli_epi32::<16>(_mm256_add_epi32(u, _mm256_add_epi32(half, odd)));
            let is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_bits), inf);
            let w = _mm256_blendv_epi8(w, nan, is_nan);
            let w = _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w));
            unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), w) };
        }
        self.binop_lanes(op, &a[n..], &b[n..], &mut out[n..])
    }

    /// bf16 words (`W` = u16) decoded sixteen a step as [`Self::values8`] decodes them, the
    /// NaN words (rare) found on the words and mended only in a step that has one.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode_bf16_avx2<W: Word>(&self, words: &[W], out: &mut [f64]) {
        use std::arch::x86_64::*;
        assert!(std::mem::size_of::<W>() == 2);
        let (abs, inf) = (_mm256_set1_epi16(0x7fff), _mm256_set1_epi16(0x7f80));
        let n = words.len() / 16 * 16;
        for (o, w) in out[..n]
            .chunks_exact_mut(16)
            .zip(words[..n].chunks_exact(16))
        {
            // SAFETY: w holds sixteen u16s, o sixteen f64s.
            unsafe {
                let v = _mm256_loadu_si256(w.as_ptr().cast());
                let nan = _mm256_cmpgt_epi16(_mm256_and_si256(v, abs), inf);
                if _mm256_testz_si256(nan, nan) == 0 {
                    let (v0, v1) = self.values8(&w[..8]);
                    let (v2, v3) = self.values8(&w[8..]);
                    for (i, v) in [v0, v1, v2, v3].into_iter().enumerate() {
                        _mm256_storeu_pd(o.as_mut_ptr().add(4 * i), v);
                    }
                    continue;
                }
                let lo = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)));
                let hi = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(
                    _mm256_extracti128_si256::<1>(v),
                ));
                let (lo, hi) = (_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi));
                let halves = [
                    _mm256_castps256_ps128(lo),
                    _mm256_extractf128_ps::<1>(lo),
                    _mm256_castps256_ps128(hi),
                    _mm256_extractf128_ps::<1>(hi),
                ];
                for (i, h) in halves.into_iter().enumerate() {
                    _mm256_storeu_pd(o.as_mut_ptr().add(4 * i), _mm256_cvtps_pd(h));
                }
            }
        }
        self.decode_lanes(&words[n..], &mut out[n..])
    }

    /// The values of eight words: the table's, or for bf16 (whose words are the top halves
    /// of the binary32 words of the same values, NaNs aside) the binary32 of each word
    /// shifted up, widened to f64 and NaN made `f64::NAN` (the tests hold it to the table on
    /// every word).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn values8<W: Word>(
        &self,
        w: &[W],
    ) -> (std::arch::x86_64::__m256d, std::arch::x86_64::__m256d) {
        use std::arch::x86_64::*;
        if !(self.binary32_top && std::mem::size_of::<W>() == 2) {
            let (i0, i1) = self.indices8(w);
            return (self.gather4(i0), self.gather4(i1));
        }
        assert!(w.len() == 8);
        // SAFETY: w holds eight u16s.
        let f = unsafe { _mm256_cvtepu16_epi32(_mm_loadu_si128(w.as_ptr().cast())) };
        let f = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(f));
        let nan = _mm256_set1_pd(f64::NAN);
        let widen = |h: __m128| {
            let v = _mm256_cvtps_pd(h);
            _mm256_blendv_pd(v, nan, _mm256_cmp_pd::<_CMP_UNORD_Q>(v, v))
        };
        (
            widen(_mm256_castps256_ps128(f)),
            widen(_mm256_extractf128_ps::<1>(f)),
        )
    }

    /// Eight words (u8 or u16) as two vectors of four 32-bit table indices, masked to the
    /// table.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn indices8<W: Word>(
        &self,
        w: &[W],
    ) -> (std::arch::x86_64::__m128i, std::arch::x86_64::__m128i) {
        use std::arch::x86_64::*;
        assert!(w.len() == 8 && std::mem::size_of::<W>() <= 2);
        // SAFETY: w holds eight words of W's size (8 or 16 bytes in all).
        let i = unsafe {
            if std::mem::size_of::<W>() == 1 {
                _mm256_cvtepu8_epi32(_mm_loadl_epi64(w.as_ptr().cast()))
            } else {
                _mm256_cvtepu16_epi32(_mm_loadu_si128(w.as_ptr().cast()))
            }
        };
        let i = _mm256_and_si256(i, _mm256_set1_epi32(self.index_mask as i32));
        (_mm256_castsi256_si128(i), _mm256_extracti128_si256::<1>(i))
    }

    /// The values of four 32-bit table indices (each below 2^W).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn gather4(&self, i: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256d {
        use std::arch::x86_64::*;
        // SAFETY: every index is masked to the table's 2^W values.
        unsafe { _mm256_i32gather_pd::<8>(self.values.as_ptr(), i) }
    }

    /// The values of four 64-bit table indices (words from the encoder: below 2^W).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn gather4_64(&self, i: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256d {
        use std::arch::x86_64::*;
        // SAFETY: the encoder gives words of the format, so within the table of 2^W values.
        unsafe { _mm256_i64gather_pd::<8>(self.values.as_ptr(), i) }
    }
}

/// Eight words (the low bits of the 64-bit lanes of `w0`, then `w1`) stored as `W`s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn store8<W: Word>(w0: std::arch::x86_64::__m256i, w1: std::arch::x86_64::__m256i, o: &mut [W]) {
    use std::arch::x86_64::*;
    assert!(o.len() == 8 && std::mem::size_of::<W>() <= 2);
    // Each lane's low 32 bits to the low half, then packed (words fit 16 bits: no saturation).
    let low = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(w0, low));
    let hi = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(w1, low));
    let w16 = _mm_packus_epi32(lo, hi);
    // SAFETY: o holds eight words of W's size (8 or 16 bytes in all).
    unsafe {
        if std::mem::size_of::<W>() == 1 {
            _mm_storel_epi64(o.as_mut_ptr().cast(), _mm_packus_epi16(w16, w16));
        } else {
            _mm_storeu_si128(o.as_mut_ptr().cast(), w16);
        }
    }
}

/// The encoder's constants in four lanes.
#[cfg(target_arch = "x86_64")]
struct Lanes {
    abs: std::arch::x86_64::__m256i,
    inf_bits: std::arch::x86_64::__m256i,
    magic: std::arch::x86_64::__m256d,
    magic_bits: std::arch::x86_64::__m256i,
    rebias: std::arch::x86_64::__m256i,
    half: std::arch::x86_64::__m256i,
    one: std::arch::x86_64::__m256i,
    k: std::arch::x86_64::__m128i,
    sign_shift: std::arch::x86_64::__m128i,
    min_normal: std::arch::x86_64::__m256i,
    max_mag: std::arch::x86_64::__m256i,
    nan: std::arch::x86_64::__m256i,
    inf: [std::arch::x86_64::__m256i; 2],
    over: [std::arch::x86_64::__m256i; 2],
    /// Whether ±∞ encodes as an overflow does (every format but `:sat` ones).
    inf_is_over: bool,
}

#[cfg(target_arch = "x86_64")]
impl Lanes {
    #[target_feature(enable = "avx2")]
    fn new(e: &Encoder) -> Lanes {
        use std::arch::x86_64::*;
        let all = |v: u64| _mm256_set1_epi64x(v as i64);
        Lanes {
            abs: all(!(1 << 63)),
            inf_bits: all(0x7ff0_0000_0000_0000),
            magic: _mm256_set1_pd(e.magic),
            magic_bits: all(e.magic_bits),
            rebias: all(e.rebias),
            half: all(e.half),
            one: all(1),
            k: _mm_cvtsi64_si128(i64::from(e.k)),
            sign_shift: _mm_cvtsi64_si128(i64::from(e.sign_shift)),
            min_normal: all(e.min_normal),
            max_mag: all(e.max_mag),
            nan: all(e.nan),
            inf: [all(e.inf[0]), all(e.inf[1])],
            over: [all(e.over[0]), all(e.over[1])],
            inf_is_over: e.inf == e.over,
        }
    }

    /// [`Encoder::encode`] of four f64s: the same steps, each select a blend. Every
    /// comparison is signed and exact: the magnitudes compared lie below 2^63 (|x|'s bits;
    /// the selected magnitude, which is the subnormal grid's below 2^emin, where the
    /// rebiased bits would wrap).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn encode(&self, x: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256i {
        use std::arch::x86_64::*;
        let u = _mm256_castpd_si256(x);
        let abs = _mm256_and_si256(u, self.abs);
        let sub = _mm256_add_pd(_mm256_castsi256_pd(abs), self.magic);
        let sub = _mm256_sub_epi64(_mm256_castpd_si256(sub), self.magic_bits);
        let v = _mm256_sub_epi64(abs, self.rebias);
        let odd = _mm256_and_si256(_mm256_srl_epi64(v, self.k), self.one);
        let normal = _mm256_add_epi64(v, _mm256_add_epi64(self.half, odd));
        let normal = _mm256_srl_epi64(normal, self.k);
        let tiny = _mm256_cmpgt_epi64(self.min_normal, abs);
        let mag = _mm256_blendv_epi8(normal, sub, tiny);
        let sign = _mm256_sll_epi64(_mm256_srli_epi64::<63>(u), self.sign_shift);
        let word = _mm256_or_si256(sign, mag);
        // blendv_pd selects by each lane's top bit: x's sign.
        let by_sign = |pos: __m256i, neg: __m256i| {
            _mm256_castpd_si256(_mm256_blendv_pd(
                _mm256_castsi256_pd(pos),
                _mm256_castsi256_pd(neg),
                x,
            ))
        };
        let over = by_sign(self.over[0], self.over[1]);
        let word = _mm256_blendv_epi8(word, over, _mm256_cmpgt_epi64(mag, self.max_mag));
        // ±∞ took the overflow branch (its rebiased bits are past every finite magnitude);
        // only where the two words differ (`:sat`) does it need its own.
        let word = if self.inf_is_over {
            word
        } else {
            let inf = by_sign(self.inf[0], self.inf[1]);
            _mm256_blendv_epi8(word, inf, _mm256_cmpeq_epi64(abs, self.inf_bits))
        };
        _mm256_blendv_epi8(word, self.nan, _mm256_cmpgt_epi64(abs, self.inf_bits))
    }
}
