//! Rounding modes of the float and fix families: `nearest` (each family's own rule) and
//! `stochastic:R` (issue 32), whose random bits come from a seeded generator that is part of
//! the contract: the RTL reproduces its stream bit for bit. docs/formats.md ("Stochastic
//! rounding") states the contract in prose; docs/decisions.md says why this generator.
//!
//! The rule: a result that is not a word lies between two neighbouring words; keep the one
//! nearer zero (float: the smaller magnitude) or below (fix: the floor of the two's
//! complement value), and let d be the top R bits of the discarded part (the part below the
//! kept last place, as an R-bit integer; lower bits are ignored). Draw an R-bit r; step to
//! the other neighbour iff d + r ≥ 2^R. So the probability of stepping is d / 2^R, and an
//! exact result (d = 0) never moves.
//!
//! The generator is xorshift32 (Marsaglia 2003, shifts 13, 17, 5; period 2^32 − 1 over the
//! nonzero states): one step per rounded result, r = the top R bits of the new state.

use std::fmt;
use std::str::FromStr;

use crate::arith::{BinOp, Bits};
use crate::exact::Ratio;
use crate::family::{families_with, with_calc, Calc, Family};
use crate::format::{err, FormatError};
use crate::rng::Rng;

/// The most random bits a stochastic rounding compares: one xorshift32 step gives 32, so
/// every rounded result takes exactly one step of the generator.
pub const MAX_RANDOM_BITS: u32 = 32;

/// How results are rounded: `nearest` or `stochastic:R` (R random bits, 1 ≤ R ≤ 32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// The family's rounding to nearest (ties to even).
    Nearest,
    /// Stochastic rounding with R random bits.
    Stochastic(u32),
}

impl FromStr for Rounding {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Rounding, FormatError> {
        if s == "nearest" {
            return Ok(Rounding::Nearest);
        }
        let Some(r) = s.strip_prefix("stochastic:") else {
            return err(format!(
                "unknown rounding {s:?}: expected nearest or stochastic:R (R random bits, \
                 1 <= R <= {MAX_RANDOM_BITS})"
            ));
        };
        match r.parse::<u32>() {
            Ok(r) if (1..=MAX_RANDOM_BITS).contains(&r) => Ok(Rounding::Stochastic(r)),
            _ => err(format!(
                "rounding {s:?}: R must be a whole number of random bits from 1 to \
                 {MAX_RANDOM_BITS} (one xorshift32 step per rounded result gives 32)"
            )),
        }
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rounding::Nearest => f.write_str("nearest"),
            Rounding::Stochastic(r) => write!(f, "stochastic:{r}"),
        }
    }
}

/// xorshift32 (Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14), 2003, the triple
/// 13, 17, 5): the stochastic rounding's generator. Its state is never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xorshift32 {
    state: u32,
}

impl Xorshift32 {
    /// The initial state of a seed: the high 32 bits of SplitMix64's first output from state
    /// `seed` ([`Rng`]), or 1 where those are zero. The RTL takes this state as a constant.
    pub fn from_seed(seed: u64) -> Xorshift32 {
        let hi = (Rng(seed).next_u64() >> 32) as u32;
        Xorshift32 {
            state: if hi == 0 { 1 } else { hi },
        }
    }

    /// A generator at a given state (nonzero, or `None`).
    pub fn at(state: u32) -> Option<Xorshift32> {
        (state != 0).then_some(Xorshift32 { state })
    }

    /// The current state.
    pub fn state(&self) -> u32 {
        self.state
    }

    /// One step: x ^= x << 13; x ^= x >> 17; x ^= x << 5. Returns the new state.
    #[inline]
    pub fn step(&mut self) -> u32 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state = x;
        x
    }
}

/// What one rounded result is rounded with: nearest, or R random bits r.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    Nearest,
    Stochastic { bits: u32, r: u32 },
}

impl Draw {
    /// Stochastic rounding's decision for a discarded part `disc` of `s` bits (0 ≤ disc <
    /// 2^s, s ≥ 1; s may exceed 128, the bits above disc's being zeros): d = its top `bits`
    /// bits (zeros appended where s < bits), and the kept value moves iff d + r ≥ 2^bits.
    /// The caller's disc must be exact in those bits: an exact value, or one whose bit 0 is
    /// a sticky bit (set iff a nonzero part was cut off below) with s > bits.
    #[inline]
    pub fn steps(bits: u32, r: u32, disc: u128, s: u64) -> bool {
        let b = u64::from(bits);
        let d = if s >= b {
            let sh = s - b;
            if sh >= 128 {
                0
            } else {
                (disc >> sh) as u64
            }
        } else {
            (disc as u64) << (b - s)
        };
        d + u64::from(r) >= 1u64 << bits
    }
}

/// A rounding with its generator: one [`Draw`] per rounded result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounder {
    rounding: Rounding,
    gen: Xorshift32,
}

impl Rounder {
    /// `rounding`, its generator started from `seed` (unused by `nearest`).
    pub fn new(rounding: Rounding, seed: u64) -> Rounder {
        Rounder {
            rounding,
            gen: Xorshift32::from_seed(seed),
        }
    }

    /// `rounding` with its generator at `gen` (a stream that goes on from a saved state, or
    /// one position of a stream handed out ahead: the training's products and lanes).
    pub fn with_generator(rounding: Rounding, gen: Xorshift32) -> Rounder {
        Rounder { rounding, gen }
    }

    /// Rounding to nearest (takes no random bits).
    pub fn nearest() -> Rounder {
        Rounder::new(Rounding::Nearest, 0)
    }

    pub fn rounding(&self) -> Rounding {
        self.rounding
    }

    /// The generator (its state is where the stream goes on).
    pub fn generator(&self) -> Xorshift32 {
        self.gen
    }

    /// The draw of the next rounded result: nearest takes none; `stochastic:R` steps the
    /// generator once and takes the top R bits of the new state.
    #[inline]
    pub fn draw(&mut self) -> Draw {
        match self.rounding {
            Rounding::Nearest => Draw::Nearest,
            Rounding::Stochastic(bits) => Draw::Stochastic {
                bits,
                r: self.gen.step() >> (32 - bits),
            },
        }
    }
}

/// The operations of a family that defines stochastic rounding, each rounded by a
/// [`Rounder`] (a `nearest` rounder gives the family's usual results). Operations that never
/// round (max, min; fix add and sub, exact but for saturation) take no draw.
#[allow(clippy::wrong_self_convention)]
pub trait RoundedOps {
    /// The word of `x` (a conversion: one draw).
    fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Bits;
    /// The word of an exact ratio (a conversion: one draw).
    fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Bits;
    /// a op b (one draw where the operation rounds).
    fn binop_with(&self, op: BinOp, a: Bits, b: Bits, r: &mut Rounder) -> Bits;
    /// √a (one draw, whatever the operand).
    fn sqrt_with(&self, a: Bits, r: &mut Rounder) -> Bits;
    /// Σ a_k·b_k in the exact accumulator (sum mode `quire`), read out once (one draw).
    fn dot_exact_with(&self, a: &[Bits], b: &[Bits], r: &mut Rounder) -> Bits;
}

impl Calc {
    /// The operations of this format under `r`: `None` for nearest (the format's own
    /// operations), refused in one line where the family defines no stochastic rounding.
    fn rounded_ops(&self, r: &Rounder) -> Result<Option<&dyn RoundedOps>, FormatError> {
        if r.rounding() == Rounding::Nearest {
            return Ok(None);
        }
        match with_calc!(self, c => Family::rounded(c)) {
            Some(ops) => Ok(Some(ops)),
            None => err(format!(
                "rounding {}: stochastic rounding is not defined for {} (it is for {} formats)",
                r.rounding(),
                self.format(),
                families_with(|e| e.stochastic)
            )),
        }
    }

    /// Whether this format rounds by `rounding` (every format rounds to nearest), or the
    /// one-line refusal.
    pub fn check_rounding(&self, rounding: Rounding) -> Result<(), FormatError> {
        self.rounded_ops(&Rounder::new(rounding, 0)).map(|_| ())
    }

    /// The word of `x` rounded by `r` (the family's `from_f64` for nearest).
    pub fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Result<Bits, FormatError> {
        Ok(match self.rounded_ops(r)? {
            Some(ops) => ops.from_f64_with(x, r),
            None => self.from_f64(x),
        })
    }

    /// The word of an exact ratio rounded by `r` (the family's `from_ratio` for nearest).
    pub fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Result<Bits, FormatError> {
        Ok(match self.rounded_ops(r)? {
            Some(ops) => ops.from_ratio_with(x, r),
            None => self.from_ratio(x),
        })
    }

    /// a op b rounded by `r` (the family's operation for nearest).
    pub fn binop_with(
        &self,
        op: BinOp,
        a: Bits,
        b: Bits,
        r: &mut Rounder,
    ) -> Result<Bits, FormatError> {
        Ok(match self.rounded_ops(r)? {
            Some(ops) => ops.binop_with(op, a, b, r),
            None => self.binop(op, a, b),
        })
    }

    /// √a rounded by `r` (the family's `sqrt` for nearest).
    pub fn sqrt_with(&self, a: Bits, r: &mut Rounder) -> Result<Bits, FormatError> {
        Ok(match self.rounded_ops(r)? {
            Some(ops) => ops.sqrt_with(a, r),
            None => self.sqrt(a),
        })
    }

    /// Σ a_k·b_k accumulated exactly (sum mode `quire`) and read out once, rounded by `r`
    /// (the family's exact dot product for nearest).
    pub fn dot_exact_with(
        &self,
        a: &[Bits],
        b: &[Bits],
        r: &mut Rounder,
    ) -> Result<Bits, FormatError> {
        match self.rounded_ops(r)? {
            Some(ops) => Ok(ops.dot_exact_with(a, b, r)),
            None => self.dot(crate::SumMode::Quire, a, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundings_parse_and_print_and_bad_ones_are_refused_in_one_line() {
        assert_eq!("nearest".parse::<Rounding>().unwrap(), Rounding::Nearest);
        for r in [1, 8, 32] {
            let s = format!("stochastic:{r}");
            assert_eq!(s.parse::<Rounding>().unwrap(), Rounding::Stochastic(r));
            assert_eq!(Rounding::Stochastic(r).to_string(), s);
        }
        for bad in [
            "stochastic:0",
            "stochastic:33",
            "stochastic:99",
            "stochastic:x",
            "stochastic:",
            "stochastic",
            "foo",
            "Nearest",
        ] {
            let e = bad.parse::<Rounding>().unwrap_err().0;
            assert!(!e.contains('\n') && e.contains(bad), "{bad}: {e}");
        }
    }

    /// The registry's flag and the family's operations agree, for a format of every family;
    /// families without stochastic rounding refuse it in one line naming those with it.
    #[test]
    fn every_family_says_whether_it_rounds_stochastically() {
        let sr = Rounding::Stochastic(8);
        for s in crate::FAMILIES.iter().map(|e| e.example).chain(["bf16"]) {
            let f: crate::Format = s.parse().unwrap();
            let c = f.calc();
            let has = with_calc!(&c, x => Family::rounded(x)).is_some();
            assert_eq!(has, f.entry().stochastic, "{s}");
            assert!(c.check_rounding(Rounding::Nearest).is_ok());
            match c.check_rounding(sr) {
                Ok(()) => assert!(has, "{s}"),
                Err(e) => {
                    assert!(!has && !e.0.contains('\n'), "{s}: {e}");
                    assert!(e.0.contains("fix or float formats"), "{s}: {e}");
                }
            }
        }
    }

    /// The decision by hand: d from the top bits, zeros appended, far bits ignored.
    #[test]
    fn steps_compares_the_top_bits_of_the_discarded_part() {
        // s = 4, disc = 0b1011, R = 2: d = 0b10 = 2; steps iff r >= 2.
        assert!(!Draw::steps(2, 1, 0b1011, 4));
        assert!(Draw::steps(2, 2, 0b1011, 4));
        // s = 2, disc = 0b01, R = 4: d = 0b0100 = 4; steps iff r >= 12.
        assert!(!Draw::steps(4, 11, 0b01, 2));
        assert!(Draw::steps(4, 12, 0b01, 2));
        // s = 200: every bit of disc lies below the top R.
        assert!(!Draw::steps(32, u32::MAX, u128::MAX, 200));
        // Exact: never.
        assert!(!Draw::steps(32, u32::MAX, 0, 40));
    }
}
