//! Naive sums of posits of at most 8 bits on the lockstep frame (`kernel::lockstep`), by the
//! format's tables: each step of an output is `s = add[s, mul[x, y]]`, two look-ups, in the
//! output's k order. The frame's sparse lines let each line skip its own zeros: a zero word's
//! product is the zero word whatever the other word (NaR apart, which the frame marks), and
//! s + 0 is s, so a step with a zero operand leaves its sum. Most products of a
//! convolution's training are such zeros (ReLU's, pooling's, the padding of a full
//! convolution). The working value of a word is the word itself (an `i32`, zero the zero
//! word); L outputs of up to [`ROWS`] lines step side by side, independent chains of
//! look-ups. `OpTables::naive_dot` (and the family's `add` and `mul` behind it) stays the
//! definition; the tests hold these lanes to it.

use crate::arith::Bits;
use crate::kernel::lockstep::{sparse_either, Lanes, ROWS};
use crate::table::OpTables;

use super::super::PositFormat;
use super::Tables;

/// The narrow lanes: a convolution's six channels fill six of eight.
const L: usize = 8;

/// The wide lanes, for sides of more lines (fewer groups of lines to step).
const L16: usize = 16;

/// The frame's view of one format's tables, L outputs a line.
#[derive(Clone, Copy)]
pub(crate) struct TableLanes<'a, const N: usize> {
    ops: &'a OpTables,
    nar: Bits,
}

impl Tables {
    /// Every naive dot product of `rows` with `cols` (words of `f`, all of length K),
    /// row-major: each line skips its own zeros ([`sparse_either`]).
    pub(crate) fn naive_dots(
        &self,
        f: PositFormat,
        rows: &[&[Bits]],
        cols: &[&[Bits]],
    ) -> Vec<Bits> {
        let (ops, nar) = (&self.ops, f.nar());
        sparse_either(
            &TableLanes::<L> { ops, nar },
            &TableLanes::<L16> { ops, nar },
            rows,
            cols,
        )
    }
}

/// One step of a lane: s + x·y, each rounded by table.
#[inline(always)]
fn step(ops: &OpTables, s: i32, x: u64, y: i32) -> i32 {
    let p = ops.mul[OpTables::at(x, y as u64)];
    i32::from(ops.add[OpTables::at(s as u64, u64::from(p))])
}

/// The sums of R lines given by their steps (all of one length) against the N lanes of `y`.
fn run_sparse_rows<const N: usize, const R: usize>(
    ops: &OpTables,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; N]],
    out: &mut [[i32; N]],
) {
    let len = xs[0].0.len();
    assert!(xs
        .iter()
        .all(|&(ks, vs)| ks.len() == len && vs.len() == len));
    let mut s = [[0i32; N]; R];
    for i in 0..len {
        for (s, &(ks, vs)) in s.iter_mut().zip(xs) {
            let (yk, x) = (&y[ks[i] as usize], vs[i] as u64);
            for (s, &q) in s.iter_mut().zip(yk) {
                *s = step(ops, *s, x, q);
            }
        }
    }
    out[..R].copy_from_slice(&s);
}

impl<const N: usize> Lanes<i32, N> for TableLanes<'_, N> {
    fn value(&self, w: Bits) -> Option<i32> {
        (w != self.nar).then_some(w as i32)
    }
    fn special(&self) -> Bits {
        self.nar
    }
    fn encode(&self, v: i32) -> Bits {
        v as Bits
    }
    /// [`Lanes::value`] of each word, without the `Option` (so the loop vectorizes).
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        let mut nar = false;
        out.extend(line.iter().map(|&w| {
            nar |= w == self.nar;
            if w == self.nar {
                0
            } else {
                w as i32
            }
        }));
        nar
    }
    /// Dense lines as lines of steps at every k (the frame gives these lanes sparse lines).
    fn run(&self, xs: &[&[i32]], y: &[[i32; N]], out: &mut [[i32; N]]) {
        let every: Vec<u32> = (0..y.len() as u32).collect();
        let xs: Vec<(&[u32], &[i32])> = xs.iter().map(|&x| (&every[..], x)).collect();
        self.run_sparse(&xs, y, out)
    }
    /// A zero word's product is the zero word (NaR apart, which the frame marks), and a
    /// naive sum's step adding it is s + 0 = s.
    fn zero_products_leave_sums(&self) -> bool {
        true
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; N]], out: &mut [[i32; N]]) {
        for (xs, out) in xs.chunks(ROWS).zip(out.chunks_mut(ROWS)) {
            match xs.len() {
                1 => run_sparse_rows::<N, 1>(self.ops, xs, y, out),
                2 => run_sparse_rows::<N, 2>(self.ops, xs, y, out),
                3 => run_sparse_rows::<N, 3>(self.ops, xs, y, out),
                _ => run_sparse_rows::<N, 4>(self.ops, xs, y, out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::{TableLanes, L};
    use crate::kernel::lockstep::dense;
    use crate::posit::{PositFormat, PositStandard};

    /// Every naive dot product of random sides (zeros in runs and alone, NaR in a few lines,
    /// sides of 1 to 20 lines so that either is the narrow one and the lanes' blocks end
    /// short) equals the table's own `naive_dot` of its row and column, the definition.
    #[test]
    fn table_lanes_are_the_naive_dots() {
        let mut next = crate::test_words(0x5eed_0f7a_b1e5);
        for f in [
            PositFormat::new(8, 2, PositStandard::Std2022, false).unwrap(),
            PositFormat::new(8, 1, PositStandard::Draft2017, false).unwrap(),
            PositFormat::new(6, 1, PositStandard::Draft2017, false).unwrap(),
        ] {
            let t = tables(f).unwrap();
            let mask = (1u64 << f.n) - 1;
            for (m, n, k) in [(1, 1, 1), (6, 20, 9), (20, 6, 33), (9, 17, 64), (3, 1, 100)] {
                for round in 0..6 {
                    let mut word = |line: usize| match next() % 8 {
                        // Zeros: more of them in some lines, and NaR in round 5's first line.
                        0..=3 if !line.is_multiple_of(3) => 0,
                        4 if round == 5 && line == 0 => f.nar(),
                        _ => next() & mask,
                    };
                    let a: Vec<Vec<u64>> =
                        (0..m).map(|i| (0..k).map(|_| word(i)).collect()).collect();
                    let b: Vec<Vec<u64>> =
                        (0..n).map(|j| (0..k).map(|_| word(j)).collect()).collect();
                    let rows: Vec<&[u64]> = a.iter().map(Vec::as_slice).collect();
                    let cols: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
                    let got = t.naive_dots(f, &rows, &cols);
                    // The dense frame too (every line at every k, by `Lanes::run`).
                    let lanes = TableLanes::<L> {
                        ops: &t.ops,
                        nar: f.nar(),
                    };
                    assert_eq!(dense(&lanes, &rows, &cols), got, "{f:?} {m}×{k}×{n} dense");
                    for (i, row) in rows.iter().enumerate() {
                        for (j, col) in cols.iter().enumerate() {
                            assert_eq!(
                                got[i * n + j],
                                t.ops.naive_dot(0, row, col),
                                "{f:?} {m}×{k}×{n} round {round}: output ({i}, {j})"
                            );
                        }
                    }
                }
            }
        }
    }
}
