//! `lpgen golden nvfp4 quantize x1 … x16 [--tensor-amax A]` and `lpgen golden
//! scaled/ELEM/GRAN/SCALE[/t] quantize x… [--rows R] [--tensor-amax A] [--scaling RULE]`:
//! the scaled formats' calculator (docs/formats.md, "Scaled formats and NVFP4").
//!
//! The operands are one R × K tensor, row-major (R = `--rows`, default 1; K = the count / R).
//! It prints `tensor-scale 0x<f32> <value>` where the format has a tensor scale, one
//! `scale 0x<code> <value>` per group (blocks row by row), `codes 0x…` and `values …` (each
//! dequantized value rounded once to f64). With `--stdin` every line is one tensor, in order:
//! under `--scaling delayed:H[:MARGIN]` each is quantized with the scale its predecessors'
//! amax history chose (TransformerEngine's delayed scaling), and `--tensor-amax` does not apply.
//!
//! `lpgen golden nvfp4 dot a1,b1 a2,b2 …` (16·n pairs) quantizes both vectors as NVFP4 (each
//! its own tensor amax) and prints each block pair's scales, codes and exact dot product
//! S_a·S_b·Σq_a·q_b, then the total exactly (divided by s_a·s_b, rounded once to f64) and
//! accumulated in f32 (`lpgen_golden::scale::dot`).

use std::io::BufRead;

use lpgen_golden::mx::Accumulation;
use lpgen_golden::scale::{dot, Delayed, Nvfp4Block, Quantized, Rule, ScaledFormat, NVFP4};

use crate::golden_mx::{exact_text, num};
use crate::{emit, CliError, CliResult};

/// The operations, for help texts and refusals.
pub const OPS: &str = "quantize, and dot for nvfp4";

/// What the command line gives a scaled format's calculator.
pub struct ScaledJob {
    pub format: ScaledFormat,
    pub op: String,
    pub rows: usize,
    pub tensor_amax: Option<f64>,
    pub rule: Rule,
}

fn real(s: &str, what: &str) -> CliResult<f64> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(CliError(format!(
            "{s:?} is not a finite decimal real {what} (e.g. 0.1, -3e-2)"
        ))),
    }
}

/// `--tensor-amax A`, a finite real >= 0.
pub fn tensor_amax(s: &str) -> CliResult<f64> {
    let a = real(s, "for --tensor-amax")?;
    if a < 0.0 {
        return Err(CliError(format!(
            "--tensor-amax {s}: an amax is >= 0 (the largest |x| of the tensor)"
        )));
    }
    Ok(a)
}

/// The lines of one quantized tensor.
fn lines(f: &ScaledFormat, q: &Quantized) -> CliResult<Vec<String>> {
    let mut out = Vec::new();
    if f.tensor_scale {
        let s = q.tensor_scale;
        out.push(format!(
            "tensor-scale 0x{s:08x} {}",
            num(f32::from_bits(s).into())
        ));
    }
    let sd = f.scale.code_bits().div_ceil(4) as usize;
    for &c in &q.scales {
        out.push(format!("scale 0x{c:0sd$x} {}", num(f.scale.value(c))));
    }
    let ed = f.elem.width().div_ceil(4) as usize;
    let codes: Vec<String> = q.codes.iter().map(|c| format!("0x{c:0ed$x}")).collect();
    out.push(format!("codes {}", codes.join(" ")));
    let values: Vec<String> = f.dequantize(q)?.iter().map(|&v| num(v)).collect();
    out.push(format!("values {}", values.join(" ")));
    Ok(out)
}

impl ScaledJob {
    /// The tensor of `args`: R rows of K values.
    fn tensor(&self, args: &[String]) -> CliResult<(Vec<f64>, usize)> {
        let xs = args
            .iter()
            .map(|a| real(a, "to quantize"))
            .collect::<CliResult<Vec<_>>>()?;
        if xs.is_empty() || xs.len() % self.rows != 0 {
            return Err(CliError(format!(
                "quantize takes R × K values (R = --rows {}), got {}",
                self.rows,
                xs.len()
            )));
        }
        let cols = xs.len() / self.rows;
        Ok((xs, cols))
    }

    fn check_op(&self) -> CliResult {
        if self.op == "dot" && self.format == NVFP4 {
            return Ok(());
        }
        if self.op != "quantize" {
            return Err(CliError(format!(
                "unknown operation {:?} for {}: expected {OPS}",
                self.op, self.format
            )));
        }
        Ok(())
    }

    /// The lines `quantize` (or `dot`) prints for one tensor under the current rule.
    pub fn eval(&self, args: &[String]) -> CliResult<Vec<String>> {
        self.check_op()?;
        if self.op == "dot" {
            return nvfp4_dot(args, self.tensor_amax);
        }
        let (xs, cols) = self.tensor(args)?;
        let q = self
            .format
            .quantize(&xs, self.rows, cols, self.tensor_amax)?;
        lines(&self.format, &q)
    }

    /// Runs on the command line's operands, or on standard input's lines (one tensor each,
    /// in order, the delayed rule's history carried from line to line).
    pub fn run(&self, args: &[String], stdin: bool, out: &mut dyn std::io::Write) -> CliResult {
        self.check_op()?;
        if let (Rule::Delayed { .. }, Some(a)) = (self.rule, self.tensor_amax) {
            return Err(CliError(format!(
                "--tensor-amax {a} is for the current rule: under {} the amax comes from the \
                 history",
                self.rule
            )));
        }
        if let Rule::Delayed { .. } = self.rule {
            self.format.check_rule(self.rule)?;
        }
        if !stdin {
            if let Rule::Delayed { .. } = self.rule {
                return Err(CliError(format!(
                    "--scaling {} runs over a sequence of tensors: give them one per line \
                     with --stdin",
                    self.rule
                )));
            }
            for l in self.eval(args)? {
                emit(out, &l)?;
            }
            return Ok(());
        }
        if !args.is_empty() {
            return Err(CliError(
                "with --stdin the operands come from standard input, not the command line".into(),
            ));
        }
        let mut delayed = match self.rule {
            Rule::Current => None,
            Rule::Delayed { .. } => Some(Delayed::new(self.format, self.rule)?),
        };
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.map_err(|e| CliError(format!("stdin line {}: {e}", i + 1)))?;
            let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            let at = |e: CliError| CliError(format!("stdin line {}: {}", i + 1, e.0));
            let result = match &mut delayed {
                None => self.eval(&words).map_err(at)?,
                Some(d) => {
                    let (xs, cols) = self.tensor(&words).map_err(at)?;
                    let q = d.quantize(&xs, self.rows, cols).map_err(|e| at(e.into()))?;
                    lines(&self.format, &q).map_err(at)?
                }
            };
            for l in result {
                emit(out, &l)?;
            }
        }
        Ok(())
    }
}

fn block_text(b: &Nvfp4Block) -> String {
    let codes: Vec<String> = b.codes.iter().map(|c| format!("0x{c:x}")).collect();
    format!(
        "scale 0x{:02x} {} codes {}",
        b.scale,
        num(NVFP4.scale.value(u64::from(b.scale))),
        codes.join(" ")
    )
}

/// `nvfp4 dot a1,b1 …`: both vectors quantized (each its own tensor amax), the block pairs'
/// exact dot products, the exact and the f32-accumulated totals.
fn nvfp4_dot(args: &[String], tensor_amax: Option<f64>) -> CliResult<Vec<String>> {
    if let Some(a) = tensor_amax {
        return Err(CliError(format!(
            "--tensor-amax {a} is for quantize: dot takes each vector's own amax"
        )));
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for pair in args {
        let (x, y) = pair.split_once(',').ok_or_else(|| {
            CliError(format!(
                "dot operand {pair:?} is not a pair a,b (e.g. 1.5,-2)"
            ))
        })?;
        a.push(real(x, "in a dot operand")?);
        b.push(real(y, "in a dot operand")?);
    }
    let k = a.len();
    if k == 0 {
        return Err(CliError(
            "dot takes 16·n pairs a,b (e.g. 1.5,-2), at least 16".into(),
        ));
    }
    let qa = NVFP4.quantize(&a, 1, k, None)?.nvfp4_blocks();
    let qb = NVFP4.quantize(&b, 1, k, None)?.nvfp4_blocks();
    let mut lines = vec![format!(
        "tensor-scales a 0x{:08x} {} b 0x{:08x} {}",
        qa[0].tensor_scale,
        num(f32::from_bits(qa[0].tensor_scale).into()),
        qb[0].tensor_scale,
        num(f32::from_bits(qb[0].tensor_scale).into())
    )];
    for (i, (x, y)) in qa.iter().zip(&qb).enumerate() {
        lines.push(format!(
            "block {i}: a {}; b {}; dot {}",
            block_text(x),
            block_text(y),
            exact_text(&dot::dot_block(x, y)?)
        ));
    }
    lines.push(format!(
        "exact {}",
        num(dot::dot(&qa, &qb, Accumulation::Exact)?)
    ));
    lines.push(format!(
        "f32 {}",
        num(dot::dot(&qa, &qb, Accumulation::F32)?)
    ));
    Ok(lines)
}
