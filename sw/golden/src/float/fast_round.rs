//! A fast path of [`FloatFormat::round`] for an f64 times a power of two, for narrow formats
//! (M ≤ 50, no `:ftz`): the word nearest to x·2^−e, by the f64 unit's own round-to-nearest-
//! even instead of the general rounding's u128 arithmetic. MX quantization (every element
//! of every block, `mx::MxQuantizer`) runs on it.
//!
//! Why it is the same word: with b = ⌊log2 |x·2^−e|⌋ the result's last place is
//! u = max(b, emin) − M, as the general rounding sets it. v = |x|·2^(−e−u) is exact (a
//! power-of-two scaling that stays normal, or falls below 2^−1022 where it is far below ½
//! and rounds to 0 either way), and v < 2^(M+1). (v + 2^52) − 2^52 is then v rounded to an
//! integer q, ties to even, exactly (Rust's f64 arithmetic rounds to nearest even; 2^52 ≤
//! v + 2^52 < 2^53 has unit 1). From q the word is built as the general rounding builds it:
//! a carry into the next binade, a subnormal, overflow past emax or onto the NaN code.
//! [`FloatFormat::round`] stays the definition; the tests below hold this path to it on
//! every word's value, every midpoint and their neighbours, over the scales MX uses.

use super::FloatFormat;
use crate::arith::pow2;
use crate::arith::Bits;

/// 2^52: adding and subtracting it rounds a value in [0, 2^52) to an integer, ties to even.
const ROUND_TO_INT: f64 = 4_503_599_627_370_496.0;

impl FloatFormat {
    /// Whether [`Self::round_scaled`] runs the fast path for this format.
    pub fn rounds_scaled_fast(&self) -> bool {
        self.frac_bits <= 50 && !self.ftz && self.emax() - self.emin() < 1000
    }

    /// The word nearest to x·2^−e (ties to even; finite x, |e| ≤ 512): `round` of the exact
    /// value, by the fast path where [`Self::rounds_scaled_fast`] (the module documentation
    /// says why it is the same word). For many values, [`Self::scaled_rounder`] once.
    pub fn round_scaled(&self, x: f64, e: i64) -> Bits {
        self.scaled_rounder().round(x, e)
    }

    /// [`Self::round_scaled`] with the format's constants worked out once.
    pub fn scaled_rounder(&self) -> ScaledRounder {
        ScaledRounder {
            f: *self,
            fast: self.rounds_scaled_fast(),
            m: self.frac_bits,
            emax: self.emax(),
            emin: self.emin(),
            bias: self.bias(),
            nan_code_finite: self.finite,
            overflow: [self.overflow(false), self.overflow(true)],
            zero: [self.zero_of(false), self.zero_of(true)],
        }
    }

    /// The definition of [`Self::round_scaled`]: `round` of x's exact value times 2^−e.
    pub fn round_scaled_reference(&self, x: f64, e: i64) -> Bits {
        let bits = x.to_bits();
        let field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (sig, exp) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        self.round(bits >> 63 != 0, u128::from(sig), exp - e)
    }
}

/// [`FloatFormat::round_scaled`] of one format, its constants worked out once.
#[derive(Clone, Copy, Debug)]
pub struct ScaledRounder {
    f: FloatFormat,
    fast: bool,
    m: u32,
    emax: i64,
    emin: i64,
    bias: i64,
    /// Whether the all-ones exponent with the all-ones fraction is no number (NaN, or `:fn`'s
    /// NaN), so that rounding onto it overflows.
    nan_code_finite: bool,
    /// The overflow words, + and −.
    overflow: [Bits; 2],
    /// The zeros, + and −.
    zero: [Bits; 2],
}

impl ScaledRounder {
    /// The word nearest to x·2^−e (ties to even; finite x, |e| ≤ 512).
    #[inline]
    pub fn round(&self, x: f64, e: i64) -> Bits {
        debug_assert!(x.is_finite() && e.abs() <= 512);
        let bits = x.to_bits();
        let neg = (bits >> 63) as usize;
        let field = ((bits >> 52) & 0x7ff) as i64;
        if !self.fast || (field == 0 && bits << 1 != 0) {
            // f64 subnormals (and formats off the fast path): the definition.
            return self.f.round_scaled_reference(x, e);
        }
        let m = i64::from(self.m);
        let top = field - 1023 - e;
        if top > self.emax {
            return self.overflow[neg];
        }
        let ulp = top.max(self.emin) - m;
        // |x|·2^(−e−ulp): −e − ulp lies within ±(512 + 1000 + 50), so 2^k is built in two
        // normal steps. (A zero gives q = 0.)
        let k = -e - ulp;
        let v = f64::from_bits(bits & !(1 << 63)) * pow2(k / 2) * pow2(k - k / 2);
        // (An integer below 2^51: converted through i64, which x86 does in one instruction.)
        let q = ((v + ROUND_TO_INT) - ROUND_TO_INT) as i64 as u64;
        // Rounded up into the next binade: one bit more.
        let carry = q >> (self.m + 1);
        let (q, ex) = ((q >> carry) as Bits, ulp + m + carry as i64);
        let mask: Bits = (1 << self.m) - 1;
        let frac = q & mask;
        if ex > self.emax || (self.nan_code_finite && ex == self.emax && frac == mask) {
            return self.overflow[neg];
        }
        // Below 2^M the word is subnormal (only at ulp = emin − M; a zero included): its
        // exponent field 0 and its fraction q itself.
        let field = if q >> self.m != 0 {
            ((ex + self.bias) as Bits) << self.m
        } else {
            0
        };
        self.zero[neg] | field | frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::Format;
    use crate::family_trait::Family;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// The formats under test: MX's elements, binary16, bfloat16, and unusual ones.
    fn formats() -> Vec<FloatFormat> {
        [
            "float:4:3:fn:sat",
            "float:5:2:sat",
            "float:3:2:nonan",
            "float:2:3:nonan",
            "float:2:1:nonan",
            "fp8:e4m3",
            "fp8:e5m2",
            "f16",
            "bf16",
            "float:3:1",
            "float:6:9:fn",
        ]
        .iter()
        .map(|s| match s.parse::<Format>() {
            Ok(Format::Float(f)) => f,
            other => panic!("{s}: {other:?}"),
        })
        .collect()
    }

    /// Every finite word's value, each midpoint between neighbours (ties), and the f64s
    /// either side of both, times 2^e for scales across MX's range, give `round`'s word.
    #[test]
    fn every_value_midpoint_and_neighbour_rounds_as_the_definition() {
        for f in formats() {
            assert!(f.rounds_scaled_fast(), "{f}");
            let mut vals: Vec<f64> = (0..1u64 << f.width().min(16))
                .map(|w| f.to_f64(w))
                .filter(|v| v.is_finite())
                .collect();
            vals.sort_by(f64::total_cmp);
            let mids: Vec<f64> = vals.windows(2).map(|p| (p[0] + p[1]) / 2.0).collect();
            let max = *vals.last().unwrap();
            let beyond = [
                max * 1.0001,
                max * 2.0,
                max * 1e30,
                1e-300,
                5e-324,
                -0.0,
                0.0,
            ];
            let step = if f.width() > 8 { 37 } else { 3 };
            for e in (-140..=140).step_by(step) {
                let scale = 2f64.powi(e);
                for &v in vals.iter().chain(&mids).chain(&beyond) {
                    for x in [v, v.next_up(), v.next_down()] {
                        for x in [x * scale, -x * scale] {
                            let (got, want) = (
                                f.round_scaled(x, e.into()),
                                f.round_scaled_reference(x, e.into()),
                            );
                            assert_eq!(
                                got, want,
                                "{f}: {x:e}·2^{} gave {got:#x}, not {want:#x}",
                                -e
                            );
                        }
                    }
                }
            }
        }
    }

    /// Random f64s of every magnitude and scale.
    #[test]
    fn random_values_round_as_the_definition() {
        let mut rng = Pcg64::seed_from_u64(45);
        for f in formats() {
            for _ in 0..100_000 {
                let x = f64::from_bits(
                    rng.gen::<u64>() & !(0x7ff << 52) | (rng.gen_range(0..0x7ffu64) << 52),
                );
                let e = rng.gen_range(-512i64..=512);
                assert_eq!(
                    f.round_scaled(x, e),
                    f.round_scaled_reference(x, e),
                    "{f}: {x:e}, {e}"
                );
            }
        }
    }
}
