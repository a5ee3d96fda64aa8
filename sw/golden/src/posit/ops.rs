//! The posit total order. Add, subtract, multiply, divide and the rest are the posit
//! `Family` impl's (`family.rs`): the tapered arithmetic of [`crate::tapered`] (an exact
//! intermediate, one rounding), inlined per common format.

use std::cmp::Ordering;

use super::PositFormat;
use crate::tapered;

impl PositFormat {
    /// The standard's total order: posits compare as two's-complement integers, so NaR is
    /// below every real and equal to itself.
    pub fn cmp(&self, a: u64, b: u64) -> Ordering {
        tapered::cmp(*self, a, b)
    }
}
