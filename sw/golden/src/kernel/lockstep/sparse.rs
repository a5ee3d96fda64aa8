//! The lockstep frame for sums that a zero product leaves as they were
//! ([`Lanes::zero_products_leave_sums`]: naive sums of posits, where s + 0 is s). Each line
//! of the narrow side goes into the lanes as its nonzero values only, with their k, so that
//! a line skips its own zeros whatever the other lines hold. Most products of a
//! convolution's training are such zeros: ReLU's, max pooling's three in four, and the
//! padding of the im2col rows of a full convolution.
//!
//! Which side goes into the lanes: the one that leaves the fewer steps. A narrow line of z
//! nonzero values against a wide side of w lines takes z·⌈w/L⌉ steps of the lanes; the
//! frame counts both ways and takes the fewer, so a sparse side is the narrow one even when
//! it is the longer. The wide side's zeros are stepped through (each lane would need its own
//! k).

use super::{block, decode_into, Lanes, ROWS};
use crate::arith::Bits;

/// A line as its nonzero values and their k, in k order.
struct Sparse<T> {
    ks: Vec<u32>,
    values: Vec<T>,
}

/// Every dot product of `rows` with `cols` (all of length K), row-major, by `lanes`, whose
/// sums a zero product leaves ([`Lanes::zero_products_leave_sums`]).
pub(crate) fn sparse<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Copy + Default + PartialEq,
{
    assert!(lanes.zero_products_leave_sums());
    let (m, n) = (rows.len(), cols.len());
    let k = rows.first().or(cols.first()).map_or(0, |v| v.len());
    assert!(
        rows.iter().chain(cols).all(|v| v.len() == k),
        "rows and columns of K"
    );
    assert!(u32::try_from(k).is_ok(), "K fits the lines' u32 indices");
    // Each line decoded once, with whether it holds the NaN word.
    let decode = |side: &[&[Bits]]| -> Vec<(Vec<T>, bool)> {
        (side.iter())
            .map(|line| {
                let mut values = Vec::with_capacity(k);
                let nan = decode_into(lanes, line, &mut values);
                (values, nan)
            })
            .collect()
    };
    let (rows, cols) = (decode(rows), decode(cols));
    let nonzeros = |side: &[(Vec<T>, bool)]| -> usize {
        let line = |v: &Vec<T>| v.iter().filter(|&&v| v != T::default()).count();
        side.iter().map(|(v, _)| line(v)).sum()
    };
    // The lanes run over the side that leaves the fewer steps; `wide_is_cols` says which.
    let wide_is_cols = nonzeros(&rows) * n.div_ceil(L) <= nonzeros(&cols) * m.div_ceil(L);
    let (narrow, wide) = if wide_is_cols {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let blocks: Vec<Vec<[T; L]>> = (wide.chunks(L))
        .map(|lines| block(lines.iter().map(|(v, _)| v.as_slice()), k))
        .collect();
    let sparse: Vec<Sparse<T>> = (narrow.iter())
        .map(|(line, _)| {
            let nonzero = line.iter().enumerate().filter(|(_, &v)| v != T::default());
            let (ks, values) = nonzero.map(|(i, &v)| (i as u32, v)).unzip();
            Sparse { ks, values }
        })
        .collect();
    // The narrow lines longest first, so that the lines of a group (which all run to the
    // longest's length) are near one length; groups of at most ROWS, as even as they can be.
    let mut order: Vec<usize> = (0..narrow.len()).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(sparse[p].ks.len()));
    let groups = order.len().div_ceil(ROWS);
    let cuts: Vec<usize> = (0..=groups)
        .map(|g| g * order.len() / groups.max(1))
        .collect();
    let mut out = vec![0; m * n];
    let mut sums = [[T::default(); L]; ROWS];
    for group in cuts.windows(2).map(|c| &order[c[0]..c[1]]) {
        // Each line padded to the group's length with zero values at k 0.
        let len = sparse[group[0]].ks.len();
        let padded: Vec<Sparse<T>> = (group.iter())
            .map(|&p| {
                let (mut ks, mut values) = (sparse[p].ks.clone(), sparse[p].values.clone());
                ks.resize(len, 0);
                values.resize(len, T::default());
                Sparse { ks, values }
            })
            .collect();
        let xs: Vec<(&[u32], &[T])> = (padded.iter())
            .map(|s| (s.ks.as_slice(), s.values.as_slice()))
            .collect();
        for (bi, block) in blocks.iter().enumerate() {
            let sums = &mut sums[..xs.len()];
            lanes.run_sparse(&xs, block, sums);
            for (&p, sums) in group.iter().zip(sums.iter()) {
                for (l, &s) in sums.iter().enumerate().take(wide.len() - bi * L) {
                    let q = bi * L + l;
                    let (i, j) = if wide_is_cols { (p, q) } else { (q, p) };
                    out[i * n + j] = if narrow[p].1 || wide[q].1 {
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
