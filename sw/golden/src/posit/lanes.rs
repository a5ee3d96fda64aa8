//! Posits of at most 16 bits in binary64: the sequential sums (naive, Kahan) of products run
//! on f64 arithmetic, each operation rounded once more, to the posit, by [`PositF64::round`];
//! eight outputs in lockstep, on AVX2 lanes where the machine has them (found at run time) and
//! in portable code otherwise. The posit operations (`PositFormat::add`, `mul`) stay the
//! definition; `kernel/tests.rs` and this module's tests hold the two to each other.
//!
//! Why it is exact, for N ≤ 16 (a significand of m ≤ N − 2 ≤ 14 bits, a scale within
//! ±(N − 2)·2^es, |scale| ≤ 448):
//! - every posit is an f64, and the product of two is exact in f64 (2m ≤ 28 bits, scales
//!   within ±896: normal, never subnormal or infinite);
//! - the sum (or difference) of two posits a, b with |a| ≥ |b|, exponents ea ≥ eb: if
//!   ea − eb ≤ 52 − m, every bit of the exact sum lies between 2^(ea+1) and 2^(eb−m+1), at
//!   most 53 bits, and f64 holds it exactly. Otherwise |b| < 2^(ea−52+m+1) ≤ 2^(ea−37) and the
//!   f64 sum lies between a and the exact sum (rounding is monotonic and a is an f64). Every
//!   posit rounding boundary next to a lies at least 2^(ea−m−1) ≥ 2^(ea−15) from it (half
//!   the finest spacing beside a; where the regime leaves no fraction bits, the boundaries are
//!   farther), so the exact sum and the f64 sum both round to a: rounding the f64 result to
//!   the posit gives the correctly rounded exact sum in every case. A sum is zero in f64
//!   exactly when it is zero.
//! - the rounding f64 → posit ([`PositF64::round`]): where the value's regime leaves f ≥ 1
//!   fraction bits, the posit's bit-string rounding (guard, sticky, ties to an even last
//!   bit, which is the last fraction bit) is the rounding of the significand to f fraction
//!   bits, ties to even, and a carry out of the fraction is the next power of two, itself a
//!   posit. That rounding is x + C − C with C = 1.5·2^(52+q), q = e − f the weight of the
//!   last kept bit (the FPU rounds x + C at 2^q, and C/2^q is even). Elsewhere (near maxpos
//!   and minpos, where rounding falls in the exponent or regime bits, and beyond) the word is
//!   the format's own `from_f64` (the slow path, taken lane by lane).
//! - NaR is sticky and made by no operation on other words; the lockstep frame
//!   (`kernel::lockstep`) gives NaR to every output whose row or column holds one.

use crate::arith::{Arith, Bits};
use crate::family_trait::Family;
use crate::kernel::lockstep::{lockstep, Lanes};

use super::PositFormat;

/// Outputs computed in lockstep.
const L: usize = 8;

/// A posit format of at most 16 bits on binary64 (from [`PositFormat::f64_path`]).
#[derive(Clone, Copy, Debug)]
pub struct PositF64 {
    f: PositFormat,
    /// 1024 >> es: the regime k of a biased exponent field eb is ((eb + 1) >> es) − k0.
    k0: i64,
    /// N − 1 − es: a value with regime length r keeps N − 1 − es − r fraction bits.
    body: i64,
}

impl PositFormat {
    /// The binary64 path of this format, for N ≤ 16 (the module documentation says why).
    pub fn f64_path(&self) -> Option<PositF64> {
        (self.n <= 16).then(|| PositF64 {
            f: *self,
            k0: 1024 >> self.es,
            body: i64::from(self.n - 1 - self.es),
        })
    }
}

impl PositF64 {
    /// The regime length of the values in the binade of biased f64 exponent `eb`
    /// (large for 0 and 2047: zero, subnormals, ∞ and NaN).
    #[inline(always)]
    fn regime_len(&self, eb: i64) -> i64 {
        let kk = (eb + 1) >> self.f.es;
        (kk - self.k0 + 2).max(self.k0 + 1 - kk)
    }

    /// `x` rounded to the nearest posit, as an f64 (NaN gives NaN).
    #[inline(always)]
    pub fn round(&self, x: f64) -> f64 {
        let eb = ((x.to_bits() >> 52) & 0x7ff) as i64;
        let r = self.regime_len(eb);
        if r < self.body || x == 0.0 {
            // At least one fraction bit (or zero, which any C leaves zero).
            let c = f64::from_bits((((eb + 52 - self.body + r) as u64) << 52) | 1 << 51);
            (x + c) - c
        } else {
            self.slow(x)
        }
    }

    /// The rounding by the format's own encoder.
    #[cold]
    fn slow(&self, x: f64) -> f64 {
        self.f.to_f64(self.f.from_f64(x))
    }

    /// Every naive or Kahan dot product of `rows` with `cols`, row-major.
    pub(crate) fn dots(&self, kahan: bool, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let values = crate::table::cached(self.f, || {
            Values((0..1u64 << self.f.n).map(|w| self.f.to_f64(w)).collect())
        });
        let lanes = Run {
            p: *self,
            kahan,
            values: &values.0,
        };
        lockstep(&lanes, rows, cols)
    }

    /// Eight lockstep sums in portable code.
    fn run_portable(&self, kahan: bool, x: &[f64], y: &[[f64; L]]) -> [f64; L] {
        let (mut s, mut c) = ([0.0f64; L], [0.0f64; L]);
        let add = |a: f64, b: f64| self.round(a + b);
        let sub = |a: f64, b: f64| self.round(a - b);
        for (&p, yk) in x.iter().zip(y) {
            for ((s, c), &q) in s.iter_mut().zip(c.iter_mut()).zip(yk) {
                let prod = self.round(p * q);
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

/// Every word's value (NaN for NaR), built once per format: the lanes decode each operand
/// of a product once, M·K + K·N words, a sixth of the work of a product with six columns.
struct Values(Vec<f64>);

/// The frame's view of the path in one mode.
struct Run<'a> {
    p: PositF64,
    kahan: bool,
    values: &'a [f64],
}

impl Lanes<f64, L> for Run<'_> {
    fn value(&self, w: Bits) -> Option<f64> {
        let v = match self.values.get(w as usize) {
            Some(&v) => v,
            None => self.p.f.to_f64(w),
        };
        (!v.is_nan()).then_some(v)
    }
    fn special(&self) -> Bits {
        self.p.f.nar()
    }
    fn encode(&self, v: f64) -> Bits {
        self.p.f.from_f64(v)
    }
    fn run(&self, xs: &[&[f64]], y: &[[f64; L]], out: &mut [[f64; L]]) {
        for (x, out) in xs.iter().zip(out) {
            *out = self.run1(x, y);
        }
    }
}

impl Run<'_> {
    /// One line's sums with the lanes of `y`.
    fn run1(&self, x: &[f64], y: &[[f64; L]]) -> [f64; L] {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::run(&self.p, self.kahan, x, y) };
        }
        self.p.run_portable(self.kahan, x, y)
    }
}

/// Sums and dot products on the path keep each partial result as the f64 of its word.
impl Arith for PositF64 {
    type Val = f64;
    #[inline(always)]
    fn load(&self, w: Bits) -> f64 {
        self.f.to_f64(w)
    }
    #[inline(always)]
    fn store(&self, v: f64) -> Bits {
        self.f.from_f64(v)
    }
    #[inline(always)]
    fn zero(&self) -> f64 {
        0.0
    }
    #[inline(always)]
    fn add(&self, a: f64, b: f64) -> f64 {
        self.round(a + b)
    }
    #[inline(always)]
    fn sub(&self, a: f64, b: f64) -> f64 {
        self.round(a - b)
    }
    #[inline(always)]
    fn mul(&self, a: f64, b: f64) -> f64 {
        self.round(a * b)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{PositF64, L};

    /// [`PositF64::round`] of four lanes: the fast rounding computed in every lane, the
    /// lanes outside it (no fraction bit left, nonzero) then rounded one by one.
    #[inline(always)]
    unsafe fn round(p: &PositF64, v: __m256d) -> __m256d {
        let u = _mm256_castpd_si256(v);
        let eb = _mm256_and_si256(_mm256_srli_epi64(u, 52), _mm256_set1_epi64x(0x7ff));
        let kk = _mm256_srl_epi64(
            _mm256_add_epi64(eb, _mm256_set1_epi64x(1)),
            _mm_cvtsi64_si128(i64::from(p.f.es)),
        );
        // The regime length: max(k + 2, 1 − k); both fit i32, where the 32-bit max of the
        // two halves is the 64-bit max.
        let up = _mm256_add_epi64(kk, _mm256_set1_epi64x(2 - p.k0));
        let down = _mm256_sub_epi64(_mm256_set1_epi64x(p.k0 + 1), kk);
        let r = _mm256_max_epi32(up, down);
        let field = _mm256_add_epi64(_mm256_add_epi64(eb, r), _mm256_set1_epi64x(52 - p.body));
        let c = _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_slli_epi64(field, 52),
            _mm256_set1_epi64x(1 << 51),
        ));
        let out = _mm256_sub_pd(_mm256_add_pd(v, c), c);
        let slow = _mm256_andnot_si256(
            _mm256_castpd_si256(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_EQ_OQ)),
            _mm256_cmpgt_epi64(r, _mm256_set1_epi64x(p.body - 1)),
        );
        if _mm256_testz_si256(slow, slow) != 0 {
            return out;
        }
        fix(p, v, out, slow)
    }

    /// The lanes of `out` marked in `slow`, rounded by the format's encoder.
    #[cold]
    #[inline(never)]
    unsafe fn fix(p: &PositF64, v: __m256d, out: __m256d, slow: __m256i) -> __m256d {
        let (mut x, mut o, mut s) = ([0.0f64; 4], [0.0f64; 4], [0i64; 4]);
        _mm256_storeu_pd(x.as_mut_ptr(), v);
        _mm256_storeu_pd(o.as_mut_ptr(), out);
        _mm256_storeu_si256(s.as_mut_ptr().cast(), slow);
        for l in 0..4 {
            if s[l] != 0 {
                o[l] = p.slow(x[l]);
            }
        }
        _mm256_loadu_pd(o.as_ptr())
    }

    /// Eight lockstep sums, as [`PositF64::run_portable`], on two vectors of four lanes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run(p: &PositF64, kahan: bool, x: &[f64], y: &[[f64; L]]) -> [f64; L] {
        let add = |a: __m256d, b: __m256d| round(p, _mm256_add_pd(a, b));
        let sub = |a: __m256d, b: __m256d| round(p, _mm256_sub_pd(a, b));
        let z = _mm256_setzero_pd();
        let (mut s0, mut c0, mut s1, mut c1) = (z, z, z, z);
        for (&a, yk) in x.iter().zip(y) {
            let a = _mm256_set1_pd(a);
            // SAFETY: yk is eight f64s.
            let q0 = _mm256_loadu_pd(yk.as_ptr());
            let q1 = _mm256_loadu_pd(yk.as_ptr().add(4));
            let p0 = round(p, _mm256_mul_pd(a, q0));
            let p1 = round(p, _mm256_mul_pd(a, q1));
            if kahan {
                (s0, c0) = crate::sum::kahan_formula(s0, c0, p0, add, sub);
                (s1, c1) = crate::sum::kahan_formula(s1, c1, p1, add, sub);
            } else {
                s0 = add(s0, p0);
                s1 = add(s1, p1);
            }
        }
        let mut out = [0.0f64; L];
        _mm256_storeu_pd(out.as_mut_ptr(), s0);
        _mm256_storeu_pd(out.as_mut_ptr().add(4), s1);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every product and sum of two words of posit:10:1 and posit:9:0 (all pairs), and
    /// random pairs of the 16-bit formats, rounded on the path, equal the posit operations.
    #[test]
    fn path_operations_equal_the_posit_operations() {
        let mut r = crate::test_words(11);
        for s in [
            "posit:9:0",
            "posit:10:1",
            "posit:16:1",
            "posit:16",
            "posit:16:1:u",
        ] {
            let f = match s.parse::<crate::Format>().unwrap() {
                crate::Format::Posit(f) => f,
                _ => unreachable!(),
            };
            let p = f.f64_path().unwrap();
            let pairs: Vec<(Bits, Bits)> = if f.n <= 10 {
                (0..1u64 << f.n)
                    .flat_map(|a| (0..1u64 << f.n).map(move |b| (a, b)))
                    .collect()
            } else {
                (0..400_000)
                    .map(|_| (r() & f.mask(), r() & f.mask()))
                    .collect()
            };
            for (a, b) in pairs {
                let (x, y) = (p.load(a), p.load(b));
                assert_eq!(
                    p.store(p.mul(x, y)),
                    Family::mul(&f, a, b),
                    "{s} {a:#x}·{b:#x}"
                );
                assert_eq!(
                    p.store(p.add(x, y)),
                    Family::add(&f, a, b),
                    "{s} {a:#x}+{b:#x}"
                );
                assert_eq!(
                    p.store(p.sub(x, y)),
                    Family::sub(&f, a, b),
                    "{s} {a:#x}-{b:#x}"
                );
            }
        }
    }

    /// The AVX2 lanes (where the machine has them) equal the portable ones on random blocks
    /// of every word but NaR (the frame keeps NaR from the lanes), naive and Kahan.
    #[test]
    fn vector_lanes_equal_the_portable_lanes() {
        let mut r = crate::test_words(21);
        for s in ["posit:16:1", "posit:12:2", "posit:9:0"] {
            let f = match s.parse::<crate::Format>().unwrap() {
                crate::Format::Posit(f) => f,
                _ => unreachable!(),
            };
            let p = f.f64_path().unwrap();
            let mut word = || loop {
                let w = r() & f.mask();
                if w != f.nar() {
                    break p.load(w);
                }
            };
            for k in [0, 1, 7, 300] {
                let x: Vec<f64> = (0..k).map(|_| word()).collect();
                let y: Vec<[f64; L]> = (0..k).map(|_| std::array::from_fn(|_| word())).collect();
                for kahan in [false, true] {
                    let want = p.run_portable(kahan, &x, &y);
                    #[cfg(target_arch = "x86_64")]
                    if std::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2.
                        let got = unsafe { avx2::run(&p, kahan, &x, &y) };
                        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{s} K = {k}");
                    }
                }
            }
        }
    }
}
