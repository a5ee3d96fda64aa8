//! MX block products (`--format mx:ELEM[:bK]`, issue 33): C = A·B with every row of A and
//! every column of B quantized in blocks of K along the reduction dimension (golden
//! `MxQuantizer::quantize_vector`, §6.3), each element the blocks' dot products (§6.4, exact)
//! added in f32 in block order (the specification's reference accumulation,
//! `MxVector::dot_f32`). Operands and result are f32 words.
//!
//! Element types whose block sums fit an f64 (every one but fp8 E5M2) take golden's dense
//! path: each operand quantized in its own layout into a matrix of values
//! (`MxFormat::quantize_dense`), then `mx::matmul_dense`; E5M2 takes `MxVector`s and
//! `mx::matmul_f32`. Both are `dot_f32` of each row and column, bit for bit (golden's tests).

use lpgen_golden::mx::{matmul_dense, matmul_f32, Along, F32Word, MxFormat, MxVector, Operand};

use super::{check_shapes, in_parallel, Mat, View, Word};
use crate::TrainError;

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
    let by_rows = m >= n;
    let range = |p: usize, len: usize| p * len / parts..(p + 1) * len / parts;
    let blocks = if mx.dense_product_is_exact() {
        // A's vectors are its rows, B's its columns: along the stored rows unless transposed.
        let (qa, qb) = (dense(mx, a, Along::Rows), dense(mx, b, Along::Columns));
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
    let mut c = Mat::filled(m, n, W::from_bits(0));
    let word = |v: &f32| W::from_bits(u64::from(v.to_bits()));
    if by_rows {
        // Row blocks, one after another.
        for (slot, v) in c.data.iter_mut().zip(blocks.iter().flatten()) {
            *slot = word(v);
        }
    } else {
        // Column blocks: row i is each block's row i in turn.
        let mut c0 = 0;
        for block in &blocks {
            let width = block.len() / m.max(1);
            for (i, row) in block.chunks(width.max(1)).enumerate().take(m) {
                for (j, v) in row.iter().enumerate() {
                    c.data[i * n + c0 + j] = word(v);
                }
            }
            c0 += width;
        }
    }
    Ok(c)
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
/// other way where the view is transposed.
fn dense<W: Word + F32Word>(mx: MxFormat, v: View<'_, W>, along: Along) -> Dense {
    let stored = match (along, v.transposed) {
        (Along::Rows, false) | (Along::Columns, true) => Along::Rows,
        (Along::Columns, false) | (Along::Rows, true) => Along::Columns,
    };
    let (rows, cols) = (v.mat.rows, v.mat.cols);
    Dense {
        values: mx.quantize_dense(&v.mat.data, rows, cols, stored),
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
