//! The lean co-simulation of `mx-dot` CI runs (issue 33; scripts/cosim-full.sh runs every
//! element type at every stage count with larger blocks): every element pair of the 4- and
//! 6-bit types and of E4M3 under seven scale pairs, random and corner blocks of the 8-bit
//! types, `mx-enc` on random and corner blocks of every element type (f32 words, and bf16, f16,
//! FP8 and fix words through `--input`), and the mutants it catches: a product whose sign
//! ignores b's sign bit, a scale exponent that drops one scale, a float and an INT8 encoder
//! rounding ties away from zero (f32 and fix words), an f16 block of subnormals scaled as if its
//! leading one were at the top, and a fix magnitude that is off by one for negative words.

mod common;

use common::{check, toolchain};
use lpgen_hdl::{Params, Unit};
use lpgen_verif::Mode;

fn mx(f: &str, stages: u32) -> Params {
    Params::parse(Unit::MxDot, f).unwrap().stages(stages)
}

fn mx_enc(f: &str, stages: u32) -> Params {
    Params::parse(Unit::MxEnc, f).unwrap().stages(stages)
}

/// `mx-enc` on words of `input`.
fn mx_enc_in(f: &str, input: &str, stages: u32) -> Params {
    let mut p = mx_enc(f, stages);
    p.input = Some(input.parse().unwrap());
    p
}

#[test]
fn mx_dot_fp4_fp6_and_e4m3_all_element_pairs() {
    let tc = toolchain();
    for (f, s, w) in [
        ("mx:fp4:e2m1:b4", 3, 4),
        ("mx:fp6:e3m2:b3", 1, 6),
        ("mx:fp6:e2m3:b2", 0, 6),
        ("mx:fp8:e4m3:b2", 2, 8),
    ] {
        let r = check(&tc, &mx(f, s), Mode::Exhaustive, 0x33);
        assert!(r.passed >= 7 << (2 * w), "{f}: {}", r.passed);
    }
}

#[test]
fn mx_dot_8_bit_random_and_corner_blocks() {
    let tc = toolchain();
    for (f, s) in [
        ("mx:fp8:e4m3:b8", 1),
        ("mx:fp8:e5m2:b32", 3),
        ("mx:int8:b5", 0),
    ] {
        let r = check(&tc, &mx(f, s), Mode::Vectors(5_000), 0x8);
        assert!(r.passed > 5_000, "{f}: {}", r.passed);
    }
}

/// Runs a mutant of `p`'s Verilog (`from` replaced by `to`, exactly one site) exhaustively
/// and returns (failed, first mismatch).
fn mutant(p: &Params, from: &str, to: &str) -> (u64, String) {
    common::mutant(p, from, to, Mode::Exhaustive)
}

/// The sign of product 0 taken from a alone (b's sign bit ignored).
#[test]
fn mutation_a_broken_product_sign_is_caught() {
    let p = mx("mx:fp4:e2m1:b2", 0);
    let (failed, first) = mutant(
        &p,
        "neg0 = (a0_decode_sign ^ b0_decode_sign);",
        "neg0 = a0_decode_sign;",
    );
    assert!(failed > 100, "{failed} failed");
    assert!(
        first.contains("acc") && first.contains("<-- differs"),
        "{first}"
    );
}

/// The exponent computed from xa alone (xb's scale dropped).
#[test]
fn mutation_a_broken_scale_add_is_caught() {
    let p = mx("mx:fp4:e2m1:b2", 0);
    let (failed, first) = mutant(&p, "({1'b0, xa} + {1'b0, xb})", "({1'b0, xa} + {1'b0, xa})");
    assert!(failed > 100, "{failed} failed");
    assert!(
        first.contains("exp") && first.contains("<-- differs"),
        "{first}"
    );
}

#[test]
fn mx_enc_random_and_corner_blocks() {
    let tc = toolchain();
    for (f, s) in [
        ("mx:fp4:e2m1:b4", 3),
        ("mx:fp6:e3m2:b3", 0),
        ("mx:fp6:e2m3:b2", 1),
        ("mx:fp8:e4m3:b4", 2),
        ("mx:fp8:e5m2:b5", 3),
        ("mx:int8:b3", 0),
        ("mx:int8:b4", 2),
    ] {
        let r = check(&tc, &mx_enc(f, s), Mode::Vectors(20_000), 0xe);
        assert!(r.passed > 20_000, "{f}: {}", r.passed);
    }
}

/// Runs an mx-enc mutant of `p` (`from` replaced by `to`) on 20,000 random and corner blocks
/// and asserts that it is caught: more than `min` blocks differ, the first in `port`.
fn enc_mutant_caught(p: &Params, (from, to): (&str, &str), min: u64, port: &str) {
    let (failed, first) = common::mutant(p, from, to, Mode::Vectors(20_000));
    assert!(failed > min, "{failed} failed");
    assert!(
        first.contains(port) && first.contains("<-- differs"),
        "{first}"
    );
}

/// mx-enc's INT8 element 0 rounding ties away from zero (the round-up condition's
/// `sticky | q[1]` replaced by 1): the two tie corners and the random blocks' few-bit values
/// at midpoints catch it (INT8 keeps 7 bits, so random ties are rarer than in the floats).
#[test]
fn mutation_enc_int8_ties_away_from_zero_is_caught() {
    let p = mx_enc("mx:int8:b2", 0);
    enc_mutant_caught(
        &p,
        ("(x0_q[0] & (x0_sticky | x0_q[1]))", "(x0_q[0] & 1'b1)"),
        10,
        "codes",
    );
}

/// mx-enc's element 0 rounding ties away from zero (the rounder's `| round_frac` replaced by
/// `| 1'b1`): the random blocks' few-bit values at midpoints catch it.
#[test]
fn mutation_enc_ties_away_from_zero_is_caught() {
    let p = mx_enc("mx:fp4:e2m1:b2", 0);
    enc_mutant_caught(
        &p,
        (
            "| subnormal_sticky) | round_frac));",
            "| subnormal_sticky) | 1'b1));",
        ),
        100,
        "codes",
    );
}

/// `--input`: bf16, f16, an FP8 with subnormals and fix words into float and INT8 elements,
/// at 0 and the deepest `--stages`, blocks of 1, 3, 4 and 32.
#[test]
fn mx_enc_bf16_f16_fp8_and_fix_inputs() {
    let tc = toolchain();
    for (f, input, s) in [
        ("mx:fp8:e4m3:b4", "bf16", 3),
        ("mx:int8:b3", "bf16", 0),
        ("mx:fp4:e2m1:b4", "f16", 0),
        ("mx:int8:b3", "f16", 3),
        ("mx:fp6:e2m3:b3", "float:4:3", 3),
        ("mx:fp8:e5m2:b1", "f16", 0),
        ("mx:fp8:e4m3", "fix:7:8", 3),
        ("mx:int8:b4", "fix:7:8", 0),
        ("mx:fp6:e3m2:b3", "fix:0:15", 0),
        ("mx:int8:b3", "fix:31:0", 3),
    ] {
        let r = check(&tc, &mx_enc_in(f, input, s), Mode::Vectors(6_000), 0x1e);
        assert!(r.passed > 6_000, "{f} of {input}: {}", r.passed);
    }
}

/// f16 words: a block of subnormals scaled from its largest field alone (the leading one of
/// the fractions' OR ignored: `MX_SCALE_OFFSET - lz` replaced by `MX_SCALE_OFFSET`).
#[test]
fn mutation_f16_subnormal_block_scale_is_caught() {
    let p = mx_enc_in("mx:fp8:e4m3:b2", "f16", 0);
    // The codes of a block of subnormals (the first port the report compares) move with it.
    enc_mutant_caught(
        &p,
        (
            "(MX_SCALE_OFFSET - {4'd0, frac_or_lzc_count})",
            "MX_SCALE_OFFSET",
        ),
        10,
        "codes",
    );
}

/// fix words: a negative word's magnitude as its ones' complement (one too small; the most
/// negative word's 2^(W−1) − 1).
#[test]
fn mutation_fix_negative_magnitude_is_caught() {
    let p = mx_enc_in("mx:int8:b2", "fix:7:8", 0);
    enc_mutant_caught(
        &p,
        (
            "(x0_neg ? (16'd0 - x[15:0]) : x[15:0])",
            "(x0_neg ? (~x[15:0]) : x[15:0])",
        ),
        10,
        "",
    );
}

/// fix words into INT8: element 0 rounding ties away from zero.
#[test]
fn mutation_fix_int8_ties_away_from_zero_is_caught() {
    let p = mx_enc_in("mx:int8:b2", "fix:7:8", 0);
    enc_mutant_caught(
        &p,
        ("(x0_q[0] & (x0_sticky | x0_q[1]))", "(x0_q[0] & 1'b1)"),
        10,
        "codes",
    );
}
