//! `array --pe fdpa --fdpa MODE`: every step one chunk of L operand pairs per PE, against the
//! golden `FdpaPlan::dot_in_format` of each PE's words since its `clear` (the chunks in
//! order: the golden's k order). Each `last` step expects every word of `c_out` exactly
//! `latency` cycles later, and `out_valid` nowhere else; the host protocol is the array's
//! (docs/rtl.md, `array`).
//!
//! Corner tiles first: every special operand word at the first and the last position of a
//! random chunk, and the chunks where e_zero decides the result by one place (`fdpa`'s
//! driver), each in every PE alone and then followed by a random chunk. Then random tiles of
//! 1 ..= 2·(chunks an interval) + 2 steps (so that promotion intervals end inside and at the
//! end of tiles), in two parts with bubbles between them (bubbles carry random operands and
//! controls that must be ignored), sometimes a snapshot (`last`) after the first part; every
//! other tile smaller than the array (zero chunks outside it). Row 0 and column 0 take one
//! chunk of `fdpa`'s random kinds (narrow bands, tiny words, cancellation, specials), the
//! other rows and columns their own; now and then a step negates the step before it (the
//! carry cancels to zero), and a tile's last chunk may end in +0 words (training's padding
//! of a K that is no multiple of L).

use lpgen_golden::float::fdpa::FdpaPlan;
use lpgen_golden::Family;
use lpgen_hdl::units::array_protocol::{Beat, Host, Protocol};
use lpgen_hdl::Params;

use super::fdpa::{chunk, e_zero_chunks, plan_of};
use super::float_words::float_specials;
use super::tiles::{self, Frame, Ports};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// The corner tiles: two per special word (at the first and the last position), one per
/// e_zero chunk, each of three steps (alone; then again, followed by a random chunk).
fn corner_steps(pl: &FdpaPlan) -> u64 {
    (float_specials(pl.fmt).len() as u64 * 2 + e_zero_chunks(pl).len() as u64) * 3
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let pl = plan_of(p)?;
    let spacing = u64::from(p.rows + p.cols - 1).max(3);
    let corners = corner_steps(&pl) * spacing;
    match mode {
        Mode::Exhaustive => Err(no_exhaustive(
            p,
            "an fdpa array step is a chunk of L pairs per PE (exhaustive chunks: the fdpa unit)",
        )),
        Mode::Vectors(n) => Ok(Plan {
            cycles: corners + n,
            drive,
        }),
    }
}

/// One step of every PE: a chunk of each row of A and of each column of B.
type Step = tiles::Step<Vec<u64>>;
type Event = tiles::Event<Vec<u64>>;

/// The chunks every PE accumulated since its clear, and the golden read-out.
struct Pes {
    pl: FdpaPlan,
    cols: usize,
    a: Vec<Vec<u64>>,
    b: Vec<Vec<u64>>,
}

impl Pes {
    fn step(&mut self, s: &Step) {
        for (i, (a, b)) in self.a.iter_mut().zip(&mut self.b).enumerate() {
            if s.clear {
                a.clear();
                b.clear();
            }
            a.extend(&s.a[i / self.cols]);
            b.extend(&s.b[i % self.cols]);
        }
    }

    fn word(&self, i: usize) -> u64 {
        self.pl.dot_in_format(&self.a[i], &self.b[i])
    }
}

/// Random chunks for one step: row 0's and column 0's from one of `fdpa`'s chunks, the
/// others from their own; rows ≥ m and columns ≥ n zero.
fn random_step(
    r: &mut Rng,
    pl: &FdpaPlan,
    (rows, cols): (usize, usize),
    (m, n): (usize, usize),
) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let l = pl.chunk.l as usize;
    let (a0, b0) = chunk(r, pl);
    let mut a = vec![a0];
    let mut b = vec![b0];
    for _ in 1..rows {
        a.push(chunk(r, pl).0);
    }
    for _ in 1..cols {
        b.push(chunk(r, pl).1);
    }
    a.iter_mut().skip(m).for_each(|x| *x = vec![0; l]);
    b.iter_mut().skip(n).for_each(|x| *x = vec![0; l]);
    (a, b)
}

/// The events of one random tile (module docs).
fn tile_events(r: &mut Rng, pl: &FdpaPlan, shape: (usize, usize), full: bool) -> Vec<Event> {
    let l = pl.chunk.l as usize;
    let mn = tiles::shape(r, shape, full);
    let interval = pl.promote.map_or(2, |n| (n / pl.chunk.l) as u64);
    let k = 1 + r.below(2 * interval + 2) as usize;
    Frame::draw(r, k).events(r, |r, kk, prev: Option<&Step>| {
        let (mut a, mut b) = random_step(r, pl, shape, mn);
        if let (Some(p), true) = (prev, r.below(6) == 0) {
            // Exactly the previous step's A negated: the chunk cancels the one before.
            a =
                p.a.iter()
                    .map(|c| c.iter().map(|&w| pl.fmt.neg(w)).collect())
                    .collect();
            b = p.b.clone();
        }
        if kk + 1 == k && r.below(3) == 0 {
            // Training's padding: the last chunk ends in +0 words.
            let from = 1 + r.below(l as u64) as usize;
            a.iter_mut().for_each(|c| c[from.min(l)..].fill(0));
            b.iter_mut().for_each(|c| c[from.min(l)..].fill(0));
        }
        (a, b)
    })
}

/// A corner chunk in every PE: alone, then again followed by a random chunk.
fn corner_events(
    r: &mut Rng,
    pl: &FdpaPlan,
    shape: (usize, usize),
    a: &[u64],
    b: &[u64],
) -> Vec<Event> {
    let (rows, cols) = shape;
    let one = |clear, last| {
        Beat::Step(Step {
            a: vec![a.to_vec(); rows],
            b: vec![b.to_vec(); cols],
            clear,
            last,
        })
    };
    let (ra, rb) = random_step(r, pl, shape, shape);
    vec![
        one(true, true),
        one(true, false),
        Beat::Step(Step {
            a: ra,
            b: rb,
            clear: false,
            last: true,
        }),
    ]
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let p = ctx.p;
    let pl = plan_of(p)?;
    let lay = ctx.layout;
    if lpgen_hdl::units::array_accumulations(p) != 1 {
        return Err(VerifError(
            "the fdpa PE interleaves no accumulations".into(),
        ));
    }
    let (rows, cols) = (p.rows as usize, p.cols as usize);
    let (l, n) = (pl.chunk.l as usize, pl.fmt.width());
    let ob = l * n as usize;
    let ports = Ports::new(lay)?;
    let mut ins = vec![0u64; lay.in_slots];
    let mut want = vec![0u64; lay.out_slots];
    // A chunk of L words, word i at bit i·n.
    let put = |buf: &mut [u64], at: usize, c: &Vec<u64>| {
        for (i, &w) in c.iter().enumerate() {
            put_bits(buf, at + i * n as usize, n, w);
        }
    };
    let mut pes = Pes {
        pl,
        cols,
        a: vec![vec![]; rows * cols],
        b: vec![vec![]; rows * cols],
    };
    let mut r = Rng(ctx.seed);
    let mut host = Host::new(Protocol::of(p));
    for &s in &float_specials(pl.fmt) {
        for at in [0, l - 1] {
            let (mut a, b) = chunk(&mut r, &pl);
            a[at] = s;
            host.extend(0, corner_events(&mut r, &pl, (rows, cols), &a, &b));
        }
    }
    for (a, b) in e_zero_chunks(&pl) {
        host.extend(0, corner_events(&mut r, &pl, (rows, cols), &a, &b));
    }
    let Mode::Vectors(count) = ctx.mode else {
        return Err(VerifError("fdpa arrays run vectors only".into()));
    };
    let mut tiles = 0u64;
    loop {
        let cycle = ctx.chk.cycle();
        let beat = host.next(cycle, |_, queue| {
            if cycle < count {
                queue.extend(tile_events(
                    &mut r,
                    &pl,
                    (rows, cols),
                    tiles.is_multiple_of(2),
                ));
                tiles += 1;
            }
        });
        let s = match beat {
            None => break,
            Some(Beat::Step(s)) => s,
            Some(Beat::Bubble) => {
                // Random operands and controls without `valid`: ignored.
                let (ja, jb) = random_step(&mut r, &pl, (rows, cols), (rows, cols));
                let controls = [false, r.coin(), r.coin()];
                ports.set(&mut ins, (&ja, &jb), ob, controls, put);
                ctx.chk.push(&ins, None);
                continue;
            }
        };
        if s.clear {
            ctx.chk.mark_restart();
        }
        pes.step(&s);
        ports.set(&mut ins, (&s.a, &s.b), ob, [true, s.clear, s.last], put);
        if s.last {
            want.iter_mut().for_each(|x| *x = 0);
            for i in 0..rows * cols {
                put_bits(&mut want[ports.c..], i * n as usize, n, pes.word(i));
            }
            ctx.chk.push(&ins, Some(&want));
        } else {
            ctx.chk.push(&ins, None);
        }
    }
    Ok(())
}
