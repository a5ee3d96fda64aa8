//! Format strings of SPEC.md §3, parsed once into runtime parameters: [`Format`] (made by
//! the family registry, `family.rs`, where each family parses its own strings) and the one
//! error type of a refused format or operand.

use std::fmt;

pub use crate::family::Format;

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
            "dfix:10",
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
            "dfix:1",
            "dfix:10:u",
            "f32:u",
            "posit:x",
            "",
        ] {
            let e = s.parse::<Format>().unwrap_err();
            assert!(!e.0.contains('\n'), "{s}: {e}");
            assert!(!e.0.is_empty());
        }
    }
}
