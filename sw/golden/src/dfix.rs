//! `dfix:W`: dynamic fixed point (seed 002, Courbariaux et al.). A word is a W-bit two's-
//! complement integer (the sign included in W, as the paper counts); a group of words shares
//! a scale exponent e, held outside the words, and a word w of the group means int(w)·2^e.
//!
//! Every conversion rounds to nearest, ties to even, and saturates at the most negative and
//! most positive integers; a conversion *overflows* when the rounded integer lies outside
//! them (so a value that rounds up onto the largest integer does not). The overflow test the
//! scale updates need is that test at the group's scale e and at e − 1 (half the range: the
//! scale could be lowered if values rarely overflow even there). Products and dot products are
//! exact integers (a dot product in a wide accumulator) and round once, into the output
//! group's scale.

use std::fmt;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive};

use crate::exact::Ratio;
use crate::fixed::rne_shift;
use crate::format::{err, FormatError};

mod calc;
mod dots;
pub mod group;
mod lane;
pub use calc::{DfixCalc, FAMILY};
pub use lane::{DfixLaneOp, DFIX_LANE_OP_BITS};

/// Widths 2..=32: a product of two words fits an i64, and a dot product of up to 2^32 terms
/// an i128, exactly.
pub const MAX_WIDTH: u32 = 32;

/// Scales −1000..=1000: far beyond what training meets, and small enough that every shift
/// below stays cheap.
pub const MAX_SCALE: i32 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DfixFormat {
    pub width: u32,
}

/// A word converted into a group's scale, and whether the conversion overflowed (saturated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Converted {
    pub word: u64,
    pub overflow: bool,
}

/// A dot product read out into scale e: the word, and the overflow tests at e and e − 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOut {
    pub word: u64,
    pub overflow: bool,
    pub overflow_at_half: bool,
}

impl fmt::Display for DfixFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dfix:{}", self.width)
    }
}

impl std::str::FromStr for DfixFormat {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<DfixFormat, FormatError> {
        let width = s
            .trim()
            .strip_prefix("dfix:")
            .and_then(|w| w.parse::<u32>().ok());
        match width {
            Some(w) => DfixFormat::new(w),
            None => err(format!(
                "format {s:?} is not dfix:W with a whole width W (e.g. dfix:10)"
            )),
        }
    }
}

/// Checks a scale exponent.
pub fn check_scale(e: i64) -> Result<i32, FormatError> {
    if (-(MAX_SCALE as i64)..=MAX_SCALE as i64).contains(&e) {
        Ok(e as i32)
    } else {
        err(format!(
            "scale {e} is out of range: give -{MAX_SCALE}..={MAX_SCALE}"
        ))
    }
}

impl DfixFormat {
    pub fn new(width: u32) -> Result<DfixFormat, FormatError> {
        if !(2..=MAX_WIDTH).contains(&width) {
            return err(format!(
                "format 'dfix:{width}': the width (sign included) must be 2..={MAX_WIDTH} (e.g. dfix:10)"
            ));
        }
        Ok(DfixFormat { width })
    }

    pub fn max_int(&self) -> i64 {
        (1i64 << (self.width - 1)) - 1
    }

    pub fn min_int(&self) -> i64 {
        -(1i64 << (self.width - 1))
    }

    /// The signed integer of a word.
    pub fn to_int(&self, w: u64) -> i64 {
        let sh = 64 - self.width;
        ((w << sh) as i64) >> sh
    }

    /// The word of an integer that has already been checked against the range.
    fn word(&self, v: i64) -> u64 {
        (v as u64) & ((1u64 << self.width) - 1)
    }

    /// An integer clamped into the word range, with the overflow test.
    fn saturate(&self, v: i128) -> Converted {
        let clamped = v.clamp(self.min_int() as i128, self.max_int() as i128);
        Converted {
            word: self.word(clamped as i64),
            overflow: clamped != v,
        }
    }

    /// The value of word `w` at scale `e` (exact: W ≤ 32 bits and |e| ≤ 1000 fit an f64
    /// unless 2^e leaves f64's range, where it saturates to 0 or ±inf).
    pub fn to_f64(&self, w: u64, e: i32) -> f64 {
        self.to_int(w) as f64 * (e as f64).exp2()
    }

    /// The exact value r at scale e: round(r·2^−e), ties to even, saturated.
    pub fn from_ratio(&self, r: &Ratio, e: i32) -> Converted {
        let (mut num, mut den) = (BigInt::from(r.num.clone()), BigInt::from(r.den.clone()));
        if e >= 0 {
            den <<= e as u32;
        } else {
            num <<= (-e) as u32;
        }
        let (q, rem) = num.div_mod_floor(&den);
        let twice = rem * 2;
        let q = if twice > den || (twice == den && q.is_odd()) {
            q + 1
        } else {
            q
        };
        let q = if r.neg { -q } else { q };
        // Anything beyond ±2^100 saturates the same as ±2^100.
        let limit = BigInt::from(1) << 100u32;
        let q = q.clamp(-limit.clone(), limit).to_i128().expect("clamped");
        self.saturate(q)
    }

    /// The f64 `x` at scale e (NaN converts to 0 with an overflow; ±inf saturates): the same
    /// as [`DfixFormat::from_ratio`] of x's exact value, in f64 arithmetic. x·2^−e is exact
    /// (2^−e is a normal f64 for |e| ≤ 1000) unless it overflows, which saturates either way,
    /// or underflows, which only happens below 2^−1022, where both round to zero.
    pub fn from_f64(&self, x: f64, e: i32) -> Converted {
        if x.is_nan() {
            return Converted {
                word: 0,
                overflow: true,
            };
        }
        let y = (x * (-e as f64).exp2()).round_ties_even();
        if y >= 2f64.powi(100) || y <= -(2f64.powi(100)) {
            return self.saturate(if y > 0.0 { i128::MAX } else { i128::MIN });
        }
        self.saturate(y as i128)
    }

    /// [`DfixFormat::from_f64`] through exact rationals: the reference of the tests.
    #[cfg(test)]
    fn convert_exactly(&self, x: f64, e: i32) -> Converted {
        let (num, den) = crate::exact::f64_ratio(x);
        self.from_ratio(
            &Ratio {
                neg: x < 0.0,
                num,
                den,
            },
            e,
        )
    }

    /// The overflow tests of r at scale e and at e − 1 (seed 002 §5's two overflow rates).
    pub fn overflows(&self, r: &Ratio, e: i32) -> (bool, bool) {
        (
            self.from_ratio(r, e).overflow,
            self.from_ratio(r, e - 1).overflow,
        )
    }

    /// An exact integer v·2^from moved to scale `to`, rounded and saturated.
    fn rescale_int(&self, v: i128, from: i32, to: i32) -> Converted {
        if to >= from {
            return self.saturate(rne_shift(v, (to - from) as u32));
        }
        // Left shift: exact unless it leaves the word range, which saturates anyway.
        let shift = (from - to) as u32;
        if v == 0 {
            return self.saturate(0);
        }
        if shift >= 64 {
            return self.saturate(if v > 0 { i128::MAX } else { i128::MIN });
        }
        self.saturate(v.saturating_mul(1i128 << shift))
    }

    /// Word `w` of scale `from` in scale `to`.
    pub fn rescale(&self, w: u64, from: i32, to: i32) -> Converted {
        self.rescale_int(self.to_int(w) as i128, from, to)
    }

    /// a + b, both and the result at scale e.
    pub fn add(&self, a: u64, b: u64) -> Converted {
        self.saturate(self.to_int(a) as i128 + self.to_int(b) as i128)
    }

    /// a − b at one scale.
    pub fn sub(&self, a: u64, b: u64) -> Converted {
        self.saturate(self.to_int(a) as i128 - self.to_int(b) as i128)
    }

    /// −a (−min saturates to max).
    pub fn neg(&self, a: u64) -> Converted {
        self.saturate(-(self.to_int(a) as i128))
    }

    /// a·b of a at scale `ea` and b at `eb`, rounded once into scale `e`.
    pub fn mul(&self, a: u64, ea: i32, b: u64, eb: i32, e: i32) -> Converted {
        let p = self.to_int(a) as i128 * self.to_int(b) as i128;
        self.rescale_int(p, ea + eb, e)
    }

    /// √a of a at scale `ea`, rounded once into scale `e` (nearest, ties to even) and
    /// saturated: Y = round(√(X·2^(ea − 2e))). Ties exist where 2e − ea ≥ 2 (a root that
    /// is an odd multiple of 2^(e−1): at ea = e = 2, √36 = 6 lies between 4 and 8). A negative a gives 0 without an overflow (as
    /// in the fix family); a root beyond the largest integer saturates with one.
    pub fn sqrt(&self, a: u64, ea: i32, e: i32) -> Converted {
        let x = self.to_int(a);
        if x <= 0 {
            return self.saturate(0);
        }
        // z = n / 2^d, the radicand in units of the output scale squared.
        let k = i64::from(ea) - 2 * i64::from(e);
        let n = BigUint::from(x as u64) << k.max(0) as u64;
        let d = (-k).max(0) as u64;
        // ⌊√z⌋ = ⌊√⌊z⌋⌋; then up iff z > (q + 1/2)², to even at equality.
        let q = (&n >> d).sqrt();
        let twice = (&q << 1u32) + 1u32;
        let (lhs, rhs) = (n << 2u32, (&twice * &twice) << d);
        let up = lhs > rhs || (lhs == rhs && q.bit(0));
        let y = q + u32::from(up);
        self.saturate(y.to_i128().unwrap_or(i128::MAX))
    }

    /// Σ a_k·b_k (a at scale `ea`, b at `eb`) accumulated exactly, read out once into scale
    /// `e`, with the overflow tests at e and e − 1. Up to 2^32 terms.
    pub fn dot(&self, a: &[u64], ea: i32, b: &[u64], eb: i32, e: i32) -> ReadOut {
        assert!(a.len() == b.len() && a.len() as u64 <= 1 << 32);
        let acc: i128 = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| self.to_int(x) as i128 * self.to_int(y) as i128)
            .sum();
        self.read_out(acc, ea + eb, e)
    }

    /// The read-out of an exact sum `acc` at scale `from` into scale `e`, with the overflow
    /// tests at e and e − 1 (of [`DfixFormat::dot`] and [`DfixFormat::dots`]).
    fn read_out(&self, acc: i128, from: i32, e: i32) -> ReadOut {
        let at = self.rescale_int(acc, from, e);
        ReadOut {
            word: at.word,
            overflow: at.overflow,
            overflow_at_half: self.rescale_int(acc, from, e - 1).overflow,
        }
    }

    /// The exact decimal value of word `w` at scale `e`.
    pub fn value_string(&self, w: u64, e: i32) -> String {
        let v = BigInt::from(self.to_int(w));
        if e >= 0 {
            return (v << e as u32).to_string();
        }
        // v / 2^k = v·5^k / 10^k: exactly k decimal places, trailing zeros trimmed.
        let k = (-e) as u32;
        let digits = (v.abs() * BigInt::from(5u32).pow(k)).to_string();
        let digits = format!("{digits:0>width$}", width = k as usize + 1);
        let (int, frac) = digits.split_at(digits.len() - k as usize);
        let frac = frac.trim_end_matches('0');
        let sign = if v.is_negative() { "-" } else { "" };
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    }

    /// Whether `w` is a word of this width.
    pub fn is_word(&self, w: u64) -> bool {
        w >> self.width == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_decimal;

    fn d10() -> DfixFormat {
        "dfix:10".parse().unwrap()
    }

    fn conv(f: DfixFormat, s: &str, e: i32) -> (i64, bool) {
        let c = f.from_ratio(&parse_decimal(s).unwrap(), e);
        (f.to_int(c.word), c.overflow)
    }

    #[test]
    fn f64_conversion_is_the_exact_one() {
        let mut next = crate::test_words(0x00df_1c5e);
        for w in [2, 6, 10, 12, 16, 20, 32] {
            let f = DfixFormat::new(w).unwrap();
            let max = f.max_int() as f64;
            for e in [-1000, -60, -20, -8, -1, 0, 1, 5, 40, 1000] {
                let unit = (e as f64).exp2();
                let mut xs = vec![0.0, -0.0, f64::INFINITY, -f64::INFINITY, 5e-324, -1e-310];
                // Ties, the largest integer and just past it, both signs.
                for k in [
                    0.5,
                    1.5,
                    2.5,
                    max - 0.5,
                    max,
                    max + 0.5,
                    max + 1.0,
                    3.0 * max,
                ] {
                    xs.extend([k * unit, -k * unit]);
                }
                for _ in 0..300 {
                    let bits = next();
                    // Mostly values near the word range, some anywhere.
                    let x = if bits.is_multiple_of(4) {
                        f64::from_bits(bits)
                    } else {
                        (bits >> 11) as f64 / (1u64 << 53) as f64
                            * 2.0
                            * max
                            * unit
                            * if bits & 1 == 1 { -1.0 } else { 1.0 }
                    };
                    if !x.is_nan() {
                        xs.push(x);
                    }
                }
                for x in xs {
                    let want = if x.is_infinite() {
                        f.saturate(if x > 0.0 { i128::MAX } else { i128::MIN })
                    } else {
                        f.convert_exactly(x, e)
                    };
                    assert_eq!(f.from_f64(x, e), want, "dfix:{w} {x:e} at scale {e}");
                }
            }
            assert!(f.from_f64(f64::NAN, 0).overflow);
        }
    }

    #[test]
    fn conversions_round_to_nearest_even_and_saturate() {
        let f = d10(); // integers −512..=511
                       // Scale −4: units of 1/16.
        assert_eq!(conv(f, "1", -4), (16, false));
        assert_eq!(conv(f, "0.03125", -4), (0, false)); // 0.5 unit: tie to even 0
        assert_eq!(conv(f, "0.09375", -4), (2, false)); // 1.5 units: tie to even 2
        assert_eq!(conv(f, "-0.09375", -4), (-2, false));
        assert_eq!(conv(f, "31.9375", -4), (511, false)); // the largest word
        assert_eq!(conv(f, "31.96875", -4), (511, true)); // 511.5 rounds to 512: overflow
        assert_eq!(conv(f, "-32", -4), (-512, false));
        assert_eq!(conv(f, "-32.03125", -4), (-512, false)); // −512.5: tie to even −512
        assert_eq!(conv(f, "-32.1", -4), (-512, true));
        // Positive scales: units of 4.
        assert_eq!(conv(f, "6", 2), (2, false)); // 1.5 units: 2
        assert_eq!(conv(f, "1e300", 2), (511, true));
        assert_eq!(f.to_f64(f.from_f64(-2.75, -2).word, -2), -2.75);
    }

    #[test]
    fn overflow_tests_at_the_scale_and_its_half() {
        let f = d10();
        let r = parse_decimal("20").unwrap();
        // At −4, 20 is 320 units (fits); at −5, 640 (does not).
        assert_eq!(f.overflows(&r, -4), (false, true));
        assert_eq!(f.overflows(&r, -5), (true, true));
        assert_eq!(f.overflows(&r, -3), (false, false));
    }

    #[test]
    fn products_and_dot_products_round_once() {
        let f = d10();
        let w = |v: i64| f.word(v);
        // 3·2^−2 times 5·2^−3 = 15·2^−5, into scale −3: 3.75 units → 4.
        let p = f.mul(w(3), -2, w(5), -3, -3);
        assert_eq!((f.to_int(p.word), p.overflow), (4, false));
        // A dot product whose partial sums leave the range but whose total does not.
        let a = [w(511), w(511), w(-512)];
        let b = [w(511), w(1), w(511)];
        // 511·511 + 511 − 512·511 = 0.
        let r = f.dot(&a, 0, &b, 0, 0);
        assert_eq!(
            (f.to_int(r.word), r.overflow, r.overflow_at_half),
            (0, false, false)
        );
        // 100·3 = 300 at scale 0 fits; at scale −1 (600) it does not.
        let r = f.dot(&[w(100)], 0, &[w(3)], 0, 0);
        assert_eq!(
            (f.to_int(r.word), r.overflow, r.overflow_at_half),
            (300, false, true)
        );
        // Against exact big-integer evaluation with random words and scales.
        let mut next = crate::test_words(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..2000 {
            let n = (next() % 20) as usize;
            let a: Vec<u64> = (0..n).map(|_| next() & 0x3ff).collect();
            let b: Vec<u64> = (0..n).map(|_| next() & 0x3ff).collect();
            let (ea, eb) = ((next() % 9) as i32 - 4, (next() % 9) as i32 - 4);
            let e = (next() % 17) as i32 - 8;
            let exact: BigInt = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| BigInt::from(f.to_int(x)) * BigInt::from(f.to_int(y)))
                .sum();
            // exact·2^(ea+eb) as a ratio, converted by from_ratio.
            let sh = ea + eb;
            let (num, den) = if sh >= 0 {
                (exact.abs() << sh as u32, BigInt::from(1))
            } else {
                (exact.abs(), BigInt::from(1) << (-sh) as u32)
            };
            let r = Ratio {
                neg: exact.is_negative(),
                num: num.to_biguint().unwrap(),
                den: den.to_biguint().unwrap(),
            };
            let want = f.from_ratio(&r, e);
            let got = f.dot(&a, ea, &b, eb, e);
            assert_eq!((got.word, got.overflow), (want.word, want.overflow));
            assert_eq!(got.overflow_at_half, f.from_ratio(&r, e - 1).overflow);
        }
    }

    #[test]
    fn rescaling_and_values() {
        let f = d10();
        let w = f.word(-3); // −3·2^−2 = −0.75
        assert_eq!(f.value_string(w, -2), "-0.75");
        assert_eq!(f.value_string(f.word(5), 3), "40");
        // To a coarser scale: −0.75 in units of 0.5 is −1.5 → −2 (tie to even).
        assert_eq!(f.to_int(f.rescale(w, -2, -1).word), -2);
        // To a finer scale beyond the range.
        let r = f.rescale(f.word(300), 0, -1);
        assert_eq!((f.to_int(r.word), r.overflow), (511, true));
        assert!("dfix:1".parse::<DfixFormat>().is_err());
        assert!("dfix:33".parse::<DfixFormat>().is_err());
        assert!("dfix:x"
            .parse::<DfixFormat>()
            .unwrap_err()
            .0
            .contains("dfix:W"));
        assert!(check_scale(1001).is_err() && check_scale(-1000).is_ok());
    }
}
