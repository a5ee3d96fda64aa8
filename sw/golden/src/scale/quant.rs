//! Quantization and dequantization of a tensor in a scaled format: every step an exact ratio
//! of big integers rounded once by the named format's own `from_ratio`.

use num_bigint::BigUint;
use num_traits::Zero;

use super::{f32_sat, Granularity, Scale, ScaledFormat};
use crate::arith::Bits;
use crate::exact::{f64_ratio, Ratio};
use crate::family_trait::Family;
use crate::float::FloatFormat;
use crate::format::{err, FormatError};
use crate::rounding::Rounder;

/// A quantized R × K tensor (row-major).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantized {
    pub rows: usize,
    pub cols: usize,
    /// The tensor scale s as f32 bits (1.0, 0x3f800000, without one).
    pub tensor_scale: u32,
    /// The group scales' codes in group order: the tensor's one; R rows; K columns; or the
    /// R · K/B blocks row by row.
    pub scales: Vec<Bits>,
    /// The element words, row-major.
    pub codes: Vec<Bits>,
}

/// The f32 bits of 1.0.
pub const ONE_F32: u32 = 0x3f80_0000;

/// `x` (finite) as (negative, significand, exponent): |x| = sig · 2^exp.
pub(crate) fn f64_parts(x: f64) -> (bool, u64, i64) {
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

/// A nonnegative exact rational num/den.
#[derive(Clone, Debug)]
pub(crate) struct Q {
    num: BigUint,
    den: BigUint,
}

impl Q {
    /// |x| of a finite f64.
    pub(crate) fn of(x: f64) -> Q {
        let (num, den) = f64_ratio(x);
        Q { num, den }
    }

    pub(crate) fn mul(&self, o: &Q) -> Q {
        Q {
            num: &self.num * &o.num,
            den: &self.den * &o.den,
        }
    }

    /// self / o (o nonzero).
    pub(crate) fn div(&self, o: &Q) -> Q {
        Q {
            num: &self.num * &o.den,
            den: &self.den * &o.num,
        }
    }

    /// num · 2^exp.
    pub(crate) fn from_parts(num: BigUint, exp: i64) -> Q {
        Q {
            num,
            den: BigUint::from(1u8),
        }
        .pow2(exp)
    }

    /// self · 2^k.
    fn pow2(&self, k: i64) -> Q {
        if k >= 0 {
            Q {
                num: &self.num << k as u64,
                den: self.den.clone(),
            }
        } else {
            Q {
                num: self.num.clone(),
                den: &self.den << (-k) as u64,
            }
        }
    }

    fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// ⌊log2 self⌋ (self nonzero).
    fn floor_log2(&self) -> i64 {
        let k = self.num.bits() as i64 - self.den.bits() as i64;
        let below = if k >= 0 {
            self.num < (&self.den << k as u64)
        } else {
            (&self.num << (-k) as u64) < self.den
        };
        k - i64::from(below)
    }

    pub(crate) fn signed(self, neg: bool) -> Ratio {
        Ratio {
            neg,
            num: self.num,
            den: self.den,
        }
    }
}

/// a · b / c of finite f64s (c nonzero) as (negative, sig, exp) for
/// [`FloatFormat::round`]: sig = 2q + sticky with q the integer quotient of at least 74 bits
/// and sticky set iff it is inexact, so that a rounding to at most 53 bits sees exact round
/// and sticky bits (the division of the float family's `div`); sig = 0 for a zero product.
pub(crate) fn product_quotient(a: f64, b: f64, c: f64) -> (bool, u128, i64) {
    let (na, sa, ea) = f64_parts(a);
    let (nb, sb, eb) = f64_parts(b);
    let (nc, sc, ec) = f64_parts(c);
    let neg = na ^ nb ^ nc;
    let n = u128::from(sa) * u128::from(sb);
    if n == 0 {
        return (neg, 0, 0);
    }
    // n << k has 127 bits; the quotient by sc < 2^53 then has at least 74.
    let k = i64::from(n.leading_zeros()) - 1;
    let nk = n << k;
    let (q, r) = (nk / u128::from(sc), nk % u128::from(sc));
    (neg, q << 1 | u128::from(r != 0), ea + eb - ec - k - 1)
}

impl ScaledFormat {
    /// The tensor scale s = f32(elem_target · scale_max / (A · 2^margin)), saturating, as f32
    /// bits; 1 when A = 0 or when s rounds to 0 (TransformerEngine's rule), and 1 without a
    /// tensor scale. A must be finite and at least 0.
    pub fn tensor_scale_for(&self, amax: f64, margin: i32) -> u32 {
        if !self.tensor_scale || amax == 0.0 {
            return ONE_F32;
        }
        let target = Q::of(self.elem_target()).mul(&Q::of(self.scale.max_value()));
        let s = target.div(&Q::of(amax).pow2(i64::from(margin)));
        let w = f32_sat().from_ratio(&s.signed(false)) as u32;
        if w == 0 {
            ONE_F32
        } else {
            w
        }
    }

    /// A group's scale code for its amax times s · 2^margin (`scaled_amax`, exact):
    /// sf(scaled_amax / elem_target) rounded once by the scale format, or E8M0's power of two
    /// 2^(⌊log2 scaled_amax⌋ − emax_elem) clamped to [2^−127, 2^127] (2^−127 for 0).
    fn scale_code(&self, scaled_amax: &Q) -> Bits {
        match self.scale {
            Scale::E8m0 => {
                let e = if scaled_amax.is_zero() {
                    -127
                } else {
                    (scaled_amax.floor_log2() - self.emax_elem()).clamp(-127, 127)
                };
                (e + 127) as Bits
            }
            Scale::Word { format, .. } => {
                let r = scaled_amax.div(&Q::of(self.elem_target()));
                format.calc().from_ratio(&r.signed(false))
            }
        }
    }

    /// The scale code of a group whose values have amax `amax` under tensor scale `s`
    /// (f32 bits) and margin 2^`margin`.
    pub fn group_scale(&self, amax: f64, s: u32, margin: i32) -> Bits {
        let scaled = Q::of(amax)
            .mul(&Q::of(f32::from_bits(s).into()))
            .pow2(i64::from(margin));
        self.scale_code(&scaled)
    }

    /// One element's word: elem(x · s / S) rounded once (a negative x that rounds to zero is
    /// the element's −0 where it has one), the element's zero where S = 0.
    pub fn elem_code(&self, x: f64, s: u32, scale_code: Bits) -> Result<Bits, FormatError> {
        self.elem_code_with(x, s, scale_code, &mut Rounder::nearest())
    }

    /// [`Self::elem_code`] rounded by `r`: to nearest, or stochastically by the golden rule
    /// (`rounding.rs`, [`FloatFormat::round_with`]), one draw per element whatever its value
    /// (S = 0 too); refused in one line for an element family without stochastic rounding.
    pub fn elem_code_with(
        &self,
        x: f64,
        s: u32,
        scale_code: Bits,
        r: &mut Rounder,
    ) -> Result<Bits, FormatError> {
        let calc = self.elem_calc();
        let sv = self.scale.value(scale_code);
        if !sv.is_finite() {
            return err(format!(
                "a scale overflowed to {sv} in {}: use a saturating scale format (:sat)",
                self.scale
            ));
        }
        if sv == 0.0 {
            calc.check_rounding(r.rounding())?;
            r.draw();
            return Ok(calc.zero());
        }
        if !x.is_finite() {
            return err(format!("{x} in a tensor to quantize: give finite values"));
        }
        let sf = f64::from(f32::from_bits(s));
        // The same value and the same rounding, the quotient in integers (74 bits and a
        // sticky bit), where the family rounds such parts (floats, posits to nearest).
        let (neg, sig, exp) = product_quotient(x, sf, sv);
        if let Some(w) = calc.round_parts(neg, sig, exp, r) {
            return Ok(w);
        }
        let q = Q::of(x)
            .mul(&Q::of(f32::from_bits(s).into()))
            .div(&Q::of(sv));
        calc.from_ratio_with(&q.signed(x.is_sign_negative()), r)
    }

    /// The value of an element word under scale code `scale_code` and tensor scale `s`:
    /// q · S / s rounded once to f64 (non-finite q as f64 arithmetic gives it).
    pub fn dequantize_one(&self, code: Bits, s: u32, scale_code: Bits) -> f64 {
        let q = self.elem_calc().to_f64(code);
        let sv = self.scale.value(scale_code);
        let sf = f64::from(f32::from_bits(s));
        if !(q.is_finite() && sv.is_finite()) {
            return q * sv / sf;
        }
        let (neg, sig, exp) = product_quotient(q, sv, sf);
        let f64_format = FloatFormat::new(11, 52, false, false, false).expect("binary64");
        f64::from_bits(f64_format.round(neg, sig, exp))
    }

    /// The number of groups of an R × K tensor, or the one-line refusal (no values, K not a
    /// multiple of the block).
    pub fn groups(&self, rows: usize, cols: usize) -> Result<usize, FormatError> {
        if rows == 0 || cols == 0 {
            return err(format!(
                "a tensor of {rows} × {cols}: give at least one value"
            ));
        }
        Ok(match self.granularity {
            Granularity::Tensor => 1,
            Granularity::Row => rows,
            Granularity::Column => cols,
            Granularity::Block(b) => {
                if !cols.is_multiple_of(b) {
                    return err(format!(
                        "block size {b} does not divide K = {cols}: rows of {self} hold whole \
                         blocks (pad K to a multiple of {b})"
                    ));
                }
                rows * (cols / b)
            }
        })
    }

    /// The group of the value at row `i`, column `j` of a tensor of `cols` columns.
    pub fn group_of(&self, i: usize, j: usize, cols: usize) -> usize {
        match self.granularity {
            Granularity::Tensor => 0,
            Granularity::Row => i,
            Granularity::Column => j,
            Granularity::Block(b) => i * (cols / b) + j / b,
        }
    }

    fn check(&self, x: &[f64], rows: usize, cols: usize) -> Result<usize, FormatError> {
        let g = self.groups(rows, cols)?;
        if x.len() != rows * cols {
            return err(format!(
                "{} values are not a {rows} × {cols} tensor",
                x.len()
            ));
        }
        if let Some(v) = x.iter().find(|v| !v.is_finite()) {
            return err(format!(
                "{v} in a tensor for {self}: scaled formats quantize finite values"
            ));
        }
        Ok(g)
    }

    /// Each group's amax.
    fn group_amaxes(&self, x: &[f64], cols: usize, groups: usize) -> Vec<f64> {
        let mut amax = vec![0f64; groups];
        for (n, v) in x.iter().enumerate() {
            let g = self.group_of(n / cols, n % cols, cols);
            amax[g] = amax[g].max(v.abs());
        }
        amax
    }

    /// Quantizes an R × K tensor (row-major) by the current rule: the tensor amax is
    /// `tensor_amax` where given (finite, >= 0), else the largest |x|.
    pub fn quantize(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
        tensor_amax: Option<f64>,
    ) -> Result<Quantized, FormatError> {
        self.quantize_rounded(x, rows, cols, tensor_amax, &mut Rounder::nearest())
    }

    /// [`Self::quantize`] with each element rounded by `r` ([`Self::elem_code_with`], one
    /// draw per element in row-major order; the scales computed as [`Self::quantize`] does):
    /// with `stochastic:R`, the FP4 recipes' stochastic rounding of the gradients.
    pub fn quantize_rounded(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
        tensor_amax: Option<f64>,
        r: &mut Rounder,
    ) -> Result<Quantized, FormatError> {
        self.check(x, rows, cols)?;
        let a = match tensor_amax {
            Some(a) if a.is_finite() && a >= 0.0 => a,
            Some(a) => {
                return err(format!(
                    "tensor amax {a}: give a finite amax >= 0 (the largest |x| of the tensor)"
                ))
            }
            None => x.iter().fold(0f64, |m, v| m.max(v.abs())),
        };
        let s = self.tensor_scale_for(a, 0);
        let fixed = (!self.tensor_scale && self.granularity == Granularity::Tensor)
            .then(|| self.group_scale(a, s, 0));
        self.quantize_at_with(x, rows, cols, (s, fixed), r)
    }

    /// Quantizes with tensor scale `s` (f32 bits); `fixed`: the one group scale code where a
    /// rule chose it (tensor granularity), else each group's from its amax.
    pub(crate) fn quantize_at(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
        s: u32,
        fixed: Option<Bits>,
    ) -> Result<Quantized, FormatError> {
        self.quantize_at_with(x, rows, cols, (s, fixed), &mut Rounder::nearest())
    }

    /// [`Self::quantize_at`] with each element rounded by `r`.
    fn quantize_at_with(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
        (s, fixed): (u32, Option<Bits>),
        r: &mut Rounder,
    ) -> Result<Quantized, FormatError> {
        let groups = self.check(x, rows, cols)?;
        let scales: Vec<Bits> = match fixed {
            Some(c) => vec![c],
            None => self
                .group_amaxes(x, cols, groups)
                .into_iter()
                .map(|a| self.group_scale(a, s, 0))
                .collect(),
        };
        let codes = x
            .iter()
            .enumerate()
            .map(|(n, &v)| {
                let g = self.group_of(n / cols, n % cols, cols);
                self.elem_code_with(v, s, scales[g], r)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Quantized {
            rows,
            cols,
            tensor_scale: s,
            scales,
            codes,
        })
    }

    /// The values of a quantized tensor, row-major (each rounded once to f64).
    pub fn dequantize(&self, q: &Quantized) -> Result<Vec<f64>, FormatError> {
        let groups = self.groups(q.rows, q.cols)?;
        if q.scales.len() != groups || q.codes.len() != q.rows * q.cols {
            return err(format!(
                "{} scales and {} codes are not a {} × {} tensor of {self} ({groups} scales)",
                q.scales.len(),
                q.codes.len(),
                q.rows,
                q.cols
            ));
        }
        Ok(q.codes
            .iter()
            .enumerate()
            .map(|(n, &c)| {
                let g = self.group_of(n / q.cols, n % q.cols, q.cols);
                self.dequantize_one(c, q.tensor_scale, q.scales[g])
            })
            .collect())
    }
}

#[cfg(test)]
impl Q {
    /// ⌊log2 |x|⌋ of a finite nonzero x, by the rational rule.
    pub(crate) fn floor_log2_of(x: f64) -> i64 {
        Q::of(x).floor_log2()
    }

    /// ⌊log2 (num/den)⌋ of a positive ratio that need not be dyadic.
    pub(crate) fn floor_log2_ratio(num: u64, den: u64) -> i64 {
        Q {
            num: num.into(),
            den: den.into(),
        }
        .floor_log2()
    }
}
