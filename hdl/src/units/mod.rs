//! One generator per unit of SPEC.md §4, and what they share: the valid pipeline (`start`,
//! `finish`) and the generated design with its manifest. What selects a design (unit, PE
//! kind, parameters, top-level name) is in `params.rs`.

mod alu;
mod array;
mod axis;
pub use axis::{wrap_axis, AXIS_SUFFIX};
mod convert;
mod dfix;
mod divide;
pub(crate) mod family;
mod pe;
pub use array::protocol as array_protocol;
pub use array::{array_accumulations, array_max_stages, pe_instance_name, PE_MODULE_PREFIX};
pub use dfix::{
    dfix_shift_bits, DfixLaneOp, DFIX_COUNTER_BITS, DFIX_LANE_OP_BITS, DFIX_SHIFT_BITS,
};
mod registry;
mod root;
pub use registry::{entry, units_help, Opt, UnitEntry, UNITS};
mod fix;
mod float;
pub use fix::REGISTERED_MULTIPLIER_PREFIX;
pub use float::{fdpa_array_params, fdpa_params, MAX_FDPA_L};
mod lns;
mod posit;
mod quant1;
mod takum;
pub use quant1::quant1_gap;
mod mx;
mod nvfp4;
mod params;
mod q8;
pub use params::{top_name, GenError, Params, PeKind, Unit};

use lpgen_golden::Rounding;

use crate::emit;
use crate::ir::{Module, StagePlan, E};
use crate::manifest::{Manifest, Parameters, Port};
use crate::sources::Verilog;

pub const GENERATOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One PE's ports inside an array: operands, and the controls of its accumulator.
#[allow(dead_code)] // used by the array generator and the PE builders
pub(crate) struct PeIo {
    /// Operand words of the PE's format.
    pub a: E,
    pub b: E,
    /// When `enable`: `clear` starts a new accumulation with a·b (as from a zero state),
    /// otherwise a·b is accumulated onto the state; k = 0..K-1 in order (SPEC.md §3).
    pub enable: E,
    pub clear: E,
}

/// A generated design.
#[derive(Clone, Debug)]
pub struct Design {
    pub top: String,
    /// One file per module, the top last (docs/rtl.md).
    pub verilog: Verilog,
    /// The JSON manifest (ports, latency, parameters, table digests, generator version).
    pub manifest: String,
}

/// Port and manifest facts a generator reports besides its module.
pub(crate) struct Built {
    pub module: Module,
    pub latency: u32,
    /// (name, digest) of every table the design holds.
    pub tables: Vec<(String, String)>,
}

/// The designs the lint test checks: every unit's grid (lean, or the full grid of the RTL
/// issue).
pub fn lint_grid(full: bool) -> Vec<Params> {
    UNITS.iter().flat_map(|e| e.grid(full)).collect()
}

/// A module with the common ports (`clk`, `rst`, `in_valid`) and a stage plan of `stages`
/// registers over `candidates` boundaries.
pub(crate) fn start(p: &Params, candidates: u32) -> Result<(Module, E), GenError> {
    if p.stages > candidates {
        return Err(too_many_stages(p.unit.name(), candidates, p.stages, ""));
    }
    Ok(start_with(p, StagePlan::spread(p.stages, candidates)))
}

/// [`start`] with a stage plan of the generator's own (its checks done by the caller).
pub(crate) fn start_with(p: &Params, plan: StagePlan) -> (Module, E) {
    let mut m = Module::new(&top_name(p), plan);
    m.input("clk", 1);
    m.input("rst", 1);
    let valid = m.input("in_valid", 1);
    m.reset_on_delay(&valid);
    (m, valid)
}

/// Ends a fixed-latency unit: `out_valid` is `in_valid` delayed to the current cycle (by
/// registers that reset to 0), and the latency is that cycle.
pub(crate) fn finish(
    mut m: Module,
    in_valid: &E,
    tables: Vec<(String, String)>,
) -> Result<Built, GenError> {
    m.reset_on_delay(in_valid);
    m.output("out_valid", in_valid);
    let latency = m.cycle();
    Ok(Built {
        module: m,
        latency,
        tables,
    })
}

/// The parameters of `p` that apply to its unit (the registry entry's options).
fn parameters(p: &Params) -> Parameters {
    let e = entry(p.unit);
    let array = e.takes(Opt::Array);
    let shape = array || e.takes(Opt::Monitor);
    Parameters {
        stages: p.stages,
        rows: (shape || e.takes(Opt::Rows)).then_some(p.rows),
        cols: shape.then_some(p.cols),
        pe: array.then(|| p.pe.name().to_string()),
        accumulations: array.then(|| array::array_accumulations(p)),
        lanes: e.takes(Opt::Lanes).then_some(p.lanes),
        to: e
            .takes(Opt::To)
            .then(|| p.to.map_or_else(|| p.format_name(), |t| t.to_string())),
        q8: e.takes(Opt::Q8).then(|| p.q8.to_string()),
        counter_bits: e.takes(Opt::Monitor).then_some(p.counter_bits),
        acc: p.acc.filter(|_| array).map(|a| a.to_string()),
        rounding: (p.rounding != Rounding::Nearest).then(|| p.rounding.to_string()),
        rounding_seed: (p.rounding != Rounding::Nearest).then_some(p.rounding_seed),
        input: e.takes(Opt::Input).then(|| mx::shown_input(p)).flatten(),
        sqrt: (e.takes(Opt::Sqrt) && p.sqrt).then_some(true),
        fdpa: e.takes(Opt::Fdpa).then(|| fdpa_shown(p)).flatten(),
    }
}

/// An fdpa design's chunking as the manifest shows it: `L:F:RHO` (a preset resolved; `:tf32`
/// where binary32 words are read as tf32).
fn fdpa_shown(p: &Params) -> Option<String> {
    let mode = p.fdpa?;
    let lpgen_golden::Format::Float(f) = p.format else {
        return Some(mode.to_string());
    };
    Some(match mode.plan(&f) {
        Ok(pl) => format!(
            "{}:{}:{}{}{}",
            pl.chunk.l,
            pl.chunk.f,
            pl.chunk.rho.name(),
            if pl.tf32 { ":tf32" } else { "" },
            pl.promote.map_or(String::new(), |n| format!(":promote{n}"))
        ),
        Err(_) => mode.to_string(),
    })
}

fn manifest(p: &Params, b: &Built, top: &str, files: Vec<String>) -> String {
    let ports = Port::list(&b.module);
    Manifest {
        top: top.to_string(),
        unit: p.unit.name().to_string(),
        format: p.format_name(),
        parameters: parameters(p),
        latency: b.latency,
        generator: format!("lpgen {GENERATOR_VERSION}"),
        file_list: format!("{top}.f"),
        files,
        ports,
        tables: b.tables.iter().cloned().collect(),
        wraps: None,
        stream: None,
    }
    .to_json()
}

/// The error for `--stages` beyond a design's `max` (`hint`: more to say, after "; ").
/// Scripts read the maximum from it (`scripts/fpga-sweep.sh`, `max_stages`).
pub(crate) fn too_many_stages(what: &str, max: u32, stages: u32, hint: &str) -> GenError {
    let noun = if max == 1 { "stage" } else { "stages" };
    GenError(format!(
        "{what} has at most {max} pipeline {noun}, not {stages} (use --stages 0..={max}{hint})"
    ))
}

/// Whether `alu`/`vector` lanes of `f` can be built with the `sqrt` opcode (`--sqrt`, to
/// nearest; the family's lane has the datapath).
pub fn lane_has_sqrt(f: lpgen_golden::Format) -> bool {
    family::hw(&f).has_lane_sqrt()
}

/// Whether `alu`/`vector` lanes of `f` can be built with `--rounding stochastic:R` (the
/// family's lane has the stochastic datapath: float's).
pub fn lane_has_stochastic(f: lpgen_golden::Format) -> bool {
    family::hw(&f).has_stochastic_lanes()
}

/// Generates the design `p` selects.
pub fn generate(p: &Params) -> Result<Design, GenError> {
    crate::limits::check_params(p)?;
    registry::check_rounding(p)?;
    dfix::check(p)?;
    if matches!(p.unit, Unit::Alu | Unit::Vector) {
        alu::check_rounding(p)?;
        family::hw(&p.format).check_lane(p)?;
        alu::check_sqrt(p)?;
    }
    let e = entry(p.unit);
    nvfp4::check(p, e.takes(Opt::Scaled))?;
    mx::check(p, e.takes(Opt::Mx), e.takes(Opt::Input))?;
    if let (Some(m), false) = (p.fdpa, e.takes(Opt::Fdpa)) {
        return Err(GenError(format!(
            "--fdpa {m} is for the fdpa unit, not unit '{}'",
            p.unit.name()
        )));
    }
    let max = (e.max_stages)(p);
    if p.stages > max {
        let hint = match p.unit {
            Unit::Array if p.pe == PeKind::Dfix => format!(
                "; lns-kahan and lns-plain PEs take up to {}, interleaving accumulations, \
                 posit-quire PEs up to {}, fix PEs {}",
                array::array_max_stages(PeKind::LnsKahan),
                array::array_max_stages(PeKind::PositQuire),
                array::array_max_stages(PeKind::Fix)
            ),
            _ => String::new(),
        };
        let what = match p.unit {
            Unit::Array => format!("an array of {} PEs", p.pe.name()),
            _ => e.name.to_string(),
        };
        return Err(too_many_stages(&what, max, p.stages, &hint));
    }
    let mut built = (e.build)(p)?;
    let top = built.module.name.clone();
    built.module.header = vec![
        format!(
            "{top}: {} for {}, generated by lpgen {GENERATOR_VERSION}; do not edit.",
            p.unit.name(),
            p.format_name()
        ),
        format!(
            "Parameters: stages = {}; latency = {} cycles.",
            p.stages, built.latency
        ),
        match p.unit {
            Unit::Array => {
                "Ports: clk, synchronous active-high rst; results appear on c_out with out_valid \
                            `latency` cycles after the step marked last (docs/rtl.md)."
                    .into()
            }
            Unit::DfixMonitor => format!(
                "Ports: clk, synchronous active-high rst; counts include a read-out presented with \
                 in_valid {} cycles later (docs/rtl-dfix.md).",
                p.stages + 1
            ),
            Unit::Quant1 => format!(
                "Ports: clk, synchronous active-high rst; a column streams in twice (replay = 0, \
                 then 1), the second pass {} cycles after the last word (docs/rtl.md).",
                quant1::quant1_gap(p)
            ),
            _ => {
                "Ports: clk, synchronous active-high rst, in_valid -> out_valid after the latency."
                    .into()
            }
        },
    ];
    if let Rounding::Stochastic(r) = p.rounding {
        let line = match p.unit {
            Unit::Alu | Unit::Vector => float::lanes_header(r, p.rounding_seed, p.lanes),
            Unit::Array => float::array_header(r),
            _ => float::stochastic_header(r, p.rounding_seed),
        };
        built.module.header.push(line);
    }
    if e.takes(Opt::Fdpa) {
        built.module.header.extend(float::fdpa_header(p));
    }
    let input = mx::shown_input(p).filter(|_| e.takes(Opt::Input));
    (built.module.header)
        .extend(input.map(|i| format!("Input: {i} words (docs/rtl.md, MX units).")));
    let verilog = Verilog::of(&built.module, emit::verilog(&built.module));
    let manifest = manifest(p, &built, &top, verilog.names());
    Ok(Design {
        verilog,
        top,
        manifest,
    })
}
