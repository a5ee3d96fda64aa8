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

pub mod accumulator;
pub mod alu;
pub mod arith;
pub mod binary32;
pub mod dfix;
pub mod exact;
pub mod family;
pub mod family_trait;
pub mod fixed;
pub mod float;
pub mod format;
pub mod hiprec;
pub mod kernel;
pub mod lns;
pub mod mx;
pub mod onebit;
pub mod posit;
pub mod q8;
pub mod rng;
pub mod rounding;
pub mod scale;
pub mod sum;
mod table;
pub mod takum;
pub mod tapered;

pub use alu::{Alu, AluIn, AluOp, AluOut, ALU_OP_BITS};
pub use arith::{Arith, BinOp, Bits};
pub use binary32::F32;
pub use dfix::{DfixCalc, DfixFormat};
pub use family::{Calc, Family, FamilyEntry, FamilyFormat, PeInfo, FAMILIES};
pub use fixed::{FixAcc, FixFormat};
pub use float::FloatFormat;
pub use format::{Format, FormatError};
pub use lns::{GTables, Lns, LnsFormat, Split};
pub use mx::MxFormat;
pub use posit::{PositFormat, PositStandard, Quire};
pub use q8::Q8Type;
pub use rounding::{Rounder, Rounding};
pub use sum::{Kahan, Running};
pub use takum::TakumFormat;

/// How a sum or dot product accumulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SumMode {
    Naive,
    Kahan,
    Pairwise,
    /// Exact accumulation rounded once: the quire for posits, the wide accumulator for fix.
    Quire,
    /// A GPU matrix unit's fused dot-product-add (`fdpa:…`, float formats only): chunks of
    /// products aligned, truncated and summed into a binary32 (or binary16) word, which
    /// `dot` rounds into the operand format ([`float::fdpa`]; [`Calc::fdpa`] gives the
    /// word itself).
    Fdpa(float::fdpa::Fdpa),
}

impl SumMode {
    pub const ALL: [SumMode; 4] = [
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
    ];

    /// As `--mode` names it (the kind: `fdpa` for every fdpa mode; `Display` prints the
    /// whole mode).
    pub fn name(self) -> &'static str {
        match self {
            SumMode::Naive => "naive",
            SumMode::Kahan => "kahan",
            SumMode::Pairwise => "pairwise",
            SumMode::Quire => "quire",
            SumMode::Fdpa(_) => "fdpa",
        }
    }

    /// Whether two modes are of one kind (every fdpa mode is of one kind: a family's entry
    /// lists one of them).
    pub fn same_kind(self, other: SumMode) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

impl std::fmt::Display for SumMode {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SumMode::Fdpa(m) => std::fmt::Display::fmt(m, out),
            SumMode::Naive | SumMode::Kahan | SumMode::Pairwise | SumMode::Quire => {
                out.write_str(self.name())
            }
        }
    }
}

impl std::str::FromStr for SumMode {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Self, FormatError> {
        if s == "fdpa" || s.starts_with("fdpa:") {
            return float::fdpa::Fdpa::parse(s).map(SumMode::Fdpa);
        }
        SumMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                FormatError(format!(
                    "unknown mode {s:?}: expected naive, kahan, pairwise, quire or {}",
                    float::fdpa::SYNTAX
                ))
            })
    }
}

impl Calc {
    /// Σ x_k in the given mode (the family's; a mode it does not offer is refused).
    pub fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        family::with_calc!(self, c => Family::sum(c, mode, xs))
    }

    /// Σ a_k·b_k in the given mode, k = 0..K−1 in order.
    pub fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        family::with_calc!(self, c => Family::dot(c, mode, a, b))
    }

    /// D = Σ a_k·b_k + C in an fdpa mode, as its output word (binary32, or binary16 for
    /// `rne-f16`: the format returned beside it; C is a word of that format). Families
    /// other than float refuse it.
    pub fn fdpa(
        &self,
        mode: float::fdpa::Fdpa,
        a: &[Bits],
        b: &[Bits],
        c: Bits,
    ) -> Result<(Bits, FloatFormat), FormatError> {
        family::with_calc!(self, x => Family::fdpa(x, mode, a, b, c))
    }

    /// [`Calc::dot`] of every row of `rows` with every column of `bs`, row-major (the
    /// matrix kernels' outputs).
    pub fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        family::with_calc!(self, c => Family::dots(c, mode, rows, bs))
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
