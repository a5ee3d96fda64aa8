//! Linear takums (Hunhold 2024, "Beating posits at their own game: takum arithmetic"):
//! `takum:N`, a tapered format whose exponent ("characteristic") is bounded to −255 … 254.
//!
//! An N-bit word is a two's-complement integer: 0 is zero, 1000…0 is NaR, and a negative
//! word is the negation of its magnitude's word. A positive word's bits are
//!
//! ```text
//!   S=0 | D | R2 R1 R0 | C (r bits) | M (p = N − 5 − r bits)
//! ```
//!
//! with r = R when D = 1 and r = 7 − R when D = 0 (bits past the word's end read as 0), the
//! characteristic c = 2^r − 1 + C (D = 1) or c = −2^(r+1) + 1 + C (D = 0), and the value
//! (1 + M/2^p)·2^c. Words order like their values, as posits do, so the arithmetic is the
//! tapered arithmetic posits use ([`crate::tapered`]): an exact intermediate rounded once.
//!
//! Rounding is posits' rule on takum's bit string: the exact value is written as an
//! infinitely long takum and cut to N bits, to nearest, ties to the even word. A nonzero
//! result never rounds to zero or NaR: it saturates at ±minpos and ±maxpos (the paper's
//! saturation; docs/formats.md).
//!
//! Inside, a nonzero takum is (sign, scale, sig) with value ±sig·2^(scale − 62): scale is c,
//! `sig` holds the hidden bit at bit 62 and the fraction below it.

mod family;
pub use family::FAMILY;

use std::fmt;

use crate::format::{err, FormatError};
use crate::tapered::{Tapered, HIDDEN};

/// The smallest and largest characteristic.
pub const C_MIN: i32 = -255;
pub const C_MAX: i32 = 254;

/// Parameters of a takum format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TakumFormat {
    pub n: u32,
}

impl fmt::Display for TakumFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "takum:{}", self.n)
    }
}

impl TakumFormat {
    /// `takum:N` for 6 ≤ N ≤ 32: the sign, direction and regime take 5 bits, and the
    /// tapered arithmetic takes fractions of at most 29 bits.
    pub fn new(n: u32) -> Result<TakumFormat, FormatError> {
        if !(6..=32).contains(&n) {
            return err(format!(
                "format \"takum:{n}\": takum width must be 6..=32 bits (e.g. takum:16)"
            ));
        }
        Ok(TakumFormat { n })
    }

    pub fn nar(&self) -> u64 {
        self.nar_word()
    }

    pub fn maxpos(&self) -> u64 {
        self.nar_word() - 1
    }

    /// The characteristic c's fields: (D, R, r, C).
    pub fn fields(c: i32) -> (u64, u64, u32, u64) {
        debug_assert!((C_MIN..=C_MAX).contains(&c));
        if c >= 0 {
            // c + 1 in [2^r, 2^(r+1)).
            let r = 31 - (c + 1).leading_zeros();
            (1, r as u64, r, (c + 1 - (1 << r)) as u64)
        } else {
            // −c in [2^r, 2^(r+1)).
            let r = 31 - (-c).leading_zeros();
            (0, 7 - r as u64, r, (c + (1 << (r + 1)) - 1) as u64)
        }
    }
}

impl Tapered for TakumFormat {
    #[inline(always)]
    fn n(self) -> u32 {
        self.n
    }

    #[inline(always)]
    fn unpack(self, p: u64) -> (bool, i32, u64) {
        // Left-align, take the two's-complement magnitude; D then at bit 63 of x.
        let left = p << (64 - self.n);
        let sign = ((left as i64) >> 63) as u64;
        let x = ((left ^ sign).wrapping_sub(sign)) << 1;
        let d = x >> 63;
        let reg = ((x >> 60) & 7) as u32;
        let r = if d == 1 { reg } else { 7 - reg };
        let rest = x << 4;
        let c_field = if r == 0 { 0 } else { (rest >> (64 - r)) as i32 };
        let c = if d == 1 {
            (1 << r) - 1 + c_field
        } else {
            1 - (1 << (r + 1)) + c_field
        };
        let sig = (1u64 << HIDDEN) | ((rest << r) >> 2);
        (sign != 0, c, sig)
    }

    #[inline(always)]
    fn encode(self, neg: bool, scale: i32, sig: u64, sticky: bool) -> u64 {
        debug_assert!(sig >> HIDDEN == 1);
        let keep = self.n - 1;
        let u = if scale > C_MAX {
            self.maxpos()
        } else if scale < C_MIN {
            1
        } else {
            let (d, reg, r, c_field) = TakumFormat::fields(scale);
            // The bit string after the sign, left-aligned at bit 63: D, R, C, then the
            // fraction; bits shifted out below bit 0 are sticky.
            let frac = sig & ((1u64 << HIDDEN) - 1);
            let head = ((d << 3) | reg) << 60;
            let c_bits = if r == 0 { 0 } else { c_field << (60 - r) };
            let sh = 2 + r; // the fraction's bit 61 lands at bit 59 − r
            let body = head | c_bits | (frac >> sh);
            let mut st = sticky | (frac & ((1u64 << sh) - 1) != 0);
            let u = body >> (64 - keep);
            let rem = body << keep;
            let guard = rem >> 63;
            st |= rem << 1 != 0;
            let u = u + (guard & (st as u64 | (u & 1)));
            // Saturate: never zero, never past maxpos into the sign.
            u.clamp(1, self.maxpos())
        };
        let s = (neg as u64).wrapping_neg();
        ((u ^ s).wrapping_sub(s)) & self.word_mask()
    }

    /// Sign, a 31-bit carry guard, and integer and fraction fields for maxpos² < 2^510 and
    /// for any product of two words (the smallest fraction bit of a word is above 2^−(255+N)).
    fn quire_bits(self) -> u32 {
        1 + 31 + 2 * (C_MAX as u32 + 1) + self.quire_frac_bits()
    }

    fn quire_frac_bits(self) -> u32 {
        2 * ((-C_MIN) as u32 + self.n)
    }
}
