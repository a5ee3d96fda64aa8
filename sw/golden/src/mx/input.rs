//! The word formats a block conversion (§6.3) takes as input: `mx-enc --input`, `lpgen golden
//! mx:… quantize --input`, `MxFormat.quantize_block(…, input=…)` in Python. Every word of
//! these formats has an exact f64 value, so a block of words converts as
//! [`MxFormat::quantize_block`] on those values: this module only says which formats qualify
//! and reads their words.

use std::fmt;

use crate::arith::Bits;
use crate::family_trait::Family;
use crate::fixed::FixFormat;
use crate::float::FloatFormat;
use crate::format::{err, Format, FormatError};

use super::{MxBlock, MxFormat};

/// The syntax of an input word format, for help texts and refusals.
pub const INPUT_SYNTAX: &str = "f32 (the default), bf16, f16 or float:E:M (IEEE-style: E <= 8, \
                                M <= 23, no :fn, :nonan or :ftz) or fix:I:F";

/// The largest exponent and fraction fields of a float input: binary32's.
pub const INPUT_MAX_EXP_BITS: u32 = 8;
pub const INPUT_MAX_FRAC_BITS: u32 = 23;

/// A word format whose blocks convert to MX blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxInput {
    /// IEEE binary32.
    F32,
    /// An IEEE-style `float:E:M` no wider than binary32 (E <= 8, M <= 23): the all-ones
    /// exponent field holds ±∞ and NaN, subnormals are values (not `:fn`, `:nonan` or
    /// `:ftz`; `:sat` changes no word's value and is allowed).
    Float(FloatFormat),
    /// `fix:I:F`: two's complement k, value k · 2^−F.
    Fix(FixFormat),
}

impl MxInput {
    /// The input of words of `f`, or the one-line reason a block conversion does not take them.
    pub fn new(f: Format) -> Result<MxInput, FormatError> {
        let refuse = |why: String| {
            err(format!(
                "{f}: {why}; an MX block conversion takes {INPUT_SYNTAX}"
            ))
        };
        match f {
            Format::F32(_) => Ok(MxInput::F32),
            Format::Fix(x) => Ok(MxInput::Fix(x)),
            Format::Float(x) => {
                if x.exp_bits > INPUT_MAX_EXP_BITS || x.frac_bits > INPUT_MAX_FRAC_BITS {
                    refuse("a float wider than binary32 (E <= 8 and M <= 23 only)".into())
                } else if x.finite || x.no_nan || x.ftz {
                    refuse("not IEEE-style (:fn, :nonan and :ftz words are not taken)".into())
                } else {
                    Ok(MxInput::Float(x))
                }
            }
            Format::Posit(_) | Format::Takum(_) => {
                refuse(format!("{} words are not taken", f.entry().name))
            }
            Format::Lns(_) => refuse("LNS words are not taken".into()),
            Format::Dfix(_) => refuse("dfix words have no scale of their own".into()),
        }
    }

    /// The scalar format of the words.
    pub fn format(&self) -> Format {
        match *self {
            MxInput::F32 => Format::F32(crate::F32),
            MxInput::Float(x) => Format::Float(x),
            MxInput::Fix(x) => Format::Fix(x),
        }
    }

    /// Bits of one word.
    pub fn width(&self) -> u32 {
        match self {
            MxInput::F32 => 32,
            MxInput::Float(x) => x.width(),
            MxInput::Fix(x) => x.width(),
        }
    }

    /// The exact value of word `w` (at most [`Self::width`] bits): NaN, ±∞ or a dyadic, all
    /// exact in f64.
    pub fn to_f64(&self, w: Bits) -> f64 {
        match self {
            MxInput::F32 => f64::from(f32::from_bits(w as u32)),
            MxInput::Float(x) => x.to_f64(w),
            MxInput::Fix(x) => x.to_f64(w),
        }
    }
}

impl std::str::FromStr for MxInput {
    type Err = FormatError;

    fn from_str(s: &str) -> Result<MxInput, FormatError> {
        MxInput::new(s.parse::<Format>()?)
    }
}

impl fmt::Display for MxInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.format().fmt(f)
    }
}

impl MxFormat {
    /// One block of 1 ..= K words of `input` converted as §6.3: [`Self::quantize_block`] on
    /// their exact values. A word wider than the input's width is refused.
    pub fn quantize_words(&self, input: MxInput, words: &[Bits]) -> Result<MxBlock, FormatError> {
        let w = input.width();
        if let Some(bad) = words.iter().find(|&&x| x >> w != 0) {
            return err(format!("{bad:#x} is not a {w}-bit word of {input}"));
        }
        let xs: Vec<f64> = words.iter().map(|&x| input.to_f64(x)).collect();
        self.quantize_block(&xs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_parse_print_and_refuse_in_one_line() {
        for (s, want) in [
            ("f32", "f32"),
            ("bf16", "bf16"),
            ("f16", "f16"),
            ("float:5:2", "fp8:e5m2"),
            ("float:8:23", "float:8:23"),
            ("float:8:7:sat", "bf16:sat"),
            ("fix:7:8", "fix:7:8"),
            ("fix:0:31", "fix:0:31"),
        ] {
            assert_eq!(s.parse::<MxInput>().unwrap().to_string(), want, "{s}");
        }
        for s in [
            "posit:8:0",
            "lns:5:6",
            "dfix:8",
            "float:9:23",
            "float:8:24",
            "float:11:52",
            "fp8:e4m3",
            "float:2:1:nonan",
            "bf16:ftz",
            "mx:int8",
            "fix:40:0",
        ] {
            let e = s.parse::<MxInput>().expect_err(s).0;
            assert!(!e.contains('\n') && !e.is_empty(), "{s}: {e}");
        }
        let e = "float:9:23".parse::<MxInput>().unwrap_err().0;
        assert!(e.contains("wider than binary32"), "{e}");
    }

    #[test]
    fn words_wider_than_the_input_are_refused() {
        let f: MxFormat = "mx:int8:b2".parse().unwrap();
        let bf16: MxInput = "bf16".parse().unwrap();
        assert!(f.quantize_words(bf16, &[0x3f80, 0x1_0000]).is_err());
        assert!(f.quantize_words(bf16, &[0x3f80, 0xffff]).is_ok());
    }
}
