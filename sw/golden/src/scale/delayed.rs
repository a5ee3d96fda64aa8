//! Delayed scaling (TransformerEngine's `DelayedScaling` with `amax_compute_algo="max"`):
//! a tensor is quantized with the scale chosen before it was seen; then its amax joins a
//! history of the last H amaxes and the next scale is computed from the largest of them,
//! divided by 2^margin. While the history holds only zeros the scale stays what it was (1 at
//! the start), as TransformerEngine keeps its scale where the amax is 0.

use std::collections::VecDeque;

use super::quant::ONE_F32;
use super::{Quantized, Rule, ScaledFormat};
use crate::arith::Bits;
use crate::format::{err, FormatError};

/// A scaled format under the delayed rule, with its amax history.
#[derive(Clone, Debug)]
pub struct Delayed {
    format: ScaledFormat,
    history: usize,
    margin: i32,
    /// The last `history` amaxes, the most recent last.
    amaxes: VecDeque<f64>,
    /// The scale the next tensor is quantized with: the tensor scale s (f32 bits) where the
    /// format has one, else the tensor granularity's scale code.
    word: Bits,
}

impl Delayed {
    /// The delayed rule `rule` on `format`, or the one-line reason it cannot drive it.
    pub fn new(format: ScaledFormat, rule: Rule) -> Result<Delayed, FormatError> {
        format.check_rule(rule)?;
        let Rule::Delayed { history, margin } = rule else {
            return err(format!(
                "{rule} is not a delayed rule (delayed[:H[:MARGIN]])"
            ));
        };
        if history == 0 {
            return err("an amax history of 0 steps keeps nothing: H >= 1");
        }
        let word = if format.tensor_scale {
            Bits::from(ONE_F32)
        } else {
            format.scale.one()
        };
        Ok(Delayed {
            format,
            history,
            margin,
            amaxes: VecDeque::with_capacity(history),
            word,
        })
    }

    /// The rule as it stood when it was saved: `history` the amaxes oldest first (at most
    /// H), `word` the scale the next tensor gets ([`Delayed::scale_word`]). A checkpoint's
    /// amax history, restored word for word.
    pub fn resume(
        format: ScaledFormat,
        rule: Rule,
        history: &[f64],
        word: Bits,
    ) -> Result<Delayed, FormatError> {
        let mut d = Delayed::new(format, rule)?;
        if history.len() > d.history {
            return err(format!(
                "an amax history of {} values for a rule that keeps {}",
                history.len(),
                d.history
            ));
        }
        if let Some(a) = history.iter().find(|a| !(a.is_finite() && **a >= 0.0)) {
            return err(format!(
                "an amax of {a} in a history: amaxes are finite and >= 0"
            ));
        }
        d.amaxes.extend(history.iter().copied());
        d.word = word;
        Ok(d)
    }

    /// The scale the next tensor gets (f32 bits of s, or the tensor's scale code).
    pub fn scale_word(&self) -> Bits {
        self.word
    }

    /// The amaxes in the history, oldest first.
    pub fn history(&self) -> impl Iterator<Item = f64> + '_ {
        self.amaxes.iter().copied()
    }

    /// Quantizes one R × K tensor with the current scale, then records its amax and
    /// chooses the next scale.
    pub fn quantize(
        &mut self,
        x: &[f64],
        rows: usize,
        cols: usize,
    ) -> Result<Quantized, FormatError> {
        let f = self.format;
        let q = if f.tensor_scale {
            f.quantize_at(x, rows, cols, self.word as u32, None)?
        } else {
            f.quantize_at(x, rows, cols, ONE_F32, Some(self.word))?
        };
        self.observe(x.iter().fold(0f64, |m, v| m.max(v.abs())));
        Ok(q)
    }

    /// Records one amax and chooses the next scale from the largest in the history.
    pub fn observe(&mut self, amax: f64) {
        if self.amaxes.len() == self.history {
            self.amaxes.pop_front();
        }
        self.amaxes.push_back(amax);
        let m = self.amaxes.iter().fold(0f64, |m, &a| m.max(a));
        if m > 0.0 {
            let f = self.format;
            self.word = if f.tensor_scale {
                Bits::from(f.tensor_scale_for(m, self.margin))
            } else {
                f.group_scale(m, ONE_F32, self.margin)
            };
        }
    }
}
