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
        let (f, e) = (self.format, self.scale);
        for x in xs.iter_mut() {
            let here = f.from_f64(*x, e);
            self.overflows += here.overflow as u64;
            self.overflows_at_half += (here.overflow || f.from_f64(*x, e - 1).overflow) as u64;
            *x = f.to_f64(here.word, e);
        }
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
        let mut e = -MAX_SCALE + 1;
        for &x in xs.iter().filter(|x| x.is_finite() && **x != 0.0) {
            // |x| < 2^(W−1)·2^e, so e > log2|x| − (W − 1); then step up past rounding.
            let mut guess = (x.abs().log2().floor() as i32 - (format.width as i32 - 1)).max(e);
            while guess < MAX_SCALE && format.from_f64(x, guess).overflow {
                guess += 1;
            }
            e = e.max(guess);
        }
        e
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
}
