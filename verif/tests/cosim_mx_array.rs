//! The co-simulation of `array --pe mx` (issue 33): arrays of MX-block PEs against the golden
//! reference accumulation (`F32Acc`, each block pair's exact dot product rounded to f32 and
//! added in f32) for FP8 E4M3, FP6 E2M3, FP4 E2M1 and INT8 at small blocks and K = 32, every
//! corner tile (zero blocks, NaN scales, saturated and subnormal elements, the extreme
//! scales) in each run, every element pair of FP4 and FP6 E2M3, and three mutants it catches:
//! a flipped bit of the scales' exponent sum, a dropped sticky bit in the block's rounding to
//! f32, and an accumulator that ignores `clear`.

mod common;

use common::{check, mutant, toolchain};
use lpgen_hdl::{Params, Unit};
use lpgen_verif::Mode;

fn array(f: &str, rows: u32, cols: u32, stages: u32) -> Params {
    let mut p = Params::parse(Unit::Array, f).unwrap().stages(stages);
    (p.rows, p.cols) = (rows, cols);
    p
}

#[test]
fn mx_arrays_small_blocks_and_k32() {
    let tc = toolchain();
    for (f, (r, c), s, n) in [
        ("mx:fp8:e4m3:b4", (3, 2), 6, 20_000),
        ("mx:fp8:e4m3", (2, 2), 2, 6_000),
        ("mx:fp6:e2m3:b3", (2, 3), 3, 20_000),
        ("mx:fp6:e2m3", (1, 2), 0, 6_000),
        ("mx:fp4:e2m1:b2", (2, 2), 1, 20_000),
        ("mx:fp4:e2m1", (2, 1), 5, 6_000),
        ("mx:int8:b5", (2, 2), 4, 20_000),
        ("mx:int8", (1, 1), 2, 6_000),
    ] {
        let r = check(&tc, &array(f, r, c, s), Mode::Vectors(n), 0x33a);
        // Corner tiles and random ones: one result per `last` step.
        assert!(r.passed > n / 12, "{f}: {}", r.passed);
    }
}

#[test]
fn mx_arrays_every_element_pair_of_fp4_and_fp6() {
    let tc = toolchain();
    for (f, s, w) in [("mx:fp4:e2m1:b3", 2, 4), ("mx:fp6:e2m3:b2", 1, 6)] {
        let r = check(&tc, &array(f, 2, 2, s), Mode::Exhaustive, 0x33b);
        assert!(r.passed >= 7 << (2 * w), "{f}: {}", r.passed);
    }
}

/// The lowest bit of the exponent sum xa + xb + offset flipped.
#[test]
fn mutation_a_flipped_exponent_bit_is_caught() {
    let p = array("mx:fp4:e2m1:b2", 1, 1, 2);
    let (failed, first) = mutant(
        &p,
        "+ MX_EXP_OFFSET);",
        "+ MX_EXP_OFFSET) ^ 9'd1;",
        Mode::Vectors(3_000),
    );
    assert!(failed > 100, "{failed} failed");
    assert!(
        first.contains("c_out") && first.contains("<-- differs") && first.contains("a_in=[x="),
        "{first}"
    );
}

/// The block's exact sum rounded to f32 without its sticky bit (42-bit sums of E4M3 blocks
/// of 32: ties decided wrongly where bits below the 26 kept are set).
#[test]
fn mutation_a_dropped_sticky_bit_is_caught() {
    let p = array("mx:fp8:e4m3", 1, 1, 0);
    let (failed, first) = mutant(&p, "(|block_norm[15:0])}", "1'b0}", Mode::Vectors(20_000));
    assert!(failed > 0, "{failed} failed");
    assert!(first.contains("<-- differs"), "{first}");
}

/// The accumulator keeps the previous tile's sum (`clear` ignored).
#[test]
fn mutation_an_ignored_clear_is_caught() {
    let p = array("mx:int8:b3", 2, 2, 2);
    let (failed, _) = mutant(
        &p,
        "acc_base = (clear_d1 ? 32'd0 : acc);",
        "acc_base = acc;",
        Mode::Vectors(3_000),
    );
    assert!(failed > 100, "{failed} failed");
}
