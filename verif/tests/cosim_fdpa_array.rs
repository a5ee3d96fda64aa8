//! The co-simulation of arrays of `fdpa` PEs CI runs (issue 49): random and corner tiles on
//! fp8 E4M3 Hopper chunks (with and without :promote64), bf16 Ampere chunks with :promote16,
//! f16 into binary16 and fp4 pairs, each against the golden `FdpaPlan::dot_in_format` of
//! every PE's words; and the mutants it catches: F off by one, an aligner that rounds
//! instead of truncating, the wrong e_zero, and a promotion interval off by one.

mod common;

use common::{check, toolchain};
use lpgen_hdl::{fdpa_array_params, generate, Params};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

fn array(f: &str, mode: &str, (rows, cols): (u32, u32), stages: u32) -> Params {
    fdpa_array_params(f, mode, rows, cols).stages(stages)
}

#[test]
fn fdpa_arrays_random_and_corner_tiles() {
    let tc = toolchain();
    for (f, mode, shape, s) in [
        ("fp8:e4m3", "hopper", (2, 3), 0),
        ("fp8:e4m3", "hopper:promote64", (2, 2), 2),
        ("bf16", "ampere:promote16", (2, 2), 1),
        ("f16", "4:12:rne-f16", (3, 2), 2),
        ("float:2:1", "2:3:rz-f32", (4, 4), 1),
    ] {
        let r = check(&tc, &array(f, mode, shape, s), Mode::Vectors(2_000), 0x49);
        assert!(r.passed > 100, "{f} {mode}: {}", r.passed);
    }
}

/// Runs the Verilog of `design` (a mutant of `p`: another design, or `p`'s text with every
/// `from` replaced by `to`) against `p`'s golden model; returns (failed, first mismatch).
fn mutant(p: &Params, design: &Params, edits: &[(&str, &str)]) -> (u64, String) {
    let mut d = generate(design).unwrap();
    for (from, to) in edits {
        assert!(d.verilog.text().contains(from), "mutation site {from}");
        for f in &mut d.verilog.files {
            f.text = f.text.replace(from, to);
        }
    }
    let r = run_design(
        &toolchain(),
        p,
        &d,
        RunOptions::new(Mode::Vectors(2_000), 7),
    )
    .unwrap();
    eprintln!(
        "mutant ({} edits, first {:?}): {} passed, {} failed",
        edits.len(),
        edits.first(),
        r.passed,
        r.failed
    );
    (r.failed, r.details.first().cloned().unwrap_or_default())
}

fn caught(p: &Params, design: &Params, edits: &[(&str, &str)], min: u64) {
    let (failed, first) = mutant(p, design, edits);
    assert!(failed > min, "{failed} failed");
    assert!(first.contains("<-- differs"), "{first}");
}

/// F one more or one less than the golden's (the PEs of another F, same ports).
#[test]
fn mutation_f_off_by_one_is_caught() {
    let p = array("fp8:e4m3", "hopper", (2, 2), 0);
    caught(&p, &array("fp8:e4m3", "32:14:rz-e8m13", (2, 2), 0), &[], 5);
    caught(&p, &array("fp8:e4m3", "32:12:rz-e8m13", (2, 2), 0), &[], 5);
}

/// Every product's aligner rounds to nearest (half up) instead of truncating.
#[test]
fn mutation_rounding_aligner_is_caught() {
    let p = array("fp8:e4m3", "hopper", (2, 2), 0);
    let edits: Vec<(String, String)> = (0..32)
        .map(|i| {
            (
                format!("(p{i}_fixed >> p{i}_diff[8:0])"),
                format!("((p{i}_fixed + ((15'd1 << p{i}_diff[8:0]) >> 1)) >> p{i}_diff[8:0])"),
            )
        })
        .collect();
    let edits: Vec<(&str, &str)> = edits
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    caught(&p, &p, &edits, 5);
}

/// The wrong e_zero in f16 PEs into binary16 (−20 for −21: one place; −14), caught by the
/// corner tiles' e_zero chunks.
#[test]
fn mutation_wrong_e_zero_is_caught() {
    let zero = |w: u32, v: i64| {
        format!(
            "localparam [{}:0] FDPA_E_ZERO = {w}'d{};",
            w - 1,
            (v as u64) & ((1 << w) - 1)
        )
    };
    let p = array("f16", "4:12:rne-f16", (2, 2), 0);
    caught(&p, &p, &[(&zero(7, -21), &zero(7, -20))], 0);
    caught(&p, &p, &[(&zero(7, -21), &zero(7, -14))], 5);
}

/// The promotion interval one chunk longer or shorter than the golden's (every 64 fp8
/// products: two chunks of 32; the mutants promote after one or three).
#[test]
fn mutation_promotion_interval_off_by_one_is_caught() {
    let p = array("fp8:e4m3", "hopper:promote64", (2, 2), 0);
    let site = "PROMOTE_CHUNKS_LAST = 1'b1;";
    caught(&p, &p, &[(site, "PROMOTE_CHUNKS_LAST = 1'b0;")], 5);
    let p = array("bf16", "ampere:promote24", (2, 2), 0);
    let site = "[1:0] PROMOTE_CHUNKS_LAST = 2'd2;";
    caught(&p, &p, &[(site, "[1:0] PROMOTE_CHUNKS_LAST = 2'd1;")], 5);
    caught(&p, &p, &[(site, "[1:0] PROMOTE_CHUNKS_LAST = 2'd3;")], 5);
}
