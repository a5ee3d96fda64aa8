//! The float datapaths of an ALU lane (see `units/alu.rs`), golden `FloatFormat` through
//! `lpgen_golden::Alu`: add/sub, mul and div as instances of modules holding the very
//! datapaths of `float-add`, `float-mul` ([`add_core_with`], [`mul_core_with`]) and the
//! divider ([`div_core_with`]), one definition per format and cut pattern
//! (`lpgen_float_add_<format>[_srR][_r<cuts>]`; `_srR`: rounded stochastically by an input
//! `r` of R random bits, the lane's draw, `--rounding stochastic:R`); the IEEE order for
//! compare/max/min (−0 = +0, NaN unordered); neg/abs on the sign bit; conversion among
//! float formats ([`float_to_float`]), and for the `convert` unit to and from fix.

use std::rc::Rc;

use lpgen_golden::{AluOp, FloatFormat, Format};

use super::add::add_core_with;
use super::convert::{float_to_fix, float_to_float, CONVERT_STAGES};
use super::div::{div_core_with, DIV_STAGES};
use super::mul::mul_core_with;
use super::sqrt::{sqrt_core, SQRT_STAGES};
use super::{is_nan_word, qnan, ADD_STAGES, MUL_STAGES};
use crate::ir::{cat, konst, mux, Module, StagePlan, SubModule, E};
use crate::units::alu::{self, LaneIn, OpResults};
use crate::units::family::{no_hardware, HwFamily};
use crate::units::{GenError, Params};

/// Candidate stage boundaries of a float lane: the adder's 5 (the longest datapath).
pub(crate) const LANE_STAGES: u32 = max(max(ADD_STAGES, MUL_STAGES), DIV_STAGES);

const fn max(a: u32, b: u32) -> u32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `f` as a module-name part: `fp8:e4m3` → `fp8_e4m3`.
fn tag(f: FloatFormat) -> String {
    f.to_string().replace(':', "_")
}

/// An operation `body` marking `k` candidate boundaries, as the instance `name` of the
/// module `def` (`_r` and one digit per boundary appended when the caller's plan cuts any:
/// 1 for a register inside the module). Inputs and the output `y` are words; the caller's
/// `k` boundaries are marked here, so its cycle moves on with the instance's registers.
fn op_instance(
    m: &mut Module,
    def: &str,
    about: &str,
    name: &str,
    inputs: &[(&str, &E)],
    k: u32,
    body: impl FnOnce(&mut Module, &[E]) -> E,
) -> E {
    let cuts = m.next_cuts(k as usize);
    let registered = cuts.iter().any(|&c| c);
    let def_name = if registered {
        let digits: String = cuts.iter().map(|&c| if c { '1' } else { '0' }).collect();
        format!("{def}_r{digits}")
    } else {
        def.to_string()
    };
    let cut_at: Vec<usize> = (0..cuts.len()).filter(|&i| cuts[i]).collect();
    let d: Rc<SubModule> = m.define_ok(&def_name, StagePlan::at(&cut_at), |r| {
        r.header.push(about.to_string());
        if registered {
            r.input("clk", 1);
        }
        let ins: Vec<E> = inputs.iter().map(|(n, e)| r.input(n, e.width)).collect();
        let y = body(r, &ins);
        r.output("y", &y);
    });
    let y = m.instance(&d, name, inputs).port("y");
    for _ in 0..k {
        m.stage();
    }
    y
}

/// `x` of float format `s` converted to `d` by an instance `name` of
/// `lpgen_float_convert_<s>_to_<d>` ([`same_format`] when s = d).
fn convert_instance(m: &mut Module, s: FloatFormat, d: FloatFormat, name: &str, x: &E) -> E {
    if s == d {
        return same_format(s, x);
    }
    let def = format!("lpgen_float_convert_{}_to_{}", tag(s), tag(d));
    let about =
        format!("y = x converted from {s} to {d}, rounded once (golden FloatFormat::convert).");
    op_instance(
        m,
        &def,
        &about,
        name,
        &[("x", x)],
        CONVERT_STAGES,
        |r, i| float_to_float(r, s, d, &i[0]),
    )
}

/// Every opcode's result of a float lane of `f` converting to and from `t`.
pub(crate) fn lane_ops(
    m: &mut Module,
    f: FloatFormat,
    t: FloatFormat,
    px: &str,
    io: &LaneIn,
    is: &dyn Fn(AluOp) -> E,
) -> OpResults {
    let n = |s: &str| format!("{px}{s}");
    // Stochastic lanes: the rounding datapaths take this lane's random bits as input `r`
    // and are modules of their own (`…_srR`).
    let (ft, r) = match &io.random {
        Some(r) => (format!("{}_sr{}", tag(f), r.width), Some(("r", r))),
        None => (tag(f), None),
    };
    let how = if r.is_some() { ", rounded by r" } else { "" };
    let sub = is(AluOp::Sub);
    let ab: Vec<(&str, &E)> = [("a", &io.a), ("b", &io.b)].into_iter().chain(r).collect();
    let mut abs = vec![("a", &io.a), ("b", &io.b), ("sub", &sub)];
    abs.extend(r);
    let mut fork = m.fork();
    let add_about =
        format!("{f}: y = a + b, or a - b when sub (golden FloatFormat::add, sub){how}.");
    let add_y = op_instance(
        m,
        &format!("lpgen_float_add_{ft}"),
        &add_about,
        &n("add"),
        &abs,
        ADD_STAGES,
        |r, i| add_core_with(r, f, &i[0], &i[1], &i[2], i.get(3)),
    );
    m.next_branch(&mut fork);
    let mul_about = format!("{f}: y = a * b (golden FloatFormat::mul){how}.");
    let mul_y = op_instance(
        m,
        &format!("lpgen_float_mul_{ft}"),
        &mul_about,
        &n("mul"),
        &ab,
        MUL_STAGES,
        |r, i| mul_core_with(r, f, &i[0], &i[1], i.get(2)),
    );
    m.next_branch(&mut fork);
    let div_about = format!("{f}: y = a / b (golden FloatFormat::div){how}.");
    let div_y = op_instance(
        m,
        &format!("lpgen_float_div_{ft}"),
        &div_about,
        &n("div"),
        &ab,
        DIV_STAGES,
        |r, i| div_core_with(r, f, &i[0], &i[1], i.get(2)),
    );
    m.next_branch(&mut fork);
    let from_t = convert_instance(m, t, f, &n("from_t"), &io.t_in);
    m.next_branch(&mut fork);
    let to_t = convert_instance(m, f, t, &n("to_t"), &io.a);
    let sqrt_y = io.sqrt.then(|| {
        m.next_branch(&mut fork);
        let about = format!("{f}: y = sqrt(a) (golden FloatFormat::sqrt).");
        let def = format!("lpgen_float_sqrt_{}", tag(f));
        let a = [("a", &io.a)];
        op_instance(m, &def, &about, &n("sqrt"), &a, SQRT_STAGES, |r, i| {
            sqrt_core(r, f, &i[0])
        })
    });
    m.join(fork);

    m.comment("compare: IEEE order on sign-magnitude keys (-0 = +0; NaN unordered)");
    let ka = m.wire(&n("a_key"), &order_key(f, &io.a));
    let kb = m.wire(&n("b_key"), &order_key(f, &io.b));
    let less = m.wire(&n("less"), &ka.slt(&kb));
    let greater = m.wire(&n("greater"), &ka.sgt(&kb));
    let unordered = m.wire(
        &n("unordered"),
        &is_nan_word(f, &io.a).or(&is_nan_word(f, &io.b)),
    );
    let nan = qnan(f);
    let max = mux(&unordered, &nan, &canon(f, &mux(&less, &io.b, &io.a)));
    let min = mux(&unordered, &nan, &canon(f, &mux(&greater, &io.b, &io.a)));
    let w = f.width();
    let sign = konst(w, 1u128 << (w - 1));
    let mut results = vec![
        (AluOp::Add, add_y.clone()),
        (AluOp::Sub, add_y),
        (AluOp::Mul, mul_y),
        (AluOp::Div, div_y),
        (AluOp::Max, max),
        (AluOp::Min, min),
        (AluOp::Neg, io.a.xor(&sign)),
        (AluOp::Abs, io.a.and(&sign.not())),
    ];
    results.extend(sqrt_y.map(|y| (AluOp::Sqrt, y)));
    OpResults {
        results,
        less,
        greater,
        unordered,
        from_t,
        to_t,
    }
}

/// A word's magnitude bits (zero for a `:ftz` subnormal), negated when its sign is set: a
/// two's-complement key that orders every non-NaN word as its value (±0 both 0).
fn order_key(f: FloatFormat, x: &E) -> E {
    let w = f.width();
    let mag = x.low(w - 1);
    let mag = if f.ftz {
        let field_zero = x.bits(w - 2, f.frac_bits).any().not();
        mux(&field_zero, &konst(w - 1, 0), &mag)
    } else {
        mag
    };
    let mag = mag.zext(w);
    mux(&x.msb(), &konst(w, 0).sub(&mag), &mag)
}

/// `x` converted to its own format, as the golden conversion decodes and rounds it: a NaN
/// becomes the canonical NaN, with `:ftz` a subnormal zero of its sign, any other word itself.
pub(super) fn same_format(f: FloatFormat, x: &E) -> E {
    mux(&is_nan_word(f, x), &qnan(f), &canon(f, x))
}

/// A result word as the golden `canon`: with `:ftz` a subnormal is zero of its sign.
fn canon(f: FloatFormat, x: &E) -> E {
    if !f.ftz {
        return x.clone();
    }
    let w = f.width();
    let field_zero = x.bits(w - 2, f.frac_bits).any().not();
    mux(&field_zero, &cat(&[x.msb(), konst(w - 1, 0)]), x)
}

/// Refuses a float format the RTL does not implement: `:nonan` (every code a number).
pub(crate) fn check_hardware(f: FloatFormat, what: &str) -> Result<(), GenError> {
    if f.no_nan {
        return Err(GenError(format!(
            "{what}: {f} has no RTL yet (a :nonan format; the float units decode the all-ones \
             code as NaN): use :fn:sat"
        )));
    }
    Ok(())
}

impl HwFamily for FloatFormat {
    fn lane_stages(&self) -> u32 {
        LANE_STAGES
    }
    fn check_lane(&self, p: &Params) -> Result<(), GenError> {
        alu::check(p)?;
        check_hardware(*self, &format!("unit '{}'", p.unit.name()))?;
        match p.to {
            Some(Format::Float(t)) => check_hardware(t, "--to"),
            _ => Ok(()),
        }
    }
    fn lane_ops(
        &self,
        m: &mut Module,
        to: Format,
        px: &str,
        io: &LaneIn,
        is: &dyn Fn(AluOp) -> E,
    ) -> OpResults {
        let Format::Float(t) = to else {
            no_hardware(&to, "lane converting to float")
        };
        lane_ops(m, *self, t, px, io, is)
    }
    fn has_lane_sqrt(&self) -> bool {
        true
    }
    fn has_stochastic_lanes(&self) -> bool {
        true
    }
    fn convert_stages(&self, to: Format) -> u32 {
        match to {
            Format::Float(t) if t == *self => 1,
            _ => 1 + CONVERT_STAGES,
        }
    }
    fn convert(&self, m: &mut Module, to: Format, _px: &str, x: &E) -> E {
        match to {
            Format::Float(t) if t == *self => same_format(t, x),
            Format::Float(t) => float_to_float(m, *self, t, x),
            Format::Fix(t) => float_to_fix(m, *self, t, x),
            other => no_hardware(&other, "conversion from float"),
        }
    }
    fn nan_flag(&self, y: &E) -> Option<E> {
        Some(is_nan_word(*self, y))
    }
}

#[cfg(test)]
mod tests {
    use crate::{generate, Params, Unit};

    fn refusal(unit: Unit, f: &str, to: Option<&str>) -> String {
        let mut p = Params::parse(unit, f).unwrap();
        p.to = to.map(|t| t.parse().unwrap());
        let e = generate(&p).unwrap_err().0;
        assert!(!e.contains('\n'), "{e}");
        e
    }

    #[test]
    fn formats_without_float_rtl_and_pairs_across_families_are_refused_in_one_line() {
        for (unit, f, to) in [
            (Unit::Alu, "float:2:1:nonan", None),
            (Unit::Vector, "bf16", Some("float:3:2:nonan")),
            (Unit::Convert, "float:3:2:nonan", Some("fix:3:4")),
            (Unit::FloatAdd, "float:2:3:nonan:ftz", None),
        ] {
            let e = refusal(unit, f, to);
            assert!(e.contains("has no RTL yet (a :nonan format"), "{e}");
        }
        let e = refusal(Unit::Convert, "bf16", Some("posit:16"));
        assert!(
            e.contains("or between float and fix, not bf16 to posit:16"),
            "{e}"
        );
        let e = refusal(Unit::Alu, "bf16", Some("fix:7:8"));
        assert!(e.contains("not bf16 to fix:7:8"), "{e}");
    }

    #[test]
    fn lane_ops_are_instances_named_after_their_format_and_cuts() {
        let mut p = Params::parse(Unit::Alu, "fp8:e4m3").unwrap().stages(2);
        p.to = Some("bf16".parse().unwrap());
        let text = generate(&p).unwrap().verilog.text();
        for inst in [
            "lpgen_float_add_fp8_e4m3_r",
            "lpgen_float_mul_fp8_e4m3",
            "lpgen_float_div_fp8_e4m3",
            "lpgen_float_convert_bf16_to_fp8_e4m3",
            "lpgen_float_convert_fp8_e4m3_to_bf16",
        ] {
            assert!(text.contains(inst), "{inst}");
        }
        assert!(text.contains(" add (\n"), "the adder instance is named add");
    }
}
