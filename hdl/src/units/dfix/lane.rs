//! The dfix vector lane (`vector --format dfix:W --lanes L`; `alu` is one lane): the
//! elementwise work of seed 002's training in dynamic fixed point. Every arithmetic opcode
//! forms an exact integer x from the lane's words and reads it out through the array PE's
//! read-out ([`super::read_out`]): y = x·2^−s rounded once to nearest even and saturated,
//! with the overflow tests at the output scale and at its half (docs/rtl-dfix.md, "dfix lanes").
//!
//! Ports: `op` (3 bits, [`DfixLaneOp`]), `shift` (16 bits, signed, shared by the lanes),
//! `a`, `b` (L·W); `y` (L·W), `overflow`, `overflow_half` (L), `cmp` (2L: a vs b, 0 equal,
//! 1 less, 2 greater, on every opcode). Two candidate boundaries, after x and the
//! comparison and after the read-out's shifter; latency = stages.

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::{AluOp, Format};

use super::{biased_shift, read_out_round, read_out_shift, DFIX_SHIFT_BITS};
use crate::ir::{cat, konst, mux, Module, E};
use crate::units::alu::{LaneIn, OpResults};
use crate::units::family::{no_hardware, HwFamily};
use crate::units::{finish, start, Built, GenError, Params, Unit};

/// Candidate stage boundaries of a dfix lane: after the exact integer, after the read-out's
/// shifter.
pub(crate) const LANE_STAGES: u32 = 2;

/// The opcodes (the golden model's: `lpgen_golden::dfix::DfixLaneOp`, with the lane's
/// arithmetic `DfixFormat::lane`).
pub use lpgen_golden::dfix::{DfixLaneOp, DFIX_LANE_OP_BITS};

pub(crate) fn lane(p: &Params) -> Result<Built, GenError> {
    let f: DfixFormat = p.dfix_format().ok_or_else(|| {
        GenError(format!(
            "a dfix lane needs a dfix format, not {} (generator bug)",
            p.format
        ))
    })?;
    let w = f.width;
    let lanes = if p.unit == Unit::Alu { 1 } else { p.lanes };
    let (mut m, valid) = start(p, LANE_STAGES)?;
    let op = m.input("op", DFIX_LANE_OP_BITS);
    let shift = m.input("shift", DFIX_SHIFT_BITS);
    let a = m.input("a", lanes * w);
    let b = m.input("b", lanes * w);
    // Exact integers of 2W bits hold every x: |a·b| ≤ 2^(2W−2), |a ± b| ≤ 2^W.
    let n = 2 * w;
    let u = biased_shift(&mut m, &shift, w, n);
    let is = |code: DfixLaneOp| op.eq_k(code as u128);
    let mut exact = vec![];
    let mut cmps = vec![];
    for i in 0..lanes {
        let ai = m.wire(&format!("a{i}"), &a.bits(i * w + w - 1, i * w));
        let bi = m.wire(&format!("b{i}"), &b.bits(i * w + w - 1, i * w));
        let (ax, bx) = (ai.sext(n), bi.sext(n));
        let product = m.wire(&format!("product{i}"), &ai.smul_full(&bi));
        // Subtraction and negation as additions of the complement plus one.
        let subtract = is(DfixLaneOp::Sub);
        let addend = mux(
            &is(DfixLaneOp::Add).or(&subtract),
            &bx.xor(&subtract.sext(n)),
            &konst(n, 0),
        );
        let sum = ax.add(&addend).add(&subtract.zext(n));
        let negated = ax.not().add(&konst(n, 1));
        // Rescale: the sum with a zero addend is a itself.
        let summed = is(DfixLaneOp::Add)
            .or(&subtract)
            .or(&is(DfixLaneOp::Rescale));
        let x = mux(
            &is(DfixLaneOp::Mul),
            &product,
            &mux(
                &is(DfixLaneOp::Neg),
                &negated,
                &mux(&summed, &sum, &konst(n, 0)),
            ),
        );
        exact.push(m.wire(&format!("x{i}"), &x));
        let less = ai.slt(&bi);
        let greater = ai.sgt(&bi);
        cmps.push(m.wire(&format!("cmp{i}"), &cat(&[greater, less])));
    }
    m.stage();
    let u = m.now(&u);
    let shifted: Vec<_> = exact
        .iter()
        .enumerate()
        .map(|(i, x)| read_out_shift(&mut m, &format!("lane{i}_"), x, &u, w))
        .collect();
    m.stage();
    let (mut ys, mut overs, mut halves) = (vec![], vec![], vec![]);
    for (i, s) in shifted.iter().enumerate() {
        let (y, over, half) = read_out_round(&mut m, &format!("lane{i}_"), s, w);
        ys.push(y);
        overs.push(over);
        halves.push(half);
    }
    for v in [&mut ys, &mut overs, &mut halves, &mut cmps] {
        v.reverse();
    }
    m.output("y", &cat(&ys));
    m.output("overflow", &cat(&overs));
    m.output("overflow_half", &cat(&halves));
    let cmp = cat(&cmps);
    m.output("cmp", &cmp);
    finish(m, &valid, vec![])
}

/// The dfix lanes of the lint grid. Lean: `alu` on dfix:6 and `vector` of 4 dfix:10 lanes at
/// stages 0..=2. Full: alu on dfix:2, 6, 10, 16, 32 and vectors of 1, 4 and 16 dfix:10
/// lanes, stages 0..=2.
pub(crate) fn lane_grid(unit: Unit, full: bool) -> Vec<Params> {
    let cases: Vec<(u32, u32)> = match (unit, full) {
        (Unit::Alu, false) => vec![(6, 1)],
        (Unit::Alu, true) => [2, 6, 10, 16, 32].map(|w| (w, 1)).to_vec(),
        (_, false) => vec![(10, 4)],
        (_, true) => vec![(10, 1), (10, 4), (10, 16)],
    };
    let mut g = vec![];
    for (w, lanes) in cases {
        for s in 0..=LANE_STAGES {
            let mut p = Params::dfix(unit, DfixFormat::new(w).expect("valid"));
            (p.lanes, p.stages) = (lanes, s);
            g.push(p);
        }
    }
    g
}

/// dfix words have a lane of their own ([`lane`]: exact integer ops and a rescale by the
/// `shift` port), not the golden ALU's opcodes, and no `convert`.
impl HwFamily for DfixFormat {
    fn lane_stages(&self) -> u32 {
        LANE_STAGES
    }
    /// `dfix::check` has refused what a dfix lane cannot be.
    fn check_lane(&self, _: &Params) -> Result<(), GenError> {
        Ok(())
    }
    fn lane_unit(&self, p: &Params) -> Result<Built, GenError> {
        lane(p)
    }
    fn lane_ops(
        &self,
        _: &mut Module,
        _: Format,
        _: &str,
        _: &LaneIn,
        _: &dyn Fn(AluOp) -> E,
    ) -> OpResults {
        no_hardware(self, "golden-ALU lane")
    }
    /// Not yet: the dfix lane's opcodes are its own (`DfixLaneOp`).
    fn has_lane_sqrt(&self) -> bool {
        false
    }
    fn has_stochastic_lanes(&self) -> bool {
        false
    }
    fn convert_stages(&self, _: Format) -> u32 {
        1
    }
    fn convert(&self, _: &mut Module, _: Format, _: &str, _: &E) -> E {
        no_hardware(self, "convert")
    }
}
