//! A short `lpgen train --rounding stochastic:R --backend rtl --check` run (issue 32): float
//! lanes on `vector --rounding`, products on `array --pe float --rounding` (docs/train.md), 0
//! differing bits against the golden machine in lockstep, and the checkpoint's words equal
//! to those of the same run on `--backend golden` (the files differ only in their metrics
//! lines, which name the backend and time, and the final checksum over them).

use std::path::{Path, PathBuf};
use std::process::Command;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mnist-300")
}

/// Runs `lpgen train` on `backend` into `out`; returns stderr.
fn train(backend: &str, out: &Path, check: bool) -> String {
    let mut args = vec![
        "train",
        "--format",
        "fp8:e5m2",
        "--quire",
        "--rounding",
        "stochastic:3",
        "--backend",
        backend,
        "--rows",
        "2",
        "--cols",
        "3",
        "--lanes",
        "4",
        "--epochs",
        "1",
        "--hidden",
        "4",
        "--train-limit",
        "40",
        "--test-limit",
        "10",
    ];
    if check {
        args.push("--check");
    }
    let d = data();
    let o = out.to_str().unwrap();
    args.extend(["--dataset", d.to_str().unwrap(), "--out", o]);
    let r = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(&args)
        .output()
        .expect("run lpgen");
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(r.status.success(), "{backend}: {err}");
    err
}

/// The checkpoint's lines without metrics (`{"epoch":…}`) and the final `end` checksum.
fn words(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("checkpoint.lpck"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('{') && !l.starts_with("end "))
        .map(String::from)
        .collect()
}

#[test]
fn a_stochastic_rtl_run_is_the_golden_run() {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-sr-train-{}", std::process::id()));
    let (rtl, golden) = (base.join("rtl"), base.join("golden"));
    let err = train("rtl", &rtl, true);
    assert!(err.contains(", 0 differing bits"), "{err}");
    train("golden", &golden, false);
    let (a, b) = (words(&rtl), words(&golden));
    assert!(a.len() > 100, "{}", a.len());
    assert_eq!(a, b);
    std::fs::remove_dir_all(&base).ok();
}
