//! `lpgen golden FORMAT dot --mode fdpa:… --init C` (issue 49): the binary32 (binary16)
//! output word and its value; bad modes, formats and addends refused in one line.

mod common;

use common::{lpgen, refused};

/// `lpgen golden ARGS… PAIRS…`'s one line of output.
fn dot(args: &[&str], pairs: &[&str]) -> String {
    let mut all = vec!["golden"];
    all.extend(args);
    all.extend(pairs);
    let o = lpgen(&all);
    assert!(
        o.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap().trim_end().to_string()
}

#[test]
fn fdpa_prints_the_output_word_and_its_value() {
    let ones = vec!["1,1"; 32];
    let fp8 = |mode: &str, init: &str, pairs: &[&str]| {
        dot(&["fp8:e4m3", "dot", "--mode", mode, "--init", init], pairs)
    };
    // 2^24 + 32 ones: truncated away below 2^(24 − 13) on Hopper, kept on Blackwell.
    assert_eq!(fp8("fdpa:hopper", "16777216", &ones), "0x4b800000 16777216");
    assert_eq!(
        fp8("fdpa:blackwell", "0x4b800000", &ones),
        "0x4b800010 16777248"
    );
    // Promotion every 128 products into binary32 adds them.
    let many = vec!["1,1"; 256];
    assert_eq!(
        fp8("fdpa:hopper:promote128", "16777216", &many),
        "0x4b800080 16777472"
    );
    // Without --init, C = 0; ∞·0 is the NaN word 0x7fffffff.
    assert_eq!(
        dot(
            &["f16", "dot", "--mode", "fdpa:volta"],
            &["1.5,2", "0.25,1"]
        ),
        "0x40500000 3.25"
    );
    assert_eq!(
        dot(&["f16", "dot", "--mode", "fdpa:volta"], &["inf,0"]),
        "0x7fffffff NaN"
    );
    // rne-f16: a binary16 word; a tie to even.
    assert_eq!(
        dot(
            &["f16", "dot", "--mode", "fdpa:4:30:rne-f16"],
            &["1,1", "0.015625,0.03125"]
        ),
        "0x3c00 1"
    );
    // Other modes are unchanged by the new option's existence.
    assert_eq!(
        dot(&["bf16", "dot", "--mode", "quire"], &["1.5,2"]),
        "0x4040 3"
    );
}

#[test]
fn bad_fdpa_input_is_refused_in_one_line() {
    let d =
        |fmt: &'static str, mode: &'static str| vec!["golden", fmt, "dot", "--mode", mode, "1,1"];
    refused(&d("posit:16", "fdpa:hopper"), "'fdpa' is for float formats");
    refused(&d("lns:5:6", "fdpa:hopper"), "'fdpa' is for float formats");
    refused(&d("fix:7:8", "fdpa:hopper"), "'fdpa' is for float formats");
    refused(&d("bf16", "fdpa:4:0:rz-f32"), "F = \"0\"");
    refused(&d("bf16", "fdpa:0:13:rz-f32"), "L = \"0\"");
    refused(&d("bf16", "fdpa:nvidia"), "unknown preset \"nvidia\"");
    refused(&d("bf16", "fdpa:4:13:rn"), "unknown rounding");
    refused(&d("float:8:10", "fdpa:ada"), "ada takes f16, bf16 or fp8");
    refused(&d("fp8:e4m3", "fdpa:hopper:promote100"), "not a multiple");
    refused(&d("mx:fp8:e4m3", "fdpa:hopper"), "without --stdin");
    refused(
        &["golden", "bf16", "dot", "--init", "1", "1,1"],
        "--init 1 is the addend C",
    );
    refused(
        &[
            "golden",
            "bf16",
            "dot",
            "--mode",
            "fdpa:hopper",
            "--init",
            "x",
            "1,1",
        ],
        "--init x",
    );
    refused(
        &["golden", "bf16", "sum", "--mode", "fdpa:hopper", "1"],
        "dot-product mode",
    );
}
