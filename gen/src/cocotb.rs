//! `lpgen rtl … --testbench cocotb`: a cocotb test module `test_<top>.py` and its runner
//! `run_<top>.py` (cocotb_tools.runner, Icarus or Verilator) beside the design (docs/cocotb.md).
//!
//! Both are fixed Python texts (`gen/templates/`) with the top's name filled in: the bench
//! reads everything else (unit, format, parameters, latency, ports) from the manifest
//! `<top>.json` at run time, and takes every golden result from the `lpgen` Python package.

use std::path::{Path, PathBuf};

use lpgen_hdl::{Design, Params, PeKind, Unit};

use crate::rtl_cmd::write_atomic;
use crate::{CliError, CliResult};

const TEST_PY: &str = include_str!("../templates/cocotb_test.py");
const RUN_PY: &str = include_str!("../templates/cocotb_run.py");

/// The array PE kinds the bench models.
const MODELLED_PES: [PeKind; 4] = [
    PeKind::LnsKahan,
    PeKind::LnsPlain,
    PeKind::PositQuire,
    PeKind::Fix,
];

/// Why the cocotb bench cannot check `p`'s design, or None when it can. Every unit is named:
/// a new unit is refused here until the bench's `UNITS` table models it.
pub fn unsupported(p: &Params) -> Option<String> {
    let why = match p.unit {
        Unit::PositAdd | Unit::PositMul | Unit::LnsAdd | Unit::LnsMul => return None,
        Unit::FloatAdd | Unit::FloatMul | Unit::FloatFma => return None,
        Unit::Q8Enc | Unit::Q8Dec => return None,
        // PEs whose read-out is the registry's dot product in their mode, rounded once; a
        // PE kind not listed here (dfix: runtime scale and overflow flags) is refused.
        Unit::Array if MODELLED_PES.contains(&p.pe) => return None,
        Unit::Array => "its PE kind has no model yet (dfix: runtime scale, overflow flags; float: no Python model of its accumulators)",
        Unit::LnsKahan | Unit::PositMac | Unit::FixMac => return None,
        // The dfix lane (runtime scales, flags) is not the golden `Alu`.
        Unit::Alu | Unit::Vector if p.dfix_format().is_some() => "dfix lanes have no model yet",
        Unit::Alu | Unit::Vector => return None,
        Unit::Convert => return None,
        Unit::Quant1 | Unit::DfixMonitor => "column and monitor units have no model yet",
    };
    Some(format!(
        "--testbench cocotb: {} is not covered ({why}); covered: posit-add, posit-mul, \
         lns-add, lns-mul, float-add, float-mul, float-fma, lns-kahan, posit-mac, fix-mac, alu, vector, convert, q8-enc, q8-dec, \
         array (--pe \
         lns-kahan, lns-plain, posit-quire, fix)",
        p.unit.name()
    ))
}

/// The two files' texts for the design whose top module is `top`.
pub fn texts(top: &str) -> [(String, String); 2] {
    [
        (format!("test_{top}.py"), TEST_PY.replace("@TOP@", top)),
        (format!("run_{top}.py"), RUN_PY.replace("@TOP@", top)),
    ]
}

/// Writes the bench of `design` (selected by `p`) into `dir`, each file atomically; returns
/// the test module's and the runner's paths.
pub fn write(dir: &Path, p: &Params, design: &Design) -> CliResult<Vec<PathBuf>> {
    if let Some(why) = unsupported(p) {
        return Err(CliError(why));
    }
    let mut paths = vec![];
    for (name, text) in texts(&design.top) {
        let path = dir.join(name);
        write_atomic(&path, &text)?;
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_the_top_and_leave_no_placeholder() {
        let [(t, test), (r, run)] = texts("lpgen_posit_add_posit_8_0_s0");
        assert_eq!(t, "test_lpgen_posit_add_posit_8_0_s0.py");
        assert_eq!(r, "run_lpgen_posit_add_posit_8_0_s0.py");
        for s in [&test, &run] {
            assert!(!s.contains("@TOP@"));
            assert!(s.contains("\"lpgen_posit_add_posit_8_0_s0.json\""), "{s}");
        }
        assert!(run.contains("test_module=f\"test_{top}\""));
    }

    #[test]
    fn every_covered_unit_has_a_model_in_the_bench() {
        // The bench's UNITS table names each unit `unsupported` lets through.
        for u in Unit::ALL {
            let mut p = Params::new(u, "posit:8:0".parse().unwrap());
            p.pe = PeKind::PositQuire;
            let keyed = TEST_PY.contains(&format!("    \"{}\": ", u.name()));
            assert_eq!(unsupported(&p).is_none(), keyed, "{}", u.name());
        }
    }
}
