//! `lpgen train` as a user meets it: a short run writes its results, `--resume` continues,
//! and bad input (unknown precision, corrupt dataset, a checkpoint of another run) gets one
//! line and exit status 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lpgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen")
}

/// 30 random 4×4 images per split, labels 0..=9.
fn dataset(dir: &Path) {
    dataset_of(dir, 10)
}

/// 30 random 4×4 images per split, labels below `classes`.
fn dataset_of(dir: &Path, classes: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut s = 99u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
        (s >> 40) as u8
    };
    for split in ["train", "t10k"] {
        let mut img = vec![0, 0, 8, 3, 0, 0, 0, 30, 0, 0, 0, 4, 0, 0, 0, 4];
        img.extend((0..30 * 16).map(|_| next()));
        let mut lab = vec![0, 0, 8, 1, 0, 0, 0, 30];
        lab.extend((0..30).map(|_| (next() as u64 % classes) as u8));
        std::fs::write(dir.join(format!("{split}-images-idx3-ubyte")), img).unwrap();
        std::fs::write(dir.join(format!("{split}-labels-idx1-ubyte")), lab).unwrap();
    }
}

fn tmp(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-train-cli-{}-{name}", std::process::id()))
}

fn fails_with(args: &[&str], needle: &str) {
    let out = lpgen(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "lpgen {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "lpgen {args:?}: {err}");
    assert!(
        err.contains(needle),
        "lpgen {args:?}: '{err}' lacks '{needle}'"
    );
}

#[test]
fn a_short_run_writes_results_and_resumes() {
    let ds = tmp("ds");
    dataset(&ds);
    let out = tmp("out");
    let base = [
        "train",
        "--format",
        "posit:12",
        "--quire",
        "--dataset",
        ds.to_str().unwrap(),
        "--hidden",
        "6",
        "--batch",
        "6",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        let o = lpgen(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let first = run(&["--epochs", "1"]);
    assert_eq!(first.lines().count(), 1);
    let first_m: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first_m["epoch"], 1, "{first}");
    assert_eq!(first_m["backend"], "golden", "{first}");
    let more = run(&["--epochs", "2", "--resume"]);
    assert_eq!(more.lines().count(), 1, "resumed after epoch 1: {more}");
    let more_m: serde_json::Value = serde_json::from_str(&more).unwrap();
    assert_eq!(more_m["epoch"], 2, "{more}");
    for f in ["metrics.jsonl", "plot.png", "checkpoint.lpck"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Another configuration may not resume it.
    let mut a = base.to_vec();
    a.extend(["--epochs", "3", "--resume", "--lr", "0.3"]);
    fails_with(&a, "another configuration");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&ds);
}

/// Labels above 9 make a wider output layer: a 30-class run trains and evaluates, and its
/// checkpoint is refused on a ten-class dataset in one line.
#[test]
fn a_many_class_run_trains_and_evaluates() {
    let (many, ten, out) = (tmp("ds30"), tmp("ds10"), tmp("out30"));
    dataset_of(&many, 30);
    dataset(&ten);
    let (many_s, out_s) = (many.to_str().unwrap(), out.to_str().unwrap());
    let o = lpgen(&[
        "train",
        "--format",
        "lns:5:6",
        "--dataset",
        many_s,
        "--hidden",
        "4",
        "--epochs",
        "1",
        "--out",
        out_s,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eval_on = |ds| {
        [
            "eval",
            "--checkpoint",
            out_s,
            "--format",
            "f32",
            "--dataset",
            ds,
        ]
    };
    let o = lpgen(&eval_on(many_s));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let last = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_string();
    let m: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(m["test_images"], 30, "{m}");
    fails_with(&eval_on(ten.to_str().unwrap()), "in 30 classes");
    for d in [many, ten, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_dfix_run_reports_scales_and_plots_them() {
    let ds = tmp("ds-dfix");
    dataset(&ds);
    let out = tmp("out-dfix");
    let o = lpgen(&[
        "train",
        "--format",
        "dfix:10:12",
        "--scale-every",
        "10",
        "--max-norm",
        "2",
        "--dataset",
        ds.to_str().unwrap(),
        "--model",
        "maxout",
        "--hidden",
        "4",
        "--maxout-k",
        "2",
        "--batch",
        "5",
        "--epochs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["scales"].as_object().map(|s| s.len()), Some(20), "{m}");
    assert!(m["overflow_rate"].is_number(), "{m}");
    assert!(out.join("scales.png").is_file());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&ds);
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let ds = tmp("bad");
    dataset(&ds);
    let d = ds.to_str().unwrap();
    fails_with(
        &["train", "--precision", "O16-L12-FB8q", "--dataset", d],
        "stage 'G' missing",
    );
    fails_with(
        &["train", "--precision", "Q16-L12-FBG8", "--dataset", d],
        "unknown stage",
    );
    fails_with(&["train", "--dataset", d], "give --format");
    // Seed 002's storage: widths, rates and combinations it does not take.
    let dfix = |extra: &[&str], needle: &str| {
        let mut args = vec!["train", "--backend", "f32", "--dataset", d];
        args.extend_from_slice(extra);
        fails_with(&args, needle);
    };
    dfix(&["--format", "dfix:0"], "must be 2..=32");
    dfix(&["--format", "dfix:10:65"], "must be 2..=32");
    dfix(&["--format", "dfix:ten"], "is not dfix:P:U");
    dfix(&["--format", "dfix:10:12:3"], "is not dfix:P:U");
    dfix(
        &["--format", "dfix:10:12", "--max-overflow", "2"],
        "not a rate in (0, 1)",
    );
    dfix(
        &["--format", "dfix:10:12", "--scale-every", "0"],
        "--scale-every 0",
    );
    dfix(
        &["--format", "dfix:10:12", "--radix-point", "10"],
        "fewer integer bits",
    );
    dfix(
        &[
            "--format",
            "dfix:10:12",
            "--radix-point",
            "5",
            "--max-overflow",
            "0.01",
        ],
        "do not apply",
    );
    dfix(
        &["--format", "dfix:10:12", "--kahan", "all"],
        "--kahan applies",
    );
    dfix(
        &["--format", "dfix:10:12", "--dfix-products", "fast"],
        "expected f32 or exact",
    );
    dfix(
        &["--format", "dfix:12:10", "--dfix-products", "exact"],
        "must not exceed the update width",
    );
    dfix(
        &[
            "--format",
            "dfix:10:12",
            "--dfix-products",
            "exact",
            "--model",
            "lenet5",
        ],
        "applies to dense layers",
    );
    dfix(&["--format", "dfix:10:12", "--workers", "2"], "one worker");
    // Float storage: float formats that f32 holds, no dfix options, one worker, f32 or golden.
    dfix(
        &["--format", "store:posit:8:2"],
        "storage rounds to a float format",
    );
    dfix(
        &["--format", "store:fix:7:8"],
        "storage rounds to a float format",
    );
    dfix(&["--format", "store:dfix:10"], "is --format dfix:P:U");
    dfix(&["--format", "store:float:0:3"], "E = 0");
    dfix(&["--format", "store:float:11:52"], "f32 does not hold");
    dfix(&["--format", "store:f16/"], "is not store:F or store:P/U");
    dfix(&["--format", "store:"], "is not store:F or store:P/U");
    dfix(
        &["--format", "store:f16", "--scale-every", "10"],
        "not float storage",
    );
    dfix(&["--format", "store:f16", "--workers", "2"], "one worker");
    for (backend, more, needle) in [
        (
            "rtl",
            &["--rounding", "stochastic:8"][..],
            "on --backend f32 or golden",
        ),
        ("rtl", &[][..], "on --backend f32 or golden"),
    ] {
        let mut args = vec!["train", "--backend", backend, "--dataset", d];
        args.extend_from_slice(&["--format", "store:f16"]);
        args.extend_from_slice(more);
        fails_with(&args, needle);
    }
    dfix(
        &["--format", "store:f16", "--kahan", "all"],
        "--kahan applies",
    );
    dfix(
        &["--format", "lns:5:6", "--scale-every", "5"],
        "apply to --format dfix",
    );
    dfix(
        &["--format", "dfix:10:12", "--max-norm=-1"],
        "--max-norm -1",
    );
    fails_with(
        &[
            "train",
            "--backend",
            "rtl",
            "--format",
            "dfix:10:12",
            "--dataset",
            d,
        ],
        "--backend f32 or golden",
    );
    fails_with(
        &[
            "train",
            "--format",
            "lns:5:6",
            "--backend",
            "gpu",
            "--dataset",
            d,
        ],
        "unknown backend",
    );
    fails_with(
        &["train", "--format", "lns:5:6", "--check", "--dataset", d],
        "--check",
    );
    fails_with(
        &[
            "train",
            "--format",
            "posit:8",
            "--keep-bits",
            "3",
            "--dataset",
            d,
        ],
        "--keep-bits",
    );
    fails_with(
        &[
            "train",
            "--format",
            "lns:5:6",
            "--dataset",
            "/nonexistent/dir",
        ],
        "no train-images",
    );
    // The gradient exchange of data-parallel runs.
    for (extra, needle) in [
        (&["--compress", "q8:tree"][..], "unknown 8-bit type"),
        (&["--compress", "2bit"], "expected none, 1bit or q8:TYPE"),
        (
            &["--compress", "q8:linear", "--no-error-feedback"],
            "applies to --compress 1bit",
        ),
        (
            &["--workers", "2", "--compress-grad", "q8:linear"],
            "give --compress q8:TYPE",
        ),
        (&["--adagrad-at", "local"], "applies to --optimizer adagrad"),
        (&["--no-overlap"], "applies to --double-buffer"),
        (
            &["--optimizer", "adagrad", "--adagrad-at", "server"],
            "expected local, aggregate or momentum",
        ),
    ] {
        let mut args = vec![
            "train",
            "--format",
            "f32",
            "--backend",
            "f32",
            "--dataset",
            d,
        ];
        args.extend_from_slice(extra);
        fails_with(&args, needle);
    }
    // A truncated image file, then gzip garbage.
    let img = ds.join("train-images-idx3-ubyte");
    let bytes = std::fs::read(&img).unwrap();
    std::fs::write(&img, &bytes[..100]).unwrap();
    fails_with(
        &["train", "--format", "lns:5:6", "--dataset", d],
        "do not match",
    );
    std::fs::remove_file(&img).unwrap();
    std::fs::write(
        ds.join("train-images-idx3-ubyte.gz"),
        [0x1f, 0x8b, 8, 0, 1, 2, 3],
    )
    .unwrap();
    fails_with(
        &["train", "--format", "lns:5:6", "--dataset", d],
        "corrupt gzip",
    );
    let _ = std::fs::remove_dir_all(&ds);
}

/// Issue 50: a run with delayed scaling, interrupted after epoch 1 and resumed, ends with the
/// words of the uninterrupted run: the model, the optimizer's state and the amax histories
/// (everything from the `layers` line on but the digest). A run without `--scaling` writes
/// no `scales` line.
#[test]
fn scaled_runs_resume_word_for_word() {
    let ds = tmp("scaled-ds");
    dataset(&ds);
    let words = |dir: &Path| -> String {
        let text = std::fs::read_to_string(dir.join("checkpoint.lpck")).unwrap();
        let from = text.find("\nlayers ").expect("a layers line");
        text[from..]
            .lines()
            .filter(|l| !l.starts_with("end "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let run = |out: &Path, scaling: &str, extra: &[&str]| {
        let mut a = vec![
            "train",
            "--backend",
            "golden",
            "--precision",
            "O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2",
            "--scaling",
            scaling,
            "--dataset",
            ds.to_str().unwrap(),
            "--hidden",
            "6",
            "--batch",
            "6",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend(extra);
        let o = lpgen(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let (straight, resumed) = (tmp("scaled-straight"), tmp("scaled-resumed"));
    run(&straight, "F=delayed:3,BG=delayed:4:1", &["--epochs", "2"]);
    run(&resumed, "F=delayed:3,BG=delayed:4:1", &["--epochs", "1"]);
    let after_one = words(&resumed);
    run(
        &resumed,
        "F=delayed:3,BG=delayed:4:1",
        &["--epochs", "2", "--resume"],
    );
    let w = words(&straight);
    assert!(w.contains("\nscales 10 "), "{w}");
    assert_ne!(w, after_one, "epoch 2 changed nothing");
    assert_eq!(w, words(&resumed));
    // Another rule may not resume it.
    let mut a = vec![
        "train",
        "--backend",
        "golden",
        "--precision",
        "O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2",
        "--scaling",
        "all=delayed:3",
        "--dataset",
        ds.to_str().unwrap(),
        "--hidden",
        "6",
        "--batch",
        "6",
        "--out",
        resumed.to_str().unwrap(),
    ];
    a.extend(["--epochs", "3", "--resume"]);
    fails_with(&a, "another configuration");
    let plain = tmp("scaled-none");
    run(&plain, "none", &["--epochs", "1"]);
    assert!(!words(&plain).contains("scales"));
    for d in [&ds, &straight, &resumed, &plain] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Issue 50's FP4 recipes: a run with NVFP4 products and the random Hadamard transform of
/// the weight gradients' operands (batch 6: G's K padded to 16), interrupted after epoch 1
/// and resumed, ends with the straight run's words; the transform's signs come from --seed,
/// so another seed trains other words. Bad recipes get one line and exit status 2.
#[test]
fn block_scaled_runs_resume_word_for_word() {
    let ds = tmp("block-ds");
    dataset(&ds);
    let words = |dir: &Path| -> String {
        let text = std::fs::read_to_string(dir.join("checkpoint.lpck")).unwrap();
        let from = text.find("\nlayers ").expect("a layers line");
        text[from..]
            .lines()
            .filter(|l| !l.starts_with("end "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let args = |out: &Path, scaling: &'static str| -> Vec<String> {
        [
            "train",
            "--backend",
            "golden",
            "--format",
            "bf16",
            "--scaling",
            scaling,
            "--dataset",
            ds.to_str().unwrap(),
            "--hidden",
            "6",
            "--batch",
            "6",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |out: &Path, scaling: &'static str, extra: &[&str]| {
        let mut a = args(out, scaling);
        a.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let o = lpgen(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let rht = "FB=nvfp4,G=nvfp4+rht16";
    let (straight, resumed, other) = (
        tmp("block-straight"),
        tmp("block-resumed"),
        tmp("block-seed"),
    );
    run(&straight, rht, &["--epochs", "2"]);
    run(&resumed, rht, &["--epochs", "1"]);
    let after_one = words(&resumed);
    run(&resumed, rht, &["--epochs", "2", "--resume"]);
    let w = words(&straight);
    assert_ne!(w, after_one, "epoch 2 changed nothing");
    assert_eq!(w, words(&resumed));
    run(&other, rht, &["--epochs", "2", "--seed", "2"]);
    assert_ne!(w, words(&other), "the seed changed nothing");
    // Without the transform (or with MXFP4) the run trains other words.
    run(&other, "all=nvfp4", &["--epochs", "2"]);
    assert_ne!(w, words(&other), "the transform changed nothing");
    let mut a = args(&resumed, "all=nvfp4");
    a.extend(["--epochs", "3", "--resume"].map(String::from));
    fails_with(
        &a.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "another configuration",
    );
    for (scaling, needle) in [
        (
            "all=scaled/fp4:e2m1/b16/f32",
            "a block scale has at most 16 bits",
        ),
        ("all=scaled/fp4:e2m1/b0/e8m0", "K >= 1"),
        ("all=delayed:0", "an amax history of 0 steps keeps nothing"),
        ("F=nvfp4+rht16", "not stage 'F''s"),
        ("G=current+rht16", "goes with a block recipe"),
        ("G=mxfp4+rht32", "the options are +rht16"),
        ("F=nvfp4+sr", "not stage 'F''s"),
        ("G=current+sr", "+sr goes with a block recipe"),
        ("G=nvfp4+sr+sr", "+sr given twice"),
        (
            "all=scaled/bf16/b32/e8m0",
            "more than the block product's i128 holds",
        ),
    ] {
        let a = args(&other, scaling);
        fails_with(&a.iter().map(|s| s.as_str()).collect::<Vec<_>>(), needle);
    }
    let mut a = args(&other, "all=nvfp4");
    a.extend(["--rounding", "stochastic:8"].map(String::from));
    fails_with(
        &a.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "round to nearest",
    );
    let mut a = args(&other, "all=nvfp4");
    a[4] = "posit:8".into();
    fails_with(
        &a.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "built for float stages",
    );
    for d in [&ds, &straight, &resumed, &other] {
        let _ = std::fs::remove_dir_all(d);
    }
}
