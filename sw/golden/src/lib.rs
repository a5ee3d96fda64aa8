//! lpgen's golden model: bit-exact, runtime-parametric arithmetic for LNS, posits and their
//! quires, fixed point and f32, with naive, Kahan, pairwise and fused summation.
//!
//! Everything the RTL generator, the co-simulation and the training driver need to agree on
//! (format parameters, rounding, G tables) is defined here, once. `docs/formats.md` states the
//! rules in prose; the code and its tests are the definition.
//!
//! ```
//! use lpgen_golden::Format;
//! let f: Format = "lns:5:6".parse().unwrap();
//! let c = f.calc();
//! let sum = c.add(c.from_f64(98.0), c.from_f64(2.0));
//! assert_eq!(c.value_string(sum), "99.77628161522156"); // seed 000: 98 + 2 ≈ 99.78
//! ```

pub mod alu;
pub mod arith;
pub mod dfix;
pub mod exact;
pub mod fixed;
pub mod format;
pub mod hiprec;
pub mod lns;
pub mod onebit;
pub mod posit;
pub mod q8;
pub mod sum;

pub use alu::{Alu, AluIn, AluOp, AluOut, ALU_OP_BITS};
pub use arith::{Arith, BinOp, Bits, Calc, F32};
pub use fixed::{FixAcc, FixFormat};
pub use format::{Format, FormatError};
pub use lns::{GTables, Lns, LnsFormat, Split};
pub use posit::{PositFormat, PositStandard, Quire};
pub use q8::Q8Type;
pub use sum::Kahan;

/// How a sum or dot product accumulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumMode {
    Naive,
    Kahan,
    Pairwise,
    /// Exact accumulation rounded once: the quire for posits, the wide accumulator for fix.
    Quire,
}

impl std::str::FromStr for SumMode {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Self, FormatError> {
        Ok(match s {
            "naive" => SumMode::Naive,
            "kahan" => SumMode::Kahan,
            "pairwise" => SumMode::Pairwise,
            "quire" => SumMode::Quire,
            _ => {
                return Err(FormatError(format!(
                    "unknown mode {s:?}: expected naive, kahan, pairwise or quire"
                )))
            }
        })
    }
}

/// `body` with `$arith` bound to the format's own arithmetic (not the word-level `Calc`), so
/// that a loop over many operations dispatches once and runs in the format's working form
/// (LNS: split sign and log, without packing each intermediate into a word).
macro_rules! on_arith {
    ($calc:expr, $arith:ident => $body:expr) => {
        match $calc {
            Calc::Lns($arith) => $body,
            Calc::Posit($arith) => $body,
            Calc::Fix($arith) => $body,
            Calc::F32 => {
                let $arith = &F32;
                $body
            }
        }
    };
}

impl Calc {
    /// Σ x_k in the given mode.
    pub fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        match mode {
            SumMode::Naive => Ok(on_arith!(self, a => sum::naive_sum(a, xs))),
            SumMode::Kahan => Ok(on_arith!(self, a => sum::kahan_sum(a, xs))),
            SumMode::Pairwise => Ok(on_arith!(self, a => sum::pairwise_sum(a, xs))),
            SumMode::Quire => match self {
                Calc::Fix(x) => Ok(x.sum_acc(xs)),
                _ => self.dot(SumMode::Quire, xs, &vec![self.one(); xs.len()]),
            },
        }
    }

    /// Σ a_k·b_k in the given mode.
    pub fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        Ok(match mode {
            SumMode::Naive => match self {
                Calc::Posit(p) => match posit::table::tables(*p) {
                    Some(t) => t.naive_dot(p.n, a, b),
                    None => sum::naive_dot(p, a, b),
                },
                _ => on_arith!(self, f => sum::naive_dot(f, a, b)),
            },
            SumMode::Kahan => on_arith!(self, f => sum::kahan_dot(f, a, b)),
            SumMode::Pairwise => on_arith!(self, f => sum::pairwise_dot(f, a, b)),
            SumMode::Quire => match self {
                Calc::Posit(p) => p.dot_quire(a, b),
                Calc::Fix(x) => x.dot_acc(a, b),
                _ => {
                    return Err(FormatError(format!(
                        "mode 'quire' needs a posit or fix format, not {} (use kahan or pairwise)",
                        self.format()
                    )))
                }
            },
        })
    }
}

/// The unit tests' source of pseudo-random words: xorshift64 (Marsaglia) from `seed`
/// (nonzero), so that every test's inputs are reproducible from its seed.
#[cfg(test)]
pub(crate) fn test_words(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
