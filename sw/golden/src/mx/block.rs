//! Blocks: conversion (§6.3), dequantization, the block dot product (§6.4) and dot products
//! over many blocks.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use crate::arith::Bits;
use crate::family_trait::Family;
use crate::float::{FloatFormat, Val};
use crate::format::{err, FormatError};

use super::{Elem, MxFormat, SCALE_BIAS, SCALE_EXP_MAX, SCALE_EXP_MIN, SCALE_NAN};

/// One block: the E8M0 scale byte and the element words (as many as the block has values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MxBlock {
    pub scale: u8,
    pub codes: Vec<u8>,
}

/// How the blocks' dot products are added up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulation {
    /// The specification's reference: each block's exact dot product rounded to f32, added to
    /// an f32 accumulator (starting at +0) in block order, each addition rounded to nearest.
    F32,
    /// Every block exactly, added exactly.
    Exact,
}

impl std::str::FromStr for Accumulation {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Accumulation, FormatError> {
        match s {
            "f32" => Ok(Accumulation::F32),
            "exact" => Ok(Accumulation::Exact),
            _ => err(format!(
                "unknown MX accumulation {s:?}: expected f32 or exact"
            )),
        }
    }
}

/// An exact result: NaN, ±∞, or num · 2^exp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exact {
    Nan,
    Inf(bool),
    Fin { num: BigInt, exp: i64 },
}

/// `x` as (negative, significand, exponent): |x| = sig · 2^exp (x finite).
fn f64_parts(x: f64) -> (bool, u64, i64) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (sig, exp) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    (bits >> 63 != 0, sig, exp)
}

/// ⌊log2 |x|⌋ of a finite nonzero x.
fn floor_log2(x: f64) -> i64 {
    let (_, sig, exp) = f64_parts(x);
    exp + 63 - i64::from(sig.leading_zeros())
}

/// The nearest integer to sig · 2^shift, ties to even (sig < 2^64).
fn round_int(sig: u64, shift: i64) -> u128 {
    if shift >= 0 {
        // Only called with the result's magnitude below 2^64.
        u128::from(sig) << shift
    } else if shift < -64 {
        0
    } else {
        let s = (-shift) as u32;
        let (q, rem) = if s == 64 {
            (0, u128::from(sig))
        } else {
            (u128::from(sig >> s), u128::from(sig) & ((1u128 << s) - 1))
        };
        let half = 1u128 << (s - 1);
        q + u128::from(rem > half || (rem == half && q & 1 == 1))
    }
}

/// `x` (the value of a whole block's element divided by the scale: |x| = sig · 2^exp) to the
/// nearest INT8 word k/64, ties to even k, saturating to ±127.
fn int8_code(neg: bool, sig: u64, exp: i64) -> u8 {
    // k = sig · 2^(exp + 6); beyond 2^8 it saturates whatever the rounding.
    let bits = 64 - i64::from(sig.leading_zeros());
    let k = if sig == 0 {
        0
    } else if exp + 6 + bits > 8 {
        127
    } else {
        round_int(sig, exp + 6).min(127)
    } as i8;
    (if neg { -k } else { k }) as u8
}

/// Records an infinite product or part of sign `neg`.
fn mark(pos_inf: &mut bool, neg_inf: &mut bool, neg: bool) {
    if neg {
        *neg_inf = true;
    } else {
        *pos_inf = true;
    }
}

impl MxFormat {
    /// The scale's exponent: `None` for the NaN scale 0xFF.
    pub fn scale_exp(scale: u8) -> Option<i32> {
        (scale != SCALE_NAN).then(|| i32::from(scale) - SCALE_BIAS)
    }

    /// One block of 1 ..= K values converted as §6.3: shared exponent
    /// e = ⌊log2 max|V|⌋ − emax_elem clamped to [−127, 127] (an all-zero block: −127, as
    /// log2 0 = −∞ clamps), elements V/2^e to nearest (ties to even), saturating to ±max.
    /// A NaN or ±∞ anywhere makes the scale NaN (0xFF) and every element code 0.
    pub fn quantize_block(&self, xs: &[f64]) -> Result<MxBlock, FormatError> {
        if xs.is_empty() || xs.len() > self.block {
            return err(format!(
                "a block of {self} has 1..={} values, not {}",
                self.block,
                xs.len()
            ));
        }
        let mut codes = Vec::with_capacity(xs.len());
        let scale = self.quantize_block_into(xs, &mut codes);
        Ok(MxBlock { scale, codes })
    }

    /// [`Self::quantize_block`] of 1 ..= K values (unchecked), the codes appended to `codes`;
    /// returns the scale byte.
    pub(super) fn quantize_block_into(&self, xs: &[f64], codes: &mut Vec<u8>) -> u8 {
        if xs.iter().any(|x| !x.is_finite()) {
            codes.resize(codes.len() + xs.len(), 0);
            return SCALE_NAN;
        }
        let amax = xs.iter().fold(0f64, |m, x| m.max(x.abs()));
        let e = if amax == 0.0 {
            i64::from(SCALE_EXP_MIN)
        } else {
            (floor_log2(amax) - i64::from(self.emax_elem()))
                .clamp(i64::from(SCALE_EXP_MIN), i64::from(SCALE_EXP_MAX))
        };
        match self.elem {
            // The float family's rounding of x·2^−e (its fast path for narrow formats).
            Elem::Float(f) => {
                let r = f.scaled_rounder();
                codes.extend(xs.iter().map(|&x| r.round(x, e) as u8))
            }
            Elem::Int8 => codes.extend(xs.iter().map(|&x| {
                let (neg, sig, exp) = f64_parts(x);
                int8_code(neg, sig, exp - e)
            })),
        }
        (e + i64::from(SCALE_BIAS)) as u8
    }

    /// `xs` in blocks of K (the last one shorter where K does not divide the length).
    pub fn quantize(&self, xs: &[f64]) -> Vec<MxBlock> {
        xs.chunks(self.block)
            .map(|c| self.quantize_block(c).expect("a chunk of 1..=K values"))
            .collect()
    }

    fn check_block(&self, b: &MxBlock) -> Result<(), FormatError> {
        let limit = 1u16 << self.elem_width();
        if b.codes.is_empty() || b.codes.len() > self.block {
            return err(format!(
                "a block of {self} has 1..={} elements, not {}",
                self.block,
                b.codes.len()
            ));
        }
        match b.codes.iter().find(|&&c| u16::from(c) >= limit) {
            Some(c) => err(format!(
                "{c:#x} is not a {}-bit element word",
                self.elem_width()
            )),
            None => Ok(()),
        }
    }

    /// An element word's exact value (float: NaN, ±∞ or a dyadic; INT8: k · 2^−6).
    pub(super) fn elem_value(&self, code: u8) -> Val {
        match self.elem {
            Elem::Float(f) => f.decode(Bits::from(code)),
            Elem::Int8 => {
                let k = code as i8;
                Val::Fin(crate::float::Dy {
                    neg: k < 0,
                    sig: u128::from(k.unsigned_abs()),
                    exp: -6,
                })
            }
        }
    }

    /// An element word's value (exact in f64).
    pub fn elem_to_f64(&self, code: u8) -> f64 {
        match self.elem {
            Elem::Float(f) => f.to_f64(Bits::from(code)),
            Elem::Int8 => f64::from(code as i8) / 64.0,
        }
    }

    /// The block's values X · P_i (exact in f64; all NaN with the NaN scale).
    pub fn dequantize_block(&self, b: &MxBlock) -> Result<Vec<f64>, FormatError> {
        self.check_block(b)?;
        Ok(match MxFormat::scale_exp(b.scale) {
            None => vec![f64::NAN; b.codes.len()],
            Some(e) => {
                let x = 2f64.powi(e);
                b.codes.iter().map(|&c| self.elem_to_f64(c) * x).collect()
            }
        })
    }

    /// The exponent of the last place of every element value (float: emin − M; INT8: −6).
    pub fn elem_lsb(&self) -> i64 {
        match self.elem {
            Elem::Float(f) => f.emin() - i64::from(f.frac_bits),
            Elem::Int8 => -6,
        }
    }

    /// §6.4: X_A · X_B · Σ P_A,i · P_B,i, exact. NaN if a scale or an element is NaN, or
    /// ∞ · 0, or +∞ and −∞ are both among the products; else ±∞ if one is infinite.
    pub fn dot_block(&self, a: &MxBlock, b: &MxBlock) -> Result<Exact, FormatError> {
        self.check_block(a)?;
        self.check_block(b)?;
        if a.codes.len() != b.codes.len() {
            return err(format!(
                "blocks of {} and {} elements have no dot product",
                a.codes.len(),
                b.codes.len()
            ));
        }
        let (Some(ea), Some(eb)) = (MxFormat::scale_exp(a.scale), MxFormat::scale_exp(b.scale))
        else {
            return Ok(Exact::Nan);
        };
        let lsb = self.elem_lsb();
        let (mut sum, mut pos_inf, mut neg_inf) = (0i128, false, false);
        for (&ca, &cb) in a.codes.iter().zip(&b.codes) {
            match (self.elem_value(ca), self.elem_value(cb)) {
                (Val::Nan, _) | (_, Val::Nan) => return Ok(Exact::Nan),
                (Val::Inf(p), Val::Inf(q)) => mark(&mut pos_inf, &mut neg_inf, p != q),
                (Val::Inf(p), Val::Fin(y)) | (Val::Fin(y), Val::Inf(p)) => {
                    if y.sig == 0 {
                        return Ok(Exact::Nan);
                    }
                    mark(&mut pos_inf, &mut neg_inf, p != y.neg);
                }
                (Val::Fin(x), Val::Fin(y)) => {
                    // Each below 2^16 in magnitude, at or above 2^lsb: the product < 2^64
                    // at 2^(2·lsb).
                    let p = (x.sig * y.sig) as i128;
                    let p = p << (x.exp + y.exp - 2 * lsb);
                    sum += if x.neg != y.neg { -p } else { p };
                }
            }
        }
        Ok(match (pos_inf, neg_inf) {
            (true, true) => Exact::Nan,
            (true, false) => Exact::Inf(false),
            (false, true) => Exact::Inf(true),
            (false, false) => Exact::Fin {
                num: BigInt::from(sum),
                exp: 2 * lsb + i64::from(ea) + i64::from(eb),
            },
        })
    }

    /// Σ over block pairs of [`Self::dot_block`], added exactly.
    pub fn dot_exact(&self, a: &[MxBlock], b: &[MxBlock]) -> Result<Exact, FormatError> {
        let parts = self.block_dots(a, b)?;
        let (mut pos_inf, mut neg_inf) = (false, false);
        let mut fins = Vec::new();
        for p in parts {
            match p {
                Exact::Nan => return Ok(Exact::Nan),
                Exact::Inf(n) => mark(&mut pos_inf, &mut neg_inf, n),
                Exact::Fin { num, exp } => fins.push((num, exp)),
            }
        }
        Ok(match (pos_inf, neg_inf) {
            (true, true) => Exact::Nan,
            (true, false) => Exact::Inf(false),
            (false, true) => Exact::Inf(true),
            (false, false) => {
                let low = fins.iter().map(|f| f.1).min().unwrap_or(0);
                let num = fins
                    .into_iter()
                    .fold(BigInt::zero(), |s, (n, e)| s + (n << (e - low) as usize));
                Exact::Fin { num, exp: low }
            }
        })
    }

    /// Σ over block pairs, in f32 ([`Accumulation::F32`], [`F32Acc`]).
    pub fn dot_f32(&self, a: &[MxBlock], b: &[MxBlock]) -> Result<f32, FormatError> {
        let mut acc = F32Acc::new();
        for p in self.block_dots(a, b)? {
            acc.add(p.to_f32());
        }
        Ok(acc.result())
    }

    /// One block pair's dot product (§6.4, exact) rounded once to f32, to nearest even: the
    /// term [`F32Acc`] adds (NaN: f32's canonical NaN; an exact zero: +0).
    pub fn dot_block_f32(&self, a: &MxBlock, b: &MxBlock) -> Result<f32, FormatError> {
        Ok(self.dot_block(a, b)?.to_f32())
    }

    /// The dot product of two block vectors with the accumulation chosen, as an f64 (F32:
    /// the f32 result; Exact: the exact sum rounded once to f64).
    pub fn dot(&self, a: &[MxBlock], b: &[MxBlock], acc: Accumulation) -> Result<f64, FormatError> {
        Ok(match acc {
            Accumulation::F32 => f64::from(self.dot_f32(a, b)?),
            Accumulation::Exact => self.dot_exact(a, b)?.to_f64(),
        })
    }

    fn block_dots(&self, a: &[MxBlock], b: &[MxBlock]) -> Result<Vec<Exact>, FormatError> {
        if a.len() != b.len() {
            return err(format!(
                "vectors of {} and {} blocks have no dot product",
                a.len(),
                b.len()
            ));
        }
        a.iter().zip(b).map(|(x, y)| self.dot_block(x, y)).collect()
    }
}

/// The specification's reference accumulation ([`Accumulation::F32`]) one block at a time,
/// as an array PE performs it: an f32 register starting at +0, each block's dot product
/// rounded once to f32 ([`MxFormat::dot_block_f32`]) and added to it, each addition rounded to
/// nearest even (IEEE binary32: +0 + −0 = +0, ∞ − ∞ = NaN). A NaN result is f32's canonical
/// NaN 0x7fc00000 whatever NaN the host's f32 addition makes (x86 gives ∞ − ∞ the sign bit),
/// so that the result is one word on every host and in hardware.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F32Acc {
    sum: f32,
}

/// f32's canonical NaN (quiet, positive, payload 0).
pub const F32_NAN: u32 = 0x7fc0_0000;

impl F32Acc {
    /// The accumulator at +0.
    pub fn new() -> F32Acc {
        F32Acc { sum: 0.0 }
    }

    /// Back to +0.
    pub fn clear(&mut self) {
        self.sum = 0.0;
    }

    /// Adds one block's term (rounded to f32 already).
    pub fn add(&mut self, term: f32) {
        self.sum += term;
    }

    /// The sum (NaN: [`F32_NAN`]).
    pub fn result(&self) -> f32 {
        if self.sum.is_nan() {
            f32::from_bits(F32_NAN)
        } else {
            self.sum
        }
    }
}

impl Exact {
    /// The value rounded to nearest f32 (NaN: [`F32_NAN`]).
    pub fn to_f32(&self) -> f32 {
        let f32_format = FloatFormat::new(8, 23, false, false, false).expect("binary32");
        f32::from_bits(self.round_to(&f32_format) as u32)
    }

    /// The word of float format `f` nearest to the value (ties to even; NaN, ±∞ as `f` has
    /// them): the float family's one rounding, given at most 120 significant bits with a
    /// sticky bit below them.
    pub fn round_to(&self, f: &FloatFormat) -> Bits {
        match self {
            Exact::Nan => f.nan(),
            Exact::Inf(neg) => f.infinite(*neg),
            Exact::Fin { num, exp } => {
                let mag = num.magnitude();
                let drop = mag.bits().saturating_sub(120);
                let mut sig = mag >> drop as usize;
                if drop > 0 && (&sig << drop as usize) != *mag {
                    sig |= num_bigint::BigUint::from(1u8);
                }
                let sig: u128 = u128::try_from(sig).expect("at most 120 bits");
                f.round(num.is_negative(), sig, exp + drop as i64)
            }
        }
    }

    /// The value rounded to nearest f64.
    pub fn to_f64(&self) -> f64 {
        let f64_format = FloatFormat::new(11, 52, false, false, false).expect("binary64");
        f64::from_bits(self.round_to(&f64_format))
    }

    /// (num, exp) with num odd (or 0 with exp 0): one form per value, to compare and print.
    pub fn normalized(&self) -> Exact {
        match self {
            Exact::Fin { num, exp } if num.is_zero() => Exact::Fin {
                num: num.clone(),
                exp: 0,
            },
            Exact::Fin { num, exp } => {
                let tz = num.trailing_zeros().unwrap_or(0);
                Exact::Fin {
                    num: num >> tz as usize,
                    exp: exp + tz as i64,
                }
            }
            other => other.clone(),
        }
    }
}

impl std::fmt::Display for Exact {
    /// `nan`, `inf`, `-inf`, or `num*2^exp` in the normalized form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.normalized() {
            Exact::Nan => f.write_str("nan"),
            Exact::Inf(neg) => f.write_str(if neg { "-inf" } else { "inf" }),
            Exact::Fin { num, exp } => write!(f, "{num}*2^{exp}"),
        }
    }
}
