//! Block-scaled products (`--scaling STAGES=nvfp4|mxfp4|scaled/ELEM/bK/SCALE[/t]`, issue 50's
//! FP4 recipes).
//!
//! For C = A·B (A: M × K, B: K × N) of a stage in format X: A's rows and B's columns are read
//! where they are widest (as the per-tensor products read them) as f64 values, and zero-padded
//! along K to a multiple of the block (with the transform, of the least common multiple of the
//! block and 16): the padding quantizes to zeros and changes neither a block's amax nor the
//! product, so it is the shorter last block GPUs' frameworks pad to. In the G stage with
//! `+rht16` both are transformed by the golden random Hadamard transform
//! (`scale::hadamard::Rht::from_seed(--seed)`, tiles of 16 along K). Each is then quantized by
//! the golden `ScaledFormat::quantize` with its own current amax (NVIDIA's rule for NVFP4's
//! tensor scale), and C = the golden `scale::gemm::gemm_f32` (each block pair's exact result
//! rounded to f32, accumulated in f32 in block order, times f32(1 / (s_a · s_b))), each f32
//! result converted into X by the machine. A NaN or ±∞ in an operand (an overflow elsewhere)
//! takes no part in the quantization and makes its row's (column's) outputs NaN, as MX's NaN
//! block scale does. Products and quantization run on the host in the golden library, as the
//! MX formats' do.

use lpgen_golden::scale::hadamard::{Rht, TILE};
use lpgen_golden::scale::{gemm, Granularity, ScaledFormat};
use lpgen_golden::Format;

use super::{stage_of, te, Operand};
use crate::machine::{Machine, Mat, Word};
use crate::net::Net;
use crate::placement::Place;
use crate::TrainError;

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// An operand's values as rows along K (row r, k: `at(r, k)`), zero-padded to `kp`, the
/// non-finite ones zeroed and their rows marked.
fn rows_of(
    (rows, k, kp): (usize, usize, usize),
    at: impl Fn(usize, usize) -> f64,
) -> (Vec<f64>, Vec<bool>) {
    let mut x = vec![0f64; rows * kp];
    let mut bad = vec![false; rows];
    for r in 0..rows {
        for c in 0..k {
            let v = at(r, c);
            if v.is_finite() {
                x[r * kp + c] = v;
            } else {
                bad[r] = true;
            }
        }
    }
    (x, bad)
}

/// Zeroes what the transform made non-finite (an overflow of binary32) and marks its rows.
fn mark(x: &mut [f64], kp: usize, bad: &mut [bool]) {
    for (n, v) in x.iter_mut().enumerate() {
        if !v.is_finite() {
            *v = 0.0;
            bad[n / kp] = true;
        }
    }
}

impl<M: Machine> Net<'_, M> {
    /// C = A·B of the products at `place` in block format `format` (module doc); `rht`: the
    /// random Hadamard transform of both operands; `sr`: their stochastic rounding.
    pub(crate) fn block_product(
        &mut self,
        place: Place,
        (format, rht, sr): (ScaledFormat, bool, bool),
        (a, fa): Operand<'_, M::Word>,
        (b, fb): Operand<'_, M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        let stage = stage_of(place, &self.cfg.stages)?;
        let Granularity::Block(block) = format.granularity else {
            return Err(TrainError(format!(
                "{format} is not a block format (a trainer bug)"
            )));
        };
        let (m, k, n) = (a.rows(), a.cols(), b.cols());
        if b.rows() != k {
            return Err(TrainError(format!(
                "a block product of {m} × {k} by {} × {n} (a trainer bug)",
                b.rows()
            )));
        }
        let rht = (rht && place == Place::Gradient).then(|| Rht::from_seed(self.cfg.seed));
        let tile = match rht {
            Some(_) => block / gcd(block, TILE) * TILE,
            None => block,
        };
        let kp = k.div_ceil(tile) * tile;
        let va: Vec<f64> = a.mat.data.iter().map(|w| w.value(fa)).collect();
        let vb: Vec<f64> = b.mat.data.iter().map(|w| w.value(fb)).collect();
        let (ac, bc) = (a.mat.cols, b.mat.cols);
        let (ta, tb) = (a.transposed, b.transposed);
        let (mut xa, mut bad_a) = rows_of((m, k, kp), |i, c| match ta {
            false => va[i * ac + c],
            true => va[c * ac + i],
        });
        let (mut xb, mut bad_b) = rows_of((n, k, kp), |j, c| match tb {
            false => vb[c * bc + j],
            true => vb[j * bc + c],
        });
        if let Some(r) = rht {
            xa = r.transform_rows(&xa, m, kp).map_err(te)?;
            xb = r.transform_rows(&xb, n, kp).map_err(te)?;
            mark(&mut xa, kp, &mut bad_a);
            mark(&mut xb, kp, &mut bad_b);
        }
        let (qa, qb) = match sr && place == Place::Gradient {
            false => (
                format.quantize(&xa, m, kp, None).map_err(te)?,
                format.quantize(&xb, n, kp, None).map_err(te)?,
            ),
            true => {
                let r = self
                    .scales
                    .as_deref_mut()
                    .and_then(|s| s.sr.as_mut())
                    .ok_or_else(|| {
                        TrainError(
                            "+sr: a G product outside a gradients pass (a trainer bug)".into(),
                        )
                    })?;
                (
                    format.quantize_rounded(&xa, m, kp, None, r).map_err(te)?,
                    format.quantize_rounded(&xb, n, kp, None, r).map_err(te)?,
                )
            }
        };
        let c = gemm::gemm_f32(&format, &qa, &qb).map_err(te)?;
        let f32_format: Format = "f32".parse().map_err(te)?;
        let data: Vec<M::Word> = c
            .iter()
            .enumerate()
            .map(|(idx, &v)| {
                let v = match bad_a[idx / n] || bad_b[idx % n] {
                    true => f64::NAN,
                    false => f64::from(v),
                };
                M::Word::constant(f32_format, v)
            })
            .collect();
        Ok(Mat {
            rows: m,
            cols: n,
            data: self.m.convert(f32_format, stage, &data)?,
        })
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
