//! The NVFP4 dot product, as MX's (`mx::MxFormat::dot_block`) with a tensor scale on top:
//!
//! - one block pair: S_a · S_b · Σ q_a,i · q_b,i, exact (a dyadic: E2M1 and UE4M3 values are);
//! - many block pairs (the vectors' tensor scales s_a, s_b): the blocks' exact results summed
//!   exactly, divided by s_a · s_b and rounded once to f64 (`Accumulation::Exact`); or, as a
//!   GEMM does it (`Accumulation::F32`), each block's result rounded to f32 and added in
//!   block order to an f32 accumulator from +0 (`mx::F32Acc`, MX's reference accumulation),
//!   then multiplied by alpha = f32(1 / (s_a · s_b)) in f32 (cuBLAS's epilogue scale), each
//!   step rounded to nearest even.
//!
//! The array PE ([`PE`], `lpgen rtl array --format nvfp4`) performs the F32 accumulation
//! without the tensor scales ([`dot_unscaled_f32`]): alpha is the host's, applied to the
//! words it reads out, as TransformerEngine applies it in the GEMM's epilogue.

use num_bigint::BigInt;
use num_traits::Zero;

use super::nvfp4::{Nvfp4Block, E2M1, NVFP4_BLOCK, UE4M3};
use super::quant::Q;
use crate::family::PeInfo;
use crate::family_trait::Family;
use crate::float::{FloatFormat, Val};
use crate::format::{err, FormatError};
use crate::mx::{Accumulation, Exact, F32Acc};

/// The array PE on NVFP4 blocks (`lpgen rtl array --format nvfp4`, `--pe nvfp4`): each step
/// one block pair's exact dot product ([`dot_block`]), rounded once to f32 and added to an
/// f32 accumulator ([`dot_unscaled_f32`]); the tensor scales are the host's (alpha applied
/// after read-out). Not a family's PE (NVFP4 is no family): listed here like MX's
/// (`crate::mx::PE`).
pub static PE: PeInfo = PeInfo {
    name: "nvfp4",
    mode: crate::SumMode::Naive,
    about: "NVFP4 blocks: exact block dot products, each rounded to f32 and added in f32 (alpha the host's)",
};

/// A block's UE4M3 scale as (significand, exponent), `None` for the NaN code 0x7F.
fn scale_parts(code: u8) -> Result<Option<(i128, i64)>, FormatError> {
    if code >= 0x80 {
        return err(format!(
            "{code:#04x} is not a UE4M3 scale (0x00..=0x7f: an E4M3 byte with the sign 0)"
        ));
    }
    Ok(match UE4M3.decode(u64::from(code)) {
        Val::Fin(d) => Some((d.sig as i128, d.exp)),
        Val::Nan | Val::Inf(_) => None,
    })
}

/// An E2M1 code's value as a multiple of 1/2.
fn half_units(code: u8) -> Result<i128, FormatError> {
    if code >= 16 {
        return err(format!("{code:#x} is not a 4-bit E2M1 code"));
    }
    Ok(match E2M1.decode(u64::from(code)) {
        Val::Fin(d) => {
            let v = (d.sig as i128) << (d.exp + 1);
            if d.neg {
                -v
            } else {
                v
            }
        }
        Val::Nan | Val::Inf(_) => unreachable!("E2M1 codes are finite"),
    })
}

/// One block pair's dot product S_a · S_b · Σ q_a,i · q_b,i, exact (NaN with a NaN scale).
pub fn dot_block(a: &Nvfp4Block, b: &Nvfp4Block) -> Result<Exact, FormatError> {
    if a.codes.len() != b.codes.len() || a.codes.is_empty() || a.codes.len() > NVFP4_BLOCK {
        return err(format!(
            "NVFP4 blocks of {} and {} elements have no block dot product (1..={NVFP4_BLOCK} \
             each, equal)",
            a.codes.len(),
            b.codes.len()
        ));
    }
    let (sa, sb) = (scale_parts(a.scale)?, scale_parts(b.scale)?);
    let mut sum = 0i128;
    for (&x, &y) in a.codes.iter().zip(&b.codes) {
        sum += half_units(x)? * half_units(y)?;
    }
    let (Some((ma, ea)), Some((mb, eb))) = (sa, sb) else {
        return Ok(Exact::Nan);
    };
    Ok(Exact::Fin {
        num: BigInt::from(sum * ma * mb),
        exp: ea + eb - 2,
    })
}

/// One block pair's dot product rounded once to f32, to nearest even (NaN: f32's canonical
/// NaN; an exact zero: +0): the term the PE adds.
pub fn dot_block_f32(a: &Nvfp4Block, b: &Nvfp4Block) -> Result<f32, FormatError> {
    Ok(dot_block(a, b)?.to_f32())
}

/// The dot product of two vectors of NVFP4 blocks without their tensor scales, as the array
/// PE accumulates it: an f32 register from +0 ([`F32Acc`]), each block pair's
/// [`dot_block_f32`] added in block order, each addition rounded to nearest even (NaN: f32's
/// canonical NaN). [`dot`] with [`Accumulation::F32`] is this times alpha = f32(1/(s_a·s_b)).
pub fn dot_unscaled_f32(a: &[Nvfp4Block], b: &[Nvfp4Block]) -> Result<f32, FormatError> {
    if a.len() != b.len() {
        return err(format!(
            "vectors of {} and {} NVFP4 blocks have no dot product (equal lengths)",
            a.len(),
            b.len()
        ));
    }
    let mut sum = F32Acc::new();
    for (x, y) in a.iter().zip(b) {
        sum.add(dot_block_f32(x, y)?);
    }
    Ok(sum.result())
}

/// The dot product of two vectors of NVFP4 blocks (each vector's blocks sharing its tensor
/// scale), accumulated as `acc` says, as an f64 (F32: the f32 result).
pub fn dot(a: &[Nvfp4Block], b: &[Nvfp4Block], acc: Accumulation) -> Result<f64, FormatError> {
    if a.len() != b.len() || a.is_empty() {
        return err(format!(
            "vectors of {} and {} NVFP4 blocks have no dot product (equal, at least one)",
            a.len(),
            b.len()
        ));
    }
    let (ta, tb) = (a[0].tensor_scale, b[0].tensor_scale);
    if a.iter().any(|x| x.tensor_scale != ta) || b.iter().any(|x| x.tensor_scale != tb) {
        return err("the blocks of one vector share one tensor scale");
    }
    let (fa, fb) = (f64::from(f32::from_bits(ta)), f64::from(f32::from_bits(tb)));
    if !(fa.is_finite() && fa > 0.0 && fb.is_finite() && fb > 0.0) {
        return err("a tensor scale is a finite f32 > 0");
    }
    let parts = a
        .iter()
        .zip(b)
        .map(|(x, y)| dot_block(x, y))
        .collect::<Result<Vec<_>, _>>()?;
    if parts.contains(&Exact::Nan) {
        return Ok(f64::NAN);
    }
    let scale = Q::of(fa).mul(&Q::of(fb));
    Ok(match acc {
        Accumulation::F32 => {
            let f32_format = FloatFormat::new(8, 23, false, false, false).expect("binary32");
            let alpha = f32_format.from_ratio(&Q::of(1.0).div(&scale).signed(false));
            let total = dot_unscaled_f32(a, b)?;
            let r = Q::of(total.into()).mul(&Q::of(f32::from_bits(alpha as u32).into()));
            f64::from(f32::from_bits(
                f32_format.from_ratio(&r.signed(total.is_sign_negative())) as u32,
            ))
        }
        Accumulation::Exact => {
            let low = parts.iter().filter_map(exp_of).min().unwrap_or(0);
            let mut num = BigInt::zero();
            for p in &parts {
                if let Exact::Fin { num: n, exp } = p {
                    num += n << (exp - low) as usize;
                }
            }
            let neg = num < BigInt::zero();
            let (_, mag) = num.into_parts();
            let r = Q::from_parts(mag, low).div(&scale);
            let f64_format = FloatFormat::new(11, 52, false, false, false).expect("binary64");
            f64::from_bits(f64_format.from_ratio(&r.signed(neg)))
        }
    })
}

fn exp_of(p: &Exact) -> Option<i64> {
    match p {
        Exact::Fin { exp, .. } => Some(*exp),
        Exact::Nan | Exact::Inf(_) => None,
    }
}
