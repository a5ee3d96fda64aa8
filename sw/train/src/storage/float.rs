//! Seed 002's floating-point storage (`--format store:F`, `store:P/U`): the arithmetic stays in
//! f32, and every value is rounded to nearest even to a float format (golden
//! `FloatFormat::from_f64`) as it is stored, where dfix storage rounds it onto its group's
//! grid: parameters and their changes in the update format U, everything else (and the
//! parameters as propagations read them) in the propagation format P. Seed 002's "half
//! precision floating point" row (Table 3) is `store:f16`, 16 bits for both. A float has no
//! scale to move: there is nothing to fit and nothing to checkpoint. With
//! `--rounding stochastic:R` each stored value of a training pass is rounded stochastically
//! instead (golden `FloatFormat::from_f64_with`), element i with the i-th draw of the
//! tensor's positions of the run's stream.

use lpgen_golden::float::FloatFormat;
use lpgen_golden::kernel::elementwise::FloatKernel;
use lpgen_golden::Family;
use lpgen_golden::Format;

use super::{EpochCounts, Role};
use crate::machine::Word;
use crate::rounding::Draws;
use crate::TrainError;

/// What `--format store:P/U` asks for: the float formats values are stored in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatConfig {
    /// Activations, sums, errors, gradients, and parameters as propagations read them.
    pub propagation: FloatFormat,
    /// Parameters and their changes, as the update reads and writes them.
    pub update: FloatFormat,
}

/// How the syntax reads, for error messages.
const SYNTAX: &str =
    "store:F or store:P/U with float formats (e.g. store:f16, store:bf16/f32, store:float:5:7)";

impl FloatConfig {
    /// The storage of `store:SPEC`, given SPEC: `F` (P = U = F) or `P/U`, each a float-family
    /// format (`f16`, `bf16`, `fp8:e4m3`, `float:E:M[:fn][:sat][:ftz]`) or `f32`
    /// (`float:8:23`), whose values are all f32 values (E <= 8, M <= 23: the machines keep
    /// f32 words).
    pub fn parse(spec: &str) -> Result<FloatConfig, TrainError> {
        let whole = format!("store:{spec}");
        let one = |s: &str| -> Result<FloatFormat, TrainError> {
            let f = match s.trim().parse::<Format>() {
                Ok(Format::Float(f)) => f,
                Ok(Format::F32(_)) => FloatFormat::new(8, 23, false, false, false)
                    .expect("float:8:23 is a float"),
                Ok(Format::Dfix(_)) => {
                    return Err(TrainError(format!(
                        "format {whole:?}: {s} is not a float; dynamic fixed-point storage is --format dfix:P:U"
                    )))
                }
                Ok(other) => {
                    return Err(TrainError(format!(
                        "format {whole:?}: storage rounds to a float format, and {other} is a {} format; expected {SYNTAX}",
                        other.family()
                    )))
                }
                Err(e) => return Err(TrainError(format!("format {whole:?}: {e}"))),
            };
            if f.exp_bits > 8 || f.frac_bits > 23 {
                return Err(TrainError(format!(
                    "format {whole:?}: {f} has values f32 does not hold (storage keeps f32 words: E <= 8, M <= 23)"
                )));
            }
            Ok(f)
        };
        let (p, u) = match spec.split_once('/') {
            Some((p, u)) => (p, u),
            None => (spec, spec),
        };
        if p.trim().is_empty() || u.trim().is_empty() {
            return Err(TrainError(format!("format {whole:?} is not {SYNTAX}")));
        }
        Ok(FloatConfig {
            propagation: one(p)?,
            update: one(u)?,
        })
    }

    /// The one-line description of titles and fingerprints: `floating point P/U`.
    pub fn describe(&self) -> String {
        format!("floating point {}/{}", self.propagation, self.update)
    }

    /// The `--format` that asks for this storage (`store:f16` when P = U).
    pub fn name(&self) -> String {
        if self.propagation == self.update {
            format!("store:{}", self.update)
        } else {
            format!("store:{}/{}", self.propagation, self.update)
        }
    }

    /// The format of group `role`: parameters and their changes at U, the rest at P.
    fn format(&self, role: Role) -> FloatFormat {
        if role.is_update() {
            self.update
        } else {
            self.propagation
        }
    }

    /// Stores `words` (f32 words of `f`) in group `role`: each rounded to the group's float
    /// format, to nearest even, or with `draws` stochastically (word i with draw i). When
    /// `training`, `epoch` counts them and those that overflowed (a finite value beyond the
    /// largest finite number, stored as ±∞, NaN or ±max).
    pub fn store<W: Word>(
        &self,
        f: Format,
        role: Role,
        words: &mut [W],
        (training, draws): (bool, Option<&Draws>),
        epoch: &mut EpochCounts,
    ) {
        let to = self.format(role);
        let max = to.to_f64(to.max_finite(false));
        let mut xs: Vec<f64> = words.iter().map(|w| w.value(f)).collect();
        if training {
            epoch.stored += xs.len() as u64;
            epoch.overflows += xs.iter().filter(|x| x.is_finite() && x.abs() > max).count() as u64;
        }
        match draws {
            Some(d) => xs.iter_mut().enumerate().for_each(|(i, x)| {
                *x = to.to_f64(to.from_f64_with(*x, &mut d.rounder(i)));
            }),
            None => nearest(to, &mut xs),
        }
        for (w, x) in words.iter_mut().zip(xs) {
            *w = W::constant(f, x);
        }
    }

    /// A parameter group's words as propagations read them: rounded to P where P is not U
    /// (§6), unchanged where it is.
    pub fn read<W: Word>(&self, f: Format, words: &[W]) -> Vec<W> {
        let p = self.propagation;
        if p == self.update {
            return words.to_vec();
        }
        let mut xs: Vec<f64> = words.iter().map(|w| w.value(f)).collect();
        nearest(p, &mut xs);
        xs.into_iter().map(|x| W::constant(f, x)).collect()
    }
}

/// Each of `xs` rounded to nearest even in `f`, as a value: `to_f64(from_f64(x))`, through
/// the golden library's branch-free encoder and value table where the format has them
/// ([`FloatKernel::quantize`]: formats of at most 16 bits, held to `from_f64` and `to_f64`
/// by its tests; docs/perf.md), through the definition itself otherwise.
fn nearest(f: FloatFormat, xs: &mut [f64]) {
    match FloatKernel::of(f) {
        Some(k) => {
            let values = xs.to_vec();
            k.quantize(&values, xs);
        }
        None => xs.iter_mut().for_each(|x| *x = f.to_f64(f.from_f64(*x))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::F32;

    const F: Format = Format::F32(F32);

    #[test]
    fn spellings_parse_and_print_back() {
        let half = FloatConfig::parse("f16").unwrap();
        assert_eq!(
            (half.propagation.exp_bits, half.propagation.frac_bits),
            (5, 10)
        );
        assert_eq!(half.propagation, half.update);
        assert_eq!(half.describe(), "floating point f16/f16");
        assert_eq!(half.name(), "store:f16");
        let mixed = FloatConfig::parse("bf16/f32").unwrap();
        assert_eq!((mixed.update.exp_bits, mixed.update.frac_bits), (8, 23));
        assert_eq!(mixed.name(), "store:bf16/float:8:23");
        assert_eq!(FloatConfig::parse("bf16/float:8:23").unwrap(), mixed);
        for bad in [
            "",
            "f16/",
            "/f16",
            "posit:8:2",
            "dfix:10",
            "lns:5:6",
            "fix:7:8",
            "float:12:60",
            "float:11:52",
            "float:5:30",
            "f17",
        ] {
            let e = FloatConfig::parse(bad).unwrap_err().0;
            assert!(e.starts_with("format \"store:"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
    }

    /// Stored values are binary16's nearest (ties to even), written out from the standard's
    /// grid: 1 + 2^−10 steps between 1 and 2, subnormal steps of 2^−24, largest 65504.
    #[test]
    fn stored_values_are_rounded_to_nearest_even_half_precision() {
        let s = FloatConfig::parse("f16").unwrap();
        let ulp = 2f32.powi(-10);
        let mut words = [
            1.0 + ulp / 2.0,      // tie: to even (1)
            1.0 + 1.5 * ulp,      // tie: to even (1 + 2 ulp)
            1.0 + 0.5001 * ulp,   // above the tie: up
            65519.0,              // below 65504 + 16: 65504
            65520.0,              // the tie at max + half a step: ∞ (IEEE overflow)
            3.0 * 2f32.powi(-25), // 1.5 subnormal steps: tie to even (2 steps)
            2f32.powi(-26),       // a quarter step: +0
            -0.1,                 // a sign and an ordinary fraction
        ];
        let mut epoch = EpochCounts::default();
        s.store(F, Role::WeightedSum, &mut words, (true, None), &mut epoch);
        assert_eq!(words[0], 1.0);
        assert_eq!(words[1], 1.0 + 2.0 * ulp);
        assert_eq!(words[2], 1.0 + ulp);
        assert_eq!(words[3], 65504.0);
        assert_eq!(words[4], f32::INFINITY);
        assert_eq!(words[5], 2.0 * 2f32.powi(-24));
        assert_eq!(words[6], 0.0);
        // 0.1 = 1.6 · 2^−4: fraction 0.6 · 1024 = 614.4 → 614; −(1 + 614/1024) · 2^−4.
        assert_eq!(words[7], -(1.0 + 614.0 / 1024.0) / 16.0);
        assert_eq!(
            epoch,
            EpochCounts {
                stored: 8,
                overflows: 2
            }
        );
        // Not training: rounded the same, not counted.
        let mut again = [1.0 + ulp / 2.0];
        s.store(F, Role::Input, &mut again, (false, None), &mut epoch);
        assert_eq!((again[0], epoch.stored), (1.0, 8));
    }

    /// Stored and read values are the definition's, `to_f64(from_f64(x))` word by word, on
    /// every kind of f32 (random bit patterns: NaNs, infinities, subnormals; ties of each
    /// format; overflows), for formats with the fast encoder and one without, and the
    /// overflow count is the definition's.
    #[test]
    fn stored_values_are_the_definitions_word_for_word() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(0x9e37_79b9);
        let mut values: Vec<f32> = (0..20_000).map(|_| f32::from_bits(rng.gen())).collect();
        // Ties and near-ties of every format below (the halfway points of 1 + k·2^−m).
        for m in [1, 2, 3, 7, 10, 23] {
            for k in 0..8 {
                let tie = 1.0 + (2 * k + 1) as f32 * 2f32.powi(-m - 1);
                values.extend([
                    tie,
                    -tie,
                    tie * 1e-5,
                    tie * 3e4,
                    f32::from_bits(tie.to_bits() + 1),
                ]);
            }
        }
        values.extend([
            0.0, -0.0, 65504.0, 65520.0, 448.0, 464.0, 57344.0, 61440.0, 1e-40,
        ]);
        for spec in ["f16", "bf16", "fp8:e4m3", "fp8:e5m2", "float:8:16"] {
            let s = FloatConfig::parse(spec).unwrap();
            let to = s.format(Role::WeightedSum);
            let max = to.to_f64(to.max_finite(false));
            let want: Vec<f32> = (values.iter())
                .map(|&x| to.to_f64(to.from_f64(f64::from(x))) as f32)
                .collect();
            let overflows = (values.iter())
                .filter(|x| x.is_finite() && f64::from(x.abs()) > max)
                .count() as u64;
            let mut got = values.clone();
            let mut epoch = EpochCounts::default();
            s.store(F, Role::WeightedSum, &mut got, (true, None), &mut epoch);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{spec}: store({:e})", values[i]);
            }
            assert_eq!(
                (epoch.stored, epoch.overflows),
                (values.len() as u64, overflows)
            );
            // Read at P from parameters kept at a wider U.
            let two = FloatConfig::parse(&format!("{spec}/float:8:23")).unwrap();
            assert_eq!(two.propagation, to, "{spec}");
            let read = two.read(F, &values);
            for (i, (r, w)) in read.iter().zip(&want).enumerate() {
                assert_eq!(r.to_bits(), w.to_bits(), "{spec}: read({:e})", values[i]);
            }
        }
    }

    #[test]
    fn parameters_are_stored_at_u_and_read_at_p() {
        let s = FloatConfig::parse("fp8:e5m2/f16").unwrap();
        let mut epoch = EpochCounts::default();
        let mut w = [1.0f32 + 2f32.powi(-10), 0.3];
        s.store(F, Role::Weights, &mut w, (true, None), &mut epoch);
        assert_eq!(w[0], 1.0 + 2f32.powi(-10), "f16 holds it");
        // e5m2: two fraction bits; 1 + 2^−10 → 1; 0.3 (f16: (1 + 205/1024) · 2^−2) → 1.25 · 2^−2.
        assert_eq!(s.read(F, &w), [1.0, 0.3125]);
        let mut sums = [1.0f32 + 2f32.powi(-10)];
        s.store(F, Role::WeightedSum, &mut sums, (true, None), &mut epoch);
        assert_eq!(sums, [1.0], "activations at P");
        let same = FloatConfig::parse("f16").unwrap();
        assert_eq!(same.read(F, &[0.1f32]), [0.1], "P = U: read as stored");
    }
}
