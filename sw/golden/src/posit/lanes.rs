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

#[cfg(target_arch = "x86_64")]
use crate::kernel::lockstep::sparse_either;
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
            if !kahan {
                return sparse_either(&Run512(lanes), &Half512(lanes), rows, cols);
            }
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

impl PositF64 {
    /// The N lockstep naive sums of one line given by its nonzero values `vs` at `ks`
    /// ([`Lanes::run_sparse`]), in portable code.
    fn run_portable_sparse<const N: usize>(
        &self,
        ks: &[u32],
        vs: &[f64],
        y: &[[f64; N]],
    ) -> [f64; N] {
        let mut s = [0.0f64; N];
        for (&k, &p) in ks.iter().zip(vs) {
            for (s, &q) in s.iter_mut().zip(&y[k as usize]) {
                *s = self.round(*s + self.round(p * q));
            }
        }
        s
    }
}

/// Every word's value (NaN for NaR), built once per format: the lanes decode each operand
/// of a product once, M·K + K·N words, a sixth of the work of a product with six columns.
struct Values(Vec<f64>);

/// The frame's view of the path in one mode.
#[derive(Clone, Copy)]
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
    /// A naive sum's step with a zero product is round(s + 0) = s (+0 for s = +0).
    fn zero_products_leave_sums(&self) -> bool {
        !self.kahan
    }
    fn run_sparse(&self, xs: &[(&[u32], &[f64])], y: &[[f64; L]], out: &mut [[f64; L]]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::run_sparse(&self.p, xs, y, out) };
        }
        for (&(ks, vs), out) in xs.iter().zip(out) {
            *out = self.p.run_portable_sparse(ks, vs, y);
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Run<'_> {
    /// [`Lanes::decode`] on AVX-512 (with CD's `vplzcntq`) where the machine has it and every
    /// word is one of the format's, word by word by the table otherwise.
    fn decode_wide(&self, line: &[Bits], out: &mut Vec<f64>) -> bool {
        if avx512() && std::is_x86_feature_detected!("avx512cd") {
            // SAFETY: the machine has AVX-512 F, DQ and CD (checked just above).
            if let Some(nar) = unsafe { avx512::decode(&self.p, line, out) } {
                return nar;
            }
        }
        Lanes::<f64, L>::decode(self, line, out)
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
    fn decode(&self, line: &[Bits], out: &mut Vec<f64>) -> bool {
        self.0.decode_wide(line, out)
    }
    fn zero_products_leave_sums(&self) -> bool {
        self.0.zero_products_leave_sums()
    }
    fn run_sparse(&self, xs: &[(&[u32], &[f64])], y: &[[f64; L512]], out: &mut [[f64; L512]]) {
        assert!(avx512(), "Run512 is made where the machine has AVX-512");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_sparse(&self.0.p, xs, y, out) }
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

/// Naive sums on AVX-512, one vector of eight lanes a line: for a product whose wide side
/// has at most eight lines (a convolution's six channels), which two vectors would run
/// mostly empty. Only the sparse frame ([`sparse_either`]) takes it.
#[cfg(target_arch = "x86_64")]
struct Half512<'a>(Run<'a>);

#[cfg(target_arch = "x86_64")]
impl Lanes<f64, L> for Half512<'_> {
    fn value(&self, w: Bits) -> Option<f64> {
        self.0.value(w)
    }
    fn special(&self) -> Bits {
        self.0.special()
    }
    fn encode(&self, v: f64) -> Bits {
        self.0.encode(v)
    }
    /// The dense lines on the AVX2 lanes (the same sums).
    fn run(&self, xs: &[&[f64]], y: &[[f64; L]], out: &mut [[f64; L]]) {
        self.0.run(xs, y, out)
    }
    fn decode(&self, line: &[Bits], out: &mut Vec<f64>) -> bool {
        self.0.decode_wide(line, out)
    }
    fn zero_products_leave_sums(&self) -> bool {
        self.0.zero_products_leave_sums()
    }
    fn run_sparse(&self, xs: &[(&[u32], &[f64])], y: &[[f64; L]], out: &mut [[f64; L]]) {
        assert!(avx512(), "Half512 is made where the machine has AVX-512");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_sparse(&self.0.p, xs, y, out) }
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
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(test)]
mod tests;
