//! The systolic `array` of every PE kind against the golden matrix product: random tiles
//! (every other one smaller than the array, zero words outside it), K up to 24 streamed in
//! two chunks with bubbles between them (bubbles carry random operands and controls that must
//! be ignored), sometimes a snapshot (`last`) after the first chunk, tiles back to back at the
//! minimum spacing of two `last` steps or with gaps. Each `last` step expects every word of
//! `c_out` exactly `latency` cycles later, and `out_valid` nowhere else. Arrays whose PEs
//! interleave P accumulations (`lns-kahan` at stages 3..=5) get P such streams interleaved
//! cycle by cycle.
//!
//! The float PE with `--rounding stochastic:R` reads out under the golden stream seeded with
//! `--rounding-seed`: each `last` step presents on `sr_row_state` one state a row, row r the
//! stream's state at position base + r·n (n = C plus a random gap of 0..=2, as a tile of a
//! wider product), and expects PE (r, c) rounded by a `Rounder` at that state after c draws
//! (`ExactAcc::result_with`, the read-out of `dot_exact_with`); the stream moves on R·n
//! positions. Every other cycle carries random states, which the array must ignore.

use lpgen_golden::accumulator::Accumulator;
use lpgen_golden::float::WideAcc;
use lpgen_golden::rounding::{Rounder, Xorshift32};
use lpgen_golden::{Format, Rounding};
use lpgen_hdl::units::array_protocol::{Beat, Host, Protocol, ROW_STATE_BITS};
use lpgen_hdl::Params;

use super::tiles::{self, Event, Ports, Step};
use super::words::{family_words, FamilyWords};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    match mode {
        Mode::Exhaustive => match exhaustive_pairs(p) {
            Some(pairs) => Ok(Plan {
                cycles: 2 * pairs,
                drive,
            }),
            None => Err(no_exhaustive(
                p,
                "matrix products have no finite operand space (the float PE on words of at most 8 bits has: every product)",
            )),
        },
        Mode::Vectors(n) => Ok(Plan { cycles: n, drive }),
    }
}

/// The operand pairs of an exhaustive run: every pair of words of a float PE's format of at
/// most 8 bits (`None` for other arrays).
fn exhaustive_pairs(p: &Params) -> Option<u64> {
    let w = p.format.width();
    (matches!(p.format, Format::Float(_)) && p.pe.name() == "float" && w <= 8).then(|| 1 << (2 * w))
}

/// The exhaustive tiles (`--exhaustive`, [`exhaustive_pairs`]): tile i is two steps, pair i
/// (a = i >> w, b = i mod 2^w; every PE gets the same words) and then pair i·40503 mod 2^2w
/// (a bijection: every product is also the second term once), read out after the second:
/// round(a·b + c·d), so every product is accumulated and rounded, both alone-ish and in sums.
fn exhaustive_tile(i: u64, w: u32, rows: usize, cols: usize) -> Vec<Event<u64>> {
    let total = 1u64 << (2 * w);
    let j = i.wrapping_mul(40503) % total;
    let mask = (1u64 << w) - 1;
    let step = |pair: u64, first: bool| {
        Beat::Step(Step {
            a: vec![pair >> w; rows],
            b: vec![pair & mask; cols],
            clear: first,
            last: !first,
        })
    };
    vec![step(i, true), step(j, false)]
}

/// The golden accumulators of all R·C PEs, row-major: the family's accumulator of the PE's
/// mode (`Family::accumulator`), or with `--acc A` the float PE's running sum in A.
pub struct Pes(Vec<Box<dyn Accumulator>>);

impl Pes {
    pub fn new(p: &Params) -> Result<Pes> {
        let n = (p.rows * p.cols) as usize;
        // The registry says which accumulation the PE performs on the format's words.
        let mode = p.format.entry().pe(p.pe.name()).map(|pe| pe.mode);
        let refused = || {
            VerifError(format!(
                "array PE '{}' does not work on {}",
                p.pe.name(),
                p.format
            ))
        };
        let one = || -> Result<Box<dyn Accumulator>> {
            match (p.format, p.acc) {
                (Format::Float(f), Some(Format::Float(a))) => Ok(Box::new(WideAcc::new(f, a))),
                (_, Some(other)) => Err(VerifError(format!(
                    "--acc {other}: the float PE's wider float format only"
                ))),
                // Refused: a PE the registry does not give the family, or one whose golden
                // accumulators live elsewhere (dfix arrays: `drivers::dfix`).
                (f, None) => mode
                    .and_then(|m| f.calc().accumulator(m))
                    .ok_or_else(refused),
            }
        };
        Ok(Pes((0..n).map(|_| one()).collect::<Result<_>>()?))
    }

    /// One step k for every PE (r, c): `acc(r, c) (+)= a[r]·b[c]`, from zero if `clear`.
    pub fn step(&mut self, a: &[u64], b: &[u64], clear: bool) {
        let cols = b.len();
        for (i, acc) in self.0.iter_mut().enumerate() {
            if clear {
                acc.clear();
            }
            acc.add_product(a[i / cols], b[i % cols]);
        }
    }

    /// The read-out word of PE i.
    pub fn word(&self, i: usize) -> u64 {
        self.0[i].word()
    }

    /// The read-out words of row `row`'s `cols` PEs, PE (row, c) rounded by `r` after c
    /// draws (`array_protocol::pe_draws`: the PEs of a row draw in turn from its state; the
    /// exact float PE with stochastic rounding); `None` for other PEs.
    fn row_rounded(&self, row: usize, cols: usize, r: &mut Rounder) -> Option<Vec<u64>> {
        (0..cols)
            .map(|c| self.0[row * cols + c].word_with(r))
            .collect()
    }
}

/// The golden stream of a stochastic array (`sr_row_state`): where it is, and R.
struct Stream {
    gen: Xorshift32,
    rounding: Rounding,
    slot: usize,
}

impl Stream {
    fn new(p: &Params, l: &crate::layout::Layout) -> Result<Option<Stream>> {
        Ok(match p.rounding {
            Rounding::Nearest => None,
            Rounding::Stochastic(_) => Some(Stream {
                gen: Xorshift32::from_seed(p.rounding_seed),
                rounding: p.rounding,
                slot: l.slot("sr_row_state")?,
            }),
        })
    }
}

/// Operand words for tiles: the family's random words.
struct Words(Box<dyn FamilyWords>);

impl Words {
    fn new(f: Format) -> Words {
        Words(family_words(f))
    }
    fn get(&self, r: &mut Rng, small: bool) -> u64 {
        self.0.word(r, small)
    }
}

struct Io {
    rows: usize,
    cols: usize,
    w: u32,
    ports: Ports,
    ins: Vec<u64>,
    want: Vec<u64>,
}

impl Io {
    fn set(&mut self, a: &[u64], b: &[u64], valid: bool, clear: bool, last: bool) {
        let w = self.w;
        let put = |buf: &mut [u64], at: usize, &x: &u64| put_bits(buf, at, w, x);
        let controls = [valid, clear, last];
        (self.ports).set(&mut self.ins, (a, b), w as usize, controls, put);
    }
}

/// Drives P = `array_accumulations` interleaved streams (the host protocol's [`Host`]):
/// cycle t carries a step or a bubble of accumulation t mod P, each with its own tiles and
/// golden accumulators.
fn drive(ctx: &mut Ctx) -> Result<()> {
    let p = ctx.p;
    let l = ctx.layout;
    let proto = Protocol::of(p);
    let slots = proto.accumulations;
    let mut pes: Vec<Pes> = (0..slots).map(|_| Pes::new(p)).collect::<Result<_>>()?;
    let words = Words::new(p.format);
    let zero = p.format.calc().zero();
    let (rows, cols) = (proto.rows, proto.cols);
    let mut io = Io {
        rows,
        cols,
        w: p.format.width(),
        ports: Ports::new(l)?,
        ins: vec![0; l.in_slots],
        want: vec![0; l.out_slots],
    };
    let mut stream = Stream::new(p, l)?;
    let (n, exhaustive) = match ctx.mode {
        Mode::Vectors(n) => (n, None),
        Mode::Exhaustive => (u64::MAX, exhaustive_pairs(p)),
    };
    let mut next_pair = 0u64;
    let mut r = Rng(ctx.seed);
    let stream_slot = stream.as_ref().map(|s| s.slot);
    let mask = (1u64 << io.w) - 1;
    let bubble = |ctx: &mut Ctx, io: &mut Io, r: &mut Rng| {
        let a: Vec<u64> = (0..io.rows).map(|_| r.next_u64() & mask).collect();
        let b: Vec<u64> = (0..io.cols).map(|_| r.next_u64() & mask).collect();
        io.set(&a, &b, false, r.coin(), r.coin());
        junk_states(io, stream_slot, r);
        ctx.chk.push(&io.ins, None);
    };
    let mut host = Host::new(proto);
    let mut tiles = 0u64;
    while ctx.chk.cycle() < n {
        let cycle = ctx.chk.cycle();
        let beat = host.next(cycle, |_, queue| match exhaustive {
            Some(pairs) if next_pair < pairs => {
                queue.extend(exhaustive_tile(next_pair, io.w, rows, cols));
                next_pair += 1;
            }
            Some(_) => {}
            None => {
                let full = tiles.is_multiple_of(2);
                tiles += 1;
                let word = |r: &mut Rng, small| words.get(r, small);
                queue.extend(tiles::word_tile(&mut r, (rows, cols), full, zero, word));
            }
        });
        let step = match beat {
            // Every exhaustive tile is driven.
            None => break,
            Some(Beat::Bubble) => {
                bubble(ctx, &mut io, &mut r);
                continue;
            }
            Some(Beat::Step(s)) => s,
        };
        if step.clear && slots == 1 {
            ctx.chk.mark_restart();
        }
        let pes = &mut pes[proto.accumulation(cycle)];
        pes.step(&step.a, &step.b, step.clear);
        io.set(&step.a, &step.b, true, step.clear, step.last);
        if !step.last {
            junk_states(&mut io, stream_slot, &mut r);
            ctx.chk.push(&io.ins, None);
            continue;
        }
        io.want.iter_mut().for_each(|x| *x = 0);
        let words = match &mut stream {
            Some(s) => rounded_words(&mut io, pes, s, &mut r)?,
            None => (0..rows * cols).map(|i| pes.word(i)).collect(),
        };
        for (i, x) in words.into_iter().enumerate() {
            put_bits(&mut io.want[io.ports.c..], i * io.w as usize, io.w, x);
        }
        ctx.chk.push(&io.ins, Some(&io.want));
    }
    Ok(())
}

/// Random states on `sr_row_state` (a cycle without `last`: the array ignores them).
fn junk_states(io: &mut Io, slot: Option<usize>, r: &mut Rng) {
    if let Some(slot) = slot {
        for row in 0..io.rows {
            let junk = r.next_u64() & 0xffff_ffff;
            let at = Protocol::row_state_bit(row);
            put_bits(&mut io.ins[slot..], at, ROW_STATE_BITS, junk);
        }
    }
}

/// A `last` step of a stochastic array: presents row r's state (the stream at base + r·n,
/// n = C + a gap of 0..=2) and returns the words it expects, row-major.
fn rounded_words(io: &mut Io, pes: &Pes, s: &mut Stream, r: &mut Rng) -> Result<Vec<u64>> {
    let n = io.cols + r.below(3) as usize;
    let mut words = vec![];
    for row in 0..io.rows {
        let state = s.gen.state();
        let at = Protocol::row_state_bit(row);
        put_bits(&mut io.ins[s.slot..], at, ROW_STATE_BITS, u64::from(state));
        let mut rounder = Rounder::with_generator(s.rounding, s.gen);
        let got = pes.row_rounded(row, io.cols, &mut rounder).ok_or_else(|| {
            VerifError("stochastic rounding: the float PE with its exact accumulator only".into())
        })?;
        words.extend(got);
        for _ in 0..n {
            s.gen.step();
        }
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::SumMode;
    use lpgen_hdl::{PeKind, Unit};

    /// A 2×3 tile of 1..=max_k random steps (small words) through fresh PEs: the operand
    /// rows of A and B, and the PEs after the tile.
    fn random_tile(p: &Params, words: &Words, r: &mut Rng, max_k: u64) -> (Tile, Tile, Pes) {
        let k = 1 + r.below(max_k) as usize;
        let mut rows = |n: usize| -> Tile {
            (0..k)
                .map(|_| (0..n).map(|_| words.get(r, true)).collect())
                .collect()
        };
        let (a, b) = (rows(2), rows(3));
        let mut pes = Pes::new(p).unwrap();
        for kk in 0..k {
            pes.step(&a[kk], &b[kk], kk == 0);
        }
        (a, b, pes)
    }

    type Tile = Vec<Vec<u64>>;

    /// A row of stochastic read-outs is the golden `Calc::dot_exact_with` of each PE's terms,
    /// PE (r, c) under a `Rounder` at the row's state after c draws.
    #[test]
    fn stochastic_rows_equal_the_golden_rounded_dot_products() {
        let mut p = Params::new(Unit::Array, "fp8:e5m2".parse().unwrap());
        (p.rows, p.cols, p.pe) = (2, 3, PeKind::Float);
        let c = p.format.calc();
        let words = Words::new(p.format);
        let mut r = Rng(9);
        let rounding = Rounding::Stochastic(5);
        let mut moved = 0;
        for t in 0..100u32 {
            let (a, b, pes) = random_tile(&p, &words, &mut r, 20);
            for row in 0..2 {
                let gen = Xorshift32::at(0x1234_5678 ^ (t * 2 + row as u32)).unwrap();
                let got = pes
                    .row_rounded(row, 3, &mut Rounder::with_generator(rounding, gen))
                    .unwrap();
                let mut g = gen;
                for (col, &w) in got.iter().enumerate() {
                    let x: Vec<u64> = a.iter().map(|v| v[row]).collect();
                    let y: Vec<u64> = b.iter().map(|v| v[col]).collect();
                    let want = c
                        .dot_exact_with(&x, &y, &mut Rounder::with_generator(rounding, g))
                        .unwrap();
                    assert_eq!(w, want, "tile {t} ({row}, {col})");
                    moved += usize::from(w != pes.word(row * 3 + col));
                    g.step();
                }
            }
        }
        assert!(moved > 10, "{moved}");
    }

    /// The incremental PE accumulators are the golden dot products (`Calc::dot`).
    #[test]
    fn pe_accumulators_equal_the_golden_dot_products() {
        for (fmt, pe, mode) in [
            ("lns:5:6", PeKind::LnsKahan, SumMode::Kahan),
            ("lns:5:6", PeKind::LnsPlain, SumMode::Naive),
            ("posit:16", PeKind::PositQuire, SumMode::Quire),
            ("fix:7:8", PeKind::Fix, SumMode::Quire),
            ("fp8:e4m3", PeKind::Float, SumMode::Quire),
            ("bf16", PeKind::Float, SumMode::Quire),
        ] {
            let mut p = Params::new(Unit::Array, fmt.parse().unwrap());
            (p.rows, p.cols, p.pe) = (2, 3, pe);
            let c = p.format.calc();
            let words = Words::new(p.format);
            let mut r = Rng(7);
            for _ in 0..50 {
                let (a, b, pes) = random_tile(&p, &words, &mut r, 30);
                for i in 0..6 {
                    let x: Vec<u64> = a.iter().map(|v| v[i / 3]).collect();
                    let y: Vec<u64> = b.iter().map(|v| v[i % 3]).collect();
                    assert_eq!(
                        pes.word(i),
                        c.dot(mode, &x, &y).unwrap(),
                        "{fmt} {}",
                        pe.name()
                    );
                }
            }
        }
    }
}
