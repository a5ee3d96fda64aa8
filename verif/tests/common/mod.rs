//! Shared by the co-simulation tests: the toolchain (CI installs Verilator, so a missing one
//! fails the test with the one-line error rather than skipping) and a checked run.

#![allow(dead_code)]

use lpgen_hdl::{Params, PeKind, Unit};
use lpgen_verif::{drivers::run_design, Mode, Report, RunOptions, Toolchain};

pub fn toolchain() -> Toolchain {
    match Toolchain::find() {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

pub fn params(unit: Unit, fmt: &str, stages: u32) -> Params {
    Params::new(unit, fmt.parse().unwrap()).stages(stages)
}

pub fn array(fmt: &str, pe: PeKind, rows: u32, cols: u32, stages: u32) -> Params {
    let mut p = params(Unit::Array, fmt, stages);
    (p.rows, p.cols, p.pe) = (rows, cols, pe);
    p
}

/// Runs `p` and fails with the first mismatches unless every check passed.
pub fn check(tc: &Toolchain, p: &Params, mode: Mode, seed: u64) -> Report {
    let d = lpgen_hdl::generate(p).unwrap();
    let r = run_design(tc, p, &d, RunOptions::new(mode, seed)).unwrap();
    eprintln!(
        "{}: {} passed, {} failed ({} cycles, seed {seed:#x})",
        r.top, r.passed, r.failed, r.cycles
    );
    assert!(
        r.failed == 0 && r.passed > 0,
        "{}: {} passed, {} failed; first:\n{}",
        r.top,
        r.passed,
        r.failed,
        r.details.join("\n")
    );
    r
}

/// Runs a mutant of `p`'s Verilog (`from` replaced by `to`; the text must hold exactly one
/// such site) in `mode` and returns (failed, first mismatch).
pub fn mutant(p: &Params, from: &str, to: &str, mode: Mode) -> (u64, String) {
    let mut d = lpgen_hdl::generate(p).unwrap();
    assert_eq!(
        d.verilog.text().matches(from).count(),
        1,
        "mutation site {from}"
    );
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, to, 1);
    }
    let r = run_design(&toolchain(), p, &d, RunOptions::new(mode, 1)).unwrap();
    eprintln!(
        "mutant {from:?} -> {to:?}: {} passed, {} failed",
        r.passed, r.failed
    );
    (r.failed, r.details.first().cloned().unwrap_or_default())
}
