//! Stochastic rounding (`lpgen_golden::rounding`, docs/formats.md "Stochastic rounding")
//! against references written here from the contract's own words:
//!
//! 1. the generator: SplitMix64 of the seed, its high half (1 if zero) as the xorshift32
//!    state, one step x ^= x << 13, x ^= x >> 17, x ^= x << 5 per rounded result, r = the top
//!    R bits of the new state; its first states from two seeds pinned, and its period
//!    2^32 − 1 proved by the order of its GF(2) matrix;
//! 2. every pair of words of fp8:e4m3, fp8:e5m2, float:4:3:sat and float:2:5:ftz (add, mul),
//!    random pairs of bf16 and float:11:52 (add, sub, mul, div, fma) and random f64 values:
//!    the exact result (big integers), its kept and discarded bits split here, the rule
//!    applied with the draws of the reference generator;
//! 3. fix: every pair of fix:3:4 (mul, div), random f64 values, and fix → fix conversion,
//!    on the two's complement value;
//! 4. exhaustive over r: a value whose discarded part has top bits d steps for exactly d of
//!    the 2^R draws; and unbiasedness: means of many roundings against nearest's bias.

mod dot;
mod fix;
mod float;
mod float_ref;
mod generator;

/// The reference generator, from the contract's words.
pub struct RefGen(pub u32);

impl RefGen {
    pub fn new(seed: u64) -> RefGen {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let hi = (z >> 32) as u32;
        RefGen(if hi == 0 { 1 } else { hi })
    }

    /// The next R random bits.
    pub fn draw(&mut self, bits: u32) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x >> (32 - bits)
    }
}
