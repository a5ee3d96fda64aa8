//! `f32`: IEEE binary32, the reference format (round to nearest even, as the hardware FPU
//! does). Its arithmetic is the machine's own; exp and ln are libm's f64 results rounded to
//! f32.

use std::cmp::Ordering;
use std::fmt;

use crate::arith::BinOp;
use crate::arith::{ratio_to_f32, word_arith, Arith, Bits};
use crate::exact::Ratio;
use crate::family_trait::{Family, FamilyEntry, FamilyFormat, PeInfo};
use crate::format::FormatError;
use crate::sum::{self, Running};
use crate::SumMode;

/// IEEE binary32: the format and its arithmetic (it has no parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F32;

/// The f32 family: no array PE and no lane of its own (the float training machine runs it
/// natively).
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "f32",
    syntax: "f32",
    modes: &[SumMode::Naive, SumMode::Kahan, SumMode::Pairwise],
    pes: &[] as &[PeInfo],
    lanes: false,
    q8_word_rule: false,
    stochastic: false,
    example: "f32",
    expand_name: |_| None,
};

impl fmt::Display for F32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("f32")
    }
}

fn f(b: Bits) -> f32 {
    f32::from_bits(b as u32)
}

fn b(x: f32) -> Bits {
    x.to_bits() as Bits
}

impl F32 {
    /// IEEE binary32 as the float family's `float:8:23`: the same words and the same rounding
    /// (where a unit of the float family takes f32 words, e.g. the `convert` unit).
    pub fn as_float(self) -> crate::float::FloatFormat {
        crate::float::FloatFormat::new(8, 23, false, false, false).expect("float:8:23 is a float")
    }
}

impl Arith for F32 {
    word_arith!(F32: Family, |_: &F32| 0);
}

impl FamilyFormat for F32 {
    fn width(&self) -> u32 {
        32
    }
    type Arith = F32;
    fn arith(&self) -> F32 {
        F32
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return crate::family_trait::no_underflow(whole);
        }
        if !fields.is_empty() {
            return crate::format::err(format!(
                "unknown format {whole:?}: f32 takes no fields (formats: {})",
                crate::family_trait::syntaxes()
            ));
        }
        Ok(F32)
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// binary32 overflows to ∞ (its saturating words are `float:8:23:sat`'s).
    fn saturating(self) -> Option<Self> {
        None
    }
    /// `float:8:23`: binary32's words and rounding in the float family, which has the
    /// hardware (`convert`, lanes) and the accumulators binary32 lacks.
    fn canonical(self) -> crate::Format {
        crate::Format::Float(self.as_float())
    }
}

impl Family for F32 {
    type Format = F32;
    fn format(&self) -> F32 {
        F32
    }
    #[inline(always)]
    fn add(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) + f(y))
    }
    #[inline(always)]
    fn sub(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) - f(y))
    }
    #[inline(always)]
    fn mul(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) * f(y))
    }
    fn div(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) / f(y))
    }
    fn neg(&self, a: Bits) -> Bits {
        b(-f(a))
    }
    fn abs(&self, a: Bits) -> Bits {
        b(f(a).abs())
    }
    fn cmp(&self, x: Bits, y: Bits) -> Option<Ordering> {
        f(x).partial_cmp(&f(y))
    }
    fn max(&self, x: Bits, y: Bits) -> Bits {
        b(if f(x).is_nan() || f(y).is_nan() {
            f32::NAN
        } else {
            f(x).max(f(y))
        })
    }
    fn min(&self, x: Bits, y: Bits) -> Bits {
        b(if f(x).is_nan() || f(y).is_nan() {
            f32::NAN
        } else {
            f(x).min(f(y))
        })
    }
    fn is_nan(&self, a: Bits) -> bool {
        f(a).is_nan()
    }
    fn nan(&self) -> Option<Bits> {
        Some(b(f32::NAN))
    }
    fn one(&self) -> Bits {
        b(1.0)
    }
    fn zero(&self) -> Bits {
        0
    }
    fn from_f64(&self, x: f64) -> Bits {
        b(x as f32)
    }
    fn to_f64(&self, a: Bits) -> f64 {
        f(a) as f64
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        b(ratio_to_f32(r))
    }
    fn exp(&self, a: Bits) -> Bits {
        b((f(a) as f64).exp() as f32)
    }
    fn ln(&self, a: Bits) -> Bits {
        b((f(a) as f64).ln() as f32)
    }
    /// The host's `f32::sqrt` (IEEE 754's correctly rounded squareRoot; a NaN result's
    /// payload is the host's, as for the other operations).
    fn sqrt(&self, a: Bits) -> Bits {
        b(f(a).sqrt())
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        match sum::rounded_sum(self, mode, xs) {
            Some(s) => Ok(s),
            None => FAMILY.refuse_mode(mode, &self.format()),
        }
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        match sum::rounded_dot(self, mode, a, b) {
            Some(s) => Ok(s),
            None => FAMILY.refuse_mode(mode, &self.format()),
        }
    }
    /// Column by column: the host's f32 NaN payloads follow operand order, which the
    /// compiler may change in an interleaved loop (the words are the host's, not pinned).
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        crate::family_trait::dots_by_element(self, mode, rows, bs)
    }
    fn convert_to(&self, _: &F32, a: Bits) -> Bits {
        a
    }
    /// Posits, floats and f32 report no overflow: they round it by their own rule.
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        crate::family_trait::fma_by_quire(self, a, b, c)
    }
    fn binop_flagged(&self, _: BinOp, _: Bits, _: Bits) -> Option<(Bits, bool)> {
        None
    }
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        sum::running_by_prefix(self, mode, a, b)
    }
    /// fdpa is the float family's (a GPU matrix unit's): refused.
    fn fdpa(
        &self,
        mode: crate::float::fdpa::Fdpa,
        _: &[Bits],
        _: &[Bits],
        _: Bits,
    ) -> Result<(Bits, crate::float::FloatFormat), FormatError> {
        FAMILY.refuse_mode(SumMode::Fdpa(mode), &self.format())
    }
    fn rounded(&self) -> Option<&dyn crate::rounding::RoundedOps> {
        None
    }
    /// f32 has no exact accumulation.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        None
    }
    /// The FPU's rounded sums.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        crate::accumulator::rounded(*self, self.entry().modes, mode)
    }
}
