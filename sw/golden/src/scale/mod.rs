//! Scaled formats (issue 50): one layer of scales over any registry element format.
//!
//! A scaled format is an element format (any registry format, or an MX element name), a
//! granularity (the tensor, each row, each column, or blocks of K along the reduction
//! dimension: along each row of a row-major R × K matrix), a scale format ([`Scale`]:
//! E8M0, UE4M3, UE5M3, f32 or a registry format) and, optionally, a second-level f32 tensor
//! scale. A rule ([`Rule`]) says where the tensor-level amax comes from: the tensor itself
//! (current) or an amax history (delayed, as TransformerEngine keeps it, [`Delayed`]).
//!
//! The arithmetic (docs/formats.md, "Scaled formats"): with A the tensor amax and
//! elem_target the value amax is mapped to (`target`: a float's largest value, a posit's
//! top of the binades around 1),
//! - the tensor scale (an encode multiplier, f32) s = f32(elem_target · scale_max / (A · 2^margin)),
//!   1 when A = 0 or when s rounds to 0; without a tensor scale s = 1;
//! - each group's scale (a decode scale, in the scale format) S = sf(amax_g · s · 2^margin /
//!   elem_target), or for E8M0 the power of two 2^(⌊log2(amax_g · s · 2^margin)⌋ − emax_elem)
//!   clamped to 2^±127 (OCP MX §6.3's rule; 2^−127 for amax 0);
//! - each element q = elem(x · s / S), 0 where S = 0;
//! - dequantized q · S / s.
//!
//! Each step is the exact value (big-integer ratios) rounded once by the named format's own
//! rounding (the family's `from_ratio`: for floats [`crate::FloatFormat::round_with`]), to
//! nearest even, saturating where the format saturates (UE4M3, UE5M3 and the tensor scale's
//! f32 do). NVFP4 (`nvfp4`) and MX (`mx`, differentially tested) are instances.

mod delayed;
pub mod dot;
pub mod gemm;
pub mod hadamard;
mod nvfp4;
pub mod overflow;
mod quant;
mod target;

pub use delayed::Delayed;
pub use nvfp4::{Nvfp4Block, NVFP4, NVFP4_BLOCK};
pub use quant::Quantized;

use std::fmt;

use crate::arith::Bits;
use crate::family::{Calc, Format};
use crate::family_trait::Family;
use crate::float::FloatFormat;
use crate::format::{err, FormatError};

/// The first field of a scaled format string.
pub const NAME: &str = "scaled";

/// The syntax, for help texts and refusals.
pub const SYNTAX: &str = "scaled/ELEM/GRAN/SCALE[/t] (ELEM a registry format or MX element \
                          name, GRAN tensor|row|col|bK, SCALE e8m0|ue4m3|ue5m3|f32|a registry \
                          format, /t an f32 tensor scale), or nvfp4";

/// The widest scale code a block scale may have: a block's scale is stored beside every K
/// elements, and a wider one (f32) is a per-tensor, row or column scale's job.
pub const MAX_BLOCK_SCALE_BITS: u32 = 16;

/// Over how many values one scale is shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// One scale for the whole tensor.
    Tensor,
    /// One per row (R scales of an R × K matrix).
    Row,
    /// One per column (K scales).
    Column,
    /// One per K consecutive values of a row (along the reduction dimension), K dividing
    /// the row length.
    Block(usize),
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Granularity::Tensor => f.write_str("tensor"),
            Granularity::Row => f.write_str("row"),
            Granularity::Column => f.write_str("col"),
            Granularity::Block(k) => write!(f, "b{k}"),
        }
    }
}

impl std::str::FromStr for Granularity {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Granularity, FormatError> {
        match s {
            "tensor" => Ok(Granularity::Tensor),
            "row" => Ok(Granularity::Row),
            "col" => Ok(Granularity::Column),
            _ => match s.strip_prefix('b').map(str::parse::<usize>) {
                Some(Ok(k)) if k >= 1 => Ok(Granularity::Block(k)),
                _ => err(format!(
                    "granularity {s:?}: expected tensor, row, col or bK (K >= 1, e.g. b16)"
                )),
            },
        }
    }
}

/// The format a scale is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scale {
    /// OCP E8M0: a byte s, the power of two 2^(s − 127), 0xFF NaN (never produced here).
    E8m0,
    /// A word of a registry format, `name` as the scale string named it (`ue4m3`, `ue5m3`,
    /// `f32`, or the format's own string).
    Word { name: &'static str, format: Format },
}

/// The named scale formats: (name, float string). UE4M3 is OCP E4M3 with the sign 0 and
/// saturation (NVFP4's scale); UE5M3 the same with five exponent bits (float:5:3:fn:sat with
/// the sign bit left off: 8-bit codes, 0xFF NaN); f32 saturates (TransformerEngine clamps
/// its scales to the largest f32).
pub const NAMED_SCALES: &[(&str, &str)] = &[
    ("ue4m3", "float:4:3:fn:sat"),
    ("ue5m3", "float:5:3:fn:sat"),
    ("f32", "float:8:23:sat"),
];

impl Scale {
    /// Bits of one stored scale code (the unsigned named formats drop the sign bit).
    pub fn code_bits(&self) -> u32 {
        match self {
            Scale::E8m0 => 8,
            // UE4M3 is an E4M3 byte with the sign 0 (as NVFP4 stores it); UE5M3's sign bit
            // is left off, leaving a byte.
            Scale::Word { name, format } => format.width() - u32::from(*name == "ue5m3"),
        }
    }

    /// The code of the power of two 1 (the scale a delayed rule starts from).
    pub fn one(&self) -> Bits {
        match self {
            Scale::E8m0 => 127,
            Scale::Word { format, .. } => format.calc().one(),
        }
    }

    /// The value of a scale code (exact for E8M0 and the float formats).
    pub fn value(&self, code: Bits) -> f64 {
        match self {
            Scale::E8m0 => 2f64.powi(code as i32 - 127),
            Scale::Word { format, .. } => format.calc().to_f64(code),
        }
    }

    /// The largest finite scale value.
    pub fn max_value(&self) -> f64 {
        match self {
            Scale::E8m0 => 2f64.powi(127),
            Scale::Word { format, .. } => format_max(format),
        }
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scale::E8m0 => f.write_str("e8m0"),
            Scale::Word { name, .. } => f.write_str(name),
        }
    }
}

/// A parsed format's string as a `&'static str`, so that [`Scale`] and
/// [`ScaledFormat`] stay `Copy`: each distinct string is leaked once and found again after
/// (a program names few formats, however often it parses them).
fn leak(s: String) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&n) = names.iter().find(|&&n| n == s) {
        return n;
    }
    let n: &'static str = Box::leak(s.into_boxed_str());
    names.push(n);
    n
}

impl std::str::FromStr for Scale {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Scale, FormatError> {
        if s == "e8m0" {
            return Ok(Scale::E8m0);
        }
        if let Some(&(name, fs)) = NAMED_SCALES.iter().find(|n| n.0 == s) {
            let format = fs.parse().expect("NAMED_SCALES holds float strings");
            return Ok(Scale::Word { name, format });
        }
        let format: Format = s.parse().map_err(|e: FormatError| {
            FormatError(format!(
                "scale format {s:?}: expected e8m0, ue4m3, ue5m3, f32 or a registry format ({})",
                e.0
            ))
        })?;
        refuse_dfix(&format, "scale")?;
        Ok(Scale::Word {
            name: leak(format.to_string()),
            format,
        })
    }
}

/// Where the tensor-level amax comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The amax of the tensor being quantized (or one given with it).
    Current,
    /// TransformerEngine's delayed scaling: the largest of the last `history` amaxes seen
    /// (the current tensor's not among them), the scale divided by 2^`margin`.
    Delayed { history: usize, margin: i32 },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Current => f.write_str("current"),
            Rule::Delayed { history, margin } => write!(f, "delayed:{history}:{margin}"),
        }
    }
}

/// TransformerEngine's default amax history length.
pub const DEFAULT_HISTORY: usize = 1024;

/// The largest history: a million steps of f64s (8 MB) is more than any recipe keeps.
pub const MAX_HISTORY: usize = 1 << 20;

impl std::str::FromStr for Rule {
    type Err = FormatError;
    /// `current` or `delayed[:H[:MARGIN]]` (H 1..=2^20, default 1024; MARGIN −64..=64, 0).
    fn from_str(s: &str) -> Result<Rule, FormatError> {
        let bad = |why: &str| {
            err(format!(
                "scaling {s:?}: {why} (expected current or delayed[:H[:MARGIN]], H \
                 1..={MAX_HISTORY}, MARGIN -64..=64)"
            ))
        };
        let mut parts = s.split(':');
        match parts.next() {
            Some("current") if s == "current" => Ok(Rule::Current),
            Some("delayed") => {
                let history = match parts.next() {
                    None => DEFAULT_HISTORY,
                    Some(h) => match h.parse::<usize>() {
                        Ok(0) => return bad("an amax history of 0 steps keeps nothing"),
                        Ok(h) if h <= MAX_HISTORY => h,
                        _ => return bad(&format!("history {h:?} is not 1..={MAX_HISTORY}")),
                    },
                };
                let margin = match parts.next() {
                    None => 0,
                    Some(m) => match m.parse::<i32>() {
                        Ok(m) if (-64..=64).contains(&m) => m,
                        _ => return bad(&format!("margin {m:?} is not an integer -64..=64")),
                    },
                };
                if parts.next().is_some() {
                    return bad("too many fields");
                }
                Ok(Rule::Delayed { history, margin })
            }
            _ => bad("unknown rule"),
        }
    }
}

/// A scaled format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaledFormat {
    /// The element format's name as given (`fp4:e2m1`).
    pub elem_name: &'static str,
    pub elem: Format,
    pub granularity: Granularity,
    pub scale: Scale,
    /// A second-level f32 tensor scale (an encode multiplier, NVIDIA's s_enc).
    pub tensor_scale: bool,
    /// The f64 bits of [`ScaledFormat::elem_target`], found once when the format is made.
    target: u64,
}

fn refuse_dfix(f: &Format, what: &str) -> Result<(), FormatError> {
    if f.family() == crate::dfix::FAMILY.name {
        return err(format!(
            "{f} as a {what} format: dfix words carry their own group scale; use fix:I:F"
        ));
    }
    Ok(())
}

/// The largest finite value of a format: a float's max finite word; for the others the word
/// nearest to f64::MAX (their saturation), or to f32::MAX (binary32, which overflows to ∞);
/// NaN where neither is finite.
pub(crate) fn format_max(f: &Format) -> f64 {
    if let Format::Float(ff) = f {
        return ff.to_f64(ff.max_finite(false));
    }
    let calc = f.calc();
    [f64::MAX, f64::from(f32::MAX)]
        .into_iter()
        .map(|m| calc.to_f64(calc.from_f64(m)))
        .find(|v| v.is_finite())
        .unwrap_or(f64::NAN)
}

/// An element format by an MX element name (`fp4:e2m1`: the saturating float MX uses) or a
/// registry string.
fn elem_format(s: &str) -> Result<(&'static str, Format), FormatError> {
    for &(name, spec) in crate::mx::ELEMS {
        if name == s {
            if let crate::mx::ElemSpec::Float(fs) = spec {
                return Ok((name, fs.parse().expect("MX's ELEMS holds float strings")));
            }
        }
    }
    let f: Format = s.parse()?;
    refuse_dfix(&f, "element")?;
    Ok((leak(s.to_string()), f))
}

impl ScaledFormat {
    /// A scaled format, or the one-line reason it cannot be: a block scale wider than
    /// [`MAX_BLOCK_SCALE_BITS`] bits, an element format without a finite positive maximum.
    pub fn new(
        elem: &str,
        granularity: Granularity,
        scale: Scale,
        tensor_scale: bool,
    ) -> Result<ScaledFormat, FormatError> {
        let (elem_name, elem) = elem_format(elem)?;
        if let Granularity::Block(k) = granularity {
            if scale.code_bits() > MAX_BLOCK_SCALE_BITS {
                return err(format!(
                    "a block scale of {} bits ({scale}): a block scale has at most \
                     {MAX_BLOCK_SCALE_BITS} bits (use ue4m3, ue5m3, e8m0 or a 16-bit format; \
                     an f32 scale per tensor, row or column)",
                    scale.code_bits()
                ));
            }
            if k == 0 {
                return err("a block of 0 values: K >= 1");
            }
        }
        let f = ScaledFormat {
            elem_name,
            elem,
            granularity,
            scale,
            tensor_scale,
            target: 0,
        };
        let m = f.elem_max();
        if !(m.is_finite() && m > 0.0) {
            return err(format!("element format {elem}: no finite positive maximum"));
        }
        Ok(ScaledFormat {
            target: target::precision_top(&elem, m).to_bits(),
            ..f
        })
    }

    /// The element arithmetic.
    pub fn elem_calc(&self) -> Calc {
        self.elem.calc()
    }

    /// The element format's largest finite value.
    pub fn elem_max(&self) -> f64 {
        format_max(&self.elem)
    }

    /// The value a scale maps a group's amax to: the top of the element format's band of
    /// most fraction bits (`target`); a float's, fix's and LNS's largest finite value, a
    /// posit's top of the binades around 1 (posit(8, 2): 15).
    pub fn elem_target(&self) -> f64 {
        f64::from_bits(self.target)
    }

    /// ⌊log2 elem_target⌋: for float elements OCP MX's emax_elem (E4M3 8, E5M2 15, E2M1 2).
    pub fn emax_elem(&self) -> i64 {
        let (_, sig, exp) = quant::f64_parts(self.elem_target());
        exp + 63 - i64::from(sig.leading_zeros())
    }

    /// Whether `rule` can drive this format: a delayed amax needs a tensor-level amax (a
    /// tensor scale, or tensor granularity).
    pub fn check_rule(&self, rule: Rule) -> Result<(), FormatError> {
        match rule {
            Rule::Current => Ok(()),
            Rule::Delayed { .. } if self.tensor_scale => Ok(()),
            Rule::Delayed { .. } if self.granularity == Granularity::Tensor => Ok(()),
            Rule::Delayed { .. } => err(format!(
                "{self} with {rule}: a delayed amax is a tensor's; add the tensor scale (/t) \
                 or use tensor granularity"
            )),
        }
    }
}

impl ScaledFormat {
    /// TransformerEngine's per-tensor scaling of `elem` (issue 50, `lpgen train --scaling`):
    /// one f32 scale for the tensor (the decode scale S = f32(amax · 2^margin / elem_target),
    /// TE's `scale_inv`), no second level. The element saturates
    /// ([`crate::family_trait::FamilyFormat::saturating`]): a float as TE's cast to FP8 does
    /// (its finite codes are `elem`'s words), posits, takums, fix and LNS by their
    /// definitions; dfix and binary32 are refused in one line.
    pub fn per_tensor(elem: Format) -> Result<ScaledFormat, FormatError> {
        let Some(elem) = elem.saturating() else {
            return err(format!(
                "per-tensor scaling of {elem}: the {} family's words take no per-tensor scale \
                 (dfix words carry their own; binary32 overflows to infinity: use \
                 float:8:23)",
                elem.family()
            ));
        };
        let scale: Scale = "f32".parse()?;
        let f = ScaledFormat {
            elem_name: leak(elem.to_string()),
            elem,
            granularity: Granularity::Tensor,
            scale,
            tensor_scale: false,
            target: 0,
        };
        let m = f.elem_max();
        if !(m.is_finite() && m > 0.0) {
            return err(format!("element format {elem}: no finite positive maximum"));
        }
        Ok(ScaledFormat {
            target: target::precision_top(&elem, m).to_bits(),
            ..f
        })
    }

    /// Quantizes an R × K tensor with the tensor's scale code `scale` (a per-tensor format's
    /// f32 decode scale, e.g. a [`Delayed`] rule's [`Delayed::scale_word`]), recording
    /// nothing (an evaluation pass's products).
    pub fn quantize_with(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
        scale: Bits,
    ) -> Result<Quantized, FormatError> {
        if self.tensor_scale || self.granularity != Granularity::Tensor {
            return err(format!(
                "{self}: one given scale code fits a tensor-granularity format without a \
                 tensor scale"
            ));
        }
        self.quantize_at(x, rows, cols, quant::ONE_F32, Some(scale))
    }
}

impl fmt::Display for ScaledFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == NVFP4 {
            return f.write_str("nvfp4");
        }
        write!(
            f,
            "{NAME}/{}/{}/{}",
            self.elem_name, self.granularity, self.scale
        )?;
        if self.tensor_scale {
            f.write_str("/t")?;
        }
        Ok(())
    }
}

/// Whether `s` names a scaled format (`scaled/…` or `nvfp4`).
pub fn is_scaled(s: &str) -> bool {
    let s = s.trim();
    s == nvfp4::NAME || s.starts_with("scaled/")
}

impl std::str::FromStr for ScaledFormat {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<ScaledFormat, FormatError> {
        let s = s.trim();
        if s == nvfp4::NAME {
            return Ok(NVFP4);
        }
        let fields: Vec<&str> = s.split('/').collect();
        let (elem, gran, scale, t) = match fields[..] {
            [NAME, e, g, sc] => (e, g, sc, false),
            [NAME, e, g, sc, "t"] => (e, g, sc, true),
            _ => return err(format!("format {s:?}: expected {SYNTAX}")),
        };
        let mk = || ScaledFormat::new(elem, gran.parse()?, scale.parse()?, t);
        mk().map_err(|e| FormatError(format!("format {s:?}: {}", e.0)))
    }
}

/// The f32 of the tensor scale, saturating (TransformerEngine's fminf(scale, FLT_MAX)).
pub(crate) fn f32_sat() -> FloatFormat {
    FloatFormat::new(8, 23, false, true, false).expect("binary32")
}

#[cfg(test)]
mod tests;
