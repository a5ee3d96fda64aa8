//! The lean co-simulation of the float array PE's stochastic read-out CI runs (issue 32):
//! `array --pe float --rounding stochastic:R --rounding-seed S` against the golden stream
//! (verif `drivers/array.rs`): each `last` step presents one state a row on `sr_row_state`
//! (the stream at base + r·n, n = C plus a gap, as a tile of a wider product) and PE (r, c)
//! must read out `ExactAcc::result_with` under a `Rounder` at that state after c draws (the
//! state after c + 1 steps rounds it). Every fp8:e4m3 product pair through a 2×2 array at
//! stages 1; random bf16 tiles on 2×3 at stages 2; and mutants it catches: PE (r, c)
//! rounding with the state after c steps (not c + 1), and row 1's state not skewed.

mod common;

use common::{array, check, mutant, toolchain};
use lpgen_golden::Rounding;
use lpgen_hdl::PeKind;
use lpgen_verif::Mode;

fn stochastic(
    fmt: &str,
    rows: u32,
    cols: u32,
    stages: u32,
    r: u32,
    seed: u64,
) -> lpgen_hdl::Params {
    array(fmt, PeKind::Float, rows, cols, stages).rounding(Rounding::Stochastic(r), seed)
}

#[test]
fn fp8_e4m3_every_pair_and_mutants() {
    let p = stochastic("fp8:e4m3", 2, 2, 1, 4, 9);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // Every pair's tile is read out once.
    assert_eq!(r.passed, 1 << 16);
    // PE (r, c) rounds with the state it receives (c steps), not the stepped one.
    let (f, _) = mutant(
        &p,
        "sr_readout_state <= sr_next;",
        "sr_readout_state <= sr_row_state;",
        Mode::Exhaustive,
    );
    assert!(f > 1000, "{f} failed");
    // Row 1's state enters PE (1, 0) with row 0's step, not skewed one cycle like a_row1.
    let (f, _) = mutant(
        &p,
        ".sr_row_state(step_sr_row_state1_d1),",
        ".sr_row_state(sr_row_state_d1[63:32]),",
        Mode::Exhaustive,
    );
    assert!(f > 1000, "{f} failed");
}

#[test]
fn bf16_random_tiles() {
    let p = stochastic("bf16", 2, 3, 2, 8, 7);
    let r = check(&toolchain(), &p, Mode::Vectors(20_000), 0xbf16);
    assert!(r.passed > 1000, "{}", r.passed);
}
