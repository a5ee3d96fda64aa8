//! The lean co-simulation of the float units CI runs (issue 32; scripts/cosim-full.sh runs
//! every 8-bit format exhaustively at every stage count, and 10^6 random + corner pairs of
//! bf16 and f16): float-add on every fp8:e4m3 operand pair with both settings of `sub`,
//! float-mul on every fp8:e5m2 and float:3:4:ftz pair, random and corner bf16 sums, float-fma
//! on every float:2:2 triple and random f16 triples near cancellation, and two mutants it
//! catches: a rounder breaking ties away from zero instead of to even, and a float-fma
//! dropping its alignment sticky bit.

mod common;

use common::{check, params, toolchain};
use lpgen_hdl::{generate, Unit};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

#[test]
fn float_add_fp8_e4m3_all_pairs() {
    let r = check(
        &toolchain(),
        &params(Unit::FloatAdd, "fp8:e4m3", 5),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 2 << 16);
}

#[test]
fn float_mul_fp8_e5m2_and_float_3_4_ftz_all_pairs() {
    let tc = toolchain();
    let r = check(
        &tc,
        &params(Unit::FloatMul, "fp8:e5m2", 2),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 1 << 16);
    let r = check(
        &tc,
        &params(Unit::FloatMul, "float:3:4:ftz", 0),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 1 << 16);
}

#[test]
fn float_add_bf16_random_and_corners() {
    let r = check(
        &toolchain(),
        &params(Unit::FloatAdd, "bf16", 2),
        Mode::Vectors(50_000),
        0xbf16,
    );
    assert!(r.passed > 50_000, "{}", r.passed);
}

#[test]
fn float_fma_float_2_2_all_triples_and_f16_random() {
    let tc = toolchain();
    let r = check(
        &tc,
        &params(Unit::FloatFma, "float:2:2", 7),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 1 << 15);
    let r = check(
        &tc,
        &params(Unit::FloatFma, "f16", 3),
        Mode::Vectors(30_000),
        0xf16,
    );
    assert!(r.passed > 30_000, "{}", r.passed);
}

/// Ties rounded away from zero (the rounder's `| lsb` replaced by `| 1`): every exact tie
/// with an even neighbour below differs.
#[test]
fn mutation_ties_away_from_zero_is_caught() {
    let tc = toolchain();
    let p = params(Unit::FloatAdd, "float:3:4", 0);
    let mut d = generate(&p).unwrap();
    let from = " | round_frac[0]))";
    assert_eq!(d.verilog.text().matches(from).count(), 1, "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, " | 1'b1))", 1);
    }
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    eprintln!("ties-away mutant: {} passed, {} failed", r.passed, r.failed);
    assert!(r.failed > 100, "{} failed", r.failed);
    assert!(r.details[0].contains("<-- differs"), "{}", r.details[0]);
    eprintln!("first mismatch:\n{}", r.details[0]);
}

/// float-fma with the alignment's sticky bit dropped: products whose addend is shifted past
/// the guard bits round wrongly.
#[test]
fn mutation_a_dropped_fma_sticky_bit_is_caught() {
    let tc = toolchain();
    let p = params(Unit::FloatFma, "fp8:e4m3", 0);
    let mut d = generate(&p).unwrap();
    let from = "| {11'd0, align_sticky})";
    assert_eq!(d.verilog.text().matches(from).count(), 1, "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, "| {11'd0, 1'b0})", 1);
    }
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    eprintln!(
        "dropped-sticky mutant: {} passed, {} failed",
        r.passed, r.failed
    );
    assert!(r.failed > 1000, "{} failed", r.failed);
    assert!(r.details[0].contains("c=0x"), "{}", r.details[0]);
}
