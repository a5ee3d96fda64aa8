//! `lpgen rtl … --testbench cocotb`: a cocotb test module `test_<top>.py`, its unit models
//! `models_<top>.py` and its runner `run_<top>.py` (cocotb_tools.runner, Icarus or Verilator)
//! beside the design (docs/cocotb.md).
//!
//! All are fixed Python texts (`gen/templates/`) with the top's name filled in, and for an
//! array its host protocol (`ARRAY_PROTOCOL`, rendered from `lpgen_hdl::units::
//! array_protocol`): the bench reads everything else (unit, format, parameters, latency,
//! ports) from the manifest `<top>.json` at run time, and takes every golden result from the
//! `lpgen` Python package.

use std::path::{Path, PathBuf};

use lpgen_golden::Rounding;
use lpgen_hdl::units::array_protocol::Protocol;
use lpgen_hdl::{Design, Params, Unit};

use crate::rtl_cmd::write_atomic;
use crate::{CliError, CliResult};

const TEST_PY: &str = include_str!("../templates/cocotb_test.py");
/// The unit models: one file `models_<top>.py`, written from five templates (number units;
/// MX units; NVFP4 units; the fdpa unit and PE; dfix units and quant1, with the `UNITS` table).
const MODELS_PY: [&str; 5] = [
    include_str!("../templates/cocotb_models.py"),
    include_str!("../templates/cocotb_models_mx.py"),
    include_str!("../templates/cocotb_models_nvfp4.py"),
    include_str!("../templates/cocotb_models_fdpa.py"),
    include_str!("../templates/cocotb_models_dfix.py"),
];
const RUN_PY: &str = include_str!("../templates/cocotb_run.py");

/// The array PE kinds the bench models, by name.
const MODELLED_PES: [&str; 10] = [
    "lns-kahan",
    "lns-plain",
    "posit-quire",
    "takum-quire",
    "fix",
    "dfix",
    "float",
    "mx",
    "fdpa",
    "nvfp4",
];

/// Why the cocotb bench cannot check `p`'s design, or None when it can. Every unit is named:
/// a new unit is refused here until the bench's `UNITS` table models it.
pub fn unsupported(p: &Params) -> Option<String> {
    let why = match p.unit {
        Unit::PositAdd | Unit::PositMul | Unit::LnsAdd | Unit::LnsMul => return None,
        // Nearest, and stochastic:R through `lpgen.Rounder` (the golden stream).
        Unit::FloatAdd | Unit::FloatMul | Unit::FloatFma => return None,
        Unit::Q8Enc | Unit::Q8Dec => return None,
        // PEs whose read-out is the registry's dot product in their mode, rounded once (the
        // float PE's exact accumulator too; with `--acc`: `Format.acc_dot`), the dfix PE's
        // read-out at a shift (`Format.dfix_dot`) and the mx PE's f32 block dot product
        // (`MxFormat.dot`), the fdpa PE's (`Format.dot` in its mode, converted), the nvfp4
        // PE's (exact block terms from the golden decodings, added in numpy's f32); a PE kind not
        // listed here is refused.
        Unit::Array if p.rounding != Rounding::Nearest => {
            "its stochastic read-out has no model yet (sr_row_state, c + 1 steps a PE)"
        }
        Unit::Array if MODELLED_PES.contains(&p.pe.name()) => return None,
        Unit::Array => "its PE kind has no model yet",
        Unit::LnsKahan | Unit::PositMac | Unit::FixMac => return None,
        // Lanes of every family with lanes: `Format.alu`, and `Format.dfix_lane` on dfix;
        // not the stochastic float lanes (their stream, `sr_load` and L steps a beat).
        Unit::Alu | Unit::Vector if p.rounding != Rounding::Nearest => {
            "its stochastic lanes have no model yet (the stream's L steps a beat, sr_load)"
        }
        Unit::Alu | Unit::Vector => return None,
        Unit::Convert => return None,
        Unit::Quant1 | Unit::DfixMonitor => return None,
        // `lpgen.MxFormat`: dot_block and quantize_block.
        Unit::MxDot | Unit::MxEnc => return None,
        // `lpgen.Scaled.quantize` and the golden E2M1 and UE4M3 decodings.
        Unit::Nvfp4Enc | Unit::Nvfp4Dot => return None,
        // `Format.dot` in the design's fdpa mode, with init C.
        Unit::Fdpa => return None,
    };
    Some(format!(
        "--testbench cocotb: {} is not covered ({why}); covered: every unit (array: --pe \
         {}), rounding to nearest, and the stochastic float-add, float-mul, float-fma and \
         convert",
        p.unit.name(),
        MODELLED_PES.join(", ")
    ))
}

/// The three files' texts for the design whose top module is `top`; an array's host
/// protocol (`array`, from `lpgen_hdl::units::array_protocol`) is rendered into the models.
pub fn texts(top: &str, array: Option<&Protocol>) -> [(String, String); 3] {
    let protocol = array.map_or("None".to_string(), Protocol::python);
    [
        (format!("test_{top}.py"), TEST_PY.replace("@TOP@", top)),
        (
            format!("models_{top}.py"),
            MODELS_PY
                .concat()
                .replace("@TOP@", top)
                .replace("@ARRAY_PROTOCOL@", &protocol),
        ),
        (format!("run_{top}.py"), RUN_PY.replace("@TOP@", top)),
    ]
}

/// Writes the bench of `design` (selected by `p`) into `dir`, each file atomically; returns
/// the test module's, the models' and the runner's paths.
pub fn write(dir: &Path, p: &Params, design: &Design) -> CliResult<Vec<PathBuf>> {
    if let Some(why) = unsupported(p) {
        return Err(CliError(why));
    }
    let mut paths = vec![];
    // The dfix monitor takes the array's flags in the array's read-out order.
    let array = matches!(p.unit, Unit::Array | Unit::DfixMonitor).then(|| Protocol::of(p));
    for (name, text) in texts(&design.top, array.as_ref()) {
        let path = dir.join(name);
        write_atomic(&path, &text)?;
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_hdl::PeKind;

    #[test]
    fn texts_name_the_top_and_leave_no_placeholder() {
        let [(t, test), (m, models), (r, run)] = texts("lpgen_posit_add_posit_8_0_s0", None);
        assert_eq!(t, "test_lpgen_posit_add_posit_8_0_s0.py");
        assert_eq!(m, "models_lpgen_posit_add_posit_8_0_s0.py");
        assert_eq!(r, "run_lpgen_posit_add_posit_8_0_s0.py");
        for s in [&test, &models, &run] {
            assert!(!s.contains("@TOP@"));
        }
        for s in [&models, &run] {
            assert!(s.contains("\"lpgen_posit_add_posit_8_0_s0.json\""), "{s}");
        }
        assert!(test.contains("from models_lpgen_posit_add_posit_8_0_s0 import"));
        assert!(models.contains("\nARRAY_PROTOCOL = None\n"), "{models}");
        assert!(run.contains("test_module=f\"test_{top}\""));
    }

    /// An array's models carry its protocol, rendered from the Rust description.
    #[test]
    fn an_array_bench_carries_its_protocol() {
        let mut p = Params::new(Unit::Array, "lns:5:6".parse().unwrap()).stages(5);
        (p.rows, p.cols, p.pe) = (2, 3, PeKind::LnsKahan);
        let proto = Protocol::of(&p);
        assert_eq!((proto.accumulations, proto.last_spacing()), (4, 4));
        let [_, (_, models), _] = texts("top", Some(&proto));
        let line = format!("\nARRAY_PROTOCOL = {}\n", proto.python());
        assert!(models.contains(&line), "{models}");
        assert!(!models.contains("@ARRAY_PROTOCOL@"));
    }

    #[test]
    fn every_covered_unit_has_a_model_in_the_bench() {
        // The models' UNITS table names each unit `unsupported` lets through.
        for u in Unit::ALL {
            let mut p = Params::new(u, "posit:8:0".parse().unwrap());
            p.pe = PeKind::PositQuire;
            // The last template (dfix units and quant1) holds the UNITS table.
            let keyed = MODELS_PY[MODELS_PY.len() - 1].contains(&format!("    \"{}\": ", u.name()));
            assert_eq!(unsupported(&p).is_none(), keyed, "{}", u.name());
        }
    }
}
