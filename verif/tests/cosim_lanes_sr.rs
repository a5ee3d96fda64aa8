//! The lean co-simulation of the stochastic float lanes CI runs (issue 32): `alu` / `vector
//! --rounding stochastic:R --rounding-seed S` against the golden `Rounder` replaying the
//! lanes' stream (docs/rtl.md): a beat of add, sub, mul or div rounds lane j with the state
//! after j+1 steps and advances L; idle cycles, non-rounding opcodes and `sr_load`s (in an
//! idle cycle, where they must not load; with a rounding beat; with another opcode)
//! interleaved (verif `drivers/lane_sr.rs`).
//! Every fp8:e4m3 pair of add, sub, mul and div on one lane (no stages) and on four lanes
//! (5 stages); random and corner bf16 operations on three lanes converting to fp8:e5m2
//! (scripts/cosim-full.sh runs more); and mutants it catches: lane j rounded with the state
//! after j steps, the stream stepping on non-rounding opcodes, a load that replaces the step
//! instead of coming before it, and a load taken without in_valid.

mod common;

use common::{check, params, toolchain};
use lpgen_golden::Rounding;
use lpgen_hdl::{generate, Params, Unit};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

fn lanes(unit: Unit, fmt: &str, l: u32, stages: u32, r: u32, seed: u64) -> Params {
    let mut p = params(unit, fmt, stages).rounding(Rounding::Stochastic(r), seed);
    p.lanes = l;
    p
}

/// The beats of rounding opcodes in an exhaustive fp8 run on L lanes: 4 · 2^16 / L.
fn rounding_beats(l: u64) -> u64 {
    4 * (1 << 16) / l
}

#[test]
fn alu_fp8_e4m3_all_pairs() {
    let p = lanes(Unit::Alu, "fp8:e4m3", 1, 0, 4, 1);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // Every rounding beat, and the non-rounding beats between them (more than 1 in 7).
    assert!(r.passed > rounding_beats(1) * 8 / 7, "{}", r.passed);
}

#[test]
fn vector_bf16_random_and_corners() {
    let mut p = lanes(Unit::Vector, "bf16", 3, 2, 8, 7);
    p.to = Some("fp8:e5m2".parse().unwrap());
    let r = check(&toolchain(), &p, Mode::Vectors(60_000), 0xbf16);
    assert!(r.passed > 20_000, "{}", r.passed);
}

/// Runs the mutant of `p` with every (from, to) replaced once (each site unique),
/// exhaustively; returns the failures.
fn mutant(p: &Params, edits: &[(&str, &str)]) -> u64 {
    let mut d = generate(p).unwrap();
    for (from, to) in edits {
        assert_eq!(d.verilog.text().matches(from).count(), 1, "site {from}");
        for f in &mut d.verilog.files {
            f.text = f.text.replacen(from, to, 1);
        }
    }
    let r = run_design(&toolchain(), p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    eprintln!("mutant {edits:?}: {} passed, {} failed", r.passed, r.failed);
    r.failed
}

#[test]
fn vector_fp8_e4m3_all_pairs_and_mutants() {
    let p = lanes(Unit::Vector, "fp8:e4m3", 4, 5, 4, 3);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    assert!(r.passed > rounding_beats(4) * 8 / 7, "{}", r.passed);
    // Lane j rounded with the state after j steps (not j + 1).
    let random = |j: u32| format!("assign sr_l{j}_random = sr_l{j}_next[31:28];");
    let (r0, r1, r2, r3) = (random(0), random(1), random(2), random(3));
    let f = mutant(
        &p,
        &[
            (&r0, "assign sr_l0_random = sr_base[31:28];"),
            (&r1, "assign sr_l1_random = sr_l0_next[31:28];"),
            (&r2, "assign sr_l2_random = sr_l1_next[31:28];"),
            (&r3, "assign sr_l3_random = sr_l2_next[31:28];"),
        ],
    );
    assert!(f > 1000, "{f} failed");
    // The stream steps on every in_valid cycle, non-rounding opcodes too.
    let advance = "assign sr_advance = (in_valid & ((((op == 4'd0) | (op == 4'd1)) | \
                   (op == 4'd2)) | (op == 4'd3)));";
    let f = mutant(&p, &[(advance, "assign sr_advance = in_valid;")]);
    assert!(f > 1000, "{f} failed");
    // A load replaces the step (the lanes of a load cycle round from the old register).
    let f = mutant(
        &p,
        &[
            (
                "assign sr_base = (sr_take ? sr_load_state : sr_state);",
                "assign sr_base = sr_state;",
            ),
            (
                "sr_state <= (sr_advance ? sr_l3_next : sr_base);",
                "sr_state <= (sr_take ? sr_load_state : sr_l3_next);",
            ),
        ],
    );
    assert!(f > 10, "{f} failed");
    // A load without in_valid (a stalled stream would repeat it).
    let take = "assign sr_take = (sr_load & in_valid);";
    let f = mutant(&p, &[(take, "assign sr_take = sr_load;")]);
    assert!(f > 10, "{f} failed");
}
