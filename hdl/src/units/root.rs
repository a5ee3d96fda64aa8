//! The square root's digit recurrence, shared by the `--sqrt` lanes of every family that
//! computes one (float, the posit datapath's families, fix): each family decodes its word
//! to an unsigned radicand, takes the root here, and rounds it in its own way.

use crate::ir::{cat, konst, mux, Module, E};

/// ⌊√x⌋ (`steps` bits) and the final partial remainder x − ⌊√x⌋² of the unsigned radicand
/// `rad` of 2·`steps` bits, by the restoring recurrence: one root bit per step from the top,
/// two radicand bits each; the partial remainder stays below 2·root + 1 (`steps` + 2 bits).
/// Wires `PXr{i}` (root bit i), `PXrem{i}` and `PXroot{i}`; one candidate boundary, after
/// ⌈steps/2⌉ steps.
pub(crate) fn restoring_root(m: &mut Module, px: &str, rad: &E, steps: u32) -> (E, E) {
    assert!(
        steps >= 2 && rad.width == 2 * steps,
        "a radicand of 2·steps bits, steps >= 2"
    );
    let rw = steps + 2;
    let mut rem = konst(rw, 0);
    let mut root = konst(steps, 0);
    for step in 0..steps {
        if step == steps.div_ceil(2) {
            m.stage();
        }
        let i = steps - 1 - step;
        let pair = rad.bits(2 * i + 1, 2 * i);
        let shifted = cat(&[rem.low(rw - 2), pair]);
        let trial = cat(&[root.low(rw - 2), konst(2, 1)]);
        let diff = shifted.zext(rw + 1).sub(&trial.zext(rw + 1));
        let bit = m.wire(&format!("{px}r{i}"), &diff.msb().not());
        rem = m.wire(&format!("{px}rem{i}"), &mux(&bit, &diff.low(rw), &shifted));
        root = m.wire(&format!("{px}root{i}"), &cat(&[root.low(steps - 1), bit]));
    }
    (root, rem)
}
