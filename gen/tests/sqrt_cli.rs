//! `lpgen golden FORMAT sqrt X` (issue 46): one word per family as docs/formats.md states
//! it, stochastic rounding where the family has it, and bad input in one line with exit 2.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{lpgen, refused};
use lpgen_golden::{Format, Rounder, Rounding};

fn stdout_of(args: &[&str]) -> String {
    let out = lpgen(args);
    assert!(
        out.status.success(),
        "lpgen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sqrt_of_every_family() {
    for (args, want) in [
        (vec!["bf16", "sqrt", "2"], "0x3fb5 1.4140625"),
        (vec!["f16", "sqrt", "-0"], "0x8000 -0"),
        (vec!["f16", "sqrt", "-1"], "0x7e00 NaN"),
        (vec!["f16", "sqrt", "inf"], "0x7c00 inf"),
        (vec!["f32", "sqrt", "2"], "0x3fb504f3 1.4142135381698608"),
        (vec!["posit:16:1", "sqrt", "16"], "0x6000 4"),
        (vec!["posit:8:0", "sqrt", "-4"], "0x80 NaR"),
        // LNS: code 1 (2^(1/64)) halves to code 0, the nearer value.
        (vec!["lns:5:6", "sqrt", "0x001"], "0x0000 1"),
        (vec!["lns:5:6", "sqrt", "4"], "0x0040 2"),
        (vec!["lns:5:6", "sqrt", "-4"], "0x1800 NaN"),
        (vec!["fix:7:8", "sqrt", "2"], "0x016a 1.4140625"),
        (vec!["fix:7:8", "sqrt", "-2"], "0x0000 0"),
        (
            vec!["dfix:10", "sqrt", "--scale", "-4", "2"],
            "0x017 1.4375",
        ),
        (
            vec!["dfix:10", "sqrt", "--scale", "-20", "1"],
            "0x1ff 0.00048732757568359375 overflow",
        ),
    ] {
        let mut full = vec!["golden"];
        full.extend(&args);
        assert_eq!(stdout_of(&full).trim_end(), want, "lpgen golden {args:?}");
    }
}

/// Words from standard input, one root per line; and the stochastic stream of `--rounding`
/// is the golden `Rounder`'s (one draw per root).
#[test]
fn sqrt_reads_stdin_and_rounds_stochastically() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(["golden", "posit:8:0", "sqrt", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"4\n0.25\n0\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0x60 2\n0x20 0.5\n0x00 0\n"
    );

    let c = "bf16".parse::<Format>().unwrap().calc();
    let three = c.from_f64(3.0);
    let mut r = Rounder::new(Rounding::Stochastic(8), 5);
    let want: Vec<u64> = (0..20)
        .map(|_| c.sqrt_with(three, &mut r).unwrap())
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args([
            "golden",
            "bf16",
            "sqrt",
            "--stdin",
            "--rounding",
            "stochastic:8",
        ])
        .args(["--rounding-seed", "5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("3\n".repeat(20).as_bytes())
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let got: Vec<u64> = out
        .lines()
        .map(|l| u64::from_str_radix(&l[2..6], 16).unwrap())
        .collect();
    assert_eq!(got, want);
    // √3 = 1.732… lies 70 % of the way from 1.7265625 (0x3fdd) to 1.734375 (0x3fde).
    assert!(
        want.contains(&0x3fdd) && want.contains(&0x3fde),
        "{want:x?}"
    );
}

#[test]
fn bad_sqrt_input_is_refused_in_one_line_with_status_2() {
    for (args, needle) in [
        (vec!["golden", "bf16", "sqrt"], "takes 1 operand, got 0"),
        (
            vec!["golden", "bf16", "sqrt", "1", "2"],
            "takes 1 operand, got 2",
        ),
        (
            vec!["golden", "bf16", "sqrt", "abc"],
            "not a decimal number",
        ),
        (
            vec!["golden", "posit:8", "sqrt", "0x1ff"],
            "more than the 8 bits",
        ),
        (
            vec![
                "golden",
                "posit:8",
                "sqrt",
                "2",
                "--rounding",
                "stochastic:4",
            ],
            "not defined for posit:8",
        ),
        (
            vec!["golden", "dfix:10", "sqrt", "--scale", "-4", "1", "2"],
            "sqrt takes 1 operand, got 2",
        ),
        (
            vec!["golden", "bf16", "sqrt", "4", "--mode", "kahan"],
            "--mode applies",
        ),
        (
            vec![
                "rtl", "lns-mul", "--format", "lns:5:6", "--sqrt", "--out", "unused",
            ],
            "--sqrt does not apply to lns-mul: it applies to alu, vector",
        ),
        (
            vec![
                "rtl", "alu", "--format", "dfix:6", "--sqrt", "--out", "unused",
            ],
            "--sqrt lanes are generated for lns, float, posit, takum and fix formats, not yet \
             dfix:6",
        ),
    ] {
        refused(&args, needle);
    }
}

/// `lpgen rtl alu --sqrt`: the design of an LNS lane with the opcode, named for it.
#[test]
fn rtl_alu_with_sqrt_writes_its_design() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-sqrt-rtl-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    stdout_of(&[
        "rtl", "alu", "--format", "lns:3:2", "--sqrt", "--stages", "1", "--out", out,
    ]);
    let v = std::fs::read_to_string(dir.join("lpgen_alu_lns_3_2_sqrt_s1.v")).unwrap();
    assert!(v.contains("sqrt_y"));
    let _ = std::fs::remove_dir_all(&dir);
}
