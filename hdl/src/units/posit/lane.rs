//! The posit datapaths of an ALU lane (see `units/alu.rs`): the adder and multiplier of the
//! `posit-add` / `posit-mul` units, a divider (golden `PositFormat::div`), the standard's
//! total order for compare/max/min, a square root with `--sqrt` (`sqrt.rs`, golden
//! `tapered::sqrt`), and conversion between posit formats (golden `alu::posit_convert`).

use lpgen_golden::{AluOp, Format};

use super::decode::{decode, frac_width, max_scale};
use super::encode::encode;
use super::sqrt::sqrt_core;
use super::{add_core, mul_core, nar_word, TaperedHw, ADD_STAGES};
use crate::ir::{cat, konst, mux, signed_bits, Module, E};
use crate::units::alu::{LaneIn, OpResults};
use crate::units::family::{no_hardware, HwFamily};

/// Candidate stage boundaries of a posit lane: the adder's and the divider's 4.
pub(crate) const LANE_STAGES: u32 = ADD_STAGES;

pub(crate) fn lane_ops<F: TaperedHw>(
    m: &mut Module,
    f: F,
    t: F,
    px: &str,
    io: &LaneIn,
    is: &dyn Fn(AluOp) -> E,
) -> OpResults {
    let w = |s: &str| format!("{px}{s}");
    let n = f.n();
    let mut fork = m.fork();
    let (add_y, _) = add_core(m, f, &w("add_"), &io.a, &io.b, &is(AluOp::Sub));
    let add_y = m.wire(&w("add_y"), &add_y);
    m.next_branch(&mut fork);
    let (mul_y, _) = mul_core(m, f, &w("mul_"), &io.a, &io.b);
    let mul_y = m.wire(&w("mul_y"), &mul_y);
    m.next_branch(&mut fork);
    let div_y = div_core(m, f, &w("div_"), &io.a, &io.b);
    let div_y = m.wire(&w("div_y"), &div_y);
    m.next_branch(&mut fork);
    let from_t = convert(m, t, f, &w("from_t_"), &io.t_in);
    m.next_branch(&mut fork);
    let to_t = convert(m, f, t, &w("to_t_"), &io.a);
    let sqrt_y = io.sqrt.then(|| {
        m.next_branch(&mut fork);
        let y = sqrt_core(m, f, &w("sqrt_"), &io.a);
        m.wire(&w("sqrt_y"), &y)
    });
    m.join(fork);

    // Posits order as two's-complement integers (NaR lowest); max/min propagate NaR.
    let less = m.wire(&w("less"), &io.a.slt(&io.b));
    let greater = m.wire(&w("greater"), &io.a.sgt(&io.b));
    let nar = nar_word(f);
    let any_nar = m.wire(
        &w("any_nar"),
        &io.a
            .eq_k(f.nar_word() as u128)
            .or(&io.b.eq_k(f.nar_word() as u128)),
    );
    let max = mux(&any_nar, &nar, &mux(&less, &io.b, &io.a));
    let min = mux(&any_nar, &nar, &mux(&greater, &io.b, &io.a));
    let neg = m.wire(&w("neg"), &konst(n, 0).sub(&io.a));
    let abs = mux(&io.a.msb(), &neg, &io.a);
    let mut results = vec![
        (AluOp::Add, add_y.clone()),
        (AluOp::Sub, add_y),
        (AluOp::Mul, mul_y),
        (AluOp::Div, div_y),
        (AluOp::Max, max),
        (AluOp::Min, min),
        (AluOp::Neg, neg),
        (AluOp::Abs, abs),
    ];
    results.extend(sqrt_y.map(|y| (AluOp::Sqrt, y)));
    OpResults {
        results,
        less,
        greater,
        unordered: konst(1, 0),
        from_t,
        to_t,
    }
}

/// a / b (NaR for a NaR operand or a zero divisor), rounded once. The significands 1.fa and
/// 1.fb (FW + 1 bits) give q = ⌊1.fa·2^Q / 1.fb⌋ with Q = FW + 2 by restoring division, so
/// q has its leading one at Q or Q − 1 and at least FW + 1 bits below it (every kept bit
/// and the guard); the remainder is the sticky bit. Candidate boundaries: after the decode,
/// halfway through the division, after it, inside the encoder.
pub(crate) fn div_core<F: TaperedHw>(m: &mut Module, f: F, px: &str, a: &E, b: &E) -> E {
    let w = |s: &str| format!("{px}{s}");
    let n = f.n();
    let da = decode(m, f, &w("a"), a);
    let db = decode(m, f, &w("b"), b);
    let is_nar = m.wire(&w("is_nar"), &da.nar.or(&db.nar).or(&db.zero));
    let is_zero = m.wire(&w("is_zero"), &da.zero);
    let neg = m.wire(&w("neg"), &da.sign.xor(&db.sign));
    let ms = max_scale(f);
    let sw = signed_bits(-2 * ms - 1, 2 * ms).max(da.scale.width);
    let ediff = m.wire(&w("scale_diff"), &da.scale.sext(sw).sub(&db.scale.sext(sw)));
    m.stage();
    let q_bits = frac_width(f) + 2;
    let dw = da.sig.width + 1; // the partial remainder is below 2·divisor
    let divisor = db.sig.zext(dw);
    // Quotient bit Q: 1.fa >= 1.fb; then one bit per step, remainder doubled each time.
    let mut rem = da.sig.zext(dw);
    let mut qbits = vec![];
    for step in 0..=q_bits {
        if step == q_bits.div_ceil(2) {
            m.stage();
        }
        let r = if step == 0 {
            rem.clone()
        } else {
            cat(&[rem.low(dw - 1), konst(1, 0)])
        };
        let diff = r.zext(dw + 1).sub(&divisor.zext(dw + 1));
        let bit = m.wire(&w(&format!("q{}", q_bits - step)), &diff.msb().not());
        rem = m.wire(
            &w(&format!("rem{}", q_bits - step)),
            &mux(&bit, &diff.low(dw), &r),
        );
        qbits.push(bit);
    }
    let q = m.wire(&w("quotient"), &cat(&qbits));
    let sticky = m.wire(&w("sticky"), &rem.any());
    m.stage();
    // Normalise: the leading one at Q (1.fa >= 1.fb) or Q − 1.
    let top = q.msb();
    let sig = m.wire(
        &w("quotient_sig"),
        &mux(&top, &q, &cat(&[q.low(q_bits), konst(1, 0)])),
    );
    let scale = m.wire(&w("quotient_scale"), &ediff.sub(&top.not().zext(sw)));
    let word = encode(m, f, &w("encode"), &neg, &scale, &sig, &sticky, true);
    mux(&is_nar, &nar_word(f), &mux(&is_zero, &konst(n, 0), &word))
}

/// A word of `s` converted to `d`: decoded, then encoded once in `d` (zero and NaR map to
/// zero and NaR). Candidate boundaries: inside the encoder.
pub(crate) fn convert<F: TaperedHw>(m: &mut Module, s: F, d: F, px: &str, x: &E) -> E {
    if s == d {
        return x.clone();
    }
    let w = |t: &str| format!("{px}{t}");
    let dx = decode(m, s, &w("in"), x);
    let word = encode(
        m,
        d,
        &w("encode"),
        &dx.sign,
        &dx.scale,
        &dx.sig,
        &konst(1, 0),
        true,
    );
    mux(
        &dx.nar,
        &nar_word(d),
        &mux(&dx.zero, &konst(d.n(), 0), &word),
    )
}

/// The lanes and conversions of every family on the posit datapath (posits, takums).
impl<F: TaperedHw> HwFamily for F {
    fn lane_stages(&self) -> u32 {
        LANE_STAGES
    }
    fn lane_ops(
        &self,
        m: &mut Module,
        to: Format,
        px: &str,
        io: &LaneIn,
        is: &dyn Fn(AluOp) -> E,
    ) -> OpResults {
        let Some(t) = F::of(to) else {
            no_hardware(&to, &format!("lane converting to {}", F::FAMILY))
        };
        lane_ops(m, *self, t, px, io, is)
    }
    /// The root of [`sqrt_core`], beside the divider.
    fn has_lane_sqrt(&self) -> bool {
        true
    }
    fn has_stochastic_lanes(&self) -> bool {
        false
    }
    /// After the input, and inside the encoder between its shift and its rounding.
    fn convert_stages(&self, to: Format) -> u32 {
        if F::of(to) == Some(*self) {
            1
        } else {
            2
        }
    }
    fn convert(&self, m: &mut Module, to: Format, px: &str, x: &E) -> E {
        let Some(t) = F::of(to) else {
            no_hardware(&to, &format!("conversion from {}", F::FAMILY))
        };
        convert(m, *self, t, px, x)
    }
}
