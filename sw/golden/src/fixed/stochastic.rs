//! The fix family's rounding operations under a [`Rounder`] (nearest or `stochastic:R`,
//! docs/formats.md "Stochastic rounding"): conversion from f64 and from another fix format,
//! mul, div and sqrt each take exactly one draw, whatever the operands. add and sub are exact (but
//! for saturation) and take none. Stochastic rounding works on the two's complement value:
//! the floor, plus one ulp iff d + r >= 2^R ([`super::round_shift`]); then saturation.

use num_bigint::BigInt;
use num_integer::Integer;

use crate::arith::{BinOp, Bits};
use crate::exact::Ratio;
use crate::family_trait::Family;
use crate::rounding::{Draw, RoundedOps, Rounder};

use super::{round_shift, FixFormat};

/// Shifts of more bits than this are first reduced to it by a floor: nested floors are one
/// floor, and the top 32 bits of the discarded part stay exact.
const MAX_SHIFT: u32 = 100;

impl FixFormat {
    /// a · b rounded by `r` (one draw), saturating.
    pub fn mul_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        let p = self.to_int(a) as i128 * self.to_int(b) as i128;
        self.from_int(round_shift(p, self.frac_bits, r.draw()))
    }

    /// a / b rounded by `r` (one draw); x/0 saturates with x's sign, 0/0 is 0.
    pub fn div_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        self.div_d(a, b, r.draw())
    }

    /// The word of `x` rounded by `r` (one draw), saturating; NaN gives 0.
    pub fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Bits {
        let draw = r.draw();
        if draw == Draw::Nearest {
            return self.from_f64(x);
        }
        if x.is_nan() {
            return 0;
        }
        if x.is_infinite() {
            return self.from_int(if x > 0.0 { i128::MAX } else { i128::MIN });
        }
        // x·2^F = ±sig · 2^e exactly.
        let bits = x.to_bits();
        let field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (sig, exp) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        let v = if x < 0.0 {
            -i128::from(sig)
        } else {
            i128::from(sig)
        };
        let e = exp + i64::from(self.frac_bits);
        if e >= 0 {
            // An integer: |v|·2^e >= 2^64 saturates alike (sig >= 1, the word has <= 32 bits).
            return self.from_int(if e >= 64 { v.signum() << 64 } else { v << e });
        }
        let sh = (-e) as u32;
        // floor(floor(v / 2^k) / 2^100) = floor(v / 2^(k+100)), and the top R bits of the
        // discarded part lie in the first 100 bits below the last place.
        let (v, sh) = if sh > MAX_SHIFT {
            (v >> (sh - MAX_SHIFT).min(127), MAX_SHIFT)
        } else {
            (v, sh)
        };
        self.from_int(round_shift(v, sh, draw))
    }

    /// The word of an exact ratio rounded by `r` (one draw), saturating.
    pub fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Bits {
        let Draw::Stochastic { bits, r: rnd } = r.draw() else {
            return self.from_ratio(x.neg, &x.num, &x.den);
        };
        let num = BigInt::from(x.num.clone()) << self.frac_bits;
        let num = if x.neg { -num } else { num };
        let den = BigInt::from(x.den.clone());
        let (q, rem) = num.div_mod_floor(&den);
        // d = floor(rem/den · 2^R), an integer below 2^R.
        let d: BigInt = (rem << bits) / &den;
        let d = u128::try_from(d).expect("below 2^R");
        let q = q + i32::from(Draw::steps(bits, rnd, d, u64::from(bits)));
        let lim = BigInt::from(1i64 << 40);
        self.from_int(i128::try_from(q.clamp(-lim.clone(), lim)).expect("clamped"))
    }

    /// `a` as a word of `to` rounded by `r` (one draw, even where `to` holds `a` exactly),
    /// saturating.
    pub fn convert_with(&self, to: &FixFormat, a: Bits, r: &mut Rounder) -> Bits {
        let draw = r.draw();
        let x = self.to_int(a) as i128;
        let v = if to.frac_bits >= self.frac_bits {
            x << (to.frac_bits - self.frac_bits)
        } else {
            round_shift(x, self.frac_bits - to.frac_bits, draw)
        };
        to.from_int(v)
    }
}

impl RoundedOps for FixFormat {
    fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Bits {
        FixFormat::from_f64_with(self, x, r)
    }

    fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Bits {
        FixFormat::from_ratio_with(self, x, r)
    }

    /// mul and div take one draw; add, sub (exact but for saturation), max and min none.
    fn binop_with(&self, op: BinOp, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        match op {
            BinOp::Mul => self.mul_with(a, b, r),
            BinOp::Div => self.div_with(a, b, r),
            BinOp::Add => FixFormat::add(self, a, b),
            BinOp::Sub => FixFormat::sub(self, a, b),
            BinOp::Max => Family::max(self, a, b),
            BinOp::Min => Family::min(self, a, b),
        }
    }

    /// √a rounded by `r` (one draw; a negative operand gives 0).
    fn sqrt_with(&self, a: Bits, r: &mut Rounder) -> Bits {
        self.sqrt_d(a, r.draw())
    }

    /// The wide accumulator's sum read out once by `r` (one draw), saturating.
    fn dot_exact_with(&self, a: &[Bits], b: &[Bits], r: &mut Rounder) -> Bits {
        assert_eq!(a.len(), b.len());
        self.dot_acc_d(a, b, r.draw())
    }
}
