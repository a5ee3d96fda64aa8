//! Format strings of SPEC.md §3, parsed once into runtime parameters.
//!
//! `lns:I:F`, `posit:N`, `posit:N:ES`, either posit with a `:u` suffix, `fix:I:F`, `f32`.

use std::fmt;

use crate::fixed::FixFormat;
use crate::lns::LnsFormat;
use crate::posit::{PositFormat, PositStandard};

/// A number format chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Lns(LnsFormat),
    Posit(PositFormat),
    Fix(FixFormat),
    F32,
}

/// Why a format string or an operand was refused; `Display` is one line naming the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError(pub String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

fn parse_num(s: &str, what: &str, whole: &str) -> Result<u32, FormatError> {
    s.parse::<u32>().map_err(|_| {
        FormatError(format!(
            "format {whole:?}: {what} {s:?} is not a whole number (formats: lns:I:F, posit:N, posit:N:ES, fix:I:F, f32)"
        ))
    })
}

impl std::str::FromStr for Format {
    type Err = FormatError;

    fn from_str(s: &str) -> Result<Self, FormatError> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (parts, underflow) = match parts.split_last() {
            Some((&"u", rest)) => (rest.to_vec(), true),
            _ => (parts, false),
        };
        let fmt = match parts.as_slice() {
            ["lns", i, f] => Format::Lns(LnsFormat::new(
                parse_num(i, "integer bits", s)?,
                parse_num(f, "fraction bits", s)?,
            )?),
            ["posit", n] => Format::Posit(PositFormat::new(
                parse_num(n, "width", s)?,
                2,
                PositStandard::Std2022,
                underflow,
            )?),
            ["posit", n, es] => Format::Posit(PositFormat::new(
                parse_num(n, "width", s)?,
                parse_num(es, "exponent size", s)?,
                PositStandard::Draft2017,
                underflow,
            )?),
            ["fix", i, f] => Format::Fix(FixFormat::new(
                parse_num(i, "integer bits", s)?,
                parse_num(f, "fraction bits", s)?,
            )?),
            ["f32"] => Format::F32,
            _ => {
                return err(format!(
                    "unknown format {s:?}: expected lns:I:F, posit:N, posit:N:ES (optionally :u), fix:I:F or f32"
                ))
            }
        };
        if underflow && !matches!(fmt, Format::Posit(_)) {
            return err(format!(
                "format {s:?}: the ':u' underflow suffix applies to posits only"
            ));
        }
        Ok(fmt)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Format::Lns(l) => write!(f, "{l}"),
            Format::Posit(p) => write!(f, "{p}"),
            Format::Fix(x) => write!(f, "{x}"),
            Format::F32 => f.write_str("f32"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_prints_it_back() {
        for s in [
            "lns:5:6",
            "lns:4:4",
            "posit:16",
            "posit:8:0",
            "posit:16:1:u",
            "posit:8:u",
            "fix:7:8",
            "f32",
        ] {
            let f: Format = s.parse().unwrap();
            assert_eq!(f.to_string(), s);
        }
    }

    #[test]
    fn refuses_impossible_formats_with_one_line() {
        for s in [
            "posit:2",
            "posit:2:0",
            "posit:8:6",
            "posit:33:2",
            "lns:5:0",
            "lns:0:6",
            "lns:12:6",
            "fix:20:20",
            "fix:4294967295:1",
            "posit:4294967295:4294967295",
            "fix:7:8:u",
            "lns:5:6:u",
            "float",
            "posit:x",
            "",
        ] {
            let e = s.parse::<Format>().unwrap_err();
            assert!(!e.0.contains('\n'), "{s}: {e}");
            assert!(!e.0.is_empty());
        }
    }
}
