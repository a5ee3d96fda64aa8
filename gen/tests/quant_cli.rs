//! `lpgen quant` as a user meets it: a small run's output, and one-line refusals (exit status
//! 2, no panic) of bad types, distributions, sample counts and option mixes.

mod common;
use common::{lpgen, refused};

#[test]
fn a_small_run_prints_a_header_and_one_row() {
    let out = lpgen(&[
        "quant",
        "q8:dynamic-tree",
        "--dist",
        "N(0, 1)",
        "--samples",
        "1000",
        "--seed",
        "5",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "type",
            "dist",
            "samples",
            "seed",
            "scale",
            "mean_abs_error",
            "mean_rel_error_%",
            "zeros"
        ]
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        row[..4],
        ["q8:dynamic-tree", "N(0,1)", "1000", "5"],
        "{text}"
    );
    assert!(row[4].starts_with("absmax="), "{text}");
    let mae: f64 = row[5].parse().unwrap();
    let mre: f64 = row[6].parse().unwrap();
    assert!(mae > 0.0 && mae < 0.1 && mre > 0.5 && mre < 5.0, "{text}");
    assert_eq!(row[7], "0");
    // the same seed gives the same line; the offset types name their scale
    assert_eq!(
        lpgen(&[
            "quant",
            "dynamic-tree",
            "--dist",
            "N(0,1)",
            "--samples",
            "1000",
            "--seed",
            "5"
        ])
        .stdout,
        text.as_bytes()
    );
    let out = lpgen(&[
        "quant",
        "q8:mantissa",
        "--dist",
        "U(0,1)",
        "--samples",
        "10",
        "--offset",
        "-1",
    ]);
    assert!(String::from_utf8(out.stdout).unwrap().contains(" 10^-1 "));
}

fn run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["quant"];
    v.extend_from_slice(extra);
    v
}

#[test]
fn bad_input_gets_one_line_and_status_2() {
    refused(&run(&["q8:tree", "--dist", "N(0,1)"]), "unknown 8-bit type");
    refused(&run(&["", "--dist", "N(0,1)"]), "unknown 8-bit type");
    refused(&run(&["q8:linear", "--dist", "N(0,-1)"]), "variance > 0");
    refused(&run(&["q8:linear", "--dist", "U(1,0)"]), "a < b");
    refused(
        &run(&["q8:linear", "--dist", "Gamma(1,2)"]),
        "U(a,b) or N(mean,variance)",
    );
    refused(&run(&["q8:linear", "--dist", "N(0,1"]), "X(p,q)");
    refused(&run(&["q8:linear", "--dist", "N(0,nan)"]), "finite");
    refused(&run(&["q8:linear", "--dist", "N(0)"]), "two parameters");
    refused(&run(&["q8:linear", "--dist", "é(0,1)"]), "neither U nor N");
    refused(
        &run(&["q8:linear", "--dist", "N(0,1)", "--samples", "0"]),
        "out of range",
    );
    refused(
        &run(&["q8:linear", "--dist", "N(0,1)", "--samples", "1000000001"]),
        "out of range",
    );
    refused(
        &run(&["q8:linear", "--dist", "N(0,1)", "--samples", "many"]),
        "--samples",
    );
    refused(
        &run(&["q8:linear", "--dist", "N(0,1)", "--samples", "-5"]),
        "'-5'",
    );
    refused(
        &run(&["q8:linear", "--dist", "N(0,1)", "--offset", "2"]),
        "--offset applies",
    );
    refused(
        &run(&["q8:mantissa", "--dist", "N(0,1)", "--offset", "11"]),
        "exponent offset",
    );
    // Issue 48: the most negative i32 panicked ("attempt to negate with overflow").
    refused(
        &run(&["q8:mantissa", "--dist", "N(0,1)", "--offset", "-2147483648"]),
        "exponent offset -2147483648 is out of range",
    );
    refused(&run(&["q8:linear", "--dist", "N(0,1e300)"]), "f32's range");
    refused(&run(&["q8:linear", "--dist", "U(0,1e-40)"]), "f32's range");
    refused(&run(&["q8:linear"]), "--dist");
    refused(&run(&["--dist", "N(0,1)"]), "TYPE");
    refused(&run(&["--table1", "q8:linear"]), "--table1");
    refused(&run(&["--table1", "--samples", "0"]), "out of range");
}
