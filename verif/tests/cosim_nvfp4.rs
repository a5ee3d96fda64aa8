//! Co-simulation of the NVFP4 units (issue 50) against the golden `scale` module. CI runs two
//! Verilator builds: `nvfp4-enc` (nvfp4, every register) on the corners, the scale sweep
//! (every UE4M3 code under six tensor scales, ties of the scale and element roundings,
//! saturation) and 10^5 random blocks; `nvfp4-dot` (nvfp4) on every element pair under eight
//! scale pairs and every pair of scale bytes. The rest builds a model each and is left to
//! `cargo test -p lpgen-verif --test cosim_nvfp4 -- --ignored` (docs/rtl.md, "NVFP4 units"):
//! UE5M3 scales, other block sizes and stage counts, and the mutants, each caught: the scale
//! rounding truncating, the scale tie going away from zero, the scale saturation removed (NaN
//! past 448), the element saturation removed (wrapping), the element tie going away from zero,
//! the product's sticky bit dropped, the division's remainder dropped, a minimum tree for the
//! amax, the s_enc sign check removed; and in the dot product one scale's significand squared,
//! one scale's exponent doubled, and a subnormal element read as 1 instead of 1/2.

mod common;

use common::{check, toolchain};
use lpgen_hdl::{Params, Unit};
use lpgen_verif::Mode;

fn nv(unit: Unit, f: &str, stages: u32) -> Params {
    Params::parse(unit, f).unwrap().stages(stages)
}

#[test]
fn nvfp4_enc_sweep_corners_and_random_blocks() {
    let r = check(
        &toolchain(),
        &nv(Unit::Nvfp4Enc, "nvfp4", 5),
        Mode::Vectors(100_000),
        0x50,
    );
    assert!(r.passed > 103_000, "{}", r.passed);
}

#[test]
fn nvfp4_dot_every_element_pair_and_scale_pair() {
    let r = check(
        &toolchain(),
        &nv(Unit::Nvfp4Dot, "nvfp4", 1),
        Mode::Exhaustive,
        0x51,
    );
    assert!(r.passed >= 256 * 256 + 8 * 256, "{}", r.passed);
}

#[test]
#[ignore = "a Verilator build per design (about 15 s each): run with --ignored"]
fn nvfp4_enc_ue5m3_small_blocks_and_stage_counts() {
    let tc = toolchain();
    for (f, s) in [
        ("scaled/fp4:e2m1/b4/ue5m3/t", 2),
        ("scaled/fp4:e2m1/b3/ue4m3/t", 1),
        ("nvfp4", 0),
        ("scaled/fp4:e2m1/b32/ue5m3/t", 3),
    ] {
        check(&tc, &nv(Unit::Nvfp4Enc, f, s), Mode::Vectors(50_000), 0x52);
    }
    check(
        &tc,
        &nv(Unit::Nvfp4Dot, "scaled/fp4:e2m1/b3/ue4m3/t", 3),
        Mode::Exhaustive,
        0x53,
    );
}

/// The encoder of blocks of 2 (a small build) with `from` replaced by `to`, on the corners,
/// the sweep and 20,000 random blocks: more than `min` differ, the first in `port`.
fn enc_mutant(from: &str, to: &str, min: u64, port: &str) {
    let p = nv(Unit::Nvfp4Enc, "scaled/fp4:e2m1/b2/ue4m3/t", 0);
    let (failed, first) = common::mutant(&p, from, to, Mode::Vectors(20_000));
    assert!(failed > min, "{from:?}: {failed} failed");
    assert!(
        first.contains(port) && first.contains("<-- differs"),
        "{first}"
    );
}

const SCALE_ROUND_UP: &str =
    "assign round_up = (subnormal_sig[6] & (((|subnormal_sig[5:0]) | subnormal_sticky) | round_frac[0]));";
const ELEM_ROUND_UP: &str = "assign round_up_1 = (subnormal_sig_1[8] & (((|subnormal_sig_1[7:0]) | subnormal_sticky_1) | round_frac_1));";

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_scale_rounding_truncates() {
    enc_mutant(SCALE_ROUND_UP, "assign round_up = 1'b0;", 100, "scale");
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_scale_ties_away_from_zero() {
    enc_mutant(
        SCALE_ROUND_UP,
        "assign round_up = subnormal_sig[6];",
        10,
        "scale",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_scale_saturation_removed() {
    enc_mutant(
        "(overflow ? {1'b0, FLOAT_MAX_W7} :",
        "(overflow ? 8'h7f :",
        10,
        "scale",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_element_saturation_removed() {
    enc_mutant(
        "(overflow_1 ? {x[31], FLOAT_MAX_W3} :",
        "(1'b0 ? {x[31], FLOAT_MAX_W3} :",
        10,
        "codes",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_element_ties_away_from_zero() {
    enc_mutant(
        ELEM_ROUND_UP,
        "assign round_up_1 = subnormal_sig_1[8];",
        10,
        "codes",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_product_sticky_dropped() {
    enc_mutant(
        "(x0_s_sticky | (|x0_div_rem0))",
        "(|x0_div_rem0)",
        0,
        "codes",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_division_remainder_dropped() {
    enc_mutant(
        "(amax_s_sticky | (|scale_div_rem0))",
        "amax_s_sticky",
        10,
        "scale",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_amax_tree_takes_the_minimum() {
    enc_mutant(
        "((x[30:0] > x[62:32]) ?",
        "((x[30:0] < x[62:32]) ?",
        100,
        "scale",
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_tensor_scale_sign_unchecked() {
    enc_mutant(
        "(&s_enc[30:23]), s_enc[31],",
        "(&s_enc[30:23]),",
        0,
        "scale",
    );
}

/// `nvfp4-dot` (nvfp4) with `from` replaced by `to`, exhaustively: more than `min` differ.
fn dot_mutant(from: &str, to: &str, min: u64) {
    let p = nv(Unit::Nvfp4Dot, "nvfp4", 0);
    let (failed, first) = common::mutant(&p, from, to, Mode::Exhaustive);
    assert!(failed > min, "{from:?}: {failed} failed");
    assert!(first.contains("<-- differs"), "{first}");
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_dot_scale_significand_squared() {
    dot_mutant("{4'd0, xb_sig});", "{4'd0, xa_sig});", 1000);
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_dot_scale_exponent_doubled() {
    dot_mutant(
        "({2'd0, xa_field} + {2'd0, xb_field})",
        "({2'd0, xa_field} + {2'd0, xa_field})",
        1000,
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_dot_subnormal_element_doubled() {
    dot_mutant(
        "(~(|pa[2:1]) ? 2'd0 : (pa[2:1] - 2'd1))",
        "(~(|pa[2:1]) ? 2'd1 : (pa[2:1] - 2'd1))",
        100,
    );
}

#[test]
#[ignore = "a Verilator build per mutant: run with --ignored"]
fn mutation_element_division_remainder_dropped() {
    enc_mutant("(x0_s_sticky | (|x0_div_rem0))", "x0_s_sticky", 0, "codes");
}
