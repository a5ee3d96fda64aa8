//! The dfix vector lane (`vector`/`alu` on `dfix:W`) against the golden `DfixFormat`: each
//! opcode's result is the golden `dot` of the operands that form its exact integer (a·b;
//! a + b as a·1 + b·1; a − b as a·1 + b·(−1); a as a·1; −a as a·(−1)) at random operand
//! scales with e = the operands' scale + shift, which gives the word and both flags; the
//! word and the overflow at e are also checked against the named golden operation (`mul`,
//! `rescale`, and `add`, `sub`, `neg` at shift 0), so the two golden paths must agree.
//! `--exhaustive` (W ≤ 6): every opcode (the unassigned ones too) on every operand pair at
//! every shift from −(W + 3) to W + 3 and at ±(2W + 2), ±1000. Random: opcodes, operands from
//! the extremes, small integers and anything, shifts mostly near the top of the result.

use lpgen_golden::dfix::{DfixFormat, ReadOut, MAX_SCALE};
use lpgen_hdl::units::{DfixLaneOp, DFIX_SHIFT_BITS};
use lpgen_hdl::{Params, Unit};

use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::{mask, put_bits};
use crate::rng::Rng;
use crate::{Result, VerifError};

fn lanes(p: &Params) -> usize {
    if p.unit == Unit::Alu {
        1
    } else {
        p.lanes as usize
    }
}

fn shifts(f: DfixFormat) -> Vec<i64> {
    let w = i64::from(f.width);
    let mut s: Vec<i64> = (-(w + 3)..=w + 3).collect();
    s.extend([2 * w + 2, -(2 * w + 2), 1000, -1000]);
    s
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let f = p
        .dfix_format()
        .ok_or_else(|| VerifError("a dfix lane needs a dfix:W format".into()))?;
    match mode {
        Mode::Exhaustive if f.width > 6 => Err(no_exhaustive(
            p,
            "every opcode on every pair at every shift needs W ≤ 6",
        )),
        Mode::Exhaustive => {
            let pairs = 1u64 << (2 * f.width);
            Ok(Plan {
                cycles: 8 * shifts(f).len() as u64 * pairs.div_ceil(lanes(p) as u64),
                drive,
            })
        }
        Mode::Vectors(n) => Ok(Plan { cycles: n, drive }),
    }
}

/// The golden result of opcode `code` on (a, b) at `shift`, with random operand scales.
fn golden(f: DfixFormat, r: &mut Rng, code: u64, a: u64, b: u64, shift: i64) -> Result<ReadOut> {
    let max = i64::from(MAX_SCALE);
    let jitter = |r: &mut Rng| r.below(21) as i64 - 10;
    let (one, minus_one) = (1u64, mask(f.width));
    let Some(op) = DfixLaneOp::from_code(code) else {
        return Ok(ReadOut {
            word: 0,
            overflow: false,
            overflow_at_half: false,
        });
    };
    // One operand scale e_in (two for mul), e = e_in + shift, all within ±MAX_SCALE.
    let base = (-shift / 2).clamp(-max / 2, max / 2);
    let (ea, eb) = (base + jitter(r), base + jitter(r));
    let e_in = (ea + eb).clamp(-max, max);
    let bad = |what: &str| {
        VerifError(format!(
            "golden {what} and dot disagree on dfix:{} {a:#x}, {b:#x} at shift {shift}",
            f.width
        ))
    };
    let sc = |x: i64| x as i32;
    Ok(match op {
        DfixLaneOp::Mul => {
            let e = sc(ea + eb + shift);
            let o = f.dot(&[a], sc(ea), &[b], sc(eb), e);
            let m = f.mul(a, sc(ea), b, sc(eb), e);
            if (m.word, m.overflow) != (o.word, o.overflow) {
                return Err(bad("mul"));
            }
            o
        }
        DfixLaneOp::Rescale => {
            let e = sc(e_in + shift);
            let o = f.dot(&[a], sc(e_in), &[one], 0, e);
            let m = f.rescale(a, sc(e_in), e);
            if (m.word, m.overflow) != (o.word, o.overflow) {
                return Err(bad("rescale"));
            }
            o
        }
        DfixLaneOp::Add | DfixLaneOp::Sub | DfixLaneOp::Neg => {
            let e = sc(e_in + shift);
            let (xs, ys): (Vec<u64>, Vec<u64>) = match op {
                DfixLaneOp::Add => (vec![a, b], vec![one, one]),
                DfixLaneOp::Sub => (vec![a, b], vec![one, minus_one]),
                _ => (vec![a], vec![minus_one]),
            };
            let o = f.dot(&xs, sc(e_in), &ys, 0, e);
            if shift == 0 {
                let m = match op {
                    DfixLaneOp::Add => f.add(a, b),
                    DfixLaneOp::Sub => f.sub(a, b),
                    _ => f.neg(a),
                };
                if (m.word, m.overflow) != (o.word, o.overflow) {
                    return Err(bad("add/sub/neg"));
                }
            }
            o
        }
    })
}

struct Io {
    w: u32,
    valid: usize,
    op: usize,
    shift: usize,
    a: usize,
    b: usize,
    y: usize,
    over: usize,
    half: usize,
    cmp: usize,
    ins: Vec<u64>,
    want: Vec<u64>,
}

/// One cycle: opcode, shift and each lane's (a, b); pushes the golden outputs, or with
/// `valid` false a bubble that carries them.
fn step(
    ctx: &mut Ctx,
    io: &mut Io,
    r: &mut Rng,
    valid: bool,
    (code, shift): (u64, i64),
    pairs: &[(u64, u64)],
) -> Result<()> {
    let f = ctx.p.dfix_format().expect("checked by plan");
    io.ins.iter_mut().for_each(|x| *x = 0);
    io.want.iter_mut().for_each(|x| *x = 0);
    io.ins[io.valid] = valid as u64;
    io.ins[io.op] = code;
    io.ins[io.shift] = (shift as u64) & mask(DFIX_SHIFT_BITS);
    let w = io.w as usize;
    for (i, &(a, b)) in pairs.iter().enumerate() {
        put_bits(&mut io.ins[io.a..], i * w, io.w, a);
        put_bits(&mut io.ins[io.b..], i * w, io.w, b);
        if !valid {
            continue;
        }
        let o = golden(f, r, code, a, b, shift)?;
        if f.lane(code, a, b, shift as i32) != o {
            return Err(VerifError(format!(
                "golden lane and dot disagree on dfix:{} op {code} {a:#x}, {b:#x} at shift {shift}",
                f.width
            )));
        }
        put_bits(&mut io.want[io.y..], i * w, io.w, o.word);
        put_bits(&mut io.want[io.over..], i, 1, o.overflow as u64);
        put_bits(&mut io.want[io.half..], i, 1, o.overflow_at_half as u64);
        let (x, y) = (f.to_int(a), f.to_int(b));
        let cmp = if x < y { 1 } else { 2 * u64::from(x > y) };
        put_bits(&mut io.want[io.cmp..], 2 * i, 2, cmp);
    }
    ctx.chk.push(&io.ins, valid.then_some(&io.want[..]));
    Ok(())
}

fn word(f: DfixFormat, r: &mut Rng) -> u64 {
    let m = mask(f.width);
    match r.below(8) {
        0 => (r.pick(&[0, 1, -1, f.max_int(), f.min_int(), f.min_int() + 1]) as u64) & m,
        1..=2 => ((r.below(17) as i64 - 8).clamp(f.min_int(), f.max_int()) as u64) & m,
        _ => r.next_u64() & m,
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let f = ctx.p.dfix_format().expect("checked by plan");
    let l = ctx.layout;
    let mut io = Io {
        w: f.width,
        valid: l.slot("in_valid")?,
        op: l.slot("op")?,
        shift: l.slot("shift")?,
        a: l.slot("a")?,
        b: l.slot("b")?,
        y: l.slot("y")?,
        over: l.slot("overflow")?,
        half: l.slot("overflow_half")?,
        cmp: l.slot("cmp")?,
        ins: vec![0; l.in_slots],
        want: vec![0; l.out_slots],
    };
    let n_lanes = lanes(ctx.p);
    let mut r = Rng(ctx.seed);
    match ctx.mode {
        Mode::Exhaustive => {
            let all: Vec<(u64, u64)> = (0..1u64 << (2 * f.width))
                .map(|i| (i >> f.width, i & mask(f.width)))
                .collect();
            for code in 0..8 {
                for s in shifts(f) {
                    for chunk in all.chunks(n_lanes) {
                        ctx.chk.mark_restart();
                        step(ctx, &mut io, &mut r, true, (code, s), chunk)?;
                    }
                }
            }
        }
        Mode::Vectors(n) => {
            let w = i64::from(f.width);
            while ctx.chk.cycle() < n {
                let code = r.below(8);
                // Near the top of a product (mul) or of a word (the others), or anywhere.
                let natural = if code == 0 { w - 1 } else { 1 };
                let s = match r.below(4) {
                    0..=1 => natural + r.below(7) as i64 - 3,
                    2 => r.below((3 * w + 8) as u64) as i64 - (w + 4),
                    _ => r.pick(&[-1000, 1000, 2 * w + 2, -(2 * w + 2), 0]),
                };
                let pairs: Vec<(u64, u64)> = (0..n_lanes)
                    .map(|_| (word(f, &mut r), word(f, &mut r)))
                    .collect();
                ctx.chk.mark_restart();
                let valid = r.below(10) > 0;
                step(ctx, &mut io, &mut r, valid, (code, s), &pairs)?;
            }
        }
    }
    Ok(())
}
