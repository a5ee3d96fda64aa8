//! Every generated design passes `verilator --lint-only -Wall` with no warning, Yosys
//! `synth`, and Icarus Verilog (`-g2005`). CI runs a lean grid; `scripts/rtl-grid.sh` sets
//! `LPGEN_FULL_GRID=1` for the whole parameter grid of the RTL generator issue.
//!
//! With `LPGEN_LINT_PASSED=FILE`, a design whose Verilog (under the same tool versions) is
//! listed in FILE as passed is skipped, and each design that passes is appended: a grid of
//! hours can be run in several sittings. A changed generator changes the Verilog, so its
//! designs are checked again.

use std::path::Path;
use std::process::Command;

use lpgen_hdl::units::{lint_grid, top_name};
use lpgen_hdl::{generate, Design, Params, Unit};

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

/// FNV-1a, 64 bits: identifies a design's Verilog in the passed list.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The versions of the three tools, so that a passed list does not outlive an upgrade.
fn tool_versions() -> String {
    let v = |tool: &str, flag: &str| run(Command::new(tool).arg(flag), tool).1;
    format!(
        "{}{}{}",
        v("verilator", "--version"),
        v("yosys", "-V"),
        v("iverilog", "-V")
    )
}

/// The key of a design in the passed list: its top name and a digest of Verilog and tools.
fn passed_key(top: &str, verilog: &str, tools: &str) -> String {
    format!(
        "{top} {:016x}",
        fnv1a64(format!("{tools}\n{verilog}").as_bytes())
    )
}

/// Writes the design's files and `<top>.f` into a directory of its own and runs the tools
/// there: Verilator on the file list, Yosys and Icarus on the files in the list's order.
fn check(dir: &Path, d: &Design) -> Result<(), String> {
    let dir = dir.join(&d.top);
    std::fs::create_dir_all(&dir).unwrap();
    let list = d
        .verilog
        .write_to(&dir, &d.top, |path, text| std::fs::write(path, text))
        .unwrap();
    let names = d.verilog.names();
    let f = list.to_str().unwrap();
    let (ok, out) = run(
        Command::new("verilator").current_dir(&dir).args([
            "--lint-only",
            "-Wall",
            "--top-module",
            &d.top,
            "-f",
            f,
        ]),
        "verilator",
    );
    if !ok || !out.trim().is_empty() {
        return Err(format!("verilator -Wall on {f}:\n{out}"));
    }
    let script = format!("read_verilog {}; synth -top {}", names.join(" "), d.top);
    let (ok, out) = run(
        Command::new("yosys")
            .current_dir(&dir)
            .args(["-q", "-p", &script]),
        "yosys",
    );
    if !ok {
        return Err(format!("yosys on {f}:\n{out}"));
    }
    let (ok, out) = run(
        Command::new("iverilog")
            .current_dir(&dir)
            .args(["-g2005", "-o", "/dev/null", "-s", &d.top])
            .args(&names),
        "iverilog",
    );
    if !ok {
        return Err(format!("iverilog on {f}:\n{out}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[test]
fn generated_designs_lint_synthesize_and_compile() {
    let dir = std::env::temp_dir().join(format!("lpgen-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let passed_file = std::env::var_os("LPGEN_LINT_PASSED").map(std::path::PathBuf::from);
    let tools = passed_file
        .as_ref()
        .map(|_| tool_versions())
        .unwrap_or_default();
    let passed: std::collections::HashSet<String> = passed_file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let record = std::sync::Mutex::new(passed_file.as_ref().map(|f| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(f)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", f.display()))
    }));
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
                let d = match generate(p) {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("lint {}/{}: FAILED {p:?}: {e}", i + 1, grid.len());
                        failures.lock().unwrap().push(format!("{p:?}: {e}"));
                        continue;
                    }
                };
                let key = passed_key(&d.top, &d.verilog.text(), &tools);
                if passed.contains(&key) {
                    eprintln!("lint {}/{}: {} passed before", i + 1, grid.len(), d.top);
                    continue;
                }
                // Progress and failures as they happen (long runs: scripts/rtl-grid.sh).
                match check(&dir, &d) {
                    Ok(()) => {
                        eprintln!("lint {}/{}: {} ok", i + 1, grid.len(), d.top);
                        if let Some(f) = record.lock().unwrap().as_mut() {
                            use std::io::Write;
                            writeln!(f, "{key}").expect("append to the passed list");
                        }
                    }
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
        (Unit::LnsMul, "lns:5:6", 9, "at most 1 pipeline stage,"),
    ];
    for (u, f, s, needle) in bad {
        let e = generate(&Params::new(u, f.parse().unwrap()).stages(s)).unwrap_err();
        assert!(e.0.contains(needle) && !e.0.contains('\n'), "{e}");
    }
}
