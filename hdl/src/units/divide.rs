//! Restoring division, written once: the compare-and-subtract step that `q8-enc`'s unrolled
//! quotient and quant1's sequential mean dividers (fix and posit) all take, and the sequential
//! divider's registers and control, which the two mean dividers share. A step joins the
//! dividend's next bit to the partial remainder and subtracts the divisor where it fits; the
//! fit is the quotient bit.

use crate::ir::{cat, konst, mux, Module, E};

/// One restoring step: `shifted` (the partial remainder with the dividend's next bit joined
/// below) against `divisor` (as wide): the quotient bit, as the wire `bit_name`, and the new
/// partial remainder (shifted − divisor where the bit is set, else shifted; not named).
pub(crate) fn restoring_step(m: &mut Module, bit_name: &str, shifted: &E, divisor: &E) -> (E, E) {
    let bit = m.wire(bit_name, &shifted.ge(divisor));
    let reduced = mux(&bit, &shifted.sub(divisor), shifted);
    (bit, reduced)
}

/// A sequential restoring divider of a `quotient_w`-bit dividend by a `count_w`-bit divisor,
/// one quotient bit a cycle: on `start` the `quotient` register loads the dividend (its bits
/// shift out at the top as quotient bits shift in at the bottom), `remainder` clears and
/// `divisor` loads; the steps follow while `busy`.
pub(crate) struct SequentialDivider {
    pub quotient: E,
    pub remainder: E,
    pub divisor: E,
    quotient_w: u32,
    count_w: u32,
}

/// The divider's step counter, its result register and its control wires.
pub(crate) struct DividerControl {
    /// Steps left (steps + 1 after `start`; the last one, 1, is the result's cycle).
    pub steps: E,
    /// The result register, which the caller loads when `finished`.
    pub result: E,
    /// High in the start cycle and while steps remain.
    pub busy: E,
    /// The quotient and remainder registers load: at `start` and on every dividing step.
    pub load: E,
}

impl SequentialDivider {
    /// Declares the quotient, remainder and divisor registers (the caller's own registers
    /// follow them).
    pub(crate) fn registers(m: &mut Module, quotient_w: u32, count_w: u32) -> SequentialDivider {
        SequentialDivider {
            quotient: m.state("quotient", quotient_w, Some(0)),
            remainder: m.state("remainder", count_w, Some(0)),
            divisor: m.state("divisor", count_w, Some(0)),
            quotient_w,
            count_w,
        }
    }

    /// Declares the step counter (counting `steps` quotient bits), the `result_w`-bit result
    /// register `mean_q` and the control wires.
    pub(crate) fn control(
        &self,
        m: &mut Module,
        start: &E,
        steps: u32,
        result_w: u32,
    ) -> DividerControl {
        let steps_w = bits_for(steps + 1);
        let counter = m.state("steps", steps_w, Some(0));
        let result = m.state("mean_q", result_w, Some(0));
        let running = m.wire("running", &counter.any());
        let busy = m.wire("busy_now", &start.or(&running));
        let dividing = m.wire("dividing", &running.and(&counter.eq_k(1).not()));
        let load = m.wire("load", &start.or(&dividing));
        DividerControl {
            steps: counter,
            result,
            busy,
            load,
        }
    }

    /// One step a cycle: the quotient and remainder registers take `dividend` and zero on
    /// `start`, else the next step; the divisor takes `count` on `start`.
    pub(crate) fn step(
        &self,
        m: &mut Module,
        control: &DividerControl,
        start: &E,
        dividend: &E,
        count: &E,
    ) {
        let (q, r) = (&self.quotient, &self.remainder);
        let shifted = m.wire("shifted", &cat(&[r.clone(), q.msb()]));
        let divisor_wide = self.divisor.zext(self.count_w + 1);
        let (fits, reduced) = restoring_step(m, "fits", &shifted, &divisor_wide);
        let quotient_next = cat(&[q.low(self.quotient_w - 1), fits]);
        m.drive(
            q,
            &mux(start, dividend, &quotient_next),
            Some(&control.load),
        );
        m.drive(
            r,
            &mux(start, &konst(self.count_w, 0), &reduced.low(self.count_w)),
            Some(&control.load),
        );
        m.drive(&self.divisor, count, Some(start));
    }

    /// Counts the steps: `steps` + 1 on `start`, then down while busy.
    pub(crate) fn count_steps(m: &mut Module, control: &DividerControl, start: &E, steps: u32) {
        let w = control.steps.width;
        let next = mux(
            start,
            &konst(w, u128::from(steps + 1)),
            &control.steps.sub(&konst(w, 1)),
        );
        m.drive(&control.steps, &next, Some(&control.busy));
    }
}

/// Bits of an unsigned number up to `n`.
fn bits_for(n: u32) -> u32 {
    (32 - n.leading_zeros()).max(1)
}
