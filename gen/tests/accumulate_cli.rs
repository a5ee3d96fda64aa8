//! `lpgen train --accumulate` (seed 000 Table 4.5's placements): a placement that names what
//! `--kahan` or `--quire` already choose trains the same figures; a pairwise placement trains
//! other ones; placements a family or machine cannot run are refused in one line.

mod common;

use std::path::{Path, PathBuf};

use common::{lpgen, refused};

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mnist-300")
}

/// The training and test losses of 1 epoch of a 784-8-10 MLP on 100 bundled images.
fn losses(name: &str, args: &[&str]) -> (f64, f64) {
    let small = [
        "--hidden",
        "8",
        "--epochs",
        "1",
        "--train-limit",
        "100",
        "--test-limit",
        "50",
    ];
    losses_of(name, &small, args)
}

/// The training and test losses of a run on the bundled images with the network and length
/// `setting` says.
fn losses_of(name: &str, setting: &[&str], args: &[&str]) -> (f64, f64) {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-acc-cli-{}-{name}", std::process::id()));
    let ds = bundled();
    let mut all = vec!["train", "--dataset", ds.to_str().unwrap()];
    all.extend(setting);
    all.extend(["--out", out.to_str().unwrap()]);
    all.extend(args);
    let o = lpgen(&all);
    assert!(
        o.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let m: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    (
        m["train_loss"].as_f64().unwrap(),
        m["test_loss"].as_f64().unwrap(),
    )
}

#[test]
fn placements_train_as_the_modes_they_name() {
    let kahan = losses("k", &["--format", "lns:5:6", "--kahan", "all"]);
    let placed = losses(
        "kp",
        &[
            "--format",
            "lns:5:6",
            "--kahan",
            "none",
            "--accumulate",
            "all=kahan",
        ],
    );
    assert_eq!(placed, kahan);
    let naive = losses("n", &["--format", "lns:5:6", "--kahan", "none"]);
    let pairwise = losses(
        "p",
        &[
            "--format",
            "lns:5:6",
            "--kahan",
            "none",
            "--accumulate",
            "matmul=pairwise",
        ],
    );
    assert_ne!(pairwise, naive);
    assert_ne!(naive, kahan);
    let quire = losses("q", &["--format", "posit:8:2", "--quire"]);
    let exact = losses(
        "e",
        &[
            "--format",
            "posit:8:2",
            "--accumulate",
            "matmul=exact,sums=exact,softmax=exact",
        ],
    );
    assert_eq!(exact, quire);
}

/// The matrix products by pass (seed 004's F, B and G stages): a quire in one pass trains
/// other figures than in any other pass or in none, and the three passes with the sums are
/// `--quire`. A pass that read another's mode (a mutant) trains as naive or as that pass.
/// (Two epochs of a 784-32-10 MLP on 300 images: in one epoch on 100, posit:8:2's hidden
/// weights do not move yet, so the backward pass's sums change nothing.)
#[test]
fn each_pass_takes_its_own_accumulation() {
    let setting = ["--hidden", "32", "--epochs", "2", "--batch", "10"];
    let posit = |name: &str, acc: &str| {
        let mut args = vec!["--format", "posit:8:2"];
        if !acc.is_empty() {
            args.extend(["--accumulate", acc]);
        }
        losses_of(name, &setting, &args)
    };
    let naive = posit("pn", "");
    let passes = [
        posit("pf", "forward=exact"),
        posit("pb", "backward=exact"),
        posit("pg", "gradient=exact"),
    ];
    for (i, p) in passes.iter().enumerate() {
        assert_ne!(*p, naive, "pass {i}");
        for q in &passes[i + 1..] {
            assert_ne!(p, q, "pass {i}");
        }
    }
    let quire = losses_of("pq", &setting, &["--format", "posit:8:2", "--quire"]);
    let by_pass = posit(
        "pa",
        "forward=exact,backward=exact,gradient=exact,sums=exact,softmax=exact",
    );
    assert_eq!(by_pass, quire);
}

#[test]
fn placements_that_cannot_run_are_refused() {
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
            &["--format", "lns:5:6", "--accumulate", "matmul=exact"][..],
            "not offered by lns:5:6",
        ),
        (
            &["--format", "lns:5:6", "--accumulate", "update=pairwise"],
            "naive or kahan",
        ),
        (
            &["--format", "lns:5:6", "--accumulate", "matmul=fast"],
            "unknown mode",
        ),
        (
            &["--backend", "f32", "--accumulate", "matmul=kahan"],
            "the f32 machine",
        ),
        (
            &[
                "--format",
                "lns:5:6",
                "--keep-bits",
                "4",
                "--accumulate",
                "sums=pairwise",
            ],
            "--keep-bits",
        ),
    ] {
        let args: Vec<&str> = base.iter().chain(more).copied().collect();
        refused(&args, needle);
    }
}
