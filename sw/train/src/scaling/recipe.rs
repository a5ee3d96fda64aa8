//! A stage's scaling recipe (`--scaling STAGES=RULE`): a per-tensor rule, or a block format
//! (issue 50's FP4 recipes), with the random Hadamard transform and stochastic rounding as
//! options of the weight-gradient products.

use std::fmt;

use lpgen_golden::scale::{gemm, Rule, ScaledFormat};
use lpgen_golden::Format;

/// MXFP4: FP4 E2M1 elements with an E8M0 scale per 32 (OCP MX), as a scaled format.
pub const MXFP4: &str = "scaled/fp4:e2m1/b32/e8m0";

/// The option that applies the 16 × 16 random Hadamard transform to both operands of the
/// stage's products (the G stage's only).
pub const RHT: &str = "rht16";

/// The option that rounds the stage's operands' elements stochastically when they are
/// quantized (the G stage's only: NVIDIA's NVFP4 recipe rounds the gradients so).
pub const SR: &str = "sr";

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
    /// Hadamard transform first; `sr`: each element rounded stochastically (`block.rs`).
    Block {
        format: ScaledFormat,
        rht: bool,
        sr: bool,
    },
}

impl Recipe {
    /// `current[/ELEM]`, `delayed[:H[:MARGIN]][/ELEM]`, `nvfp4`, `mxfp4` or
    /// `scaled/ELEM/bK/SCALE[/t]`, a block recipe optionally followed by `+rht16` and `+sr`
    /// (in either order, each once); the error without the flag's name.
    pub fn parse(s: &str) -> Result<Recipe, String> {
        let mut parts = s.split('+');
        let body = parts.next().unwrap_or_default();
        let (mut rht, mut sr) = (false, false);
        for o in parts {
            let flag = match o {
                RHT => &mut rht,
                SR => &mut sr,
                _ => {
                    return Err(format!(
                        "option {o:?}: the options are +{RHT} (the 16 × 16 random Hadamard \
                         transform of the G products) and +{SR} (their stochastic rounding)"
                    ))
                }
            };
            if std::mem::replace(flag, true) {
                return Err(format!("option +{o} given twice"));
            }
        }
        let block = match body {
            "mxfp4" => Some(MXFP4),
            b if lpgen_golden::scale::is_scaled(b) => Some(b),
            _ => None,
        };
        match block {
            Some(f) => {
                let format: ScaledFormat = f.parse().map_err(|e: lpgen_golden::FormatError| e.0)?;
                gemm::check(&format).map_err(|e| e.0)?;
                Ok(Recipe::Block { format, rht, sr })
            }
            None if rht || sr => Err(format!(
                "+{} goes with a block recipe (nvfp4, mxfp4, scaled/ELEM/bK/SCALE[/t]), not a \
                 per-tensor rule",
                if rht { RHT } else { SR }
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

    /// Whether the recipe rounds its operands' elements stochastically.
    pub fn sr(&self) -> bool {
        matches!(self, Recipe::Block { sr: true, .. })
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
            Recipe::Block { format, rht, sr } => {
                write!(f, "{format}")?;
                if *rht {
                    write!(f, "+{RHT}")?;
                }
                if *sr {
                    write!(f, "+{SR}")?;
                }
                Ok(())
            }
        }
    }
}
