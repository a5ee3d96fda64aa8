//! The exact accumulator (mode `quire`): Σ a_k·b_k of a float format's words without any
//! rounding, read out once.
//!
//! Every product of two finite words is an integer multiple of 2^(2·(emin − M)) below
//! 2^(2·(emax + 1)), so a two's-complement fixed-point integer of 2·(emax + 1 − emin + M)
//! bits with that scale holds any product exactly; 64 guard bits above it hold any sum of
//! fewer than 2^63 of them, and one more bit is the sign (docs/formats.md gives the widths).
//! The integer is an array of 64-bit limbs; a product (at most 106 bits) touches three of
//! them, plus a carry or borrow that rarely goes further.

use super::{Dy, FloatFormat, Val};
use crate::arith::Bits;
use crate::rounding::Draw;

/// Guard bits above the largest product: sums of up to 2^63 terms cannot overflow.
const GUARD_BITS: i64 = 64;

/// An exact running sum of products (or of words) of one format.
#[derive(Clone, Debug)]
pub struct ExactAcc {
    fmt: FloatFormat,
    /// The exponent of bit 0: 2·(emin − M).
    scale: i64,
    /// Two's complement, least significant limb first.
    limbs: Vec<u64>,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
}

impl ExactAcc {
    /// A zero accumulator for `fmt`'s products.
    pub fn new(fmt: FloatFormat) -> ExactAcc {
        let n = (Self::bits(&fmt) + 63) / 64;
        ExactAcc {
            fmt,
            scale: 2 * (fmt.emin() - i64::from(fmt.frac_bits)),
            limbs: vec![0; n as usize],
            nan: false,
            pos_inf: false,
            neg_inf: false,
        }
    }

    /// Back to zero, the flags cleared (the array PE's `clear`).
    pub fn clear(&mut self) {
        *self = ExactAcc::new(self.fmt);
    }

    /// The accumulator's width in bits: the span of the products, 2·(emax + 1 − emin + M),
    /// 64 guard bits and the sign.
    pub fn bits(fmt: &FloatFormat) -> i64 {
        2 * (fmt.emax() + 1 - fmt.emin() + i64::from(fmt.frac_bits)) + GUARD_BITS + 1
    }

    /// Adds a·b exactly (NaN operands and 0·∞ make the sum NaN; ±∞ products are kept aside).
    pub fn add_product(&mut self, a: Bits, b: Bits) {
        match (self.fmt.decode(a), self.fmt.decode(b)) {
            (Val::Nan, _) | (_, Val::Nan) => self.nan = true,
            (Val::Inf(p), Val::Inf(q)) => self.inf(p != q),
            (Val::Inf(p), Val::Fin(x)) | (Val::Fin(x), Val::Inf(p)) => {
                if x.sig == 0 {
                    self.nan = true
                } else {
                    self.inf(p != x.neg)
                }
            }
            (Val::Fin(x), Val::Fin(y)) => self.add_dy(Dy {
                neg: x.neg != y.neg,
                sig: x.sig * y.sig,
                exp: x.exp + y.exp,
            }),
        }
    }

    /// Adds a word exactly.
    pub fn add_word(&mut self, a: Bits) {
        match self.fmt.decode(a) {
            Val::Nan => self.nan = true,
            Val::Inf(neg) => self.inf(neg),
            Val::Fin(x) => self.add_dy(x),
        }
    }

    fn inf(&mut self, neg: bool) {
        if neg {
            self.neg_inf = true
        } else {
            self.pos_inf = true
        }
    }

    fn add_dy(&mut self, x: Dy) {
        if x.sig == 0 {
            return;
        }
        let shift = (x.exp - self.scale) as usize;
        let (i, o) = (shift / 64, shift % 64);
        // x.sig << o spans at most 106 + 63 bits: three limbs.
        let lo = x.sig << o;
        let hi = if o == 0 { 0 } else { x.sig >> (128 - o) };
        let parts = [lo as u64, (lo >> 64) as u64, hi as u64];
        let mut carry = false;
        for (j, limb) in self.limbs[i..].iter_mut().enumerate() {
            let p = parts.get(j).copied().unwrap_or(0);
            if j >= 3 && !carry {
                break;
            }
            if x.neg {
                let (d, b1) = limb.overflowing_sub(p);
                let (d, b2) = d.overflowing_sub(u64::from(carry));
                *limb = d;
                carry = b1 || b2;
            } else {
                let (s, c1) = limb.overflowing_add(p);
                let (s, c2) = s.overflowing_add(u64::from(carry));
                *limb = s;
                carry = c1 || c2;
            }
        }
        // A carry or borrow out of the top limb is two's complement's wrap-around.
    }

    /// The sum rounded once: NaN if a NaN or 0·∞ was added or both +∞ and −∞ were; an
    /// infinite result ([`FloatFormat::infinite`]) if ±∞ was; an exact zero is +0.
    pub fn result(&self) -> Bits {
        self.result_d(Draw::Nearest)
    }

    /// The sum rounded once by `draw` (as [`ExactAcc::result`] for nearest).
    pub(crate) fn result_d(&self, draw: Draw) -> Bits {
        let f = &self.fmt;
        if self.nan || (self.pos_inf && self.neg_inf) {
            return f.nan();
        }
        if self.pos_inf || self.neg_inf {
            return f.infinite(self.neg_inf);
        }
        let neg = self.limbs.last().is_some_and(|&l| l >> 63 != 0);
        let mut mag = self.limbs.clone();
        if neg {
            // Two's complement negation: invert and add one.
            let mut carry = true;
            for l in mag.iter_mut() {
                let (s, c) = (!*l).overflowing_add(u64::from(carry));
                *l = s;
                carry = c;
            }
        }
        let Some(top) = mag.iter().rposition(|&l| l != 0) else {
            return f.zero_of(false);
        };
        let msb = top as i64 * 64 + 63 - i64::from(mag[top].leading_zeros());
        // Keep the top 126 bits (or all), then a sticky bit for the rest.
        let r = (msb + 1 - 126).max(0);
        let kept = shr_u128(&mag, r);
        let (whole, part) = ((r / 64) as usize, r % 64);
        let lost = mag[..whole].iter().any(|&l| l != 0)
            || (part != 0 && mag[whole] & ((1u64 << part) - 1) != 0);
        f.round_with(neg, kept << 1 | u128::from(lost), self.scale + r - 1, draw)
    }
}

/// The exact accumulator as the matrix-product kernel feeds it.
impl crate::kernel::ExactDot for FloatFormat {
    /// The accumulator's flags (NaN, +∞, −∞) from the products with a special operand
    /// alone: once one is set, [`ExactAcc::result`] reads them and not the finite sum.
    fn special_dot(&self, a: &[Bits], b: &[Bits]) -> Option<Bits> {
        let special = |w: Bits| matches!(self.decode(w), Val::Nan | Val::Inf(_));
        let mut acc = ExactAcc::new(*self);
        for (&x, &y) in a.iter().zip(b) {
            if special(x) || special(y) {
                acc.add_product(x, y);
                if acc.nan {
                    // NaN whatever follows (a diverged network's lines are NaN throughout).
                    break;
                }
            }
        }
        (acc.nan || acc.pos_inf || acc.neg_inf).then(|| acc.result())
    }
    /// A finite word's value (as the accumulator decodes it, `:ftz` included); NaN and ±∞
    /// are the reference's.
    fn exact_f64(&self, w: Bits) -> Option<f64> {
        match self.decode(w) {
            Val::Fin(x) => {
                // 2^exp by its bits where it is a normal f64 (a call of `exp2` per word
                // was a twentieth of a bf16 --quire epoch).
                let p = match x.exp {
                    e @ -1022..=1023 => crate::arith::pow2(e),
                    e => (e as f64).exp2(),
                };
                let v = (x.sig as f64) * p;
                Some(if x.neg { -v } else { v })
            }
            Val::Nan | Val::Inf(_) => None,
        }
    }
    /// The guard bits hold any sum of fewer than 2^63 products.
    fn max_terms(&self) -> u64 {
        (1u64 << (GUARD_BITS - 1)) - 1
    }
    /// [`ExactAcc::result`] of an accumulator holding v·2^scale: rounded once, an exact
    /// zero +0. A sum of at most 53 bits is an exact f64, rounded by
    /// [`FloatFormat::round_scaled`]'s fast path (the same word, held to this rounding by
    /// `float::tests::read_exact_is_the_rounding_of_the_sum`).
    fn read_exact(&self, v: i128, scale: i32) -> Bits {
        if v.unsigned_abs() < 1 << 53 && scale.abs() <= 512 {
            // The format's rounder, worked out once per process (a read-out per element).
            let r = crate::table::cached(*self, || self.scaled_rounder());
            return r.round(v as i64 as f64, -i64::from(scale));
        }
        self.read_exact_reference(v, scale)
    }
    /// A rounding to nearest of at most 53 significant bits (`frac_bits` + 1), at a fixed
    /// grid below the normal range: a sum above 2^125 units keeps its word when every bit
    /// below its top 126 is folded into a sticky bit.
    fn reads_wide_sums(&self) -> bool {
        self.frac_bits < 60
    }
    /// The format's rounder of each nonzero sum, found once; a zero is the exact zero (+0).
    fn read_values(&self, sums: &[f64], out: &mut Vec<Bits>) {
        let r = crate::table::cached(*self, || self.scaled_rounder());
        let zero = self.read_exact(0, 0);
        out.extend(
            sums.iter()
                .map(|&v| if v == 0.0 { zero } else { r.round(v, 0) }),
        );
    }
}

impl FloatFormat {
    /// The definition of [`crate::kernel::ExactDot::read_exact`]: v·2^scale rounded once
    /// to nearest even, an exact zero +0.
    pub fn read_exact_reference(&self, v: i128, scale: i32) -> Bits {
        self.round_with(v < 0, v.unsigned_abs(), i64::from(scale), Draw::Nearest)
    }
}

/// Bits r … r + 127 of the little-endian limbs as a u128.
fn shr_u128(limbs: &[u64], r: i64) -> u128 {
    let (i, o) = ((r / 64) as usize, (r % 64) as u32);
    let get = |k: usize| u128::from(limbs.get(k).copied().unwrap_or(0));
    let v = get(i) | get(i + 1) << 64;
    let mut out = v >> o;
    if o != 0 {
        out |= get(i + 2) << (128 - o);
    }
    out
}

impl FloatFormat {
    /// Σ a_k·b_k, k = 0..K−1, exactly, rounded once.
    pub fn dot_exact(&self, a: &[Bits], b: &[Bits]) -> Bits {
        assert_eq!(a.len(), b.len());
        let mut acc = ExactAcc::new(*self);
        for (&x, &y) in a.iter().zip(b) {
            acc.add_product(x, y);
        }
        acc.result()
    }

    /// Σ x_k exactly, rounded once.
    pub fn sum_exact(&self, xs: &[Bits]) -> Bits {
        let mut acc = ExactAcc::new(*self);
        for &x in xs {
            acc.add_word(x);
        }
        acc.result()
    }
}

/// The float PE's exact accumulation (`Family::accumulator`, mode quire), read out to
/// nearest or under a `Rounder`.
impl crate::accumulator::Accumulator for ExactAcc {
    fn clear(&mut self) {
        ExactAcc::clear(self)
    }
    fn add_product(&mut self, a: Bits, b: Bits) {
        ExactAcc::add_product(self, a, b)
    }
    fn word(&self) -> Bits {
        self.result()
    }
    fn word_with(&self, r: &mut crate::Rounder) -> Option<Bits> {
        Some(self.result_with(r))
    }
}
