//! Posits, runtime-parametric: `posit:N` (Posit Standard 2022, es = 2), `posit:N:ES` (2017
//! draft) and the `:u` variant that underflows to zero (seed 004 §4.5).
//!
//! Rounding is round-to-nearest-even on the bit string: the value is written as an
//! infinitely long posit and cut to N bits. A result never rounds to zero or NaR: it
//! saturates at ±maxpos and ±minpos, except that the `:u` variant treats 0 as one more
//! rounding target, so values at or below minpos / 2^(2^es) (the bit-string midpoint) become 0.
//!
//! Inside, a nonzero posit is (sign, scale, sig) with value ±sig·2^(scale-62): `sig` holds
//! the hidden bit at bit 62 and the fraction below it.

mod family;
mod lanes;
mod ops;
pub use family::FAMILY;
mod quire;
pub(crate) mod table;

use std::fmt;

use num_bigint::BigUint;

pub use lanes::PositF64;
pub use quire::Quire;

use crate::format::{err, FormatError};

/// Which posit standard fixes es and the quire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PositStandard {
    /// 2017 draft: any es; quire of N²/2 bits for the recommended es, carry guard N-1.
    Draft2017,
    /// Posit Standard 2022: es = 2; quire of 16·N bits, carry guard 31.
    Std2022,
}

/// Parameters of a posit format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PositFormat {
    pub n: u32,
    pub es: u32,
    pub standard: PositStandard,
    /// The `:u` variant: rounds to zero below the minpos midpoint instead of saturating.
    pub underflow: bool,
}

/// Largest es accepted: with es <= 5 every posit of up to 32 bits is an exact f64.
pub const MAX_ES: u32 = 5;

pub(crate) use crate::tapered::HIDDEN;
use crate::tapered::{self, Tapered};

/// Evaluates `$body` with `$f` bound to `$fmt`, where for the most used formats `$f`'s fields
/// are compile-time constants: the same code, inlined per format, with every shift and mask
/// folded. Other formats run the same code with runtime parameters.
macro_rules! with_const_format {
    ($fmt:expr, |$f:ident| $body:expr) => {{
        let fmt: PositFormat = $fmt;
        match (fmt.n, fmt.es, fmt.underflow) {
            (8, 0, false) => {
                let $f = PositFormat {
                    n: 8,
                    es: 0,
                    underflow: false,
                    ..fmt
                };
                $body
            }
            (16, 1, false) => {
                let $f = PositFormat {
                    n: 16,
                    es: 1,
                    underflow: false,
                    ..fmt
                };
                $body
            }
            (32, 2, false) => {
                let $f = PositFormat {
                    n: 32,
                    es: 2,
                    underflow: false,
                    ..fmt
                };
                $body
            }
            (8, 2, false) => {
                let $f = PositFormat {
                    n: 8,
                    es: 2,
                    underflow: false,
                    ..fmt
                };
                $body
            }
            (16, 2, false) => {
                let $f = PositFormat {
                    n: 16,
                    es: 2,
                    underflow: false,
                    ..fmt
                };
                $body
            }
            _ => {
                let $f = fmt;
                $body
            }
        }
    }};
}
pub(crate) use with_const_format;

impl fmt::Display for PositFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.standard {
            PositStandard::Std2022 => write!(f, "posit:{}", self.n)?,
            PositStandard::Draft2017 => write!(f, "posit:{}:{}", self.n, self.es)?,
        }
        if self.underflow {
            f.write_str(":u")?;
        }
        Ok(())
    }
}

/// A decoded posit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    Zero,
    NaR,
    /// ±sig·2^(scale-62), hidden bit of `sig` at bit 62.
    Num {
        neg: bool,
        scale: i32,
        sig: u64,
    },
}

impl PositFormat {
    pub fn new(
        n: u32,
        es: u32,
        standard: PositStandard,
        underflow: bool,
    ) -> Result<Self, FormatError> {
        let name = match standard {
            PositStandard::Std2022 => format!("posit:{n}"),
            PositStandard::Draft2017 => format!("posit:{n}:{es}"),
        };
        if !(3..=32).contains(&n) {
            return err(format!(
                "format {name:?}: posit width must be 3..=32 bits (e.g. posit:16:1)"
            ));
        }
        if standard == PositStandard::Draft2017 && (es > MAX_ES || es + 3 > n) {
            return err(format!(
                "format {name:?}: es = {es} is too large; posit:N:ES needs ES <= min({MAX_ES}, N-3) (e.g. posit:{n}:{})",
                (n - 3).min(MAX_ES).min(2)
            ));
        }
        Ok(PositFormat {
            n,
            es,
            standard,
            underflow,
        })
    }

    /// The posit of the 2017 draft `posit(n, es)`.
    pub fn draft(n: u32, es: u32) -> Self {
        Self::new(n, es, PositStandard::Draft2017, false).expect("valid posit format")
    }

    /// The posit of the 2022 standard `posit(n, 2)`.
    pub fn std2022(n: u32) -> Self {
        Self::new(n, 2, PositStandard::Std2022, false).expect("valid posit format")
    }

    #[inline(always)]
    pub fn mask(&self) -> u64 {
        (1u64 << self.n) - 1
    }

    #[inline(always)]
    pub fn nar(&self) -> u64 {
        1u64 << (self.n - 1)
    }

    pub fn maxpos(&self) -> u64 {
        (1u64 << (self.n - 1)) - 1
    }

    pub fn minpos(&self) -> u64 {
        1
    }

    pub fn is_word(&self, bits: u64) -> bool {
        bits >> self.n == 0
    }

    /// Scale of maxpos: (N-2)·2^es.
    pub fn max_scale(&self) -> i32 {
        ((self.n - 2) << self.es) as i32
    }

    /// Carry-guard bits of the quire.
    pub fn quire_carry_bits(&self) -> u32 {
        match self.standard {
            PositStandard::Draft2017 => self.n - 1,
            PositStandard::Std2022 => 31,
        }
    }

    /// Fraction bits of the quire: enough for minpos², 2·(N-2)·2^es.
    pub fn quire_frac_bits(&self) -> u32 {
        2 * self.max_scale() as u32
    }

    /// Total quire bits: sign + carry guard + integer + fraction, where the integer and
    /// fraction fields have 2·(N-2)·2^es bits each. This is N²/2 for the 2017 draft's
    /// recommended (N, es) and 16·N for the 2022 standard.
    pub fn quire_bits(&self) -> u32 {
        1 + self.quire_carry_bits() + 2 * self.quire_frac_bits()
    }

    /// Splits a nonzero, non-NaR posit into (sign, scale, sig).
    #[inline(always)]
    pub fn unpack(self, p: u64) -> (bool, i32, u64) {
        let n = self.n;
        // Left-align, take the two's-complement magnitude without a branch.
        let left = p << (64 - n);
        let sign = ((left as i64) >> 63) as u64;
        let mag = (left ^ sign).wrapping_sub(sign);
        // Regime's first bit at bit 63; n-1 meaningful bits, zeros below.
        let x = mag << 1;
        let inv = ((x as i64) >> 63) as u64;
        let run = (x ^ inv).leading_zeros();
        // k = run - 1 for a run of ones, -run for a run of zeros.
        let k = (run as i32 - 1) ^ !(inv as i32);
        let rest = x << (run + 1);
        let es = self.es;
        // The top es bits of rest; es = 0 gives 0 without a branch (bit 63 of rest >> 1 is 0).
        let e = ((rest >> 1) >> (63 - es)) as i32;
        let sig = (1u64 << HIDDEN) | ((rest << es) >> 2);
        (sign != 0, (k << es) + e, sig)
    }

    pub fn decode(&self, p: u64) -> Decoded {
        if p == 0 {
            Decoded::Zero
        } else if p == self.nar() {
            Decoded::NaR
        } else {
            let (neg, scale, sig) = self.unpack(p);
            Decoded::Num { neg, scale, sig }
        }
    }

    /// Rounds ±(sig + sticky)·2^(scale-62) to a posit. `sig` must have bit 62 set; `sticky`
    /// says that nonzero bits were lost below `sig`.
    #[inline(always)]
    pub fn encode(self, neg: bool, scale: i32, sig: u64, sticky: bool) -> u64 {
        debug_assert!(sig >> HIDDEN == 1);
        let n = self.n as i32;
        let es = self.es;
        let k = scale >> es;
        let u = if k >= n - 2 {
            self.maxpos()
        } else if k < -(n - 2) {
            // Below minpos. The bit-string midpoint between 0 and minpos has k = -(n-1), zero
            // exponent and fraction: the :u variant rounds to zero at or below it.
            let above_midpoint =
                k == -(n - 1) && (scale & ((1 << es) - 1) != 0 || sig != 1 << HIDDEN || sticky);
            if self.underflow && !above_midpoint {
                0
            } else {
                1
            }
        } else {
            // Regime, left-aligned: k+1 ones and a zero (k >= 0) or -k zeros and a one.
            let kp = k >= 0;
            let rlen = if kp { k + 2 } else { 1 - k } as u32;
            let reg = if kp {
                !0u64 << (63 - k.max(0))
            } else {
                1u64 << (63 + k.min(0))
            };
            let e = (scale & ((1 << es) - 1)) as u64;
            let frac = sig & ((1u64 << HIDDEN) - 1);
            let sh = rlen + es; // >= 2
                                // The bit string after the sign, left-aligned at bit 63.
            let body = reg | ((e << 1) << (63 - sh)) | (frac >> (sh - 2));
            let mut st = sticky | (frac & ((1u64 << (sh - 2)) - 1) != 0);
            let keep = n as u32 - 1;
            let u = body >> (64 - keep);
            let rem = body << keep;
            let guard = rem >> 63;
            st |= rem << 1 != 0;
            u + (guard & (st as u64 | (u & 1)))
        };
        let s = (neg as u64).wrapping_neg();
        ((u ^ s).wrapping_sub(s)) & self.mask()
    }

    /// The posit nearest to an exact ratio (bit-string rounding).
    pub fn from_ratio(&self, neg: bool, num: &BigUint, den: &BigUint) -> u64 {
        tapered::from_ratio(*self, neg, num, den)
    }
}

impl Tapered for PositFormat {
    #[inline(always)]
    fn n(self) -> u32 {
        self.n
    }
    #[inline(always)]
    fn unpack(self, p: u64) -> (bool, i32, u64) {
        PositFormat::unpack(self, p)
    }
    #[inline(always)]
    fn encode(self, neg: bool, scale: i32, sig: u64, sticky: bool) -> u64 {
        PositFormat::encode(self, neg, scale, sig, sticky)
    }
    fn quire_bits(self) -> u32 {
        PositFormat::quire_bits(&self)
    }
    fn quire_frac_bits(self) -> u32 {
        PositFormat::quire_frac_bits(&self)
    }
    /// Inlined per common format.
    #[inline(always)]
    fn product(self, a: u64, b: u64) -> (bool, u64, i32) {
        with_const_format!(self, |f| {
            let (sa, ea, ma) = f.unpack(a);
            let (sb, eb, mb) = f.unpack(b);
            (sa ^ sb, (ma >> 31) * (mb >> 31), ea + eb)
        })
    }
}
