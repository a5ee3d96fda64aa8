//! `lpgen golden dfix:W OP --scale E ARGS…`: the dynamic fixed point golden model as a
//! calculator. Operands (decimal reals or 0x words) and results are at scale E; a result
//! line is `0x<bits> <value>`, followed by `overflow` when it saturated and, for `dot`,
//! `overflow-at-half` when it would saturate at scale E − 1.

use lpgen_golden::dfix::{check_scale, Converted, DfixFormat};
use lpgen_golden::exact::parse_decimal;

use crate::{CliError, CliResult};

/// The ops of the dfix calculator.
pub const OPS: &str = "conv add sub neg mul sqrt dot";

fn operand(f: DfixFormat, e: i32, s: &str) -> CliResult<u64> {
    if let Some(hex) = s.strip_prefix("0x") {
        let w = u64::from_str_radix(hex, 16)
            .ok()
            .filter(|&w| f.is_word(w))
            .ok_or_else(|| CliError(format!("{s:?} is not a {}-bit word", f.width)))?;
        return Ok(w);
    }
    Ok(f.from_ratio(&parse_decimal(s)?, e).word)
}

fn show(f: DfixFormat, e: i32, c: Converted, half: Option<bool>) -> String {
    let digits = f.width.div_ceil(4) as usize;
    let mut line = format!("0x{:0digits$x} {}", c.word, f.value_string(c.word, e));
    if c.overflow {
        line.push_str(" overflow");
    }
    if half == Some(true) {
        line.push_str(" overflow-at-half");
    }
    line
}

/// One operation of `f` at `scale`, as the line to print.
pub fn eval(f: DfixFormat, op: &str, scale: Option<i64>, args: &[String]) -> CliResult<String> {
    let format = f.to_string();
    let e = check_scale(scale.ok_or_else(|| {
        CliError(format!(
            "{format} needs --scale E: its words mean integer·2^E (e.g. --scale -4)"
        ))
    })?)?;
    let want = |n: usize| -> CliResult<Vec<u64>> {
        if args.len() != n {
            return Err(CliError(format!(
                "{op} takes {n} operand{}, got {}",
                if n == 1 { "" } else { "s" },
                args.len()
            )));
        }
        args.iter().map(|a| operand(f, e, a)).collect()
    };
    Ok(match op {
        "conv" => {
            let [x] = args else {
                return Err(CliError(format!(
                    "conv takes 1 operand, got {}",
                    args.len()
                )));
            };
            let c = match x.strip_prefix("0x") {
                Some(_) => Converted {
                    word: operand(f, e, x)?,
                    overflow: false,
                },
                None => f.from_ratio(&parse_decimal(x)?, e),
            };
            show(f, e, c, None)
        }
        "add" | "sub" | "mul" => {
            let x = want(2)?;
            let c = match op {
                "add" => f.add(x[0], x[1]),
                "sub" => f.sub(x[0], x[1]),
                _ => f.mul(x[0], e, x[1], e, e),
            };
            show(f, e, c, None)
        }
        "neg" => show(f, e, f.neg(want(1)?[0]), None),
        "sqrt" => show(f, e, f.sqrt(want(1)?[0], e, e), None),
        "dot" => {
            let (mut a, mut b) = (vec![], vec![]);
            for pair in args {
                let (x, y) = pair.split_once(',').ok_or_else(|| {
                    CliError(format!(
                        "dot operand {pair:?} is not a pair a,b (e.g. 2,10)"
                    ))
                })?;
                a.push(operand(f, e, x)?);
                b.push(operand(f, e, y)?);
            }
            let r = f.dot(&a, e, &b, e, e);
            let c = Converted {
                word: r.word,
                overflow: r.overflow,
            };
            show(f, e, c, Some(r.overflow_at_half))
        }
        _ => {
            return Err(CliError(format!(
                "unknown operation {op:?} for {format}: expected {OPS}"
            )))
        }
    })
}
