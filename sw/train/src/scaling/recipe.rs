//! A stage's scaling recipe (`--scaling STAGES=RULE`): a per-tensor rule, or a block format
//! (issue 50's FP4 recipes), with the random Hadamard transform as an option of the
//! weight-gradient products.

use std::fmt;

use lpgen_golden::scale::{gemm, Rule, ScaledFormat};
use lpgen_golden::Format;

/// MXFP4: FP4 E2M1 elements with an E8M0 scale per 32 (OCP MX), as a scaled format.
pub const MXFP4: &str = "scaled/fp4:e2m1/b32/e8m0";

/// The option that applies the 16 × 16 random Hadamard transform to both operands of the
/// stage's products (the G stage's only).
pub const RHT: &str = "rht16";

/// What the products of one stage are scaled by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recipe {
    /// One f32 scale per operand tensor, chosen by `rule` (the module doc of `scaling.rs`:
    /// the machine multiplies in binary32), the operands quantized into `element` (`/ELEM`
    /// after the rule: TransformerEngine's FP8 GEMM operands of a bf16 stage), or into the
    /// stage's own format where `None`.
    Tensor { rule: Rule, element: Option<Format> },
    /// Both operands quantized in a block format along the reduction dimension, multiplied
    /// as the golden `scale::gemm` defines it (`scaling/block.rs`); `rht`: the random
    /// Hadamard transform first.
    Block { format: ScaledFormat, rht: bool },
}

impl Recipe {
    /// `current[/ELEM]`, `delayed[:H[:MARGIN]][/ELEM]`, `nvfp4`, `mxfp4` or
    /// `scaled/ELEM/bK/SCALE[/t]`, a block recipe optionally followed by `+rht16`; the error
    /// without the flag's name.
    pub fn parse(s: &str) -> Result<Recipe, String> {
        let (body, rht) = match s.split_once('+') {
            Some((b, RHT)) => (b, true),
            Some((_, o)) => {
                return Err(format!(
                    "option {o:?}: the one option is +{RHT} (the 16 × 16 random Hadamard \
                     transform of the G products)"
                ))
            }
            None => (s, false),
        };
        let block = match body {
            "mxfp4" => Some(MXFP4),
            b if lpgen_golden::scale::is_scaled(b) => Some(b),
            _ => None,
        };
        match block {
            Some(f) => {
                let format: ScaledFormat = f.parse().map_err(|e: lpgen_golden::FormatError| e.0)?;
                gemm::exact_in_f64(&format).map_err(|e| e.0)?;
                Ok(Recipe::Block { format, rht })
            }
            None if rht => Err(format!(
                "+{RHT} goes with a block recipe (nvfp4, mxfp4, scaled/ELEM/bK/SCALE[/t])"
            )),
            None => {
                let (rule, element) = match body.split_once('/') {
                    Some((r, e)) => {
                        let e: Format = e.parse().map_err(|e: lpgen_golden::FormatError| e.0)?;
                        (r, Some(e))
                    }
                    None => (body, None),
                };
                let rule = rule.parse().map_err(|e: lpgen_golden::FormatError| e.0)?;
                Ok(Recipe::Tensor { rule, element })
            }
        }
    }

    /// The format a per-tensor recipe quantizes the operands of a `stage` product into.
    pub fn element(&self, stage: Format) -> Format {
        match self {
            Recipe::Tensor {
                element: Some(e), ..
            } => *e,
            Recipe::Tensor { element: None, .. } | Recipe::Block { .. } => stage,
        }
    }

    /// Whether the recipe applies the random Hadamard transform.
    pub fn rht(&self) -> bool {
        matches!(self, Recipe::Block { rht: true, .. })
    }
}

impl fmt::Display for Recipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipe::Tensor { rule, element } => {
                write!(f, "{rule}")?;
                match element {
                    Some(e) => write!(f, "/{e}"),
                    None => Ok(()),
                }
            }
            Recipe::Block { format, rht } => {
                write!(f, "{format}")?;
                if *rht {
                    write!(f, "+{RHT}")?;
                }
                Ok(())
            }
        }
    }
}
