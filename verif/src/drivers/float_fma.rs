//! `float-fma` (a, b, c → y, nan): y = a·b + c rounded once. Exhaustive: every operand
//! triple (8-bit words: 2^24); otherwise every triple of corner cases, then random triples
//! whose c is often near ±a·b (cancellation, ties).
//!
//! With `--rounding stochastic:R` the golden `FloatFormat::fma_with` replays the unit's
//! stream (one draw per operation, in order, from `Rounder::new(stochastic:R, seed)`); then
//! no restart point is marked (a result depends on the operations before it) and an idle
//! cycle comes before every 13th operation, as in the `stochastic` driver.

use lpgen_golden::Family;
use lpgen_golden::{FloatFormat, Format, Rounder, Rounding};
use lpgen_hdl::Params;

use super::float_words::{float_pair, float_specials, float_word};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::Result;

/// Exhaustive runs up to this many operand triples (8-bit words).
const MAX_TRIPLES_LOG2: u32 = 24;

/// Stochastic rounding: an idle cycle before every this many operations.
const BUBBLE_EVERY: u64 = 13;

fn format(p: &Params) -> Result<FloatFormat> {
    match p.format {
        Format::Float(f) => Ok(f),
        other => Err(crate::VerifError(format!(
            "float-fma needs a float format, not {other}"
        ))),
    }
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let f = format(p)?;
    let w = f.width();
    let cycles = match mode {
        Mode::Exhaustive if 3 * w > MAX_TRIPLES_LOG2 => {
            return Err(no_exhaustive(
                p,
                &format!("{w}-bit words give 2^{} operand triples", 3 * w),
            ))
        }
        Mode::Exhaustive => 1u64 << (3 * w),
        Mode::Vectors(n) => n + (float_specials(f).len() as u64).pow(3),
    };
    let cycles = cycles + cycles / BUBBLE_EVERY;
    Ok(Plan { cycles, drive })
}

/// c for a random triple: near ±a·b (its binade, or exactly ∓ it), or any word.
fn addend(r: &mut Rng, f: FloatFormat, a: u64, b: u64) -> u64 {
    let p = f.mul(a, b);
    match r.below(4) {
        0 => f.neg(p),
        1 => {
            let field = (p >> f.frac_bits) & ((1u64 << f.exp_bits) - 1);
            let near = field.saturating_sub(r.below(3));
            let frac = r.next_u64() & ((1u64 << f.frac_bits) - 1);
            let w = (near << f.frac_bits) | frac;
            if r.coin() {
                f.neg(w)
            } else {
                w
            }
        }
        _ => float_word(r, f),
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let f = format(ctx.p)?;
    let l = ctx.layout;
    let (a, b, c, valid) = (
        l.slot("a")?,
        l.slot("b")?,
        l.slot("c")?,
        l.slot("in_valid")?,
    );
    let (y, nan) = (l.slot("y")?, l.slot("nan")?);
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    let stochastic = ctx.p.rounding != Rounding::Nearest;
    let mut rounder = Rounder::new(ctx.p.rounding, ctx.p.rounding_seed);
    let mut count = 0u64;
    let mut op = |chk: &mut crate::Checker, x: u64, yv: u64, z: u64| {
        if stochastic && count % BUBBLE_EVERY == BUBBLE_EVERY - 1 {
            // Idle, with other operands on the inputs: the stream must not step.
            ins[valid] = 0;
            (ins[a], ins[b], ins[c]) = (yv, x, z);
            chk.push(&ins, None);
        }
        count += 1;
        ins[valid] = 1;
        (ins[a], ins[b], ins[c]) = (x, yv, z);
        let r = if stochastic {
            f.fma_with(x, yv, z, &mut rounder)
        } else {
            chk.mark_restart();
            f.fma(x, yv, z)
        };
        (want[y], want[nan]) = (r, u64::from(f.is_nan(r)));
        chk.push(&ins, Some(&want));
    };
    let w = f.width();
    match ctx.mode {
        Mode::Exhaustive => {
            for x in 0..1u64 << w {
                for yv in 0..1u64 << w {
                    for z in 0..1u64 << w {
                        op(ctx.chk, x, yv, z);
                    }
                }
            }
        }
        Mode::Vectors(n) => {
            let sp = float_specials(f);
            for &x in &sp {
                for &yv in &sp {
                    for &z in &sp {
                        op(ctx.chk, x, yv, z);
                    }
                }
            }
            let mut r = Rng(ctx.seed);
            for _ in 0..n {
                let (x, yv) = float_pair(&mut r, f);
                let z = addend(&mut r, f, x, yv);
                op(ctx.chk, x, yv, z);
            }
        }
    }
    Ok(())
}
