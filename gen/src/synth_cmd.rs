//! `lpgen synth UNIT --format F [--stages S ...] --target T` (SPEC.md §7): generate the
//! design, run the FPGA flow of `lpgen-fpga`, print its figures as a table or one JSON object.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use lpgen_fpga::board::Board;
use lpgen_fpga::{FlowOptions, Report, Target};
use lpgen_hdl::{generate, Params};

use crate::rtl_cmd::DesignArgs;
use crate::{emit, CliError, CliResult};

#[derive(Args)]
pub struct SynthArgs {
    #[command(flatten)]
    design: DesignArgs,
    /// ice40-up5k, ice40-hx8k or ecp5-85k (implied by --board)
    #[arg(long, required_unless_present = "board")]
    target: Option<String>,
    /// nextpnr placer seed
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// nextpnr target frequency in MHz (default: nextpnr's, 12 MHz)
    #[arg(long)]
    freq: Option<f64>,
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
    /// Place the design's own ports on pins instead of the serial wrapper
    #[arg(long)]
    no_wrap: bool,
    /// Keep multipliers in logic instead of DSP blocks (when a design has more multipliers
    /// than the device has DSPs)
    #[arg(long)]
    no_dsp: bool,
    /// Also pack a bitstream (icepack / ecppack) into the work directory
    #[arg(long)]
    bitstream: bool,
    /// Bitstream for a board behind a UART command interface: icebreaker or ulx3s-85f
    /// (docs/fpga.md)
    #[arg(long)]
    board: Option<String>,
    /// Divide the board oscillator by this power of two for a slow design (with --board)
    #[arg(long, default_value_t = 1)]
    clock_div: u32,
    /// Work directory for sources, logs and netlists (default: synth/<top>-<target>)
    #[arg(long)]
    work: Option<PathBuf>,
}

pub fn run(args: &SynthArgs, out: &mut dyn Write) -> CliResult {
    let params = args.design.params()?;
    let board: Option<Board> = args.board.as_deref().map(str::parse).transpose()?;
    let target: Target = match (&args.target, board) {
        (Some(t), None) => t.parse()?,
        (None, Some(b)) => b.target(),
        (Some(t), Some(b)) => {
            let t: Target = t.parse()?;
            if t != b.target() {
                return Err(CliError(format!(
                    "--board {} is an {} board, not {t}: drop --target or use --target {}",
                    b.name(),
                    b.target().device(),
                    b.target()
                )));
            }
            t
        }
        (None, None) => return Err(CliError("--target or --board is required".into())),
    };
    if board.is_none() && args.clock_div != 1 {
        return Err(CliError("--clock-div needs --board".into()));
    }
    if let Some(f) = args.freq {
        if !(f.is_finite() && f > 0.0) {
            return Err(CliError(format!(
                "--freq must be a positive number of MHz, not {f}"
            )));
        }
    }
    let design = generate(&params)?;
    let work = args.work.clone().unwrap_or_else(|| {
        let place = board.map_or(target.name(), Board::name);
        PathBuf::from("synth").join(format!("{}-{place}", design.top))
    });
    let mut opts = FlowOptions::new(target, work);
    opts.seed = args.seed;
    opts.wrap = !args.no_wrap;
    opts.freq_mhz = args.freq;
    opts.bitstream = args.bitstream;
    opts.dsp = !args.no_dsp;
    let report = match board {
        Some(b) => lpgen_fpga::board::run_board(&design, b, args.clock_div, opts)?,
        None => lpgen_fpga::run(&design, &opts)?,
    };
    let text = if args.json {
        json(&report, &params, &design.top, args.no_dsp)
    } else {
        let place =
            board.map(|b| format!("UART board top ({}, clock / {})", b.name(), args.clock_div));
        table(&report, &params, &design.top, place)
    };
    emit(out, &text)
}

fn fmax_text(r: &Report) -> String {
    r.fmax_mhz
        .map(|f| format!("{f:.2}"))
        .unwrap_or_else(|| "null".into())
}

/// One JSON object with the keys of issue 6 first, then the context.
fn json(r: &Report, p: &Params, design: &str, no_dsp: bool) -> String {
    let s = |x: &str| x.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "{{\"lc\": {}, \"ff\": {}, \"dsp\": {}, \"bram\": {}, \"fmax_mhz\": {}, \"target\": \"{}\", \"unit\": \"{}\", \"format\": \"{}\", \
\"stages\": {}, \"rows\": {}, \"cols\": {}, \"lanes\": {}, \"pe\": \"{}\", \"design\": \"{}\", \"wrapped\": {}, \"dsp_inference\": {}, \"seed\": {}, \
\"lc_available\": {}, \"dsp_available\": {}, \"bram_available\": {}, \"io\": {}, \"work\": \"{}\"}}",
        r.lc,
        r.ff,
        r.dsp,
        r.bram,
        fmax_text(r),
        r.target,
        p.unit.name(),
        p.format,
        p.stages,
        p.rows,
        p.cols,
        p.lanes,
        p.pe.name(),
        s(design),
        r.wrapped,
        !no_dsp,
        r.seed,
        r.lc_available,
        r.dsp_available,
        r.bram_available,
        r.io,
        s(&r.work.display().to_string()),
    )
}

fn table(r: &Report, p: &Params, design: &str, board: Option<String>) -> String {
    let lc_name = if r.target.is_ice40() {
        "logic cells"
    } else {
        "LUT4"
    };
    let mut rows = vec![
        ("design", design.to_string()),
        ("unit", format!("{} {}", p.unit.name(), p.format)),
        (
            "target",
            format!("{} ({}), seed {}", r.target, r.target.device(), r.seed),
        ),
        (
            "wrapper",
            if let Some(b) = board {
                b
            } else if r.wrapped {
                "serial (4 pins)".into()
            } else {
                format!("none ({} I/O)", r.io)
            },
        ),
        ("lc", format!("{} / {} {lc_name}", r.lc, r.lc_available)),
        ("ff", r.ff.to_string()),
        ("dsp", format!("{} / {}", r.dsp, r.dsp_available)),
        ("bram", format!("{} / {}", r.bram, r.bram_available)),
        ("fmax_mhz", fmax_text(r)),
        ("work", r.work.display().to_string()),
    ];
    if let Some(b) = &r.bitstream {
        rows.push(("bitstream", b.display().to_string()));
    }
    rows.iter()
        .map(|(k, v)| format!("{k:<10} {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}
