//! The unit registry: one entry per unit of SPEC.md §4, as FloPoCo registers each operator
//! (`FPAdd::registerFactory`, with its `unitTest`): the unit's name, its help text, the
//! options that apply to it, its most pipeline stages, its generator and its lint grid. A new
//! unit is one more entry here (and its generator): `lpgen rtl` parses and lists units from
//! the registry, the manifest lists only the entry's options, `generate` refuses a stage count
//! over the entry's maximum, and the lint test runs every entry's grid. The co-simulation
//! driver is the one thing that lives elsewhere, because it needs the golden model and the
//! Verilator runtime: `verif`'s `drivers::plan` matches on [`Unit`] without a catch-all, so a
//! unit without a driver does not compile.

use super::family::hw;
use super::{
    alu, array, convert, dfix, fix, float, lns, mx, nvfp4, posit, q8, quant1, Built, GenError,
    Params, Unit,
};
use lpgen_golden::Rounding;

/// A design option of `lpgen rtl` besides `--format` and `--stages` (which every unit takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    /// `--rows`, `--cols` and `--pe`: the array's shape and PE kind.
    Array,
    /// `--lanes`: the vector's lanes.
    Lanes,
    /// `--to`: the conversion format of an ALU lane and of `convert`.
    To,
    /// `--rows`: the longest column of a column unit (quant1).
    Rows,
    /// `--q8 TYPE`: the 8-bit type of a q8 codec.
    Q8,
    /// `--rows`, `--cols` (the shape of the dfix array whose flags it counts) and
    /// `--counter-bits`: the overflow monitor.
    Monitor,
    /// `--rounding nearest|stochastic:R` and `--rounding-seed`: how results are rounded.
    Rounding,
    /// `--format mx:ELEM[:bK]`: the unit works on MX blocks (element type, block size K).
    Mx,
    /// `--input F`: the format of the words a block conversion takes (mx-enc; default f32).
    Input,
    /// `--sqrt`: the ALU lane's `sqrt` opcode (11; without it code 11 gives zero).
    Sqrt,
    /// `--fdpa L:F:RHO` or a preset: the chunking of a GPU matrix unit's dot product.
    Fdpa,
    /// `--format nvfp4` or `scaled/fp4:e2m1/bK/ue4m3|ue5m3/t`: the unit works on NVFP4-style
    /// blocks (E2M1 elements, a UE4M3 or UE5M3 scale per K, an f32 tensor scale).
    Scaled,
}

/// One unit's entry.
pub struct UnitEntry {
    pub unit: Unit,
    /// As `lpgen rtl` names it (`lns-mul`).
    pub name: &'static str,
    /// One line: what the unit is.
    pub help: &'static str,
    /// The options that apply besides `--format` and `--stages`.
    pub options: &'static [Opt],
    /// The most pipeline stages of the design `p` selects (its format family and PE kind
    /// decide for some units).
    pub max_stages: fn(&Params) -> u32,
    pub(crate) build: fn(&Params) -> Result<Built, GenError>,
    /// The unit's designs of the lint grid: a lean set, or the full grid.
    pub(crate) grid: fn(bool) -> Vec<Params>,
}

impl UnitEntry {
    /// Whether option `o` applies to the unit.
    pub fn takes(&self, o: Opt) -> bool {
        self.options.contains(&o)
    }

    /// The unit's designs of the lint grid.
    pub fn grid(&self, full: bool) -> Vec<Params> {
        (self.grid)(full)
    }
}

/// The designs of `family_grid` that are of `unit`.
fn only(unit: Unit, family_grid: Vec<Params>) -> Vec<Params> {
    family_grid.into_iter().filter(|p| p.unit == unit).collect()
}

/// The stages of an ALU lane (and a vector of them): its format family's datapath.
fn lane_stages(p: &Params) -> u32 {
    alu::candidates(p.format)
}

/// `alu` and `vector`: the family's lane (the dfix lane for dfix words, the golden ALU's
/// otherwise).
fn lane_unit(p: &Params) -> Result<Built, GenError> {
    hw(&p.format).lane_unit(p)
}

/// Every unit, in the order `lpgen rtl --help` lists them.
pub static UNITS: [UnitEntry; 23] = [
    UnitEntry {
        unit: Unit::LnsMul,
        name: "lns-mul",
        help: "LNS multiply/divide (sum/difference of logs, saturated)",
        options: &[],
        max_stages: |_| lns::MUL_STAGES,
        build: lns::mul,
        grid: |full| only(Unit::LnsMul, lns::grid(full)),
    },
    UnitEntry {
        unit: Unit::LnsAdd,
        name: "lns-add",
        help: "LNS add/subtract through the G-table ROM",
        options: &[],
        max_stages: |_| lns::ADD_CANDIDATES,
        build: lns::add,
        grid: |full| only(Unit::LnsAdd, lns::grid(full)),
    },
    UnitEntry {
        unit: Unit::LnsKahan,
        name: "lns-kahan",
        help: "LNS multiply + Kahan-compensated accumulate (one PE's arithmetic)",
        options: &[],
        max_stages: |_| lns::KAHAN_MAX_STAGES,
        build: lns::kahan,
        grid: |full| only(Unit::LnsKahan, lns::grid(full)),
    },
    UnitEntry {
        unit: Unit::PositAdd,
        name: "posit-add",
        help: "posit adder/subtractor",
        options: &[],
        max_stages: |_| posit::ADD_STAGES,
        build: posit::add,
        grid: |full| only(Unit::PositAdd, posit::grid(full)),
    },
    UnitEntry {
        unit: Unit::PositMul,
        name: "posit-mul",
        help: "posit multiplier",
        options: &[],
        max_stages: |_| posit::MUL_STAGES,
        build: posit::mul,
        grid: |full| only(Unit::PositMul, posit::grid(full)),
    },
    UnitEntry {
        unit: Unit::PositMac,
        name: "posit-mac",
        help: "posit fused multiply-accumulate into a quire, rounded once at read-out",
        options: &[],
        max_stages: |_| posit::MAC_STAGES,
        build: posit::mac,
        grid: |full| only(Unit::PositMac, posit::grid(full)),
    },
    UnitEntry {
        unit: Unit::FixMac,
        name: "fix-mac",
        help: "fixed-point MAC with a wide accumulator",
        options: &[],
        max_stages: |_| fix::MAC_STAGES,
        build: fix::mac,
        grid: |full| only(Unit::FixMac, fix::grid(full)),
    },
    UnitEntry {
        unit: Unit::Alu,
        name: "alu",
        help: "one vector lane of a format: add sub mul div max min lt neg abs select convert, \
               and with --sqrt sqrt (lns, float, posit, takum, fix); float lanes also stochastic:R",
        options: &[Opt::To, Opt::Rounding, Opt::Sqrt],
        max_stages: lane_stages,
        build: lane_unit,
        grid: |full| {
            let mut g = only(Unit::Alu, alu::grid(full));
            g.extend(dfix::lane_grid(Unit::Alu, full));
            g
        },
    },
    UnitEntry {
        unit: Unit::Vector,
        name: "vector",
        help: "--lanes L lanes of alu sharing one opcode; float lanes also stochastic:R",
        options: &[Opt::Lanes, Opt::To, Opt::Rounding, Opt::Sqrt],
        max_stages: lane_stages,
        build: lane_unit,
        grid: |full| {
            let mut g = only(Unit::Vector, alu::grid(full));
            g.extend(dfix::lane_grid(Unit::Vector, full));
            g
        },
    },
    UnitEntry {
        unit: Unit::Array,
        name: "array",
        help:
            "R×C systolic matmul array of PE modules (--pe lns-kahan, lns-plain, posit-quire, takum-quire, fix, dfix, float [--acc A] (its exact read-out also stochastic:R); mx for --format mx:ELEM[:bK] and nvfp4 for --format nvfp4 (alpha the host's), one block per step; fdpa --fdpa MODE on float formats, one chunk of L pairs per step)",
        options: &[Opt::Array, Opt::Rounding, Opt::Fdpa],
        max_stages: |p| array::array_max_stages(p.pe),
        build: array::array,
        grid: array::grid,
    },
    UnitEntry {
        unit: Unit::Quant1,
        name: "quant1",
        help: "1-bit quantizer with error feedback for a column of up to --rows fix or posit \
               words (seed 001): sign bits, the two side means, new residuals",
        options: &[Opt::Rows],
        max_stages: quant1::max_stages,
        build: quant1::quant1,
        grid: quant1::grid,
    },
    UnitEntry {
        unit: Unit::Q8Enc,
        name: "q8-enc",
        help:
            "8-bit codec encoder (--q8 TYPE): comparator tree over the sorted table, runtime scale",
        options: &[Opt::Q8],
        max_stages: q8::enc_stages,
        build: q8::enc,
        grid: |full| q8::grid(Unit::Q8Enc, full),
    },
    UnitEntry {
        unit: Unit::Q8Dec,
        name: "q8-dec",
        help: "8-bit codec decoder (--q8 TYPE): table ROM times a runtime scale, rounded once",
        options: &[Opt::Q8],
        max_stages: |_| q8::DEC_STAGES,
        build: q8::dec,
        grid: |full| q8::grid(Unit::Q8Dec, full),
    },
    UnitEntry {
        unit: Unit::Convert,
        name: "convert",
        help: "one word of --format converted to --to (same family: posit, lns, fix or float; \
               or float and fix), the ALU lane's conversion alone; float results also \
               stochastic:R",
        options: &[Opt::To, Opt::Rounding],
        max_stages: convert::max_stages,
        build: convert::convert,
        grid: convert::grid,
    },
    UnitEntry {
        unit: Unit::DfixMonitor,
        name: "dfix-monitor",
        help: "overflow monitor of a dfix array (--rows, --cols): saturating counts of the \
               read-outs seen, overflowed at the scale and at its half",
        options: &[Opt::Monitor],
        max_stages: |_| dfix::MONITOR_STAGES,
        build: dfix::monitor,
        grid: dfix::monitor_grid,
    },
    UnitEntry {
        unit: Unit::FloatAdd,
        name: "float-add",
        help: "float:E:M adder/subtractor (bf16, f16, fp8:e4m3, fp8:e5m2, ...), round to nearest even \
               or stochastic:R",
        options: &[Opt::Rounding],
        max_stages: |_| float::ADD_STAGES,
        build: float::add,
        grid: |full| only(Unit::FloatAdd, float::grid(full)),
    },
    UnitEntry {
        unit: Unit::FloatMul,
        name: "float-mul",
        help: "float:E:M multiplier, round to nearest even or stochastic:R",
        options: &[Opt::Rounding],
        max_stages: |_| float::MUL_STAGES,
        build: float::mul,
        grid: |full| only(Unit::FloatMul, float::grid(full)),
    },
    UnitEntry {
        unit: Unit::FloatFma,
        name: "float-fma",
        help: "float:E:M fused multiply-add a·b + c, rounded once to nearest even or stochastic:R",
        options: &[Opt::Rounding],
        max_stages: |_| float::FMA_STAGES,
        build: float::fma,
        grid: |full| only(Unit::FloatFma, float::grid(full)),
    },
    UnitEntry {
        unit: Unit::MxDot,
        name: "mx-dot",
        help: "MX block dot product (--format mx:ELEM[:bK]): K exact element products, an \
               exact fixed-point sum, the E8M0 scale exponents added",
        options: &[Opt::Mx],
        max_stages: |_| mx::DOT_STAGES,
        build: mx::dot,
        grid: |full| only(Unit::MxDot, mx::grid(full)),
    },
    UnitEntry {
        unit: Unit::MxEnc,
        name: "mx-enc",
        help: "MX block encoder (--format mx:ELEM[:bK], --input f32|bf16|f16|float:E:M|fix:I:F): \
               K words in, the shared E8M0 scale from the largest exponent, each element \
               rounded to nearest even, saturating",
        options: &[Opt::Mx, Opt::Input],
        max_stages: |_| mx::ENC_STAGES,
        build: mx::enc,
        grid: |full| only(Unit::MxEnc, mx::grid(full)),
    },
    UnitEntry {
        unit: Unit::Fdpa,
        name: "fdpa",
        help: "GPU matrix unit's fused dot-product-add (--fdpa L:F:RHO or a preset: volta, \
               ampere, ada, hopper, blackwell): L float:E:M products plus C a cycle, aligned to \
               the largest exponent, truncated to F bits, summed exactly, rounded once",
        options: &[Opt::Fdpa],
        max_stages: |_| float::FDPA_STAGES,
        build: float::fdpa,
        grid: float::fdpa_grid,
    },
    UnitEntry {
        unit: Unit::Nvfp4Enc,
        name: "nvfp4-enc",
        help: "NVFP4 block encoder (--format nvfp4, or scaled/fp4:e2m1/bK/ue4m3|ue5m3/t): K f32 \
               words and the f32 tensor scale s_enc in, an amax tree, the block scale \
               ue4m3(amax/6 * s_enc) and each e2m1(x * s_enc / S), rounded once to nearest \
               even, saturating",
        options: &[Opt::Scaled],
        max_stages: |_| nvfp4::ENC_STAGES,
        build: nvfp4::enc,
        grid: |full| only(Unit::Nvfp4Enc, nvfp4::grid(full)),
    },
    UnitEntry {
        unit: Unit::Nvfp4Dot,
        name: "nvfp4-dot",
        help: "NVFP4 block dot product (--format nvfp4, or scaled/fp4:e2m1/bK/ue4m3/t with K <= \
               16): K exact E2M1 products summed exactly, times both UE4M3 scales",
        options: &[Opt::Scaled],
        max_stages: |_| nvfp4::DOT_STAGES,
        build: nvfp4::dot,
        grid: |full| only(Unit::Nvfp4Dot, nvfp4::grid(full)),
    },
];

/// Refuses a rounding the unit does not take, and a seed without a stream, in one line.
pub(crate) fn check_rounding(p: &Params) -> Result<(), GenError> {
    let e = entry(p.unit);
    if p.rounding != Rounding::Nearest && !e.takes(Opt::Rounding) {
        let with: Vec<&str> = UNITS
            .iter()
            .filter(|u| u.takes(Opt::Rounding))
            .map(|u| u.name)
            .collect();
        return Err(GenError(format!(
            "{} rounds to nearest only, not {} (stochastic rounding: {})",
            e.name,
            p.rounding,
            with.join(", ")
        )));
    }
    if p.rounding == Rounding::Nearest && p.rounding_seed != 0 {
        return Err(GenError(
            "a rounding seed needs stochastic rounding (--rounding stochastic:R)".into(),
        ));
    }
    Ok(())
}

/// The entry of `unit`.
pub fn entry(unit: Unit) -> &'static UnitEntry {
    UNITS
        .iter()
        .find(|e| e.unit == unit)
        .expect("every unit has an entry")
}

/// The help text of the unit argument: every unit's name and line.
pub fn units_help() -> String {
    let lines: Vec<String> = UNITS
        .iter()
        .map(|e| format!("{}: {}", e.name, e.help))
        .collect();
    lines.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, PeKind};

    #[test]
    fn every_unit_has_one_entry_and_its_grid_is_of_it() {
        for u in Unit::ALL {
            assert_eq!(UNITS.iter().filter(|e| e.unit == u).count(), 1, "{u:?}");
            let e = entry(u);
            assert_eq!(e.name, u.name());
            let g = e.grid(false);
            assert!(!g.is_empty(), "{}", e.name);
            assert!(g.iter().all(|p| p.unit == u), "{}", e.name);
        }
    }

    /// The registry's maximum is the generator's: it builds at the maximum and refuses one
    /// more, in one line naming the range.
    #[test]
    fn max_stages_are_the_generators() {
        let mut cases: Vec<Params> = vec![];
        for (u, f) in [
            (Unit::LnsMul, "lns:3:2"),
            (Unit::LnsAdd, "lns:3:2"),
            (Unit::LnsKahan, "lns:3:2"),
            (Unit::PositAdd, "posit:8:0"),
            (Unit::PositMul, "posit:8:0"),
            (Unit::PositMac, "posit:8:0"),
            (Unit::FixMac, "fix:3:4"),
            (Unit::Alu, "lns:3:2"),
            (Unit::Alu, "posit:8:0"),
            (Unit::Alu, "fix:3:4"),
            (Unit::Vector, "posit:8:0"),
            (Unit::Quant1, "fix:3:4"),
            (Unit::Quant1, "posit:8:0"),
            (Unit::Q8Enc, "fix:7:8"),
            (Unit::Q8Enc, "posit:8:0"),
            (Unit::Q8Dec, "fix:7:8"),
            (Unit::Q8Dec, "posit:8:0"),
            (Unit::DfixMonitor, "dfix:10"),
            (Unit::Alu, "dfix:10"),
            (Unit::Vector, "dfix:6"),
            (Unit::FloatAdd, "fp8:e4m3"),
            (Unit::FloatMul, "bf16"),
            (Unit::FloatFma, "f16"),
            (Unit::Alu, "fp8:e4m3"),
            (Unit::Vector, "bf16"),
            (Unit::MxDot, "mx:fp4:e2m1:b4"),
            (Unit::MxDot, "mx:fp8:e5m2:b32"),
            (Unit::MxDot, "mx:int8:b3"),
            (Unit::MxEnc, "mx:fp4:e2m1:b4"),
            (Unit::MxEnc, "mx:fp8:e5m2"),
            (Unit::MxEnc, "mx:int8:b3"),
            (Unit::Nvfp4Enc, "nvfp4"),
            (Unit::Nvfp4Enc, "scaled/fp4:e2m1/b4/ue5m3/t"),
            (Unit::Nvfp4Dot, "nvfp4"),
        ] {
            cases.push(Params::parse(u, f).unwrap());
        }
        for (f, mode) in [("float:2:1", "2:3:rz-f32"), ("f16", "4:12:rne-f16")] {
            cases.push(float::fdpa_params(f, mode));
        }
        for (pe, f) in [
            (PeKind::LnsKahan, "lns:3:2"),
            (PeKind::LnsPlain, "lns:3:2"),
            (PeKind::PositQuire, "posit:8:0"),
            (PeKind::Fix, "fix:3:4"),
            (PeKind::Dfix, "dfix:6"),
            (PeKind::Float, "fp8:e4m3"),
            (PeKind::Mx, "mx:fp4:e2m1:b2"),
            (PeKind::Mx, "mx:fp8:e5m2"),
            (PeKind::Nvfp4, "nvfp4"),
            (PeKind::Nvfp4, "scaled/fp4:e2m1/b3/ue4m3/t"),
        ] {
            let mut p = Params::parse(Unit::Array, f).unwrap();
            p.pe = pe;
            cases.push(p);
        }
        for (f, t) in [
            ("posit:16:1", "posit:8:2"),
            ("posit:8:0", "posit:8:0"),
            ("lns:5:6", "lns:4:3"),
            ("fix:7:8", "fix:3:4"),
            ("bf16", "fp8:e4m3"),
            ("fp8:e4m3", "fix:3:4"),
            ("fix:7:8", "f16"),
            ("f16", "f16"),
        ] {
            let mut p = Params::parse(Unit::Convert, f).unwrap();
            p.to = Some(t.parse().unwrap());
            cases.push(p);
        }
        for p in cases {
            let max = (entry(p.unit).max_stages)(&p);
            let at = generate(&p.clone().stages(max));
            assert!(at.is_ok(), "{:?} at {max}: {:?}", p.unit, at.err());
            let e = generate(&p.clone().stages(max + 1)).unwrap_err().0;
            assert!(e.contains(&format!("0..={max}")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
