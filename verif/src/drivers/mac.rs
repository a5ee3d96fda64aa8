//! Accumulating units with an op port: `posit-mac` (quire; y, nar) and `fix-mac` (wide
//! accumulator; y, overflow). op 0: acc += a·b, 1: acc −= a·b, 2: clear then acc = a·b,
//! 3: clear only. Every step is compared.
//!
//! Exhaustive (words of ≤ 8 bits): from each of a set of accumulator states (zero, ±maxpos²
//! and minpos² mixed, near the carry guard, a random history, NaR), every operand pair is
//! added and then subtracted again (and the other way round), which returns the exact
//! accumulator to the state; a NaR operand makes the state be rebuilt. Random: dot products
//! of length 1..=40 (clear by op 2 or 3, subtractions, repeated products of the other sign
//! that cancel, rare NaR), then a run of maximal products that wraps the accumulator.

use lpgen_golden::{Family, FixAcc, FixFormat, Format, PositFormat, Quire};
use lpgen_hdl::{Params, Unit};

use super::words::{fix_specials, fix_sub_product, fix_word, posit_specials, posit_word};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Wrap runs up to this many products.
const MAX_WRAP: u64 = 1 << 18;

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let ok = matches!(
        (p.unit, p.format),
        (Unit::PositMac, Format::Posit(_)) | (Unit::FixMac, Format::Fix(_))
    );
    if !ok {
        return Err(VerifError(format!(
            "{} needs a {} format, not {}",
            p.unit.name(),
            if p.unit == Unit::PositMac {
                "posit"
            } else {
                "fix"
            },
            p.format
        )));
    }
    let w = p.format.width();
    let cycles = match mode {
        Mode::Exhaustive if w > 8 => {
            return Err(no_exhaustive(
                p,
                "all pairs from each quire state need words of at most 8 bits",
            ))
        }
        Mode::Exhaustive => 8 * 4 * (1u64 << (2 * w)),
        Mode::Vectors(n) => n,
    };
    Ok(Plan { cycles, drive })
}

/// The golden accumulator of either unit.
enum Acc {
    Posit(PositFormat, Quire),
    Fix(FixFormat, FixAcc),
}

impl Acc {
    fn new(f: Format) -> Acc {
        match f {
            Format::Posit(p) => Acc::Posit(p, Quire::new(p)),
            Format::Fix(x) => Acc::Fix(x, FixAcc::new(x)),
            _ => unreachable!("checked by plan"),
        }
    }

    fn step(&mut self, a: u64, b: u64, op: u64) {
        match self {
            Acc::Posit(_, q) => match op {
                0 => q.fma(a, b, false),
                1 => q.fma(a, b, true),
                2 => {
                    q.clear();
                    q.fma(a, b, false)
                }
                _ => q.clear(),
            },
            Acc::Fix(f, acc) => match op {
                0 => acc.add_product(a, b),
                1 => fix_sub_product(*f, acc, a, b),
                2 => {
                    acc.clear();
                    acc.add_product(a, b)
                }
                _ => acc.clear(),
            },
        }
    }

    /// (y, nar or overflow)
    fn out(&self) -> (u64, u64) {
        match self {
            Acc::Posit(_, q) => (q.to_word(), q.is_nar() as u64),
            Acc::Fix(_, acc) => {
                let (y, over) = acc.to_word_flagged();
                (y, over as u64)
            }
        }
    }

    fn nar(&self) -> Option<u64> {
        match self {
            Acc::Posit(p, _) => Some(p.nar()),
            Acc::Fix(..) => None,
        }
    }

    /// (largest, smallest positive, one, negation)
    fn words(&self) -> (u64, u64, u64) {
        match self {
            Acc::Posit(p, _) => (p.maxpos(), p.minpos(), p.one()),
            Acc::Fix(f, _) => (f.from_int(i128::from(f.max_int())), 1, f.one()),
        }
    }

    fn neg(&self, x: u64) -> u64 {
        match self {
            Acc::Posit(p, _) => p.neg(x),
            Acc::Fix(f, _) => f.neg(x),
        }
    }

    fn word(&self, r: &mut Rng, small: bool) -> u64 {
        match self {
            Acc::Posit(p, _) => posit_word(r, *p),
            Acc::Fix(f, _) => fix_word(r, *f, small),
        }
    }

    fn specials(&self) -> Vec<u64> {
        match self {
            Acc::Posit(p, _) => posit_specials(*p),
            Acc::Fix(f, _) => fix_specials(*f),
        }
    }

    /// Products of the largest word that bring the accumulator to its sign bit.
    fn wrap_count(&self) -> u64 {
        match self {
            Acc::Posit(p, _) => 1u64.checked_shl(p.quire_carry_bits()).unwrap_or(u64::MAX),
            Acc::Fix(..) => 1 << 17,
        }
    }
}

struct Io {
    a: usize,
    b: usize,
    op: usize,
    valid: usize,
    y: usize,
    flag: usize,
    ins: Vec<u64>,
    want: Vec<u64>,
}

impl Io {
    fn step(&mut self, ctx: &mut Ctx, acc: &mut Acc, a: u64, b: u64, op: u64) {
        if op >= 2 {
            ctx.chk.mark_restart();
        }
        acc.step(a, b, op);
        (self.ins[self.a], self.ins[self.b], self.ins[self.op]) = (a, b, op);
        let (y, fl) = acc.out();
        (self.want[self.y], self.want[self.flag]) = (y, fl);
        ctx.chk.push(&self.ins, Some(&self.want));
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let l = ctx.layout;
    let flag = if ctx.p.unit == Unit::PositMac {
        "nar"
    } else {
        "overflow"
    };
    let mut io = Io {
        a: l.slot("a")?,
        b: l.slot("b")?,
        op: l.slot("op")?,
        valid: l.slot("in_valid")?,
        y: l.slot("y")?,
        flag: l.slot(flag)?,
        ins: vec![0; l.in_slots],
        want: vec![0; l.out_slots],
    };
    io.ins[io.valid] = 1;
    let mut acc = Acc::new(ctx.p.format);
    let mut rng = Rng(ctx.seed);
    match ctx.mode {
        Mode::Exhaustive => exhaustive(ctx, &mut io, &mut acc),
        Mode::Vectors(n) => {
            while ctx.chk.cycle() < n {
                dot(ctx, &mut io, &mut acc, &mut rng);
            }
            let (x, _, one) = acc.words();
            let count = acc.wrap_count();
            if count <= MAX_WRAP {
                io.step(ctx, &mut acc, x, x, 2);
                for k in 1..count + 12 {
                    io.step(ctx, &mut acc, x, x, u64::from(k >= count + 6));
                }
                io.step(ctx, &mut acc, one, one, 0);
            }
        }
    }
    Ok(())
}

/// One random dot product.
fn dot(ctx: &mut Ctx, io: &mut Io, acc: &mut Acc, r: &mut Rng) {
    let len = 1 + r.below(40);
    let small = r.coin();
    let mut seen: Vec<(u64, u64)> = vec![];
    for k in 0..len {
        let op = match (k, r.below(12)) {
            (0, 0..=2) => 3,
            (0, _) => 2,
            (_, 0..=3) => 1,
            _ => 0,
        };
        let (a, b) = match (acc.nar(), r.below(60)) {
            _ if !seen.is_empty() && r.below(6) == 0 => {
                let (a, b) = r.pick(&seen);
                (a, acc.neg(b))
            }
            (Some(nar), 0) => (nar, acc.word(r, small)),
            (_, 1) => (r.pick(&acc.specials()), acc.word(r, small)),
            _ => (acc.word(r, small), acc.word(r, small)),
        };
        seen.push((a, b));
        io.step(ctx, acc, a, b, op);
    }
}

/// The state-building prefixes of the exhaustive run, as (a, b, op) steps.
fn states(acc: &Acc) -> Vec<Vec<(u64, u64, u64)>> {
    let (x, m, one) = acc.words();
    let mut v = vec![
        vec![(0, 0, 3)],
        vec![(x, x, 2)],
        vec![(m, m, 2)],
        vec![(acc.neg(x), x, 2), (m, m, 0), (one, m, 1)],
        vec![(one, one, 2)],
    ];
    // Just below the carry guard's end (or 1000 products of the largest words).
    let count = acc.wrap_count().min(1000);
    let mut near = vec![(x, x, 2)];
    near.extend((1..count - 1).map(|_| (x, x, 0)));
    v.push(near);
    let mut r = Rng(0x5eed_0a11);
    let mut random = vec![];
    for k in 0..12 {
        let (a, b) = (acc.word(&mut r, false), acc.word(&mut r, false));
        if Some(a) != acc.nar() && Some(b) != acc.nar() {
            random.push((a, b, if k == 0 { 2 } else { r.below(2) }));
        }
    }
    random[0].2 = 2;
    v.push(random);
    if let Some(nar) = acc.nar() {
        v.push(vec![(nar, one, 2)]);
    }
    v
}

fn exhaustive(ctx: &mut Ctx, io: &mut Io, acc: &mut Acc) {
    let w = ctx.p.format.width();
    let nar = acc.nar();
    for prefix in states(acc) {
        let build = |ctx: &mut Ctx, io: &mut Io, acc: &mut Acc| {
            for &(a, b, op) in &prefix {
                io.step(ctx, acc, a, b, op);
            }
        };
        build(ctx, io, acc);
        for a in 0..1u64 << w {
            for b in 0..1u64 << w {
                let first = (a ^ b) & 1;
                io.step(ctx, acc, a, b, first);
                io.step(ctx, acc, a, b, 1 - first);
                io.step(ctx, acc, a, b, 1 - first);
                io.step(ctx, acc, a, b, first);
                if nar.is_some() && (Some(a) == nar || Some(b) == nar) {
                    build(ctx, io, acc);
                }
            }
        }
    }
}
