//! `lpgen train --accumulate matmul=fdpa:PRESET[:promoteN]` (issue 49): the FP8 recipe trains
//! LeNet-5 on the golden backend with a GPU matrix unit's accumulation, and the figures differ
//! from exact accumulation's; what cannot run (a chunk longer than the rtl backend's array
//! PE builds, a non-float or unlisted format, a sum) is refused in one line.

mod common;

use std::path::{Path, PathBuf};

use common::{lpgen, refused};

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mnist-300")
}

const RECIPE: &str = "O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2";

/// The training and test losses of one short LeNet-5 epoch in the FP8 recipe.
fn lenet(name: &str, accumulate: &str) -> (f64, f64) {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-fdpa-{}-{name}", std::process::id()));
    let ds = bundled();
    let args = [
        "train",
        "--model",
        "lenet5",
        "--backend",
        "golden",
        "--dataset",
        ds.to_str().unwrap(),
        "--precision",
        RECIPE,
        "--accumulate",
        accumulate,
        "--epochs",
        "1",
        "--train-limit",
        "64",
        "--test-limit",
        "32",
        "--batch",
        "16",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = lpgen(&args);
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let m: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let (train, test) = (
        m["train_loss"].as_f64().unwrap(),
        m["test_loss"].as_f64().unwrap(),
    );
    assert!(
        train.is_finite() && test.is_finite(),
        "{accumulate}: {train} {test}"
    );
    (train, test)
}

#[test]
fn the_fp8_recipe_trains_lenet5_with_gpu_accumulation() {
    let hopper = lenet("h", "matmul=fdpa:hopper");
    let promoted = lenet("p", "matmul=fdpa:hopper:promote128");
    let exact = lenet("e", "matmul=exact");
    assert_ne!(hopper, exact);
    assert_ne!(hopper, promoted);
}

#[test]
fn fdpa_placements_that_cannot_run_are_refused() {
    let ds = bundled();
    let ds = ds.to_str().unwrap();
    let base = [
        "train",
        "--dataset",
        ds,
        "--out",
        "/nonexistent/never-written",
    ];
    for (more, needle) in [
        (
            &[
                "--backend",
                "rtl",
                "--precision",
                RECIPE,
                "--accumulate",
                "matmul=fdpa:65:13:rz-f32",
            ][..],
            "chunks of up to L = 64 pairs, not 65",
        ),
        (
            &[
                "--format",
                "posit:8:2",
                "--accumulate",
                "matmul=fdpa:hopper",
            ],
            "'fdpa' is for float formats",
        ),
        (
            &["--format", "float:8:10", "--accumulate", "matmul=fdpa:ada"],
            "ada takes f16, bf16 or fp8",
        ),
        (
            &["--precision", RECIPE, "--accumulate", "sums=fdpa:hopper"],
            "matrix unit's dot product",
        ),
        (
            &["--precision", RECIPE, "--accumulate", "matmul=fdpa:nvidia"],
            "unknown preset",
        ),
        (
            &["--backend", "f32", "--accumulate", "matmul=fdpa:hopper"],
            "the f32 machine",
        ),
    ] {
        let args: Vec<&str> = base.iter().chain(more).copied().collect();
        refused(&args, needle);
    }
}
