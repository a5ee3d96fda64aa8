//! Elementwise kernels for floats of at most 16 bits (bf16, f16, fp8:e4m3, fp8:e5m2 and every
//! `float:E:M` of that width without `:ftz`): decode, encode (from f64, to nearest), quantize,
//! and a + b, a − b, a · b, over whole slices of words, at the speed of the machine's f64 unit.
//!
//! A definition-preserving fast path (issue 45): every word is the golden per-element
//! operation's ([`FloatFormat::to_f64`], [`FloatFormat::from_f64`], [`FloatFormat::add`],
//! [`FloatFormat::sub`], [`FloatFormat::mul`]), which stay the reference; the tests of this
//! module hold the kernels to them (every word, every pair of 8-bit words, every word's
//! neighbours and midpoints, random and special values).
//!
//! - **Decode** looks each word up in a table of the 2^W f64 values, built once per format
//!   from the golden decoder (`to_f64`, NaN words as `f64::NAN`); the AVX2 loops read bf16
//!   words, the top halves of binary32 words, as binary32 instead (checked against the table
//!   on every word).
//! - **Encode** rounds an f64 to the nearest word with no branch: above the smallest normal
//!   the f64's bits are rebiased and rounded to nearest even on the integer (a carry is the
//!   next binade, past the largest finite magnitude the format's overflow word); below it the
//!   machine's own f64 addition rounds |x| + 2^(emin − M + 52) once at the subnormal grid's
//!   last place 2^(emin − M); NaN, ±∞ and overflow are selected last.
//! - **a ∘ b** (∘ = +, −, ·) decodes both words, computes in f64, and encodes the f64 once
//!   (plain bf16 on AVX2: the golden's own binary32 path, [`FloatFormat::narrow`], on eight
//!   f32 lanes).
//!   Why that is the correctly rounded result, for E ≤ 8 and at most 16 bits (so M ≤ 13;
//!   every format here):
//!   * a product of two words has at most 2(M + 1) ≤ 28 significant bits and an exponent
//!     within ±2·(2^(E−1) + M) ≤ ±282, so f64 holds it exactly (no overflow, no subnormal);
//!     rounding it once to the format is the golden product;
//!   * a sum (or difference) of two words is exact in f64 when the words' exponents are
//!     within 53 − (M + 2) of each other; otherwise f64 rounds it once, to 53 bits, and
//!     53 ≥ 2(M + 1) + 2 = 30 makes the second rounding (to M + 1 bits) innocuous: rounding to
//!     nearest twice, first to 2p + 2 or more bits, equals rounding once (Figueroa, "When is
//!     double rounding innocuous?", SIGNUM 1995) — and f64's range holds every sum of two
//!     words as a normal number or zero, so neither rounding meets a range limit first (the
//!     format's overflow and subnormal rules are applied once, by the encoder, to a value
//!     that lies on the same side of every rounding boundary as the exact sum);
//!   * the special cases are IEEE's in both: a NaN operand, ∞ − ∞ and 0 · ∞ give f64 NaN,
//!     which encodes to the format's NaN; ±∞ encodes to the format's infinite result; an
//!     exact zero sum is +0 unless both terms are −0 (f64's rule in round-to-nearest, and the
//!     golden `round_sum`'s); a zero product has the XOR of the signs in both.
//!
//! The loops run on AVX2 where the machine has them (found at run time: four f64 lanes, the
//! encoder's selects as blends, the table read by gathers) and in portable code otherwise;
//! the tests run whichever the machine has, and the portable encoder is checked on its own.

use crate::arith::Bits;
use crate::float::FloatFormat;
use crate::table::cached;

/// A word of at most 16 bits as stored in memory (`u8` for formats of at most 8 bits, `u16`
/// up to 16).
pub trait Word: Copy + Default + Send + Sync + 'static {
    /// The word's bits.
    fn bits(self) -> usize;
    /// The word of `bits` (which fit).
    fn of(bits: u64) -> Self;
}

impl Word for u8 {
    #[inline(always)]
    fn bits(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn of(bits: u64) -> Self {
        bits as u8
    }
}

impl Word for u16 {
    #[inline(always)]
    fn bits(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn of(bits: u64) -> Self {
        bits as u16
    }
}

/// An elementwise operation on two words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemOp {
    Add,
    Sub,
    Mul,
}

/// The elementwise kernels of one float format ([`FloatKernel::of`]).
pub struct FloatKernel {
    f: FloatFormat,
    /// The value of every word (NaN words: `f64::NAN`).
    values: Box<[f64]>,
    /// 2^W − 1: a word's bits beyond the format's width are ignored (callers check them).
    index_mask: usize,
    /// bf16 (E = 8, M = 7, with ∞ and NaN codes): each word is the top half of the binary32
    /// word of its value (the AVX2 loops decode it so, without the table).
    binary32_top: bool,
    /// Plain bf16, whose golden sums and products are binary32's rounded once more.
    narrow_bf16: bool,
    enc: Encoder,
}

/// The constants of the branch-free encoder.
#[derive(Clone, Copy, Debug)]
struct Encoder {
    /// The f64 bits of 2^emin, the smallest normal: below it the subnormal grid.
    min_normal: u64,
    /// (1023 − bias) << 52: an f64's bits minus this are the format's exponent field and
    /// fraction, before rounding.
    rebias: u64,
    /// 52 − M: the f64 fraction bits rounded off.
    k: u32,
    /// 2^(k−1) − 1: adding it and the kept part's last bit rounds to nearest even.
    half: u64,
    /// 2^(emin − M + 52) and its bits: |x| + magic has its last place at 2^(emin − M).
    magic: f64,
    magic_bits: u64,
    /// The largest finite magnitude (the word without its sign).
    max_mag: u64,
    /// The sign bit's position (W − 1).
    sign_shift: u32,
    /// The words of NaN, ±∞ (by sign) and of an overflow (by sign).
    nan: u64,
    inf: [u64; 2],
    over: [u64; 2],
}

/// 2^k as an f64 (−1022 ≤ k ≤ 1023).
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

impl Encoder {
    fn new(f: FloatFormat) -> Encoder {
        let m = f.frac_bits;
        let k = 52 - m;
        Encoder {
            min_normal: pow2(f.emin()).to_bits(),
            rebias: ((1023 - f.bias()) as u64) << 52,
            k,
            half: (1 << (k - 1)) - 1,
            magic: pow2(f.emin() - i64::from(m) + 52),
            magic_bits: pow2(f.emin() - i64::from(m) + 52).to_bits(),
            max_mag: f.max_finite(false),
            sign_shift: f.width() - 1,
            nan: f.nan(),
            inf: [f.infinite(false), f.infinite(true)],
            over: [f.overflow(false), f.overflow(true)],
        }
    }

    /// The word nearest to `x`: [`FloatFormat::from_f64`] without a branch.
    #[inline(always)]
    fn encode(&self, x: f64) -> u64 {
        let u = x.to_bits();
        let neg = (u >> 63) as usize;
        let abs = u & !(1 << 63);
        // Below 2^emin: the FPU rounds |x| once at the subnormal grid's last place; q ≤ 2^M
        // (2^M: rounded up to the smallest normal, whose word it is).
        let sub = (f64::from_bits(abs) + self.magic)
            .to_bits()
            .wrapping_sub(self.magic_bits);
        // From 2^emin: the exponent field and fraction, rounded to nearest even at 2^k.
        let v = abs.wrapping_sub(self.rebias);
        let normal = v.wrapping_add(self.half + ((v >> self.k) & 1)) >> self.k;
        let mag = if abs < self.min_normal { sub } else { normal };
        let word = if mag > self.max_mag {
            self.over[neg]
        } else {
            (neg as u64) << self.sign_shift | mag
        };
        let special = if abs > 0x7ff0_0000_0000_0000 {
            self.nan
        } else {
            self.inf[neg]
        };
        if abs >= 0x7ff0_0000_0000_0000 {
            special
        } else {
            word
        }
    }
}

impl FloatKernel {
    /// The kernels of `f`, built once per format and process; `None` for a format they do not
    /// serve (wider than 16 bits, `:ftz`, or E > 8).
    pub fn of(f: FloatFormat) -> Option<&'static FloatKernel> {
        let serves = f.width() <= 16 && !f.ftz && f.exp_bits <= 8;
        serves.then(|| cached(crate::Format::Float(f), || FloatKernel::new(f)))
    }

    fn new(f: FloatFormat) -> FloatKernel {
        let values = (0..1u64 << f.width())
            .map(|w| if f.is_nan(w) { f64::NAN } else { f.to_f64(w) })
            .collect();
        FloatKernel {
            f,
            values,
            index_mask: (1 << f.width()) - 1,
            binary32_top: (f.exp_bits, f.frac_bits, f.finite, f.no_nan) == (8, 7, false, false),
            narrow_bf16: (f.exp_bits, f.frac_bits) == (8, 7) && f.narrow().is_some(),
            enc: Encoder::new(f),
        }
    }

    /// The format.
    pub fn format(&self) -> FloatFormat {
        self.f
    }

    /// The value of word `w` (NaN for NaN words).
    #[inline(always)]
    pub fn value<W: Word>(&self, w: W) -> f64 {
        self.values[w.bits() & self.index_mask]
    }

    /// The word nearest to `x` ([`FloatFormat::from_f64`]).
    #[inline(always)]
    pub fn word(&self, x: f64) -> Bits {
        self.enc.encode(x)
    }

    /// `out[i]` = the value of `words[i]` (NaN for NaN words).
    pub fn decode<W: Word>(&self, words: &[W], out: &mut [f64]) {
        assert_eq!(words.len(), out.len(), "as many values as words");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.decode_avx2(words, out) };
        }
        self.decode_lanes(words, out)
    }

    /// `out[i]` = the word nearest to `xs[i]`.
    pub fn encode<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        assert_eq!(xs.len(), out.len(), "as many words as values");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.encode_avx2(xs, out) };
        }
        self.encode_lanes(xs, out)
    }

    /// `out[i]` = `xs[i]` rounded into the format, as an f64 (the value of its word).
    pub fn quantize(&self, xs: &[f64], out: &mut [f64]) {
        assert_eq!(xs.len(), out.len(), "as many results as values");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.quantize_avx2(xs, out) };
        }
        self.quantize_lanes(xs, out)
    }

    /// `out[i]` = `a[i]` ∘ `b[i]` rounded once.
    pub fn binop<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        assert!(
            a.len() == out.len() && b.len() == out.len(),
            "operands of one length"
        );
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.binop_avx2(op, a, b, out) };
        }
        self.binop_lanes(op, a, b, out)
    }

    #[inline(always)]
    fn decode_lanes<W: Word>(&self, words: &[W], out: &mut [f64]) {
        for (o, &w) in out.iter_mut().zip(words) {
            *o = self.value(w);
        }
    }

    #[inline(always)]
    fn encode_lanes<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = W::of(self.enc.encode(x));
        }
    }

    #[inline(always)]
    fn quantize_lanes(&self, xs: &[f64], out: &mut [f64]) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = self.values[self.enc.encode(x) as usize];
        }
    }

    #[inline(always)]
    fn binop_lanes<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        match op {
            ElemOp::Add => self.zip_lanes(a, b, out, |x, y| x + y),
            ElemOp::Sub => self.zip_lanes(a, b, out, |x, y| x - y),
            ElemOp::Mul => self.zip_lanes(a, b, out, |x, y| x * y),
        }
    }

    #[inline(always)]
    fn zip_lanes<W: Word>(&self, a: &[W], b: &[W], out: &mut [W], op: impl Fn(f64, f64) -> f64) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = W::of(self.enc.encode(op(self.value(x), self.value(y))));
        }
    }

    // The loops on AVX2: eight elements a step in two vectors of four f64 lanes, the
    // encoder's selects as blends, the table read by gathers, the words packed; the tail of
    // fewer than eight elements by the portable loops.

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decode_avx2<W: Word>(&self, words: &[W], out: &mut [f64]) {
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
    unsafe fn encode_avx2<W: Word>(&self, xs: &[f64], out: &mut [W]) {
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
    unsafe fn quantize_avx2(&self, xs: &[f64], out: &mut [f64]) {
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
    unsafe fn binop_avx2<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        use std::arch::x86_64::*;
        if self.narrow_bf16 && std::mem::size_of::<W>() == 2 {
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
    unsafe fn encode_bf16_avx2<W: Word>(&self, xs: &[f64], out: &mut [W]) {
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
    unsafe fn quantize_bf16_avx2(&self, xs: &[f64], out: &mut [f64]) {
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
    fn bf16_step(
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
    unsafe fn binop_bf16_avx2<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
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
    unsafe fn decode_bf16_avx2<W: Word>(&self, words: &[W], out: &mut [f64]) {
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
    fn values8<W: Word>(
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
    fn indices8<W: Word>(
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
    fn gather4(&self, i: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256d {
        use std::arch::x86_64::*;
        // SAFETY: every index is masked to the table's 2^W values.
        unsafe { _mm256_i32gather_pd::<8>(self.values.as_ptr(), i) }
    }

    /// The values of four 64-bit table indices (words from the encoder: below 2^W).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn gather4_64(&self, i: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256d {
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

#[cfg(test)]
mod tests;
