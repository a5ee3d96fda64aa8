//! A per-tensor scaled product accumulated as a GPU's matrix unit does
//! (`--scaling … --accumulate matmul=fdpa:…`, issues 49 and 50): TransformerEngine's FP8 GEMM
//! on Hopper. The operands' element words (the stage's format, FP8 in the recipe) go to the
//! golden [`FdpaPlan::dots`](lpgen_golden::float::fdpa::FdpaPlan::dots) as they are,
//! chunked, truncated and rounded by the mode into a binary32 word (binary16 for `rne-f16`,
//! exact in binary32), which the caller scales by S_a and S_b as every scaled product is.
//! The products run on the host in the golden library, as the block-scaled ones do
//! (`block.rs`).

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::Format;

use super::te;
use crate::machine::{Mat, View, Word};
use crate::TrainError;

/// C = A·B of words of `element` by `mode`, each output word's value as a word of `wide`
/// (binary32, the scaled products' format for a float stage).
pub(super) fn product<W: Word>(
    element: Format,
    mode: Fdpa,
    (a, b): (View<'_, W>, View<'_, W>),
    wide: Format,
) -> Result<Mat<W>, TrainError> {
    let Format::Float(f) = element else {
        return Err(TrainError(format!(
            "--accumulate {mode} with --scaling: a matrix unit's chunks take float operands, \
             not {element}"
        )));
    };
    let plan = mode.plan(&f).map_err(te)?;
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    let line = |at: &dyn Fn(usize) -> W| (0..k).map(|c| at(c).to_bits()).collect::<Vec<_>>();
    let rows: Vec<Vec<u64>> = (0..m).map(|i| line(&|c| a.at(i, c))).collect();
    let cols: Vec<Vec<u64>> = (0..n).map(|j| line(&|c| b.at(c, j))).collect();
    let rows: Vec<&[u64]> = rows.iter().map(|r| r.as_slice()).collect();
    let cols: Vec<&[u64]> = cols.iter().map(|c| c.as_slice()).collect();
    let out = Format::Float(plan.output()).calc();
    let data = plan
        .dots(&rows, &cols)
        .into_iter()
        .map(|w| W::constant(wide, out.to_f64(w)))
        .collect();
    Ok(Mat {
        rows: m,
        cols: n,
        data,
    })
}
