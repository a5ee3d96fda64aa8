//! `lpgen golden mx:…` and `lpgen quant mx:…`: what they print, and bad input refused in one
//! line with exit status 2. Expected values are worked by hand from the OCP MX v1.0 rules.

use std::process::Command;

fn lpgen(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn quantize_prints_scale_codes_and_values() {
    // max |V| = 5: ⌊log2 5⌋ − 2 = 0, X = 1; 5 is the tie of 4 and 6 (to even: 4, code 6),
    // 7 > 6 saturates (code 7), −0.25 is the tie of 0 and 0.5 (to even: −0, code 8).
    let mut args = vec![
        "golden",
        "mx:fp4:e2m1:b4",
        "quantize",
        "5",
        "--",
        "-0.25",
        "0.75",
    ];
    args.insert(4, "1");
    let (code, out, err) = lpgen(&args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "scale 0x7f 2^0\ncodes 0x6 0x2 0x8 0x2\nvalues 4 1 -0 1\n"
    );
    let (_, out, _) = lpgen(&["golden", "mx:fp4:e2m1:b2", "quantize", "7", "0.1"]);
    assert_eq!(out, "scale 0x7f 2^0\ncodes 0x7 0x0\nvalues 6 0\n");
    let (_, out, _) = lpgen(&["golden", "mx:int8:b2", "quantize", "nan", "1"]);
    assert_eq!(out, "scale 0xff NaN\ncodes 0x00 0x00\nvalues NaN NaN\n");
}

#[test]
fn quantize_takes_words_of_an_input_format() {
    // fix:7:8 words −128, 1.0 (decimal, read as the word 0x0100), −1, 0.5 into INT8: max
    // 2^7, e = 7 (scale 0x86); k = x/2^7·64: −64 (0xc0); 0.5 and −0.5 tie to 0; 0.25 → 0.
    let (code, out, err) = lpgen(&[
        "golden",
        "mx:int8:b4",
        "quantize",
        "--input",
        "fix:7:8",
        "0x8000",
        "1",
        "0xff00",
        "0x80",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "scale 0x86 2^7\ncodes 0xc0 0x00 0x00 0x00\nvalues -128 0 0 0\n"
    );
    // f16 subnormals 2^−24, 3·2^−24 into E4M3: max 1.5·2^−23, e = −23 − 8 = −31 (0x60);
    // elements 2^7 (0x70) and 1.5·2^8 (0x7c).
    let (code, out, err) = lpgen(&[
        "golden",
        "mx:fp8:e4m3:b2",
        "quantize",
        "--input",
        "f16",
        "0x0001",
        "0x0003",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("scale 0x60 2^-31\ncodes 0x70 0x7c\n"),
        "{out}"
    );
}

/// `--input` refused in one line, status 2: formats mx-enc does not take, words too wide,
/// an operation or a unit it is not for.
#[test]
fn bad_inputs_are_one_line_and_status_2() {
    let out = "/tmp/lpgen-mx-cli-bad-input";
    for args in [
        &[
            "golden",
            "mx:int8:b2",
            "quantize",
            "--input",
            "posit:8:0",
            "1",
            "2",
        ][..],
        &[
            "golden",
            "mx:int8:b2",
            "quantize",
            "--input",
            "float:9:23",
            "1",
            "2",
        ],
        &[
            "golden",
            "mx:int8:b2",
            "quantize",
            "--input",
            "fp8:e4m3",
            "1",
            "2",
        ],
        &[
            "golden",
            "mx:int8:b2",
            "quantize",
            "--input",
            "bf16",
            "0x10000",
            "2",
        ],
        &[
            "golden",
            "mx:int8:b2",
            "dequantize",
            "--input",
            "bf16",
            "0x7f",
            "1",
        ],
        &["golden", "bf16", "add", "--input", "bf16", "1", "2"],
        &[
            "rtl",
            "mx-enc",
            "--format",
            "mx:int8",
            "--input",
            "posit:8:0",
            "--out",
            out,
        ],
        &[
            "rtl", "mx-enc", "--format", "mx:int8", "--input", "lns:4:4", "--out", out,
        ],
        &[
            "rtl",
            "mx-enc",
            "--format",
            "mx:int8",
            "--input",
            "float:8:24",
            "--out",
            out,
        ],
        &[
            "rtl", "mx-enc", "--format", "mx:int8", "--input", "bf16:ftz", "--out", out,
        ],
        &[
            "rtl", "mx-dot", "--format", "mx:int8", "--input", "bf16", "--out", out,
        ],
        &[
            "rtl",
            "float-add",
            "--format",
            "bf16",
            "--input",
            "bf16",
            "--out",
            out,
        ],
    ] {
        refused_in_one_line(args);
    }
}

/// `lpgen ARGS` exits 2 with one line on stderr, and no panic.
fn refused_in_one_line(args: &[&str]) {
    let (code, _, err) = lpgen(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

/// `lpgen rtl mx-enc --input`: the design's name and manifest say the input (f32: neither).
#[test]
fn rtl_mx_enc_names_its_input() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-mx-enc-input-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, out, err) = lpgen(&[
        "rtl",
        "mx-enc",
        "--format",
        "mx:int8:b2",
        "--input",
        "fix:7:8",
        "--out",
        d,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let top = "lpgen_mx_enc_mx_int8_b2_in_fix_7_8_s0";
    assert!(out.contains(&format!("{top}.v")), "{out}");
    let manifest = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    assert!(manifest.contains("\"input\": \"fix:7:8\""), "{manifest}");
    let v = std::fs::read_to_string(dir.join(format!("{top}.v"))).unwrap();
    assert!(v.contains("input  wire [31:0] x,"), "two 16-bit words");
    for input in [None, Some("f32")] {
        let mut args = vec!["rtl", "mx-enc", "--format", "mx:int8:b2", "--out", d];
        args.extend(input.map(|i| ["--input", i]).into_iter().flatten());
        let (code, out, err) = lpgen(&args);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("lpgen_mx_enc_mx_int8_b2_s0.v"), "{out}");
        let m = std::fs::read_to_string(dir.join("lpgen_mx_enc_mx_int8_b2_s0.json")).unwrap();
        assert!(!m.contains("\"input\": \""), "{m}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dot_prints_blocks_and_both_accumulations() {
    // K = 2: block 0 = (1, 2)·(3, 4) = 11 exactly; block 1 = (0.5)·(0.5) = 0.25.
    let (code, out, err) = lpgen(&["golden", "mx:fp8:e4m3:b2", "dot", "1,3", "2,4", "0.5,0.5"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].ends_with("dot 11 (11*2^0)"), "{out}");
    assert!(lines[1].ends_with("dot 0.25 (1*2^-2)"), "{out}");
    assert_eq!(lines[2], "exact 11.25 (45*2^-2)");
    assert_eq!(lines[3], "f32 11.25");
}

#[test]
fn quant_prints_a_row_in_the_q8_columns() {
    let (code, out, err) = lpgen(&[
        "quant",
        "mx:fp8:e4m3",
        "--dist",
        "N(0,1)",
        "--samples",
        "10000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("type "), "{out}");
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&row[..4], ["mx:fp8:e4m3", "N(0,1)", "10000", "1"]);
    // E4M3 keeps 3 fraction bits: relative error at most 2^-4 per value, mean near 1.5 %.
    let rel: f64 = row[row.len() - 2].parse().unwrap();
    assert!(rel > 0.5 && rel < 3.0, "{out}");
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    for args in [
        &["golden", "mx:fp8:e4m3:b0", "quantize", "1"][..],
        &["golden", "mx:fp5:e2m2", "quantize", "1"],
        &["golden", "mx:int8:b100000", "quantize", "1"],
        &["golden", "mx:fp8:e3m5", "quantize", "1"],
        &["golden", "mx:fp4:e2m1:b2", "quantize", "1", "2", "3"],
        &["golden", "mx:fp4:e2m1:b2", "quantize", "1", "x"],
        &["golden", "mx:fp4:e2m1", "add", "1", "2"],
        &["golden", "mx:fp4:e2m1:b2", "dot", "1"],
        &["golden", "mx:fp4:e2m1:b2", "dequantize", "0x7f", "0x10"],
        &["golden", "mx:fp4:e2m1:b2", "dequantize", "0x100", "0x1"],
        &["golden", "mx:fp4:e2m1:b1", "--stdin", "quantize"],
        &["golden", "mx", "quantize", "1"],
        &["quant", "mx:fp6:e2m3", "--dist", "N(0,1)", "--offset", "1"],
        &["quant", "mx:fp6:e9m3", "--dist", "N(0,1)"],
        &[
            "rtl",
            "alu",
            "--format",
            "mx:int8",
            "--out",
            "/nonexistent-lpgen-mx",
        ],
    ] {
        refused_in_one_line(args);
    }
}

/// `lpgen train --format mx:…`: bad strings, an unknown backend, more array stages than the
/// mx PE takes on the rtl backend, and options that do not apply are refused in one line with status 2, before the dataset is read.
#[test]
fn train_refuses_in_one_line() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    // Nothing should be written; a run let through by mistake writes here, not to /.
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-mx-refused-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for (extra, why) in [
        (&["--format", "mx:fp5:e2m2"][..], "unknown MX element"),
        (&["--format", "mx:fp8:e4m3:b0"], "block size 0"),
        (&["--format", "mx:int8:b100000"], "block size 100000"),
        (
            &["--format", "mx:fp8:e4m3", "--backend", "tpu"],
            "unknown backend",
        ),
        (
            &[
                "--format",
                "mx:fp8:e4m3",
                "--backend",
                "rtl",
                "--array-stages",
                "7",
            ],
            "takes at most 6",
        ),
        (
            &["--format", "mx:fp8:e4m3", "--quire"],
            "--quire does not apply",
        ),
        (
            &["--format", "mx:fp8:e4m3", "--kahan", "all"],
            "--kahan does not apply",
        ),
        (
            &["--format", "mx:fp8:e4m3", "--accumulate", "matmul=exact"],
            "--accumulate does not apply",
        ),
        (
            &["--format", "mx:fp8:e4m3", "--rounding", "stochastic:8"],
            "--rounding does not apply",
        ),
        (
            &["--format", "mx:fp8:e4m3", "--precision", "O16-LFBG8"],
            "not both",
        ),
    ] {
        let mut args = vec!["train", "--dataset", data, "--out", out, "--epochs", "1"];
        args.extend_from_slice(extra);
        let (code, _, err) = lpgen(&args);
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(why), "{extra:?}: {err}");
    }
    assert!(
        !std::path::Path::new(out).exists(),
        "a refused run wrote {out}"
    );
}

/// The golden and f32 machines train an MX run to the same figures here: both take the golden
/// MX product and their f32 lanes agree bit for bit (the f32 machine's own sums, bias
/// gradients and softmax denominators, may round differently in general; on this run they
/// do not).
#[test]
fn train_golden_and_f32_agree() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-mx-train-{}", std::process::id()));
    let mut lines = vec![];
    for backend in ["golden", "f32"] {
        let out = dir.join(backend);
        let (code, stdout, err) = lpgen(&[
            "train",
            "--format",
            "mx:fp8:e4m3",
            "--backend",
            backend,
            "--dataset",
            data,
            "--hidden",
            "16",
            "--epochs",
            "2",
            "--schedule",
            "fixed",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{backend}: {err}");
        // The figures of each epoch without the backend's name and the timings.
        let figures: Vec<String> = stdout
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!(
                    "{} {} {} {}",
                    v["train_loss"], v["train_acc"], v["test_loss"], v["test_acc"]
                )
            })
            .collect();
        lines.push(figures);
    }
    assert_eq!(lines[0], lines[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lpgen rtl array --format mx:…`: the array of `mx` PEs (the default PE for MX formats),
/// its manifest's block-wide operand buses; and `--pe` other than mx with an MX format, or
/// mx with a scalar format, refused in one line with status 2 before any file is written.
#[test]
fn rtl_array_takes_mx_blocks_with_the_mx_pe() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-mx-array-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let (code, _, err) = lpgen(&[
        "rtl",
        "array",
        "--format",
        "mx:fp4:e2m1:b8",
        "--rows",
        "2",
        "--cols",
        "2",
        "--stages",
        "2",
        "--out",
        out,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let top = "lpgen_array_mx_fp4_e2m1_b8_2x2_mx_s2";
    let manifest = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(m["format"], "mx:fp4:e2m1:b8");
    assert_eq!(m["parameters"]["pe"], "mx");
    let width = |name: &str| {
        m["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["width"]
            .clone()
    };
    // Two blocks of 8 + 8·4 bits in; four f32 words out.
    assert_eq!(width("a_in"), 80);
    assert_eq!(width("c_out"), 128);
    let _ = std::fs::remove_dir_all(&dir);
    for (args, why) in [
        (
            &["--format", "mx:int8", "--pe", "float"][..],
            "take --pe mx",
        ),
        (
            &["--format", "fp8:e4m3", "--pe", "mx"],
            "works on MX blocks",
        ),
        (&["--format", "mx:int8", "--stages", "7"], "0..=6"),
    ] {
        let mut all = vec!["rtl", "array", "--out", out];
        all.extend_from_slice(args);
        let (code, _, err) = lpgen(&all);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        // (`lpgen rtl` makes the output directory first; no file goes into it.)
        let files = std::fs::read_dir(&dir).map_or(0, |d| d.count());
        assert_eq!(files, 0, "{args:?} wrote into {out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
