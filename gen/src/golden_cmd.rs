//! `lpgen golden FORMAT OP ARGS…` (SPEC.md §8).

use std::io::{BufRead, Write};

use clap::Args;
use std::cell::RefCell;

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::{BinOp, Bits, Calc, Format, Rounder, Rounding, SumMode};

use crate::{emit, CliError, CliResult};

#[derive(Args)]
pub struct GoldenArgs {
    /// Number format (from the family registry; dfix:W takes --scale)
    #[arg(help = format!(
        "Number format: {} (dfix:W: dynamic fixed point, with --scale), or {}, or {}",
        lpgen_golden::family::syntaxes(),
        lpgen_golden::mx::SYNTAX,
        lpgen_golden::scale::SYNTAX
    ))]
    format: String,
    #[arg(help = format!(
        "add sub mul div max min cmp neg abs sqrt exp ln sum dot encode; for mx formats: {}; \
         for scaled formats: {}",
        crate::golden_mx::OPS,
        crate::golden_scaled::OPS
    ))]
    op: String,
    /// Operands: decimal reals or 0x bit patterns; for dot, pairs a,b
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// Accumulation of sum and dot: naive (default), kahan, pairwise or quire; for dot of
    /// float formats also a GPU matrix unit's `fdpa:PRESET[:promoteN]` (volta, ampere, ada,
    /// hopper, blackwell) or `fdpa:L:F:RHO[:promoteN]`, which prints its binary32 (binary16)
    /// output word (docs/formats.md "fdpa")
    #[arg(long)]
    mode: Option<String>,
    /// dot in an fdpa mode: the addend C, a decimal real or 0x bit pattern of the output
    /// format (binary32, or binary16 for rne-f16) [default: 0]
    #[arg(long, allow_negative_numbers = true)]
    init: Option<String>,
    /// exp and ln as seed 000's Taylor series of LNS operations (LNS only)
    #[arg(long)]
    taylor: bool,
    /// Read one operation's operands per line from standard input; print one result per line
    #[arg(long)]
    stdin: bool,
    /// dfix:W only: the group's scale exponent E (a word means integer·2^E)
    #[arg(long, allow_negative_numbers = true)]
    scale: Option<i64>,
    /// Rounding of results (and of encode): nearest, or stochastic:R (R random bits, 1..32;
    /// float and fix formats; docs/formats.md "Stochastic rounding"). Operands are read with
    /// nearest; the random stream runs on across --stdin lines, one draw per rounded result.
    /// [default: nearest]
    #[arg(long)]
    rounding: Option<String>,
    /// The seed of stochastic rounding's generator (default 0), as `lpgen rtl
    /// --rounding-seed` takes it (`--seed`: the same, an older spelling)
    #[arg(long, alias = "seed")]
    rounding_seed: Option<u64>,
    /// mx formats, quantize: the operands are words of this format (bf16, f16, float:E:M up
    /// to binary32, fix:I:F; 0x bits or decimals rounded to it), as mx-enc --input takes them
    #[arg(long)]
    input: Option<String>,
    /// Scaled formats (nvfp4, scaled/…), quantize: the tensor amax A the tensor scale is
    /// chosen from (s_enc = 6·448/A for nvfp4) [default: the largest |x| given]
    #[arg(long, allow_negative_numbers = true)]
    tensor_amax: Option<String>,
    /// Scaled formats, quantize: the operands are R rows (row-major) [default: 1]
    #[arg(long)]
    rows: Option<usize>,
    /// Scaled formats: current (default) or `delayed[:H[:MARGIN]]` (TransformerEngine's amax
    /// history of H tensors, default 1024; with --stdin, one tensor per line)
    #[arg(long)]
    scaling: Option<String>,
}

#[derive(Clone, Copy)]
enum Op {
    Bin(BinOp),
    Cmp,
    Neg,
    Abs,
    Sqrt,
    Exp,
    Ln,
    Sum,
    Dot,
    Encode,
}

fn parse_op(s: &str) -> CliResult<Op> {
    Ok(match s {
        "add" => Op::Bin(BinOp::Add),
        "sub" => Op::Bin(BinOp::Sub),
        "mul" => Op::Bin(BinOp::Mul),
        "div" => Op::Bin(BinOp::Div),
        "max" => Op::Bin(BinOp::Max),
        "min" => Op::Bin(BinOp::Min),
        "cmp" => Op::Cmp,
        "neg" => Op::Neg,
        "abs" => Op::Abs,
        "sqrt" => Op::Sqrt,
        "exp" => Op::Exp,
        "ln" => Op::Ln,
        "sum" => Op::Sum,
        "dot" => Op::Dot,
        "encode" => Op::Encode,
        _ => {
            return Err(CliError(format!(
            "unknown operation {s:?}: expected add sub mul div max min cmp neg abs sqrt exp ln sum dot encode"
        )))
        }
    })
}

/// `0x<bits> <value>` with as many hex digits as the format's width needs.
fn show(c: &Calc, bits: Bits) -> String {
    let digits = c.format().width().div_ceil(4) as usize;
    format!("0x{bits:0digits$x} {}", c.value_string(bits))
}

struct Job {
    calc: Calc,
    op: Op,
    mode: SumMode,
    /// `--init`: C of a dot product in an fdpa mode.
    init: Option<String>,
    taylor: bool,
    /// The rounding of results; its generator advances once per rounded result.
    rounder: RefCell<Rounder>,
}

impl Job {
    fn operands(&self, args: &[String], want: usize) -> CliResult<Vec<Bits>> {
        if args.len() != want {
            return Err(CliError(format!(
                "this operation takes {want} operand{}, got {}",
                if want == 1 { "" } else { "s" },
                args.len()
            )));
        }
        args.iter()
            .map(|a| self.calc.parse(a).map_err(CliError::from))
            .collect()
    }

    /// D = Σ a_k·b_k + C in fdpa mode `m`: the output word (binary32 or binary16) and its
    /// value, C read in that format.
    fn fdpa(&self, m: Fdpa, a: &[Bits], b: &[Bits]) -> CliResult<String> {
        let c = &self.calc;
        // No products: the mode checked against the format, and its output format.
        let (_, out) = c.fdpa(m, &[], &[], 0)?;
        let out = Calc::Float(out);
        let init = match &self.init {
            Some(s) => out
                .parse(s)
                .map_err(|e| CliError(format!("--init {s}: {e}")))?,
            None => 0,
        };
        let (word, _) = c.fdpa(m, a, b, init)?;
        Ok(show(&out, word))
    }

    /// One operation on its operands, formatted as the line to print.
    fn eval(&self, args: &[String]) -> CliResult<String> {
        let c = &self.calc;
        let one = |f: &dyn Fn(Bits) -> Bits| -> CliResult<String> {
            let x = self.operands(args, 1)?;
            Ok(show(c, f(x[0])))
        };
        match self.op {
            Op::Bin(op) => {
                let x = self.operands(args, 2)?;
                let mut r = self.rounder.borrow_mut();
                Ok(show(c, c.binop_with(op, x[0], x[1], &mut r)?))
            }
            Op::Encode => {
                let [x] = args else {
                    return Err(CliError(format!(
                        "encode takes 1 operand (a decimal real), got {}",
                        args.len()
                    )));
                };
                let mut r = self.rounder.borrow_mut();
                // A decimal's exact value, or nan / inf / -inf.
                let word = match lpgen_golden::exact::parse_decimal(x.trim()) {
                    Ok(ratio) => c.from_ratio_with(&ratio, &mut r)?,
                    Err(_) => match x.trim().parse::<f64>() {
                        Ok(v) if !v.is_finite() => c.from_f64_with(v, &mut r)?,
                        _ => {
                            return Err(CliError(format!(
                                "encode takes a decimal real (e.g. 0.1, -3e-2, inf or nan), \
                                 not {x:?}"
                            )))
                        }
                    },
                };
                Ok(show(c, word))
            }
            Op::Cmp => {
                let x = self.operands(args, 2)?;
                Ok(match c.cmp(x[0], x[1]) {
                    Some(o) => (o as i8).to_string(),
                    None => "unordered".to_string(),
                })
            }
            Op::Neg => one(&|x| c.neg(x)),
            Op::Abs => one(&|x| c.abs(x)),
            Op::Sqrt => {
                let x = self.operands(args, 1)?;
                let mut r = self.rounder.borrow_mut();
                Ok(show(c, c.sqrt_with(x[0], &mut r)?))
            }
            Op::Exp | Op::Ln => {
                let is_exp = matches!(self.op, Op::Exp);
                match (self.taylor, c) {
                    (true, Calc::Lns(l)) if is_exp => one(&|x| l.exp_taylor(x)),
                    (true, Calc::Lns(l)) => one(&|x| l.ln_taylor(x)),
                    (false, _) if is_exp => one(&|x| c.exp(x)),
                    (false, _) => one(&|x| c.ln(x)),
                    (true, _) => Err(CliError(format!(
                        "--taylor applies to LNS formats only, not {}",
                        c.format()
                    ))),
                }
            }
            Op::Sum => {
                let xs = args
                    .iter()
                    .map(|a| c.parse(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(show(c, c.sum(self.mode, &xs)?))
            }
            Op::Dot => {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for pair in args {
                    let (x, y) = pair.split_once(',').ok_or_else(|| {
                        CliError(format!(
                            "dot operand {pair:?} is not a pair a,b (e.g. 2,10)"
                        ))
                    })?;
                    a.push(c.parse(x)?);
                    b.push(c.parse(y)?);
                }
                match self.mode {
                    SumMode::Fdpa(m) => self.fdpa(m, &a, &b),
                    SumMode::Naive | SumMode::Kahan | SumMode::Pairwise | SumMode::Quire => {
                        Ok(show(c, c.dot(self.mode, &a, &b)?))
                    }
                }
            }
        }
    }
}

/// The rounder of `--rounding` and `--rounding-seed`, refused in one line where the format's
/// family defines no stochastic rounding or the seed has nothing to seed.
fn rounder(calc: &Calc, rounding: &str, seed: Option<u64>) -> CliResult<Rounder> {
    let rounding: Rounding = rounding.parse()?;
    calc.check_rounding(rounding)?;
    if rounding == Rounding::Nearest && seed.is_some() {
        return Err(CliError(
            "--rounding-seed (--seed) applies to --rounding stochastic:R only, not to nearest"
                .into(),
        ));
    }
    Ok(Rounder::new(rounding, seed.unwrap_or(0)))
}

/// The scaled formats' calculator (`nvfp4`, `scaled/…`), its flags checked.
fn run_scaled(args: &GoldenArgs, out: &mut dyn Write) -> CliResult {
    let format: lpgen_golden::scale::ScaledFormat = args.format.parse()?;
    if args.taylor
        || args.mode.is_some()
        || args.init.is_some()
        || args.scale.is_some()
        || args.rounding.is_some()
        || args.rounding_seed.is_some()
        || args.input.is_some()
    {
        return Err(CliError(format!(
            "{format} takes --tensor-amax, --rows, --scaling and --stdin, not --taylor, --mode, \
             --init, --scale, --rounding, --rounding-seed or --input (every step rounds to \
             nearest even)"
        )));
    }
    let rows = args.rows.unwrap_or(1);
    if rows == 0 {
        return Err(CliError("--rows 0: a tensor has at least one row".into()));
    }
    let job = crate::golden_scaled::ScaledJob {
        format,
        op: args.op.clone(),
        rows,
        tensor_amax: match &args.tensor_amax {
            Some(a) => Some(crate::golden_scaled::tensor_amax(a)?),
            None => None,
        },
        rule: args.scaling.as_deref().unwrap_or("current").parse()?,
    };
    job.run(&args.args, args.stdin, out)
}

pub fn run(args: &GoldenArgs, out: &mut dyn Write) -> CliResult {
    if lpgen_golden::scale::is_scaled(&args.format) {
        return run_scaled(args, out);
    }
    if args.tensor_amax.is_some() || args.rows.is_some() || args.scaling.is_some() {
        return Err(CliError(format!(
            "--tensor-amax, --rows and --scaling are for scaled formats ({}), not {}",
            lpgen_golden::scale::SYNTAX,
            args.format
        )));
    }
    if lpgen_golden::mx::is_mx(&args.format) {
        // A block format, not a registered family (docs/decisions.md): its own calculator.
        let f: lpgen_golden::MxFormat = args.format.parse()?;
        // Any of these given is refused, its default value too: none applies.
        if args.stdin
            || args.taylor
            || args.mode.is_some()
            || args.init.is_some()
            || args.scale.is_some()
            || args.rounding.is_some()
            || args.rounding_seed.is_some()
        {
            return Err(CliError(format!(
                "{f} takes operands on the command line, without --stdin, --taylor, --mode, \
                 --init, --scale, --rounding or --rounding-seed (MX conversion rounds to nearest, and \
                 dot accumulates each block exactly)"
            )));
        }
        let input = match &args.input {
            Some(i) => Some(i.parse::<lpgen_golden::mx::MxInput>()?),
            None => None,
        };
        return crate::golden_mx::run(&f, &args.op, &args.args, input, out);
    }
    if let Some(i) = &args.input {
        return Err(CliError(format!(
            "--input {i} is for mx formats' quantize (a block of words), not {}",
            args.format
        )));
    }
    let format: Format = args.format.parse()?;
    let calc = format.calc();
    // Asked of the family, before any family's own path (dfix's below).
    let rounding = args.rounding.as_deref().unwrap_or("nearest");
    let rounder = rounder(&calc, rounding, args.rounding_seed)?;
    if let Format::Dfix(f) = format {
        // The dfix family's calculator: operands and results at the group's scale.
        if args.stdin || args.taylor || args.mode.is_some() || args.init.is_some() {
            return Err(CliError(
                "dfix formats take operands on the command line, without --stdin, --taylor, --mode or --init"
                    .into(),
            ));
        }
        return emit(
            out,
            &crate::golden_dfix::eval(f, &args.op, args.scale, &args.args)?,
        );
    }
    if args.scale.is_some() {
        return Err(CliError(format!(
            "--scale applies to dfix:W formats, not {:?}",
            args.format
        )));
    }
    let job = Job {
        calc,
        op: parse_op(&args.op)?,
        mode: args.mode.as_deref().unwrap_or("naive").parse()?,
        init: args.init.clone(),
        taylor: args.taylor,
        rounder: RefCell::new(rounder),
    };
    if job.rounder.borrow().rounding() != Rounding::Nearest
        && matches!(job.op, Op::Exp | Op::Ln | Op::Sum | Op::Dot)
    {
        return Err(CliError(format!(
            "--rounding {} applies to add sub mul div sqrt encode (and max min cmp neg abs, \
             which do not round), not to {}: stochastic exp, ln, sum and dot are not defined yet",
            rounding, args.op
        )));
    }
    if args.mode.is_some() && !matches!(job.op, Op::Sum | Op::Dot) {
        return Err(CliError("--mode applies to sum and dot only".into()));
    }
    if let Some(i) = &args.init {
        if !matches!((job.op, job.mode), (Op::Dot, SumMode::Fdpa(_))) {
            return Err(CliError(format!(
                "--init {i} is the addend C of dot in an fdpa mode (--mode fdpa:…), not of {} \
                 in mode {}",
                args.op, job.mode
            )));
        }
    }
    if args.taylor && !matches!(job.op, Op::Exp | Op::Ln) {
        return Err(CliError(format!(
            "--taylor applies to exp and ln (LNS formats), not to {}",
            args.op
        )));
    }
    if !args.stdin {
        return emit(out, &job.eval(&args.args)?);
    }
    if !args.args.is_empty() {
        return Err(CliError(
            "with --stdin the operands come from standard input, not the command line".into(),
        ));
    }
    let mut stdin = std::io::stdin().lock();
    let mut raw = Vec::new();
    for i in 0.. {
        raw.clear();
        if stdin.read_until(b'\n', &mut raw)? == 0 {
            break;
        }
        let line = std::str::from_utf8(&raw)
            .map_err(|e| CliError(format!("stdin line {}: not UTF-8 text ({e})", i + 1)))?;
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        let result = job
            .eval(&words)
            .map_err(|e| CliError(format!("stdin line {}: {}", i + 1, e.0)))?;
        emit(out, &result)?;
    }
    Ok(())
}

/// For the demo: one operation, parsed and printed as the command line would.
pub fn line(format: &str, op: &str, args: &[&str], mode: &str) -> CliResult<String> {
    let format: Format = format.parse()?;
    let job = Job {
        calc: format.calc(),
        op: parse_op(op)?,
        mode: mode.parse()?,
        init: None,
        taylor: false,
        rounder: RefCell::new(Rounder::nearest()),
    };
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    job.eval(&args)
}
