//! One vector lane of a format (`alu`) and L lanes of it (`vector`), following the golden
//! `lpgen_golden::Alu` (opcodes, results, compare codes, conversion).
//!
//! Ports (w = word width of F, wt = of the conversion format T = `--to`, default F; word i
//! of a bus is bits [i·w+w−1 : i·w]; `alu` is the one-lane case):
//! - `op` (4): the opcode, shared by every lane (`AluOp`: 0 add, 1 sub, 2 mul, 3 div,
//!   4 max, 5 min, 6 lt, 7 neg, 8 abs, 9 select, 10 convert, 11 sqrt with `--sqrt`;
//!   11 without it and 12..15 give zero)
//! - `a`, `b` (L·w), `sel` (L), `t_in` (L·wt)
//! - `y` (L·w): the opcode's result; `t_out` (L·wt): `a` converted to T, on every opcode
//! - `cmp` (2L): a vs b, 0 equal, 1 less, 2 greater, 3 unordered; `nan` (L): `y` is NaN/NaR
//! - with `--rounding stochastic:R` (float lanes): `sr_load` (1), `sr_load_state` (32), the
//!   rounding stream's placement (`float::lane_random_bits`, docs/rtl.md)
//!
//! Every op has its own datapath; all start together and the result is chosen by `op` at
//! the end, so the latency is that of the longest (the add, or the posit divider) and a new
//! operation of any kind enters every cycle. `--stages S` spreads S registers over each
//! datapath's candidate boundaries (LNS 3, posit 4, fix 2, float 5).

use lpgen_golden::{AluOp, Calc, Format, Rounding, ALU_OP_BITS};

use super::family::hw;
use super::float::lane_random_bits;
use super::{finish, start, Built, GenError, Params, Unit};
use crate::ir::{cat, konst, mux, Module, E};

/// One lane's inputs (already in the lane's cycle).
pub(crate) struct LaneIn {
    pub op: E,
    pub a: E,
    pub b: E,
    pub sel: E,
    pub t_in: E,
    /// This lane's random bits (`stochastic:R`; `None` rounds to nearest): rounding opcodes
    /// (add, sub, mul, div) round with them.
    pub random: Option<E>,
    /// Whether the lane has the `sqrt` opcode (`--sqrt`): the family's `lane_ops` then give
    /// [`AluOp::Sqrt`]'s result.
    pub sqrt: bool,
}

/// One lane's outputs.
pub(crate) struct LaneOut {
    pub y: E,
    pub t_out: E,
    pub cmp: E,
    pub nan: E,
}

/// What a family's lane computes before the shared select: every opcode's result.
pub(crate) struct OpResults {
    /// (opcode, result word) for each opcode the family computes itself.
    pub results: Vec<(AluOp, E)>,
    /// a vs b: (less, greater, unordered).
    pub less: E,
    pub greater: E,
    pub unordered: E,
    /// `t_in` converted to F, and `a` converted to T.
    pub from_t: E,
    pub to_t: E,
}

/// Candidate stage boundaries of a lane of `f`.
pub(crate) fn candidates(f: Format) -> u32 {
    hw(&f).lane_stages()
}

/// `alu` or `vector` by the unit: the golden ALU's lane (for the families whose lane it is).
pub(crate) fn lane_unit(p: &Params) -> Result<Built, GenError> {
    match p.unit {
        Unit::Alu => alu(p),
        _ => vector(p),
    }
}

/// The lane's format pair, checked by the golden definition (same family, no f32).
fn formats(p: &Params) -> Result<(Format, Format), GenError> {
    let to = p.to.unwrap_or(p.format);
    lpgen_golden::Alu::new(p.format, to).map_err(|e| GenError(e.to_string()))?;
    Ok((p.format, to))
}

/// Refuses a lane the golden ALU does not define (another family's `--to`, f32).
pub(crate) fn check(p: &Params) -> Result<(), GenError> {
    formats(p).map(|_| ())
}

/// Refuses `--sqrt` on a lane whose family has no sqrt datapath yet, in one line.
pub(crate) fn check_sqrt(p: &Params) -> Result<(), GenError> {
    if !p.sqrt {
        return Ok(());
    }
    if !hw(&p.format).has_lane_sqrt() {
        return Err(GenError(format!(
            "unit '{}': --sqrt lanes are generated for lns, float, posit, takum and fix \
             formats, not yet {} (the golden model has its sqrt: lpgen golden {} sqrt X)",
            p.unit.name(),
            p.format,
            p.format
        )));
    }
    if p.rounding != Rounding::Nearest {
        return Err(GenError(format!(
            "unit '{}': --sqrt lanes round to nearest; with --rounding {} not yet",
            p.unit.name(),
            p.rounding
        )));
    }
    Ok(())
}

/// The opcodes whose results round, so that `stochastic:R` lanes draw for them (golden
/// `RoundedOps::binop_with`: add, sub, mul, div take one draw each).
pub(crate) const ROUNDING_OPS: [AluOp; 4] = [AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div];

/// Refuses stochastic lanes of a family whose lanes have no stochastic datapath (float
/// lanes have it: [`super::family::HwFamily::has_stochastic_lanes`]), in one line.
pub(crate) fn check_rounding(p: &Params) -> Result<(), GenError> {
    match (p.rounding, p.format) {
        (Rounding::Nearest, _) => Ok(()),
        (_, f) if hw(&f).has_stochastic_lanes() => Ok(()),
        (r, f) => Err(GenError(format!(
            "unit '{}': {f} lanes round to nearest only, not {r} (stochastic lanes: float \
             formats)",
            p.unit.name()
        ))),
    }
}

/// Builds one lane (wires named `PX…`).
pub(crate) fn lane(m: &mut Module, f: Format, to: Format, px: &str, io: &LaneIn) -> LaneOut {
    let is = |op: AluOp| io.op.eq_k(op.code() as u128);
    let r = hw(&f).lane_ops(m, to, px, io, &is);
    let calc: Calc = f.calc();
    let w = f.width();
    let word = |v: u64| konst(w, v as u128);
    let mut results = r.results;
    let ordered_less = r.less.and(&r.unordered.not());
    results.push((
        AluOp::Lt,
        mux(&ordered_less, &word(calc.one()), &word(calc.zero())),
    ));
    results.push((AluOp::Select, mux(&io.sel, &io.a, &io.b)));
    results.push((AluOp::Convert, r.from_t));
    // The shared select, in the cycle the longest datapath ends in (older results are
    // delayed to it). Unassigned opcodes give zero.
    let mut y = word(calc.zero());
    for (op, v) in results {
        y = mux(&is(op), &v, &y);
    }
    let y = m.wire(&format!("{px}result"), &y);
    let cmp = mux(
        &r.unordered,
        &konst(2, 3),
        &cat(&[r.greater.clone(), r.less.clone()]),
    );
    let nan = match (hw(&f).nan_flag(&y), calc.nan()) {
        (Some(flag), _) => flag,
        (None, Some(nan)) => y.eq_k(nan as u128),
        (None, None) => konst(1, 0),
    };
    LaneOut {
        y,
        t_out: r.to_t,
        cmp,
        nan,
    }
}

/// `alu` (one lane) and `vector` (`p.lanes` lanes).
fn build(p: &Params, lanes: u32) -> Result<Built, GenError> {
    let (f, to) = formats(p)?;
    let (mut m, valid) = start(p, candidates(f))?;
    let (w, wt) = (f.width(), to.width());
    let op = m.input("op", ALU_OP_BITS);
    let a = m.input("a", lanes * w);
    let b = m.input("b", lanes * w);
    let sel = m.input("sel", lanes);
    let t_in = m.input("t_in", lanes * wt);
    let is_op = |o: AluOp| op.eq_k(o.code() as u128);
    let rounds = ROUNDING_OPS
        .iter()
        .map(|&o| is_op(o))
        .reduce(|x, y| x.or(&y));
    let rounds = rounds.expect("four opcodes");
    let randoms = lane_random_bits(&mut m, p, &valid, &rounds, lanes);
    let word = |bus: &E, i: u32, w: u32| bus.bits(i * w + w - 1, i * w);
    let mut fork = m.fork();
    let mut outs = vec![];
    for i in 0..lanes {
        let px = if lanes == 1 {
            String::new()
        } else {
            format!("l{i}_")
        };
        let io = LaneIn {
            op: op.clone(),
            a: word(&a, i, w),
            b: word(&b, i, w),
            sel: sel.bit(i),
            t_in: word(&t_in, i, wt),
            random: randoms.as_ref().map(|r| r[i as usize].clone()),
            sqrt: p.sqrt,
        };
        outs.push(lane(&mut m, f, to, &px, &io));
        m.next_branch(&mut fork);
    }
    m.join(fork);
    // Buses put lane 0 in the low bits: `cat` takes the most significant part first.
    let bus = |get: &dyn Fn(&LaneOut) -> E| cat(&outs.iter().rev().map(get).collect::<Vec<_>>());
    m.output("y", &bus(&|o| o.y.clone()));
    m.output("t_out", &bus(&|o| o.t_out.clone()));
    m.output("cmp", &bus(&|o| o.cmp.clone()));
    m.output("nan", &bus(&|o| o.nan.clone()));
    let tables = hw(&f).tables();
    finish(m, &valid, tables)
}

pub(crate) fn alu(p: &Params) -> Result<Built, GenError> {
    if p.lanes != 1 {
        return Err(GenError(format!(
            "unit 'alu' is one lane; for {} lanes use 'vector --lanes {}'",
            p.lanes, p.lanes
        )));
    }
    build(p, 1)
}

pub(crate) fn vector(p: &Params) -> Result<Built, GenError> {
    build(p, p.lanes)
}

/// The ALU and vector designs of the lint grid.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let pairs: Vec<(&str, &str)> = if full {
        vec![
            ("lns:5:6", "lns:5:6"),
            ("lns:5:6", "lns:5:4"),
            ("lns:3:2", "lns:4:4"),
            ("lns:7:10", "lns:5:6"),
            ("posit:8:0", "posit:8:0"),
            ("posit:16:1", "posit:8:0"),
            ("posit:8", "posit:16"),
            ("posit:32:2", "posit:16:1"),
            ("posit:4:0", "posit:5:1:u"),
            ("fix:7:8", "fix:7:8"),
            ("fix:7:8", "fix:3:4"),
            ("fix:15:16", "fix:7:8"),
            ("fix:0:7", "fix:3:0"),
            ("fp8:e4m3", "fp8:e4m3"),
            ("fp8:e4m3", "bf16"),
            ("fp8:e5m2", "fp8:e4m3:sat"),
            ("float:3:4:ftz", "float:2:5"),
            ("bf16", "fp8:e5m2"),
            ("f16", "bf16"),
            ("f16:sat:ftz", "f16"),
            ("takum:8", "takum:8"),
            ("takum:16", "takum:8"),
            ("takum:12", "takum:32"),
        ]
    } else {
        vec![
            ("lns:5:6", "lns:5:4"),
            ("posit:8:0", "posit:16:1"),
            ("posit:16:1", "posit:16:1"),
            ("fix:7:8", "fix:3:4"),
            ("fp8:e4m3", "bf16"),
            ("takum:8", "takum:16"),
        ]
    };
    let mut g = vec![];
    for (f, t) in pairs {
        let f: Format = f.parse().unwrap();
        let to = Some(t.parse().unwrap()).filter(|t| *t != f);
        let max = candidates(f);
        let stages: Vec<u32> = if full {
            (0..=max).collect()
        } else {
            vec![0, max]
        };
        for s in stages {
            let mut p = Params::new(Unit::Alu, f).stages(s);
            p.to = to;
            g.push(p);
        }
        let lanes: &[u32] = if full { &[1, 4, 16] } else { &[4] };
        for &l in lanes {
            let mut p = Params::new(Unit::Vector, f).stages(if full { 1 } else { max });
            p.lanes = l;
            p.to = to;
            g.push(p);
        }
    }
    g.extend(stochastic_grid(full));
    g.extend(sqrt_grid(full));
    g
}

/// The lanes with `--sqrt` of the lint grid (every family with a sqrt datapath): alu at
/// every stage count and vectors of 4 lanes converting (lean: one alu of each family).
fn sqrt_grid(full: bool) -> Vec<Params> {
    let sqrt = |unit, f: &str, t: &str, lanes, s| {
        let f: Format = f.parse().expect("a grid format");
        let mut p = Params::new(unit, f).stages(s);
        p.to = Some(t.parse().expect("a grid format")).filter(|t| *t != f);
        p.lanes = lanes;
        p.sqrt = true;
        p
    };
    if !full {
        return vec![
            sqrt(Unit::Alu, "lns:5:6", "lns:5:6", 1, 3),
            sqrt(Unit::Alu, "fp8:e4m3", "bf16", 1, 5),
            sqrt(Unit::Alu, "posit:16:1", "posit:8:0", 1, 4),
            sqrt(Unit::Alu, "fix:7:8", "fix:3:4", 1, 2),
            sqrt(Unit::Alu, "takum:8", "takum:8", 1, 4),
        ];
    }
    let mut g = vec![];
    for f in ["lns:5:6", "fp8:e4m3", "posit:8:0", "fix:7:8", "takum:8"] {
        let most = candidates(f.parse().expect("a grid format"));
        g.extend((0..=most).map(|s| sqrt(Unit::Alu, f, f, 1, s)));
    }
    g.push(sqrt(Unit::Alu, "lns:3:2", "lns:4:4", 1, 2));
    g.push(sqrt(Unit::Vector, "lns:5:6", "lns:5:4", 4, 3));
    g.push(sqrt(Unit::Alu, "float:3:4:ftz", "float:2:5", 1, 2));
    g.push(sqrt(Unit::Vector, "bf16", "f16", 4, 5));
    g.push(sqrt(Unit::Alu, "float:11:52", "float:11:52", 1, 3));
    g.push(sqrt(Unit::Alu, "posit:4:0", "posit:5:1:u", 1, 2));
    g.push(sqrt(Unit::Vector, "posit:16:1", "posit:8:0", 4, 4));
    g.push(sqrt(Unit::Alu, "posit:32:2", "posit:32:2", 1, 4));
    g.push(sqrt(Unit::Alu, "fix:0:7", "fix:3:0", 1, 1));
    g.push(sqrt(Unit::Vector, "fix:15:16", "fix:7:8", 4, 2));
    g.push(sqrt(Unit::Vector, "takum:16", "takum:8", 4, 4));
    g
}

/// The stochastic float lanes of the lint grid: (format, --to, R, seed) × alu at stages 0
/// and max, vector of 4 lanes at 0 and max and of 16 at 2 (lean: two designs).
fn stochastic_grid(full: bool) -> Vec<Params> {
    let design = |unit, f: &str, t: &str, r, seed, lanes, s| {
        let f: Format = f.parse().expect("a grid format");
        let mut p = Params::new(unit, f).rounding(Rounding::Stochastic(r), seed);
        p.to = Some(t.parse().expect("a grid format")).filter(|t| *t != f);
        p.lanes = lanes;
        p.stages(s)
    };
    if !full {
        return vec![
            design(Unit::Alu, "fp8:e4m3", "bf16", 4, 1, 1, 5),
            design(Unit::Vector, "bf16", "bf16", 8, 7, 4, 0),
        ];
    }
    let mut g = vec![];
    for (f, t, r, seed) in [
        ("fp8:e4m3", "bf16", 4, 1),
        ("fp8:e5m2:ftz", "fp8:e5m2:ftz", 1, 2),
        ("bf16", "bf16", 8, 7),
        ("f16:sat:ftz", "f16", 13, 5),
        ("float:11:52", "float:11:52", 32, 11),
    ] {
        let max = candidates(f.parse().expect("a grid format"));
        for s in [0, max] {
            g.push(design(Unit::Alu, f, t, r, seed, 1, s));
            g.push(design(Unit::Vector, f, t, r, seed, 4, s));
        }
        g.push(design(Unit::Vector, f, t, r, seed, 16, 2));
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::generate;

    /// `--sqrt` names the design and its manifest; without it nothing says sqrt; lanes of
    /// families without a sqrt datapath (dfix) refuse it in one line.
    #[test]
    fn sqrt_is_an_option_named_in_the_design_and_refused_where_not_built() {
        let f: Format = "lns:5:6".parse().unwrap();
        let plain = generate(&Params::new(Unit::Alu, f).stages(3)).unwrap();
        let mut p = Params::new(Unit::Vector, f).stages(3);
        p.lanes = 2;
        p.sqrt = true;
        let d = generate(&p).unwrap();
        assert_eq!(d.top, "lpgen_vector_lns_5_6_l2_sqrt_s3");
        assert!(d.manifest.contains("\"sqrt\": true"), "{}", d.manifest);
        assert!(!plain.manifest.contains("sqrt") && !plain.verilog.text().contains("sqrt"));
        let mut p = Params::new(Unit::Alu, "dfix:6".parse().unwrap());
        p.sqrt = true;
        let e = generate(&p).unwrap_err().0;
        assert!(e.contains("--sqrt lanes") && !e.contains('\n'), "{e}");
        for fmt in ["posit:8", "takum:8", "fix:7:8"] {
            let mut p = Params::new(Unit::Alu, fmt.parse().unwrap());
            p.sqrt = true;
            assert!(generate(&p).unwrap().top.ends_with("_sqrt_s0"), "{fmt}");
        }
        let bf16 = "bf16".parse().unwrap();
        let mut p = Params::new(Unit::Alu, bf16).rounding(Rounding::Stochastic(4), 1);
        p.sqrt = true;
        let e = generate(&p).unwrap_err().0;
        assert!(e.contains("--sqrt lanes round to nearest"), "{e}");
        p = p.rounding(Rounding::Nearest, 0);
        let d = generate(&p).unwrap();
        assert!(d.verilog.text().contains("lpgen_float_sqrt_bf16"));
    }
}
