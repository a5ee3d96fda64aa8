//! MX block products (`--format mx:ELEM[:bK]`, issue 33): C = A·B with every row of A and
//! every column of B quantized in blocks of K along the reduction dimension (golden
//! `MxQuantizer::quantize_vector`, §6.3), each element the blocks' dot products (§6.4, exact)
//! added in f32 in block order (the specification's reference accumulation,
//! `MxVector::dot_f32`). Operands and result are f32 words.

use lpgen_golden::mx::{MxFormat, MxVector};

use super::{check_shapes, fill_in_parallel, in_parallel, Mat, View, Word};
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

/// The golden MX product of the f32 words `a` (m×k) and `b` (k×n), on `threads` threads
/// (each output computed whole by one thread: the result does not depend on the count).
pub fn mx_product<W: Word>(
    mx: MxFormat,
    a: View<'_, W>,
    b: View<'_, W>,
    threads: usize,
) -> Result<Mat<W>, TrainError> {
    check_shapes(a, b)?;
    let (qa, qb) = mx_vectors(mx, a, b, threads);
    let n = b.cols();
    let mut c = Mat::filled(a.rows(), n, W::from_bits(0));
    fill_in_parallel(threads, &mut c.data, |start, out| {
        for (i, slot) in (start..).zip(out.iter_mut()) {
            let v = qa[i / n].dot_f32(&qb[i % n]);
            *slot = W::from_bits(u64::from(v.to_bits()));
        }
    });
    Ok(c)
}
