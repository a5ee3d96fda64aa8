//! `float-add` and `float-mul` with `--rounding stochastic:R`: the golden
//! `Rounder::new(stochastic:R, seed)` replays the unit's stream, one draw per operation in
//! the order the operations enter (`FloatFormat::add_with`, `sub_with`, `mul_with`). No
//! restart points: every result depends on how many operations came before it, so a run is
//! one stretch from reset (a distributed run checks it all on rank 0). An idle cycle
//! (`in_valid` low, other inputs changing) comes before every 13th operation: the stream
//! must not step on it.
//!
//! Exhaustive: every pair (with both settings of `sub` for the adder); otherwise every pair
//! of corner cases, then random pairs.

use lpgen_golden::Family;
use lpgen_golden::{Format, Rounder, Rounding};
use lpgen_hdl::{Params, Unit};

use super::float_words::{float_pair, float_specials};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::Result;

/// Exhaustive runs up to this many operand pairs.
const MAX_PAIRS_LOG2: u32 = 20;

/// An idle cycle before every this many operations.
const BUBBLE_EVERY: u64 = 13;

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    if !matches!(p.format, Format::Float(_)) || !matches!(p.rounding, Rounding::Stochastic(_)) {
        return Err(crate::VerifError(format!(
            "{} with rounding {} needs a float format and stochastic:R, not {}",
            p.unit.name(),
            p.rounding,
            p.format
        )));
    }
    let w = p.format.width();
    let flags = 1 + u64::from(p.unit == Unit::FloatAdd);
    let ops = match mode {
        Mode::Exhaustive if 2 * w > MAX_PAIRS_LOG2 => {
            return Err(no_exhaustive(
                p,
                &format!("{w}-bit words give 2^{} operand pairs", 2 * w),
            ))
        }
        Mode::Exhaustive => (1u64 << (2 * w)) * flags,
        Mode::Vectors(n) => n + 40 * 40 * flags,
    };
    Ok(Plan {
        cycles: ops + ops / BUBBLE_EVERY + 1,
        drive,
    })
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let Format::Float(f) = ctx.p.format else {
        unreachable!("checked by plan")
    };
    let l = ctx.layout;
    let (a, b, valid) = (l.slot("a")?, l.slot("b")?, l.slot("in_valid")?);
    let add = ctx.p.unit == Unit::FloatAdd;
    let sub = if add { Some(l.slot("sub")?) } else { None };
    let (y, nan) = (l.slot("y")?, l.slot("nan")?);
    let mut rounder = Rounder::new(ctx.p.rounding, ctx.p.rounding_seed);
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    let mut count = 0u64;
    let mut op = |chk: &mut crate::Checker, x: u64, yv: u64, fl: bool| {
        if count % BUBBLE_EVERY == BUBBLE_EVERY - 1 {
            // Idle: operands that would round if they were taken.
            ins[valid] = 0;
            ins[a] = !x & (u64::MAX >> (64 - f.width()));
            ins[b] = yv;
            chk.push(&ins, None);
        }
        count += 1;
        ins[valid] = 1;
        ins[a] = x;
        ins[b] = yv;
        if let Some(s) = sub {
            ins[s] = fl as u64;
        }
        let r = match (add, fl) {
            (false, _) => f.mul_with(x, yv, &mut rounder),
            (true, false) => f.add_with(x, yv, &mut rounder),
            (true, true) => f.sub_with(x, yv, &mut rounder),
        };
        want[y] = r;
        want[nan] = f.is_nan(r) as u64;
        chk.push(&ins, Some(&want));
    };
    let flags: &[bool] = if add { &[false, true] } else { &[false] };
    let w = f.width();
    match ctx.mode {
        Mode::Exhaustive => {
            for x in 0..1u64 << w {
                for yv in 0..1u64 << w {
                    for &fl in flags {
                        op(ctx.chk, x, yv, fl);
                    }
                }
            }
        }
        Mode::Vectors(n) => {
            let specials = float_specials(f);
            for &x in &specials {
                for &yv in &specials {
                    for &fl in flags {
                        op(ctx.chk, x, yv, fl);
                    }
                }
            }
            let mut r = Rng(ctx.seed);
            for _ in 0..n {
                let (x, yv) = float_pair(&mut r, f);
                let fl = r.coin();
                op(ctx.chk, x, yv, fl && add);
            }
        }
    }
    Ok(())
}
