//! The random tiles every array driver streams (`array`, `array --pe dfix`, `--pe fdpa`,
//! `--pe mx`, `--pe nvfp4`): a frame drawn once, the steps from each PE kind's operands
//! (words: [`word_tile`]; scaled blocks from a [`BlockSource`]: [`block_tile`]).
//!
//! A tile is every other time smaller than the array (the PE kind's zero operands outside
//! it), takes K steps in two chunks with 0..=3 bubbles between them (a bubble carries random
//! operands and controls that must be ignored), `clear` with its first step and `last` with
//! its last, sometimes also a snapshot (`last`) at the end of the first chunk, and is
//! followed by a bubble a third of the time. The host protocol (`lpgen_hdl::units::
//! array_protocol`) then keeps the `last` steps apart.

use lpgen_hdl::units::array_protocol::{clears, Beat, Last};

use crate::layout::Layout;
use crate::rng::Rng;
use crate::Result;

/// One step of every PE: operand r of A's rows and c of B's columns (a word, a chunk of
/// words, a block), and the controls.
#[derive(Clone, Debug)]
pub(crate) struct Step<T> {
    pub a: Vec<T>,
    pub b: Vec<T>,
    pub clear: bool,
    pub last: bool,
}

impl<T> Last for Step<T> {
    fn last(&self) -> bool {
        self.last
    }
}

pub(crate) type Event<T> = Beat<Step<T>>;

/// The tile's rows and columns inside an array of `rows` × `cols`: all of them when `full`,
/// else random.
pub(crate) fn shape(r: &mut Rng, (rows, cols): (usize, usize), full: bool) -> (usize, usize) {
    if full {
        (rows, cols)
    } else {
        (
            1 + r.below(rows as u64) as usize,
            1 + r.below(cols as u64) as usize,
        )
    }
}

/// A random tile's frame: its K steps and where the two chunks meet.
pub(crate) struct Frame {
    pub k: usize,
    /// The first step of the second chunk (K when there is one chunk).
    pub split: usize,
    /// Whether the first chunk ends in a snapshot.
    pub snapshot: bool,
}

impl Frame {
    /// The frame of a tile of `k` steps.
    pub fn draw(r: &mut Rng, k: usize) -> Frame {
        let split = if k >= 2 {
            1 + r.below(k as u64 - 1) as usize
        } else {
            k
        };
        let snapshot = r.below(3) == 0;
        Frame { k, split, snapshot }
    }

    /// Whether step `kk` carries `last`.
    pub fn last(&self, kk: usize) -> bool {
        kk + 1 == self.k || (self.snapshot && kk + 1 == self.split)
    }

    /// The tile's events: step kk's operands from `step(r, kk, previous step)`, bubbles
    /// between the chunks and sometimes one after the tile.
    pub fn events<T>(
        &self,
        r: &mut Rng,
        mut step: impl FnMut(&mut Rng, usize, Option<&Step<T>>) -> (Vec<T>, Vec<T>),
    ) -> Vec<Event<T>> {
        let mut events = vec![];
        let mut prev: Option<usize> = None;
        for kk in 0..self.k {
            if kk == self.split {
                events.extend((0..r.below(4)).map(|_| Beat::Bubble));
            }
            let before = prev.map(|i| match &events[i] {
                Beat::Step(s) => s,
                Beat::Bubble => unreachable!("a step"),
            });
            let (a, b) = step(r, kk, before);
            prev = Some(events.len());
            events.push(Beat::Step(Step {
                a,
                b,
                clear: clears(kk),
                last: self.last(kk),
            }));
        }
        if r.below(3) == 2 {
            events.push(Beat::Bubble);
        }
        events
    }
}

/// `n` operands, the first `used` from `get`, the rest `zero` (outside a smaller tile).
pub(crate) fn padded<T: Clone>(
    r: &mut Rng,
    n: usize,
    used: usize,
    zero: &T,
    mut get: impl FnMut(&mut Rng) -> T,
) -> Vec<T> {
    (0..n)
        .map(|i| if i < used { get(r) } else { zero.clone() })
        .collect()
}

/// A tile of K = 1..=24 steps of words from `word(r, small)` (a tile's words all small or
/// not), `zero` outside a smaller tile: the number formats' and dfix arrays' tiles.
pub(crate) fn word_tile(
    r: &mut Rng,
    (rows, cols): (usize, usize),
    full: bool,
    zero: u64,
    word: impl Fn(&mut Rng, bool) -> u64,
) -> Vec<Event<u64>> {
    let (m, n) = shape(r, (rows, cols), full);
    let k = 1 + r.below(24) as usize;
    let small = r.coin();
    Frame::draw(r, k).events(r, |r, _, _| {
        let a = padded(r, rows, m, &zero, |r| word(r, small));
        let b = padded(r, cols, n, &zero, |r| word(r, small));
        (a, b)
    })
}

/// Where a block tile's scales come from (each block driver says which scale bytes each
/// regime means).
#[derive(Clone, Copy)]
pub(crate) enum Regime {
    /// Near 1.
    Normal,
    /// Block sums in f32's subnormal range or below it (zero and subnormal scales).
    Tiny,
    /// Near the scale's largest (overflow for MX).
    Huge,
    /// Any scale byte.
    Wide,
}

/// The blocks a block-scaled array driver (`--pe mx`, `--pe nvfp4`) streams.
pub(crate) trait BlockSource {
    type Block: Clone;
    /// The block outside a smaller tile (scale 0, codes 0).
    fn zero(&self) -> Self::Block;
    /// Random codes under a scale of `regime`.
    fn random(&self, r: &mut Rng, regime: Regime) -> Self::Block;
    /// A block the golden quantizer makes of random values.
    fn quantized(&self, r: &mut Rng) -> Self::Block;
    /// The block of the negated values.
    fn negated(&self, b: &Self::Block) -> Self::Block;
}

/// A tile of K = 1..=12 steps of blocks from `g`: the tile's scales in one regime, random
/// codes or (a third of the time) quantized blocks, sometimes a step that cancels the one
/// before it exactly (the previous A negated, the previous B), the zero block outside a
/// smaller tile.
pub(crate) fn block_tile<G: BlockSource>(
    r: &mut Rng,
    g: &G,
    (rows, cols): (usize, usize),
    full: bool,
) -> Vec<Event<G::Block>> {
    let (m, n) = shape(r, (rows, cols), full);
    let regime = [Regime::Normal, Regime::Tiny, Regime::Huge, Regime::Wide][r.below(4) as usize];
    let quantized = r.below(3) == 0;
    let k = 1 + r.below(12) as usize;
    let block = |r: &mut Rng| {
        if quantized {
            g.quantized(r)
        } else {
            g.random(r, regime)
        }
    };
    let zero = g.zero();
    Frame::draw(r, k).events(r, |r, _, prev: Option<&Step<G::Block>>| match prev {
        // Exactly the previous step's A negated and the same B: the step's term cancels
        // the one before.
        Some(p) if r.below(6) == 0 => (p.a.iter().map(|x| g.negated(x)).collect(), p.b.clone()),
        _ => (
            padded(r, rows, m, &zero, block),
            padded(r, cols, n, &zero, block),
        ),
    })
}

/// Block pair (a, b) in every PE with `clear`, then a random block pair (near 1) with `last`;
/// or, when `alone`, the pair alone with `last`: the block drivers' corner and exhaustive
/// steps.
pub(crate) fn block_pair<G: BlockSource>(
    r: &mut Rng,
    g: &G,
    (rows, cols): (usize, usize),
    (a, b): (G::Block, G::Block),
    alone: bool,
) -> Vec<Event<G::Block>> {
    let mut events = vec![Beat::Step(Step {
        a: vec![a; rows],
        b: vec![b; cols],
        clear: true,
        last: alone,
    })];
    if !alone {
        events.push(Beat::Step(Step {
            a: (0..rows).map(|_| g.random(r, Regime::Normal)).collect(),
            b: (0..cols).map(|_| g.random(r, Regime::Normal)).collect(),
            clear: false,
            last: true,
        }));
    }
    events
}

/// The corner tiles of a block pair: alone, then followed by a random block pair.
pub(crate) fn block_corner<G: BlockSource>(
    r: &mut Rng,
    g: &G,
    shape: (usize, usize),
    pair: (G::Block, G::Block),
) -> Vec<Event<G::Block>> {
    let mut events = block_pair(r, g, shape, pair.clone(), true);
    events.extend(block_pair(r, g, shape, pair, false));
    events
}

/// The ports every array driver fills (their slots in the packed buffers).
pub(crate) struct Ports {
    pub a: usize,
    pub b: usize,
    pub valid: usize,
    pub clear: usize,
    pub last: usize,
    pub c: usize,
}

impl Ports {
    pub fn new(l: &Layout) -> Result<Ports> {
        Ok(Ports {
            a: l.slot("a_in")?,
            b: l.slot("b_in")?,
            valid: l.slot("in_valid")?,
            clear: l.slot("clear")?,
            last: l.slot("last")?,
            c: l.slot("c_out")?,
        })
    }

    /// Clears `ins`, then puts a step's (or a bubble's) operands, operand i of `a` at bit
    /// i·`bits` of `a_in` (likewise `b` on `b_in`) by `put(buffer, bit, operand)`, and the
    /// controls `[in_valid, clear, last]`.
    pub fn set<T>(
        &self,
        ins: &mut [u64],
        (a, b): (&[T], &[T]),
        bits: usize,
        [valid, clear, last]: [bool; 3],
        put: impl Fn(&mut [u64], usize, &T),
    ) {
        ins.iter_mut().for_each(|x| *x = 0);
        for (i, x) in a.iter().enumerate() {
            put(&mut ins[self.a..], i * bits, x);
        }
        for (i, x) in b.iter().enumerate() {
            put(&mut ins[self.b..], i * bits, x);
        }
        ins[self.valid] = valid as u64;
        ins[self.clear] = clear as u64;
        ins[self.last] = last as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks as nonzero integers (negated: −b).
    struct Ints;

    impl BlockSource for Ints {
        type Block = i64;
        fn zero(&self) -> i64 {
            0
        }
        fn random(&self, r: &mut Rng, regime: Regime) -> i64 {
            1 + r.below(1000) as i64 + 1000 * regime as i64
        }
        fn quantized(&self, r: &mut Rng) -> i64 {
            -1 - r.below(1000) as i64
        }
        fn negated(&self, b: &i64) -> i64 {
            -b
        }
    }

    /// Some steps of block tiles cancel the one before them exactly (the previous A negated,
    /// the previous B: every PE's term is the negation of its last one).
    #[test]
    fn block_tiles_hold_steps_that_cancel_the_one_before() {
        let mut r = Rng(7);
        let (mut cancelling, mut steps) = (0, 0);
        for t in 0..400 {
            let events = block_tile(&mut r, &Ints, (3, 2), t % 2 == 0);
            let steps_of: Vec<&Step<i64>> = events
                .iter()
                .filter_map(|e| match e {
                    Beat::Step(s) => Some(s),
                    Beat::Bubble => None,
                })
                .collect();
            for w in steps_of.windows(2) {
                steps += 1;
                let negated = w[1].a.iter().zip(&w[0].a).all(|(x, y)| *x == -*y);
                if negated && w[1].b == w[0].b && w[0].a.iter().any(|&x| x != 0) {
                    cancelling += 1;
                }
            }
        }
        // One step in six after the first of a tile.
        assert!(
            cancelling > steps / 10 && cancelling < steps / 3,
            "{cancelling} of {steps}"
        );
    }
}
