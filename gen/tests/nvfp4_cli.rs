//! `lpgen golden nvfp4 …` and `lpgen golden scaled/… …`: what they print, and bad input
//! refused in one line with exit status 2. Expected values are worked by hand from SPEC.md
//! §3's NVFP4 rule and TransformerEngine's delayed scaling.

use std::io::Write;
use std::process::{Command, Stdio};

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

fn lpgen_stdin(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lpgen");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn quantize(xs: &[&str], extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["golden", "nvfp4", "quantize"];
    args.extend(extra);
    args.push("--");
    args.extend(xs);
    lpgen(&args)
}

#[test]
fn nvfp4_quantize_prints_the_tensor_scale_the_block_scale_codes_and_values() {
    // A = 6 · 448: s_enc = 1; amax 6: S = 1 (UE4M3 0x38); the elements are e2m1(x): −0.25
    // ties to −0, −0.75 ties to −1 (the even code), 5 ties to 4.
    let xs = [
        "0", "0.5", "1", "1.5", "2", "3", "4", "6", "-0.25", "-0.75", "5", "0", "0", "0", "0", "0",
    ];
    let (code, out, err) = quantize(&xs, &["--tensor-amax", "2688"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "tensor-scale 0x3f800000 1\nscale 0x38 1\n\
         codes 0x0 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0xa 0x6 0x0 0x0 0x0 0x0 0x0\n\
         values 0 0.5 1 1.5 2 3 4 6 -0 -1 4 0 0 0 0 0\n"
    );
    // 1 … 16, A = 16 (the largest given): s_enc = 2688/16 = 168, S = ue4m3(16/6 · 168) =
    // 448 (0x7e); elements x · 168/448 = 0.375 x to nearest: 0.375 → 0.5, 0.75 → 1 (tie,
    // even), 1.125 → 1, 1.5, 1.875 → 2, 2.25 → 2, 2.625 → 3, 3, 3.375 → 3, 3.75 → 4,
    // 4.125 → 4, 4.5 → 4, 4.875 → 4, 5.25 → 6, 5.625 → 6, 6; values q · 448/168 = 8q/3.
    let xs: Vec<String> = (1..=16).map(|i| i.to_string()).collect();
    let xs: Vec<&str> = xs.iter().map(String::as_str).collect();
    let (code, out, err) = quantize(&xs, &[]);
    assert_eq!(code, Some(0), "{err}");
    let third = [
        "1.3333333333333333",
        "2.6666666666666665",
        "4",
        "5.333333333333333",
        "8",
        "10.666666666666666",
        "16",
    ];
    let q = [0, 1, 1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6];
    let values: Vec<&str> = q.iter().map(|&i| third[i]).collect();
    assert_eq!(
        out,
        format!(
            "tensor-scale 0x43280000 168\nscale 0x7e 448\n\
             codes 0x1 0x2 0x2 0x3 0x4 0x4 0x5 0x5 0x5 0x6 0x6 0x6 0x6 0x7 0x7 0x7\n\
             values {}\n",
            values.join(" ")
        )
    );
    // Tensor amax 0: s_enc = 1, scale 0, every code 0.
    let (_, out, _) = quantize(&["0"; 16], &[]);
    assert!(
        out.starts_with("tensor-scale 0x3f800000 1\nscale 0x00 0\n"),
        "{out}"
    );
}

#[test]
fn two_blocks_and_rows() {
    // 2 rows of 16: four… no, two blocks, one per row; A = 6·448 again.
    let mut xs = vec!["6"; 16];
    xs.extend(["3"; 16]);
    let (code, out, err) = quantize(&xs, &["--rows", "2", "--tensor-amax", "2688"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        &lines[..3],
        &[
            "tensor-scale 0x3f800000 1",
            "scale 0x38 1",
            "scale 0x30 0.5"
        ]
    );
    assert!(lines[3].starts_with("codes 0x7 ") && lines[3].ends_with(" 0x7"));
}

#[test]
fn delayed_scaling_over_stdin_lines() {
    // FP8 per tensor, S = f32(max(history of 2) / 448): 1 at the start; after 448, 1; after
    // 448 and 896, 2.
    let (code, out, err) = lpgen_stdin(
        &[
            "golden",
            "scaled/fp8:e4m3/tensor/f32",
            "quantize",
            "--scaling",
            "delayed:2",
            "--stdin",
        ],
        "448 -224\n896 1\n896 1\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "scale 0x3f800000 1\ncodes 0x7e 0xf6\nvalues 448 -224\n\
         scale 0x3f800000 1\ncodes 0x7e 0x38\nvalues 448 1\n\
         scale 0x40000000 2\ncodes 0x7e 0x30\nvalues 896 1\n"
    );
}

#[test]
fn nvfp4_dot_prints_blocks_and_totals() {
    // a = 1 … 16 (s_a = 168, S = 448, the codes of the quantize test: q sum 51), b = 1
    // (s_b = 2688, S = 448, q = 6): the block's exact S_a·S_b·Σq_a·q_b = 448² · 6 · 51 =
    // 61415424; divided by 168 · 2688: 136, exactly and in f32.
    let pairs: Vec<String> = (1..=16).map(|i| format!("{i},1")).collect();
    let mut args = vec!["golden", "nvfp4", "dot"];
    args.extend(pairs.iter().map(String::as_str));
    let (code, out, err) = lpgen(&args);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "tensor-scales a 0x43280000 168 b 0x45280000 2688");
    assert!(lines[1].starts_with("block 0: a scale 0x7e 448 codes 0x1 0x2 0x2 "));
    assert!(
        lines[1].ends_with("; dot 61415424 (7497*2^13)"),
        "{}",
        lines[1]
    );
    assert_eq!(&lines[2..], &["exact 136", "f32 136"]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let fifteen = ["1"; 15];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&["golden", "nvfp4", "quantize"][..], &fifteen[..]].concat(),
            "block size 16 does not divide K = 15",
        ),
        (
            vec!["golden", "scaled/fp4:e2m1/b16/f32", "quantize", "1"],
            "at most 16 bits",
        ),
        (
            vec![
                "golden",
                "scaled/fp8:e4m3/tensor/f32",
                "quantize",
                "--scaling",
                "delayed:0",
                "--stdin",
            ],
            "history of 0",
        ),
        (
            vec!["golden", "nvfp4", "quantize", "--tensor-amax", "-1", "1"],
            "amax is >= 0",
        ),
        (
            vec!["golden", "nvfp4", "quantize", "--tensor-amax", "nan", "1"],
            "finite",
        ),
        (vec!["golden", "nvfp4", "quantize", "inf"], "finite"),
        (
            vec!["golden", "nvfp4", "dot", "1,1"],
            "does not divide K = 1",
        ),
        (vec!["golden", "nvfp4", "dot", "1"], "not a pair"),
        (vec!["golden", "nvfp4", "dot"], "at least 16"),
        (
            vec!["golden", "scaled/fp8:e4m3/b32/e8m0", "dot", "1,1"],
            "unknown operation",
        ),
        (vec!["golden", "nvfp4", "sum", "1"], "unknown operation"),
        (
            vec![
                "golden",
                "nvfp4",
                "quantize",
                "--rounding",
                "stochastic:4",
                "1",
            ],
            "--rounding",
        ),
        (
            vec!["golden", "posit:8", "add", "1", "2", "--tensor-amax", "1"],
            "scaled formats",
        ),
        (
            vec![
                "golden",
                "scaled/fp4:e2m1/b16/ue4m3",
                "quantize",
                "--scaling",
                "delayed",
                "--stdin",
            ],
            "delayed amax is a tensor's",
        ),
        (
            vec!["golden", "nvfp4", "quantize", "--scaling", "delayed", "1"],
            "--stdin",
        ),
        (
            vec!["golden", "nvfp4", "quantize", "--rows", "0", "1"],
            "--rows 0",
        ),
        (vec!["golden", "nvfp4:b8", "quantize", "1"], "nvfp4"),
    ];
    for (args, want) in cases {
        let (code, out, err) = lpgen(&args);
        assert_eq!(code, Some(2), "{args:?}: {out} {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
