//! The fix family's registration and its [`Family`] arithmetic.

use std::cmp::Ordering;

use crate::arith::BinOp;
use crate::arith::{transcendental, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{
    field, no_underflow, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo,
};
use crate::format::FormatError;
use crate::sum::{self, Running};
use crate::SumMode;

use super::{rne_shift, FixFormat};
use crate::rounding::Draw;

/// `fix:I:F`: the rounded sums and the wide accumulator (mode `quire`); one PE, the MAC
/// with that accumulator.
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "fix",
    syntax: "fix:I:F",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
    ],
    pes: &[PeInfo {
        name: "fix",
        mode: SumMode::Quire,
        about: "fixed-point MAC with a wide accumulator",
    }],
    lanes: true,
    q8_word_rule: true,
    stochastic: true,
    example: "fix:7:8",
    expand_name: |_| None,
};

impl FamilyFormat for FixFormat {
    fn width(&self) -> u32 {
        FixFormat::width(self)
    }
    type Arith = FixFormat;
    fn arith(&self) -> FixFormat {
        *self
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return no_underflow(whole);
        }
        match fields {
            [i, f] => FixFormat::new(
                field(i, "integer bits", whole)?,
                field(f, "fraction bits", whole)?,
            ),
            _ => unknown_format(whole),
        }
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// Fix saturates at its extreme words by its definition.
    fn saturating(self) -> Option<Self> {
        Some(self)
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

impl Family for FixFormat {
    type Format = FixFormat;
    fn format(&self) -> FixFormat {
        *self
    }
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        self.from_int(self.to_int(a) as i128 + self.to_int(b) as i128)
    }
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        self.from_int(self.to_int(a) as i128 - self.to_int(b) as i128)
    }
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        let p = self.to_int(a) as i128 * self.to_int(b) as i128;
        self.from_int(rne_shift(p, self.frac_bits))
    }
    fn div(&self, a: Bits, b: Bits) -> Bits {
        self.div_d(a, b, Draw::Nearest)
    }
    fn neg(&self, a: Bits) -> Bits {
        self.from_int(-(self.to_int(a) as i128))
    }
    fn abs(&self, a: Bits) -> Bits {
        self.from_int((self.to_int(a) as i128).abs())
    }
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        Some(FixFormat::cmp(self, a, b))
    }
    fn max(&self, a: Bits, b: Bits) -> Bits {
        if FixFormat::cmp(self, a, b) == Ordering::Less {
            b
        } else {
            a
        }
    }
    fn min(&self, a: Bits, b: Bits) -> Bits {
        if FixFormat::cmp(self, a, b) == Ordering::Greater {
            b
        } else {
            a
        }
    }
    fn is_nan(&self, _: Bits) -> bool {
        false
    }
    fn nan(&self) -> Option<Bits> {
        None
    }
    fn one(&self) -> Bits {
        self.from_int(1i128 << self.frac_bits)
    }
    fn zero(&self) -> Bits {
        0
    }
    /// The nearest word to `x`, saturating; NaN gives 0.
    fn from_f64(&self, x: f64) -> Bits {
        if x.is_nan() {
            return 0;
        }
        if x.is_infinite() {
            return self.from_int(if x > 0.0 { i128::MAX } else { i128::MIN });
        }
        // |x|·2^F is exact in f64 (a power-of-two scaling that cannot underflow), and beyond
        // 2^40 everything saturates alike: from_ratio's rounding without big integers (the
        // host converted every input pixel through them, serially).
        let scaled = (x.abs() * (self.frac_bits as f64).exp2()).round_ties_even();
        let q = if scaled >= (1u64 << 40) as f64 {
            1i128 << 40
        } else {
            scaled as i128
        };
        self.from_int(if x < 0.0 { -q } else { q })
    }
    fn to_f64(&self, a: Bits) -> f64 {
        self.to_int(a) as f64 / (1u64 << self.frac_bits) as f64
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        FixFormat::from_ratio(self, r.neg, &r.num, &r.den)
    }
    fn exp(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Exp, self.from_int(i128::MIN))
    }
    /// ln of x <= 0 saturates to the most negative word.
    fn ln(&self, a: Bits) -> Bits {
        transcendental(self, a, Transcendental::Ln, self.from_int(i128::MIN))
    }
    /// √a to nearest (`FixFormat::sqrt_d`).
    fn sqrt(&self, a: Bits) -> Bits {
        self.sqrt_d(a, Draw::Nearest)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        Ok(match mode {
            SumMode::Quire => self.sum_acc(xs),
            SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
            _ => sum::rounded_sum(self, mode, xs).expect("a rounded mode"),
        })
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        Ok(match mode {
            SumMode::Quire => self.dot_acc(a, b),
            SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
            _ => sum::rounded_dot(self, mode, a, b).expect("a rounded mode"),
        })
    }
    /// Column by column: in lockstep, eight columns' naive sums ran 9 % slower (fix:7:8 at
    /// 256³, `examples/kernels.rs`); the products in mode quire take the exact kernel.
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        crate::family_trait::dots_by_element(self, mode, rows, bs)
    }
    fn convert_to(&self, to: &FixFormat, a: Bits) -> Bits {
        crate::alu::fix_convert(*self, *to, a)
    }
    /// Fix elementwise operations saturate without a flag here: fix defines its overflow
    /// flag on the accumulator's read-out (`running_dot` in mode quire, `fix-mac`).
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        crate::family_trait::fma_by_quire(self, a, b, c)
    }
    fn binop_flagged(&self, _: BinOp, _: Bits, _: Bits) -> Option<(Bits, bool)> {
        None
    }
    /// Quire: the wide accumulator step by step, each read-out with its saturation flag
    /// ([`super::FixAcc::to_word_flagged`], `fix-mac`'s `overflow`). Other modes: every
    /// prefix, no flags.
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        assert_eq!(a.len(), b.len());
        if mode != SumMode::Quire {
            return sum::running_by_prefix(self, mode, a, b);
        }
        let mut acc = super::FixAcc::new(*self);
        let (words, overflow) = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| {
                acc.add_product(x, y);
                acc.to_word_flagged()
            })
            .unzip();
        Ok(Running {
            words,
            overflow: Some(overflow),
        })
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
        Some(self)
    }
    /// The wide accumulator, for words of up to 32 bits (an accumulator of up to 80).
    fn binop_lanes(&self, op: crate::AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
        super::lanes::binop(self, op, a, b, out)
    }
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        (self.width() <= 32).then_some(self as _)
    }
    /// The wide accumulator, or a rounded sum.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        match mode {
            SumMode::Quire => Some(Box::new(crate::FixAcc::new(*self))),
            m => crate::accumulator::rounded(*self, FAMILY.modes, m),
        }
    }
}
