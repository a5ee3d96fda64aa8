//! `lpgen golden mx:ELEM[:bK] OP ARGS…`: the MX block formats' calculator (docs/formats.md,
//! "MX block formats"). Operations:
//!
//! - `quantize x1 … xn`: one block of 1..=K decimal reals (nan, inf allowed) → the scale
//!   (byte and 2^e), the element codes (hex) and the dequantized values; with `--input F`
//!   (bf16, f16, float:E:M, fix:I:F: the words `mx-enc --input F` takes) each operand is a
//!   word of F (0x bits, or a decimal real rounded to the nearest word as the F calculator
//!   reads it) and the block is `MxFormat::quantize_words` of them;
//! - `dequantize SCALE C1 … Cn`: a scale byte and 1..=K element codes (0x hex or decimal) →
//!   the values;
//! - `dot a1,b1 a2,b2 …`: two vectors (any length ≥ 1) quantized in blocks of K (the last one
//!   shorter), each block's exact dot product, and the total accumulated exactly and in f32.

use lpgen_golden::mx::{Exact, MxBlock, MxFormat, MxInput};

use crate::{emit, CliError, CliResult};

/// The operations, for help texts and refusals.
pub const OPS: &str = "quantize dequantize dot";

fn real(s: &str) -> CliResult<f64> {
    s.trim().parse::<f64>().map_err(|_| {
        CliError(format!(
            "{s:?} is not a decimal real (e.g. 0.1, -3e-2, inf or nan)"
        ))
    })
}

fn byte(s: &str, what: &str, limit: u16) -> CliResult<u8> {
    let t = s.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => t.parse::<u16>(),
    };
    match v {
        Ok(v) if v < limit => Ok(v as u8),
        _ => Err(CliError(format!(
            "{s:?} is not {what} (0x0..={:#x}, hex with 0x or decimal)",
            limit - 1
        ))),
    }
}

fn scale_text(scale: u8) -> String {
    match MxFormat::scale_exp(scale) {
        Some(e) => format!("scale 0x{scale:02x} 2^{e}"),
        None => format!("scale 0x{scale:02x} NaN"),
    }
}

fn codes_text(f: &MxFormat, b: &MxBlock) -> String {
    let digits = f.elem_width().div_ceil(4) as usize;
    let codes: Vec<String> = b.codes.iter().map(|c| format!("0x{c:0digits$x}")).collect();
    format!("codes {}", codes.join(" "))
}

fn values_text(f: &MxFormat, b: &MxBlock) -> CliResult<String> {
    let vals: Vec<String> = f.dequantize_block(b)?.iter().map(|&v| num(v)).collect();
    Ok(format!("values {}", vals.join(" ")))
}

/// A value as Rust prints an f64 (shortest round-trip digits), in scientific notation
/// outside 1e-6 ..= 1e16.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-6..=1e16).contains(&a) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// An exact value as its nearest f64, then the exact form.
pub(crate) fn exact_text(x: &Exact) -> String {
    format!("{} ({x})", num(x.to_f64()))
}

/// The lines `op` prints for `args` (`input`: the operands of `quantize` are words of it).
pub fn eval(
    f: &MxFormat,
    op: &str,
    args: &[String],
    input: Option<MxInput>,
) -> CliResult<Vec<String>> {
    if let (Some(i), false) = (input, op == "quantize") {
        return Err(CliError(format!(
            "--input {i} is for quantize (a block of words), not {op}"
        )));
    }
    match op {
        "quantize" => {
            // 1..=K values, as dequantize takes 1..=K codes and Python's quantize_block
            // takes them: a shorter block is the last one of a row.
            if args.is_empty() || args.len() > f.block {
                return Err(CliError(format!(
                    "quantize takes one block of 1..={} values for {f}, got {}",
                    f.block,
                    args.len()
                )));
            }
            let b = match input {
                None => {
                    let xs = args
                        .iter()
                        .map(|a| real(a))
                        .collect::<CliResult<Vec<_>>>()?;
                    f.quantize_block(&xs)?
                }
                Some(i) => {
                    let calc = i.format().calc();
                    let words = args
                        .iter()
                        .map(|a| calc.parse(a).map_err(CliError::from))
                        .collect::<CliResult<Vec<_>>>()?;
                    f.quantize_words(i, &words)?
                }
            };
            Ok(vec![
                scale_text(b.scale),
                codes_text(f, &b),
                values_text(f, &b)?,
            ])
        }
        "dequantize" => {
            let [scale, codes @ ..] = args else {
                return Err(CliError(
                    "dequantize takes a scale byte and 1..=K element codes".into(),
                ));
            };
            let limit = 1u16 << f.elem_width();
            let b = MxBlock {
                scale: byte(scale, "a scale byte", 256)?,
                codes: codes
                    .iter()
                    .map(|c| byte(c, &format!("a {}-bit element code", f.elem_width()), limit))
                    .collect::<CliResult<_>>()?,
            };
            Ok(vec![scale_text(b.scale), values_text(f, &b)?])
        }
        "dot" => dot(f, args),
        _ => Err(CliError(format!(
            "unknown operation {op:?} for {f}: expected {OPS}"
        ))),
    }
}

fn dot(f: &MxFormat, args: &[String]) -> CliResult<Vec<String>> {
    if args.is_empty() {
        return Err(CliError(
            "dot takes pairs a,b (e.g. 1.5,-2), at least one".into(),
        ));
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for pair in args {
        let (x, y) = pair.split_once(',').ok_or_else(|| {
            CliError(format!(
                "dot operand {pair:?} is not a pair a,b (e.g. 1.5,-2)"
            ))
        })?;
        a.push(real(x)?);
        b.push(real(y)?);
    }
    let (qa, qb) = (f.quantize(&a), f.quantize(&b));
    let mut lines = Vec::new();
    for (i, (x, y)) in qa.iter().zip(&qb).enumerate() {
        lines.push(format!(
            "block {i}: a {} {}; b {} {}; dot {}",
            scale_text(x.scale),
            codes_text(f, x),
            scale_text(y.scale),
            codes_text(f, y),
            exact_text(&f.dot_block(x, y)?)
        ));
    }
    lines.push(format!("exact {}", exact_text(&f.dot_exact(&qa, &qb)?)));
    lines.push(format!("f32 {}", num(f64::from(f.dot_f32(&qa, &qb)?))));
    Ok(lines)
}

/// Runs the calculator on the command line's operands.
pub fn run(
    f: &MxFormat,
    op: &str,
    args: &[String],
    input: Option<MxInput>,
    out: &mut dyn std::io::Write,
) -> CliResult {
    for line in eval(f, op, args, input)? {
        emit(out, &line)?;
    }
    Ok(())
}
