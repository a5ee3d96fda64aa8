//! `dfix-monitor`: counts what a dfix array's read-outs were, so the host reads three
//! counters instead of scanning the data (seed 002 §5 needs, per group, the values seen and
//! how many overflowed at the scale and at its half).
//!
//! Ports (R×C flag pairs, bit r·C + c as the array's `overflow`/`overflow_half`):
//! - `in_valid`: the array's `out_valid` (this cycle carries a read-out); `clear`: the counts
//!   start again from zero with this cycle (its read-out, if any, is counted);
//! - `mask` (R·C): the outputs to count (a tile smaller than the array leaves the rest out);
//! - `overflow`, `overflow_half` (R·C): the array's flags;
//! - `seen`, `overflows`, `overflows_half` (counter bits each): saturating counters (they
//!   stop at all ones), cleared by `rst` and by `clear`.
//!
//! Timing: one candidate boundary (after the three population counts); the counters are
//! registers, so the counts including a read-out presented in cycle t are on the outputs
//! from cycle t + stages + 1, when `out_valid` is high: latency = stages + 1.

use super::{GenError, Params, Unit};
use crate::ir::{konst, mux, tree, E};
use crate::units::{start, Built};

/// Candidate stage boundaries of the monitor (after the population counts).
pub(crate) const MONITOR_STAGES: u32 = 1;

/// The number of set bits of `x`, as a balanced adder tree, in `width` bits.
fn popcount(x: &E, width: u32) -> E {
    tree((0..x.width).map(|i| x.bit(i).zext(width)).collect(), E::add)
}

pub(crate) fn monitor(p: &Params) -> Result<Built, GenError> {
    let (mut m, valid) = start(p, MONITOR_STAGES)?;
    let outputs = p.rows * p.cols;
    let cb = p.counter_bits;
    let clear = m.input("clear", 1);
    m.reset_on_delay(&clear);
    let mask = m.input("mask", outputs);
    let over = m.input("overflow", outputs);
    let over_half = m.input("overflow_half", outputs);
    // Counts of one read-out: 0..=R·C.
    let iw = 32 - outputs.leading_zeros();
    let seen_now = m.wire("seen_now", &popcount(&mask, iw));
    let over_now = m.wire("overflows_now", &popcount(&over.and(&mask), iw));
    let half_now = m.wire("overflows_half_now", &popcount(&over_half.and(&mask), iw));
    m.stage();
    let counting = m.now(&valid);
    let restart = m.now(&clear);
    let sw = cb.max(iw) + 1;
    let max = konst(cb, (1u128 << cb) - 1);
    for (name, inc) in [
        ("seen", &seen_now),
        ("overflows", &over_now),
        ("overflows_half", &half_now),
    ] {
        let count = m.state(&format!("{name}_count"), cb, Some(0));
        let base = count.and(&restart.not().sext(cb));
        let added = base.zext(sw).add(&m.now(inc).zext(sw));
        let sum = m.wire(&format!("{name}_sum"), &added);
        // Past the counter's range exactly when a bit above it is set.
        let beyond = sum.bits(sw - 1, cb).any();
        let saturated = mux(&beyond, &max, &sum.low(cb));
        let next = mux(&counting, &saturated, &base);
        m.drive(&count, &next, None);
        m.output(name, &count);
    }
    // The counts are registers: they show a read-out one cycle after it was counted.
    let counted = m.state("counted", 1, Some(0));
    m.drive(&counted, &counting, None);
    m.output("out_valid", &counted);
    let latency = m.cycle() + 1;
    Ok(Built {
        module: m,
        latency,
        tables: vec![],
    })
}

/// The monitors of the lint grid. Lean: 1×1 with 32-bit counters at stages 0, 2×3 with
/// 4-bit counters at 0 and 1. Full: 1×1, 2×3, 8×8 and 16×16 with 32- and 4-bit counters at
/// stages 0 and 1.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let f = lpgen_golden::dfix::DfixFormat::new(10).expect("valid");
    let mut cases: Vec<(u32, u32, u32, u32)> = vec![];
    if full {
        for (r, c) in [(1, 1), (2, 3), (8, 8), (16, 16)] {
            for cb in [32, 4] {
                for s in 0..=MONITOR_STAGES {
                    cases.push((r, c, cb, s));
                }
            }
        }
    } else {
        cases = vec![(1, 1, 32, 0), (2, 3, 4, 0), (2, 3, 4, 1)];
    }
    cases
        .into_iter()
        .map(|(r, c, cb, s)| {
            let mut p = Params::dfix(Unit::DfixMonitor, f);
            (p.rows, p.cols, p.counter_bits, p.stages) = (r, c, cb, s);
            p
        })
        .collect()
}
