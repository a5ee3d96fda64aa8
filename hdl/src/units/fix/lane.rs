//! The fixed-point datapaths of an ALU lane (see `units/alu.rs`), each rounding to nearest
//! even and saturating like the golden `FixFormat` ops: add/sub, multiply, a restoring
//! divider, a square root with `--sqrt`, compare, sign operations, and conversion between
//! fix formats (golden `alu::fix_convert`).

use lpgen_golden::{AluOp, FixFormat, Format};

use super::{rne_shr, saturate};
use crate::ir::{cat, konst, mux, Module, E};
use crate::units::alu::{LaneIn, OpResults};
use crate::units::family::{no_hardware, HwFamily};
use crate::units::root::restoring_root;

/// Candidate stage boundaries of a fix lane: the divider's two (the multiplier uses one).
pub(crate) const LANE_STAGES: u32 = 2;

pub(crate) fn lane_ops(
    m: &mut Module,
    f: FixFormat,
    t: FixFormat,
    px: &str,
    io: &LaneIn,
    is: &dyn Fn(AluOp) -> E,
) -> OpResults {
    let n = |s: &str| format!("{px}{s}");
    let w = f.width();
    let mut fork = m.fork();
    let prod = m.wire(&n("mul_product"), &io.a.smul_full(&io.b));
    m.stage();
    let r = rne_shr(m, &n("mul_"), &prod, f.frac_bits);
    let (mul_y, _) = saturate(m, &n("mul_"), &r, w);
    let mul_y = m.wire(&n("mul_y"), &mul_y);
    m.next_branch(&mut fork);
    let div_y = div_core(m, f, &n("div_"), &io.a, &io.b);
    m.next_branch(&mut fork);
    let from_t = convert(m, t, f, &n("from_t_"), &io.t_in);
    let to_t = convert(m, f, t, &n("to_t_"), &io.a);
    let sqrt_y = io.sqrt.then(|| {
        m.next_branch(&mut fork);
        sqrt_core(m, f, &n("sqrt_"), &io.a)
    });
    m.join(fork);

    let (a1, b1) = (io.a.sext(w + 1), io.b.sext(w + 1));
    let sum = mux(&is(AluOp::Sub), &a1.sub(&b1), &a1.add(&b1));
    let sum = m.wire(&n("add_sum"), &sum);
    let (add_y, _) = saturate(m, &n("add_"), &sum, w);
    let negated = m.wire(&n("negated"), &konst(w + 1, 0).sub(&a1));
    let (neg, _) = saturate(m, &n("neg_"), &negated, w);
    let neg = m.wire(&n("neg"), &neg);
    let abs = mux(&io.a.msb(), &neg, &io.a);
    let less = m.wire(&n("less"), &io.a.slt(&io.b));
    let greater = m.wire(&n("greater"), &io.a.sgt(&io.b));
    let mut results = vec![
        (AluOp::Add, add_y.clone()),
        (AluOp::Sub, add_y),
        (AluOp::Mul, mul_y),
        (AluOp::Div, div_y),
        (AluOp::Max, mux(&less, &io.b, &io.a)),
        (AluOp::Min, mux(&greater, &io.b, &io.a)),
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

/// a / b = a·2^F / b on magnitudes by restoring division (W + F quotient bits), rounded to
/// nearest even from the remainder, signed, saturated. A zero divisor saturates with the
/// dividend's sign (0 / 0 = 0). Candidate boundaries: halfway through, after the division.
fn div_core(m: &mut Module, f: FixFormat, px: &str, a: &E, b: &E) -> E {
    let n = |s: &str| format!("{px}{s}");
    let w = f.width();
    let fb = f.frac_bits;
    // Magnitudes as w-bit unsigned: |min| = 2^(w−1) still fits.
    let ax = m.wire(&n("a_mag"), &mux(&a.msb(), &konst(w, 0).sub(a), a));
    let ay = m.wire(&n("b_mag"), &mux(&b.msb(), &konst(w, 0).sub(b), b));
    let neg = m.wire(&n("neg"), &a.msb().xor(&b.msb()));
    let num = if fb == 0 {
        ax.clone()
    } else {
        cat(&[ax.clone(), konst(fb, 0)])
    };
    let qw = w + fb;
    let divisor = ay.zext(w + 2);
    // Partial remainder below the divisor <= 2^(w−1): shifted, it fits w + 1 bits.
    let mut rem = konst(w + 1, 0);
    let mut qbits = vec![];
    for step in 0..qw {
        if step == qw / 2 {
            m.stage();
        }
        let i = qw - 1 - step;
        let r = cat(&[rem.low(w), num.bit(i)]);
        let diff = r.zext(w + 2).sub(&divisor);
        let bit = m.wire(&n(&format!("q{i}")), &diff.msb().not());
        rem = m.wire(&n(&format!("rem{i}")), &mux(&bit, &diff.low(w + 1), &r));
        qbits.push(bit);
    }
    let q = m.wire(&n("quotient"), &cat(&qbits));
    m.stage();
    // Round: up when 2·rem > |b|, or equal with q odd.
    let twice = cat(&[rem.clone(), konst(1, 0)]);
    let d2 = ay.zext(w + 2);
    let up = m.wire(
        &n("round_up"),
        &twice.gt(&d2).or(&twice.eq(&d2).and(&q.bit(0))),
    );
    let rounded = q.zext(qw + 2).add(&up.zext(qw + 2));
    let signed = m.wire(
        &n("signed"),
        &mux(&neg, &konst(qw + 2, 0).sub(&rounded), &rounded),
    );
    let (word, _) = saturate(m, &n("q_"), &signed, w);
    let max = konst(w, (1u128 << (w - 1)) - 1);
    let min = konst(w, 1u128 << (w - 1));
    let by_zero = mux(&a.msb(), &min, &mux(&a.any(), &max, &konst(w, 0)));
    let b_zero = m.wire(&n("by_zero"), &b.any().not());
    m.wire(&n("y"), &mux(&b_zero, &by_zero, &word))
}

/// √a (golden `FixFormat::sqrt`): the word nearest √(X·2^F) for a > 0, 0 for a ≤ 0 (fix
/// has no NaN). The restoring recurrence gives q = ⌊√(X·2^(F+2))⌋ = ⌊2·√(X·2^F)⌋, whose low
/// bit says that the root's fraction is at least a half: the root rounds up by it (never a
/// tie, the square of a half-integer being no integer). It never saturates: √(X·2^F) <
/// 2^(I+F) − 1/2. Candidate boundaries: halfway through the root, after it.
fn sqrt_core(m: &mut Module, f: FixFormat, px: &str, a: &E) -> E {
    let n = |s: &str| format!("{px}{s}");
    let w = f.width();
    m.comment("square root: X·2^(F+2) of a positive a, its root to one bit more, rounded");
    // The w − 1 magnitude bits of a positive a and F + 2 zeros, to an even width.
    let bits = w - 1 + f.frac_bits + 2;
    let steps = bits.div_ceil(2);
    let rad = cat(&[a.low(w - 1), konst(f.frac_bits + 2, 0)]).zext(2 * steps);
    let positive = m.wire(&n("positive"), &a.msb().not().and(&a.any()));
    let (q, _) = restoring_root(m, px, &rad, steps);
    m.stage();
    let rw = steps.max(w);
    let rounded = q.bits(steps - 1, 1).zext(rw).add(&q.bit(0).zext(rw));
    let y = mux(&positive, &rounded.low(w), &konst(w, 0));
    m.wire(&n("y"), &y)
}

/// A word of `s` converted to `d`: shifted left (exact) or rounded right to nearest even,
/// then saturated.
pub(crate) fn convert(m: &mut Module, s: FixFormat, d: FixFormat, px: &str, x: &E) -> E {
    if s == d {
        return x.clone();
    }
    let (ws, wd) = (s.width(), d.width());
    let r = if d.frac_bits >= s.frac_bits {
        let sh = d.frac_bits - s.frac_bits;
        let v = if sh == 0 {
            x.clone()
        } else {
            cat(&[x.clone(), konst(sh, 0)])
        };
        v.sext((ws + sh).max(wd) + 1)
    } else {
        let r = rne_shr(m, px, x, s.frac_bits - d.frac_bits);
        let rw = r.width.max(wd) + 1;
        r.sext(rw)
    };
    let (word, _) = saturate(m, px, &r, wd);
    m.wire(&format!("{px}word"), &word)
}

impl HwFamily for FixFormat {
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
        let Format::Fix(t) = to else {
            no_hardware(&to, "lane converting to fix")
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
    fn convert_stages(&self, to: Format) -> u32 {
        match to {
            Format::Float(_) => 1 + crate::units::float::CONVERT_STAGES,
            _ => 1,
        }
    }
    fn convert(&self, m: &mut Module, to: Format, px: &str, x: &E) -> E {
        match to {
            Format::Fix(t) => convert(m, *self, t, px, x),
            Format::Float(t) => crate::units::float::fix_to_float(m, *self, t, x),
            _ => no_hardware(&to, "conversion from fix"),
        }
    }
}
