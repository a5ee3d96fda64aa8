//! `lpgen rtl float-add|float-mul --rounding stochastic:R --rounding-seed S` (docs/rtl.md,
//! "Stochastic rounding"): the design's name, manifest and reset state; bad requests refused
//! in one line with exit status 2.

use std::process::{Command, Output};

fn lpgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen")
}

#[test]
fn a_stochastic_design_names_its_rounding_and_seed() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-sr-rtl-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let args = [
        "rtl",
        "float-mul",
        "--format",
        "fp8:e4m3",
        "--stages",
        "2",
        "--rounding",
        "stochastic:4",
        "--rounding-seed",
        "7",
        "--out",
        d,
    ];
    let out = lpgen(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let top = "lpgen_float_mul_fp8_e4m3_sr4_s2";
    let m = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    assert!(m.contains("\"rounding\": \"stochastic:4\""), "{m}");
    assert!(m.contains("\"rounding_seed\": 7"), "{m}");
    let v = std::fs::read_to_string(dir.join(format!("{top}.v"))).unwrap();
    // Seed 7's state, 0x63cbe1e4 (docs/formats.md), in decimal.
    assert!(v.contains("sr_state <= 32'd1674306020;"));
    // The float array PE's stochastic read-out: one 32-bit state a row, stepped once a PE.
    let out = lpgen(&[
        "rtl",
        "array",
        "--format",
        "bf16",
        "--pe",
        "float",
        "--rows",
        "2",
        "--cols",
        "3",
        "--rounding",
        "stochastic:8",
        "--out",
        d,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = std::fs::read_to_string(dir.join("lpgen_array_bf16_2x3_float_sr8_s0.v")).unwrap();
    assert!(v.contains("input  wire [63:0] sr_row_state,"), "{v}");
    let pe = std::fs::read_to_string(dir.join("lpgen_pe_float_bf16_sr8_s0.v")).unwrap();
    assert!(pe.contains("sr_row_state_out_q <= sr_next;"), "{pe}");
    // Nearest: no rounding parameters.
    let out = lpgen(&["rtl", "float-mul", "--format", "fp8:e4m3", "--out", d]);
    assert!(out.status.success());
    let m = std::fs::read_to_string(dir.join("lpgen_float_mul_fp8_e4m3_s0.json")).unwrap();
    assert!(!m.contains("rounding"), "{m}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_requests_are_refused_in_one_line() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-sr-rtl-bad-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    for (extra, says) in [
        (
            &["float-add", "--rounding", "stochastic:0"][..],
            "from 1 to 32",
        ),
        (
            &["float-add", "--rounding", "stochastic:99"],
            "from 1 to 32",
        ),
        (
            &["float-add", "--rounding", "up"],
            "nearest or stochastic:R",
        ),
        (&["fix-mac", "--rounding", "stochastic:4"], "nearest only"),
        (
            &["array", "--acc", "float:8:23", "--rounding", "stochastic:4"],
            "array PE 'float' --acc float:8:23 reads out to nearest only",
        ),
        (
            &[
                "array",
                "--rounding",
                "stochastic:4",
                "--testbench",
                "cocotb",
            ],
            "its stochastic read-out has no model yet",
        ),
        (
            &[
                "vector",
                "--rounding",
                "stochastic:4",
                "--testbench",
                "cocotb",
            ],
            "its stochastic lanes have no model yet",
        ),
        (&["float-add", "--rounding-seed", "3"], "needs --rounding"),
    ] {
        let mut args = vec!["rtl"];
        args.extend_from_slice(&extra[..1]);
        args.extend_from_slice(&["--format", "bf16", "--out", d]);
        args.extend_from_slice(&extra[1..]);
        let out = lpgen(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
