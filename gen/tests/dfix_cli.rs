//! `lpgen golden dfix:W OP --scale E` (issue 18's calculator): results as seed 002's dynamic
//! fixed point gives them, and one-line refusals (exit status 2, no panic) of bad input.

mod common;
use common::{lpgen, refused};

fn result(args: &[&str]) -> String {
    let out = lpgen(args);
    assert_eq!(out.status.code(), Some(0), "lpgen {args:?}: {:?}", out);
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

#[test]
fn results_round_to_nearest_even_saturate_and_flag_overflow() {
    let g = |args: &[&str]| {
        let mut v = vec!["golden", "dfix:10"];
        v.extend(args);
        result(&v)
    };
    // 511.5 units of 1/16 rounds to 512: saturates at 511.
    assert_eq!(
        g(&["conv", "31.96875", "--scale", "-4"]),
        "0x1ff 31.9375 overflow"
    );
    // 1.5 units: ties to even 2.
    assert_eq!(g(&["conv", "0.09375", "--scale", "-4"]), "0x002 0.125");
    // 1.5 · 0.25 = 0.375 = 6/16 exactly.
    assert_eq!(g(&["mul", "1.5", "0.25", "--scale", "-4"]), "0x006 0.375");
    // 300 fits at scale 0 but not at −1 (600 > 511).
    assert_eq!(
        g(&["dot", "300,1", "--scale", "0"]),
        "0x12c 300 overflow-at-half"
    );
    // Partial sums beyond the range, total inside: the wide accumulator keeps it exact.
    assert_eq!(
        g(&["dot", "511,511", "511,1", "0x200,511", "--scale", "0"]),
        "0x000 0"
    );
    assert_eq!(
        g(&["neg", "0x200", "--scale", "-1"]),
        "0x1ff 255.5 overflow"
    );
}

#[test]
fn bad_input_is_refused_in_one_line() {
    refused(&["golden", "dfix:10", "add", "1", "2"], "needs --scale");
    refused(
        &["golden", "dfix:40", "add", "1", "2", "--scale", "0"],
        "2..=32",
    );
    refused(
        &["golden", "dfix:10", "add", "1", "--scale", "0"],
        "takes 2 operands",
    );
    refused(
        &["golden", "dfix:10", "exp", "1", "--scale", "0"],
        "unknown operation",
    );
    refused(
        &["golden", "dfix:10", "conv", "0x400", "--scale", "0"],
        "not a 10-bit word",
    );
    refused(
        &["golden", "dfix:10", "conv", "1", "--scale", "5000"],
        "out of range",
    );
    refused(
        &["golden", "lns:5:6", "add", "1", "2", "--scale", "3"],
        "--scale applies",
    );
    refused(
        &["golden", "dfix:10", "dot", "1", "--scale", "0"],
        "not a pair",
    );
}

/// `lpgen rtl array --pe dfix` and `dfix-monitor`: the files, the manifest's ports and
/// format, and one-line refusals of formats and PE kinds that do not go together.
#[test]
fn rtl_dfix_array_and_monitor() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-dfix-rtl-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let ok = |args: &[&str]| {
        let o = lpgen(args);
        assert_eq!(o.status.code(), Some(0), "lpgen {args:?}: {o:?}");
    };
    ok(&[
        "rtl", "array", "--pe", "dfix", "--format", "dfix:10", "--rows", "2", "--cols", "3",
        "--stages", "2", "--out", out,
    ]);
    let top = "lpgen_array_dfix_10_2x3_dfix_s2";
    let m = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    for needle in [
        "\"format\": \"dfix:10\"",
        "\"pe\": \"dfix\"",
        "\"name\": \"shift\"",
        "\"name\": \"overflow_half\"",
        "lpgen_pe_dfix_dfix_10_s2.v",
    ] {
        assert!(m.contains(needle), "{needle} not in {m}");
    }
    ok(&[
        "rtl",
        "dfix-monitor",
        "--format",
        "dfix:10",
        "--rows",
        "2",
        "--cols",
        "3",
        "--counter-bits",
        "16",
        "--out",
        out,
    ]);
    let m =
        std::fs::read_to_string(dir.join("lpgen_dfix_monitor_dfix_10_2x3_c16_s0.json")).unwrap();
    assert!(m.contains("\"counter_bits\": 16"), "{m}");
    let rtl = |more: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["rtl".into()];
        v.extend(more.iter().map(|s| s.to_string()));
        v.extend(["--out".to_string(), out.to_string()]);
        v
    };
    for (args, needle) in [
        (
            rtl(&["array", "--pe", "dfix", "--format", "fix:7:8"]),
            "needs a dfix:W format",
        ),
        (
            rtl(&["array", "--pe", "fix", "--format", "dfix:10"]),
            "use --pe dfix",
        ),
        (
            rtl(&["array", "--pe", "dfix", "--format", "dfix:1"]),
            "2..=32",
        ),
        (
            rtl(&["array", "--pe", "dfix", "--format", "dfix:40"]),
            "2..=32",
        ),
        (
            rtl(&["lns-mul", "--format", "dfix:10"]),
            "does not work on dfix:10",
        ),
        (
            rtl(&["dfix-monitor", "--format", "fix:7:8"]),
            "give --format dfix:W",
        ),
        (
            rtl(&["dfix-monitor", "--format", "dfix:10", "--counter-bits", "0"]),
            "--counter-bits 0",
        ),
        (
            rtl(&[
                "array", "--pe", "dfix", "--format", "dfix:10", "--stages", "3",
            ]),
            "at most 2 pipeline stages",
        ),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&a, needle);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
