//! `lpgen train --optimizer adam|adamw --lr-schedule cosine` (issue 46): a short gpt and MLP
//! run, their checkpoints read by `lpgen eval` and resumed; bad input (β out of [0, 1), a
//! negative or overflowing ε, an unknown optimizer or schedule, a warm-up beyond the run's
//! updates, Adam's options on another optimizer, …) gets one line and exit 2.

mod common;

use common::{lpgen, refused};

fn tmp(name: &str) -> String {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-adam-cli-{}-{name}", std::process::id()))
        .display()
        .to_string()
}

fn text() -> String {
    let p = tmp("text.txt");
    std::fs::write(&p, b"abcabcabd ".repeat(40)).unwrap();
    format!("text:{p}")
}

/// A tiny gpt run's arguments (2 epochs of 3 updates) followed by `extra`.
fn gpt<'a>(dataset: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "train",
        "--model",
        "gpt",
        "--dataset",
        dataset,
        "--out",
        out,
        "--layers",
        "1",
        "--dim",
        "8",
        "--heads",
        "2",
        "--context",
        "4",
        "--epochs",
        "2",
        "--batch",
        "4",
        "--max-steps",
        "3",
        "--threads",
        "1",
        "--lr",
        "0.01",
    ];
    a.extend_from_slice(extra);
    a
}

#[test]
fn adamw_with_the_cosine_schedule_trains_evaluates_and_resumes() {
    let data = text();
    let out = tmp("out");
    let adamw = [
        "--optimizer",
        "adamw",
        "--lr-schedule",
        "cosine",
        "--warmup",
        "2",
        "--lr-min",
        "0.001",
    ];
    for backend in [["--backend", "f32"], ["--format", "bf16"]] {
        let _ = std::fs::remove_dir_all(&out);
        let args: Vec<&str> = gpt(&data, &out, &adamw)
            .into_iter()
            .chain(backend)
            .collect();
        let o = lpgen(&args);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{stdout}");
        // The rate of each epoch's last update: update 3 of 6 (0-based 2, the first after
        // the warm-up of 2) has lr; update 6 is 3/4 of the way down the cosine to --lr-min.
        let lr = |l: &str| -> f64 {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["lr"].as_f64().unwrap()
        };
        let late = 0.001 + 0.009 * (1.0 + (3.0 * std::f64::consts::PI / 4.0).cos()) / 2.0;
        assert!((lr(lines[0]) - 0.01).abs() < 1e-12, "{}", lines[0]);
        assert!((lr(lines[1]) - late).abs() < 1e-12, "{}", lines[1]);
        // The checkpoint names its optimizer and schedule, and eval reads it back.
        let o = lpgen(&[
            "eval",
            "--checkpoint",
            &out,
            "--dataset",
            &data,
            "--format",
            "bf16",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Resuming with the same options finds the run done; another --epochs is another
        // schedule, refused.
        let resume: Vec<&str> = args.iter().copied().chain(["--resume"]).collect();
        let o = lpgen(&resume);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut longer = resume.clone();
        let at = longer.iter().position(|&a| a == "--epochs").unwrap();
        longer[at + 1] = "3";
        let o = lpgen(&longer);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("another configuration"));
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_optimizer_input_gets_one_line_and_status_2() {
    let data = text();
    let out = tmp("bad");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--optimizer", "adam", "--beta2", "1.5"],
            "--beta2 1.5 is out of range",
        ),
        (
            &["--optimizer", "adamw", "--beta1", "-0.1"],
            "--beta1 -0.1 is out of range",
        ),
        (
            &["--optimizer", "adam", "--eps", "-1"],
            "--eps -1: give a positive finite",
        ),
        (
            &["--optimizer", "adam", "--eps", "0"],
            "--eps 0: give a positive finite",
        ),
        (
            &["--optimizer", "adam", "--eps", "1e39"],
            "rounds to inf in f32",
        ),
        (
            &["--optimizer", "adamw", "--weight-decay", "-1"],
            "--weight-decay -1",
        ),
        (&["--optimizer", "foo"], "unknown optimizer \"foo\""),
        (&["--beta1", "0.8"], "apply to --optimizer adam or adamw"),
        (
            &["--optimizer", "rmsprop", "--weight-decay", "0.1"],
            "apply to --optimizer adam",
        ),
        (
            &["--optimizer", "adam", "--momentum", "0.9"],
            "first moment is --beta1",
        ),
        (
            &["--lr-schedule", "cosine", "--warmup", "7"],
            "--warmup 7 is beyond the run's 6 updates",
        ),
        (
            &["--lr-schedule", "linear"],
            "unknown --lr-schedule \"linear\"",
        ),
        (
            &["--lr-schedule", "cosine", "--lr-min", "0.5"],
            "--lr-min 0.5: give a rate in [0, --lr]",
        ),
        (
            &["--lr-schedule", "cosine", "--schedule", "halving"],
            "drop --schedule halving",
        ),
        (&["--warmup", "3"], "apply to --lr-schedule cosine"),
    ];
    for (extra, needle) in cases {
        let mut args = gpt(&data, &out, extra);
        args.extend(["--backend", "f32"]);
        refused(&args, needle);
    }
    // An MLP with double buffering makes two updates a batch: the cosine schedule refuses.
    refused(
        &[
            "train",
            "--dataset",
            "/nonexistent",
            "--backend",
            "f32",
            "--double-buffer",
            "--lr-schedule",
            "cosine",
        ],
        "--double-buffer makes two",
    );
}
