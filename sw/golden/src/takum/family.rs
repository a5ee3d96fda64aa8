//! The takum family's registration and its [`Family`] arithmetic: the tapered arithmetic of
//! [`crate::tapered`] on takum words.

use std::cmp::Ordering;

use crate::arith::BinOp;
use crate::arith::{transcendental, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{
    field, no_underflow, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo,
};
use crate::format::FormatError;
use crate::sum::{self, Running};
use crate::tapered::{self, Quire};
use crate::SumMode;

use super::TakumFormat;

/// `takum:N`: the rounded sums and the quire.
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "takum",
    syntax: "takum:N",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
    ],
    pes: &[PeInfo {
        name: "takum-quire",
        mode: SumMode::Quire,
        about: "takum multiply into a quire, rounded once at read-out",
    }],
    lanes: true,
    q8_word_rule: false,
    stochastic: false,
    example: "takum:16",
    expand_name: |_| None,
};

impl FamilyFormat for TakumFormat {
    fn width(&self) -> u32 {
        self.n
    }
    type Arith = TakumFormat;
    fn arith(&self) -> TakumFormat {
        *self
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        let [n] = fields else {
            return unknown_format(whole);
        };
        if underflow {
            return no_underflow(whole);
        }
        TakumFormat::new(field(n, "width", whole)?)
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// Takums saturate at ±their largest value, as posits do.
    fn saturating(self) -> Option<Self> {
        Some(self)
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

/// The rounded sums' working form is the word itself.
impl crate::arith::Arith for TakumFormat {
    type Val = Bits;
    #[inline(always)]
    fn load(&self, w: Bits) -> Bits {
        w
    }
    #[inline(always)]
    fn store(&self, v: Bits) -> Bits {
        v
    }
    fn zero(&self) -> Bits {
        0
    }
    #[inline(always)]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        tapered::add(*self, a, b, false)
    }
    #[inline(always)]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        tapered::add(*self, a, b, true)
    }
    #[inline(always)]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        tapered::mul(*self, a, b)
    }
}

/// The quire as the matrix-product kernel feeds it.
impl crate::kernel::ExactDot for TakumFormat {
    fn exact_f64(&self, w: Bits) -> Option<f64> {
        (w != self.nar()).then(|| tapered::to_f64(*self, w))
    }
    /// The 31-bit carry guard: fewer products than 2^31 of maxpos² cannot wrap.
    fn max_terms(&self) -> u64 {
        (1u64 << 31) - 1
    }
    fn read_exact(&self, v: i128, scale: i32) -> Bits {
        tapered::round_exact(*self, v, scale)
    }
    /// By the read-out table of a takum of at most 8 bits (`kernel::readout`).
    fn read_values(&self, sums: &[f64], out: &mut Vec<Bits>) {
        crate::kernel::readout::read_values(self, ((*self).into(), self.n), sums, out)
    }
}

impl TakumFormat {
    /// Σ a_k·b_k in the quire, rounded once.
    fn dot_quire(&self, a: &[Bits], b: &[Bits]) -> Bits {
        let mut q = Quire::new(*self);
        for (&x, &y) in a.iter().zip(b) {
            q.add_product(x, y);
        }
        q.to_word()
    }
}

impl Family for TakumFormat {
    type Format = TakumFormat;
    fn format(&self) -> TakumFormat {
        *self
    }
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        tapered::add(*self, a, b, false)
    }
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        tapered::add(*self, a, b, true)
    }
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        tapered::mul(*self, a, b)
    }
    fn div(&self, a: Bits, b: Bits) -> Bits {
        tapered::div(*self, a, b)
    }
    fn neg(&self, a: Bits) -> Bits {
        tapered::neg(*self, a)
    }
    fn abs(&self, a: Bits) -> Bits {
        tapered::abs(*self, a)
    }
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        Some(tapered::cmp(*self, a, b))
    }
    fn max(&self, a: Bits, b: Bits) -> Bits {
        tapered::pick(*self, a, b, Ordering::Greater)
    }
    fn min(&self, a: Bits, b: Bits) -> Bits {
        tapered::pick(*self, a, b, Ordering::Less)
    }
    fn is_nan(&self, a: Bits) -> bool {
        a == self.nar()
    }
    fn nan(&self) -> Option<Bits> {
        Some(self.nar())
    }
    fn nan_name(&self) -> &'static str {
        "NaR"
    }
    /// One: D = 1, R = 0, C and M empty of ones (c = 0).
    fn one(&self) -> Bits {
        1u64 << (self.n - 2)
    }
    fn zero(&self) -> Bits {
        0
    }
    fn from_f64(&self, x: f64) -> Bits {
        tapered::from_f64(*self, x)
    }
    fn to_f64(&self, a: Bits) -> f64 {
        tapered::to_f64(*self, a)
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        tapered::from_ratio(*self, r.neg, &r.num, &r.den)
    }
    fn exp(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Exp, self.nar())
    }
    fn ln(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Ln, self.nar())
    }
    fn sqrt(&self, a: Bits) -> Bits {
        tapered::sqrt(*self, a)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        match mode {
            // The quire sums as a dot product with ones.
            SumMode::Quire => self.dot(mode, xs, &vec![TakumFormat::one(self); xs.len()]),
            SumMode::Fdpa(_) => FAMILY.refuse_mode(mode, &self.format()),
            SumMode::Naive | SumMode::Kahan | SumMode::Pairwise => {
                Ok(sum::rounded_sum(self, mode, xs).expect("a rounded mode"))
            }
        }
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        match mode {
            SumMode::Quire => Ok(self.dot_quire(a, b)),
            SumMode::Fdpa(_) => FAMILY.refuse_mode(mode, &self.format()),
            SumMode::Naive | SumMode::Kahan | SumMode::Pairwise => {
                Ok(sum::rounded_dot(self, mode, a, b).expect("a rounded mode"))
            }
        }
    }
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        let row = |a: &[Bits]| -> Result<Vec<Bits>, FormatError> {
            match mode {
                SumMode::Quire => Ok(bs.iter().map(|b| self.dot_quire(a, b)).collect()),
                SumMode::Fdpa(_) => FAMILY.refuse_mode(mode, &self.format()),
                SumMode::Naive | SumMode::Kahan | SumMode::Pairwise => {
                    Ok(sum::rounded_dots(self, mode, a, bs).expect("a rounded mode"))
                }
            }
        };
        crate::family_trait::dots_by_row(rows, row)
    }
    /// Another width: the word re-rounded (takums of every width share the characteristic's
    /// range, so only the fraction is rounded, or saturated at the narrower extremes).
    fn convert_to(&self, to: &TakumFormat, a: Bits) -> Bits {
        tapered::convert(*self, *to, a)
    }
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
    /// The quire, on the sliced f64 kernel: every takum and every product of two is a normal
    /// f64 (|c| ≤ 255).
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        Some(self)
    }
    /// The quire, or a rounded sum.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        match mode {
            SumMode::Quire => Some(Box::new(Quire::new(*self))),
            m => crate::accumulator::rounded(*self, FAMILY.modes, m),
        }
    }
}
