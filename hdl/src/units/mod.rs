//! One generator per unit of SPEC.md §4, and what they share: parameters, the valid
//! pipeline, and the generated design with its manifest.

mod lns;

use std::fmt;

use lpgen_golden::Format;

use crate::emit;
use crate::ir::{Module, StagePlan, E};

pub const GENERATOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The units `lpgen rtl` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    LnsMul,
    LnsAdd,
    LnsKahan,
    PositAdd,
    PositMul,
    PositMac,
    FixMac,
    Alu,
    Vector,
    Array,
}

impl Unit {
    pub const ALL: [Unit; 10] = [
        Unit::LnsMul,
        Unit::LnsAdd,
        Unit::LnsKahan,
        Unit::PositAdd,
        Unit::PositMul,
        Unit::PositMac,
        Unit::FixMac,
        Unit::Alu,
        Unit::Vector,
        Unit::Array,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Unit::LnsMul => "lns-mul",
            Unit::LnsAdd => "lns-add",
            Unit::LnsKahan => "lns-kahan",
            Unit::PositAdd => "posit-add",
            Unit::PositMul => "posit-mul",
            Unit::PositMac => "posit-mac",
            Unit::FixMac => "fix-mac",
            Unit::Alu => "alu",
            Unit::Vector => "vector",
            Unit::Array => "array",
        }
    }
}

impl std::str::FromStr for Unit {
    type Err = GenError;
    fn from_str(s: &str) -> Result<Unit, GenError> {
        Unit::ALL
            .into_iter()
            .find(|u| u.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Unit::ALL.iter().map(|u| u.name()).collect();
                GenError(format!(
                    "unknown unit '{s}': expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// A generator refusal: one line naming the problem and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenError(pub String);

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GenError {}

/// Everything that selects a design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub unit: Unit,
    pub format: Format,
    /// Pipeline registers (0 = combinational).
    pub stages: u32,
}

/// A generated design.
#[derive(Clone, Debug)]
pub struct Design {
    pub top: String,
    pub verilog: String,
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

/// The top-level module name for a unit and format: `lpgen_lns_mul_lns_5_6_s1`.
pub fn top_name(p: &Params) -> String {
    let f = p.format.to_string().replace(':', "_");
    format!(
        "lpgen_{}_{f}_s{}",
        p.unit.name().replace('-', "_"),
        p.stages
    )
}

/// A module with the common ports (`clk`, `rst`, `in_valid`) and a stage plan of `stages`
/// registers over `candidates` boundaries.
pub(crate) fn start(p: &Params, candidates: u32) -> Result<(Module, E), GenError> {
    if p.stages > candidates {
        return Err(GenError(format!(
            "{} has at most {candidates} pipeline stages, not {} (use --stages 0..={candidates})",
            p.unit.name(),
            p.stages
        )));
    }
    let mut m = Module::new(&top_name(p), StagePlan::spread(p.stages, candidates));
    m.input("clk", 1);
    m.input("rst", 1);
    let valid = m.input("in_valid", 1);
    m.reset_on_delay(&valid);
    Ok((m, valid))
}

/// Drives `out_valid`: `in_valid` delayed to the current cycle by registers that reset to 0.
pub(crate) fn valid_out(m: &mut Module, in_valid: &E) {
    m.reset_on_delay(in_valid);
    m.output("out_valid", in_valid);
}

fn manifest(p: &Params, b: &Built, top: &str) -> String {
    let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let ports: Vec<String> = b
        .module
        .ports()
        .iter()
        .map(|(n, input, w)| {
            format!(
                "    {{\"name\": \"{}\", \"direction\": \"{}\", \"width\": {w}}}",
                esc(n),
                if *input { "input" } else { "output" }
            )
        })
        .collect();
    let tables: Vec<String> = b
        .tables
        .iter()
        .map(|(n, d)| format!("    \"{}\": \"{}\"", esc(n), esc(d)))
        .collect();
    format!(
        "{{\n  \"top\": \"{top}\",\n  \"unit\": \"{}\",\n  \"format\": \"{}\",\n  \"parameters\": {{\"stages\": {}}},\n  \"latency\": {},\n  \"generator\": \"lpgen {GENERATOR_VERSION}\",\n  \"ports\": [\n{}\n  ],\n  \"tables\": {{{}{}{}}}\n}}\n",
        p.unit.name(),
        p.format,
        p.stages,
        b.latency,
        ports.join(",\n"),
        if tables.is_empty() { "" } else { "\n" },
        tables.join(",\n"),
        if tables.is_empty() { "" } else { "\n  " },
    )
}

/// Generates the design `p` selects.
pub fn generate(p: &Params) -> Result<Design, GenError> {
    let mut built = match p.unit {
        Unit::LnsMul => lns::mul(p)?,
        other => {
            return Err(GenError(format!(
                "unit '{}' is not generated yet (available: lns-mul)",
                other.name()
            )))
        }
    };
    let top = built.module.name.clone();
    built.module.header = vec![
        format!(
            "{top}: {} for {}, generated by lpgen {GENERATOR_VERSION}; do not edit.",
            p.unit.name(),
            p.format
        ),
        format!(
            "Parameters: stages = {}; latency = {} cycles.",
            p.stages, built.latency
        ),
        "Ports: clk, synchronous active-high rst, in_valid -> out_valid after the latency.".into(),
    ];
    let manifest = manifest(p, &built, &top);
    Ok(Design {
        verilog: emit::verilog(&built.module),
        top,
        manifest,
    })
}
