//! Naive and Kahan sums of products on the binary32 path in lockstep: up to 4 × 32 outputs at
//! a time on AVX-512, 4 × 16 on AVX2 (found at run time), and in portable code otherwise, in
//! the lockstep frame (`kernel::lockstep`). Each lane performs its output's operations in
//! its k order: f32's products and sums, each rounded by [`Narrow::round_f32`] (in the
//! vectors, the same selection among its three cases), Kahan's steps by
//! `sum::kahan_formula`, the algorithm's one statement. `sum::naive_dot` and `sum::kahan_dot`
//! on the format stay the definition; this module's tests and `kernel/tests.rs` hold the
//! lanes to them.
//!
//! Why several lines at once: one chain of a rounded sum waits for its previous add and two
//! roundings (about twenty cycles), so the lanes keep eight chains (two vectors for each of
//! up to four lines of the other side) in flight.
//!
//! NaN and ∞ are values here, not the frame's sticky specials: ∞ − ∞ makes a NaN that no
//! word held, and f32 arithmetic propagates both as the format does. So every word has a
//! working value (its f32) and the frame's padding lanes are zeros whose sums are dropped.
//! The frame may put the rows of a product into the lanes instead of its columns; f32's
//! product is commutative, so every lane's operations are the same.

use super::Narrow;
use crate::arith::Bits;
#[cfg(target_arch = "x86_64")]
use crate::kernel::lockstep::avx512;
use crate::kernel::lockstep::{lockstep, Lanes};

/// Outputs computed in lockstep per line of the other side: two AVX2 vectors of eight.
const L: usize = 16;

/// The same on AVX-512: two vectors of sixteen.
const L512: usize = 32;

impl Narrow {
    /// Every naive or Kahan dot product of `rows` with `cols`, row-major.
    pub(crate) fn dots(&self, kahan: bool, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let run = Run { n: *self, kahan };
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            return lockstep(&Run512(run), rows, cols);
        }
        lockstep(&run, rows, cols)
    }

    /// N lockstep sums of `x` with the lanes of `y`, in portable code.
    fn run_portable<const N: usize>(&self, kahan: bool, x: &[f32], y: &[[f32; N]]) -> [f32; N] {
        let (mut s, mut c) = ([0.0f32; N], [0.0f32; N]);
        let add = |a: f32, b: f32| self.round_f32(a + b);
        let sub = |a: f32, b: f32| self.round_f32(a - b);
        for (&p, yk) in x.iter().zip(y) {
            for ((s, c), &q) in s.iter_mut().zip(c.iter_mut()).zip(yk) {
                let prod = self.round_f32(p * q);
                (*s, *c) = if kahan {
                    crate::sum::kahan_formula(*s, *c, prod, add, sub)
                } else {
                    (add(*s, prod), *c)
                };
            }
        }
        s
    }
}

/// The frame's view of the path in one mode: L lanes, on AVX2 or in portable code.
struct Run {
    n: Narrow,
    kahan: bool,
}

impl Lanes<f32, L> for Run {
    fn value(&self, w: Bits) -> Option<f32> {
        Some(self.n.to_f32(w))
    }
    fn special(&self) -> Bits {
        self.n.f.nan()
    }
    fn encode(&self, v: f32) -> Bits {
        self.n.from_f32(v)
    }
    fn run(&self, xs: &[&[f32]], y: &[[f32; L]], out: &mut [[f32; L]]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::run(&self.n, self.kahan, xs, y, out) };
        }
        for (x, out) in xs.iter().zip(out) {
            *out = self.n.run_portable(self.kahan, x, y);
        }
    }
}

/// The same lanes, L512 wide, on AVX-512 (made only where the machine has it).
#[cfg(target_arch = "x86_64")]
struct Run512(Run);

#[cfg(target_arch = "x86_64")]
impl Lanes<f32, L512> for Run512 {
    fn value(&self, w: Bits) -> Option<f32> {
        self.0.value(w)
    }
    fn special(&self) -> Bits {
        self.0.special()
    }
    fn encode(&self, v: f32) -> Bits {
        self.0.encode(v)
    }
    fn run(&self, xs: &[&[f32]], y: &[[f32; L512]], out: &mut [[f32; L512]]) {
        assert!(avx512(), "Run512 is made where the machine has AVX-512");
        // SAFETY: the CPU has AVX-512 F (asserted just above).
        unsafe { avx512::run(&self.0.n, self.0.kahan, xs, y, out) }
    }
}

/// The constants of [`Narrow::round_f32`] for a format, as bit patterns (lane-width free).
struct Rounding {
    /// 1.5 · 2^(emin − M + 23): x + it − it rounds x on the subnormal grid.
    magic: f32,
    /// 23 − M: the f32 fraction bits the format drops.
    drop: i32,
    /// The f32 bits of the largest finite value.
    max_finite: u32,
    /// The f32 bits of 2^emin: below it, the subnormal grid.
    sub_limit: u32,
}

impl Rounding {
    fn of(n: &Narrow) -> Rounding {
        Rounding {
            magic: 1.5 * super::f32_pow2(n.f.emin() - i64::from(n.f.frac_bits) + 23),
            drop: 23 - n.f.frac_bits as i32,
            max_finite: n.max_finite(),
            sub_limit: (n.rebias + 1) << 23,
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use crate::kernel::lockstep::by_rows;

    use super::{Narrow, Rounding, L};

    /// The constants of the vector rounding.
    struct Consts {
        magic: __m256,
        count: __m128i,
        half: __m256i,
        keep: __m256i,
        max_finite: __m256i,
        sub_limit: __m256i,
    }

    impl Consts {
        #[inline(always)]
        unsafe fn of(n: &Narrow) -> Consts {
            let r = Rounding::of(n);
            Consts {
                magic: _mm256_set1_ps(r.magic),
                count: _mm_cvtsi32_si128(r.drop),
                half: _mm256_set1_epi32((1 << (r.drop - 1)) - 1),
                keep: _mm256_set1_epi32(!((1i32 << r.drop) - 1)),
                max_finite: _mm256_set1_epi32(r.max_finite as i32),
                sub_limit: _mm256_set1_epi32(r.sub_limit as i32),
            }
        }
    }

    /// [`round`] of every value of `xs` (a multiple of 8 of them), as the lanes choose its
    /// form: the tests hold it to `Narrow::round_f32` on every kind of binary32 value.
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn round_each(n: &Narrow, xs: &[f32]) -> Vec<f32> {
        let k = Consts::of(n);
        let mut out = vec![0.0f32; xs.len()];
        for (x, o) in xs.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
            let v = _mm256_loadu_ps(x.as_ptr());
            let r = match n.f32_range() {
                true => round::<true>(&k, v),
                false => round::<false>(&k, v),
            };
            _mm256_storeu_ps(o.as_mut_ptr(), r);
        }
        out
    }

    /// `Narrow::round_f32` of eight lanes: the subnormal grid, the normal rounding and
    /// ±∞/NaN computed alike and selected by the lane's magnitude. `F32_RANGE`: the format
    /// has binary32's exponent range ([`Narrow::f32_range`]), so the normal rounding of the
    /// bits is the whole of it.
    #[inline(always)]
    unsafe fn round<const F32_RANGE: bool>(k: &Consts, v: __m256) -> __m256 {
        let all = |v: u32| _mm256_set1_epi32(v as i32);
        let u = _mm256_castps_si256(v);
        let sign = _mm256_and_si256(u, all(0x8000_0000));
        let abs = _mm256_and_si256(u, all(0x7fff_ffff));
        let odd = _mm256_and_si256(_mm256_srl_epi32(abs, k.count), all(1));
        let r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(abs, k.half), odd), k.keep);
        let special = _mm256_cmpgt_epi32(abs, all(0x7f7f_ffff));
        if F32_RANGE {
            let out = _mm256_blendv_epi8(_mm256_or_si256(sign, r), u, special);
            return _mm256_castsi256_ps(out);
        }
        let sub = _mm256_sub_ps(_mm256_add_ps(v, k.magic), k.magic);
        let sub = _mm256_or_si256(_mm256_castps_si256(sub), sign);
        // Finite lanes keep r below 2^31, so the signed comparison is the unsigned one.
        let r = _mm256_blendv_epi8(r, all(0x7f80_0000), _mm256_cmpgt_epi32(r, k.max_finite));
        let normal = _mm256_or_si256(sign, r);
        let out = _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(k.sub_limit, abs));
        _mm256_castsi256_ps(_mm256_blendv_epi8(out, u, special))
    }

    /// L lockstep sums of each line of `xs`, as `Narrow::run_portable`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        match n.f32_range() {
            true => by_rows!(run_rows_f32_range(n, kahan; xs, y, out)),
            false => by_rows!(run_rows(n, kahan; xs, y, out)),
        }
    }

    /// [`run_rows`] of a format with binary32's exponent range.
    #[target_feature(enable = "avx2")]
    unsafe fn run_rows_f32_range<const R: usize>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        rows::<R, true>(n, kahan, xs, y, out)
    }

    /// [`run_rows`] of any other format.
    #[target_feature(enable = "avx2")]
    unsafe fn run_rows<const R: usize>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        rows::<R, false>(n, kahan, xs, y, out)
    }

    /// [`run`] of R lines: 2·R vectors of eight lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn rows<const R: usize, const F32_RANGE: bool>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
        let k = Consts::of(n);
        let addv = |a, b| round::<F32_RANGE>(&k, _mm256_add_ps(a, b));
        let subv = |a, b| round::<F32_RANGE>(&k, _mm256_sub_ps(a, b));
        let z = _mm256_setzero_ps();
        let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
        for (i, yk) in y.iter().enumerate() {
            // SAFETY: yk holds L = 2·8 f32s.
            let q = [0, 1].map(|v| _mm256_loadu_ps(yk.as_ptr().add(8 * v)));
            for r in 0..R {
                let a = _mm256_set1_ps(xs[r][i]);
                for v in 0..2 {
                    let p = round::<F32_RANGE>(&k, _mm256_mul_ps(a, q[v]));
                    (s[r][v], c[r][v]) = if kahan {
                        crate::sum::kahan_formula(s[r][v], c[r][v], p, addv, subv)
                    } else {
                        (addv(s[r][v], p), c[r][v])
                    };
                }
            }
        }
        for (s, out) in s.iter().zip(out) {
            for (v, s) in s.iter().enumerate() {
                _mm256_storeu_ps(out.as_mut_ptr().add(8 * v), *s);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use crate::kernel::lockstep::by_rows;

    use super::{Narrow, Rounding, L512 as L};

    /// The constants of the vector rounding.
    struct Consts {
        magic: __m512,
        count: __m128i,
        half: __m512i,
        keep: __m512i,
        max_finite: __m512i,
        sub_limit: __m512i,
    }

    impl Consts {
        #[inline(always)]
        unsafe fn of(n: &Narrow) -> Consts {
            let r = Rounding::of(n);
            Consts {
                magic: _mm512_set1_ps(r.magic),
                count: _mm_cvtsi32_si128(r.drop),
                half: _mm512_set1_epi32((1 << (r.drop - 1)) - 1),
                keep: _mm512_set1_epi32(!((1i32 << r.drop) - 1)),
                max_finite: _mm512_set1_epi32(r.max_finite as i32),
                sub_limit: _mm512_set1_epi32(r.sub_limit as i32),
            }
        }
    }

    /// [`round`] of every value of `xs` (a multiple of 16 of them), as the lanes choose its
    /// form: the tests hold it to `Narrow::round_f32` on every kind of binary32 value.
    #[cfg(test)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn round_each(n: &Narrow, xs: &[f32]) -> Vec<f32> {
        let k = Consts::of(n);
        let mut out = vec![0.0f32; xs.len()];
        for (x, o) in xs.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
            let v = _mm512_loadu_ps(x.as_ptr());
            let r = match n.f32_range() {
                true => round::<true>(&k, v),
                false => round::<false>(&k, v),
            };
            _mm512_storeu_ps(o.as_mut_ptr(), r);
        }
        out
    }

    /// `Narrow::round_f32` of sixteen lanes, as the AVX2 form with masks for the selections.
    #[inline(always)]
    unsafe fn round<const F32_RANGE: bool>(k: &Consts, v: __m512) -> __m512 {
        let all = |v: u32| _mm512_set1_epi32(v as i32);
        let u = _mm512_castps_si512(v);
        let sign = _mm512_and_si512(u, all(0x8000_0000));
        let abs = _mm512_and_si512(u, all(0x7fff_ffff));
        let odd = _mm512_and_si512(_mm512_srl_epi32(abs, k.count), all(1));
        let r = _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(abs, k.half), odd), k.keep);
        let special = _mm512_cmpgt_epi32_mask(abs, all(0x7f7f_ffff));
        if F32_RANGE {
            let out = _mm512_mask_mov_epi32(_mm512_or_si512(sign, r), special, u);
            return _mm512_castsi512_ps(out);
        }
        let sub = _mm512_sub_ps(_mm512_add_ps(v, k.magic), k.magic);
        let sub = _mm512_or_si512(_mm512_castps_si512(sub), sign);
        // Finite lanes keep r below 2^31, so the signed comparison is the unsigned one.
        let over = _mm512_cmpgt_epi32_mask(r, k.max_finite);
        let normal = _mm512_or_si512(sign, _mm512_mask_mov_epi32(r, over, all(0x7f80_0000)));
        let tiny = _mm512_cmpgt_epi32_mask(k.sub_limit, abs);
        let out = _mm512_mask_mov_epi32(normal, tiny, sub);
        _mm512_castsi512_ps(_mm512_mask_mov_epi32(out, special, u))
    }

    /// L lockstep sums of each line of `xs`, as `Narrow::run_portable`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn run(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        match n.f32_range() {
            true => by_rows!(run_rows_f32_range(n, kahan; xs, y, out)),
            false => by_rows!(run_rows(n, kahan; xs, y, out)),
        }
    }

    /// [`run_rows`] of a format with binary32's exponent range.
    #[target_feature(enable = "avx512f")]
    unsafe fn run_rows_f32_range<const R: usize>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        rows::<R, true>(n, kahan, xs, y, out)
    }

    /// [`run_rows`] of any other format.
    #[target_feature(enable = "avx512f")]
    unsafe fn run_rows<const R: usize>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        rows::<R, false>(n, kahan, xs, y, out)
    }

    /// [`run`] of R lines: 2·R vectors of sixteen lanes.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn rows<const R: usize, const F32_RANGE: bool>(
        n: &Narrow,
        kahan: bool,
        xs: &[&[f32]],
        y: &[[f32; L]],
        out: &mut [[f32; L]],
    ) {
        assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
        let k = Consts::of(n);
        let addv = |a, b| round::<F32_RANGE>(&k, _mm512_add_ps(a, b));
        let subv = |a, b| round::<F32_RANGE>(&k, _mm512_sub_ps(a, b));
        let z = _mm512_setzero_ps();
        let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
        for (i, yk) in y.iter().enumerate() {
            // SAFETY: yk holds L = 2·16 f32s.
            let q = [0, 1].map(|v| _mm512_loadu_ps(yk.as_ptr().add(16 * v)));
            for r in 0..R {
                let a = _mm512_set1_ps(xs[r][i]);
                for v in 0..2 {
                    let p = round::<F32_RANGE>(&k, _mm512_mul_ps(a, q[v]));
                    (s[r][v], c[r][v]) = if kahan {
                        crate::sum::kahan_formula(s[r][v], c[r][v], p, addv, subv)
                    } else {
                        (addv(s[r][v], p), c[r][v])
                    };
                }
            }
        }
        for (s, out) in s.iter().zip(out) {
            for (v, s) in s.iter().enumerate() {
                _mm512_storeu_ps(out.as_mut_ptr().add(16 * v), *s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::super::tests::{pair, plain, ON_PATH};
    use super::*;
    use crate::sum::{kahan_dot, naive_dot};

    /// The lanes, portable, AVX2 and AVX-512 alike, are `sum::naive_dot` and `sum::kahan_dot`
    /// of each lane on every format of the path: one to five lines at once (one call of four
    /// and the rest), K from 0 to 256, random words with specials, ties and subnormals.
    #[test]
    fn lanes_are_the_dot_products_in_every_implementation() {
        let mut rng = Pcg64::seed_from_u64(45);
        for &(e, m) in ON_PATH {
            let f = plain(e, m);
            let n = f.narrow().unwrap();
            for (lines, k) in [(1, 0), (1, 1), (2, 3), (4, 37), (5, 37), (3, 256)] {
                let xs: Vec<Vec<Bits>> = (0..lines)
                    .map(|_| (0..k).map(|_| pair(&f, &mut rng).0).collect())
                    .collect();
                let cols: Vec<Vec<Bits>> = (0..L512)
                    .map(|_| (0..k).map(|_| pair(&f, &mut rng).1).collect())
                    .collect();
                for kahan in [false, true] {
                    let dot = if kahan { kahan_dot } else { naive_dot };
                    let want: Vec<Vec<Bits>> = xs
                        .iter()
                        .map(|x| cols.iter().map(|c| dot(&n, x, c)).collect())
                        .collect();
                    let what = format!("{f} {lines} lines K = {k} kahan {kahan}");
                    check::<L>(&Run { n, kahan }, &xs, &cols, &want, &format!("{what}, L"));
                    #[cfg(target_arch = "x86_64")]
                    if avx512() {
                        let run = Run512(Run { n, kahan });
                        check::<L512>(&run, &xs, &cols, &want, &format!("{what}, AVX-512"));
                    }
                    let xf: Vec<Vec<f32>> = xs
                        .iter()
                        .map(|x| x.iter().map(|&w| n.to_f32(w)).collect())
                        .collect();
                    for (x, want) in xf.iter().zip(&want) {
                        let y = block::<L>(&n, &cols);
                        let got = n.run_portable(kahan, x, &y).map(|v| n.from_f32(v));
                        assert_eq!(got[..], want[..L], "{what}, portable");
                    }
                }
            }
        }
    }

    /// The vector rounding, in each of its forms, is `Narrow::round_f32` bit for bit on every
    /// format of the path: random binary32 bit patterns (NaNs with payloads, ∞, subnormals)
    /// and the neighbourhoods of the format's ties, subnormal limit and largest value.
    #[test]
    fn vector_rounding_is_round_f32() {
        let mut rng = Pcg64::seed_from_u64(46);
        for &(e, m) in ON_PATH {
            let n = plain(e, m).narrow().unwrap();
            let r = Rounding::of(&n);
            let tie = 1u32 << (r.drop - 1);
            let mut bits: Vec<u32> = (0..1 << 14).map(|_| rng.gen()).collect();
            for at in [
                0,
                tie,
                3 * tie,
                r.sub_limit,
                r.max_finite,
                r.max_finite + tie,
            ] {
                for d in 0..=8u32 {
                    for sign in [0, 0x8000_0000] {
                        bits.extend([at.wrapping_add(d), at.wrapping_sub(d)].map(|b| b | sign));
                    }
                }
            }
            bits.extend([
                0x7f80_0000,
                0x7f80_0001,
                0x7fc0_0000,
                0x7f80_8000,
                0xffbf_ffff,
            ]);
            bits.resize(bits.len().next_multiple_of(16), 0);
            let xs: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            let want: Vec<u32> = xs.iter().map(|&x| n.round_f32(x).to_bits()).collect();
            #[cfg(target_arch = "x86_64")]
            {
                let same = |got: Vec<f32>, how: &str| {
                    for ((g, w), x) in got.iter().zip(&want).zip(&bits) {
                        assert_eq!(g.to_bits(), *w, "{} {how}: {x:#010x}", plain(e, m));
                    }
                };
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    same(unsafe { avx2::round_each(&n, &xs) }, "AVX2");
                }
                if avx512() {
                    // SAFETY: the CPU has AVX-512 F.
                    same(unsafe { avx512::round_each(&n, &xs) }, "AVX-512");
                }
            }
        }
    }

    /// The first N columns side by side as the frame lays them out.
    fn block<const N: usize>(n: &Narrow, cols: &[Vec<Bits>]) -> Vec<[f32; N]> {
        let k = cols[0].len();
        (0..k)
            .map(|i| std::array::from_fn(|l| n.to_f32(cols[l][i])))
            .collect()
    }

    /// `run` of every line of `xs` at once against the first N columns of `want`.
    fn check<const N: usize>(
        run: &impl Lanes<f32, N>,
        xs: &[Vec<Bits>],
        cols: &[Vec<Bits>],
        want: &[Vec<Bits>],
        what: &str,
    ) {
        let y: Vec<[f32; N]> = (0..cols[0].len())
            .map(|i| std::array::from_fn(|l| run.value(cols[l][i]).unwrap()))
            .collect();
        let xf: Vec<Vec<f32>> = xs
            .iter()
            .map(|x| x.iter().map(|&w| run.value(w).unwrap()).collect())
            .collect();
        let refs: Vec<&[f32]> = xf.iter().map(Vec::as_slice).collect();
        let mut out = vec![[0.0f32; N]; xs.len()];
        run.run(&refs, &y, &mut out);
        for (got, want) in out.iter().zip(want) {
            let got: Vec<Bits> = got.iter().map(|&v| run.encode(v)).collect();
            assert_eq!(got[..], want[..N], "{what}");
        }
    }
}
