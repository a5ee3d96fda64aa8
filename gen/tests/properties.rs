//! Issue 48's property: any string given as a format or an option's value never panics or
//! aborts: `lpgen` either does the work (exit status 0) or refuses in one line with exit
//! status 2. proptest draws the strings (arbitrary text, format-like words with any numbers)
//! and the command they go into; the case count keeps the test to a few seconds.

use std::process::{Command, Output};

use proptest::prelude::*;

/// `lpgen ARGS` run to completion.
fn lpgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen")
}

/// Strings shaped like formats and option values: a known word, then fields of numbers (small,
/// huge, negative) or letters, joined by `:`, `/`, `=`, `,` or `-`.
fn format_like() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "posit",
        "lns",
        "fix",
        "dfix",
        "float",
        "f32",
        "bf16",
        "f16",
        "fp8",
        "e4m3",
        "e5m2",
        "mx",
        "fp6",
        "fp4",
        "e2m1",
        "int8",
        "store",
        "q8",
        "stochastic",
        "nearest",
        "quire",
        "kahan",
        "pairwise",
        "naive",
        "matmul",
        "O16",
        "L12",
        "FBG8q",
        "b32",
        "u",
        "sat",
        "ftz",
    ]);
    let field = prop_oneof![
        (0u32..70).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("18446744073709551616".to_string()),
        "[a-z0-9]{0,4}",
    ];
    let sep = prop::sample::select(vec![":", "/", "=", ",", "-", ""]);
    (word, prop::collection::vec((sep, field), 0..5)).prop_map(|(w, fields)| {
        let mut s = w.to_string();
        for (sep, f) in fields {
            s.push_str(sep);
            s.push_str(&f);
        }
        s
    })
}

/// Any string a command line can carry (no NUL byte).
fn any_arg() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{0,30}",
        format_like(),
        format_like(),
        format_like()
    ]
    .prop_map(|s| s.replace('\0', ""))
}

/// The commands a drawn string `S` goes into (`S` where it stands), each as a user would
/// type it; `OUT` is a fresh output directory.
const COMMANDS: [&[&str]; 19] = [
    &["golden", "S", "add", "1", "2"],
    &["golden", "S", "quantize", "1", "2"],
    &["golden", "bf16", "S", "1", "2"],
    &["golden", "posit:8:2", "dot", "--mode", "S", "1,2", "3,4"],
    &[
        "golden",
        "bf16",
        "add",
        "1",
        "2",
        "--rounding",
        "S",
        "--seed",
        "3",
    ],
    &["golden", "bf16", "encode", "S"],
    &["golden", "mx:fp8:e4m3:b2", "dot", "S", "1,1"],
    &["rtl", "float-add", "--format", "S", "--out", "OUT"],
    &[
        "rtl", "array", "--format", "bf16", "--pe", "S", "--out", "OUT",
    ],
    &[
        "rtl", "array", "--format", "fp8:e4m3", "--pe", "float", "--acc", "S", "--out", "OUT",
    ],
    &[
        "rtl",
        "alu",
        "--format",
        "posit:8:2",
        "--to",
        "S",
        "--out",
        "OUT",
    ],
    &[
        "rtl", "q8-enc", "--format", "f32", "--q8", "S", "--out", "OUT",
    ],
    &[
        "rtl",
        "float-mul",
        "--format",
        "bf16",
        "--rounding",
        "S",
        "--out",
        "OUT",
    ],
    &["quant", "S", "--dist", "N(0,1)", "--samples", "10"],
    &[
        "train",
        "--format",
        "S",
        "--dataset",
        "/nonexistent/lpgen-data",
        "--epochs",
        "1",
    ],
    &[
        "train",
        "--precision",
        "S",
        "--dataset",
        "/nonexistent/lpgen-data",
    ],
    &[
        "train",
        "--format",
        "posit:8:2",
        "--accumulate",
        "S",
        "--dataset",
        "/nonexistent/d",
    ],
    &[
        "train",
        "--format",
        "lns:5:6",
        "--kahan",
        "S",
        "--dataset",
        "/nonexistent/d",
    ],
    &[
        "eval",
        "--checkpoint",
        "/nonexistent/ck",
        "--format",
        "S",
        "--dataset",
        "/nonexistent/d",
    ],
];

/// `n` cases, or `PROPTEST_CASES` for a longer run (`PROPTEST_CASES=20000 cargo test -p lpgen
/// --test properties`: a fuzzing session).
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(n)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(160),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_string_as_a_format_or_option_is_done_or_refused_in_one_line(
        which in 0..COMMANDS.len(),
        s in any_arg(),
    ) {
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lpgen-properties-{}", std::process::id()));
        let o = out.to_str().unwrap().to_string();
        let args: Vec<&str> = COMMANDS[which]
            .iter()
            .map(|a| match *a {
                "S" => s.as_str(),
                "OUT" => o.as_str(),
                a => a,
            })
            .collect();
        let r = lpgen(&args);
        let _ = std::fs::remove_dir_all(&out);
        let err = String::from_utf8_lossy(&r.stderr);
        // No signal (an abort), no panic (101): 0, or 2 with one line.
        prop_assert!(matches!(r.status.code(), Some(0 | 2)), "{args:?}: {:?} {err}", r.status);
        prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
        if r.status.code() == Some(2) {
            prop_assert_eq!(err.lines().count(), 1, "{:?}: {}", args, err);
        }
    }
}
