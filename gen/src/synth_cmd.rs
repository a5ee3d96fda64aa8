//! `lpgen synth UNIT --format F [--stages S ...] --target T` (SPEC.md §7): generate the
//! design, run the FPGA flow of `lpgen-fpga`, print its figures as a table or one JSON object.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use lpgen_fpga::board::Board;
use lpgen_fpga::{FlowOptions, Report, Target};
use lpgen_hdl::{generate, Params};
use serde::{Deserialize, Serialize};

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
    /// Synthesize an array's PE module once (Yosys keep_hierarchy) instead of flattening
    /// it into R×C copies first
    #[arg(long)]
    keep_hierarchy: bool,
    /// Lock each array PE's multipliers to DSP sites in the array's own order, so that its
    /// logic is placed beside its DSP and its neighbours' (ecp5-85k; docs/fpga.md)
    #[arg(long)]
    floorplan: bool,
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
    /// Directory for sources, logs and netlists (default: `synth/<top>-<target>`), as `lpgen
    /// rtl` and `lpgen train` name theirs (`--work` is the old spelling, a hidden alias)
    #[arg(long = "out", alias = "work")]
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
    if args.keep_hierarchy {
        opts.keep_hierarchy = pe_modules(&design);
        if opts.keep_hierarchy.is_empty() {
            return Err(CliError(format!(
                "--keep-hierarchy keeps an array's PE module, and {} has none: drop it",
                design.top
            )));
        }
    }
    if args.floorplan {
        if params.unit != lpgen_hdl::Unit::Array {
            return Err(CliError(format!(
                "--floorplan places an array's PEs, and {} is not an array: drop --floorplan",
                params.unit.name()
            )));
        }
        opts.floorplan = Some((params.rows, params.cols));
    }
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

/// The design's array PE modules (`lpgen_pe_…`, docs/rtl.md).
fn pe_modules(design: &lpgen_hdl::Design) -> Vec<String> {
    design
        .verilog
        .names()
        .iter()
        .filter_map(|file| file.strip_suffix(".v"))
        .filter(|module| module.starts_with(lpgen_hdl::units::PE_MODULE_PREFIX))
        .map(String::from)
        .collect()
}

fn fmax_text(r: &Report) -> String {
    r.fmax_mhz
        .map(|f| format!("{f:.2}"))
        .unwrap_or_else(|| "null".into())
}

/// The object `lpgen synth --json` prints (docs/fpga.md): the keys of issue 6 first, then the
/// context. scripts/fpga-sweep.sh caches these objects and keeps them as the run records of
/// docs/fpga-runs.jsonl; it and scripts/fpga-render.py read them with Python's json module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthReport {
    pub lc: u64,
    pub ff: u64,
    pub dsp: u64,
    pub bram: u64,
    /// Post-route Fmax of `clk` in MHz, to 0.01 MHz; `null` for a design without a clocked
    /// path.
    pub fmax_mhz: Option<f64>,
    pub target: String,
    pub unit: String,
    pub format: String,
    pub stages: u32,
    pub rows: u32,
    pub cols: u32,
    pub lanes: u32,
    pub pe: String,
    /// The synthesized design's top module (inside the wrapper when wrapped).
    pub design: String,
    pub wrapped: bool,
    pub dsp_inference: bool,
    /// Synthesized with `--keep-hierarchy` (absent in records of before it: false).
    #[serde(default)]
    pub keep_hierarchy: bool,
    /// The serial wrapper reduced the outputs through a pipelined XOR tree
    /// (`lpgen_fpga::wrap::XOR_PER_LEVEL` bits per level). Records of before it (false) were
    /// measured with one cycle of XOR over every output bit, which limited large designs.
    #[serde(default)]
    pub wrapper_xor_tree: bool,
    /// The array's multipliers were locked to DSP sites in the array's order (`--floorplan`;
    /// absent in records of before it: false).
    #[serde(default)]
    pub floorplan: bool,
    /// Generated modules the flow replaced by the target's own primitive
    /// (`lpgen_fpga::tech`: the ECP5's registered multiplier). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced_modules: Vec<String>,
    pub seed: u64,
    pub lc_available: u64,
    pub dsp_available: u64,
    pub bram_available: u64,
    pub io: u64,
    pub work: String,
}

impl SynthReport {
    pub fn new(r: &Report, p: &Params, design: &str, no_dsp: bool) -> SynthReport {
        SynthReport {
            lc: r.lc,
            ff: r.ff,
            dsp: r.dsp,
            bram: r.bram,
            // The figure as the table prints it (nextpnr's own two decimals); a non-finite
            // figure stays non-finite and is written as null.
            fmax_mhz: r.fmax_mhz.map(|f| format!("{f:.2}").parse().unwrap_or(f)),
            target: r.target.name().to_string(),
            unit: p.unit.name().to_string(),
            format: p.format_name(),
            stages: p.stages,
            rows: p.rows,
            cols: p.cols,
            lanes: p.lanes,
            pe: p.pe.name().to_string(),
            design: design.to_string(),
            wrapped: r.wrapped,
            dsp_inference: !no_dsp,
            keep_hierarchy: r.keep_hierarchy,
            wrapper_xor_tree: r.wrapped,
            floorplan: r.floorplanned_dsps > 0,
            replaced_modules: r.replaced_modules.clone(),
            seed: r.seed,
            lc_available: r.lc_available,
            dsp_available: r.dsp_available,
            bram_available: r.bram_available,
            io: r.io,
            work: r.work.display().to_string(),
        }
    }

    /// serde_json's compact form, `{"lc":364,"ff":28,...}`: one line, without a newline.
    /// A non-finite `fmax_mhz` is written as `null`.
    pub fn to_json(&self) -> String {
        // Plain strings, integers and an optional float: serializing cannot fail.
        serde_json::to_string(self).expect("a synth report serializes")
    }
}

fn json(r: &Report, p: &Params, design: &str, no_dsp: bool) -> String {
    SynthReport::new(r, p, design, no_dsp).to_json()
}

fn table(r: &Report, p: &Params, design: &str, board: Option<String>) -> String {
    let lc_name = if r.target.is_ice40() {
        "logic cells"
    } else {
        "LUT4"
    };
    let mut rows = vec![
        ("design", design.to_string()),
        ("unit", format!("{} {}", p.unit.name(), p.format_name())),
        (
            "target",
            format!("{} ({}), seed {}", r.target, r.target.device(), r.seed),
        ),
        (
            "wrapper",
            if let Some(b) = board {
                b
            } else if r.wrapped {
                format!(
                    "serial (4 pins; outputs XOR-reduced {} bits per register level)",
                    lpgen_fpga::wrap::XOR_PER_LEVEL
                )
            } else {
                format!("none ({} I/O)", r.io)
            },
        ),
        (
            "synthesis",
            if r.keep_hierarchy {
                "PE module kept (keep_hierarchy)".into()
            } else {
                "flattened".to_string()
            },
        ),
        (
            "floorplan",
            if r.floorplanned_dsps > 0 {
                format!("{} multipliers locked to DSP sites", r.floorplanned_dsps)
            } else {
                "none (nextpnr places every cell)".into()
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

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_hdl::Unit;

    fn report(fmax_mhz: Option<f64>) -> Report {
        Report {
            target: Target::Ice40Up5k,
            top: "lpgen_lns_mul_lns_5_6_s1_wrap".into(),
            wrapped: true,
            keep_hierarchy: false,
            replaced_modules: vec![],
            floorplanned_dsps: 0,
            lc: 364,
            lc_available: 5280,
            ff: 28,
            dsp: 0,
            dsp_available: 8,
            bram: 0,
            bram_available: 30,
            io: 4,
            fmax_mhz,
            clocks: vec![],
            seed: 1,
            work: PathBuf::from("synth/a \"b\""),
            bitstream: None,
        }
    }

    #[test]
    fn json_is_one_line_with_every_key_and_round_trips() {
        let p = Params::new(Unit::LnsMul, "lns:5:6".parse().unwrap()).stages(1);
        let text = json(&report(Some(7.72)), &p, "lpgen_lns_mul_lns_5_6_s1", false);
        assert!(!text.contains('\n'), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let want = serde_json::json!({
            "lc": 364, "ff": 28, "dsp": 0, "bram": 0, "fmax_mhz": 7.72,
            "target": "ice40-up5k", "unit": "lns-mul", "format": "lns:5:6",
            "stages": 1, "rows": 1, "cols": 1, "lanes": 1, "pe": "lns-kahan",
            "design": "lpgen_lns_mul_lns_5_6_s1", "wrapped": true,
            "dsp_inference": true, "keep_hierarchy": false, "wrapper_xor_tree": true,
            "floorplan": false,
            "seed": 1, "lc_available": 5280,
            "dsp_available": 8, "bram_available": 30, "io": 4,
            "work": "synth/a \"b\"",
        });
        assert_eq!(v, want);
        // The keys of issue 6 come first.
        assert!(text.starts_with("{\"lc\":"), "{text}");
        let back: SynthReport = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back,
            SynthReport::new(&report(Some(7.72)), &p, "lpgen_lns_mul_lns_5_6_s1", false)
        );
        assert_eq!(back.to_json(), text);
        assert_eq!(back.work, "synth/a \"b\"");
    }

    #[test]
    fn json_fmax_is_rounded_and_null_when_missing_or_not_finite() {
        let p = Params::new(Unit::LnsMul, "lns:5:6".parse().unwrap());
        let fmax = |f: Option<f64>| {
            let text = json(&report(f), &p, "t", true);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["dsp_inference"], false);
            v["fmax_mhz"].clone()
        };
        assert_eq!(fmax(Some(12.0)), serde_json::json!(12.0));
        assert_eq!(fmax(Some(7.724999)), serde_json::json!(7.72));
        assert_eq!(fmax(Some(86.3449)), serde_json::json!(86.34));
        assert!(fmax(None).is_null());
        assert!(fmax(Some(f64::NAN)).is_null());
        assert!(fmax(Some(f64::INFINITY)).is_null());
    }
}
