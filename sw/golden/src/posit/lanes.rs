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
#[cfg(target_arch = "x86_64")]
use crate::kernel::lockstep::avx512;
use std::ops::Range;

use crate::kernel::lockstep::{lockstep, Lanes};

use super::PositFormat;

/// Outputs computed in lockstep per line of the other side: two AVX2 vectors of four, for up
/// to four lines at once (eight independent chains against the latency of an add and its
/// rounding).
const L: usize = 8;

/// The same on AVX-512: two vectors of eight.
const L512: usize = 16;

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

    /// The word of `x`, a posit's value (as [`Self::round`] gives them: NaN is NaR), packed
    /// from its f64 fields: the sign, the regime of k = ⌊e / 2^es⌋ (k + 1 ones and a zero,
    /// or −k zeros and a one), es exponent bits and the fraction, cut to N − 1 bits (what is
    /// cut is zero, x being a posit; at maxpos and minpos the regime's last bit is cut), then
    /// negated in two's complement for a negative x. `tests` hold it to every word's value.
    #[inline(always)]
    pub fn encode_exact(&self, x: f64) -> Bits {
        if x == 0.0 || x.is_nan() {
            return if x == 0.0 { 0 } else { self.f.nar() };
        }
        let bits = x.to_bits();
        let (n, es) = (i64::from(self.f.n), i64::from(self.f.es));
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        let k = e >> es;
        let (regime, len) = if k >= 0 {
            (((1u128 << (k + 1)) - 1) << 1, k + 2)
        } else {
            (1u128, 1 - k)
        };
        let exponent = (e - (k << es)) as u128;
        let body = regime << (es + 52) | exponent << 52 | u128::from(bits & ((1 << 52) - 1));
        let w = (body >> (len + es + 52 - (n - 1))) as Bits;
        match bits >> 63 {
            0 => w,
            _ => w.wrapping_neg() & ((1 << n) - 1),
        }
    }

    /// The rounding by the format's own encoder.
    #[cold]
    fn slow(&self, x: f64) -> f64 {
        self.f.to_f64(self.f.from_f64(x))
    }

    /// Every naive or Kahan dot product of `rows` with `cols`, row-major.
    pub(crate) fn dots(&self, kahan: bool, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let lanes = Run {
            p: *self,
            kahan,
            values: self.values(),
        };
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            return lockstep(&Run512(lanes), rows, cols);
        }
        lockstep(&lanes, rows, cols)
    }

    /// Every word's value, NaN for NaR (built once per format).
    fn values(&self) -> &'static [f64] {
        let values = crate::table::cached(self.f, || {
            Values((0..1u64 << self.f.n).map(|w| self.f.to_f64(w)).collect())
        });
        &values.0
    }

    /// N lockstep sums in portable code.
    fn run_portable<const N: usize>(&self, kahan: bool, x: &[f64], y: &[[f64; N]]) -> [f64; N] {
        let (mut s, mut c) = ([0.0f64; N], [0.0f64; N]);
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
    /// `v` is a sum of the lanes, a posit's value (every operation rounds to one).
    fn encode(&self, v: f64) -> Bits {
        self.p.encode_exact(v)
    }
    fn run(&self, xs: &[&[f64]], y: &[[f64; L]], out: &mut [[f64; L]]) {
        self.run_skipping(xs, y, &[], out)
    }
    /// A zero operand's product rounds to +0 whatever the other (posits have one zero and no
    /// infinity; `PositF64::round` takes −0 to +0).
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn run_skipping(
        &self,
        xs: &[&[f64]],
        y: &[[f64; L]],
        skip: &[Range<usize>],
        out: &mut [[f64; L]],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::run(&self.p, self.kahan, xs, y, skip, out) };
        }
        // Every step, the skipped ones too (the same sums).
        for (x, out) in xs.iter().zip(out) {
            *out = self.p.run_portable(self.kahan, x, y);
        }
    }
}

/// The same lanes, L512 wide, on AVX-512 (made only where the machine has it).
#[cfg(target_arch = "x86_64")]
struct Run512<'a>(Run<'a>);

#[cfg(target_arch = "x86_64")]
impl Lanes<f64, L512> for Run512<'_> {
    fn value(&self, w: Bits) -> Option<f64> {
        self.0.value(w)
    }
    fn special(&self) -> Bits {
        self.0.special()
    }
    fn encode(&self, v: f64) -> Bits {
        self.0.encode(v)
    }
    fn run(&self, xs: &[&[f64]], y: &[[f64; L512]], out: &mut [[f64; L512]]) {
        self.run_skipping(xs, y, &[], out)
    }
    fn zero_products_are_one(&self) -> bool {
        self.0.zero_products_are_one()
    }
    fn run_skipping(
        &self,
        xs: &[&[f64]],
        y: &[[f64; L512]],
        skip: &[Range<usize>],
        out: &mut [[f64; L512]],
    ) {
        assert!(avx512(), "Run512 is made where the machine has AVX-512");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run(&self.0.p, self.0.kahan, xs, y, skip, out) }
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

    use std::ops::Range;

    use crate::kernel::lockstep::{by_rows, segments, zero_run};

    use super::{PositF64, L};

    /// The sums and compensations of R lines' two vectors of lanes.
    type State<const R: usize> = ([[__m256d; 2]; R], [[__m256d; 2]; R]);

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

    /// L lockstep sums of each line of `xs`, as [`PositF64::run_portable`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run(
        p: &PositF64,
        kahan: bool,
        xs: &[&[f64]],
        y: &[[f64; L]],
        skip: &[Range<usize>],
        out: &mut [[f64; L]],
    ) {
        by_rows!(run_rows(p, kahan, skip; xs, y, out));
    }

    /// [`run`] of R lines: 2·R vectors of four lanes.
    #[target_feature(enable = "avx2")]
    unsafe fn run_rows<const R: usize>(
        p: &PositF64,
        kahan: bool,
        skip: &[Range<usize>],
        xs: &[&[f64]],
        y: &[[f64; L]],
        out: &mut [[f64; L]],
    ) {
        assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
        let add = |a: __m256d, b: __m256d| round(p, _mm256_add_pd(a, b));
        let sub = |a: __m256d, b: __m256d| round(p, _mm256_sub_pd(a, b));
        let z = _mm256_setzero_pd();
        let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
        let step =
            |s: &mut [[__m256d; 2]; R], c: &mut [[__m256d; 2]; R], r: usize, v: usize, prod| {
                (s[r][v], c[r][v]) = if kahan {
                    crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
                } else {
                    (add(s[r][v], prod), c[r][v])
                };
            };
        // Whether every lane's state (sum and compensation) is the same, bit for bit.
        let same = |a: __m256d, b: __m256d| {
            _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(
                _mm256_castpd_si256(a),
                _mm256_castpd_si256(b),
            ))) == 0xf
        };
        let still = |a: &State<R>, b: &State<R>| {
            (0..R).all(|r| (0..2).all(|v| same(a.0[r][v], b.0[r][v]) && same(a.1[r][v], b.1[r][v])))
        };
        for (ks, zero) in segments(y.len(), skip) {
            if zero {
                // Every product here is the zero product (+0).
                let every_lane = |(s, c): &mut State<R>| {
                    for r in 0..R {
                        for v in 0..2 {
                            step(s, c, r, v, z);
                        }
                    }
                };
                let mut state = (s, c);
                zero_run(&mut state, ks.len(), every_lane, still);
                (s, c) = state;
                continue;
            }
            for (i, yk) in ks.map(|i| (i, &y[i])) {
                // SAFETY: yk holds L = 2·4 f64s.
                let q = [0, 1].map(|v| _mm256_loadu_pd(yk.as_ptr().add(4 * v)));
                for (r, x) in xs.iter().enumerate() {
                    let a = _mm256_set1_pd(x[i]);
                    for (v, &q) in q.iter().enumerate() {
                        // The step written out (not `step`: a closure the compiler may
                        // leave as a call, as it did here, 1.2× the epoch's time).
                        let prod = round(p, _mm256_mul_pd(a, q));
                        (s[r][v], c[r][v]) = if kahan {
                            crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
                        } else {
                            (add(s[r][v], prod), c[r][v])
                        };
                    }
                }
            }
        }
        for (s, out) in s.iter().zip(out) {
            for (v, s) in s.iter().enumerate() {
                _mm256_storeu_pd(out.as_mut_ptr().add(4 * v), *s);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use std::ops::Range;

    use crate::kernel::lockstep::{by_rows, segments, zero_run};

    use super::{PositF64, L512 as L};

    /// The sums and compensations of R lines' two vectors of lanes.
    type State<const R: usize> = ([[__m512d; 2]; R], [[__m512d; 2]; R]);

    /// [`PositF64::round`] of eight lanes, as the AVX2 form with masks.
    #[inline(always)]
    unsafe fn round(p: &PositF64, v: __m512d) -> __m512d {
        let all = |x: i64| _mm512_set1_epi64(x);
        let u = _mm512_castpd_si512(v);
        let eb = _mm512_and_si512(_mm512_srli_epi64::<52>(u), all(0x7ff));
        let kk = _mm512_srl_epi64(
            _mm512_add_epi64(eb, all(1)),
            _mm_cvtsi64_si128(i64::from(p.f.es)),
        );
        // The regime length: max(k + 2, 1 − k).
        let r = _mm512_max_epi64(
            _mm512_add_epi64(kk, all(2 - p.k0)),
            _mm512_sub_epi64(all(p.k0 + 1), kk),
        );
        let field = _mm512_add_epi64(_mm512_add_epi64(eb, r), all(52 - p.body));
        let c = _mm512_castsi512_pd(_mm512_or_si512(
            _mm512_slli_epi64::<52>(field),
            all(1 << 51),
        ));
        let out = _mm512_sub_pd(_mm512_add_pd(v, c), c);
        let nonzero = _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(v, _mm512_setzero_pd());
        let slow = _mm512_mask_cmpgt_epi64_mask(nonzero, r, all(p.body - 1));
        if slow == 0 {
            return out;
        }
        fix(p, v, out, slow)
    }

    /// The lanes of `out` marked in `slow`, rounded by the format's encoder.
    #[cold]
    #[inline(never)]
    unsafe fn fix(p: &PositF64, v: __m512d, out: __m512d, slow: __mmask8) -> __m512d {
        let (mut x, mut o) = ([0.0f64; 8], [0.0f64; 8]);
        _mm512_storeu_pd(x.as_mut_ptr(), v);
        _mm512_storeu_pd(o.as_mut_ptr(), out);
        for l in 0..8 {
            if slow >> l & 1 != 0 {
                o[l] = p.slow(x[l]);
            }
        }
        _mm512_loadu_pd(o.as_ptr())
    }

    /// L lockstep sums of each line of `xs`, as [`PositF64::run_portable`].
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn run(
        p: &PositF64,
        kahan: bool,
        xs: &[&[f64]],
        y: &[[f64; L]],
        skip: &[Range<usize>],
        out: &mut [[f64; L]],
    ) {
        by_rows!(run_rows(p, kahan, skip; xs, y, out));
    }

    /// [`run`] of R lines: 2·R vectors of eight lanes.
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn run_rows<const R: usize>(
        p: &PositF64,
        kahan: bool,
        skip: &[Range<usize>],
        xs: &[&[f64]],
        y: &[[f64; L]],
        out: &mut [[f64; L]],
    ) {
        assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
        let add = |a: __m512d, b: __m512d| round(p, _mm512_add_pd(a, b));
        let sub = |a: __m512d, b: __m512d| round(p, _mm512_sub_pd(a, b));
        let z = _mm512_setzero_pd();
        let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
        let step =
            |s: &mut [[__m512d; 2]; R], c: &mut [[__m512d; 2]; R], r: usize, v: usize, prod| {
                (s[r][v], c[r][v]) = if kahan {
                    crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
                } else {
                    (add(s[r][v], prod), c[r][v])
                };
            };
        // Whether every lane's state (sum and compensation) is the same, bit for bit.
        let same = |a: __m512d, b: __m512d| {
            _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(a), _mm512_castpd_si512(b)) == 0
        };
        let still = |a: &State<R>, b: &State<R>| {
            (0..R).all(|r| (0..2).all(|v| same(a.0[r][v], b.0[r][v]) && same(a.1[r][v], b.1[r][v])))
        };
        for (ks, zero) in segments(y.len(), skip) {
            if zero {
                // Every product here is the zero product (+0).
                let every_lane = |(s, c): &mut State<R>| {
                    for r in 0..R {
                        for v in 0..2 {
                            step(s, c, r, v, z);
                        }
                    }
                };
                let mut state = (s, c);
                zero_run(&mut state, ks.len(), every_lane, still);
                (s, c) = state;
                continue;
            }
            for (i, yk) in ks.map(|i| (i, &y[i])) {
                // SAFETY: yk holds L = 2·8 f64s.
                let q = [0, 1].map(|v| _mm512_loadu_pd(yk.as_ptr().add(8 * v)));
                for (r, x) in xs.iter().enumerate() {
                    let a = _mm512_set1_pd(x[i]);
                    for (v, &q) in q.iter().enumerate() {
                        // The step written out (not `step`: a closure the compiler may
                        // leave as a call, as it did here, 1.2× the epoch's time).
                        let prod = round(p, _mm512_mul_pd(a, q));
                        (s[r][v], c[r][v]) = if kahan {
                            crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
                        } else {
                            (add(s[r][v], prod), c[r][v])
                        };
                    }
                }
            }
        }
        for (s, out) in s.iter().zip(out) {
            for (v, s) in s.iter().enumerate() {
                _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), *s);
            }
        }
    }
}

#[cfg(test)]
mod tests;
