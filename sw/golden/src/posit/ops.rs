//! Posit add, subtract, multiply, divide, compare: the tapered arithmetic of
//! [`crate::tapered`] (an exact intermediate, one rounding), inlined per common format.

use std::cmp::Ordering;

use super::{with_const_format, PositFormat};
use crate::tapered;

impl PositFormat {
    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| tapered::add(f, a, b, false))
    }

    #[inline]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| tapered::add(f, a, b, true))
    }

    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| tapered::mul(f, a, b))
    }

    /// a / b; NaR if b is zero.
    #[inline]
    pub fn div(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| tapered::div(f, a, b))
    }

    pub fn neg(&self, a: u64) -> u64 {
        tapered::neg(*self, a)
    }

    /// √a, rounded once (bit-string rounding, ties to even); NaR for NaR and for a < 0.
    pub fn sqrt(&self, a: u64) -> u64 {
        tapered::sqrt(*self, a)
    }

    pub fn abs(&self, a: u64) -> u64 {
        tapered::abs(*self, a)
    }

    /// The standard's total order: posits compare as two's-complement integers, so NaR is
    /// below every real and equal to itself.
    pub fn cmp(&self, a: u64, b: u64) -> Ordering {
        tapered::cmp(*self, a, b)
    }

    /// The larger; NaR if either is NaR (as an ALU lane propagates it).
    pub fn max(&self, a: u64, b: u64) -> u64 {
        tapered::pick(*self, a, b, Ordering::Greater)
    }

    /// The smaller; NaR if either is NaR.
    pub fn min(&self, a: u64, b: u64) -> u64 {
        tapered::pick(*self, a, b, Ordering::Less)
    }
}
