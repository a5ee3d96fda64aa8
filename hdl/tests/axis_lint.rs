//! The AXI4-Stream wrappers (`lpgen rtl … --wrap axis`, hdl/src/units/axis.rs) of the lean
//! lint grid's first design of every unit (all are wrapped), and of an interleaving
//! lns-kahan and LNS array, pass `verilator --lint-only
//! -Wall` with no warning, Yosys `synth` and Icarus Verilog (`-g2005`), as every unit does
//! (tests/lint.rs). The stream behaviour is python/tests/test_cocotb.py's.

use std::path::Path;
use std::process::Command;

use lpgen_hdl::units::lint_grid;
use lpgen_hdl::{wrap_axis, Design, Params, Unit};

fn tool(dir: &Path, cmd: &str, args: &[&str]) -> (bool, String) {
    let o = Command::new(cmd)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd} ({e}): install it with scripts/setup.sh"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn check(dir: &Path, d: &Design) -> Result<(), String> {
    let dir = dir.join(&d.top);
    std::fs::create_dir_all(&dir).unwrap();
    let list = d
        .verilog
        .write_to(&dir, &d.top, |path, text| std::fs::write(path, text))
        .unwrap();
    let f = list.to_str().unwrap();
    let names = d.verilog.names();
    let (ok, out) = tool(
        &dir,
        "verilator",
        &["--lint-only", "-Wall", "--top-module", &d.top, "-f", f],
    );
    if !ok || !out.trim().is_empty() {
        return Err(format!("verilator -Wall on {f}:\n{out}"));
    }
    let script = format!("read_verilog {}; synth -top {}", names.join(" "), d.top);
    let (ok, out) = tool(&dir, "yosys", &["-q", "-p", &script]);
    if !ok {
        return Err(format!("yosys on {f}:\n{out}"));
    }
    let mut args = vec!["-g2005", "-o", "/dev/null", "-s", &d.top];
    args.extend(names.iter().map(String::as_str));
    let (ok, out) = tool(&dir, "iverilog", &args);
    if !ok {
        return Err(format!("iverilog on {f}:\n{out}"));
    }
    Ok(())
}

#[test]
fn wrappers_lint_synthesize_and_compile() {
    let dir = std::env::temp_dir().join(format!("lpgen-axis-lint-{}", std::process::id()));
    let mut seen: Vec<Unit> = vec![];
    let mut checked = 0;
    let mut failures = vec![];
    for p in lint_grid(false) {
        if seen.contains(&p.unit) {
            continue;
        }
        seen.push(p.unit);
        let p: Params = p;
        // Every unit is wrapped (array, quant1, dfix-monitor, lns-kahan at every stage
        // count and the MX units too: docs/rtl.md).
        let (_, outer) = wrap_axis(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        checked += 1;
        if let Err(e) = check(&dir, &outer) {
            failures.push(e);
        }
    }
    // lns-kahan at 3 stages (3 slots) and an LNS array at 4 (3 slots, the hold after
    // `last`): the slot counters and the hold.
    for (unit, stages) in [(Unit::LnsKahan, 3), (Unit::Array, 4)] {
        let mut p = Params::new(unit, "lns:4:4".parse().unwrap()).stages(stages);
        (p.rows, p.cols) = (2, 3);
        let (_, outer) = wrap_axis(&p).unwrap();
        checked += 1;
        if let Err(e) = check(&dir, &outer) {
            failures.push(e);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        checked == Unit::ALL.len() + 2,
        "only {checked} wrappers checked"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
