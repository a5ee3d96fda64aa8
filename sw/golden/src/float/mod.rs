//! `float:E:M`: IEEE-style binary floats of any small width (issue 32), with the suffixes
//! `:fn` (finite: no infinities, NaN only at the all-ones code, as OCP E4M3), `:sat`
//! (overflow saturates to ±max finite), `:ftz` (subnormals flushed to zero) and `:nonan` (every
//! code a finite number, overflow saturating: OCP FP6/FP4, the MX element types), and the names
//! `bf16`, `f16`, `fp8:e4m3`, `fp8:e5m2`. docs/formats.md ("float:E:M") states every rule.
//!
//! Correct first: every operation decodes its operands to exact dyadic rationals
//! (sign, integer significand, power-of-two exponent), computes the exact result with
//! integers (u128; the exact accumulator in a wide fixed-point integer), and rounds it once
//! with [`FloatFormat::round_with`], the one rounding function (nearest or stochastic,
//! [`crate::rounding`]; the draw is taken once per operation) (normal, subnormal, overflow, `:fn`,
//! `:sat`, `:ftz`). A result that is not dyadic (a quotient, a ratio) is given to it as a
//! dyadic with a sticky bit below every bit the rounding can look at.

mod acc;
mod family;
mod fast_round;
pub mod fdpa;
mod fix;
mod narrow;
mod ops;
#[cfg(test)]
pub(crate) use ops::tables;
mod stochastic;
mod wide_acc;

pub use acc::ExactAcc;
pub use family::FAMILY;
pub use fast_round::ScaledRounder;
pub use narrow::Narrow;
pub use wide_acc::WideAcc;

use std::fmt;

use crate::arith::Bits;
use crate::format::{err, FormatError};
use crate::rounding::Draw;

/// The parameters of a `float:E:M` format (its arithmetic context too: everything derives
/// from them cheaply).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// E: bits of the biased exponent (bias 2^(E−1) − 1).
    pub exp_bits: u32,
    /// M: fraction bits (the significand has M + 1 bits with the hidden one).
    pub frac_bits: u32,
    /// `:fn`: no infinities; NaN only at S.1…1.1…1; the all-ones exponent holds normals.
    pub finite: bool,
    /// `:sat`: overflow gives ±max finite instead of ±∞ (or NaN with `:fn`).
    pub sat: bool,
    /// `:ftz`: subnormal operands are zeros of their sign; subnormal results flush to zero.
    pub ftz: bool,
    /// `:nonan`: no NaN and no infinity code (OCP FP6 E3M2/E2M3, FP4 E2M1): every code is a
    /// finite number, S.1…1.1…1 the largest. Implies `finite` and `sat` (both set with it:
    /// overflow and infinite results give ±max finite); a NaN result (0/0, a NaN f64, ln of a
    /// negative) is +0, as in the fix family, and the family's `nan()` is `None`.
    pub no_nan: bool,
}

/// The format names and what they stand for: (name, E, M, `:fn`). A name prints as itself
/// (its canonical form, followed by `:sat`/`:ftz` where given) and may be followed by the
/// suffixes `:sat`, `:ftz` (and `:fn` where it is not already finite).
pub const NAMED: &[(&str, u32, u32, bool)] = &[
    ("bf16", 8, 7, false),
    ("f16", 5, 10, false),
    ("fp8:e4m3", 4, 3, true),
    ("fp8:e5m2", 5, 2, false),
];

/// `s` with a leading format name replaced by its `float:E:M[:fn]` string (`bf16:ftz` →
/// `float:8:7:ftz`); `None` for other strings. The family's `FamilyEntry::expand_name`.
pub fn expand_name(s: &str) -> Option<String> {
    for &(name, e, m, finite) in NAMED {
        if let Some(rest) = s.strip_prefix(name) {
            if rest.is_empty() || rest.starts_with(':') {
                let fin = if finite { ":fn" } else { "" };
                return Some(format!("float:{e}:{m}{fin}{rest}"));
            }
        }
    }
    None
}

/// An operand's exact value: NaN, ±∞, or ±sig·2^exp (sig = 0: a zero of that sign).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Nan,
    Inf(bool),
    Fin(Dy),
}

/// An exact dyadic rational with a sign: (−1)^neg · sig · 2^exp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dy {
    pub neg: bool,
    pub sig: u128,
    pub exp: i64,
}

impl FloatFormat {
    /// The format `float:E:M` with its suffixes, or the one-line reason it cannot be.
    pub fn new(
        exp_bits: u32,
        frac_bits: u32,
        finite: bool,
        sat: bool,
        ftz: bool,
    ) -> Result<FloatFormat, FormatError> {
        let (e, m) = (exp_bits, frac_bits);
        if e < 2 {
            return err(format!(
                "E = {e}: a float needs 2 <= E <= 11 exponent bits (E = 1 has no normal range \
                 to speak of)"
            ));
        }
        if e > 11 {
            return err(format!(
                "E = {e}: a float has at most 11 exponent bits (binary64's, the most an f64 \
                 holds: to_f64 is exact)"
            ));
        }
        if m < 1 {
            return err(
                "M = 0: a float needs 1 <= M <= 52 fraction bits (M = 0 leaves no code for NaN)",
            );
        }
        if m > 52 {
            return err(format!(
                "M = {m}: a float has at most 52 fraction bits (binary64's: to_f64 is exact)"
            ));
        }
        if 1 + e + m > 64 {
            return err(format!(
                "1 + E + M = {} bits: a float word has at most 64 bits",
                1 + e + m
            ));
        }
        if finite && e == 11 {
            return err(
                "':fn' with E = 11: the all-ones exponent would hold values beyond f64's range \
                 (to_f64 is exact); use E <= 10 with ':fn'",
            );
        }
        Ok(FloatFormat {
            exp_bits,
            frac_bits,
            finite,
            sat,
            ftz,
            no_nan: false,
        })
    }

    /// The format `float:E:M:nonan` (with `:ftz` where given): every code finite, overflow
    /// saturating (OCP FP6 and FP4), or the one-line reason it cannot be.
    pub fn new_no_nan(
        exp_bits: u32,
        frac_bits: u32,
        ftz: bool,
    ) -> Result<FloatFormat, FormatError> {
        let f = FloatFormat::new(exp_bits, frac_bits, true, true, ftz)?;
        Ok(FloatFormat { no_nan: true, ..f })
    }

    /// Bits of one word: 1 + E + M.
    pub fn width(&self) -> u32 {
        1 + self.exp_bits + self.frac_bits
    }

    /// All the word's bits set.
    pub fn mask(&self) -> Bits {
        u64::MAX >> (64 - self.width())
    }

    fn sign_bit(&self) -> Bits {
        1 << (self.exp_bits + self.frac_bits)
    }

    fn exp_ones(&self) -> Bits {
        (1 << self.exp_bits) - 1
    }

    fn frac_mask(&self) -> Bits {
        (1 << self.frac_bits) - 1
    }

    /// The exponent bias, 2^(E−1) − 1.
    pub fn bias(&self) -> i64 {
        (1i64 << (self.exp_bits - 1)) - 1
    }

    /// The smallest normal exponent, 1 − bias.
    pub fn emin(&self) -> i64 {
        1 - self.bias()
    }

    /// The largest finite exponent: bias, or bias + 1 with `:fn` (the all-ones exponent
    /// holds normals).
    pub fn emax(&self) -> i64 {
        self.bias() + i64::from(self.finite)
    }

    /// +0 or −0.
    pub fn zero_of(&self, neg: bool) -> Bits {
        if neg {
            self.sign_bit()
        } else {
            0
        }
    }

    /// ±max finite.
    pub fn max_finite(&self, neg: bool) -> Bits {
        let body = if self.no_nan {
            self.mask() >> 1
        } else if self.finite {
            (self.exp_ones() << self.frac_bits) | (self.frac_mask() - 1)
        } else {
            ((self.exp_ones() - 1) << self.frac_bits) | self.frac_mask()
        };
        self.zero_of(neg) | body
    }

    /// The canonical NaN every operation produces: sign 0, all-ones exponent, the fraction's
    /// top bit only (quiet), or with `:fn` the all-ones word 0.1…1.1…1; with `:nonan`,
    /// which has no NaN code, +0.
    pub fn nan(&self) -> Bits {
        if self.no_nan {
            return 0;
        }
        let frac = if self.finite {
            self.frac_mask()
        } else {
            1 << (self.frac_bits - 1)
        };
        (self.exp_ones() << self.frac_bits) | frac
    }

    /// The word of an exact infinite result (an ∞ operand, x/0, ln 0): ±∞, or with `:fn`
    /// NaN (±max finite with `:fn:sat`).
    pub fn infinite(&self, neg: bool) -> Bits {
        if !self.finite {
            self.zero_of(neg) | (self.exp_ones() << self.frac_bits)
        } else if self.sat {
            self.max_finite(neg)
        } else {
            self.nan()
        }
    }

    /// The word of a finite result too large for the format: ±max finite with `:sat`, else
    /// NaN with `:fn`, else ±∞.
    pub fn overflow(&self, neg: bool) -> Bits {
        if self.sat {
            self.max_finite(neg)
        } else if self.finite {
            self.nan()
        } else {
            self.infinite(neg)
        }
    }

    /// Whether `w` is a nonzero subnormal code.
    pub fn is_subnormal(&self, w: Bits) -> bool {
        (w >> self.frac_bits) & self.exp_ones() == 0 && w & self.frac_mask() != 0
    }

    /// The exact value of a word (with `:ftz`, a subnormal is a zero of its sign).
    pub(crate) fn decode(&self, w: Bits) -> Val {
        let m = self.frac_bits;
        let neg = w & self.sign_bit() != 0;
        let field = (w >> m) & self.exp_ones();
        let frac = w & self.frac_mask();
        if field == self.exp_ones() {
            if !self.finite {
                return if frac == 0 { Val::Inf(neg) } else { Val::Nan };
            }
            if frac == self.frac_mask() && !self.no_nan {
                return Val::Nan;
            }
        }
        let (sig, exp) = if field == 0 {
            (if self.ftz { 0 } else { frac }, self.emin() - i64::from(m))
        } else {
            (frac | 1 << m, field as i64 - self.bias() - i64::from(m))
        };
        Val::Fin(Dy {
            neg,
            sig: u128::from(sig),
            exp,
        })
    }

    /// The word nearest to (−1)^neg · sig · 2^exp, ties to the even significand
    /// ([`Self::round_with`] with [`Draw::Nearest`]).
    pub fn round(&self, neg: bool, sig: u128, exp: i64) -> Bits {
        self.round_with(neg, sig, exp, Draw::Nearest)
    }

    /// (−1)^neg · sig · 2^exp rounded by `draw`: the one rounding of every operation.
    /// Nearest: ties to the even significand. Stochastic: the magnitude is truncated to the
    /// last place, then incremented iff d + r ≥ 2^R, d the top R bits of the discarded part
    /// ([`Draw::steps`]; `sig` must be exact in them: exact, or with a sticky bit 0 and at
    /// least R + 1 bits below the last place). A zero keeps its sign; below the smallest
    /// subnormal it rounds to zero of its sign or (stochastic) up to it; past max finite it
    /// overflows ([`Self::overflow`]). With `:ftz` the value is rounded to M + 1 significant
    /// bits as if the exponent had no lower bound, and a result below 2^emin (the smallest
    /// normal) is zero of its sign.
    pub fn round_with(&self, neg: bool, sig: u128, exp: i64, draw: Draw) -> Bits {
        if sig == 0 {
            return self.zero_of(neg);
        }
        let m = i64::from(self.frac_bits);
        let msb = 127 - i64::from(sig.leading_zeros());
        // The value lies in [2^top, 2^(top+1)).
        let top = exp + msb;
        if top > self.emax() {
            return self.overflow(neg);
        }
        // The exponent of the result's last significand bit.
        let lsb = if self.ftz {
            top - m
        } else {
            (top - m).max(self.emin() - m)
        };
        let s = lsb - exp;
        let mut q = if s <= 0 {
            // Exact: q < 2^(M+1) since lsb >= top − M.
            sig << (-s)
        } else if let Draw::Stochastic { bits, r } = draw {
            // Truncated, then one up iff d + r >= 2^R.
            let q = if s >= 128 { 0 } else { sig >> s };
            let rem = if s >= 128 {
                sig
            } else {
                sig & ((1u128 << s) - 1)
            };
            q + u128::from(Draw::steps(bits, r, rem, s as u64))
        } else if s > 128 {
            // Below half a unit of the last place (sig < 2^128 <= 2^(s−1)).
            0
        } else {
            let q = if s == 128 { 0 } else { sig >> s };
            let rem = if s == 128 {
                sig
            } else {
                sig & ((1u128 << s) - 1)
            };
            let half = 1u128 << (s - 1);
            q + u128::from(rem > half || (rem == half && q & 1 == 1))
        };
        let mut lsb = lsb;
        if q == 0 {
            return self.zero_of(neg);
        }
        if q >> (m + 1) != 0 {
            // Rounded up to the next binade.
            q >>= 1;
            lsb += 1;
        }
        let q = q as Bits;
        if q >> m == 0 {
            // Subnormal (only without :ftz, at lsb = emin − M).
            return self.zero_of(neg) | q;
        }
        let e = lsb + m;
        if e < self.emin() {
            // :ftz, tiny after rounding.
            return self.zero_of(neg);
        }
        let frac = q & self.frac_mask();
        // (With `:nonan` the all-ones code "overflows" to ±max, which is that same code.)
        if e > self.emax() || (self.finite && e == self.emax() && frac == self.frac_mask()) {
            return self.overflow(neg);
        }
        self.zero_of(neg) | (((e + self.bias()) as Bits) << self.frac_bits) | frac
    }

    /// [`Self::round_with`] of an exact dyadic.
    pub(crate) fn round_dy(&self, d: Dy, draw: Draw) -> Bits {
        self.round_with(d.neg, d.sig, d.exp, draw)
    }

    /// The word a result `w` stands for: with `:ftz`, a subnormal becomes zero of its sign.
    pub(crate) fn canon(&self, w: Bits) -> Bits {
        if self.ftz && self.is_subnormal(w) {
            w & self.sign_bit()
        } else {
            w
        }
    }
}

impl fmt::Display for FloatFormat {
    /// A named format prints as its name (`bf16`, `fp8:e4m3`), others as `float:E:M` with
    /// `:fn`; then `:sat` and `:ftz` where set. `:nonan` (which implies `:fn:sat`) prints as
    /// `float:E:M:nonan`, then `:ftz`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (e, m) = (self.exp_bits, self.frac_bits);
        if self.no_nan {
            write!(f, "float:{e}:{m}:nonan")?;
            if self.ftz {
                f.write_str(":ftz")?;
            }
            return Ok(());
        }
        match NAMED
            .iter()
            .find(|n| (n.1, n.2, n.3) == (e, m, self.finite))
        {
            Some(n) => f.write_str(n.0)?,
            None => {
                write!(f, "float:{e}:{m}")?;
                if self.finite {
                    f.write_str(":fn")?;
                }
            }
        }
        if self.sat {
            f.write_str(":sat")?;
        }
        if self.ftz {
            f.write_str(":ftz")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
