//! What a number family implements, below the registry: the [`Family`] trait (its scalar
//! arithmetic, accumulations and conversions), [`FamilyFormat`] (width, arithmetic context,
//! parsing), its [`FamilyEntry`] and the helpers the families share. A family module imports
//! this module, never the registry (`crate::family`), which imports the families and makes
//! the [`crate::Format`] and [`crate::Calc`] enums from them. The two messages that list every
//! family (`syntaxes`, `families_with`) are the registry's: they are the one name this module
//! takes from above.

use std::cmp::Ordering;
use std::fmt;

use crate::arith::{BinOp, Bits};
use crate::exact::Ratio;
use crate::format::{err, FormatError};
use crate::sum::Running;
use crate::{AluOp, SumMode};

/// The golden arithmetic of one family, on words in the low bits of a [`Bits`]. Every
/// operation rounds once, by the family's rule (docs/formats.md). `from_*` take `self`: the
/// arithmetic context holds the format's parameters (and tables).
#[allow(clippy::wrong_self_convention)]
pub trait Family: Copy + fmt::Debug + Send + Sync {
    /// The family's format type.
    type Format: FamilyFormat;
    /// The format this arithmetic computes in (`.into()` gives the [`crate::Format`]).
    fn format(&self) -> Self::Format;
    fn add(&self, a: Bits, b: Bits) -> Bits;
    fn sub(&self, a: Bits, b: Bits) -> Bits;
    fn mul(&self, a: Bits, b: Bits) -> Bits;
    fn div(&self, a: Bits, b: Bits) -> Bits;
    fn neg(&self, a: Bits) -> Bits;
    fn abs(&self, a: Bits) -> Bits;
    /// Numeric order; `None` when unordered (NaN).
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering>;
    fn max(&self, a: Bits, b: Bits) -> Bits;
    fn min(&self, a: Bits, b: Bits) -> Bits;
    fn is_nan(&self, a: Bits) -> bool;
    /// The NaN word (`nan` on the command line, the lanes' NaN flag), if the family has one.
    fn nan(&self) -> Option<Bits>;
    /// How a NaN word prints.
    fn nan_name(&self) -> &'static str {
        "NaN"
    }
    fn one(&self) -> Bits;
    fn zero(&self) -> Bits;
    /// The word nearest to `x` by the family's rounding.
    fn from_f64(&self, x: f64) -> Bits;
    /// The value of a word (exact, or correctly rounded where it is not an f64).
    fn to_f64(&self, a: Bits) -> f64;
    /// The word nearest to an exact ratio.
    fn from_ratio(&self, r: &Ratio) -> Bits;
    /// e^x, correctly rounded.
    fn exp(&self, a: Bits) -> Bits;
    /// ln x, correctly rounded.
    fn ln(&self, a: Bits) -> Bits;
    /// √x, correctly rounded by the family's rule (LNS: the log halved, docs/formats.md
    /// "Square root"); what a negative operand gives is the family's (NaN / NaR, or 0 where
    /// there is none).
    fn sqrt(&self, a: Bits) -> Bits;
    /// Σ x_k in `mode` (one of the entry's `modes`; others are refused in one line).
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError>;
    /// Σ a_k·b_k in `mode`, k = 0..K−1 in order.
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError>;
    /// [`Family::dot`] of every row of `rows` with every column of `bs`, row-major (the
    /// matrix kernels' outputs), each the same word as its `dot`: the same operations in the
    /// same order per element, fast paths free to interleave independent elements
    /// (`sum::rounded_dots`).
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError>;
    /// `a` converted to `to`, a format of the same family (the lanes' `convert`).
    fn convert_to(&self, to: &Self, a: Bits) -> Bits;
    /// a·b + c rounded once, where the family defines it (float: IEEE's fused multiply-add;
    /// families with an exact accumulation and 1 as a word: the quire dot product
    /// [a, c]·[b, 1], `fma_by_quire`); `None` otherwise.
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits>;
    /// `op` of a and b with the family's overflow flag: the exact result lay beyond the
    /// largest magnitude and saturated to it (the `overflow` output of the family's units);
    /// `None` where the family defines no such flag for its elementwise operations.
    fn binop_flagged(&self, op: BinOp, a: Bits, b: Bits) -> Option<(Bits, bool)>;
    /// The running dot product in `mode`: element k is `dot(mode, a[..=k], b[..=k])`, with
    /// each step's overflow flag where the family defines one in `mode` ([`Running`]).
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError>;
    /// D = Σ a_k·b_k + C in an fdpa mode as its output word and that word's format
    /// (binary32, or binary16), C a word of it: the float family's (`float::fdpa`); the
    /// others refuse the mode.
    fn fdpa(
        &self,
        mode: crate::float::fdpa::Fdpa,
        a: &[Bits],
        b: &[Bits],
        c: Bits,
    ) -> Result<(Bits, crate::float::FloatFormat), FormatError>;
    /// The operations under a [`crate::rounding::Rounder`] where the family defines
    /// stochastic rounding (its entry's `stochastic`), else `None`.
    fn rounded(&self) -> Option<&dyn crate::rounding::RoundedOps>;
    /// The exact accumulation (mode `quire`) as the matrix-product kernel takes it
    /// ([`crate::kernel`]), where this format has one the kernel can feed; else `None`, and
    /// its products are computed element by element.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot>;
    /// The accumulation of `mode` step by step, as a hardware accumulator holds it
    /// ([`crate::accumulator`]): after `clear` and k products, its word is `dot` of those k
    /// terms. `None` where the family does not accumulate so in `mode` (pairwise sums;
    /// modes it does not offer).
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>>;
    /// The word of ±sig·2^exp rounded by `r` without big integers, where sig's lowest bit is
    /// a sticky bit (set: nonzero bits were lost below it) above at least 73 exact bits (or
    /// sig = 0, zero): the value `from_ratio_with` gives the same number, and the one draw
    /// it takes. `None` (and no draw) where the family has no such rounding for `r`: the
    /// caller then rounds the exact ratio, the reference (so `None` is every family's safe
    /// answer, and the default; floats and posits have the fast path).
    fn round_parts(
        &self,
        _neg: bool,
        _sig: u128,
        _exp: i64,
        _r: &mut crate::rounding::Rounder,
    ) -> Option<Bits> {
        None
    }
    /// `out[i]` = `a[i]` op `b[i]` for slices of one length, by the family's own fast path
    /// for the lanes ([`crate::kernel::lane_op`]), which gives the words of the methods above
    /// and is held to them by the family's tests; `false` (and nothing written) where the
    /// family has none for `op`, and the kernel then calls the methods word by word.
    fn binop_lanes(&self, op: AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
        let _ = (op, a, b, out);
        false
    }
}

/// What a family's format value offers before its arithmetic is built.
pub trait FamilyFormat: Copy + fmt::Display {
    /// Bits of one word.
    fn width(&self) -> u32;
    /// The family's arithmetic type.
    type Arith: Family;
    /// The arithmetic context (LNS builds its tables on first use); the registry's
    /// [`crate::Format::calc`] wraps it in a [`crate::Calc`].
    fn arith(&self) -> Self::Arith;
    /// The format of the fields after the family's name (the `:u` suffix removed and given
    /// as `underflow`); `whole` is the string for messages.
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError>;
    /// The family's registry entry.
    fn entry(&self) -> &'static FamilyEntry;
    /// The format as the element of a per-tensor scale (`ScaledFormat::per_tensor`): its
    /// words where a value scaled past the largest one saturates, as TransformerEngine's
    /// cast to FP8 does; `None` where a family's words take no such scale (dfix words carry
    /// their own; binary32 overflows to ∞).
    fn saturating(self) -> Option<Self>;
    /// The format of these words in the family with every operation: binary32 (`f32`, the
    /// fast backend's, without hardware or accumulators of its own) is `float:8:23`; every
    /// other format is its own.
    fn canonical(self) -> crate::Format;
}

/// A kind of array PE: the accumulation it performs on its family's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeInfo {
    /// As `--pe` names it.
    pub name: &'static str,
    /// The golden accumulation the PE's dot products equal.
    pub mode: SumMode,
    /// One line for help texts.
    pub about: &'static str,
}

/// A family's registration: its format strings, what it offers, and how to parse it.
#[derive(Debug)]
pub struct FamilyEntry {
    /// The family's name, the first field of its format strings (`posit`).
    pub name: &'static str,
    /// Its format strings as help texts show them (`posit:N, posit:N:ES (optionally :u)`).
    pub syntax: &'static str,
    /// The accumulation modes of `sum` and `dot`.
    pub modes: &'static [SumMode],
    /// The array PE kinds on this family's words, the default first.
    pub pes: &'static [PeInfo],
    /// Whether the family has an ALU lane (`alu`, `vector`, convert within the family).
    pub lanes: bool,
    /// A name of one of the family's formats (`bf16`), with any suffixes after it, expanded
    /// to the family's format string (`float:8:7`); `None` for a string that is no such name.
    pub expand_name: fn(&str) -> Option<String>,
    /// One of the family's formats, for help texts and for the tests that hold every family
    /// to a rule.
    pub example: &'static str,
    /// Whether seed 003's q8 codecs take its words by the word rule (a scale word of the
    /// format, each code decoded into the format by its own rounding: fix and posit,
    /// `q8/tensor.rs`); otherwise by the f32 rule, on the words' values.
    pub q8_word_rule: bool,
    /// Whether the family defines stochastic rounding (`--rounding stochastic:R`,
    /// docs/formats.md); its formats' [`Family::rounded`] then gives the operations.
    pub stochastic: bool,
}

impl FamilyEntry {
    /// The PE kind `name` of this family.
    pub fn pe(&self, name: &str) -> Option<&'static PeInfo> {
        self.pes.iter().find(|p| p.name == name)
    }

    /// Whether the family offers `mode`'s kind (any fdpa mode where it lists one).
    pub fn offers(&self, mode: SumMode) -> bool {
        self.modes.iter().any(|m| m.same_kind(mode))
    }

    /// The refusal of a mode the family does not offer.
    pub fn refuse_mode<T>(&self, mode: SumMode, f: &dyn fmt::Display) -> Result<T, FormatError> {
        let offered: Vec<&str> = self.modes.iter().map(|m| m.name()).collect();
        err(format!(
            "mode '{mode}' is not offered by {f} (use {}; '{}' is for {} formats)",
            or_list(&offered),
            mode.name(),
            crate::family::families_with(|e| e.offers(mode))
        ))
    }
}

/// a·b + c as the two-term quire dot product [a, c]·[b, 1], rounded once, for a family that
/// offers the quire and holds 1 exactly; `None` otherwise.
pub(crate) fn fma_by_quire<F: Family>(f: &F, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
    let one = f.one();
    let exact = f.format().entry().modes.contains(&SumMode::Quire) && f.to_f64(one) == 1.0;
    exact
        .then(|| f.dot(SumMode::Quire, &[a, c], &[b, one]).ok())
        .flatten()
}

/// [`Family::dots`] from `row`, a family's dot products of one row with every column: the
/// rows' outputs one after another.
pub(crate) fn dots_by_row(
    rows: &[&[Bits]],
    row: impl Fn(&[Bits]) -> Result<Vec<Bits>, FormatError>,
) -> Result<Vec<Bits>, FormatError> {
    let mut out = Vec::new();
    for a in rows {
        out.extend(row(a)?);
    }
    Ok(out)
}

/// [`Family::dots`] element by element, each the family's own `dot` (where interleaving
/// columns gains nothing).
pub(crate) fn dots_by_element<F: Family>(
    f: &F,
    mode: SumMode,
    rows: &[&[Bits]],
    bs: &[&[Bits]],
) -> Result<Vec<Bits>, FormatError> {
    dots_by_row(rows, |a| bs.iter().map(|b| f.dot(mode, a, b)).collect())
}

/// The refusal of `:u` on a family that has no underflow variant.
pub(crate) fn no_underflow<T>(whole: &str) -> Result<T, FormatError> {
    err(format!(
        "format {whole:?}: the ':u' underflow suffix applies to posits only"
    ))
}

/// A whole number field of a format string.
pub(crate) fn field(s: &str, what: &str, whole: &str) -> Result<u32, FormatError> {
    s.parse::<u32>().map_err(|_| {
        FormatError(format!(
            "format {whole:?}: {what} {s:?} is not a whole number (formats: {})",
            syntaxes()
        ))
    })
}

/// Every family's format strings (the registry's list), for a family's messages.
pub(crate) fn syntaxes() -> String {
    crate::family::syntaxes()
}

/// The refusal of fields that are no format of the family.
pub(crate) fn unknown_format<T>(whole: &str) -> Result<T, FormatError> {
    err(format!("unknown format {whole:?}: expected {}", syntaxes()))
}

/// `a, b or c`: names for a message.
pub fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
