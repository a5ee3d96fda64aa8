//! Dynamic fixed point (`dfix:W`) against the golden `lpgen_golden::dfix::DfixFormat`.
//!
//! **`array --pe dfix`**: random tiles as the other arrays get them (every other one smaller
//! than the array, zero words outside it; K up to 24 in two chunks with bubbles that carry
//! random operands, controls and shifts; sometimes a read-out after the first chunk; `last`
//! steps at the minimum spacing or with gaps), each read-out with its own shift: mostly near
//! the one that puts the tile's largest sum at the top of the word (so some outputs overflow
//! at the scale, some only at its half, some not at all), and also anywhere in and beyond the
//! accumulator's range, up to ±3000 (the golden scales' limit). The operand scales ea, eb and
//! the output scale e = ea + eb + shift go to `DfixFormat::dot`, which gives every word of
//! `c_out` and both flags. The shift's choice looks at the exact sums; the expected outputs
//! come only from the golden model. `--exhaustive` (1×1, W ≤ 8): every operand pair, as a
//! tile of one step, at every shift from −(W + 3) to 2W + 3 and at the ends of the range.
//!
//! **`dfix-monitor`**: read-outs of golden dot products (random operands and shifts, as
//! above) and sometimes arbitrary flag patterns, with masks (all outputs, a smaller tile's
//! rectangle, random), bubbles with garbage flags, and `clear` now and then (with a read-out
//! or alone). The expected counts are the sums of the flags the golden model gave, saturated
//! at the counter's width, exactly as a host would count them.

use lpgen_golden::dfix::{DfixFormat, ReadOut, MAX_SCALE};
use lpgen_hdl::units::array_protocol::{Beat, Host, Protocol};
use lpgen_hdl::units::DFIX_SHIFT_BITS;
use lpgen_hdl::Params;

use super::tiles::{self, Event, Ports, Step};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::{mask, put_bits};
use crate::rng::Rng;
use crate::{Result, VerifError};

fn dfix_format(p: &Params) -> Result<DfixFormat> {
    p.dfix_format().ok_or_else(|| {
        VerifError(format!(
            "{} on dfix needs --format dfix:W (e.g. dfix:10), not {}",
            p.unit.name(),
            p.format_name()
        ))
    })
}

/// The accumulator's bits (the PE's: 2W + 16).
fn acc_bits(f: DfixFormat) -> i64 {
    2 * i64::from(f.width) + 16
}

/// The shifts every exhaustive pair is read out at.
fn exhaustive_shifts(f: DfixFormat) -> Vec<i64> {
    let w = i64::from(f.width);
    let n = acc_bits(f);
    let mut s: Vec<i64> = (-(w + 3)..=2 * w + 3).collect();
    s.extend([n - 1, n, n + 1, n + 2, 1000, -1000, 3000, -3000]);
    s
}

pub(crate) fn plan_array(p: &Params, mode: Mode) -> Result<Plan> {
    let f = dfix_format(p)?;
    match mode {
        Mode::Exhaustive if p.rows * p.cols != 1 || f.width > 8 => Err(no_exhaustive(
            p,
            "every operand pair needs a 1×1 array of dfix:W with W ≤ 8",
        )),
        Mode::Exhaustive => Ok(Plan {
            cycles: (1u64 << (2 * f.width)) * exhaustive_shifts(f).len() as u64,
            drive: drive_exhaustive,
        }),
        Mode::Vectors(n) => Ok(Plan {
            cycles: n,
            drive: drive_array,
        }),
    }
}

pub(crate) fn plan_monitor(p: &Params, mode: Mode) -> Result<Plan> {
    dfix_format(p)?;
    match mode {
        Mode::Exhaustive => Err(no_exhaustive(
            p,
            "its flag patterns and counts have no finite space",
        )),
        Mode::Vectors(n) => Ok(Plan {
            cycles: n,
            drive: drive_monitor,
        }),
    }
}

/// Scales (ea, eb, e) with e − (ea + eb) = `shift`, all within the golden limits, jittered.
fn scales(r: &mut Rng, shift: i64) -> (i32, i32, i32) {
    let max = i64::from(MAX_SCALE);
    let base = (-shift / 2).clamp(-max, max);
    let jitter = |r: &mut Rng| r.below(21) as i64 - 10;
    let (ea, eb) = (base + jitter(r), base + jitter(r));
    let (ea, eb) = if (ea + eb + shift).abs() <= max && ea.abs() <= max && eb.abs() <= max {
        (ea, eb)
    } else {
        (base, base)
    };
    (ea as i32, eb as i32, (ea + eb + shift) as i32)
}

/// The read-out of Σ a·b at `shift` by the golden model (random operand scales).
fn golden(f: DfixFormat, r: &mut Rng, a: &[u64], b: &[u64], shift: i64) -> ReadOut {
    let (ea, eb, e) = scales(r, shift);
    f.dot(a, ea, b, eb, e)
}

/// An operand word: the extremes, small integers, or anything.
fn word(f: DfixFormat, r: &mut Rng, small: bool) -> u64 {
    let m = mask(f.width);
    let int = |v: i64| (v as u64) & m;
    match r.below(if small { 16 } else { 8 }) {
        0 => int(r.pick(&[0, 1, -1, f.max_int(), f.min_int(), f.min_int() + 1])),
        _ if small => int((r.below(17) as i64 - 8).clamp(f.min_int(), f.max_int())),
        _ => r.next_u64() & m,
    }
}

/// A read-out shift for sums whose largest magnitude is `largest`: mostly near the shift
/// that puts it at the top of the word, also anywhere in the accumulator's range and beyond.
fn shift_for(f: DfixFormat, r: &mut Rng, largest: u128) -> i64 {
    let w = i64::from(f.width);
    let n = acc_bits(f);
    let natural = i64::from(128 - largest.leading_zeros()) - (w - 1);
    let s = match r.below(20) {
        0..=9 => natural + r.below(5) as i64 - 2,
        10..=12 => r.below((n + w + 7) as u64) as i64 - (w + 3),
        13..=14 => r.pick(&[
            n - 1,
            n,
            n + 1,
            n + 2,
            -(w + 1),
            -(w + 2),
            -w,
            3000,
            -3000,
            0,
        ]),
        _ => r.below(17) as i64 - 4,
    };
    s.clamp(-3000, 3000)
}

/// The shift as the `shift` port's two's-complement bits.
fn shift_bits(s: i64) -> u64 {
    (s as u64) & mask(DFIX_SHIFT_BITS)
}

struct ArrayIo {
    w: u32,
    ports: Ports,
    shift: usize,
    over: usize,
    half: usize,
    ins: Vec<u64>,
    want: Vec<u64>,
}

impl ArrayIo {
    fn new(ctx: &Ctx, w: u32) -> Result<ArrayIo> {
        let l = ctx.layout;
        Ok(ArrayIo {
            w,
            ports: Ports::new(l)?,
            shift: l.slot("shift")?,
            over: l.slot("overflow")?,
            half: l.slot("overflow_half")?,
            ins: vec![0; l.in_slots],
            want: vec![0; l.out_slots],
        })
    }

    fn set(&mut self, a: &[u64], b: &[u64], ctl: [bool; 3], shift: i64) {
        let w = self.w;
        let put = |buf: &mut [u64], at: usize, &x: &u64| put_bits(buf, at, w, x);
        (self.ports).set(&mut self.ins, (a, b), w as usize, ctl, put);
        self.ins[self.shift] = shift_bits(shift);
    }

    fn expect(&mut self, outs: &[ReadOut]) {
        self.want.iter_mut().for_each(|x| *x = 0);
        for (i, o) in outs.iter().enumerate() {
            put_bits(
                &mut self.want[self.ports.c..],
                i * self.w as usize,
                self.w,
                o.word,
            );
            put_bits(&mut self.want[self.over..], i, 1, o.overflow as u64);
            put_bits(&mut self.want[self.half..], i, 1, o.overflow_at_half as u64);
        }
    }
}

fn drive_exhaustive(ctx: &mut Ctx) -> Result<()> {
    let f = dfix_format(ctx.p)?;
    let mut io = ArrayIo::new(ctx, f.width)?;
    let mut r = Rng(ctx.seed);
    for s in exhaustive_shifts(f) {
        for a in 0..1u64 << f.width {
            for b in 0..1u64 << f.width {
                let out = golden(f, &mut r, &[a], &[b], s);
                io.set(&[a], &[b], [true, true, true], s);
                io.expect(&[out]);
                ctx.chk.mark_restart();
                ctx.chk.push(&io.ins, Some(&io.want));
            }
        }
    }
    Ok(())
}

/// A random tile's events (`tiles::word_tile`: the other arrays' tiles, of dfix words).
fn tile(f: DfixFormat, r: &mut Rng, rows: usize, cols: usize, full: bool) -> Vec<Event<u64>> {
    tiles::word_tile(r, (rows, cols), full, 0, |r, small| word(f, r, small))
}

fn drive_array(ctx: &mut Ctx) -> Result<()> {
    let f = dfix_format(ctx.p)?;
    let (rows, cols) = (ctx.p.rows as usize, ctx.p.cols as usize);
    let mut io = ArrayIo::new(ctx, f.width)?;
    let Mode::Vectors(n) = ctx.mode else {
        unreachable!("checked by plan")
    };
    let mut r = Rng(ctx.seed);
    let proto = Protocol::of(ctx.p);
    if proto.accumulations != 1 {
        return Err(VerifError(
            "the dfix PE interleaves no accumulations".into(),
        ));
    }
    let mut host = Host::new(proto);
    // The steps since the last clear: (A column, B row) of each.
    let mut steps: Vec<(Vec<u64>, Vec<u64>)> = vec![];
    let mut tiles = 0u64;
    let m = mask(f.width);
    while ctx.chk.cycle() < n {
        let beat = host.next(ctx.chk.cycle(), |_, queue| {
            queue.extend(tile(f, &mut r, rows, cols, tiles.is_multiple_of(2)));
            tiles += 1;
        });
        match beat.expect("refilled") {
            Beat::Bubble => {
                let a: Vec<u64> = (0..rows).map(|_| r.next_u64() & m).collect();
                let b: Vec<u64> = (0..cols).map(|_| r.next_u64() & m).collect();
                let s = r.below(1 << 12) as i64 - (1 << 11);
                io.set(&a, &b, [false, r.coin(), r.coin()], s);
                ctx.chk.push(&io.ins, None);
            }
            Beat::Step(Step { a, b, clear, last }) => {
                if clear {
                    steps.clear();
                    ctx.chk.mark_restart();
                }
                steps.push((a.clone(), b.clone()));
                if !last {
                    io.set(&a, &b, [true, clear, false], r.below(64) as i64 - 32);
                    ctx.chk.push(&io.ins, None);
                    continue;
                }
                // Each PE's operand sequences; the shift looks at the largest exact sum.
                let seqs: Vec<(Vec<u64>, Vec<u64>)> = (0..rows * cols)
                    .map(|i| {
                        let x = steps.iter().map(|(a, _)| a[i / cols]).collect();
                        let y = steps.iter().map(|(_, b)| b[i % cols]).collect();
                        (x, y)
                    })
                    .collect();
                let largest = seqs
                    .iter()
                    .map(|(x, y)| {
                        let dot: i128 = x
                            .iter()
                            .zip(y)
                            .map(|(&p, &q)| i128::from(f.to_int(p)) * i128::from(f.to_int(q)))
                            .sum();
                        dot.unsigned_abs()
                    })
                    .max()
                    .unwrap_or(0);
                let s = shift_for(f, &mut r, largest);
                let (ea, eb, e) = scales(&mut r, s);
                let outs: Vec<ReadOut> = seqs.iter().map(|(x, y)| f.dot(x, ea, y, eb, e)).collect();
                io.set(&a, &b, [true, clear, true], s);
                io.expect(&outs);
                ctx.chk.push(&io.ins, Some(&io.want));
            }
        }
    }
    Ok(())
}

/// The monitor's counters as a host computes them from the golden flags.
struct Counts {
    bits: u32,
    seen: u64,
    overflows: u64,
    overflows_half: u64,
}

impl Counts {
    fn add(&mut self, seen: u64, over: u64, half: u64) {
        let max = mask(self.bits);
        self.seen = self.seen.saturating_add(seen).min(max);
        self.overflows = self.overflows.saturating_add(over).min(max);
        self.overflows_half = self.overflows_half.saturating_add(half).min(max);
    }
}

fn drive_monitor(ctx: &mut Ctx) -> Result<()> {
    let p = ctx.p;
    let f = dfix_format(p)?;
    let (rows, cols) = (p.rows as usize, p.cols as usize);
    let outputs = rows * cols;
    let l = ctx.layout;
    let (valid, clear, msk, over, half) = (
        l.slot("in_valid")?,
        l.slot("clear")?,
        l.slot("mask")?,
        l.slot("overflow")?,
        l.slot("overflow_half")?,
    );
    let outs = [
        l.slot("seen")?,
        l.slot("overflows")?,
        l.slot("overflows_half")?,
    ];
    let (mut ins, mut want) = (vec![0u64; l.in_slots], vec![0u64; l.out_slots]);
    let Mode::Vectors(n) = ctx.mode else {
        unreachable!("checked by plan")
    };
    let mut r = Rng(ctx.seed);
    let mut counts = Counts {
        bits: p.counter_bits,
        seen: 0,
        overflows: 0,
        overflows_half: 0,
    };
    let mut started = false;
    while ctx.chk.cycle() < n {
        let is_valid = r.below(10) < 7;
        // Start with a clear so that every stretch after a restart point begins from zero.
        let is_clear = !started || r.below(25) == 0;
        started = true;
        // The outputs counted: all, a smaller tile's rectangle, or any.
        let (m, nn) = (
            1 + r.below(rows as u64) as usize,
            1 + r.below(cols as u64) as usize,
        );
        let kind = r.below(10);
        let mask_bits: Vec<bool> = (0..outputs)
            .map(|i| match kind {
                0..=4 => true,
                5..=7 => i / cols < m && i % cols < nn,
                _ => r.coin(),
            })
            .collect();
        // The flags: golden read-outs of short random dot products at one shift, or any.
        let flags: Vec<(bool, bool)> = if is_valid && r.below(5) > 0 {
            let k = 1 + r.below(6) as usize;
            let small = r.coin();
            let seqs: Vec<(Vec<u64>, Vec<u64>)> = (0..outputs)
                .map(|_| {
                    let x = (0..k).map(|_| word(f, &mut r, small)).collect();
                    let y = (0..k).map(|_| word(f, &mut r, small)).collect();
                    (x, y)
                })
                .collect();
            let largest = (f.max_int() as u128).pow(2) * k as u128 / 4;
            let s = shift_for(f, &mut r, largest);
            seqs.iter()
                .map(|(x, y)| {
                    let o = golden(f, &mut r, x, y, s);
                    (o.overflow, o.overflow_at_half)
                })
                .collect()
        } else {
            (0..outputs).map(|_| (r.coin(), r.coin())).collect()
        };
        ins.iter_mut().for_each(|x| *x = 0);
        ins[valid] = is_valid as u64;
        ins[clear] = is_clear as u64;
        for (i, (&mk, &(o, h))) in mask_bits.iter().zip(&flags).enumerate() {
            put_bits(&mut ins[msk..], i, 1, mk as u64);
            put_bits(&mut ins[over..], i, 1, o as u64);
            put_bits(&mut ins[half..], i, 1, h as u64);
        }
        if is_clear {
            (counts.seen, counts.overflows, counts.overflows_half) = (0, 0, 0);
            ctx.chk.mark_restart();
        }
        if !is_valid {
            ctx.chk.push(&ins, None);
            continue;
        }
        let counted = |pick: fn(&(bool, bool)) -> bool| {
            mask_bits
                .iter()
                .zip(&flags)
                .filter(|(&mk, fl)| mk && pick(fl))
                .count() as u64
        };
        let seen = mask_bits.iter().filter(|&&mk| mk).count() as u64;
        counts.add(seen, counted(|fl| fl.0), counted(|fl| fl.1));
        want.iter_mut().for_each(|x| *x = 0);
        for (slot, v) in outs
            .iter()
            .zip([counts.seen, counts.overflows, counts.overflows_half])
        {
            put_bits(&mut want[*slot..], 0, counts.bits, v);
        }
        ctx.chk.push(&ins, Some(&want));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The random read-outs cover all three outcomes: overflow at e, only at e − 1, neither.
    #[test]
    fn random_read_outs_overflow_at_the_scale_at_its_half_and_not() {
        for w in [2, 6, 10, 16, 32] {
            let f = DfixFormat::new(w).unwrap();
            let mut r = Rng(w as u64);
            let mut classes = [0u32; 3];
            for t in 0..2000 {
                for e in tile(f, &mut r, 2, 3, t % 2 == 0) {
                    let Beat::Step(Step { a, b, .. }) = e else {
                        continue;
                    };
                    let largest = a
                        .iter()
                        .flat_map(|&x| b.iter().map(move |&y| (x, y)))
                        .map(|(x, y)| i128::from(f.to_int(x)) * i128::from(f.to_int(y)))
                        .map(i128::unsigned_abs)
                        .max()
                        .unwrap_or(0);
                    let s = shift_for(f, &mut r, largest);
                    let o = golden(f, &mut r, &a[..1], &b[..1], s);
                    assert!(!o.overflow || o.overflow_at_half);
                    classes[o.overflow as usize + o.overflow_at_half as usize] += 1;
                }
            }
            let total: u32 = classes.iter().sum();
            eprintln!(
                "dfix:{w}: none {}, half only {}, both {}",
                classes[0], classes[1], classes[2]
            );
            assert!(
                classes.iter().all(|&c| c * 20 > total),
                "dfix:{w}: {classes:?}"
            );
        }
    }
}
