//! Conversion between the float and fix families (the `convert` unit's float ↔ fix pairs,
//! [`crate::alu::convert`]): one rounding to nearest, ties to even, by the target family's
//! own rule — a float result by [`FloatFormat::round`] (its subnormal, overflow, `:fn`,
//! `:sat`, `:ftz` rules), a fix result to its F fraction bits and saturated at its most
//! negative and most positive codes (as `fix` to `fix`).

use super::{FloatFormat, Val};
use crate::arith::Bits;
use crate::fixed::{rne_shift, FixFormat};
use crate::rounding::{Draw, Rounder};

impl FloatFormat {
    /// The word of fix format `s` as a word of this format: its exact value
    /// s.to_int(a) · 2^−F rounded once (zero gives +0).
    pub fn from_fix(&self, s: FixFormat, a: Bits) -> Bits {
        self.fix_value_rounded(s, a, Draw::Nearest)
    }

    /// [`Self::from_fix`] rounded by `r` (one draw, even where the value is exact).
    pub fn from_fix_with(&self, s: FixFormat, a: Bits, r: &mut Rounder) -> Bits {
        self.fix_value_rounded(s, a, r.draw())
    }

    fn fix_value_rounded(&self, s: FixFormat, a: Bits, draw: Draw) -> Bits {
        let v = s.to_int(a);
        self.round_with(
            v < 0,
            u128::from(v.unsigned_abs()),
            -i64::from(s.frac_bits),
            draw,
        )
    }

    /// This format's word `a` as a word of fix format `t`: its exact value rounded to t's F
    /// fraction bits (nearest, ties to even) and saturated; ±0 and (with `:ftz`) subnormals
    /// give 0, ±∞ the most positive / most negative code, NaN gives 0 (as a NaN f64 does,
    /// `FixFormat::from_f64`).
    pub fn to_fix(&self, t: FixFormat, a: Bits) -> Bits {
        match self.decode(a) {
            Val::Nan => 0,
            Val::Inf(neg) => t.from_int(if neg { i128::MIN } else { i128::MAX }),
            Val::Fin(d) => {
                // value · 2^F = sig · 2^(exp + F); sig < 2^53, so a left shift of up to 64
                // fits an i128, and anything shifted further saturates alike.
                let sh = d.exp + i64::from(t.frac_bits);
                let sig = d.sig as i128;
                let mag = if sh >= 0 {
                    if sig == 0 {
                        0
                    } else {
                        sig << sh.min(64)
                    }
                } else {
                    rne_shift(sig, u32::try_from(-sh).unwrap_or(u32::MAX))
                };
                t.from_int(if d.neg { -mag } else { mag })
            }
        }
    }
}
