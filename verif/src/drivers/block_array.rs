//! The stimulus loop of the arrays whose PEs take one block pair a step, round its exact dot
//! product to f32 and add that to an f32 accumulator from +0 (`array --pe mx` and `--pe
//! nvfp4`: the reference accumulation training uses). The loop is the array's host protocol
//! (docs/rtl.md, `array`): the corner tiles, then the mode's tiles, bubbles with random
//! operands and controls that must be ignored, the golden `F32Acc` of every PE, and each
//! `last` step's f32 words expected on `c_out`. A driver gives its blocks and their terms
//! ([`BlockArray`]); the tiles come from [`tiles`], as for every array driver.

use lpgen_golden::mx::F32Acc;
use lpgen_hdl::units::array_protocol::{Beat, Host, Protocol};

use super::tiles::{self, BlockSource, Ports, Regime};
use super::{Ctx, Mode};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// One step of every PE (a block of each row of A and of each column of B), or a bubble.
pub(crate) type Event<B> = tiles::Event<B>;

/// The blocks of a block array's format, as its driver makes them and its PE reads them.
pub(crate) trait BlockArray: BlockSource {
    /// The PE's name, for messages (`mx`, `nvfp4`).
    const PE: &'static str;

    /// Bits of one element code on the ports, after the block's 8-bit scale.
    fn elem_bits(&self) -> usize;

    /// A block's scale byte and element codes, as the ports carry them.
    fn parts(b: &Self::Block) -> (u8, &[u8]);

    /// The corner tiles, streamed first in both modes.
    fn corners(&self, r: &mut Rng, shape: (usize, usize)) -> Vec<Event<Self::Block>>;

    /// How many exhaustive tiles there are (`plan` refuses the mode where they are too many).
    fn exhaustive_tiles(&self) -> u64;

    /// Exhaustive tile `i`.
    fn exhaustive(&self, r: &mut Rng, shape: (usize, usize), i: u64) -> Vec<Event<Self::Block>>;

    /// A PE's term for a block pair: the golden dot product rounded to f32.
    fn term(&self, a: &Self::Block, b: &Self::Block) -> Result<f32>;
}

/// Streams `ctx`'s stimuli through an array of `g`'s blocks, checking every read-out.
pub(crate) fn drive<G: BlockArray>(ctx: &mut Ctx, g: &G) -> Result<()> {
    let p = ctx.p;
    let l = ctx.layout;
    if lpgen_hdl::units::array_accumulations(p) != 1 {
        let what = format!("the {} PE interleaves no accumulations", G::PE);
        return Err(VerifError(what));
    }
    let shape @ (rows, cols) = (p.rows as usize, p.cols as usize);
    let w = g.elem_bits();
    let ports = Ports::new(l)?;
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    // A block: the scale at bits [7:0], element i at 8 + i·w.
    let put = |buf: &mut [u64], at: usize, blk: &G::Block| {
        let (scale, codes) = G::parts(blk);
        put_bits(buf, at, 8, u64::from(scale));
        for (i, &c) in codes.iter().enumerate() {
            put_bits(buf, at + 8 + i * w, w as u32, u64::from(c));
        }
    };
    let block_bits = 8 + G::parts(&g.zero()).1.len() * w;
    let mut pes = vec![F32Acc::new(); rows * cols];
    let mut r = Rng(ctx.seed);
    let mut host = Host::new(Protocol::of(p));
    host.extend(0, g.corners(&mut r, shape));
    let (n, exhaustive) = match ctx.mode {
        Mode::Vectors(n) => (n, 0),
        Mode::Exhaustive => (u64::MAX, g.exhaustive_tiles()),
    };
    let (mut next, mut tiles) = (0u64, 0u64);
    loop {
        let cycle = ctx.chk.cycle();
        let beat = host.next(cycle, |_, queue| {
            if ctx.mode == Mode::Exhaustive {
                if next < exhaustive {
                    queue.extend(g.exhaustive(&mut r, shape, next));
                    next += 1;
                }
            } else if cycle < n {
                queue.extend(tiles::block_tile(&mut r, g, shape, tiles % 2 == 0));
                tiles += 1;
            }
        });
        let s = match beat {
            None => break,
            Some(Beat::Step(s)) => s,
            Some(Beat::Bubble) => {
                // Random operands and controls without `valid`: ignored.
                let junk: Vec<G::Block> = (0..rows.max(cols))
                    .map(|_| g.random(&mut r, Regime::Wide))
                    .collect();
                let controls = [false, r.coin(), r.coin()];
                let operands = (&junk[..rows], &junk[..cols]);
                ports.set(&mut ins, operands, block_bits, controls, put);
                ctx.chk.push(&ins, None);
                continue;
            }
        };
        if s.clear {
            ctx.chk.mark_restart();
        }
        for (i, acc) in pes.iter_mut().enumerate() {
            if s.clear {
                acc.clear();
            }
            acc.add(g.term(&s.a[i / cols], &s.b[i % cols])?);
        }
        let controls = [true, s.clear, s.last];
        ports.set(&mut ins, (&s.a, &s.b), block_bits, controls, put);
        if s.last {
            want.iter_mut().for_each(|x| *x = 0);
            for (i, acc) in pes.iter().enumerate() {
                let word = u64::from(acc.result().to_bits());
                put_bits(&mut want[ports.c..], i * 32, 32, word);
            }
            ctx.chk.push(&ins, Some(&want));
        } else {
            ctx.chk.push(&ins, None);
        }
    }
    Ok(())
}
