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
        &["golden", "dfix:10", "sqrt", "1", "--scale", "0"],
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
