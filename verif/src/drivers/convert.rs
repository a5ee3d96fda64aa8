//! `convert`: x (a word of F) → y (the word of T), against the golden `alu::convert` (what the
//! ALU lane's `t_out` is checked against; for float ↔ fix the float family's rule). Exhaustive: every word of F up to 16 bits; vectors:
//! F's corner cases, then random words (a quarter of them corner cases).
//!
//! With `--rounding stochastic:R` (float results) against golden `alu::convert_with` under
//! `Rounder::new(stochastic:R, seed)`, one draw per conversion in the order they enter, as the
//! stochastic float units are checked (`stochastic.rs`): one stretch from reset (no restart
//! points), and an idle cycle with a changed `x` before every 13th conversion, on which the
//! stream must not step.

use lpgen_golden::alu::{convert, convert_format, convert_pair, convert_rounding, convert_with};
use lpgen_golden::{Format, Rounder, Rounding};
use lpgen_hdl::Params;

use super::alu::specials;
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs take every input word up to this width.
const MAX_EXHAUSTIVE_BITS: u32 = 16;

/// (F, T) as the unit converts them (f32 as `float:8:23`), refused as the generator refuses
/// them.
fn formats(p: &Params) -> Result<(Format, Format)> {
    let Some(to) = p.to else {
        return Err(VerifError(
            "convert needs --to T, the format to convert to (same family: posit, lns, fix or \
             float; or float and fix)"
                .into(),
        ));
    };
    convert_pair(p.format, to).map_err(|e| VerifError(e.to_string()))?;
    convert_rounding(p.format, to, p.rounding).map_err(|e| VerifError(e.to_string()))?;
    Ok((convert_format(p.format), convert_format(to)))
}

/// An idle cycle before every this many conversions (stochastic rounding only).
const BUBBLE_EVERY: u64 = 13;

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let (f, _) = formats(p)?;
    let w = f.width();
    let cycles = match mode {
        Mode::Exhaustive if w > MAX_EXHAUSTIVE_BITS => {
            return Err(no_exhaustive(
                p,
                &format!("every x word is 2^{w} (exhaustive up to {MAX_EXHAUSTIVE_BITS} bits)"),
            ))
        }
        Mode::Exhaustive => 1u64 << w,
        Mode::Vectors(n) => n + specials(f).len() as u64,
    };
    let cycles = match p.rounding {
        Rounding::Nearest => cycles,
        Rounding::Stochastic(_) => cycles + cycles / BUBBLE_EVERY + 1,
    };
    Ok(Plan { cycles, drive })
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let (f, t) = formats(ctx.p)?;
    let (from, to) = (f.calc(), t.calc());
    let l = ctx.layout;
    let (x, valid, y) = (l.slot("x")?, l.slot("in_valid")?, l.slot("y")?);
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    let w = f.width();
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let stochastic = ctx.p.rounding != Rounding::Nearest;
    let mut rounder = Rounder::new(ctx.p.rounding, ctx.p.rounding_seed);
    let mut count = 0u64;
    let mut op = |chk: &mut crate::Checker, word: u64| -> Result<()> {
        if !stochastic {
            ins[valid] = 1;
            ins[x] = word;
            want[y] = convert(&from, &to, word);
            chk.mark_restart();
            chk.push(&ins, Some(&want));
            return Ok(());
        }
        if count % BUBBLE_EVERY == BUBBLE_EVERY - 1 {
            // Idle: a word that would round if it were taken.
            ins[valid] = 0;
            ins[x] = !word & mask;
            chk.push(&ins, None);
        }
        count += 1;
        ins[valid] = 1;
        ins[x] = word;
        want[y] =
            convert_with(&from, &to, word, &mut rounder).map_err(|e| VerifError(e.to_string()))?;
        chk.push(&ins, Some(&want));
        Ok(())
    };
    match ctx.mode {
        Mode::Exhaustive => {
            for word in 0..1u64 << w {
                op(ctx.chk, word)?;
            }
        }
        Mode::Vectors(n) => {
            let sp = specials(f);
            for &word in &sp {
                op(ctx.chk, word)?;
            }
            let mut r = Rng(ctx.seed);
            for _ in 0..n {
                let word = if r.below(4) == 0 {
                    r.pick(&sp)
                } else {
                    r.next_u64() & mask
                };
                op(ctx.chk, word)?;
            }
        }
    }
    Ok(())
}
