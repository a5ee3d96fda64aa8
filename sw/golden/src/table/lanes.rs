//! Naive sums of a format of at most 8 bits on the lockstep frame (`kernel::lockstep`), by
//! its tables: each step of an output is `s = add[s, mul[x, y]]`, two look-ups, in the
//! output's k order from the zero word. The working value of a word is the word itself (an
//! `i32`; the frame's padding, 0, is the zero word of posits and +0 of floats). L outputs of
//! up to [`ROWS`] lines step side by side, independent chains of look-ups; the frame decodes
//! each operand once and runs its lanes over the longer side, so a convolution's six
//! channels are no longer a remainder summed one output at a time.
//!
//! The family says what its words allow ([`Zeros`]): where a step with the zero word leaves
//! every sum as it was, each line skips its own zeros (the sparse frame), and otherwise every
//! k is stepped (the dense frame). Posits allow it always (0·y is 0, NaR apart, which the
//! frame marks, and s + 0 is s); floats where no operand is ∞ or NaN and no result flushes to
//! zero (float/family.rs says why). [`OpTables::naive_dot`] (and the family's `add` and `mul` behind it)
//! stays the definition; the tests hold these lanes to it.

use crate::arith::Bits;
use crate::kernel::lockstep::{dense, sparse_either, Lanes, ROWS};

use super::OpTables;

/// The narrow lanes: a convolution's six channels fill six of eight.
const L: usize = 8;

/// The wide lanes of the sparse frame, for sides of more lines (fewer groups to step).
const L16: usize = 16;

/// What a family's words allow the frame.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Zeros {
    /// A step whose operand is the zero word leaves the sum as it was, unless the other
    /// operand is `nan`, which makes every sum it enters `nan` (posits: NaR): each line
    /// skips its own zeros.
    LeaveSums { nan: Option<Bits> },
    /// Every step counts (floats with an ∞ or NaN operand: 0·∞ is NaN; or flushing to zero:
    /// −0 + +0 is +0). The tables give the specials.
    Step,
}

/// The frame's view of one format's tables, N outputs a line.
#[derive(Clone, Copy)]
struct TableLanes<'a, const N: usize> {
    ops: &'a OpTables,
    zeros: Zeros,
}

impl OpTables {
    /// Every naive dot product of `rows` with `cols` (all of length K), row-major, each
    /// [`OpTables::naive_dot`] from the zero word (word 0).
    pub(crate) fn naive_dots(&self, zeros: Zeros, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let lanes = TableLanes::<L> { ops: self, zeros };
        match zeros {
            Zeros::LeaveSums { .. } => {
                sparse_either(&lanes, &TableLanes::<L16> { ops: self, zeros }, rows, cols)
            }
            Zeros::Step => dense(&lanes, rows, cols),
        }
    }
}

/// One step of a lane: s + x·y, each rounded by table.
#[inline(always)]
fn step(ops: &OpTables, s: i32, x: u64, y: i32) -> i32 {
    let p = ops.mul[OpTables::at(x, y as u64)];
    i32::from(ops.add[OpTables::at(s as u64, u64::from(p))])
}

/// The sums of R dense lines against the N lanes of `y`.
fn run_rows<const N: usize, const R: usize>(
    ops: &OpTables,
    xs: &[&[i32]],
    y: &[[i32; N]],
    out: &mut [[i32; N]],
) {
    assert!(xs.iter().all(|x| x.len() == y.len()));
    let mut s = [[0i32; N]; R];
    for (k, yk) in y.iter().enumerate() {
        for (s, x) in s.iter_mut().zip(xs) {
            let x = x[k] as u64;
            for (s, &q) in s.iter_mut().zip(yk) {
                *s = step(ops, *s, x, q);
            }
        }
    }
    out[..R].copy_from_slice(&s);
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

/// `$run::<N, R>(ops, xs, y, out)` for the lines `xs` in groups of at most [`ROWS`].
macro_rules! in_groups {
    ($run:ident($ops:expr, $xs:expr, $y:expr, $out:expr)) => {
        for (xs, out) in $xs.chunks(ROWS).zip($out.chunks_mut(ROWS)) {
            match xs.len() {
                1 => $run::<N, 1>($ops, xs, $y, out),
                2 => $run::<N, 2>($ops, xs, $y, out),
                3 => $run::<N, 3>($ops, xs, $y, out),
                _ => $run::<N, 4>($ops, xs, $y, out),
            }
        }
    };
}

impl<const N: usize> Lanes<i32, N> for TableLanes<'_, N> {
    fn value(&self, w: Bits) -> Option<i32> {
        match self.zeros {
            Zeros::LeaveSums { nan } if Some(w) == nan => None,
            _ => Some(w as i32),
        }
    }
    /// The NaN word the frame writes over the outputs a `nan` word enters (the frame marks
    /// none where there is none).
    fn special(&self) -> Bits {
        match self.zeros {
            Zeros::LeaveSums { nan: Some(nan) } => nan,
            _ => unreachable!("only a nan word is marked"),
        }
    }
    fn encode(&self, v: i32) -> Bits {
        v as Bits
    }
    /// [`Lanes::value`] of each word, without the `Option` (so that the loop vectorizes).
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        let Zeros::LeaveSums { nan: Some(nan) } = self.zeros else {
            out.extend(line.iter().map(|&w| w as i32));
            return false;
        };
        let mut seen = false;
        out.extend(line.iter().map(|&w| {
            seen |= w == nan;
            if w == nan {
                0
            } else {
                w as i32
            }
        }));
        seen
    }
    fn run(&self, xs: &[&[i32]], y: &[[i32; N]], out: &mut [[i32; N]]) {
        in_groups!(run_rows(self.ops, xs, y, out))
    }
    fn zero_products_leave_sums(&self) -> bool {
        matches!(self.zeros, Zeros::LeaveSums { .. })
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; N]], out: &mut [[i32; N]]) {
        in_groups!(run_sparse_rows(self.ops, xs, y, out))
    }
}

#[cfg(test)]
mod tests {
    use super::{TableLanes, Zeros, L};
    use crate::float::FloatFormat;
    use crate::kernel::lockstep::dense;
    use crate::posit::{PositFormat, PositStandard};
    use crate::table::OpTables;

    /// Random sides of `bits`-bit words from `word` (which may return a special word), of
    /// 1 to 20 lines so that either is the narrow one and the lanes' blocks end short: every
    /// naive dot product by the lanes equals the table's own `naive_dot` of its row and
    /// column, the definition, by the family's frame and by the dense one.
    fn check(
        ops: &OpTables,
        zeros: impl Fn(&[&[u64]], &[&[u64]]) -> Zeros,
        mut word: impl FnMut(usize, usize) -> u64,
    ) {
        for (m, n, k) in [(1, 1, 1), (6, 20, 9), (20, 6, 33), (9, 17, 64), (3, 1, 100)] {
            for round in 0..6 {
                let a: Vec<Vec<u64>> = (0..m)
                    .map(|i| (0..k).map(|_| word(i, round)).collect())
                    .collect();
                let b: Vec<Vec<u64>> = (0..n)
                    .map(|j| (0..k).map(|_| word(j, round)).collect())
                    .collect();
                let rows: Vec<&[u64]> = a.iter().map(Vec::as_slice).collect();
                let cols: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
                let zeros = zeros(&rows, &cols);
                let got = ops.naive_dots(zeros, &rows, &cols);
                let lanes = TableLanes::<L> { ops, zeros };
                assert_eq!(dense(&lanes, &rows, &cols), got, "{m}×{k}×{n} dense");
                for (i, row) in rows.iter().enumerate() {
                    for (j, col) in cols.iter().enumerate() {
                        assert_eq!(
                            got[i * n + j],
                            ops.naive_dot(0, row, col),
                            "{zeros:?} {m}×{k}×{n} round {round}: output ({i}, {j})"
                        );
                    }
                }
            }
        }
    }

    /// Posits: zeros in runs and alone, more of them in some lines, NaR in one line of the
    /// last round.
    #[test]
    fn posit_table_lanes_are_the_naive_dots() {
        let mut next = crate::test_words(0x5eed_0f7a_b1e5);
        for f in [
            PositFormat::new(8, 2, PositStandard::Std2022, false).unwrap(),
            PositFormat::new(8, 1, PositStandard::Draft2017, false).unwrap(),
            PositFormat::new(6, 1, PositStandard::Draft2017, false).unwrap(),
        ] {
            let ops = &crate::posit::table::tables(f).unwrap().ops;
            let mask = (1u64 << f.n) - 1;
            let zeros = |_: &[&[u64]], _: &[&[u64]]| Zeros::LeaveSums { nan: Some(f.nar()) };
            check(ops, zeros, |line, round| match next() % 8 {
                0..=3 if !line.is_multiple_of(3) => 0,
                4 if round == 5 && line == 0 => f.nar(),
                _ => next() & mask,
            });
        }
    }

    /// Floats: +0 words in runs and alone, −0, and values of every magnitude (sums that
    /// cancel to zero, products below the subnormals); in the first three rounds finite
    /// words only (the lines skip their zeros, but with `:ftz`), then ±∞ and NaN among them.
    #[test]
    fn float_table_lanes_are_the_naive_dots() {
        let mut next = crate::test_words(0x00f1_0a7a_b1e5);
        for f in [
            FloatFormat::new(4, 3, true, false, false).unwrap(), // OCP E4M3
            FloatFormat::new(5, 2, false, false, false).unwrap(), // E5M2: ∞ and NaN
            FloatFormat::new(5, 2, false, true, true).unwrap(),  // saturating, flushing
            FloatFormat::new_no_nan(2, 1, false).unwrap(),       // E2M1: every word finite
        ] {
            let ops = crate::float::tables(f).unwrap();
            let mask = (1u64 << f.width()) - 1;
            let sign = 1u64 << (f.width() - 1);
            let finite = |w: u64| crate::family_trait::Family::to_f64(&f, w).is_finite();
            let skipped = std::cell::Cell::new(0);
            let zeros = |rows: &[&[u64]], cols: &[&[u64]]| {
                let z = f.zero_steps(rows, cols);
                skipped.set(skipped.get() + usize::from(matches!(z, Zeros::LeaveSums { .. })));
                z
            };
            check(ops, zeros, |line, round| match next() % 8 {
                0..=2 if !line.is_multiple_of(3) => 0,
                3 => sign,
                _ => loop {
                    let w = next() & mask;
                    if round >= 3 || finite(w) {
                        break w;
                    }
                },
            });
            let expected = if f.ftz { 0 } else { 15 };
            assert!(
                skipped.get() >= expected,
                "{f:?}: {} products skipped zeros",
                skipped.get()
            );
        }
    }

    /// Why a format that flushes to zero steps every k: 1.25·2^emin − 1.5·2^emin flushes to
    /// −0, and the next step, 0·1 = +0, makes the sum +0.
    #[test]
    fn a_flushing_float_steps_its_zeros() {
        use crate::family_trait::Family;
        let f = FloatFormat::new(5, 2, false, true, true).unwrap();
        let (a, b, one) = (
            f.round(false, 5, f.emin() - 2),
            f.round(true, 3, f.emin() - 1),
            f.round(false, 1, 0),
        );
        assert_eq!(f.add(a, b), f.zero_of(true), "the sum flushes to −0");
        let ops = crate::float::tables(f).unwrap();
        let (row, col) = ([a, b, 0], [one, one, one]);
        let dots = ops.naive_dots(f.zero_steps(&[&row], &[&col]), &[&row], &[&col]);
        assert_eq!(dots, [f.zero_of(false)]);
        assert_eq!(ops.naive_dot(0, &row, &col), f.zero_of(false));
    }
}
