//! `fix:I:F`: two's-complement fixed point of 1+I+F bits with F fraction bits.
//!
//! Every rounding is to nearest, ties to even, and every result saturates at the most
//! negative and most positive codes. Division by zero saturates with the dividend's sign
//! (0/0 is 0). The MAC accumulates exact products (2F fraction bits) in a wide accumulator
//! that wraps like the hardware register, and rounds once when read.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;

use crate::format::{err, FormatError};

mod family;
mod lanes;
mod stochastic;
pub use family::FAMILY;

use crate::rounding::Draw;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixFormat {
    pub int_bits: u32,
    pub frac_bits: u32,
}

impl fmt::Display for FixFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fix:{}:{}", self.int_bits, self.frac_bits)
    }
}

/// Guard bits of the MAC accumulator above a full product: 2^16 worst-case products are exact.
pub const ACC_GUARD_BITS: u32 = 16;

/// Round-to-nearest-even of x / 2^sh (sh >= 0): [`round_shift`] with [`Draw::Nearest`].
#[inline(always)]
pub(crate) fn rne_shift(x: i128, sh: u32) -> i128 {
    round_shift(x, sh, Draw::Nearest)
}

/// x / 2^sh (sh >= 0) rounded by `draw`: the fix family's one rounding of a two's
/// complement value. Nearest: ties to even. Stochastic (sh <= 126): the floor, plus one iff
/// d + r >= 2^R, d the top R bits of the discarded part x − floor·2^sh ([`Draw::steps`]).
#[inline(always)]
pub fn round_shift(x: i128, sh: u32, draw: Draw) -> i128 {
    if sh == 0 {
        return x;
    }
    if let Draw::Stochastic { bits, r } = draw {
        assert!(sh <= 126, "a stochastic shift of at most 126 bits");
        let q = x >> sh;
        let rem = (x - (q << sh)) as u128;
        return q + i128::from(Draw::steps(bits, r, rem, u64::from(sh)));
    }
    if sh >= 127 {
        // |x| < 2^127 ≤ 2^(sh−1): below half of one unit, so 0 (never a tie).
        return 0;
    }
    let q = x >> sh; // floor
    let rem = x - (q << sh);
    let half = 1i128 << (sh - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

impl FixFormat {
    pub fn new(int_bits: u32, frac_bits: u32) -> Result<Self, FormatError> {
        // Checked: I and F come from the command line and may be anything up to u32::MAX.
        if int_bits.checked_add(frac_bits).is_none_or(|bits| bits > 31) {
            return err(format!(
                "format 'fix:{int_bits}:{frac_bits}': 1+I+F must be at most 32 bits (e.g. fix:7:8)"
            ));
        }
        if int_bits + frac_bits == 0 {
            return err(
                "format 'fix:0:0': needs at least one integer or fraction bit (e.g. fix:7:8)",
            );
        }
        Ok(FixFormat {
            int_bits,
            frac_bits,
        })
    }

    pub fn width(&self) -> u32 {
        1 + self.int_bits + self.frac_bits
    }

    pub fn max_int(&self) -> i64 {
        (1i64 << (self.width() - 1)) - 1
    }

    pub fn min_int(&self) -> i64 {
        -(1i64 << (self.width() - 1))
    }

    pub fn is_word(&self, bits: u64) -> bool {
        bits >> self.width() == 0
    }

    /// The signed integer a word holds (value · 2^F).
    #[inline(always)]
    pub fn to_int(&self, bits: u64) -> i64 {
        let sh = 64 - self.width();
        ((bits << sh) as i64) >> sh
    }

    /// The word of a signed integer, saturating.
    #[inline(always)]
    pub fn from_int(&self, v: i128) -> u64 {
        let v = v.clamp(self.min_int() as i128, self.max_int() as i128) as i64;
        (v as u64) & ((1u64 << self.width()) - 1)
    }

    /// a / b rounded by `draw` (x/0 saturates with x's sign, 0/0 is 0).
    pub(crate) fn div_d(&self, a: u64, b: u64, draw: Draw) -> u64 {
        let (x, y) = (self.to_int(a) as i128, self.to_int(b) as i128);
        if y == 0 {
            return self.from_int(match x.cmp(&0) {
                Ordering::Less => i128::MIN,
                Ordering::Equal => 0,
                Ordering::Greater => i128::MAX,
            });
        }
        // x·2^F / y, rounded to nearest even; make the divisor positive first.
        let (num, den) = if y < 0 {
            (-(x << self.frac_bits), -y)
        } else {
            (x << self.frac_bits, y)
        };
        let (q, r) = num.div_mod_floor(&den);
        if let Draw::Stochastic { bits, r: rnd } = draw {
            // d = floor(r/den · 2^R), exact: den <= 2^31, so r·2^R < 2^63.
            let d = ((r as u128) << bits) / den as u128;
            return self.from_int(q + i128::from(Draw::steps(bits, rnd, d, u64::from(bits))));
        }
        let twice = 2 * r;
        let q = if twice > den || (twice == den && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        self.from_int(q)
    }

    /// √a rounded by `draw`: the word Y with Y/2^F nearest √(X/2^F), i.e. √(X·2^F) rounded
    /// to an integer (nearest: never a tie, the square of a half-integer being no integer;
    /// stochastic: the floor, stepped by the top R bits of the root's fraction). A negative
    /// operand gives 0 (√ of the nearest point of its domain; fix has no NaN, and its
    /// elementwise operations no flag). To nearest it never saturates (√(X·2^F) < 2^(I+F)
    /// − 1/2); a stochastic step past the largest word (I = 0 only) saturates to it.
    pub(crate) fn sqrt_d(&self, a: u64, draw: Draw) -> u64 {
        let x = self.to_int(a);
        if x <= 0 {
            return 0;
        }
        let bits = match draw {
            Draw::Nearest => 0,
            Draw::Stochastic { bits, .. } => bits,
        };
        // √(X·2^(F+2R)) = √(X·2^F)·2^R: R fraction bits of the root (X < 2^31, F < 32,
        // R <= 32: at most 126 bits).
        let m = (x as u128) << (self.frac_bits + 2 * bits);
        let q = num_integer::Roots::sqrt(&m);
        let y = match draw {
            Draw::Nearest => q + u128::from(m - q * q > q),
            Draw::Stochastic { bits, r } => {
                let d = q & ((1u128 << bits) - 1);
                (q >> bits) + u128::from(Draw::steps(bits, r, d, u64::from(bits)))
            }
        };
        self.from_int(y as i128)
    }

    pub fn cmp(&self, a: u64, b: u64) -> Ordering {
        self.to_int(a).cmp(&self.to_int(b))
    }

    /// The nearest word to num/den, saturating.
    pub fn from_ratio(&self, neg: bool, num: &BigUint, den: &BigUint) -> u64 {
        let scaled = BigInt::from(num.clone()) << self.frac_bits;
        let den = BigInt::from(den.clone());
        let (q, r) = scaled.div_mod_floor(&den);
        let twice: BigInt = r * 2;
        let q = if twice > den || (twice == den && q.is_odd()) {
            q + 1
        } else {
            q
        };
        let q = if neg { -q } else { q };
        let lim = BigInt::from(1i64 << 40);
        let q = i128::try_from(q.clamp(-lim.clone(), lim)).unwrap();
        self.from_int(q)
    }

    /// Bits of the MAC accumulator: a full product plus guard bits.
    pub fn acc_bits(&self) -> u32 {
        2 * self.width() + ACC_GUARD_BITS
    }
}

/// The wide MAC accumulator of a fixed-point format: exact products, wrapping at acc_bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixAcc {
    fmt: FixFormat,
    /// value · 2^(2F), sign-extended from acc_bits.
    acc: i128,
}

impl FixAcc {
    pub fn new(fmt: FixFormat) -> FixAcc {
        FixAcc { fmt, acc: 0 }
    }

    pub fn clear(&mut self) {
        self.acc = 0;
    }

    /// The raw accumulator (value · 2^(2F)).
    pub fn raw(&self) -> i128 {
        self.acc
    }

    fn wrap(&mut self) {
        let sh = 128 - self.fmt.acc_bits();
        self.acc = (self.acc << sh) >> sh;
    }

    /// acc += a·b (exact).
    #[inline]
    pub fn add_product(&mut self, a: u64, b: u64) {
        let f = self.fmt;
        self.acc = self
            .acc
            .wrapping_add(f.to_int(a) as i128 * f.to_int(b) as i128);
        self.wrap();
    }

    /// acc += a (exact).
    pub fn add_word(&mut self, a: u64) {
        let f = self.fmt;
        self.acc = self.acc.wrapping_add((f.to_int(a) as i128) << f.frac_bits);
        self.wrap();
    }

    /// The accumulated value rounded once to the format.
    pub fn to_word(&self) -> u64 {
        self.to_word_flagged().0
    }

    /// (the read-out, overflow): the accumulated value rounded once to the format, and
    /// whether the rounded value lay outside the word's range and saturated (the `overflow`
    /// output of `fix-mac`). The accumulator's own wrap is no overflow: it is read as it is.
    pub fn to_word_flagged(&self) -> (u64, bool) {
        let f = self.fmt;
        let q = rne_shift(self.acc, f.frac_bits);
        let over = q > i128::from(f.max_int()) || q < i128::from(f.min_int());
        (f.from_int(q), over)
    }

    /// The accumulated value rounded once by `draw`, saturating.
    pub(crate) fn read_out(&self, draw: Draw) -> u64 {
        self.fmt
            .from_int(round_shift(self.acc, self.fmt.frac_bits, draw))
    }
}

/// The wide accumulator as the matrix-product kernel feeds it.
impl crate::kernel::ExactDot for FixFormat {
    /// A word's value, value·2^F an integer of at most 32 bits.
    fn exact_f64(&self, w: u64) -> Option<f64> {
        Some(self.to_int(w) as f64 * (-f64::from(self.frac_bits)).exp2())
    }
    /// Any number: the read-out wraps the exact sum as the accumulator would have.
    fn max_terms(&self) -> u64 {
        u64::MAX
    }
    /// The accumulator holding v·2^scale modulo 2^acc_bits, read out once.
    fn read_exact(&self, v: i128, scale: i32) -> u64 {
        // In the accumulator's units of 2^-2F (every product is a multiple of them).
        let sh = scale + 2 * self.frac_bits as i32;
        let raw = match sh {
            0.. if sh >= 128 => 0,
            0.. => v.wrapping_shl(sh as u32),
            // Below the accumulator's last bit: truncated (a shift past its width is the
            // sign alone).
            _ => v >> (-sh).min(127),
        };
        let mut acc = FixAcc {
            fmt: *self,
            acc: raw,
        };
        acc.wrap();
        acc.to_word()
    }
    /// Below the wrap and below 2^51 after the scaling by 2^F, a sum rounds to nearest even
    /// by adding and taking away 1.5·2^52, then saturates; beyond, `read_exact`.
    fn read_values(&self, sums: &[f64], out: &mut Vec<u64>) {
        let f = self.frac_bits as i32;
        let up = 2f64.powi(f);
        let bound = 2f64.powi((self.acc_bits() as i32 - 1 - 2 * f).min(51 - f));
        let (lo, hi) = (self.min_int() as f64, self.max_int() as f64);
        let mask = (1u64 << self.width()) - 1;
        const ROUND: f64 = 6_755_399_441_055_744.0; // 1.5·2^52
        out.extend(sums.iter().map(|&v| {
            if v.abs() < bound {
                let q = ((v * up + ROUND) - ROUND).clamp(lo, hi);
                (q as i64 as u64) & mask
            } else {
                let (units, scale) = crate::kernel::integer_and_scale(v);
                self.read_exact(units, scale)
            }
        }));
    }
}

impl FixFormat {
    /// Σ xs in the wide accumulator (exact, wrapping as the MAC's does), read out once: the
    /// sum mode `quire` of a fix format. A dot product with ones would be the same where 1 is
    /// a word, but fix:0:F has no 1.
    pub fn sum_acc(&self, xs: &[u64]) -> u64 {
        let mut acc = FixAcc::new(*self);
        for &x in xs {
            acc.add_word(x);
        }
        acc.to_word()
    }

    /// Dot product in the wide accumulator, rounded once. The accumulator wraps modulo
    /// 2^acc_bits, so the sum may wrap at any wider width and be reduced once at the end: in
    /// i64 while acc_bits ≤ 64 (fix:7:8 has 48; the loop vectorises), else in i128.
    pub fn dot_acc(&self, a: &[u64], b: &[u64]) -> u64 {
        self.dot_acc_d(a, b, Draw::Nearest)
    }

    /// [`FixFormat::dot_acc`] read out by `draw`.
    pub(crate) fn dot_acc_d(&self, a: &[u64], b: &[u64], draw: Draw) -> u64 {
        let mut acc = FixAcc::new(*self);
        let terms = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| (self.to_int(x), self.to_int(y)));
        acc.acc = if self.acc_bits() <= 64 {
            terms.fold(0i64, |s, (x, y)| s.wrapping_add(x * y)) as i128
        } else {
            terms.fold(0i128, |s, (x, y)| s.wrapping_add(x as i128 * y as i128))
        };
        acc.wrap();
        acc.read_out(draw)
    }
}

/// The fix PE's accumulation (`Family::accumulator`, mode quire).
impl crate::accumulator::Accumulator for FixAcc {
    fn clear(&mut self) {
        FixAcc::clear(self)
    }
    fn add_product(&mut self, a: u64, b: u64) {
        FixAcc::add_product(self, a, b)
    }
    fn word(&self) -> u64 {
        self.to_word()
    }
    fn word_with(&self, _: &mut crate::Rounder) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family_trait::Family;

    /// The quire sum is the exact sum read out once: the dot product with ones where 1 is a
    /// word, and in fix:0:F (no 1) still the sum (0.5 + 0.25 = 0.75, not the dot product with
    /// the largest word, 0.6875).
    #[test]
    fn quire_sums_are_exact_sums_even_without_a_one() {
        let f = FixFormat::new(0, 4).unwrap();
        let (half, quarter) = (f.from_f64(0.5), f.from_f64(0.25));
        assert_eq!(f.to_f64(f.sum_acc(&[half, quarter])), 0.75);
        let mut next = crate::test_words(0x5eed);
        for (i, fr) in [(1, 1), (7, 8), (3, 12), (20, 11)] {
            let f = FixFormat::new(i, fr).unwrap();
            let mask = (1u64 << f.width()) - 1;
            let xs: Vec<u64> = (0..777).map(|_| next() & mask).collect();
            let ones = vec![f.from_f64(1.0); xs.len()];
            assert_eq!(f.sum_acc(&xs), f.dot_acc(&xs, &ones), "fix:{i}:{fr}");
        }
    }

    /// The one-reduction dot product equals the accumulator stepped term by term (wrapping
    /// after each), for narrow and wide formats and sums long enough to wrap.
    #[test]
    fn dot_acc_equals_the_stepped_accumulator() {
        let mut next = crate::test_words(0x0123_4567_89ab_cdefu64);
        for (i, f) in [(0, 1), (7, 8), (3, 4), (11, 12), (15, 16), (20, 11)] {
            let f = FixFormat::new(i, f).unwrap();
            let mask = (1u64 << f.width()) - 1;
            for len in [0usize, 1, 5, 1000, 200_000] {
                // Mostly extreme words, so that long sums wrap the accumulator.
                let word = |r: u64| {
                    if r.is_multiple_of(10) {
                        r & mask
                    } else {
                        f.from_int(i128::MIN)
                    }
                };
                let a: Vec<u64> = (0..len).map(|_| word(next())).collect();
                let b: Vec<u64> = (0..len).map(|_| word(next())).collect();
                let mut acc = FixAcc::new(f);
                for (&x, &y) in a.iter().zip(&b) {
                    acc.add_product(x, y);
                }
                assert_eq!(f.dot_acc(&a, &b), acc.to_word(), "{f} over {len} terms");
            }
        }
    }
    /// fix-mac's overflow (docs/formats.md): the exact sum of the products, rounded once to
    /// the format's grid (ties to even), lies outside [min, max] and the read-out saturated.
    /// The reference sums the integer products itself; the sums stay clear of the wrap.
    #[test]
    fn read_out_flags_saturation_of_the_rounded_sum() {
        use crate::family_trait::Family;
        let mut next = crate::test_words(0xf1a9);
        for (i, fr) in [(1, 2), (3, 4), (0, 3), (7, 8)] {
            let f = FixFormat::new(i, fr).unwrap();
            let mask = (1u64 << f.width()) - 1;
            let mut flagged = 0;
            for len in 1..40 {
                let a: Vec<u64> = (0..len).map(|_| next() & mask).collect();
                let b: Vec<u64> = (0..len).map(|_| next() & mask).collect();
                let run = Family::running_dot(&f, crate::SumMode::Quire, &a, &b).unwrap();
                let mut exact = 0i128;
                for j in 0..len {
                    exact += f.to_int(a[j]) as i128 * f.to_int(b[j]) as i128;
                    // round(exact / 2^F), ties to even, by floor and remainder.
                    let d = 1i128 << fr;
                    let (q, r) = (exact.div_euclid(d), exact.rem_euclid(d));
                    let q = if 2 * r > d || (2 * r == d && q % 2 != 0) {
                        q + 1
                    } else {
                        q
                    };
                    let over = q > i128::from(f.max_int()) || q < i128::from(f.min_int());
                    assert_eq!(run.words[j], f.dot_acc(&a[..=j], &b[..=j]), "{f}");
                    assert_eq!(run.words[j], f.from_int(q), "{f}");
                    assert_eq!(run.overflow.as_ref().unwrap()[j], over, "{f} {a:?} {b:?}");
                    flagged += usize::from(over);
                }
            }
            assert!(flagged > 10, "{f}: {flagged}");
        }
    }

    #[test]
    fn from_f64_is_from_ratio_of_the_exact_value() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
        for (i, f) in [(7, 8), (1, 1), (3, 12), (15, 16), (0, 30), (30, 1), (5, 0)] {
            let fmt = FixFormat::new(i, f).unwrap();
            let mut xs: Vec<f64> = (0..20_000)
                .map(|_| rng.gen_range(-1.0..1.0) * (rng.gen_range(-40..45) as f64).exp2())
                .collect();
            // Ties of the grid, zeros, the extremes.
            xs.extend((-40..40).map(|k| (k as f64 + 0.5) * (-(f as f64)).exp2()));
            xs.extend([0.0, -0.0, 1e300, -1e300, 5e-324, f64::MAX, f64::MIN]);
            for x in xs {
                let (num, den) = crate::exact::f64_ratio(x.abs());
                assert_eq!(
                    fmt.from_f64(x),
                    fmt.from_ratio(x < 0.0, &num, &den),
                    "fix:{i}:{f} {x}"
                );
            }
        }
    }
}
