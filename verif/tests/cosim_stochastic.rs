//! The lean co-simulation of the stochastic-rounding float units CI runs (issue 32):
//! `float-add` / `float-mul --rounding stochastic:R --rounding-seed S` against the golden
//! `Rounder::new(stochastic:R, S)` replaying the same stream, one draw per operation, with
//! idle cycles between operations (scripts/cosim-full.sh runs more formats, R and stages).
//! Every fp8:e4m3 pair (add with both settings of `sub`, at 5 stages; mul at 2), every
//! fp8:e5m2:ftz product with R = 12 (more random bits than discarded ones), random and
//! corner bf16 sums (R = 8) and products (R = 32), float-fma on every float:2:2 triple
//! (R = 5) and random bf16 triples near cancellation (R = 32); `convert` to floats on every
//! bf16 word (into fp8:e4m3) and every fix:7:8 word (into bf16); and mutants it catches: a wrong
//! stream step (xorshift's 17 → 15), the stream stepping on idle cycles too, and the
//! comparison d + r > 2^R instead of ≥, and convert's discarded bits taken one place low.

mod common;

use common::{check, params, toolchain};
use lpgen_golden::Rounding;
use lpgen_hdl::{generate, Params, Unit};
use lpgen_verif::{drivers::run_design, Mode, RunOptions, Toolchain};

fn sr(unit: Unit, fmt: &str, stages: u32, r: u32, seed: u64) -> Params {
    params(unit, fmt, stages).rounding(Rounding::Stochastic(r), seed)
}

#[test]
fn float_add_fp8_e4m3_all_pairs() {
    let p = sr(Unit::FloatAdd, "fp8:e4m3", 5, 4, 1);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 2 << 16);
}

#[test]
fn float_mul_fp8_all_pairs() {
    let tc = toolchain();
    let r = check(&tc, &mul_e4m3(), Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 16);
    let p = sr(Unit::FloatMul, "fp8:e5m2:ftz", 4, 12, 3);
    let r = check(&tc, &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 16);
}

#[test]
fn bf16_random_and_corners() {
    let tc = toolchain();
    let p = sr(Unit::FloatAdd, "bf16", 3, 8, 7);
    let r = check(&tc, &p, Mode::Vectors(40_000), 0xbf16);
    assert!(r.passed > 40_000, "{}", r.passed);
    let p = sr(Unit::FloatMul, "bf16", 1, 32, 9);
    let r = check(&tc, &p, Mode::Vectors(40_000), 0xbf17);
    assert!(r.passed > 40_000, "{}", r.passed);
}

#[test]
fn float_fma_float_2_2_all_triples_and_bf16_random() {
    let tc = toolchain();
    let p = sr(Unit::FloatFma, "float:2:2", 7, 5, 2);
    let r = check(&tc, &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 15);
    let p = sr(Unit::FloatFma, "bf16", 3, 32, 3);
    let r = check(&tc, &p, Mode::Vectors(20_000), 0xf3a);
    assert!(r.passed > 20_000, "{}", r.passed);
}

/// `convert --rounding stochastic:R` (float results): `from` to `to` at `stages`.
fn convert_sr(from: &str, to: &str, stages: u32, r: u32, seed: u64) -> Params {
    let mut p = sr(Unit::Convert, from, stages, r, seed);
    p.to = Some(to.parse().unwrap());
    p
}

/// Every bf16 word into fp8:e4m3 (R = 8, 2 stages) and every fix:7:8 word into bf16 (R = 13,
/// 1 stage), against golden `alu::convert_with`; and the mutant whose discarded bits are
/// taken one place low is caught.
#[test]
fn convert_to_floats_all_words() {
    let tc = toolchain();
    let p = convert_sr("bf16", "fp8:e4m3", 2, 8, 3);
    let r = check(&tc, &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 16);
    let q = convert_sr("fix:7:8", "bf16", 1, 13, 5);
    let r = check(&tc, &q, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 16);
    let f = mutant(
        &tc,
        &p,
        "assign round_discard = subnormal_sig[7:0];",
        "assign round_discard = {subnormal_sig[6:0], 1'b0};",
    );
    assert!(f > 1000, "{f} failed");
}

fn mul_e4m3() -> Params {
    sr(Unit::FloatMul, "fp8:e4m3", 2, 4, 7)
}

/// Runs design `p` with `from` replaced by `to` in its Verilog, exhaustively; returns the
/// failures.
fn mutant(tc: &Toolchain, p: &Params, from: &str, to: &str) -> u64 {
    let mut d = generate(p).unwrap();
    assert_eq!(d.verilog.text().matches(from).count(), 1, "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, to, 1);
    }
    let r = run_design(tc, p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    eprintln!(
        "mutant {from:?} -> {to:?}: {} passed, {} failed",
        r.passed, r.failed
    );
    if let Some(first) = r.details.first() {
        eprintln!("first mismatch:\n{first}");
    }
    r.failed
}

#[test]
fn mutants_of_the_stream_and_the_comparison_are_caught() {
    let tc = toolchain();
    let mul = mul_e4m3();
    // A wrong stream step.
    let f = mutant(
        &tc,
        &mul,
        "{17'd0, sr_x13[31:17]}",
        "{15'd0, sr_x13[31:15]}",
    );
    assert!(f > 1000, "{f} failed");
    // The stream steps on idle cycles too.
    let f = mutant(
        &tc,
        &mul,
        "if (in_valid) sr_state <= sr_next;",
        "sr_state <= sr_next;",
    );
    assert!(f > 1000, "{f} failed");
    // Moves iff d + r > 2^R (d + r < 2^(R+1): the carry and a nonzero sum below it).
    let f = mutant(
        &tc,
        &mul,
        "assign round_up = round_up_wide[4];",
        "assign round_up = round_up_wide[4] & (|round_up_wide[3:0]);",
    );
    assert!(f > 100, "{f} failed");
}
