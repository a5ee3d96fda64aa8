//! `quant1`: columns streamed through twice (docs/rtl.md, "`quant1`"), checked against
//! `lpgen_golden::onebit::Quantizer::column` with the quire (exact) sum. Every word's output is
//! compared in full: in pass 1 the bit, v = g + r on `r_out` and the previous column's means
//! (still held); in pass 2 the bit, the new residual and this column's two means; `busy` low.
//!
//! Random mode: columns of length 1..=rows of mixed signs, all non-negative, all negative,
//! zeros, extreme (saturating) words, small integers (rounding ties) and zero residuals, with
//! bubbles carrying garbage, longer gaps, and columns without pass 2 (no error feedback).
//! Restart points (for `cosim --workers K`) are a cycle of `rst` before a column: about one
//! column in 8 in random mode, every 64th in exhaustive mode.
//! Exhaustive mode: every column of every length 1..=rows whose elements take every (g, r)
//! pair, for formats and lengths where that is at most 2^21 columns (fix:1:1 with rows 3,
//! fix:2:2 with rows 2).

use lpgen_golden::onebit::Quantizer;
use lpgen_golden::{Bits, Calc, Format, SumMode};
use lpgen_hdl::units::quant1_gap;
use lpgen_hdl::Params;

use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// The most columns an exhaustive run enumerates (about 10 cycles each).
const MAX_EXHAUSTIVE_COLUMNS: u128 = 1 << 21;

/// Columns between the restart points of an exhaustive run (a distributed run's stretches).
const RESTART_COLUMNS: u64 = 64;

/// The format's word width, if quant1 takes it (fix, posits).
fn word_width(p: &Params) -> Result<u32> {
    match p.format {
        Format::Fix(f) => Ok(f.width()),
        Format::Posit(f) => Ok(f.n),
        _ => Err(VerifError(format!(
            "quant1 is checked on fix and posit formats, not {}",
            p.format
        ))),
    }
}

/// Columns of every length 1..=rows with every (g, r) pair per element.
fn exhaustive_columns(width: u32, rows: u32) -> u128 {
    let pairs = 1u128 << (2 * width);
    let mut total = 0u128;
    let mut of_len = 1u128;
    for _ in 0..rows {
        of_len = of_len.saturating_mul(pairs);
        total = total.saturating_add(of_len);
    }
    total
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let width = word_width(p)?;
    match mode {
        Mode::Exhaustive => {
            let columns = exhaustive_columns(width, p.rows);
            if columns > MAX_EXHAUSTIVE_COLUMNS {
                return Err(no_exhaustive(
                    p,
                    &format!(
                        "every column of up to {} (g, r) pairs is {columns} columns, over the \
                         {MAX_EXHAUSTIVE_COLUMNS} an exhaustive run takes",
                        p.rows
                    ),
                ));
            }
            let per_column = 2 * u128::from(p.rows) + u128::from(quant1_gap(p));
            Ok(Plan {
                cycles: (columns * per_column) as u64,
                drive,
            })
        }
        Mode::Vectors(n) => Ok(Plan { cycles: n, drive }),
    }
}

/// Input and output slots of the unit's ports.
struct Slots {
    rst: usize,
    valid: usize,
    replay: usize,
    first: usize,
    last: usize,
    g: usize,
    r: usize,
    onebit: usize,
    r_out: usize,
    neg: usize,
    pos: usize,
}

/// Feeds columns and keeps the means the unit holds.
struct Feeder<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    q: Quantizer,
    s: Slots,
    mask: u64,
    ins: Vec<u64>,
    want: Vec<u64>,
    /// The means the unit shows: the last divided column's (zero after reset).
    held: (Bits, Bits),
    /// Rows pushed (the checker's cycle stops where a distributed run skips a stretch).
    rows: u64,
}

impl Feeder<'_, '_> {
    fn push(&mut self, due: bool) {
        self.rows += 1;
        let want = due.then_some(&self.want[..]);
        self.ctx.chk.push(&self.ins, want);
    }

    /// A restart point: one cycle of `rst`, after which nothing depends on earlier columns
    /// (the held means are zero again), so a distributed run may check the stretch from here
    /// on a model of its own.
    fn restart(&mut self) {
        self.ctx.chk.mark_restart();
        self.ins.fill(0);
        self.ins[self.s.rst] = 1;
        self.push(false);
        let zero = self.q.calc().zero();
        self.held = (zero, zero);
    }

    /// One idle cycle with garbage (from `rng`) on every input but `in_valid`.
    fn idle(&mut self, rng: Option<&mut Rng>) {
        self.ins.fill(0);
        if let Some(rng) = rng {
            for slot in [self.s.replay, self.s.first, self.s.last] {
                self.ins[slot] = rng.below(2);
            }
            self.ins[self.s.g] = rng.next_u64() & self.mask;
            self.ins[self.s.r] = rng.next_u64() & self.mask;
        }
        self.push(false);
    }

    /// One word of a pass, and the result due for it.
    fn word(&mut self, replay: bool, first: bool, last: bool, g: Bits, r: Bits, out: (bool, Bits)) {
        self.ins.fill(0);
        self.ins[self.s.valid] = 1;
        self.ins[self.s.replay] = replay as u64;
        self.ins[self.s.first] = first as u64;
        self.ins[self.s.last] = last as u64;
        self.ins[self.s.g] = g;
        self.ins[self.s.r] = r;
        self.want.fill(0);
        self.want[self.s.onebit] = out.0 as u64;
        self.want[self.s.r_out] = out.1;
        self.want[self.s.neg] = self.held.0;
        self.want[self.s.pos] = self.held.1;
        self.push(true);
    }

    /// Streams one column: pass 1, the wait for the dividers, and pass 2 if `replay`. With
    /// `rng`, bubbles and longer gaps are mixed in, and pass 2's `first`/`last` are garbage
    /// (the unit ignores them there).
    fn column(&mut self, g: &[Bits], r: &[Bits], replay: bool, mut rng: Option<&mut Rng>) {
        let c = self.q.calc();
        let v: Vec<Bits> = g.iter().zip(r).map(|(&g, &r)| c.add(g, r)).collect();
        let mut residual = r.to_vec();
        let mut bits = vec![0u32; g.len().div_ceil(32)];
        let rec = self.q.column(g, Some(&mut residual), &mut bits);
        let bit = |i: usize| bits[i / 32] >> (i % 32) & 1 == 1;
        let n = g.len();
        for i in 0..n {
            if let Some(rng) = rng.as_deref_mut() {
                if rng.below(8) == 0 {
                    self.idle(Some(rng));
                }
            }
            self.word(false, i == 0, i + 1 == n, g[i], r[i], (bit(i), v[i]));
        }
        self.held = (rec.neg, rec.pos);
        let mut gap = quant1_gap(self.ctx.p) - 1;
        if let Some(rng) = rng.as_deref_mut() {
            gap += rng.below(3) as u32;
        }
        for _ in 0..gap {
            self.idle(rng.as_deref_mut());
        }
        if !replay {
            return;
        }
        for i in 0..n {
            let (mut first, mut last) = (false, false);
            if let Some(rng) = rng.as_deref_mut() {
                if rng.below(8) == 0 {
                    self.idle(Some(rng));
                }
                (first, last) = (rng.coin(), rng.coin());
            }
            self.word(true, first, last, g[i], r[i], (bit(i), residual[i]));
        }
    }
}

/// A random column's words: (g, r).
fn random_column(c: &Calc, width: u32, rows: u32, rng: &mut Rng) -> (Vec<Bits>, Vec<Bits>) {
    let n = match rng.below(8) {
        0 => 1,
        1 => rows as usize,
        _ => 1 + rng.below(u64::from(rows)) as usize,
    };
    let mask = (1u64 << width) - 1;
    let top = 1u64 << (width - 1);
    // Words as two's-complement patterns (fix: the extremes; posit: NaR, ±maxpos, ±minpos).
    let extremes = [top, top + 1, mask, 0, 1, top - 2, top - 1];
    let kind = rng.below(7);
    let word = |rng: &mut Rng| -> Bits {
        let any = rng.next_u64() & mask;
        match kind {
            0 => any,
            // Non-negative words: every v is on the 1 side (saturating at the top).
            1 => any >> 1,
            // Negative words: every v is on the 0 side.
            2 => (any >> 1) | top,
            3 => 0,
            4 => rng.pick(&extremes),
            // Small integers: sums divide with ties.
            5 => c.from_f64(rng.below(9) as f64 - 4.0),
            _ => any,
        }
    };
    let g: Vec<Bits> = (0..n).map(|_| word(rng)).collect();
    let r: Vec<Bits> = (0..n)
        .map(|_| if kind == 6 { 0 } else { word(rng) })
        .collect();
    (g, r)
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let width = word_width(ctx.p)?;
    let l = ctx.layout;
    let s = Slots {
        rst: l.slot("rst")?,
        valid: l.slot("in_valid")?,
        replay: l.slot("replay")?,
        first: l.slot("first")?,
        last: l.slot("last")?,
        g: l.slot("g")?,
        r: l.slot("r")?,
        onebit: l.slot("onebit")?,
        r_out: l.slot("r_out")?,
        neg: l.slot("neg")?,
        pos: l.slot("pos")?,
    };
    let q = Quantizer::new(ctx.p.format, SumMode::Quire)
        .map_err(|e| VerifError(format!("internal: {e}")))?;
    let (ins, want) = (vec![0u64; l.in_slots], vec![0u64; l.out_slots]);
    let (mode, seed, rows) = (ctx.mode, ctx.seed, ctx.p.rows);
    let zero = q.calc().zero();
    let calc = *q.calc();
    let mut feed = Feeder {
        ctx,
        q,
        s,
        mask: (1u64 << width) - 1,
        ins,
        want,
        held: (zero, zero),
        rows: 0,
    };
    match mode {
        Mode::Vectors(n) => {
            let mut rng = Rng(seed);
            while feed.rows < n {
                // Most columns follow one whose means the unit still shows; some start anew.
                if rng.below(8) == 0 {
                    feed.restart();
                }
                let (g, r) = random_column(&calc, width, rows, &mut rng);
                let replay = rng.below(6) != 0;
                feed.column(&g, &r, replay, Some(&mut rng));
            }
        }
        Mode::Exhaustive => {
            let w = width;
            let pair_bits = 2 * w;
            for n in 1..=rows as usize {
                let columns = 1u64 << (pair_bits as usize * n);
                let (mut g, mut r) = (vec![0; n], vec![0; n]);
                for k in 0..columns {
                    if k % RESTART_COLUMNS == 0 {
                        feed.restart();
                    }
                    for i in 0..n {
                        let pair = k >> (pair_bits as usize * i);
                        g[i] = pair & feed.mask;
                        r[i] = (pair >> w) & feed.mask;
                    }
                    feed.column(&g, &r, true, None);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustive_sizes() {
        assert_eq!(exhaustive_columns(3, 3), 64 + 4096 + 262_144);
        assert_eq!(exhaustive_columns(5, 2), 1024 + (1 << 20));
        assert!(exhaustive_columns(5, 3) > MAX_EXHAUSTIVE_COLUMNS);
        assert_eq!(exhaustive_columns(32, 65536), u128::MAX);
    }
}
