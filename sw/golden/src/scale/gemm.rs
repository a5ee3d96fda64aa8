//! The block-scaled product of whole matrices, as a GEMM computes it: the dot product of
//! [`super::dot`] (NVFP4's) for any block format with float elements.
//!
//! A is M × K and B is N × K (B's rows are the product's columns), both quantized in one
//! block-granularity [`ScaledFormat`] with blocks of B along K. Each output
//! C_ij = f32(acc_ij · alpha): acc_ij adds, in block order to an f32 accumulator from +0
//! (`mx::F32Acc`), each block pair's exact result S_a · S_b · Σ q_a · q_b rounded to f32; alpha
//! = f32(1 / (s_a · s_b)) from the two tensor scales (1 without them); every rounding to
//! nearest even. For NVFP4 this is [`super::dot::dot`] with `Accumulation::F32`, value for
//! value (tested).
//!
//! A block's exact result is computed in f64, which is exact where [`exact_in_f64`] says so:
//! every element value q · S is an integer below 2^(W + P) times the format's smallest
//! product unit, so every product of two is one below 2^(2W + 2P) times the unit squared, and
//! a block's sum, in whatever order, one below 2^(2W + 2P + ⌈log2 B⌉) ≤ 2^53: W the
//! element's bits between its smallest positive value and its largest, P the scale's
//! significand bits, the unit's square not below f64's smallest subnormal.

use super::{Granularity, Quantized, Scale, ScaledFormat};
use crate::family::Format;
use crate::family_trait::Family;
use crate::format::{err, FormatError};
use crate::mx::F32Acc;

/// ⌈log2 x⌉ of a positive finite x.
fn ceil_log2(x: f64) -> i64 {
    x.log2().ceil() as i64
}

/// The block size of a block format, or the refusal.
fn block_of(sf: &ScaledFormat) -> Result<usize, FormatError> {
    match sf.granularity {
        Granularity::Block(b) => Ok(b),
        Granularity::Tensor | Granularity::Row | Granularity::Column => err(format!(
            "{sf}: a block product takes a block format (scaled/ELEM/bK/SCALE[/t], nvfp4)"
        )),
    }
}

/// Whether every block's exact result of `sf` is exact in f64 (module doc), or the one-line
/// reason it is not: float elements, E8M0 or float scales.
pub fn exact_in_f64(sf: &ScaledFormat) -> Result<(), FormatError> {
    let b = block_of(sf)?;
    let Format::Float(ef) = sf.elem else {
        return err(format!(
            "{sf}: block products are built for float elements (MX's and NVFP4's)"
        ));
    };
    let elem_lsb = ef.to_f64(1);
    let w = ceil_log2(sf.elem_max() / elem_lsb) + 1;
    let (p, scale_lsb) = match sf.scale {
        Scale::E8m0 => (1, 2f64.powi(-127)),
        Scale::Word {
            format: Format::Float(s),
            ..
        } => (i64::from(s.frac_bits) + 1, s.to_f64(1)),
        Scale::Word { .. } => {
            return err(format!(
                "{sf}: block products are built for E8M0 and float scales"
            ))
        }
    };
    let bits = 2 * w + 2 * p + ceil_log2(b as f64);
    let unit = 2.0 * (elem_lsb.log2() + scale_lsb.log2());
    if bits > 53 || unit < -1074.0 {
        return err(format!(
            "{sf}: a block's exact result needs {bits} bits from 2^{unit}: more than f64 \
             holds (E2M1, E3M2, E2M3 and E4M3 elements with E8M0, UE4M3 or UE5M3 scales fit)"
        ));
    }
    Ok(())
}

/// Each element's value q · S (exact in f64 where [`exact_in_f64`] holds; the tensor scale
/// left out), row-major.
fn values(sf: &ScaledFormat, q: &Quantized, b: usize) -> Vec<f64> {
    let calc = sf.elem_calc();
    let per_row = q.cols / b;
    q.codes
        .iter()
        .enumerate()
        .map(|(n, &c)| {
            let g = (n / q.cols) * per_row + (n % q.cols) / b;
            calc.to_f64(c) * sf.scale.value(q.scales[g])
        })
        .collect()
}

/// C = A · Bᵀ (M × N, row-major f32s) of A (M × K) and B (N × K) quantized in `sf` (module
/// doc), or the one-line refusal (shapes, a format [`exact_in_f64`] refuses).
pub fn gemm_f32(sf: &ScaledFormat, a: &Quantized, b: &Quantized) -> Result<Vec<f32>, FormatError> {
    exact_in_f64(sf)?;
    let blk = block_of(sf)?;
    let k = a.cols;
    if b.cols != k
        || sf.groups(a.rows, k)? != a.scales.len()
        || sf.groups(b.rows, k)? != b.scales.len()
    {
        return err(format!(
            "{} × {} and {} × {} tensors of {sf}: a block product needs both K long",
            a.rows, a.cols, b.rows, b.cols
        ));
    }
    let f32_format = crate::FloatFormat::new(8, 23, false, false, false).expect("binary32");
    let scale = super::quant::Q::of(f32::from_bits(a.tensor_scale).into())
        .mul(&super::quant::Q::of(f32::from_bits(b.tensor_scale).into()));
    let one = super::quant::Q::of(1.0);
    let alpha = f32::from_bits(f32_format.from_ratio(&one.div(&scale).signed(false)) as u32);
    let (va, vb) = (values(sf, a, blk), values(sf, b, blk));
    let mut c = Vec::with_capacity(a.rows * b.rows);
    for ra in va.chunks_exact(k) {
        for rb in vb.chunks_exact(k) {
            let mut acc = F32Acc::new();
            for (xa, xb) in ra.chunks_exact(blk).zip(rb.chunks_exact(blk)) {
                let s: f64 = xa.iter().zip(xb).map(|(x, y)| x * y).sum();
                acc.add(s as f32);
            }
            c.push(acc.result() * alpha);
        }
    }
    Ok(c)
}

#[cfg(test)]
#[path = "gemm_tests.rs"]
mod tests;
