//! The lean co-simulation of the float lanes and conversions CI runs (issue 32;
//! scripts/cosim-full.sh runs every 8-bit format's lane exhaustively, every word of the 8- and
//! 16-bit conversions, and 10^6 random + corner operations of bf16/f16 lanes): an fp8:e4m3
//! lane converting to fp8:e5m2 on every opcode and operand pair, random bf16 vector lanes,
//! every word of bf16 → fix:7:8, fix:7:8 → fp8:e4m3 and f16 → fp8:e5m2, and three mutants it
//! catches: a lane comparing its order keys unsigned, a lane divider without its sticky bit,
//! and a float → fix conversion breaking ties away from zero.

mod common;

use common::{check, params, toolchain};
use lpgen_hdl::{generate, Params, Unit};
use lpgen_verif::{drivers::run_design, Mode, Report, RunOptions, Toolchain};

fn with_to(mut p: Params, to: &str) -> Params {
    p.to = Some(to.parse().unwrap());
    p
}

/// Runs `p` with `from` replaced by `to` in its Verilog (exactly one site).
fn mutant(tc: &Toolchain, p: &Params, mode: Mode, from: &str, to: &str) -> Report {
    let mut d = generate(p).unwrap();
    assert_eq!(d.verilog.text().matches(from).count(), 1, "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, to, 1);
    }
    let r = run_design(tc, p, &d, RunOptions::new(mode, 0x1a9e)).unwrap();
    eprintln!("mutant {from:?}: {} passed, {} failed", r.passed, r.failed);
    assert!(r.details[0].contains("<-- differs"), "{}", r.details[0]);
    r
}

#[test]
fn alu_fp8_e4m3_every_opcode_and_pair() {
    let p = with_to(params(Unit::Alu, "fp8:e4m3", 5), "fp8:e5m2");
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // 16 opcodes × 2^16 pairs, then every t_in word through `convert`.
    assert_eq!(r.passed, (16 << 16) + 256);
}

#[test]
fn vector_bf16_random_and_corners() {
    let mut p = with_to(params(Unit::Vector, "bf16", 2), "f16");
    p.lanes = 2;
    let r = check(&toolchain(), &p, Mode::Vectors(20_000), 0xbf16);
    assert!(r.passed > 20_000, "{}", r.passed);
}

#[test]
fn convert_every_word_float_to_fix_fix_to_float_and_among_floats() {
    let tc = toolchain();
    for (f, t, s) in [
        ("bf16", "fix:7:8", 2),
        ("fix:7:8", "fp8:e4m3", 0),
        ("f16", "fp8:e5m2", 1),
    ] {
        let r = check(
            &tc,
            &with_to(params(Unit::Convert, f, s), t),
            Mode::Exhaustive,
            0,
        );
        assert_eq!(r.passed, 1 << 16, "{f} -> {t}");
    }
}

/// Order keys compared unsigned: every negative operand orders above the positives.
#[test]
fn mutation_unsigned_lane_compare_is_caught() {
    let p = params(Unit::Alu, "fp8:e4m3", 0);
    let r = mutant(
        &toolchain(),
        &p,
        Mode::Exhaustive,
        "assign less = ($signed(a_key) < $signed(b_key));",
        "assign less = (a_key < b_key);",
    );
    assert!(r.failed > 10_000, "{} failed", r.failed);
}

/// The lane divider's remainder ignored: quotients whose discarded part is exactly the
/// guard bit (or less) round as ties or truncate.
#[test]
fn mutation_lane_divider_without_sticky_is_caught() {
    let p = params(Unit::Alu, "fp8:e4m3", 0);
    let r = mutant(
        &toolchain(),
        &p,
        Mode::Exhaustive,
        "assign sticky = (|rem0);",
        "assign sticky = 1'b0;",
    );
    assert!(r.failed > 100, "{} failed", r.failed);
}

/// float → fix rounding ties away from zero (the round-up's `| lsb` replaced by `| 1`).
#[test]
fn mutation_float_to_fix_ties_away_is_caught() {
    let p = with_to(params(Unit::Convert, "bf16", 2), "fix:7:8");
    let r = mutant(
        &toolchain(),
        &p,
        Mode::Exhaustive,
        "| right_sticky_d1) | shifted_right_d1[2]))",
        "| right_sticky_d1) | 1'b1))",
    );
    assert!(r.failed > 100, "{} failed", r.failed);
}
