//! The LNS datapaths of an ALU lane (see `units/alu.rs`): the adder and the multiplier of the
//! `lns-add` / `lns-mul` units (shared by add/sub and mul/div), the order of values for
//! compare/max/min, sign operations, and conversion between LNS formats (golden
//! `alu::lns_convert`).

use lpgen_golden::{AluOp, Format, LnsFormat};

use super::{add_module, fields, mul_core, nan_word, saturate, AddStages, Negate, ADD_CANDIDATES};
use crate::ir::{cat, konst, mux, signed_konst, Module, E};
use crate::units::alu::{LaneIn, OpResults};
use crate::units::family::{no_hardware, HwFamily};

/// Candidate stage boundaries of an LNS lane: those of the adder, its longest datapath.
pub(crate) const LANE_STAGES: u32 = ADD_CANDIDATES;

/// A key that orders like the value: 0 for zero, ±(code − reserved) otherwise (golden
/// `Lns::cmp`), in lw + 2 bits.
fn order_key(m: &mut Module, f: LnsFormat, name: &str, w: &E) -> E {
    let lw = f.log_width();
    let kw = lw + 2;
    let fl = fields(m, f, name, w);
    let mag = fl
        .log
        .sext(kw)
        .sub(&signed_konst(kw, f.code_reserved() as i64));
    let signed = mux(&fl.sign, &konst(kw, 0).sub(&mag), &mag);
    m.wire(&format!("{name}_key"), &signed)
}

pub(crate) fn lane_ops(
    m: &mut Module,
    f: LnsFormat,
    t: LnsFormat,
    px: &str,
    io: &LaneIn,
    is: &dyn Fn(AluOp) -> E,
) -> OpResults {
    let n = |s: &str| format!("{px}{s}");
    let mut fork = m.fork();
    let sub = is(AluOp::Sub);
    let add = add_module(
        m,
        f,
        &n("add"),
        &io.a,
        &io.b,
        Negate::When(&sub),
        AddStages::All,
        None,
    );
    let add_y = add.y;
    m.next_branch(&mut fork);
    let div = is(AluOp::Div);
    let mul = mul_core(m, f, &n("mul_"), &io.a, &io.b, Some(&div), true);
    let mul_y = m.wire(&n("mul_y"), &mul.y);
    m.next_branch(&mut fork);
    let from_t = convert(m, t, f, &n("from_t_"), &io.t_in);
    m.next_branch(&mut fork);
    let to_t = convert(m, f, t, &n("to_t_"), &io.a);
    m.join(fork);

    // Order, sign operations: one level of logic, in the lane's last cycle.
    let fa = fields(m, f, &n("a"), &io.a);
    let fb = fields(m, f, &n("b"), &io.b);
    let ka = order_key(m, f, &n("a"), &io.a);
    let kb = order_key(m, f, &n("b"), &io.b);
    let unordered = m.wire(&n("unordered"), &fa.is_nan.or(&fb.is_nan));
    let less = m.wire(&n("less"), &ka.slt(&kb));
    let greater = m.wire(&n("greater"), &ka.sgt(&kb));
    let nan = nan_word(f);
    let max = mux(&unordered, &nan, &mux(&less, &io.b, &io.a));
    let min = mux(&unordered, &nan, &mux(&greater, &io.b, &io.a));
    let neg = mux(&fa.reserved, &io.a, &cat(&[fa.sign.not(), fa.log.clone()]));
    let abs = mux(&fa.is_nan, &io.a, &cat(&[konst(1, 0), fa.log.clone()]));
    let mut results = vec![
        (AluOp::Add, add_y.clone()),
        (AluOp::Sub, add_y),
        (AluOp::Mul, mul_y.clone()),
        (AluOp::Div, mul_y),
        (AluOp::Max, max),
        (AluOp::Min, min),
        (AluOp::Neg, neg),
        (AluOp::Abs, abs),
    ];
    if io.sqrt {
        results.push((AluOp::Sqrt, sqrt(m, f, px, &io.a)));
    }
    OpResults {
        results,
        less,
        greater,
        unordered,
        from_t,
        to_t,
    }
}

/// √a (golden `LnsFormat::sqrt`): the log shifted right by one, arithmetically (the code
/// halved and rounded down: the nearer value of an odd code's two); zero and NaN stay, a
/// negative value gives NaN. One level of logic, in the lane's last cycle.
fn sqrt(m: &mut Module, f: LnsFormat, px: &str, a: &E) -> E {
    let lw = f.log_width();
    let fa = fields(m, f, &format!("{px}sqrt_a"), a);
    let half = cat(&[konst(1, 0), fa.log.bit(lw - 1), fa.log.bits(lw - 1, 1)]);
    let y = mux(&fa.reserved, a, &mux(&fa.sign, &nan_word(f), &half));
    m.wire(&format!("{px}sqrt_y"), &y)
}

/// A word of `s` converted to `d`: the code shifted left (exact) or rounded right to nearest
/// even, then saturated / flushed in `d`; zero and NaN map to zero and NaN.
pub(crate) fn convert(m: &mut Module, s: LnsFormat, d: LnsFormat, px: &str, x: &E) -> E {
    if s == d {
        return x.clone();
    }
    let n = |t: &str| format!("{px}{t}");
    let fl = fields(m, s, &n("in"), x);
    let lw = s.log_width();
    let code = if d.frac_bits >= s.frac_bits {
        let sh = d.frac_bits - s.frac_bits;
        let cw = (lw + sh).max(d.log_width()) + 1;
        if sh == 0 {
            fl.log.sext(cw)
        } else {
            cat(&[fl.log.clone(), konst(sh, 0)]).sext(cw)
        }
    } else {
        let sh = s.frac_bits - d.frac_bits;
        let cw = (lw - sh).max(d.log_width()) + 1;
        let q = fl.log.bits(lw - 1, sh).sext(cw);
        let half = fl.log.bit(sh - 1);
        let sticky = if sh >= 2 {
            fl.log.bits(sh - 2, 0).any()
        } else {
            konst(1, 0)
        };
        let up = m.wire(&n("round_up"), &half.and(&sticky.or(&fl.log.bit(sh))));
        q.add(&up.zext(cw))
    };
    let code = m.wire(&n("code"), &code);
    let (word, _) = saturate(m, d, &n(""), &fl.sign, &code);
    let dw = d.width();
    mux(
        &fl.is_nan,
        &konst(dw, d.nan() as u128),
        &mux(&fl.is_zero, &konst(dw, d.zero() as u128), &word),
    )
}

impl HwFamily for LnsFormat {
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
        let Format::Lns(t) = to else {
            no_hardware(&to, "lane converting to lns")
        };
        lane_ops(m, *self, t, px, io, is)
    }
    fn has_lane_sqrt(&self) -> bool {
        true
    }
    fn has_stochastic_lanes(&self) -> bool {
        false
    }
    fn convert_stages(&self, _: Format) -> u32 {
        1
    }
    fn convert(&self, m: &mut Module, to: Format, px: &str, x: &E) -> E {
        let Format::Lns(t) = to else {
            no_hardware(&to, "conversion from lns")
        };
        convert(m, *self, t, px, x)
    }
    fn tables(&self) -> Vec<(String, String)> {
        super::table_digests(*self)
    }
}
