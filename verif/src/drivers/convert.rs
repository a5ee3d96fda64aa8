//! `convert`: x (a word of F) → y (the word of T), against the golden `alu::convert` (what the
//! ALU lane's `t_out` is checked against; for float ↔ fix the float family's rule). Exhaustive: every word of F up to 16 bits; vectors:
//! F's corner cases, then random words (a quarter of them corner cases).

use lpgen_golden::alu::{convert, convert_pair};
use lpgen_golden::Format;
use lpgen_hdl::Params;

use super::alu::specials;
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs take every input word up to this width.
const MAX_EXHAUSTIVE_BITS: u32 = 16;

/// (F, T), refused as the generator refuses them.
fn formats(p: &Params) -> Result<(Format, Format)> {
    let Some(to) = p.to else {
        return Err(VerifError(
            "convert needs --to T, the format to convert to (same family: posit, lns, fix or \
             float; or float and fix)"
                .into(),
        ));
    };
    convert_pair(p.format, to).map_err(|e| VerifError(e.to_string()))?;
    Ok((p.format, to))
}

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
    Ok(Plan { cycles, drive })
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let (f, t) = formats(ctx.p)?;
    let (from, to) = (f.calc(), t.calc());
    let l = ctx.layout;
    let (x, valid, y) = (l.slot("x")?, l.slot("in_valid")?, l.slot("y")?);
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    ins[valid] = 1;
    let mut op = |chk: &mut crate::Checker, w: u64| {
        ins[x] = w;
        want[y] = convert(&from, &to, w);
        chk.mark_restart();
        chk.push(&ins, Some(&want));
    };
    let w = f.width();
    match ctx.mode {
        Mode::Exhaustive => {
            for word in 0..1u64 << w {
                op(ctx.chk, word);
            }
        }
        Mode::Vectors(n) => {
            let sp = specials(f);
            for &word in &sp {
                op(ctx.chk, word);
            }
            let mut r = Rng(ctx.seed);
            let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            for _ in 0..n {
                let word = if r.below(4) == 0 {
                    r.pick(&sp)
                } else {
                    r.next_u64() & mask
                };
                op(ctx.chk, word);
            }
        }
    }
    Ok(())
}
