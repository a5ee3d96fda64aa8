//! MX block products (`--format mx:ELEM[:bK]`, issue 33): C = A·B with every row of A and
//! every column of B quantized in blocks of K along the reduction dimension (golden
//! `MxQuantizer::quantize_vector`, §6.3), each element the blocks' dot products (§6.4, exact)
//! added in f32 in block order (the specification's reference accumulation,
//! `MxVector::dot_f32`). Operands and result are f32 words.
//!
//! Element types whose block sums fit f64 GEMMs (`MxFormat::dense_product_is_exact`: every
//! OCP type at K ≤ 32, fp8 E5M2 in two GEMMs) take golden's dense path: each operand
//! quantized in its own layout into a matrix of values (`MxFormat::quantize_dense`), then
//! `mx::matmul_dense` (A, where its stored rows are its vectors, a run of rows at a time:
//! `rows_in_runs`); the others take `MxVector`s and `mx::matmul_f32`. Both are `dot_f32`
//! of each row and column, bit for bit (golden's tests).

use lpgen_golden::mx::{matmul_dense, matmul_f32, Along, F32Word, MxFormat, MxVector, Operand};

use std::mem::MaybeUninit;

use super::{check_shapes, fill_in_parallel, in_parallel, join_column_blocks, Mat, View, Word};
use crate::TrainError;
use lpgen_golden::kernel::Cut;

/// Every row of `a` and every column of `b` (f32 words) quantized in blocks along the
/// reduction dimension (golden `MxQuantizer::quantize_vector`), on `threads` threads.
pub fn mx_vectors<W: Word>(
    mx: MxFormat,
    a: View<'_, W>,
    b: View<'_, W>,
    threads: usize,
) -> (Vec<MxVector>, Vec<MxVector>) {
    // Row i of A and column j of B, each a vector along the reduction dimension.
    let (rows, cols) = (a.row_major(), b.columns());
    let quantizer = mx.quantizer();
    let vectors = |m: &Mat<W>| -> Vec<MxVector> {
        in_parallel(threads, m.rows, |r| {
            let xs: Vec<f64> = m.row(r).iter().map(|&w| f32_value(w)).collect();
            quantizer.quantize_vector(&xs)
        })
    };
    (vectors(&rows), vectors(&cols))
}

/// The value of an f32 word: `w.value(f32)` without building the f32 arithmetic per word
/// (a word's bits are binary32's on every machine).
fn f32_value<W: Word>(w: W) -> f64 {
    f64::from(f32::from_bits(w.to_bits() as u32))
}

/// The golden MX product of the f32 words `a` (m×k) and `b` (k×n), on `threads` threads:
/// every element `MxVector::dot_f32` of its row and column, bit for bit, computed on blocks
/// of rows, or of columns where there are more, one block per thread (the result does not
/// depend on the count).
pub fn mx_product<W: Word + F32Word>(
    mx: MxFormat,
    a: View<'_, W>,
    b: View<'_, W>,
    threads: usize,
) -> Result<Mat<W>, TrainError> {
    check_shapes(a, b)?;
    let (m, n) = (a.rows(), b.cols());
    let parts = threads.min(m.max(n)).max(1);
    let by_rows = Cut::longer(m, n) == Cut::Rows;
    let range = |p: usize, len: usize| p * len / parts..(p + 1) * len / parts;
    let blocks = if mx.dense_product_is_exact() && by_rows && !a.transposed {
        // A's rows as stored: each part's rows a run at a time, quantized and multiplied
        // while their values are in cache.
        let qb = dense(mx, b, Along::Columns, threads);
        let ob = qb.operand();
        in_parallel(threads, parts, |p| {
            rows_in_runs(mx, a.mat, range(p, m), ob, RUN_VALUES)
        })
    } else if mx.dense_product_is_exact() {
        // A's vectors are its rows, B's its columns: along the stored rows unless transposed.
        let (qa, qb) = (
            dense(mx, a, Along::Rows, threads),
            dense(mx, b, Along::Columns, threads),
        );
        let (oa, ob) = (qa.operand(), qb.operand());
        in_parallel(threads, parts, |p| {
            if by_rows {
                matmul_dense(&mx, rows_of(oa, range(p, m)), ob)
            } else {
                matmul_dense(&mx, oa, cols_of(ob, range(p, n)))
            }
        })
    } else {
        let (qa, qb) = mx_vectors(mx, a, b, threads);
        in_parallel(threads, parts, |p| {
            if by_rows {
                matmul_f32(&qa[range(p, m)], &qb)
            } else {
                matmul_f32(&qa, &qb[range(p, n)])
            }
        })
    };
    let values = if by_rows {
        blocks.concat()
    } else {
        join_column_blocks(m, &blocks)
    };
    Ok(Mat {
        rows: m,
        cols: n,
        data: values
            .iter()
            .map(|v| W::from_bits(u64::from(v.to_bits())))
            .collect(),
    })
}

/// The values of a run of rows that [`rows_in_runs`] quantizes and multiplies at a time
/// (1 MB of f64s, the L2 cache of the Zen 4 it was measured on). Quantizing the whole of A
/// first and multiplying it after took 1.13× the time of an MXFP8 LeNet-5 epoch; runs of
/// 2^14 values were slower still (each run's block GEMMs pack B again), 2^16 and 2^18 about
/// as fast (docs/perf.md).
const RUN_VALUES: usize = 1 << 17;

/// Rows `rows` of C = A·B (`a` as stored: its rows are A's vectors) against B quantized
/// (`b`): runs of about `run` of A's values, whole rows, quantized
/// (`MxFormat::quantize_dense_to`, each row as the whole matrix quantizes it) and multiplied
/// (`matmul_dense`, each element from its row and column alone) in turn: the same elements
/// as of the whole.
fn rows_in_runs<W: Word + F32Word>(
    mx: MxFormat,
    a: &Mat<W>,
    rows: std::ops::Range<usize>,
    b: Operand<'_>,
    run: usize,
) -> Vec<f32> {
    let k = a.cols;
    let per = (run / k.max(1)).max(1);
    let mut out = Vec::with_capacity(rows.len() * b.cols);
    let mut values: Vec<f64> = Vec::with_capacity(per * k);
    for r0 in rows.clone().step_by(per) {
        let r1 = (r0 + per).min(rows.end);
        let x = &a.data[r0 * k..r1 * k];
        values.clear();
        mx.quantize_dense_to(
            x,
            (r1 - r0, k),
            Along::Rows,
            &mut values.spare_capacity_mut()[..x.len()],
        );
        // SAFETY: `quantize_dense_to` wrote every one of the x.len() values (it asserts so).
        unsafe { values.set_len(x.len()) };
        out.extend(matmul_dense(
            &mx,
            Operand::stored(&values, r1 - r0, k, false),
            b,
        ));
    }
    out
}

/// An operand's values quantized in its stored layout (`MxFormat::quantize_dense`).
struct Dense {
    values: Vec<f64>,
    rows: usize,
    cols: usize,
    transposed: bool,
}

impl Dense {
    fn operand(&self) -> Operand<'_> {
        Operand::stored(&self.values, self.rows, self.cols, self.transposed)
    }
}

/// The operand `v` quantized along its reduction dimension, which runs `along` the
/// operand (its rows for A, its columns for B): along the stored matrix the same way, or the
/// other way where the view is transposed. On `threads` threads, each quantizing a run of
/// whole stored rows into its part of the one matrix: single rows where the vectors lie along
/// them, whole blocks of K rows where they run down the columns, so that every block is
/// quantized as one (the same values for every thread count).
fn dense<W: Word + F32Word>(mx: MxFormat, v: View<'_, W>, along: Along, threads: usize) -> Dense {
    let stored = match (along, v.transposed) {
        (Along::Rows, false) | (Along::Columns, true) => Along::Rows,
        (Along::Columns, false) | (Along::Rows, true) => Along::Columns,
    };
    let (rows, cols) = (v.mat.rows, v.mat.cols);
    // Values that stay together (whole rows, or whole blocks of rows), in one run per thread.
    let unit = match stored {
        Along::Rows => 1,
        Along::Columns => mx.block,
    } * cols;
    let mut values: Vec<f64> = Vec::with_capacity(rows * cols);
    if rows * cols > 0 {
        let groups = (rows * cols).div_ceil(unit);
        let per = groups.div_ceil(threads.min(groups).max(1)) * unit;
        let room = &mut values.spare_capacity_mut()[..rows * cols];
        let mut runs: Vec<&mut [MaybeUninit<f64>]> = room.chunks_mut(per).collect();
        fill_in_parallel(threads, &mut runs, |first, block| {
            for (r, out) in (first..).zip(block.iter_mut()) {
                let x = &v.mat.data[r * per..r * per + out.len()];
                mx.quantize_dense_to(x, (out.len() / cols, cols), stored, out);
            }
        });
    }
    // SAFETY: every run of rows was quantized into its part of the room, and the runs cover
    // the rows × cols values (`quantize_dense_to` asserts that it writes all of its part).
    unsafe { values.set_len(rows * cols) };
    Dense {
        values,
        rows,
        cols,
        transposed: v.transposed,
    }
}

/// Rows `r` of the operand.
fn rows_of(o: Operand<'_>, r: std::ops::Range<usize>) -> Operand<'_> {
    Operand {
        values: &o.values[r.start * o.row_stride..],
        rows: r.len(),
        ..o
    }
}

/// Columns `c` of the operand.
fn cols_of(o: Operand<'_>, c: std::ops::Range<usize>) -> Operand<'_> {
    Operand {
        values: &o.values[c.start * o.col_stride..],
        cols: c.len(),
        ..o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f32 words of wide range (zeros among them, a NaN now and then), from an LCG.
    fn words(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = match s >> 58 {
                    0 => 0.0,
                    1 if s & 0xff == 0 => f32::NAN,
                    _ => ((s >> 20) as u32 as f32 / 4e9 - 0.5) * 2f32.powi((s % 40) as i32 - 20),
                };
                u64::from(v.to_bits())
            })
            .collect()
    }

    /// Quantizing an operand on threads gives golden's `quantize_dense` of the whole matrix,
    /// bit for bit: vectors along the stored rows and down its columns (blocks of rows kept
    /// whole), blocks of 32, 3 and 5, row counts no block size divides, views transposed and
    /// not, 1 to 8 threads; and the products on one and three threads agree.
    #[test]
    fn quantizing_on_threads_is_quantizing_the_whole() {
        for (name, block) in [("fp8:e4m3", 32), ("fp4:e2m1", 3), ("int8", 5)] {
            let mx = MxFormat::new(name, block).unwrap();
            for (rows, cols) in [(1, 7), (37, 9), (100, 3), (70, 40), (0, 4)] {
                let m = Mat {
                    rows,
                    cols,
                    data: words(rows * cols, (rows * cols) as u64),
                };
                for along in [Along::Rows, Along::Columns] {
                    let whole = mx.quantize_dense(&m.data, rows, cols, along);
                    // The view whose reduction dimension runs `along` the stored matrix.
                    let (view, asked) = match along {
                        Along::Rows => (m.view(), Along::Rows),
                        Along::Columns => (m.t(), Along::Rows),
                    };
                    for threads in [1, 2, 3, 8] {
                        let got = dense(mx, view, asked, threads).values;
                        let same = whole.len() == got.len()
                            && whole
                                .iter()
                                .zip(&got)
                                .all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(same, "{mx} {rows}x{cols} {along:?} on {threads} threads");
                    }
                }
            }
            let (a, b) = (
                Mat {
                    rows: 45,
                    cols: 70,
                    data: words(45 * 70, 1),
                },
                Mat {
                    rows: 70,
                    cols: 6,
                    data: words(70 * 6, 2),
                },
            );
            // By runs of A's rows (runs of 1, 2 and 7 rows, and the whole), each element
            // as golden's product of the whole quantized matrices.
            let qa = mx.quantize_dense(&a.data, 45, 70, Along::Rows);
            let qb = dense(mx, b.view(), Along::Columns, 1);
            let whole = matmul_dense(&mx, Operand::stored(&qa, 45, 70, false), qb.operand());
            for run in [1, 200, 490, 1 << 20] {
                let got = rows_in_runs(mx, &a, 0..45, qb.operand(), run);
                let tail = rows_in_runs(mx, &a, 9..45, qb.operand(), run);
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&whole), "{mx}: runs of {run} values");
                assert_eq!(bits(&tail), bits(&whole[9 * 6..]), "{mx}: rows 9.. by runs");
            }
            let one = mx_product(mx, a.view(), b.view(), 1).unwrap();
            let three = mx_product(mx, a.view(), b.view(), 3).unwrap();
            assert_eq!(one.data, three.data, "{mx}: the product on three threads");
        }
    }
}
