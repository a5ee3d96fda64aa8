//! A group of dynamic fixed-point values that share a scale (seed 002 §5): a layer's weights,
//! biases, weighted sums, outputs or one of their gradients. Values are rounded onto the
//! group's grid as they are stored, the overflows at the scale and at its half are counted,
//! and every so often the scale moves: "if the overflow rate associated with a scaling factor
//! is greater than a given maximum overflow rate, we multiply this scaling factor by two. If
//! the overflow rate associated with the half of a scaling factor is less than the maximum
//! overflow rate, we divide this scaling factor by two."

use super::{DfixFormat, MAX_SCALE};

/// A group's scale exponent e (a word w means int(w)·2^e) and its overflow counts since the
/// last update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub format: DfixFormat,
    pub scale: i32,
    /// Values stored since the last update.
    pub seen: u64,
    /// Of those, how many saturated at `scale`, and how many would have at `scale − 1`.
    pub overflows: u64,
    pub overflows_at_half: u64,
}

impl Group {
    pub fn new(format: DfixFormat, scale: i32) -> Group {
        Group {
            format,
            scale,
            seen: 0,
            overflows: 0,
            overflows_at_half: 0,
        }
    }

    /// Rounds every value onto the group's grid (to nearest, ties to even, saturating),
    /// counting the overflows at the scale and at its half.
    pub fn store(&mut self, xs: &mut [f64]) {
        let (overflows, at_half) = round_onto_grid(self.format, self.scale, xs);
        self.overflows += overflows;
        self.overflows_at_half += at_half;
        self.seen += xs.len() as u64;
    }

    /// Seed 002 §5's update from the counts since the last one, which it clears: the scale
    /// doubles (e + 1) when more than `max_overflow` of the values overflowed, halves (e − 1)
    /// when fewer than `max_overflow` would have overflowed at half the scale, and otherwise
    /// stays. Returns the scale change (+1, −1 or 0). Nothing seen, nothing changes.
    pub fn update(&mut self, max_overflow: f64) -> i32 {
        if self.seen == 0 {
            return 0;
        }
        let rate = |n: u64| n as f64 / self.seen as f64;
        let step = if rate(self.overflows) > max_overflow {
            1
        } else if rate(self.overflows_at_half) < max_overflow {
            -1
        } else {
            0
        };
        self.scale = (self.scale + step).clamp(-MAX_SCALE + 1, MAX_SCALE);
        (self.seen, self.overflows, self.overflows_at_half) = (0, 0, 0);
        step
    }

    /// The smallest scale at which none of `xs` overflows (an initial scale from values of a
    /// higher-precision run, seed 002 §9.3); the lowest scale if all are zero.
    pub fn fit(format: DfixFormat, xs: &[f64]) -> i32 {
        xs.iter()
            .filter_map(|&x| Group::needed_scale(format, x))
            .fold(-MAX_SCALE + 1, i32::max)
    }

    /// The smallest scale at which `x` does not overflow; `None` for zero and non-finite x
    /// (zero fits every scale; a non-finite value overflows every scale).
    pub fn needed_scale(format: DfixFormat, x: f64) -> Option<i32> {
        if !x.is_finite() || x == 0.0 {
            return None;
        }
        // |x| < 2^(W−1)·2^e, so e > ⌊log2|x|⌋ − (W − 1); then step up past rounding.
        // ⌊log2|x|⌋ is the binary exponent of a normal x (log2 for subnormals).
        let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
        let floor_log2 = if biased == 0 {
            x.abs().log2().floor() as i32
        } else {
            biased - 1023
        };
        let mut e = (floor_log2 - (format.width as i32 - 1)).max(-MAX_SCALE + 1);
        while e < MAX_SCALE && format.from_f64(x, e).overflow {
            e += 1;
        }
        Some(e)
    }

    /// The scale the update rule settles at for values whose needed scales
    /// ([`Group::needed_scale`]) are counted in `needed` out of `total` values: the smallest
    /// e at which at most `max_overflow` of them overflow (then more than `max_overflow`
    /// overflow at e − 1, so [`Group::update`] keeps e). The lowest scale if none is needed.
    pub fn settled_scale(
        needed: &std::collections::BTreeMap<i32, u64>,
        total: u64,
        max_overflow: f64,
    ) -> i32 {
        // Walk down from the largest needed scale while the values above e stay rare enough.
        let mut above = 0u64;
        let mut scale = -MAX_SCALE + 1;
        for (&e, &n) in needed.iter().rev() {
            // At scale e − 1 every value needing e or more overflows.
            if (above + n) as f64 > max_overflow * total as f64 {
                scale = e;
                break;
            }
            above += n;
        }
        scale
    }
}

/// Rounds every value of `xs` onto the grid of `format` at scale `e`, as
/// [`DfixFormat::from_f64`] then [`DfixFormat::to_f64`] would, and counts the values that
/// overflow at e and at e − 1. The same arithmetic with the powers of two computed once: x·2^−e
/// and x·2^(1−e) are exact for the scales allowed (or saturate either way), and the rounded
/// integer times 2^e is exact (it has at most 32 bits).
pub fn round_onto_grid(format: DfixFormat, e: i32, xs: &mut [f64]) -> (u64, u64) {
    let (lo, hi) = (format.min_int() as f64, format.max_int() as f64);
    let (down, down_half, up) = (
        (-e as f64).exp2(),
        ((1 - e) as f64).exp2(),
        (e as f64).exp2(),
    );
    let (mut overflows, mut at_half) = (0, 0);
    for x in xs.iter_mut() {
        if x.is_nan() {
            // from_f64: NaN converts to 0 and overflows (at every scale).
            (*x, overflows, at_half) = (0.0, overflows + 1, at_half + 1);
            continue;
        }
        let y = nearest_even(*x * down);
        let over = y > hi || y < lo;
        let half = nearest_even(*x * down_half);
        overflows += over as u64;
        at_half += (over || half > hi || half < lo) as u64;
        // + 0.0: a value that rounds to zero is +0, as the integer 0 is.
        *x = y.clamp(lo, hi) * up + 0.0;
    }
    (overflows, at_half)
}

/// `y` rounded to an integer, ties to even, by adding and subtracting 2^52 (where the f64
/// spacing is 1, so the addition rounds to nearest even): `round_ties_even` without SSE4.1
/// is a libm call that took a third of a dfix training run. |y| ≥ 2^52 is an integer already
/// (or infinite); NaN stays NaN. Zero's sign may change, which no caller sees.
fn nearest_even(y: f64) -> f64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    if y.abs() < TWO52 {
        let t = TWO52.copysign(y);
        (y + t) - t
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_rounds_onto_the_grid_and_counts_both_overflows() {
        let f = DfixFormat::new(4).unwrap(); // integers −8..=7
        let mut g = Group::new(f, -1); // steps of 0.5, range [−4, 3.5]
                                       // 0.25 is a tie (0.5 steps) to even 0; 3.6 rounds to 7 (fits), 3.9 to 8 (saturates).
        let mut xs = [0.3, 0.25, 0.75, 3.6, 3.9, -4.3, 1.9, -2.0];
        g.store(&mut xs);
        assert_eq!(xs, [0.5, 0.0, 1.0, 3.5, 3.5, -4.0, 2.0, -2.0]);
        assert_eq!((g.seen, g.overflows), (8, 2));
        // At half the scale (steps of 0.25, range [−2, 1.75]) 3.6, 3.9, −4.3 and 1.9 do not
        // fit; −2.0 does (−8·0.25).
        assert_eq!(g.overflows_at_half, 4);
    }

    #[test]
    fn the_scale_doubles_halves_or_stays_by_the_overflow_rates() {
        let f = DfixFormat::new(8).unwrap(); // −128..=127
        let mut g = Group::new(f, 0);
        let mut many = vec![200.0; 3];
        many.extend(vec![1.0; 97]);
        g.store(&mut many);
        assert_eq!(g.update(0.01), 1, "3 % overflow > 1 %: doubled");
        assert_eq!((g.scale, g.seen), (1, 0));
        // At scale 1 (range ±256) 100 at scale 0 (range ±128) would fit: halve.
        g.store(&mut vec![100.0; 50]);
        assert_eq!(g.update(0.01), -1);
        // Values that fit at e but overflow at e − 1 keep e.
        g.store(&mut vec![100.0; 50]);
        g.store(&mut vec![1.0; 50]);
        assert_eq!(g.scale, 0);
        assert_eq!(g.overflows_at_half, 50);
        assert_eq!(g.update(0.01), 0);
        assert_eq!(g.update(0.01), 0, "nothing seen");
    }

    #[test]
    fn fit_finds_the_smallest_scale_without_overflow() {
        let f = DfixFormat::new(10).unwrap(); // −512..=511
        for (xs, want) in [
            (vec![511.0], 0),
            (vec![511.5], 1), // rounds to 512 at scale 0
            (vec![-512.0], 0),
            (vec![0.75, -0.1], -9), // 384 at 2^−9; 768 at 2^−10
            (vec![3.0e6], 13),
        ] {
            let e = Group::fit(f, &xs);
            assert_eq!(e, want, "{xs:?}");
            assert!(xs.iter().all(|&x| !f.from_f64(x, e).overflow));
            assert!(xs.iter().any(|&x| f.from_f64(x, e - 1).overflow));
        }
        assert_eq!(Group::fit(f, &[0.0]), -MAX_SCALE + 1);
    }

    #[test]
    fn settled_scale_is_where_the_update_rule_stays() {
        use std::collections::BTreeMap;
        let f = DfixFormat::new(8).unwrap();
        // 1000 values: 990 need scale 0, 8 need 3, 2 need 5.
        let xs: Vec<f64> = (0..1000)
            .map(|i| match i {
                0..=1 => 3000.0,
                2..=9 => 900.0,
                _ => 100.0,
            })
            .collect();
        let mut needed = BTreeMap::new();
        for &x in &xs {
            *needed
                .entry(Group::needed_scale(f, x).unwrap())
                .or_insert(0u64) += 1;
        }
        assert_eq!(needed, BTreeMap::from([(0, 990), (3, 8), (5, 2)]));
        for (rate, want) in [
            (0.0, 5),
            (0.001, 5),
            (0.002, 3),
            (0.009, 3),
            (0.01, 0),
            (0.5, 0),
        ] {
            let e = Group::settled_scale(&needed, 1000, rate);
            assert_eq!(e, want, "rate {rate}");
            // The update rule keeps it: storing the same values again changes nothing.
            let mut g = Group::new(f, e);
            g.store(&mut xs.clone());
            assert_eq!(g.update(rate), 0, "rate {rate}");
        }
        assert_eq!(
            Group::settled_scale(&BTreeMap::new(), 0, 0.01),
            -MAX_SCALE + 1
        );
    }

    #[test]
    fn rounding_onto_the_grid_is_from_f64_then_to_f64() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for width in [2, 4, 10, 12, 20, 32] {
            let f = DfixFormat::new(width).unwrap();
            for e in [-40, -12, -3, 0, 2, 9] {
                let mut xs: Vec<f64> = (0..2000)
                    .map(|i| match i {
                        0 => f64::NAN,
                        1 => f64::INFINITY,
                        2 => f64::NEG_INFINITY,
                        3 => 0.0,
                        _ => {
                            let m: f64 = rng.gen_range(-1.0..1.0);
                            m * (rng.gen_range(-50..20) as f64 + e as f64 + width as f64).exp2()
                        }
                    })
                    .collect();
                // Exact ties too: odd multiples of half a step.
                xs.extend((-9..9).map(|k| (k as f64 + 0.5) * (e as f64).exp2()));
                let want: Vec<(f64, bool, bool)> = xs
                    .iter()
                    .map(|&x| {
                        let c = f.from_f64(x, e);
                        (
                            f.to_f64(c.word, e),
                            c.overflow,
                            c.overflow || f.from_f64(x, e - 1).overflow,
                        )
                    })
                    .collect();
                let mut got = xs.clone();
                let (overflows, at_half) = round_onto_grid(f, e, &mut got);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g.to_bits(), w.0.to_bits(), "dfix:{width} e {e} x {}", xs[i]);
                }
                assert_eq!(overflows, want.iter().filter(|w| w.1).count() as u64);
                assert_eq!(at_half, want.iter().filter(|w| w.2).count() as u64);
            }
        }
    }

    #[test]
    fn nearest_even_is_round_ties_even() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut ys: Vec<f64> = (-40..40).map(|k| k as f64 * 0.5).collect();
        ys.extend([
            4503599627370495.5,
            -4503599627370495.5,
            9007199254740993.0,
            1e300,
            -1e-300,
        ]);
        ys.extend(
            (0..100_000).map(|_| rng.gen_range(-1.0..1.0) * (rng.gen_range(-10..60) as f64).exp2()),
        );
        for y in ys {
            let (got, want) = (nearest_even(y), y.round_ties_even());
            assert!(got == want, "{y}: {got} vs {want}");
        }
        assert!(nearest_even(f64::NAN).is_nan());
        assert_eq!(nearest_even(f64::INFINITY), f64::INFINITY);
    }
}
