//! Every generated design passes `verilator --lint-only -Wall` with no warning, Yosys
//! `synth`, and Icarus Verilog (`-g2005`). CI runs a lean grid; `scripts/rtl-grid.sh` sets
//! `LPGEN_FULL_GRID=1` for the whole parameter grid of the RTL generator issue.

use std::path::Path;
use std::process::Command;

use lpgen_hdl::units::{lint_grid, top_name};
use lpgen_hdl::{generate, Params, Unit};

fn full() -> bool {
    std::env::var("LPGEN_FULL_GRID").is_ok_and(|v| v == "1")
}

fn run(cmd: &mut Command, what: &str) -> (bool, String) {
    match cmd.output() {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            (o.status.success(), text)
        }
        Err(e) => panic!("cannot run {what} ({e}): install it with scripts/setup.sh"),
    }
}

fn check(dir: &Path, p: &Params) -> Result<(), String> {
    let d = generate(p).map_err(|e| format!("{p:?}: {e}"))?;
    let file = dir.join(format!("{}.v", d.top));
    std::fs::write(&file, &d.verilog).unwrap();
    let f = file.to_str().unwrap();
    let (ok, out) = run(
        Command::new("verilator").args(["--lint-only", "-Wall", f]),
        "verilator",
    );
    if !ok || !out.trim().is_empty() {
        return Err(format!("verilator -Wall on {f}:\n{out}"));
    }
    let script = format!("read_verilog {f}; synth -top {}", d.top);
    let (ok, out) = run(Command::new("yosys").args(["-q", "-p", &script]), "yosys");
    if !ok {
        return Err(format!("yosys on {f}:\n{out}"));
    }
    let (ok, out) = run(
        Command::new("iverilog").args(["-g2005", "-o", "/dev/null", f]),
        "iverilog",
    );
    if !ok {
        return Err(format!("iverilog on {f}:\n{out}"));
    }
    Ok(())
}

#[test]
fn generated_designs_lint_synthesize_and_compile() {
    let dir = std::env::temp_dir().join(format!("lpgen-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // LPGEN_LINT_ONLY=alu_ checks only the designs whose top name contains the string.
    let only = std::env::var("LPGEN_LINT_ONLY").unwrap_or_default();
    let grid: Vec<_> = lint_grid(full())
        .into_iter()
        .filter(|p| top_name(p).contains(&only))
        .collect();
    // The tools are single-threaded; run one design per core.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = grid.get(i) else { break };
                // Progress and failures as they happen (long runs: scripts/rtl-grid.sh).
                match check(&dir, p) {
                    Ok(()) => eprintln!("lint {}/{}: {} ok", i + 1, grid.len(), top_name(p)),
                    Err(e) => {
                        eprintln!("lint {}/{}: FAILED {e}", i + 1, grid.len());
                        failures.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("{} designs checked", grid.len());
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn same_parameters_give_byte_identical_files() {
    let p = Params::new(Unit::LnsMul, "lns:5:6".parse().unwrap()).stages(1);
    let (a, b) = (generate(&p).unwrap(), generate(&p).unwrap());
    assert_eq!(a.verilog, b.verilog);
    assert_eq!(a.manifest, b.manifest);
}

#[test]
fn impossible_parameters_are_refused_in_one_line() {
    let bad = [
        (Unit::LnsMul, "posit:16:1", 0, "needs an LNS format"),
        (Unit::LnsMul, "lns:5:6", 9, "at most 1 pipeline stages"),
    ];
    for (u, f, s, needle) in bad {
        let e = generate(&Params::new(u, f.parse().unwrap()).stages(s)).unwrap_err();
        assert!(e.0.contains(needle) && !e.0.contains('\n'), "{e}");
    }
}
