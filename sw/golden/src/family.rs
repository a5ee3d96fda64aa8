//! Number families: the one place that says which exist and what goes together.
//!
//! A family (lns, posit, fix, dfix, f32) is one module of this crate implementing
//! [`Family`] (its scalar arithmetic, accumulations and conversions) and [`FamilyFormat`]
//! (width, arithmetic context), with a [`FamilyEntry`] (format strings, accumulation modes,
//! PE kinds, lanes), plus one line in the `families!` list below, which makes the
//! [`Format`] and [`Calc`] enums and their dispatch. Every other crate asks the registry
//! ([`FAMILIES`], [`Format::entry`], [`pe_kinds`]) instead of matching on families: a family
//! that does not implement something fails to compile here, or is refused in one line by
//! its entry. `docs/adding-a-format.md` is the guide.
//!
//! This module is the registry (the top): it imports the families. What a family implements
//! is [`crate::family_trait`] (the bottom), which the family modules import instead.

use std::fmt;

use crate::arith::Bits;
use crate::format::{err, FormatError};

pub use crate::family_trait::{or_list, Family, FamilyEntry, FamilyFormat, PeInfo};

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

        /// `body` with `$x` bound to the format's family value, for other crates: the one
        /// place that registers a crate's own family trait (`train_family`: every family's
        /// `TrainFamily`), so that a family without an impl of it does not compile.
        #[macro_export]
        macro_rules! with_family {
            ($d f:expr, $d x:ident => $d body:expr) => {
                match $d f {
                    $($d crate::Format::$v($d x) => $d body,)*
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

        $(
            impl From<$fmt> for Format {
                fn from(f: $fmt) -> Format {
                    Format::$v(f)
                }
            }

            impl From<$calc> for Calc {
                fn from(c: $calc) -> Calc {
                    Calc::$v(c)
                }
            }
        )*

        /// The format of the family named `name` from the fields after the name (the entry's
        /// [`FamilyFormat::parse`]); `None` for no family of that name.
        fn parse_family(
            name: &str,
            fields: &[&str],
            underflow: bool,
            whole: &str,
        ) -> Option<Result<Format, FormatError>> {
            $(
                if name == $entry.name {
                    return Some(<$fmt as FamilyFormat>::parse(fields, underflow, whole).map(Format::$v));
                }
            )*
            None
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
        with_format!(self, f => Calc::from(f.arith()))
    }

    /// The family's registry entry.
    pub fn entry(&self) -> &'static FamilyEntry {
        with_format!(self, f => f.entry())
    }

    /// The format of these words in the family with every operation
    /// ([`FamilyFormat::canonical`]: f32 is `float:8:23`, every other format its own).
    pub fn canonical(&self) -> Format {
        with_format!(self, f => f.canonical())
    }

    /// The format as a per-tensor scaled element: its saturating words
    /// ([`FamilyFormat::saturating`]), `None` where its family takes no such scale.
    pub fn saturating(&self) -> Option<Format> {
        with_format!(self, f => f.saturating().map(Format::from))
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
        match parse_family(parts[0], fields, underflow, s) {
            Some(parsed) => parsed,
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
    use crate::SumMode;

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
