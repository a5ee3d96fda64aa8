//! Seed 002's overflow-rate rule as a rule of the scaling layer, and dynamic fixed point as
//! one of its scaled formats (issue 50).
//!
//! A dfix:W group holds W-bit two's complement integers under one power-of-two scale 2^e: it
//! is the scaled format `scaled/fix:(W−1):0/tensor/e8m0` with the scale code e + 127, for
//! the scales E8M0 holds (−127 … 127; dfix's own reach ±1000). [`OverflowRate`] quantizes
//! through that scaled format and moves the scale by dfix's own rule ([`Group::update`]: "if
//! the overflow rate associated with a scaling factor is greater than a given maximum
//! overflow rate, we multiply this scaling factor by two …"), so the rule is written once, in
//! `dfix/group.rs`, and its rounding once, in the fix family. A test holds the instance to
//! the dfix group word for word.

use super::{Granularity, Quantized, Scale, ScaledFormat};
use crate::dfix::group::Group;
use crate::dfix::DfixFormat;
use crate::format::{err, FormatError};

/// The E8M0 code of scale 2^0.
const E8M0_BIAS: i32 = 127;

/// dfix:W as a scaled format: fix:(W−1):0 elements (W-bit integers), one E8M0 scale per
/// tensor.
pub fn dfix_instance(d: DfixFormat) -> Result<ScaledFormat, FormatError> {
    let elem = format!("fix:{}:0", d.width - 1);
    ScaledFormat::new(&elem, Granularity::Tensor, Scale::E8m0, false)
}

/// A tensor under seed 002's overflow-rate rule: quantized at its scale, its overflows at
/// the scale and at half of it counted, the scale moved by [`OverflowRate::update`].
#[derive(Clone, Debug)]
pub struct OverflowRate {
    format: ScaledFormat,
    group: Group,
}

impl OverflowRate {
    /// dfix:`d` at scale 2^`scale`, or the one-line reason E8M0 cannot hold that scale.
    pub fn new(d: DfixFormat, scale: i32) -> Result<OverflowRate, FormatError> {
        if !(-E8M0_BIAS..=E8M0_BIAS).contains(&scale) {
            return err(format!(
                "scale 2^{scale} for {d} under the overflow-rate rule: an E8M0 scale holds \
                 2^-127 … 2^127"
            ));
        }
        Ok(OverflowRate {
            format: dfix_instance(d)?,
            group: Group::new(d, scale),
        })
    }

    /// The scaled format the rule drives.
    pub fn format(&self) -> ScaledFormat {
        self.format
    }

    /// The scale's exponent e (the scale is 2^e).
    pub fn scale(&self) -> i32 {
        self.group.scale
    }

    /// Quantizes an R × K tensor at the current scale and counts its overflows (at the scale
    /// and at its half) toward the next update.
    pub fn quantize(
        &mut self,
        x: &[f64],
        rows: usize,
        cols: usize,
    ) -> Result<Quantized, FormatError> {
        let code = (self.group.scale + E8M0_BIAS) as crate::arith::Bits;
        let q = self.format.quantize_with(x, rows, cols, code)?;
        self.group.store(&mut x.to_vec());
        Ok(q)
    }

    /// Seed 002 §5's update from the counts since the last one ([`Group::update`]), kept
    /// within E8M0's scales; returns the scale change (+1, −1 or 0).
    pub fn update(&mut self, max_overflow: f64) -> i32 {
        let before = self.group.scale;
        self.group.update(max_overflow);
        self.group.scale = self.group.scale.clamp(-E8M0_BIAS, E8M0_BIAS);
        self.group.scale - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfix::group::round_onto_grid;
    use crate::rng::Rng;

    /// dfix:W is the scaled format fix:(W−1):0 per tensor under an E8M0 scale: every word
    /// the scaled format gives is the dfix word of the same value at the same scale, and its
    /// value is the dfix group's rounding (ties to even, saturation, zeros), for widths 2 …
    /// 16 and scales across E8M0's range.
    #[test]
    fn a_dfix_group_is_a_scaled_format_word_for_word() {
        let mut r = Rng(0xdf1c);
        for width in [2, 3, 4, 8, 12, 16] {
            let d = DfixFormat { width };
            assert_eq!(
                dfix_instance(d).unwrap().to_string(),
                format!("scaled/fix:{}:0/tensor/e8m0", width - 1)
            );
            for e in [-127, -40, -9, -1, 0, 1, 5, 100, 127] {
                let ulp = 2f64.powi(e);
                let top = 2f64.powi(width as i32 - 1);
                let mut x = vec![0.0, -0.0, ulp / 2.0, -ulp / 2.0, 1.5 * ulp, 2.5 * ulp];
                x.extend([
                    top * ulp,
                    -top * ulp,
                    (top - 0.5) * ulp,
                    -(top + 0.5) * ulp,
                    1e300,
                ]);
                for _ in 0..500 {
                    let k = (r.next_u64() % (4 * top as u64)) as f64 - 2.0 * top;
                    let frac = [
                        0.0,
                        0.5,
                        0.25,
                        0.75,
                        (r.next_u64() >> 11) as f64 / 2f64.powi(53),
                    ];
                    x.push((k + frac[r.below(5) as usize]) * ulp);
                }
                let mut rule = OverflowRate::new(d, e).unwrap();
                let q = rule.quantize(&x, 1, x.len()).unwrap();
                assert_eq!(q.scales, vec![(e + 127) as u64]);
                let mut grid = x.clone();
                let counts = round_onto_grid(d, e, &mut grid);
                for (i, &xi) in x.iter().enumerate() {
                    let want = d.from_f64(xi, e).word;
                    assert_eq!(q.codes[i], want, "dfix:{width} at 2^{e}: {xi:e}");
                    assert_eq!(
                        d.to_f64(q.codes[i], e),
                        grid[i],
                        "dfix:{width} at 2^{e}: {xi:e}"
                    );
                }
                // The rule counts as the dfix group does, and moves the scale as it does.
                let mut g = Group::new(d, e);
                g.store(&mut x.clone());
                assert_eq!((g.overflows, g.overflows_at_half), counts);
                let step = g.update(1e-4).clamp(-127 - e, 127 - e);
                assert_eq!(rule.update(1e-4), step, "dfix:{width} at 2^{e}");
                assert_eq!(rule.scale(), (e + step));
            }
        }
        let e = OverflowRate::new(DfixFormat { width: 8 }, 128).unwrap_err();
        assert!(e.0.contains("2^-127 … 2^127") && !e.0.contains('\n'), "{e}");
    }
}
