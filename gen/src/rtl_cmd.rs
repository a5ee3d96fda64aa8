//! `lpgen rtl UNIT --format F [--stages S] --out DIR` (SPEC.md §4).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use lpgen_hdl::{generate, Design, Params, Unit};

use crate::{emit, CliError, CliResult};

/// What selects a design: the arguments `lpgen rtl`, `cosim` and `synth` share.
#[derive(Args)]
pub struct DesignArgs {
    /// The unit (one line each from the registry, `lpgen_hdl::units::UNITS`)
    #[arg(help = lpgen_hdl::units::units_help())]
    unit: String,
    /// Number format (from the family registry, `lpgen_golden::FAMILIES`)
    #[arg(long, help = format_help())]
    format: String,
    /// Pipeline registers (0 = combinational)
    #[arg(long, default_value_t = 0)]
    stages: u32,
    /// Array rows; quant1: the longest column; dfix-monitor: the array's [default: 1]
    #[arg(long)]
    rows: Option<u32>,
    /// Array columns; dfix-monitor: the array's [default: 1]
    #[arg(long)]
    cols: Option<u32>,
    /// Vector lanes [default: 1]
    #[arg(long)]
    lanes: Option<u32>,
    /// Array PE kind (from the family registry)
    #[arg(long, help = pe_help())]
    pe: Option<String>,
    /// The float array PE's accumulator: a wider float format, one rounding per add (default:
    /// the exact accumulator)
    #[arg(long)]
    acc: Option<String>,
    /// The words mx-enc takes: f32 (default), bf16, f16, float:E:M (IEEE-style, E <= 8,
    /// M <= 23) or fix:I:F
    #[arg(long)]
    input: Option<String>,
    /// Conversion format of an alu/vector lane (same family; default: --format) and of convert (required)
    #[arg(long)]
    to: Option<String>,
    /// 8-bit type of q8-enc/q8-dec: q8:dynamic-tree (default), q8:static-tree, q8:linear,
    /// q8:mantissa
    #[arg(long)]
    q8: Option<String>,
    /// Bits of each saturating counter of dfix-monitor [default: 32]
    #[arg(long)]
    counter_bits: Option<u32>,
    /// Rounding of float-add/float-mul/float-fma results, float alu/vector lanes' add, sub,
    /// mul, div, convert's float results and the read-out of array --pe float (its state a
    /// row on sr_row_state): nearest, or stochastic:R (R random bits from the golden
    /// xorshift32 stream, 1..=32; docs/rtl.md)
    #[arg(long, default_value = "nearest")]
    rounding: String,
    /// Seed of the stochastic rounding's stream (u64; the register resets to the golden
    /// generator's state of this seed)
    #[arg(long)]
    rounding_seed: Option<u64>,
    /// alu/vector: the lane's sqrt opcode (11; lns, float, posit, takum and fix lanes;
    /// without it code 11 gives zero)
    #[arg(long)]
    sqrt: bool,
    /// fdpa (and array --pe fdpa, also with :promoteN): the chunking, L:F:RHO (L operand
    /// pairs, F fraction bits below the largest exponent, RHO rz-f32, rz-e8m13 or rne-f16)
    /// or a preset resolved against --format (volta, ampere, ada, hopper, blackwell;
    /// docs/formats.md "fdpa")
    #[arg(long)]
    fdpa: Option<String>,
}

impl DesignArgs {
    /// Refuses an option given to a unit it does not apply to (the registry entry's
    /// options), naming the units it applies to: no option is silently ignored (issue 48).
    fn check_options_apply(&self, unit: Unit) -> CliResult {
        use lpgen_hdl::units::{entry, Opt, UNITS};
        let given: [(&str, bool, &[Opt]); 11] = [
            (
                "--rows",
                self.rows.is_some(),
                &[Opt::Array, Opt::Rows, Opt::Monitor],
            ),
            ("--cols", self.cols.is_some(), &[Opt::Array, Opt::Monitor]),
            ("--pe", self.pe.is_some(), &[Opt::Array]),
            ("--acc", self.acc.is_some(), &[Opt::Array]),
            ("--lanes", self.lanes.is_some(), &[Opt::Lanes]),
            ("--to", self.to.is_some(), &[Opt::To]),
            ("--q8", self.q8.is_some(), &[Opt::Q8]),
            (
                "--counter-bits",
                self.counter_bits.is_some(),
                &[Opt::Monitor],
            ),
            ("--input", self.input.is_some(), &[Opt::Input]),
            ("--sqrt", self.sqrt, &[Opt::Sqrt]),
            ("--fdpa", self.fdpa.is_some(), &[Opt::Fdpa]),
        ];
        let takes =
            |e: &lpgen_hdl::units::UnitEntry, opts: &[Opt]| opts.iter().any(|&o| e.takes(o));
        for (name, given, opts) in given {
            if given && !takes(entry(unit), opts) {
                let to: Vec<&str> = UNITS
                    .iter()
                    .filter(|e| takes(e, opts))
                    .map(|e| e.name)
                    .collect();
                // alu is one lane of vector.
                let hint = match (unit, self.lanes) {
                    (Unit::Alu, Some(n)) if name == "--lanes" => {
                        format!(" (alu is one lane; for {n} lanes use 'vector --lanes {n}')")
                    }
                    _ => String::new(),
                };
                return Err(CliError(format!(
                    "{name} does not apply to {}: it applies to {}{hint}",
                    entry(unit).name,
                    to.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// `--format`'s help: every family's format strings.
fn format_help() -> String {
    format!(
        "Number format: {} (dfix:W: array --pe dfix, alu, vector, dfix-monitor)",
        lpgen_golden::family::syntaxes()
    )
}

/// `--pe`'s help: every PE kind of the registry with its family and accumulation.
fn pe_help() -> String {
    let mut kinds: Vec<String> = lpgen_golden::family::pe_kinds()
        .map(|(f, pe)| format!("{} ({} words, {})", pe.name, f.name, pe.mode.name()))
        .collect();
    let mx = &lpgen_golden::mx::PE;
    kinds.push(format!("{} (mx:ELEM[:bK] blocks: {})", mx.name, mx.about));
    let fdpa = &lpgen_golden::float::fdpa::PE;
    kinds.push(format!("{} (float words, {})", fdpa.name, fdpa.about));
    let nv = &lpgen_golden::scale::dot::PE;
    kinds.push(format!("{} (nvfp4 blocks: {})", nv.name, nv.about));
    format!(
        "Array PE kind: {} (default: the format family's first; mx for MX formats, nvfp4 for \
         nvfp4)",
        kinds.join(", ")
    )
}

impl DesignArgs {
    /// The generator's parameters (formats and names checked; the generator checks the rest).
    pub fn params(&self) -> CliResult<Params> {
        let unit: Unit = self.unit.parse()?;
        self.check_options_apply(unit)?;
        let mut p = Params::parse(unit, &self.format)?.stages(self.stages);
        (p.rows, p.cols, p.lanes) = (
            self.rows.unwrap_or(1),
            self.cols.unwrap_or(1),
            self.lanes.unwrap_or(1),
        );
        lpgen_hdl::limits::check_params(&p)?;
        if let Some(pe) = &self.pe {
            p.pe = pe.parse()?;
        }
        if let Some(acc) = &self.acc {
            p.acc = Some(acc.parse()?);
        }
        if let Some(to) = &self.to {
            p.to = Some(to.parse()?);
        }
        if let Some(input) = &self.input {
            p.input = Some(input.parse()?);
        }
        if let Some(q8) = &self.q8 {
            p.q8 = q8.parse()?;
        }
        p.sqrt = self.sqrt;
        if let Some(m) = &self.fdpa {
            let mode = lpgen_golden::float::fdpa::Fdpa::parse(&format!("fdpa:{m}"))
                .map_err(|e| CliError(format!("--fdpa {m}: {}", e.0)))?;
            p.fdpa = Some(mode);
        }
        p.counter_bits = self
            .counter_bits
            .unwrap_or(lpgen_hdl::units::DFIX_COUNTER_BITS);
        let rounding: lpgen_golden::Rounding = self
            .rounding
            .parse()
            .map_err(|e: lpgen_golden::FormatError| CliError(e.0))?;
        p = p.rounding(rounding, self.rounding_seed.unwrap_or(0));
        if rounding == lpgen_golden::Rounding::Nearest && self.rounding_seed.is_some() {
            return Err(CliError(
                "--rounding-seed needs --rounding stochastic:R".into(),
            ));
        }
        Ok(p)
    }
}

#[derive(Args)]
pub struct RtlArgs {
    #[command(flatten)]
    design: DesignArgs,
    /// Output directory (created if missing)
    #[arg(long)]
    out: PathBuf,
    /// Also write a testbench beside the design: `cocotb` (`test_<top>.py` and `run_<top>.py`,
    /// checked against the `lpgen` Python package; docs/cocotb.md)
    #[arg(long, value_enum)]
    testbench: Option<Testbench>,
    /// Also write a FuseSoC CAPI2 core `<top>.core` beside the design (docs/cocotb.md)
    #[arg(long)]
    core: bool,
    /// Also write a wrapper `<top>_axis` around the unit: `axis`, AXI4-Stream with
    /// backpressure (docs/rtl.md); --testbench and --core then apply to the wrapper
    #[arg(long, value_enum)]
    wrap: Option<Wrap>,
}

/// The wrappers `--wrap` writes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Wrap {
    Axis,
}

/// The testbenches `--testbench` writes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Testbench {
    Cocotb,
}

/// Writes `contents` to `path` atomically (see [`lpgen_tempfiles::write_atomic`]).
pub fn write_atomic(path: &Path, contents: &str) -> CliResult {
    lpgen_tempfiles::write_atomic(path, contents.as_bytes())
        .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))
}

pub fn run(args: &RtlArgs, out: &mut dyn Write) -> CliResult {
    let params = args.design.params()?;
    // The output directory first: a design can take seconds to generate, and a typo in
    // --out should not cost them.
    std::fs::create_dir_all(&args.out).map_err(|e| {
        CliError(format!(
            "cannot create output directory {}: {e}",
            args.out.display()
        ))
    })?;
    // Refused before generating, as a bad --out is.
    if let (Some(Testbench::Cocotb), Some(why)) =
        (args.testbench, crate::cocotb::unsupported(&params))
    {
        return Err(CliError(why));
    }
    let (design, mut written) = match args.wrap {
        None => {
            let d = generate(&params)?;
            let w = write_design(&args.out, &d)?;
            (d, w)
        }
        Some(Wrap::Axis) => {
            let (unit, wrapper) = lpgen_hdl::wrap_axis(&params)?;
            let mut w = write_design(&args.out, &wrapper)?;
            let unit_files = write_design(&args.out, &unit)?;
            for p in unit_files {
                if !w.contains(&p) {
                    w.push(p);
                }
            }
            (wrapper, w)
        }
    };
    if let Some(Testbench::Cocotb) = args.testbench {
        written.extend(crate::cocotb::write(&args.out, &params, &design)?);
    }
    if args.core {
        written.push(crate::fusesoc::write(&args.out, &design)?);
    }
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    emit(out, &names.join("\n"))
}

/// Writes a design into `dir`: one `<module>.v` per module, the file list `<top>.f` and the
/// manifest `<top>.json`, each atomically. Returns the paths: the top's `.v`, the file list,
/// the manifest, then the sub-modules' files.
pub fn write_design(dir: &Path, design: &Design) -> CliResult<Vec<PathBuf>> {
    let list = design.verilog.write_to(dir, &design.top, write_atomic)?;
    let j = dir.join(format!("{}.json", design.top));
    write_atomic(&j, &design.manifest)?;
    let top_file = dir.join(format!("{}.v", design.top));
    let mut paths = vec![top_file.clone(), list, j];
    paths.extend(
        design
            .verilog
            .names()
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| *p != top_file),
    );
    Ok(paths)
}
