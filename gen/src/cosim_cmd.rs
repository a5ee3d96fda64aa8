//! `lpgen cosim UNIT --format F [--stages S --rows R --cols C --lanes L --pe KIND]
//! [--exhaustive | --vectors N] [--seed S]` (SPEC.md §5): the generated RTL, compiled with
//! Verilator, against the golden model. Ends with `N passed, M failed`; exit status 1 on any
//! mismatch, 2 on bad input.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use lpgen_verif::{rng, Mode, RunOptions, Toolchain};

use crate::rtl_cmd::DesignArgs;
use crate::{emit, CliError, CliResult};

#[derive(Args)]
pub struct CosimArgs {
    #[command(flatten)]
    design: DesignArgs,
    /// Every operand pair (posit <= 8 bits, LNS words <= 13 bits; MACs from quire states)
    #[arg(long, conflicts_with = "vectors")]
    exhaustive: bool,
    /// Corner cases, then random steps up to N (default 100000)
    #[arg(long)]
    vectors: Option<u64>,
    /// Seed of the random stimuli, decimal or 0x… (default: from the clock, printed)
    #[arg(long)]
    seed: Option<String>,
    /// Where to write the VCD of the first failing case (default: <top>-fail.vcd)
    #[arg(long)]
    vcd: Option<PathBuf>,
}

fn parse_seed(s: &str) -> CliResult<u64> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| {
        CliError(format!(
            "invalid seed {s:?}: expected a decimal or 0x-hex 64-bit number"
        ))
    })
}

pub fn run(args: &CosimArgs, out: &mut dyn Write) -> CliResult {
    let p = args.design.params()?;
    let mode = match (args.exhaustive, args.vectors) {
        (true, _) => Mode::Exhaustive,
        (false, Some(0)) => return Err(CliError("--vectors must be at least 1".into())),
        (false, Some(n)) => Mode::Vectors(n),
        (false, None) => Mode::Vectors(100_000),
    };
    let seed = match &args.seed {
        Some(s) => parse_seed(s)?,
        None => rng::fresh_seed(),
    };
    let design = lpgen_hdl::generate(&p)?;
    lpgen_verif::drivers::supported(&p, mode).map_err(|e| CliError(e.0))?;
    let tc = Toolchain::find().map_err(|e| CliError(e.0))?;
    let what = match mode {
        Mode::Exhaustive => "exhaustive".to_string(),
        Mode::Vectors(n) => format!("{n} vectors, seed {seed:#x} (replay with --seed {seed:#x})"),
    };
    emit(
        out,
        &format!(
            "cosim {}: {} on {}, {what}",
            design.top,
            p.unit.name(),
            p.format
        ),
    )?;
    out.flush()?;
    let mut opts = RunOptions::new(mode, seed);
    opts.vcd = Some(
        args.vcd
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}-fail.vcd", design.top))),
    );
    opts.progress = Some(progress());
    let report =
        lpgen_verif::drivers::run_design(&tc, &p, &design, opts).map_err(|e| CliError(e.0))?;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
    for d in &report.details {
        emit(out, &format!("MISMATCH {d}"))?;
    }
    if report.failed > report.details.len() as u64 {
        emit(
            out,
            &format!(
                "({} more mismatches not shown)",
                report.failed - report.details.len() as u64
            ),
        )?;
    }
    if let Some(v) = &report.vcd {
        emit(out, v)?;
    }
    emit(
        out,
        &format!("{} passed, {} failed", report.passed, report.failed),
    )?;
    if report.failed > 0 {
        out.flush()?;
        std::process::exit(1);
    }
    Ok(())
}

/// Progress on stderr for runs longer than two seconds: a line redrawn in place on a
/// terminal, otherwise a line every ten seconds.
fn progress() -> Box<dyn FnMut(u64, u64)> {
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut shown = 0.0f64;
    Box::new(move |done, total| {
        let t = start.elapsed().as_secs_f64();
        let every = if tty { 0.5 } else { 10.0 };
        if t < 2.0 || t - shown < every {
            return;
        }
        shown = t;
        let pct = 100.0 * done as f64 / total.max(1) as f64;
        let rate = done as f64 / t / 1e6;
        let line =
            format!("cosim: {done} of ~{total} cycles ({pct:.0}%), {rate:.2} M cycles/s, {t:.0} s");
        if tty {
            eprint!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
    })
}
