//! The float family's registration and its [`Family`] arithmetic.

use std::cmp::Ordering;

use crate::arith::BinOp;
use crate::arith::{transcendental, word_arith, Arith, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{
    field, no_underflow, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo,
};
use crate::format::{err, FormatError};
use crate::sum::{self, Running};
use crate::SumMode;

use super::fdpa::Fdpa;
use super::{FloatFormat, Val};

/// `float:E:M` with `:fn`, `:sat`, `:ftz` in any order, and the names `bf16`, `f16`,
/// `fp8:e4m3`, `fp8:e5m2` (the registry's parser expands them, [`super::expand_name`]): the
/// rounded sums and the exact accumulator (mode `quire`, the `float` array PE's); ALU lanes
/// (`alu`, `vector`, `convert` among floats and, by [`crate::alu::convert`], to and from fix).
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "float",
    syntax: "float:E:M (optionally :fn, :sat, :ftz, :nonan), bf16, f16, fp8:e4m3, fp8:e5m2",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
        SumMode::Fdpa(Fdpa::EXAMPLE),
    ],
    pes: &[PeInfo {
        name: "float",
        mode: SumMode::Quire,
        about: "exact products of two float words in the exact accumulator over the format's range, rounded once at read-out",
    }],
    lanes: true,
    q8_word_rule: false,
    stochastic: true,
    example: "float:3:4",
    expand_name: super::expand_name,
};

/// The refusal of a sum in an fdpa mode, which is a mode of dot products.
fn no_fdpa_sum(m: Fdpa) -> Result<Bits, FormatError> {
    err(format!(
        "mode {m} is a dot-product mode (a matrix unit's): take the dot product with ones"
    ))
}

impl FamilyFormat for FloatFormat {
    fn width(&self) -> u32 {
        FloatFormat::width(self)
    }
    type Arith = FloatFormat;
    fn arith(&self) -> FloatFormat {
        *self
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return no_underflow(whole);
        }
        let [e, m, suffixes @ ..] = fields else {
            return unknown_format(whole);
        };
        let (e, m) = (
            field(e, "exponent bits", whole)?,
            field(m, "fraction bits", whole)?,
        );
        let (mut finite, mut sat, mut ftz, mut no_nan) = (false, false, false, false);
        for &s in suffixes {
            let flag = match s {
                "fn" => &mut finite,
                "sat" => &mut sat,
                "ftz" => &mut ftz,
                "nonan" => &mut no_nan,
                _ => {
                    return err(format!(
                        "format {whole:?}: unknown suffix {s:?} (a float takes :fn, :sat, :ftz \
                         and :nonan)"
                    ))
                }
            };
            if *flag {
                return err(format!("format {whole:?}: the suffix :{s} is given twice"));
            }
            *flag = true;
        }
        if no_nan && (finite || sat) {
            return err(format!(
                "format {whole:?}: :nonan already means no infinities and saturation; drop :fn \
                 and :sat"
            ));
        }
        let made = if no_nan {
            FloatFormat::new_no_nan(e, m, ftz)
        } else {
            FloatFormat::new(e, m, finite, sat, ftz)
        };
        made.map_err(|e| FormatError(format!("format {whole:?}: {}", e.0)))
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
}

impl Arith for FloatFormat {
    word_arith!(FloatFormat, |_: &FloatFormat| 0);
}

impl Family for FloatFormat {
    type Format = FloatFormat;
    fn format(&self) -> FloatFormat {
        *self
    }
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::add(self, a, b)
    }
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::sub(self, a, b)
    }
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::mul(self, a, b)
    }
    fn div(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::div(self, a, b)
    }
    fn neg(&self, a: Bits) -> Bits {
        FloatFormat::neg(self, a)
    }
    fn abs(&self, a: Bits) -> Bits {
        FloatFormat::abs(self, a)
    }
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        FloatFormat::cmp(self, a, b)
    }
    fn max(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::max(self, a, b)
    }
    fn min(&self, a: Bits, b: Bits) -> Bits {
        FloatFormat::min(self, a, b)
    }
    fn is_nan(&self, a: Bits) -> bool {
        FloatFormat::is_nan(self, a)
    }
    fn nan(&self) -> Option<Bits> {
        (!self.no_nan).then(|| FloatFormat::nan(self))
    }
    fn one(&self) -> Bits {
        FloatFormat::one(self)
    }
    fn zero(&self) -> Bits {
        0
    }
    fn from_f64(&self, x: f64) -> Bits {
        FloatFormat::from_f64(self, x)
    }
    fn to_f64(&self, a: Bits) -> f64 {
        FloatFormat::to_f64(self, a)
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        FloatFormat::from_ratio(self, r)
    }
    /// e^x correctly rounded; e^(+∞) is an infinite result, e^(−∞) = +0.
    fn exp(&self, a: Bits) -> Bits {
        match self.decode(a) {
            Val::Inf(false) => self.infinite(false),
            Val::Inf(true) => 0,
            _ => transcendental(self, a, Transcendental::Exp, FloatFormat::nan(self)),
        }
    }
    /// ln x correctly rounded; ln(±0) = −∞ (an infinite result: NaN with `:fn`, −max with
    /// `:fn:sat`), ln(+∞) = +∞, NaN for x < 0.
    fn ln(&self, a: Bits) -> Bits {
        match self.decode(a) {
            Val::Fin(x) if x.sig == 0 => self.infinite(true),
            Val::Inf(false) => self.infinite(false),
            _ => transcendental(self, a, Transcendental::Ln, FloatFormat::nan(self)),
        }
    }
    /// √x correctly rounded ([`FloatFormat::sqrt`]: IEEE's, √(−0) = −0, NaN below zero).
    fn sqrt(&self, a: Bits) -> Bits {
        FloatFormat::sqrt(self, a)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        Ok(match (mode, self.narrow()) {
            (SumMode::Fdpa(m), _) => return no_fdpa_sum(m),
            (SumMode::Quire, _) => self.sum_exact(xs),
            (_, Some(n)) => sum::rounded_sum(&n, mode, xs).expect("a rounded mode"),
            (_, None) => sum::rounded_sum(self, mode, xs).expect("a rounded mode"),
        })
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        Ok(match mode {
            SumMode::Quire => self.dot_exact(a, b),
            SumMode::Fdpa(m) => m.plan(self)?.dot_in_format(a, b),
            // One table lookup per product and sum for formats of at most 8 bits.
            SumMode::Naive => match (super::ops::tables(*self), self.narrow()) {
                (Some(t), _) => t.naive_dot(0, a, b),
                (None, Some(n)) => sum::naive_dot(&n, a, b),
                (None, None) => sum::naive_dot(self, a, b),
            },
            // bf16, f16 and their like keep their partial results as f32s.
            _ => match self.narrow() {
                Some(n) => sum::rounded_dot(&n, mode, a, b),
                None => sum::rounded_dot(self, mode, a, b),
            }
            .expect("a rounded mode"),
        })
    }
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        // Naive (where no table serves) and Kahan on the binary32 path: the whole product at
        // once, each word loaded once.
        if let Some(n) = self.narrow() {
            match mode {
                SumMode::Naive if super::ops::tables(*self).is_none() => {
                    return Ok(n.dots(false, rows, bs))
                }
                SumMode::Kahan => return Ok(n.dots(true, rows, bs)),
                _ => {}
            }
        }
        if let SumMode::Fdpa(m) = mode {
            // Each operand decoded once for the whole product.
            return Ok(m.plan(self)?.dots_in_format(rows, bs));
        }
        let row = |a: &[Bits]| -> Result<Vec<Bits>, FormatError> {
            Ok(match mode {
                SumMode::Quire => bs.iter().map(|b| self.dot_exact(a, b)).collect(),
                SumMode::Naive => match super::ops::tables(*self) {
                    Some(t) => t.naive_dots(0, a, bs),
                    None => sum::rounded_dots(self, mode, a, bs).expect("naive"),
                },
                _ => match self.narrow() {
                    Some(n) => sum::rounded_dots(&n, mode, a, bs),
                    None => sum::rounded_dots(self, mode, a, bs),
                }
                .expect("a rounded mode"),
            })
        };
        crate::family_trait::dots_by_row(rows, row)
    }
    fn convert_to(&self, to: &FloatFormat, a: Bits) -> Bits {
        self.convert(to, a)
    }
    /// Posits, floats and f32 report no overflow: they round it by their own rule.
    /// IEEE's fused multiply-add (signed zeros, NaN and ∞ included), the `float-fma` unit's.
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        Some(FloatFormat::fma(self, a, b, c))
    }
    fn binop_flagged(&self, _: BinOp, _: Bits, _: Bits) -> Option<(Bits, bool)> {
        None
    }
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        sum::running_by_prefix(self, mode, a, b)
    }
    fn fdpa(
        &self,
        mode: Fdpa,
        a: &[Bits],
        b: &[Bits],
        c: Bits,
    ) -> Result<(Bits, FloatFormat), FormatError> {
        if a.len() != b.len() {
            return err(format!(
                "a dot product of {} by {} operands: the lengths differ",
                a.len(),
                b.len()
            ));
        }
        let p = mode.plan(self)?;
        Ok((p.dot(a, b, c), p.output()))
    }
    fn rounded(&self) -> Option<&dyn crate::rounding::RoundedOps> {
        Some(self)
    }
    /// The exact accumulator, for formats whose values and products are normal f64s.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        let m = i64::from(self.frac_bits);
        (m <= 52 && self.emax() <= 500 && self.emin() - m >= -500).then_some(self as _)
    }
    /// The exact accumulator (the float PE), or a rounded sum.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        match mode {
            SumMode::Quire => Some(Box::new(super::ExactAcc::new(*self))),
            m => crate::accumulator::rounded(*self, FAMILY.modes, m),
        }
    }
}
