//! The co-simulation of the `fdpa` unit CI runs (issue 49): every operand tuple of two fp4
//! (float:2:1) pairs against each C of a corner list, random and corner chunks of fp8 E4M3
//! and E5M2 under Hopper's chunking, bf16 and f16 under Ampere's, f16 into binary16 and
//! binary32 words read as tf32, each against the golden `FdpaPlan::dot`; and the mutants it
//! catches: F off by one either way, an aligner that rounds instead of truncating, and the
//! wrong e_zero.

mod common;

use common::{check, toolchain};
use lpgen_hdl::{fdpa_params, generate, Params};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

fn fdpa(f: &str, mode: &str, stages: u32) -> Params {
    fdpa_params(f, mode).stages(stages)
}

#[test]
fn fdpa_fp4_every_pair_of_pairs() {
    let tc = toolchain();
    for (mode, s) in [("2:3:rz-f32", 0), ("2:1:rne-f16", 3), ("2:2:rz-e8m13", 6)] {
        let r = check(&tc, &fdpa("float:2:1", mode, s), Mode::Exhaustive, 0x49);
        assert_eq!(r.passed, 2 << 16, "{mode}");
    }
}

#[test]
fn fdpa_presets_random_and_corner_chunks() {
    let tc = toolchain();
    for (f, mode, s) in [
        ("fp8:e4m3", "hopper", 2),
        ("fp8:e5m2", "hopper", 0),
        ("bf16", "ampere", 4),
        ("f16", "ampere", 6),
        ("f16", "4:12:rne-f16", 1),
        ("float:8:23", "ampere", 3),
    ] {
        let r = check(&tc, &fdpa(f, mode, s), Mode::Vectors(3_000), 0x49);
        assert!(r.passed > 3_000, "{f} {mode}: {}", r.passed);
    }
}

/// Runs the Verilog of `design` (a mutant of `p`: another design, or `p`'s text with every
/// `from` replaced by `to`) against `p`'s golden model on 3,000 random and corner chunks;
/// returns (failed, first mismatch).
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
        RunOptions::new(Mode::Vectors(3_000), 7),
    )
    .unwrap();
    eprintln!("mutant {edits:?}: {} passed, {} failed", r.passed, r.failed);
    (r.failed, r.details.first().cloned().unwrap_or_default())
}

fn caught(p: &Params, design: &Params, edits: &[(&str, &str)], min: u64) {
    let (failed, first) = mutant(p, design, edits);
    assert!(failed > min, "{failed} failed");
    assert!(first.contains("<-- differs"), "{first}");
}

/// F one more or one less than the golden's (the design of another F, same ports).
#[test]
fn mutation_f_off_by_one_is_caught() {
    let p = fdpa("fp8:e4m3", "hopper", 0);
    caught(&p, &fdpa("fp8:e4m3", "32:14:rz-e8m13", 0), &[], 100);
    caught(&p, &fdpa("fp8:e4m3", "32:12:rz-e8m13", 0), &[], 100);
    let p = fdpa("bf16", "ampere", 0);
    caught(&p, &fdpa("bf16", "8:25:rz-f32", 0), &[], 20);
}

/// Every product's aligner rounds to nearest (half up) instead of truncating: 2^(d−1) added
/// before the shift right by d.
#[test]
fn mutation_rounding_aligner_is_caught() {
    let p = fdpa("fp8:e4m3", "hopper", 0);
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
    caught(&p, &p, &edits, 100);
}

/// The wrong e_zero: in a binary32 unit on bf16 operands (whose products reach far below
/// −133), binary16's −21, binary32's smallest normal exponent −126 and −132 (off by one); in
/// a binary16 unit on f16 operands, binary16's smallest normal exponent −14, 0 and −20. Off
/// by one, the truncation moves 2^−157 → 2^−156 (2^−33 → 2^−32), under the output's last
/// place: random chunks do not see it, the driver's e_zero chunks do (a product at the
/// boundary beside one at the last place, or at half of it).
#[test]
fn mutation_wrong_e_zero_is_caught() {
    let zero = |w: u32, v: i64| {
        format!(
            "localparam [{}:0] FDPA_E_ZERO = {w}'d{};",
            w - 1,
            (v as u64) & ((1 << w) - 1)
        )
    };
    let p = fdpa("bf16", "ampere", 0);
    caught(&p, &p, &[(&zero(10, -133), &zero(10, -21))], 100);
    caught(&p, &p, &[(&zero(10, -133), &zero(10, -126))], 0);
    caught(&p, &p, &[(&zero(10, -133), &zero(10, -132))], 0);
    let p = fdpa("f16", "4:12:rne-f16", 0);
    caught(&p, &p, &[(&zero(7, -21), &zero(7, -14))], 10);
    caught(&p, &p, &[(&zero(7, -21), &zero(7, 0))], 100);
    caught(&p, &p, &[(&zero(7, -21), &zero(7, -20))], 0);
}
