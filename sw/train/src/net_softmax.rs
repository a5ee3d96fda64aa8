//! The softmax, over rows of any lengths: the network's output (rows of the classes, in L)
//! and attention's causal softmax (row i of a head's scores holds only the keys 0..=i, so no
//! mask value such as −∞ is needed and every family runs it). One sequence of machine
//! operations for both: the row maxima column by column, x − max, e^x by [`Net::exp`], the
//! row sums as products with a column of ones (rows of one length in one product), and the
//! divisions.

use lpgen_golden::{AluOp, Format};

use crate::config::Place;
use crate::machine::{Machine, Mat};
use crate::net::Net;
use crate::TrainError;

/// Where each row of a ragged list starts in its flat data.
fn starts(lens: &[usize]) -> Vec<usize> {
    lens.iter()
        .scan(0, |s, &l| {
            let at = *s;
            *s += l;
            Some(at)
        })
        .collect()
}

/// Each of `v`'s words repeated as many times as its row is long.
pub(crate) fn per_row<W: Copy>(v: &[W], lens: &[usize]) -> Vec<W> {
    v.iter()
        .zip(lens)
        .flat_map(|(&w, &l)| std::iter::repeat_n(w, l))
        .collect()
}

impl<M: Machine> Net<'_, M> {
    /// The sum of each row of the ragged rows `data` (row r has `lens[r]` words) in `f`,
    /// accumulated at `place`: the rows of one length as one product with a column of ones,
    /// the lengths in increasing order.
    pub(crate) fn ragged_sums(
        &mut self,
        f: Format,
        place: Place,
        data: &[M::Word],
        lens: &[usize],
    ) -> Result<Vec<M::Word>, TrainError> {
        let acc = self.cfg.accumulation(place, f);
        let at = starts(lens);
        let mut lengths: Vec<usize> = lens.to_vec();
        lengths.sort_unstable();
        lengths.dedup();
        let mut sums = vec![None; lens.len()];
        for len in lengths {
            let rows: Vec<usize> = (0..lens.len()).filter(|&r| lens[r] == len).collect();
            let m = Mat {
                rows: rows.len(),
                cols: len,
                data: rows
                    .iter()
                    .flat_map(|&r| data[at[r]..at[r] + len].iter().copied())
                    .collect(),
            };
            let s = self.row_sums(f, acc, m.view())?;
            for (&r, w) in rows.iter().zip(s) {
                sums[r] = Some(w);
            }
        }
        Ok(sums
            .into_iter()
            .map(|s| s.expect("every row has a length"))
            .collect())
    }

    /// The softmax of each of the ragged rows `data` (row r has `lens[r]` ≥ 1 words) in `f`,
    /// its denominators accumulated at `place`: e^(z − max) / Σ e^(z − max).
    pub(crate) fn softmax_rows(
        &mut self,
        f: Format,
        place: Place,
        data: &[M::Word],
        lens: &[usize],
    ) -> Result<Vec<M::Word>, TrainError> {
        let at = starts(lens);
        let widest = lens.iter().copied().max().unwrap_or(0);
        // The maxima column by column; a column's lanes are the rows that reach it.
        let mut max: Vec<M::Word> = at.iter().map(|&s| data[s]).collect();
        for c in 1..widest {
            let rows: Vec<usize> = (0..lens.len()).filter(|&r| lens[r] > c).collect();
            let so_far: Vec<M::Word> = rows.iter().map(|&r| max[r]).collect();
            let col: Vec<M::Word> = rows.iter().map(|&r| data[at[r] + c]).collect();
            let m = self.m.lanes(f, AluOp::Max, &so_far, &col)?;
            for (&r, w) in rows.iter().zip(m) {
                max[r] = w;
            }
        }
        let d = self.m.lanes(f, AluOp::Sub, data, &per_row(&max, lens))?;
        let e = self.exp(f, &d)?;
        let s = self.ragged_sums(f, place, &e, lens)?;
        self.m.lanes(f, AluOp::Div, &e, &per_row(&s, lens))
    }

    /// Softmax of each row of `z` (in L): e^(z − max) / Σ e^(z − max).
    pub(crate) fn softmax(&mut self, z: &Mat<M::Word>) -> Result<Mat<M::Word>, TrainError> {
        let l = self.cfg.stages.l;
        let lens = vec![z.cols; z.rows];
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data: self.softmax_rows(l, Place::Softmax, &z.data, &lens)?,
        })
    }
}
