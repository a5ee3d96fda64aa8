//! Number families: the one place that says which exist and what goes together.
//!
//! A family (lns, posit, fix, dfix, f32) is one module of this crate implementing
//! [`Family`] (its scalar arithmetic, accumulations and conversions) and [`FamilyFormat`]
//! (width, arithmetic context), with a [`FamilyEntry`] (format strings, accumulation modes,
//! PE kinds, lanes), plus one line in the [`families!`] list below, which makes the
//! [`Format`] and [`Calc`] enums and their dispatch. Every other crate asks the registry
//! ([`FAMILIES`], [`Format::entry`], [`pe_kinds`]) instead of matching on families: a family
//! that does not implement something fails to compile here, or is refused in one line by
//! its entry. `docs/adding-a-format.md` is the guide.

use std::cmp::Ordering;
use std::fmt;

use crate::arith::{BinOp, Bits};
use crate::exact::Ratio;
use crate::format::{err, FormatError};
use crate::sum::Running;
use crate::SumMode;

/// The golden arithmetic of one family, on words in the low bits of a [`Bits`]. Every
/// operation rounds once, by the family's rule (docs/formats.md). `from_*` take `self`: the
/// arithmetic context holds the format's parameters (and tables).
#[allow(clippy::wrong_self_convention)]
pub trait Family: Copy + fmt::Debug + Send + Sync {
    /// The format this arithmetic computes in.
    fn format(&self) -> Format;
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
    /// [a, c]·[b, 1], [`fma_by_quire`]); `None` otherwise.
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
}

/// What a family's format value offers before its arithmetic is built.
pub trait FamilyFormat: Copy + fmt::Display {
    /// Bits of one word.
    fn width(&self) -> u32;
    /// The arithmetic context (LNS builds its tables on first use).
    fn calc(&self) -> Calc;
    /// The family's registry entry.
    fn entry(&self) -> &'static FamilyEntry;
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
    /// The fields after the name (the `:u` suffix removed and given as `underflow`), as a
    /// format; `whole` is the string for messages.
    pub parse: fn(fields: &[&str], underflow: bool, whole: &str) -> Result<Format, FormatError>,
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
    pub fn refuse_mode<T>(&self, mode: SumMode, f: &Format) -> Result<T, FormatError> {
        let offered: Vec<&str> = self.modes.iter().map(|m| m.name()).collect();
        err(format!(
            "mode '{mode}' is not offered by {f} (use {}; '{}' is for {} formats)",
            or_list(&offered),
            mode.name(),
            families_with(|e| e.offers(mode))
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
pub(crate) fn no_underflow(whole: &str) -> Result<Format, FormatError> {
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

/// `a, b or c`: names for a message.
pub fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The names of the families whose entry `has` says yes to, as `a, b or c`.
pub fn families_with(has: impl Fn(&FamilyEntry) -> bool) -> String {
    let names: Vec<&str> = FAMILIES.iter().filter(|e| has(e)).map(|e| e.name).collect();
    or_list(&names)
}

/// Every family's format strings, for messages and help texts.
pub fn syntaxes() -> String {
    FAMILIES
        .iter()
        .map(|f| f.syntax)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every PE kind of every family, with its family's entry.
pub fn pe_kinds() -> impl Iterator<Item = (&'static FamilyEntry, &'static PeInfo)> {
    FAMILIES
        .iter()
        .flat_map(|f| f.pes.iter().map(move |p| (*f, p)))
}

/// The PE kind `name` and its family, or a one-line refusal listing them.
pub fn pe_kind(name: &str) -> Result<(&'static FamilyEntry, &'static PeInfo), FormatError> {
    pe_kinds().find(|(_, p)| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = pe_kinds().map(|(_, p)| p.name).collect();
        FormatError(format!(
            "unknown PE kind {name:?}: expected {}",
            or_list(&names)
        ))
    })
}

/// Makes the registry from one line per family: `Variant(FormatType, CalcType) = ENTRY`.
/// Generates [`Format`], [`Calc`], [`FAMILIES`], and the dispatch macros `with_format!` and
/// `with_calc!` (a body run with the family's own value bound, so that it is monomorphised
/// per family). `$d` is a literal `$` for the inner macros.
macro_rules! families {
    ($d:tt $($v:ident($fmt:ty, $calc:ty) = $entry:path,)*) => {
        /// A number format chosen at run time: one variant per family.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Format {
            $($v($fmt),)*
        }

        /// The arithmetic of a format, chosen at run time: one variant per family.
        #[derive(Clone, Copy, Debug)]
        pub enum Calc {
            $($v($calc),)*
        }

        /// The registry: every family's entry, in the order help texts list them.
        pub const FAMILIES: &[&FamilyEntry] = &[$(&$entry,)*];

        /// `body` with `$x` bound to the format's family value.
        macro_rules! with_format {
            ($d f:expr, $d x:ident => $d body:expr) => {
                match $d f {
                    $(Format::$v($d x) => $d body,)*
                }
            };
        }

        /// `body` with `$x` bound to the arithmetic's family value.
        macro_rules! with_calc {
            ($d c:expr, $d x:ident => $d body:expr) => {
                match $d c {
                    $(Calc::$v($d x) => $d body,)*
                }
            };
        }

        impl Calc {
            /// `a` of this format converted to `to`: `None` across families.
            pub fn convert_to(&self, to: &Calc, a: Bits) -> Option<Bits> {
                match (self, to) {
                    $((Calc::$v(f), Calc::$v(t)) => Some(f.convert_to(t, a)),)*
                    // A pair of two families: no conversion (checked by the callers).
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }

        impl Format {
            /// Whether two formats are of one family.
            pub fn same_family(&self, other: &Format) -> bool {
                std::mem::discriminant(self) == std::mem::discriminant(other)
            }
        }
    };
}

use crate::binary32::F32;
use crate::dfix::{DfixCalc, DfixFormat};
use crate::fixed::FixFormat;
use crate::float::FloatFormat;
use crate::lns::{Lns, LnsFormat};
use crate::posit::PositFormat;
use crate::takum::TakumFormat;

families! {$
    Lns(LnsFormat, Lns) = crate::lns::FAMILY,
    Posit(PositFormat, PositFormat) = crate::posit::FAMILY,
    Fix(FixFormat, FixFormat) = crate::fixed::FAMILY,
    Dfix(DfixFormat, DfixCalc) = crate::dfix::FAMILY,
    F32(F32, F32) = crate::binary32::FAMILY,
    Float(FloatFormat, FloatFormat) = crate::float::FAMILY,
    Takum(TakumFormat, TakumFormat) = crate::takum::FAMILY,
}

pub(crate) use with_calc;

impl Format {
    /// Bits of one word.
    pub fn width(&self) -> u32 {
        with_format!(self, f => f.width())
    }

    /// The arithmetic context of this format (builds the LNS tables on first use).
    pub fn calc(&self) -> Calc {
        with_format!(self, f => f.calc())
    }

    /// The family's registry entry.
    pub fn entry(&self) -> &'static FamilyEntry {
        with_format!(self, f => f.entry())
    }

    /// The family's name (`posit`).
    pub fn family(&self) -> &'static str {
        self.entry().name
    }
}

impl fmt::Display for Format {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        with_format!(self, f => fmt::Display::fmt(f, out))
    }
}

impl std::str::FromStr for Format {
    type Err = FormatError;

    /// A format string of any registered family (SPEC.md §3).
    fn from_str(s: &str) -> Result<Self, FormatError> {
        // A format name stands for its family's string (`bf16` is `float:8:7`).
        let s = s.trim();
        let expanded = FAMILIES.iter().find_map(|f| (f.expand_name)(s));
        let parts: Vec<&str> = expanded.as_deref().unwrap_or(s).split(':').collect();
        let (fields, underflow) = match parts.split_last() {
            Some((&"u", rest)) if !rest.is_empty() => (&rest[1..], true),
            _ => (parts.get(1..).unwrap_or(&[]), false),
        };
        match FAMILIES.iter().find(|f| f.name == parts[0]) {
            Some(f) => (f.parse)(fields, underflow, s),
            None if crate::scale::is_scaled(s) || parts[0] == "nvfp4" => err(format!(
                "{s:?} is a scaled format ({}), not a scalar number format: `lpgen golden` \
                 takes it",
                crate::scale::SYNTAX
            )),
            None if crate::mx::is_mx(s) => err(format!(
                "{s:?} is an MX block format ({}), not a scalar number format: `lpgen golden`, \
                 `lpgen quant` and `lpgen train --format` take it",
                crate::mx::SYNTAX
            )),
            None => err(format!("unknown format {s:?}: expected {}", syntaxes())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_parses_what_it_prints_and_names_its_entry() {
        for s in [
            "lns:5:6",
            "posit:16",
            "posit:8:0",
            "posit:16:1:u",
            "fix:7:8",
            "dfix:10",
            "f32",
            "float:3:4:fn:sat:ftz",
        ]
        .into_iter()
        .chain(FAMILIES.iter().map(|e| e.example))
        {
            let f: Format = s.parse().unwrap();
            assert_eq!(f.to_string(), s);
            assert_eq!(f.entry().name, s.split(':').next().unwrap());
            assert_eq!(f.calc().format(), f, "{s}");
        }
    }

    /// `Calc::fma`: IEEE's for floats (an exact zero is −0 only when a·b and c are both −0),
    /// the two-term quire dot elsewhere, none without an exact accumulation.
    #[test]
    fn fma_is_ieees_for_floats_and_the_quires_elsewhere() {
        let bf16 = "bf16".parse::<Format>().unwrap().calc();
        let w = |x: f64| bf16.from_f64(x);
        let (pz, nz) = (w(0.0), w(-0.0));
        assert_eq!(nz, 0x8000);
        assert_eq!(bf16.fma(w(-2.0), pz, nz), Some(nz));
        assert_eq!(bf16.fma(w(2.0), pz, nz), Some(pz));
        assert_eq!(bf16.fma(w(-2.0), pz, pz), Some(pz));
        assert_eq!(bf16.fma(w(1.5), w(2.0), w(0.25)), Some(w(3.25)));
        let p = "posit:8:0".parse::<Format>().unwrap().calc();
        let (a, b, c) = (p.from_f64(1.5), p.from_f64(2.0), p.from_f64(0.25));
        assert_eq!(p.fma(a, b, c), Some(p.from_f64(3.25)));
        assert_eq!(
            p.fma(a, b, c),
            p.dot(SumMode::Quire, &[a, c], &[b, p.one()]).ok()
        );
        let l = "lns:4:4".parse::<Format>().unwrap().calc();
        assert_eq!(l.fma(0, 0, 0), None);
    }

    #[test]
    fn pe_kinds_are_unique_and_offer_their_familys_modes() {
        let names: Vec<&str> = pe_kinds().map(|(_, p)| p.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "{names:?}");
        for (f, p) in pe_kinds() {
            assert!(f.offers(p.mode), "{}: {}", f.name, p.name);
        }
        assert!(pe_kind("nonesuch").is_err());
        assert_eq!(pe_kind("float").unwrap().1.mode, SumMode::Quire);
        assert_eq!(pe_kind("lns-kahan").unwrap().1.mode, SumMode::Kahan);
    }
}
