//! The lockstep frame for lanes that step each line through its own k: sums that a zero
//! product leaves as they were ([`Lanes::zero_products_leave_sums`]: naive sums of posits,
//! where s + 0 is s), and lanes that step a run of zero products only until their state
//! stands still ([`Lanes::steps_runs`]: LNS Kahan sums). Each line of the narrow side goes
//! into the lanes as its steps: its nonzero values with their k, and for the second kind
//! one zero value at the head of each of its runs of zeros. So a line skips its own zeros
//! whatever the other lines hold. Most products of a convolution's training are such
//! zeros: ReLU's, max pooling's three in four, and the padding of the im2col rows of a full
//! convolution.
//!
//! Which side goes into the lanes: the one that leaves the fewer steps. A narrow line of z
//! steps against a wide side of w lines takes z·⌈w/L⌉ steps of L lanes; the frame counts
//! both ways (and both widths, where it is given two) and takes the fewer, so a sparse side
//! is the narrow one even when it is the longer. The wide side's zeros are stepped through
//! (each lane would need its own k). Lanes of the second kind go to the
//! [`dense`](super::dense) frame where their steps are more than half of its.

use super::steps::{Steps, SLACK};
use super::{block, common_k, dense_decoded, Decoded, Lanes};
use crate::arith::Bits;

/// One side of a product, decoded: its lines' values one after another, whether each holds
/// the NaN word, and each one's count of steps (its nonzero values, and with `runs` the
/// heads of its runs of zeros).
struct Side<T> {
    values: Vec<T>,
    nan: Vec<bool>,
    steps: Vec<usize>,
    runs: bool,
}

impl<T: Steps> Side<T> {
    fn decode<const L: usize>(
        lanes: &impl Lanes<T, L>,
        lines: &[&[Bits]],
        k: usize,
        runs: bool,
    ) -> Side<T> {
        let mut side = Side {
            values: Vec::with_capacity(lines.len() * k),
            nan: Vec::with_capacity(lines.len()),
            steps: Vec::with_capacity(lines.len()),
            runs,
        };
        for line in lines {
            side.nan.push(lanes.decode(line, &mut side.values));
            let values = &side.values[side.values.len() - k..];
            side.steps.push(T::count(values, runs));
        }
        side
    }
    fn line(&self, p: usize, k: usize) -> &[T] {
        &self.values[p * k..(p + 1) * k]
    }
    fn lines(&self) -> usize {
        self.nan.len()
    }
    /// The decoded lines, for the [`dense_decoded`] frame.
    fn decoded(&self) -> Decoded<'_, T> {
        Decoded {
            values: &self.values,
            nan: &self.nan,
        }
    }
}

/// Every dot product of `rows` with `cols` (all of length K), row-major, by `lanes`, whose
/// sums a zero product leaves ([`Lanes::zero_products_leave_sums`]).
pub(crate) fn sparse<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Steps,
{
    sparse_either(lanes, lanes, rows, cols)
}

/// [`sparse`] by `l_lanes` or by `m_lanes`, lanes of one family that give the same sums L
/// and M at a time: whichever side and lanes leave the fewest lane-steps (z·⌈w/L⌉·L of a
/// narrow side of z steps against a wide side of w lines). A wide side of 6 lines (a
/// convolution's channels) fills 6 of 8 lanes, not 6 of 16. Counting lane-steps assumes a
/// lane-step costs the same at either width, as it does where both are AVX-512 vectors, one
/// or two a line (the posit and LNS lanes' `Half512` and `Run512`); eight posit lanes on AVX2
/// instead were slower (docs/perf.md). Lanes that step runs take the dense frame where the
/// fewest are more than half of its lane-steps (a step of theirs costs more).
pub(crate) fn sparse_either<T, const L: usize, const M: usize>(
    l_lanes: &impl Lanes<T, L>,
    m_lanes: &impl Lanes<T, M>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Steps,
{
    let leave = l_lanes.zero_products_leave_sums() && m_lanes.zero_products_leave_sums();
    let runs = l_lanes.steps_runs() && m_lanes.steps_runs();
    assert!(leave || runs, "lanes that step each line through its own k");
    let (m, n, k) = (rows.len(), cols.len(), common_k(rows, cols));
    assert!(u32::try_from(k).is_ok(), "K fits the lines' u32 indices");
    let (rows, cols) = (
        Side::decode(l_lanes, rows, k, !leave),
        Side::decode(l_lanes, cols, k, !leave),
    );
    let (in_rows, in_cols): (usize, usize) = (rows.steps.iter().sum(), cols.steps.iter().sum());
    let steps = |lines: usize, lanes: usize| lines.div_ceil(lanes) * lanes;
    // (lane-steps, the wide side is the columns, by the L lanes); the first fewest wins.
    let ways = [
        (in_rows * steps(n, L), true, true),
        (in_cols * steps(m, L), false, true),
        (in_rows * steps(n, M), true, false),
        (in_cols * steps(m, M), false, false),
    ];
    let (fewest, wide_is_cols, by_l) = ways.into_iter().min_by_key(|w| w.0).unwrap();
    // The dense frame's lane-steps (every k of every narrow line against the longer side),
    // of which it skips only the runs where a whole block's lanes are zero.
    if !leave && 2 * fewest > m.min(n) * steps(m.max(n), L) * k {
        return dense_decoded(l_lanes, &rows.decoded(), &cols.decoded(), k);
    }
    let sides = match wide_is_cols {
        true => Sides {
            narrow: rows,
            wide: cols,
            wide_is_cols,
            n,
        },
        false => Sides {
            narrow: cols,
            wide: rows,
            wide_is_cols,
            n,
        },
    };
    match by_l {
        true => sides.run(l_lanes, k),
        false => sides.run(m_lanes, k),
    }
}

/// The decoded sides of a product, as the frame put them.
struct Sides<T> {
    narrow: Side<T>,
    wide: Side<T>,
    wide_is_cols: bool,
    /// The product's columns.
    n: usize,
}

impl<T: Steps> Sides<T> {
    /// Every dot product, row-major, by `lanes`.
    fn run<const L: usize>(&self, lanes: &impl Lanes<T, L>, k: usize) -> Vec<Bits> {
        let (narrow, wide, n) = (&self.narrow, &self.wide, self.n);
        let blocks: Vec<Vec<[T; L]>> = ((0..wide.lines()).collect::<Vec<_>>().chunks(L))
            .map(|lines| block(lines.iter().map(|&q| wide.line(q, k)), k))
            .collect();
        // The narrow lines longest first, so that the lines of a group (which all run to the
        // longest's length) are near one length; groups of at most the lanes' lines at once
        // ([`Lanes::lines_at_once`]), as even as they can
        // be.
        let mut order: Vec<usize> = (0..narrow.lines()).collect();
        order.sort_by_key(|&p| std::cmp::Reverse(narrow.steps[p]));
        let rows = lanes.lines_at_once();
        let groups = order.len().div_ceil(rows);
        let cuts: Vec<usize> = (0..=groups)
            .map(|g| g * order.len() / groups.max(1))
            .collect();
        let mut out = vec![0; narrow.lines() * wide.lines()];
        let mut sums = vec![[T::default(); L]; rows];
        // A group's lines as their steps (values and their k, `Steps::compact`), each in a
        // stretch of its own. Lanes whose sums zero products leave get
        // every line as long as the group's longest: past a line's steps its stretch holds
        // zero values at k of the line. Lanes that step runs get each line as long as it is.
        let (mut ks, mut values) = (vec![], vec![]);
        for group in cuts.windows(2).map(|c| &order[c[0]..c[1]]) {
            let len = narrow.steps[group[0]];
            // A line's whole K and the slack of `Steps::compact`'s vector stores.
            let stretch = k + SLACK;
            // The buffers grow to the largest group and are not cleared: every k in them is
            // below K, and a padded line's values past its steps are set to zero here.
            if ks.len() < group.len() * stretch {
                ks.resize(group.len() * stretch, 0u32);
                values.resize(group.len() * stretch, T::default());
            }
            for (r, &p) in group.iter().enumerate() {
                let at = r * stretch..(r + 1) * stretch;
                let count = T::compact(
                    narrow.line(p, k),
                    narrow.runs,
                    &mut ks[at.clone()],
                    &mut values[at.clone()],
                );
                if !narrow.runs {
                    values[at.start + count..at.start + len].fill(T::default());
                }
            }
            let line_len = |r: usize| match narrow.runs {
                true => narrow.steps[group[r]],
                false => len,
            };
            let xs: Vec<(&[u32], &[T])> = (0..group.len())
                .map(|r| r * stretch..r * stretch + line_len(r))
                .map(|at| (&ks[at.clone()], &values[at]))
                .collect();
            for (bi, block) in blocks.iter().enumerate() {
                let sums = &mut sums[..xs.len()];
                match narrow.runs {
                    true => lanes.run_runs(&xs, block, sums),
                    false => lanes.run_sparse(&xs, block, sums),
                }
                for (&p, sums) in group.iter().zip(sums.iter()) {
                    for (l, &s) in sums.iter().enumerate().take(wide.lines() - bi * L) {
                        let q = bi * L + l;
                        let (i, j) = if self.wide_is_cols { (p, q) } else { (q, p) };
                        out[i * n + j] = if narrow.nan[p] || wide.nan[q] {
                            lanes.special()
                        } else {
                            lanes.encode(s)
                        };
                    }
                }
            }
        }
        out
    }
}
