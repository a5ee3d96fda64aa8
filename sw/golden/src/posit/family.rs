//! The posit family's registration and its [`Family`] arithmetic.

use std::cmp::Ordering;

use crate::arith::BinOp;
use crate::arith::{transcendental, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{field, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo};
use crate::format::FormatError;
use crate::sum::{self, Running};
use crate::SumMode;

use super::{with_const_format, PositFormat, PositStandard};
use crate::tapered;

/// `posit:N` (Posit Standard 2022, es = 2) and `posit:N:ES` (2017 draft), either with `:u`:
/// the rounded sums and the quire; one PE, multiplying into a quire.
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "posit",
    syntax: "posit:N, posit:N:ES (optionally :u)",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
    ],
    pes: &[PeInfo {
        name: "posit-quire",
        mode: SumMode::Quire,
        about: "posit multiply into a quire, rounded once at read-out",
    }],
    lanes: true,
    q8_word_rule: true,
    stochastic: false,
    example: "posit:16",
    expand_name: |_| None,
};

impl FamilyFormat for PositFormat {
    fn width(&self) -> u32 {
        self.n
    }
    type Arith = PositFormat;
    fn arith(&self) -> PositFormat {
        *self
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        let (n, es, standard) = match fields {
            [n] => (field(n, "width", whole)?, 2, PositStandard::Std2022),
            [n, es] => (
                field(n, "width", whole)?,
                field(es, "exponent size", whole)?,
                PositStandard::Draft2017,
            ),
            _ => return unknown_format(whole),
        };
        PositFormat::new(n, es, standard, underflow)
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// Posits saturate at ±maxpos by their definition.
    fn saturating(self) -> Option<Self> {
        Some(self)
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

impl Family for PositFormat {
    type Format = PositFormat;
    fn format(&self) -> PositFormat {
        *self
    }
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        with_const_format!(*self, |f| tapered::add(f, a, b, false))
    }
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        with_const_format!(*self, |f| tapered::add(f, a, b, true))
    }
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        with_const_format!(*self, |f| tapered::mul(f, a, b))
    }
    /// a / b; NaR if b is zero.
    #[inline]
    fn div(&self, a: Bits, b: Bits) -> Bits {
        with_const_format!(*self, |f| tapered::div(f, a, b))
    }
    fn neg(&self, a: Bits) -> Bits {
        tapered::neg(*self, a)
    }
    fn abs(&self, a: Bits) -> Bits {
        tapered::abs(*self, a)
    }
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        Some(PositFormat::cmp(self, a, b))
    }
    /// The larger; NaR if either is NaR (as an ALU lane propagates it).
    fn max(&self, a: Bits, b: Bits) -> Bits {
        tapered::pick(*self, a, b, Ordering::Greater)
    }
    /// The smaller; NaR if either is NaR.
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
    fn one(&self) -> Bits {
        1u64 << (self.n - 2)
    }
    fn zero(&self) -> Bits {
        0
    }
    /// The posit nearest to `x`; NaN and ±∞ give NaR.
    fn from_f64(&self, x: f64) -> Bits {
        tapered::from_f64(*self, x)
    }
    /// The exact value (every posit of up to 32 bits with es <= 5 is an f64, |scale| ≤ 960);
    /// NaR gives NaN.
    fn to_f64(&self, p: Bits) -> f64 {
        tapered::to_f64(*self, p)
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        PositFormat::from_ratio(self, r.neg, &r.num, &r.den)
    }
    fn exp(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Exp, self.nar())
    }
    fn ln(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Ln, self.nar())
    }
    /// √a, rounded once (bit-string rounding, ties to even); NaR for NaR and for a < 0.
    fn sqrt(&self, a: Bits) -> Bits {
        tapered::sqrt(*self, a)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        match mode {
            // The quire sums as a dot product with ones.
            SumMode::Quire => self.dot(mode, xs, &vec![PositFormat::one(self); xs.len()]),
            SumMode::Fdpa(_) => FAMILY.refuse_mode(mode, &self.format()),
            _ => Ok(sum::rounded_sum(self, mode, xs).expect("a rounded mode")),
        }
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        Ok(match mode {
            SumMode::Naive => match super::table::tables(*self) {
                Some(t) => t.ops.naive_dot(0, a, b),
                None => sum::naive_dot(self, a, b),
            },
            SumMode::Quire => self.dot_quire(a, b),
            SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
            _ => sum::rounded_dot(self, mode, a, b).expect("a rounded mode"),
        })
    }
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        let tables = super::table::tables(*self);
        match (mode, tables, self.f64_path()) {
            // Up to 8 bits naive sums look their operations up (`table/lanes.rs`); up to 16
            // bits the sequential sums run on binary64 lanes (`lanes.rs`).
            (SumMode::Naive, Some(t), _) => {
                // A product with the zero word is the zero word unless the other is NaR, and
                // s + 0 is s: each line skips its own zeros.
                let zeros = crate::table::Zeros::LeaveSums {
                    nan: Some(self.nar()),
                };
                return Ok(t.ops.naive_dots(zeros, rows, bs));
            }
            (SumMode::Naive, None, Some(p)) => return Ok(p.dots(false, rows, bs)),
            (SumMode::Kahan, _, Some(p)) => return Ok(p.dots(true, rows, bs)),
            _ => {}
        }
        let row = |a: &[Bits]| -> Result<Vec<Bits>, FormatError> {
            Ok(match mode {
                SumMode::Pairwise => match self.f64_path() {
                    Some(p) => sum::rounded_dots(&p, mode, a, bs).expect("a rounded mode"),
                    None => sum::rounded_dots(self, mode, a, bs).expect("a rounded mode"),
                },
                SumMode::Quire => bs.iter().map(|b| self.dot_quire(a, b)).collect(),
                SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
                _ => sum::rounded_dots(self, mode, a, bs).expect("a rounded mode"),
            })
        };
        crate::family_trait::dots_by_row(rows, row)
    }
    fn convert_to(&self, to: &PositFormat, a: Bits) -> Bits {
        crate::alu::posit_convert(*self, *to, a)
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
    /// The quire, for posits whose values and products are normal f64s.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        (self.n <= 32 && self.max_scale() <= 500).then_some(self as _)
    }
    /// The quire, or a rounded sum.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        match mode {
            SumMode::Quire => Some(Box::new(super::Quire::new(*self))),
            m => crate::accumulator::rounded(*self, FAMILY.modes, m),
        }
    }
    /// To nearest: [`PositFormat::encode`] of the top 63 bits, the rest sticky (at most 32
    /// bits are kept); stochastic rounding takes the exact ratio.
    fn round_parts(
        &self,
        neg: bool,
        sig: u128,
        exp: i64,
        r: &mut crate::rounding::Rounder,
    ) -> Option<Bits> {
        if r.rounding() != crate::rounding::Rounding::Nearest {
            return None;
        }
        if sig == 0 {
            return Some(0);
        }
        // sig has its top bit at 127 - lz; keep 63 bits (bit 62 the leading one).
        let top = 127 - i64::from(sig.leading_zeros());
        let shift = top - 62;
        // The sticky bit, sig's lowest, is among the bits shifted out.
        debug_assert!(
            shift >= 1,
            "round_parts takes at least 73 bits above the sticky bit"
        );
        let (kept, sticky) = (sig >> shift, sig & ((1u128 << shift) - 1) != 0);
        let scale = (exp + top).clamp(i64::from(i32::MIN / 2), i64::from(i32::MAX / 2)) as i32;
        Some(self.encode(neg, scale, kept as u64, sticky))
    }
}
