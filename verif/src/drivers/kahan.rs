//! `lns-kahan`: product then the Kahan step, with P = 1, 1, 2, 3, 4, 5 accumulations interleaved
//! round-robin by cycle at stages 0..5 (docs/rtl.md). Random dot products of length 1..=50
//! per slot, bubbles carrying random operands and `clear`s that must be ignored; the first
//! dot product of a slot sometimes starts from the reset state without `clear`. Every step is
//! compared: sum, overflow (the product or one of the four additions saturated:
//! `lpgen_golden::Lns::kahan_mac_flagged`), nan.

use lpgen_golden::{Format, Kahan};
use lpgen_hdl::Params;

use super::words::LnsRef;
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Interleaved accumulations at each stage count (hdl/src/units/lns/mac.rs).
pub const SLOTS: [u64; 6] = [1, 1, 2, 3, 4, 5];

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    if !matches!(p.format, Format::Lns(_)) {
        return Err(VerifError(format!(
            "lns-kahan needs an LNS format, not {}",
            p.format
        )));
    }
    match mode {
        Mode::Exhaustive => Err(no_exhaustive(
            p,
            "a Kahan accumulation has no finite operand space",
        )),
        Mode::Vectors(n) => Ok(Plan { cycles: n, drive }),
    }
}

#[derive(Clone, Copy)]
struct Slot {
    s: u64,
    c: u64,
    left: u64,
    started: bool,
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let Format::Lns(f) = ctx.p.format else {
        unreachable!("checked by plan")
    };
    let Mode::Vectors(n) = ctx.mode else {
        unreachable!("checked by plan")
    };
    let slots = *SLOTS.get(ctx.p.stages as usize).ok_or_else(|| {
        VerifError(format!(
            "lns-kahan has no driver for {} stages",
            ctx.p.stages
        ))
    })?;
    let r = LnsRef::new(f);
    let l = ctx.layout;
    let (sa, sb, sclear, sv) = (
        l.slot("a")?,
        l.slot("b")?,
        l.slot("clear")?,
        l.slot("in_valid")?,
    );
    let (ssum, sover, snan) = (l.slot("sum")?, l.slot("overflow")?, l.slot("nan")?);
    let mut st = vec![
        Slot {
            s: f.zero(),
            c: f.zero(),
            left: 0,
            started: false
        };
        slots as usize
    ];
    let mut rng = Rng(ctx.seed);
    let (mut ins, mut want) = (vec![0u64; l.in_slots], vec![0u64; l.out_slots]);
    for _ in 0..n {
        let sl = &mut st[(ctx.chk.cycle() % slots) as usize];
        ins[sa] = r.operand(&mut rng);
        ins[sb] = r.operand(&mut rng);
        if rng.below(8) == 0 {
            ins[sv] = 0;
            ins[sclear] = rng.below(2);
            ctx.chk.push(&ins, None);
            continue;
        }
        let clear = sl.left == 0 && (sl.started || rng.coin());
        if sl.left == 0 {
            sl.left = 1 + rng.below(50);
            sl.started = true;
        }
        if clear {
            (sl.s, sl.c) = (f.zero(), f.zero());
        }
        ins[sv] = 1;
        ins[sclear] = clear as u64;
        let mut k = Kahan {
            sum: sl.s,
            comp: sl.c,
        };
        let over = r.l.kahan_mac_flagged(&mut k, ins[sa], ins[sb]);
        (sl.s, sl.c) = (k.sum, k.comp);
        sl.left -= 1;
        want[ssum] = k.sum;
        want[sover] = over as u64;
        want[snan] = f.is_nan(k.sum) as u64;
        ctx.chk.push(&ins, Some(&want));
    }
    Ok(())
}
