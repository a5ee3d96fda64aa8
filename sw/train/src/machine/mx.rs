//! MX block products (`--format mx:ELEM[:bK]`, issue 33): C = A·B with every row of A and
//! every column of B quantized in blocks of K along the reduction dimension (golden
//! `MxQuantizer::quantize_vector`, §6.3), each element the blocks' dot products (§6.4, exact)
//! added in f32 in block order (the specification's reference accumulation,
//! `MxVector::dot_f32`). Operands and result are f32 words.

use lpgen_golden::mx::{matmul_f32, MxFormat, MxVector};

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
/// golden `mx::matmul_f32` (each element `MxVector::dot_f32` of its row and column, bit for
/// bit) on blocks of rows, or of columns where there are more, one block per thread (the
/// result does not depend on the count).
pub fn mx_product<W: Word>(
    mx: MxFormat,
    a: View<'_, W>,
    b: View<'_, W>,
    threads: usize,
) -> Result<Mat<W>, TrainError> {
    check_shapes(a, b)?;
    let (qa, qb) = mx_vectors(mx, a, b, threads);
    let (m, n) = (a.rows(), b.cols());
    let parts = threads.min(m.max(n)).max(1);
    let by_rows = m >= n;
    let blocks = in_parallel(threads, parts, |p| {
        let range = |len: usize| p * len / parts..(p + 1) * len / parts;
        if by_rows {
            matmul_f32(&qa[range(m)], &qb)
        } else {
            matmul_f32(&qa, &qb[range(n)])
        }
    });
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
