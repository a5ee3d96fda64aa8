//! `lpgen golden … --rounding stochastic:R --seed S` (docs/formats.md "Stochastic
//! rounding"): the command line's words equal the golden library's under the same rounder,
//! the stream runs on across `--stdin` lines, and bad roundings are refused in one line.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use lpgen_golden::{BinOp, Format, Rounder, Rounding};

fn lpgen(args: &[&str], stdin: &str) -> Output {
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
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The bit patterns printed, one per line.
fn words(out: &Output) -> Vec<u64> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            u64::from_str_radix(
                l.split_whitespace()
                    .next()
                    .unwrap()
                    .trim_start_matches("0x"),
                16,
            )
            .unwrap()
        })
        .collect()
}

/// One operation per call and a stream of them on stdin, against the library: bf16 add of
/// 1 and a quarter of its last place (steps with probability 1/4), fix:7:8 mul and encode.
#[test]
fn the_command_line_rounds_as_the_library_does() {
    for (fmt, op, a, b, bits) in [
        ("bf16", "add", "1", "0x3b00", 8u32),
        ("fp8:e4m3", "mul", "1.125", "1.375", 3),
        ("fix:7:8", "mul", "0.3", "-0.7", 12),
        ("fix:7:8", "div", "1", "3", 5),
    ] {
        let c = fmt.parse::<Format>().unwrap().calc();
        let (x, y) = (c.parse(a).unwrap(), c.parse(b).unwrap());
        let op_code = match op {
            "add" => BinOp::Add,
            "mul" => BinOp::Mul,
            _ => BinOp::Div,
        };
        let rounding = format!("stochastic:{bits}");
        let mut seen = Vec::new();
        for seed in 0..12u64 {
            let s = seed.to_string();
            let got = words(&lpgen(
                &[
                    "golden",
                    fmt,
                    op,
                    a,
                    b,
                    "--rounding",
                    &rounding,
                    "--seed",
                    &s,
                ],
                "",
            ));
            let mut r = Rounder::new(Rounding::Stochastic(bits), seed);
            assert_eq!(
                got,
                [c.binop_with(op_code, x, y, &mut r).unwrap()],
                "{fmt} {op} seed {seed}"
            );
            seen.push(got[0]);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 2, "{fmt} {op}: both neighbours over 12 seeds");
        // Forty lines on stdin: one stream, one draw per line.
        let lines = format!("{a} {b}\n").repeat(40);
        let got = words(&lpgen(
            &[
                "golden",
                fmt,
                op,
                "--stdin",
                "--rounding",
                &rounding,
                "--seed",
                "9",
            ],
            &lines,
        ));
        let mut r = Rounder::new(Rounding::Stochastic(bits), 9);
        let want: Vec<u64> = (0..40)
            .map(|_| c.binop_with(op_code, x, y, &mut r).unwrap())
            .collect();
        assert_eq!(got, want, "{fmt} {op} --stdin");
    }
    // encode: the decimal's exact value rounded, as the library's from_ratio_with.
    let c = "bf16".parse::<Format>().unwrap().calc();
    let ratio = lpgen_golden::exact::parse_decimal("0.1").unwrap();
    let mut r = Rounder::new(Rounding::Stochastic(16), 5);
    let got = words(&lpgen(
        &[
            "golden",
            "bf16",
            "encode",
            "0.1",
            "--rounding",
            "stochastic:16",
            "--seed",
            "5",
        ],
        "",
    ));
    assert_eq!(got, [c.from_ratio_with(&ratio, &mut r).unwrap()]);
    // Nearest is the default and the format's own rounding.
    let got = words(&lpgen(&["golden", "bf16", "encode", "0.1"], ""));
    assert_eq!(got, [c.parse("0.1").unwrap()]);
}

/// Bad roundings, families without stochastic rounding (asked of the registry), a seed
/// without stochastic rounding, and operations it is not defined for: exit 2, one line.
#[test]
fn bad_roundings_are_refused_in_one_line() {
    for (args, needle) in [
        (
            vec!["bf16", "add", "1", "2", "--rounding", "stochastic:0"],
            "stochastic:0",
        ),
        (
            vec!["bf16", "add", "1", "2", "--rounding", "stochastic:99"],
            "stochastic:99",
        ),
        (
            vec!["bf16", "add", "1", "2", "--rounding", "stochastic:x"],
            "stochastic:x",
        ),
        (vec!["bf16", "add", "1", "2", "--rounding", "foo"], "foo"),
        (
            vec!["posit:16", "add", "1", "2", "--rounding", "stochastic:8"],
            "posit:16",
        ),
        (
            vec!["lns:5:6", "add", "1", "2", "--rounding", "stochastic:8"],
            "lns:5:6",
        ),
        (
            vec!["dfix:8", "add", "1", "2", "--rounding", "stochastic:8"],
            "dfix:8",
        ),
        (
            vec!["f32", "mul", "1", "2", "--rounding", "stochastic:8"],
            "f32",
        ),
        (vec!["bf16", "add", "1", "2", "--seed", "3"], "--seed"),
        (
            vec!["bf16", "sum", "1", "2", "--rounding", "stochastic:4"],
            "sum",
        ),
        (
            vec!["fix:7:8", "exp", "1", "--rounding", "stochastic:4"],
            "exp",
        ),
        (
            vec!["bf16", "encode", "0x12", "--rounding", "stochastic:4"],
            "0x12",
        ),
    ] {
        let mut a = vec!["golden"];
        a.extend(&args);
        let out = lpgen(&a, "");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

/// `lpgen train --rounding`: bad roundings, families without stochastic rounding, backends
/// and runs that have no single golden stream are refused in one line, exit 2, before the
/// dataset is read.
#[test]
fn training_refuses_what_it_cannot_round_stochastically_in_one_line() {
    for (more, needle) in [
        (
            vec!["--format", "bf16", "--rounding", "stochastic:0"],
            "stochastic:0",
        ),
        (
            vec!["--format", "bf16", "--rounding", "stochastic:99"],
            "stochastic:99",
        ),
        (vec!["--format", "bf16", "--rounding", "up"], "up"),
        (
            vec!["--format", "posit:8", "--rounding", "stochastic:8"],
            "posit:8",
        ),
        (
            vec![
                "--precision",
                "OL=bf16-FBG=fp8:e5m2",
                "--rounding",
                "stochastic:8",
            ],
            "",
        ),
        (
            vec!["--format", "lns:5:6", "--rounding", "stochastic:8"],
            "lns:5:6",
        ),
        (
            vec!["--backend", "f32", "--rounding", "stochastic:8"],
            "--backend golden",
        ),
        (
            vec![
                "--format",
                "bf16",
                "--backend",
                "rtl",
                "--rounding",
                "stochastic:8",
            ],
            // Float stages run on rtl (stochastic lanes and array read-out).
            "",
        ),
        (
            vec![
                "--format",
                "fix:7:8",
                "--backend",
                "rtl",
                "--rounding",
                "stochastic:8",
            ],
            "fix:7:8 lanes round to nearest on the RTL",
        ),
        (
            vec![
                "--format",
                "fix:7:8",
                "--workers",
                "2",
                "--rounding",
                "stochastic:8",
            ],
            "one worker",
        ),
        (
            vec!["--format", "dfix:8:12", "--rounding", "stochastic:8"],
            "dfix",
        ),
        (
            // Float storage rounds its stored values stochastically, on f32 or golden.
            vec![
                "--format",
                "store:f16",
                "--backend",
                "f32",
                "--rounding",
                "stochastic:8",
            ],
            "",
        ),
        (
            vec![
                "--format",
                "store:f16",
                "--backend",
                "rtl",
                "--rounding",
                "stochastic:8",
            ],
            "--backend f32 or golden",
        ),
    ] {
        let mut a = vec![
            "train",
            "--dataset",
            "/nonexistent-lpgen-data",
            "--out",
            "/nonexistent-lpgen-out",
        ];
        a.extend(&more);
        let out = lpgen(&a, "");
        let err = String::from_utf8_lossy(&out.stderr);
        if needle.is_empty() {
            // Refused only for want of the data.
            assert!(err.contains("nonexistent-lpgen-data"), "{more:?}: {err}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{more:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{more:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{more:?}: {err}"
        );
    }
}
