//! `lpgen train --model gpt` (issue 46): a short run reports test_bpc and `lpgen eval`
//! evaluates its checkpoint in another format; bad input (heads that
//! do not divide dim, a missing or empty text, a context too long for the text or below 1,
//! a gpt on an IDX directory, a text for another model, options a gpt does not take yet)
//! gets one line and exit 2, as does a gpt on `--backend rtl` in a family without an array PE.

mod common;

use common::{lpgen, refused};

fn text(name: &str, bytes: &[u8]) -> String {
    let p = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-gpt-cli-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// A tiny gpt run's arguments; `extra` flags replace the defaults of the same name.
fn gpt<'a>(dataset: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "train",
        "--model",
        "gpt",
        "--dataset",
        dataset,
        "--out",
        out,
    ];
    for (flag, value) in [
        ("--layers", "1"),
        ("--dim", "8"),
        ("--heads", "2"),
        ("--context", "4"),
        ("--epochs", "1"),
        ("--batch", "4"),
        ("--max-steps", "3"),
        ("--threads", "1"),
    ] {
        if !extra.contains(&flag) {
            a.extend([flag, value]);
        }
    }
    a.extend_from_slice(extra);
    a
}

#[test]
fn a_short_gpt_run_reports_test_bpc() {
    let path = text("ok.txt", &b"abcabcabd ".repeat(40));
    let data = format!("text:{path}");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-gpt-cli-out-{}", std::process::id()));
    let out = out.display().to_string();
    for backend in [["--backend", "f32"], ["--format", "posit:16:1"]] {
        let o = lpgen(&gpt(&data, &out, &backend));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(stdout.contains("\"test_bpc\":"), "{stdout}");
    }
    // `lpgen eval` reads the gpt's checkpoint and evaluates it in another format.
    let o = lpgen(&[
        "eval",
        "--checkpoint",
        &out,
        "--format",
        "bf16",
        "--dataset",
        &data,
        "--threads",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("\"format\":\"bf16\""), "{stdout}");
    refused(
        &[
            "eval",
            "--checkpoint",
            &out,
            "--format",
            "bf16",
            "--dataset",
            "x",
        ],
        "give its --dataset text:PATH",
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_gpt_input_is_refused_in_one_line() {
    let ok = format!("text:{}", text("fine.txt", &b"hello world ".repeat(20)));
    let empty = format!("text:{}", text("empty.txt", b""));
    let short = format!("text:{}", text("short.txt", b"0123456789abcdefghij"));
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-gpt-cli-bad-{}", std::process::id()));
    let out = out.display().to_string();
    let f32 = ["--backend", "f32"];
    for (args, needle) in [
        (
            gpt(&ok, &out, &["--backend", "f32", "--heads", "3"]),
            "does not divide --dim",
        ),
        (
            gpt("text:/nonexistent/x.txt", &out, &f32),
            "cannot read text",
        ),
        (gpt(&empty, &out, &f32), "is empty"),
        (gpt(&short, &out, &f32), "shorter than a window"),
        (
            gpt(&ok, &out, &["--backend", "f32", "--context", "0"]),
            "--context 0",
        ),
        (
            gpt("data/mnist-300", &out, &f32),
            "give --dataset text:PATH",
        ),
        (
            gpt(&ok, &out, &["--backend", "f32", "--workers", "2"]),
            "does not take data-parallel",
        ),
        (
            gpt(&ok, &out, &["--format", "dfix:10:12"]),
            "does not take storage",
        ),
        (
            gpt(&ok, &out, &["--backend", "f32", "--dim", "100000"]),
            "--dim 100000 is out of range",
        ),
    ] {
        refused(&args, needle);
    }
    refused(
        &["train", "--dataset", &ok, "--backend", "f32", "--out", &out],
        "text datasets are for --model gpt",
    );
    let mnist = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    let vit = |patch: &'static str| {
        vec![
            "train",
            "--model",
            "vit",
            "--patch",
            patch,
            "--dataset",
            mnist,
            "--backend",
            "f32",
            "--out",
            "/nonexistent/vit",
        ]
    };
    refused(&vit("5"), "--patch 5 does not tile the 28x28 image");
    refused(&vit("0"), "a --patch of at least 1");
}

/// `--model vit --patch 7` trains on the IDX images (4×4 patches of 7×7 pixels).
#[test]
fn a_short_vit_run_trains_on_images() {
    let mnist = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-vit-cli-{}", std::process::id()));
    let out = out.display().to_string();
    let o = lpgen(&[
        "train",
        "--model",
        "vit",
        "--patch",
        "7",
        "--layers",
        "1",
        "--dim",
        "16",
        "--heads",
        "2",
        "--dataset",
        mnist,
        "--format",
        "bf16",
        "--epochs",
        "1",
        "--batch",
        "10",
        "--max-steps",
        "3",
        "--test-limit",
        "20",
        "--threads",
        "1",
        "--out",
        &out,
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains("\"test_acc\":") && !stdout.contains("test_bpc"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// On `--backend rtl` a run whose accumulation no array PE of its family performs (posits and
/// takums without the quire their PEs need) is refused in one line naming the PEs' mode.
#[test]
fn a_gpt_on_the_rtl_without_an_array_pe_for_its_accumulation_is_refused() {
    let path = text("rtl.txt", &b"abcabcabd ".repeat(40));
    let data = format!("text:{path}");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-gpt-cli-rtl-{}", std::process::id()));
    let out = out.display().to_string();
    for (format, needle) in [
        (
            "takum:16",
            "no array PE accumulates takum:16 in mode 'naive' (PEs: takum-quire)",
        ),
        (
            "posit:16:1",
            "(its PEs take mode quire; --quire selects quire",
        ),
    ] {
        refused(
            &gpt(&data, &out, &["--backend", "rtl", "--format", format]),
            needle,
        );
    }
}

/// Issue 50 on the transformers: a gpt with the FP8 recipe and delayed scaling, interrupted
/// after epoch 1 and resumed, ends with the words of the uninterrupted run (the model, the
/// optimizer's state and the 30 amax histories of its five linear products); a vit with
/// NVFP4 and the Hadamard transform trains; unscaled, the gpt trains other words. On
/// `--backend rtl` a float stage's scaled products (converted into binary32 and back) are
/// refused in one line, as a dense network's are.
#[test]
fn a_scaled_gpt_resumes_word_for_word() {
    let path = text("scaled.txt", &b"abcabcabd ".repeat(40));
    let data = format!("text:{path}");
    let dir = |name: &str| {
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("lpgen-gpt-cli-{name}-{}", std::process::id()));
        d.display().to_string()
    };
    let words = |out: &str| -> String {
        let text = std::fs::read_to_string(format!("{out}/checkpoint.lpck")).unwrap();
        let from = text.find("\nlayers ").expect("a layers line");
        text[from..]
            .lines()
            .filter(|l| !l.starts_with("end "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let recipe = [
        "--precision",
        "O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2",
        "--scaling",
        "F=delayed:3,BG=delayed:4:1",
    ];
    let run = |out: &str, extra: &[&str]| {
        let o = lpgen(&gpt(&data, out, extra));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let (straight, resumed, plain) = (dir("scaled-a"), dir("scaled-b"), dir("scaled-c"));
    run(&straight, &[&recipe[..], &["--epochs", "2"]].concat());
    run(&resumed, &recipe);
    let after_one = words(&resumed);
    run(
        &resumed,
        &[&recipe[..], &["--epochs", "2", "--resume"]].concat(),
    );
    let w = words(&straight);
    assert!(w.contains("\nscales 30 "), "{w}");
    assert_ne!(w, after_one, "epoch 2 changed nothing");
    assert_eq!(w, words(&resumed));
    run(&plain, &[&recipe[..2], &["--epochs", "2"]].concat());
    assert!(!words(&plain).contains("scales"));
    let model: Vec<&str> = w.lines().filter(|l| !l.starts_with("scales ")).collect();
    assert_ne!(words(&plain), model.join("\n"), "scaling changed nothing");
    let mnist = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    let vit = [
        "train",
        "--model",
        "vit",
        "--patch",
        "7",
        "--layers",
        "1",
        "--dim",
        "8",
        "--heads",
        "2",
        "--dataset",
        mnist,
        "--format",
        "bf16",
        "--scaling",
        "FB=nvfp4,G=nvfp4+rht16",
        "--epochs",
        "1",
        "--batch",
        "4",
        "--max-steps",
        "2",
        "--test-limit",
        "8",
        "--threads",
        "1",
        "--out",
        &plain,
    ];
    let o = lpgen(&vit);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    refused(
        &gpt(
            &data,
            &plain,
            &[
                &recipe[..2],
                &["--backend", "rtl", "--scaling", "G=current"],
            ]
            .concat(),
        ),
        "--scaling G on --backend rtl: scaled fp8:e5m2 products convert fp8:e5m2 to f32",
    );
    for d in [&straight, &resumed, &plain] {
        let _ = std::fs::remove_dir_all(d);
    }
}
