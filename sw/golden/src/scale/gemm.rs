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
//! A block's exact result is computed in f64 where that is exact ([`exact_in_f64`]): every
//! element value q · S is an integer below 2^(W + P) times the format's smallest product unit,
//! so every product of two is one below 2^(2W + 2P) times the unit squared, and a block's sum,
//! in whatever order, one below 2^(2W + 2P + ⌈log2 B⌉) ≤ 2^53: W the element's bits between
//! its smallest positive value and its largest, P the scale's significand bits, the unit's
//! square not below f64's smallest subnormal. That is the fast path (E2M1, E3M2, E2M3, E4M3
//! elements). Elsewhere ([`exact_in_i128`]: E5M2, or any element up to W = 63) each element is
//! its integer at the element's lsb and each block scale sig · 2^exp, so that a block pair's
//! exact result is S_a · S_b · lsb² · Σ i_a · i_b with the sum an i128 and the whole
//! magnitude below 2^(2W + 2P + ⌈log2 B⌉) ≤ 2^127: one u128 rounded once to f32 by the float
//! family's rounding. A block with a NaN or ±∞ element or scale takes f64 arithmetic on both
//! paths (its result is NaN or ±∞ whatever the finite terms are).

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

/// The widths of a block pair's exact result (module doc): (W + P bits of one element value,
/// ⌈log2 B⌉, the element's lsb exponent, the scale's lsb exponent), or the one-line reason
/// the format has no block product: float elements, E8M0 or float scales.
fn widths(sf: &ScaledFormat) -> Result<(i64, i64, i64, i64), FormatError> {
    let b = block_of(sf)?;
    let Format::Float(ef) = sf.elem else {
        return err(format!(
            "{sf}: block products are built for float elements (MX's and NVFP4's)"
        ));
    };
    let elem_lsb = ef.to_f64(1);
    let w = ceil_log2(sf.elem_max() / elem_lsb).saturating_add(1);
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
    Ok((
        w.saturating_add(p),
        ceil_log2(b as f64),
        elem_lsb.log2() as i64,
        scale_lsb.log2() as i64,
    ))
}

/// Whether every block's exact result of `sf` is exact in f64 (module doc), or the one-line
/// reason it is not: float elements, E8M0 or float scales.
pub fn exact_in_f64(sf: &ScaledFormat) -> Result<(), FormatError> {
    let (wp, log_b, elem_lsb, scale_lsb) = widths(sf)?;
    let bits = wp.saturating_mul(2).saturating_add(log_b);
    let unit = elem_lsb.saturating_add(scale_lsb).saturating_mul(2);
    if bits > 53 || unit < -1074 {
        return err(format!(
            "{sf}: a block's exact result needs {bits} bits from 2^{unit}: more than f64 \
             holds (E2M1, E3M2, E2M3 and E4M3 elements with E8M0, UE4M3 or UE5M3 scales fit)"
        ));
    }
    Ok(())
}

/// Whether every block's exact result of `sf` is a u128 magnitude (module doc), or the
/// one-line reason it is not.
pub fn exact_in_i128(sf: &ScaledFormat) -> Result<(), FormatError> {
    let (wp, log_b, _, _) = widths(sf)?;
    let bits = wp.saturating_mul(2).saturating_add(log_b);
    if bits > 127 {
        return err(format!(
            "{sf}: a block's exact result needs {bits} bits: more than the block product's \
             i128 holds (float elements up to fp8:e5m2 and f16 fit; bf16 and wider do not)"
        ));
    }
    Ok(())
}

/// Whether [`gemm_f32`] takes `sf` (on either path), or the one-line refusal.
pub fn check(sf: &ScaledFormat) -> Result<(), FormatError> {
    exact_in_f64(sf).or_else(|_| exact_in_i128(sf))
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
/// doc), or the one-line refusal (shapes, a format [`check`] refuses).
pub fn gemm_f32(sf: &ScaledFormat, a: &Quantized, b: &Quantized) -> Result<Vec<f32>, FormatError> {
    match exact_in_f64(sf) {
        Ok(()) => gemm_on(sf, a, b, Path::F64),
        Err(_) => {
            exact_in_i128(sf)?;
            gemm_on(sf, a, b, Path::Int)
        }
    }
}

/// How each block pair's exact result is computed (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    F64,
    Int,
}

/// [`gemm_f32`] on `path` (the integer path takes every format [`exact_in_i128`] takes, those
/// of the f64 path too: the two are held to each other by a test).
pub(crate) fn gemm_on(
    sf: &ScaledFormat,
    a: &Quantized,
    b: &Quantized,
    path: Path,
) -> Result<Vec<f32>, FormatError> {
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
    let ints = match path {
        Path::F64 => None,
        Path::Int => {
            let (_, _, elem_lsb, _) = widths(sf)?;
            Some((
                IntBlocks::of(sf, a, blk, elem_lsb),
                IntBlocks::of(sf, b, blk, elem_lsb),
                2 * elem_lsb,
            ))
        }
    };
    let per_row = k / blk;
    let mut c = Vec::with_capacity(a.rows * b.rows);
    for (i, ra) in va.chunks_exact(k).enumerate() {
        for (j, rb) in vb.chunks_exact(k).enumerate() {
            let mut acc = F32Acc::new();
            for (g, (xa, xb)) in ra.chunks_exact(blk).zip(rb.chunks_exact(blk)).enumerate() {
                let (ga, gb) = (i * per_row + g, j * per_row + g);
                let plain = ints
                    .as_ref()
                    .and_then(|(ia, ib, unit)| Some((ia.scale[ga]?, ib.scale[gb]?, ia, ib, unit)));
                let term = match plain {
                    Some((sa, sb, ia, ib, &unit)) => {
                        let (ea, eb) = (ia.block(ga, blk), ib.block(gb, blk));
                        let sum: i128 = ea
                            .iter()
                            .zip(eb)
                            .map(|(&x, &y)| i128::from(x) * i128::from(y))
                            .sum();
                        let mag = sum.unsigned_abs() * u128::from(sa.1) * u128::from(sb.1);
                        let neg = (sum < 0) ^ sa.0 ^ sb.0;
                        match mag {
                            0 => 0.0,
                            _ => {
                                f32::from_bits(f32_format.round(neg, mag, unit + sa.2 + sb.2) as u32)
                            }
                        }
                    }
                    // The f64 path, and a block with a NaN or ±∞ on the integer path.
                    None => xa.iter().zip(xb).map(|(x, y)| x * y).sum::<f64>() as f32,
                };
                acc.add(term);
            }
            c.push(acc.result() * alpha);
        }
    }
    Ok(c)
}

/// One operand's blocks for the integer path: each element's integer at the element's lsb
/// (0 for a NaN or ±∞), and each block's scale as (negative, sig, exp), `None` where the
/// block's scale is not finite or an element is NaN or ±∞ (that block takes f64 arithmetic).
struct IntBlocks {
    ints: Vec<i64>,
    scale: Vec<Option<(bool, u64, i64)>>,
}

impl IntBlocks {
    fn of(sf: &ScaledFormat, q: &Quantized, blk: usize, elem_lsb: i64) -> IntBlocks {
        let calc = sf.elem_calc();
        let lsb = 2f64.powi(elem_lsb as i32);
        let mut special = vec![false; q.scales.len()];
        let ints = q
            .codes
            .iter()
            .enumerate()
            .map(|(n, &c)| {
                let v = calc.to_f64(c);
                if v.is_finite() {
                    // Exact: v is a multiple of the lsb below 2^63 of them (`exact_in_i128`).
                    (v / lsb) as i64
                } else {
                    special[n / blk] = true;
                    0
                }
            })
            .collect();
        let scale = q
            .scales
            .iter()
            .zip(special)
            .map(|(&code, special)| {
                let v = sf.scale.value(code);
                if special || !v.is_finite() {
                    return None;
                }
                let (neg, sig, exp) = super::quant::f64_parts(v);
                let tz = sig.trailing_zeros().min(63);
                Some((neg, sig >> tz, exp + i64::from(tz)))
            })
            .collect();
        IntBlocks { ints, scale }
    }

    /// Block `g`'s element integers.
    fn block(&self, g: usize, blk: usize) -> &[i64] {
        &self.ints[g * blk..(g + 1) * blk]
    }
}

#[cfg(test)]
#[path = "gemm_tests.rs"]
mod tests;
