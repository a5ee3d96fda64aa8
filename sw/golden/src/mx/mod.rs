//! `mx:ELEM[:bK]`: OCP Microscaling (MX v1.0) block formats (issue 33). A block of K elements
//! (default 32) shares one E8M0 scale X = 2^(s − 127) (s = 255: NaN); each element is an FP8
//! E4M3 or E5M2, FP6 E3M2 or E2M3, FP4 E2M1 word (the float family's formats, [`ELEMS`]) or an
//! INT8 word k/64. Conversion follows the specification's §6.3, the dot product its §6.4;
//! docs/formats.md ("MX block formats") states every choice the specification leaves open.
//!
//! MX is not a registered [`crate::Family`]: its scalar operations would have no scale to act
//! on (docs/decisions.md). Its strings are parsed here ([`MxFormat`]'s `FromStr`), and the
//! command line lists [`SYNTAX`] beside the families' syntaxes.

mod block;
mod dense;
mod gemm;
mod input;
mod product;

pub use block::{Accumulation, Exact, F32Acc, MxBlock, F32_NAN};
pub use dense::{matmul_dense, Along, F32Word, Operand};
pub use gemm::matmul_f32;
pub use input::{MxInput, INPUT_MAX_EXP_BITS, INPUT_MAX_FRAC_BITS, INPUT_SYNTAX};
pub use product::{MxQuantizer, MxVector};

use std::fmt;

use crate::family::{Format, PeInfo};
use crate::float::FloatFormat;
use crate::format::{err, FormatError};

/// The name, the first field of every MX string.
pub const NAME: &str = "mx";

/// The block size when `:bK` is not given (the specification's K).
pub const DEFAULT_BLOCK: usize = 32;

/// The largest block size: every block's exact dot product then fits an i128 with room to
/// spare (products below 2^64 at the element's last place, times K <= 2^10), and the RTL's
/// max-exponent and exact-sum trees stay at most 10 levels deep.
pub const MAX_BLOCK: usize = 1024;

/// The E8M0 scale's bias and NaN code.
pub const SCALE_BIAS: i32 = 127;
pub const SCALE_NAN: u8 = 0xff;
/// The range of the shared exponent (the scale bytes 0x00 ..= 0xfe).
pub const SCALE_EXP_MIN: i32 = -127;
pub const SCALE_EXP_MAX: i32 = 127;

/// The array PE on MX blocks (`lpgen rtl array --format mx:ELEM[:bK]`, `--pe mx`): each step
/// one block pair's exact dot product (§6.4), rounded once to f32 and added to an f32
/// accumulator ([`F32Acc`], the specification's reference accumulation). Not a family's PE
/// (MX is no family, docs/decisions.md): the block formats' one PE kind, listed here.
pub static PE: PeInfo = PeInfo {
    name: "mx",
    mode: crate::SumMode::Naive,
    about: "MX blocks: exact block dot products, each rounded to f32 and added in f32",
};

/// The syntax, for help texts and refusals.
pub const SYNTAX: &str =
    "mx:ELEM[:bK] (MX block formats for `golden`/`quant`/`train`: ELEM fp8:e4m3, \
                          fp8:e5m2, fp6:e3m2, fp6:e2m3, fp4:e2m1 or int8; K 1..=1024, default 32)";

/// How an element is coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemSpec {
    /// A float family format, given by its string (saturating: `:sat` or `:nonan`).
    Float(&'static str),
    /// Two's complement k, value k/64; conversion saturates to ±127 (0x80 = −2 decodes but is
    /// never produced).
    Int8,
}

/// The element types: (name in `mx:NAME`, coding). The one list of what exists.
pub const ELEMS: &[(&str, ElemSpec)] = &[
    ("fp8:e4m3", ElemSpec::Float("float:4:3:fn:sat")),
    ("fp8:e5m2", ElemSpec::Float("float:5:2:sat")),
    ("fp6:e3m2", ElemSpec::Float("float:3:2:nonan")),
    ("fp6:e2m3", ElemSpec::Float("float:2:3:nonan")),
    ("fp4:e2m1", ElemSpec::Float("float:2:1:nonan")),
    ("int8", ElemSpec::Int8),
];

/// An element type, ready to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    Float(FloatFormat),
    Int8,
}

/// An MX block format: element type and block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MxFormat {
    /// The element's name (`fp4:e2m1`), as in [`ELEMS`].
    pub elem_name: &'static str,
    pub elem: Elem,
    /// K, 1 ..= [`MAX_BLOCK`].
    pub block: usize,
}

fn elem_of(spec: ElemSpec) -> Elem {
    match spec {
        ElemSpec::Float(s) => match s.parse::<Format>() {
            Ok(Format::Float(f)) => Elem::Float(f),
            other => unreachable!("ELEMS holds float strings: {s}: {other:?}"),
        },
        ElemSpec::Int8 => Elem::Int8,
    }
}

fn elem_names() -> String {
    ELEMS.iter().map(|e| e.0).collect::<Vec<_>>().join(", ")
}

/// Whether `s` is an MX string (its first field is `mx`), to be parsed by [`MxFormat`].
pub fn is_mx(s: &str) -> bool {
    s.trim().split(':').next() == Some(NAME)
}

impl MxFormat {
    /// The format with element `elem_name` and block size `block`.
    pub fn new(elem_name: &str, block: usize) -> Result<MxFormat, FormatError> {
        let Some(&(name, spec)) = ELEMS.iter().find(|e| e.0 == elem_name) else {
            return err(format!(
                "unknown MX element {elem_name:?}: expected {}",
                elem_names()
            ));
        };
        if block == 0 || block > MAX_BLOCK {
            return err(format!(
                "block size {block}: an MX block has 1..={MAX_BLOCK} elements"
            ));
        }
        Ok(MxFormat {
            elem_name: name,
            elem: elem_of(spec),
            block,
        })
    }

    /// Bits of one element word.
    pub fn elem_width(&self) -> u32 {
        match self.elem {
            Elem::Float(f) => f.width(),
            Elem::Int8 => 8,
        }
    }

    /// emax of the element type (§6.3): the exponent of its largest power of two, 2^emax
    /// <= max finite < 2^(emax+1). Float: the format's largest finite exponent (8 for E4M3,
    /// 15 E5M2, 4 E3M2, 2 E2M3, 2 E2M1); INT8: 0 (its largest value is 127/64).
    pub fn emax_elem(&self) -> i32 {
        match self.elem {
            Elem::Float(f) => f.emax() as i32,
            Elem::Int8 => 0,
        }
    }
}

impl std::str::FromStr for MxFormat {
    type Err = FormatError;

    /// `mx:ELEM[:bK]`.
    fn from_str(s: &str) -> Result<MxFormat, FormatError> {
        let s = s.trim();
        let rest = s
            .strip_prefix("mx:")
            .ok_or_else(|| FormatError(format!("format {s:?}: expected {SYNTAX}")))?;
        let (elem, block) = match rest.rsplit_once(':') {
            Some((e, b)) if b.starts_with('b') => {
                let k = b[1..].parse::<usize>().map_err(|_| {
                    FormatError(format!(
                        "format {s:?}: the block size {b:?} is not b followed by a number \
                         (e.g. :b32)"
                    ))
                })?;
                (e, k)
            }
            _ => (rest, DEFAULT_BLOCK),
        };
        MxFormat::new(elem, block).map_err(|e| FormatError(format!("format {s:?}: {}", e.0)))
    }
}

impl fmt::Display for MxFormat {
    /// `mx:ELEM`, then `:bK` where K is not the default 32.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{NAME}:{}", self.elem_name)?;
        if self.block != DEFAULT_BLOCK {
            write!(f, ":b{}", self.block)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_parse_print_and_refuse_in_one_line() {
        for s in [
            "mx:fp8:e4m3",
            "mx:int8:b1",
            "mx:fp4:e2m1:b1024",
            "mx:fp6:e2m3:b16",
        ] {
            assert_eq!(s.parse::<MxFormat>().unwrap().to_string(), s);
        }
        assert_eq!(
            "mx:fp6:e3m2:b32".parse::<MxFormat>().unwrap().to_string(),
            "mx:fp6:e3m2"
        );
        for s in [
            "mx",
            "mx:",
            "mx:fp8:e3m5",
            "mx:fp5:e2m2",
            "mx:fp4:e2m1:b0",
            "mx:int8:b100000",
            "mx:int8:b1025",
            "mx:int8:bx",
            "mx:int8:b",
            "mx:fp4:e2m1:sat",
            "mx:float:2:1:nonan",
            "fp4:e2m1",
        ] {
            let e = s.parse::<MxFormat>().expect_err(s);
            assert!(!e.0.contains('\n') && !e.0.is_empty(), "{s}: {e}");
        }
        assert!(is_mx("mx:int8") && is_mx(" mx") && !is_mx("mxx:int8") && !is_mx("fix:8:4"));
    }

    #[test]
    fn every_element_is_built_and_has_the_specifications_emax() {
        let want = [
            ("fp8:e4m3", 8, 8),
            ("fp8:e5m2", 15, 8),
            ("fp6:e3m2", 4, 6),
            ("fp6:e2m3", 2, 6),
            ("fp4:e2m1", 2, 4),
            ("int8", 0, 8),
        ];
        assert_eq!(ELEMS.len(), want.len());
        for (name, emax, width) in want {
            let f = MxFormat::new(name, 32).unwrap();
            assert_eq!((f.emax_elem(), f.elem_width()), (emax, width), "{name}");
        }
    }
}
