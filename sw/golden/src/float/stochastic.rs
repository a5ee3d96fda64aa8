//! The float family's operations under a [`Rounder`] (nearest or `stochastic:R`,
//! docs/formats.md "Stochastic rounding"): each takes exactly one draw, whatever its
//! operands (a NaN, an ∞, an exact result alike), and rounds once with it.

use crate::arith::{BinOp, Bits};
use crate::exact::Ratio;
use crate::family_trait::Family;
use crate::rounding::{RoundedOps, Rounder};

use super::acc::ExactAcc;
use super::FloatFormat;

impl ExactAcc {
    /// The sum read out once by `r` (one draw): [`FloatFormat::dot_exact_with`]'s read-out,
    /// for an accumulator fed step by step (the array PE's).
    pub fn result_with(&self, r: &mut Rounder) -> Bits {
        self.result_d(r.draw())
    }
}

impl FloatFormat {
    /// a + b rounded by `r` (one draw).
    pub fn add_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        self.add_d(a, b, r.draw())
    }

    /// a − b rounded by `r` (one draw): a + (−b).
    pub fn sub_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        self.add_d(a, self.neg(b), r.draw())
    }

    /// a · b rounded by `r` (one draw).
    pub fn mul_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        self.mul_d(a, b, r.draw())
    }

    /// a / b rounded by `r` (one draw).
    pub fn div_with(&self, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        self.div_d(a, b, r.draw())
    }

    /// √a rounded by `r` (one draw).
    pub fn sqrt_with(&self, a: Bits, r: &mut Rounder) -> Bits {
        self.sqrt_d(a, r.draw())
    }

    /// a · b + c with one rounding by `r` (one draw).
    pub fn fma_with(&self, a: Bits, b: Bits, c: Bits, r: &mut Rounder) -> Bits {
        self.fma_d(a, b, c, r.draw())
    }

    /// Σ a_k·b_k in the exact accumulator, read out once by `r` (one draw).
    pub fn dot_exact_with(&self, a: &[Bits], b: &[Bits], r: &mut Rounder) -> Bits {
        assert_eq!(a.len(), b.len());
        let mut acc = ExactAcc::new(*self);
        for (&x, &y) in a.iter().zip(b) {
            acc.add_product(x, y);
        }
        acc.result_d(r.draw())
    }

    /// The word of `x` rounded by `r` (one draw).
    pub fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Bits {
        self.from_f64_d(x, r.draw())
    }

    /// The word of an exact ratio rounded by `r` (one draw).
    pub fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Bits {
        self.from_ratio_d(x, r.draw())
    }

    /// `a` as a word of `to` rounded by `r` (one draw, even where `to` holds `a` exactly).
    pub fn convert_with(&self, to: &FloatFormat, a: Bits, r: &mut Rounder) -> Bits {
        self.convert_d(to, a, r.draw())
    }
}

impl RoundedOps for FloatFormat {
    fn from_f64_with(&self, x: f64, r: &mut Rounder) -> Bits {
        FloatFormat::from_f64_with(self, x, r)
    }

    fn from_ratio_with(&self, x: &Ratio, r: &mut Rounder) -> Bits {
        FloatFormat::from_ratio_with(self, x, r)
    }

    /// add, sub, mul, div take one draw; max and min do not round and take none.
    fn binop_with(&self, op: BinOp, a: Bits, b: Bits, r: &mut Rounder) -> Bits {
        match op {
            BinOp::Add => self.add_with(a, b, r),
            BinOp::Sub => self.sub_with(a, b, r),
            BinOp::Mul => self.mul_with(a, b, r),
            BinOp::Div => self.div_with(a, b, r),
            BinOp::Max => self.max(a, b),
            BinOp::Min => self.min(a, b),
        }
    }

    fn sqrt_with(&self, a: Bits, r: &mut Rounder) -> Bits {
        FloatFormat::sqrt_with(self, a, r)
    }

    fn dot_exact_with(&self, a: &[Bits], b: &[Bits], r: &mut Rounder) -> Bits {
        FloatFormat::dot_exact_with(self, a, b, r)
    }
}
