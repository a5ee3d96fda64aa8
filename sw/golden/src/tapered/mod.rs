//! The arithmetic that posits and takums share: both are tapered formats whose words are
//! two's-complement integers (0 is zero, 1000…0 is NaR, negation is the word's negation,
//! words order like their values), and whose nonzero words unpack to (sign, scale, sig) with
//! value ±sig·2^(scale − 62), the hidden bit of `sig` at bit 62 and at most 29 fraction
//! bits below it. A family says how its bits unpack and how an exact (sign, scale, sig,
//! sticky) rounds back to a word ([`Tapered`]); add, subtract, multiply, divide, the square
//! root, comparison and the conversions from exact values are written once, here, on top of
//! that: an exact intermediate and one rounding, by the family's `encode`.

use std::cmp::Ordering;

use num_bigint::BigUint;

mod quire;
pub(crate) use quire::accumulate_small;
pub use quire::Quire;

/// The hidden bit of an unpacked significand.
pub(crate) const HIDDEN: u32 = 62;

/// How a tapered family's words unpack and round.
pub trait Tapered: Copy {
    /// Bits of a word (at most 32).
    fn n(self) -> u32;
    /// Splits a nonzero, non-NaR word into (sign, scale, sig).
    fn unpack(self, p: u64) -> (bool, i32, u64);
    /// Rounds ±(sig + sticky)·2^(scale − 62) to a word. `sig` has bit 62 set; `sticky` says
    /// that nonzero bits were lost below it. Any scale is accepted (it saturates).
    fn encode(self, neg: bool, scale: i32, sig: u64, sticky: bool) -> u64;

    /// Bits of the format's quire: sign, carry guard, and integer and fraction fields that
    /// hold the largest and the smallest product of two words.
    fn quire_bits(self) -> u32;
    /// Fraction bits of the quire (enough for the smallest product of two words).
    fn quire_frac_bits(self) -> u32;

    /// a·b of two nonzero, non-NaR words as (sign, m, scale): m·2^(scale−62) exactly, m < 2^64
    /// (hidden bits at 31 each).
    #[inline(always)]
    fn product(self, a: u64, b: u64) -> (bool, u64, i32) {
        let (sa, ea, ma) = self.unpack(a);
        let (sb, eb, mb) = self.unpack(b);
        (sa ^ sb, (ma >> 31) * (mb >> 31), ea + eb)
    }

    #[inline(always)]
    fn word_mask(self) -> u64 {
        (1u64 << self.n()) - 1
    }
    #[inline(always)]
    fn nar_word(self) -> u64 {
        1u64 << (self.n() - 1)
    }
}

/// |p| as an unsigned pattern: orders like the magnitude (for non-NaR p).
#[inline(always)]
fn magnitude<T: Tapered>(f: T, p: u64) -> u64 {
    let sign = (((p << (64 - f.n())) as i64) >> 63) as u64;
    ((p ^ sign).wrapping_sub(sign)) & f.word_mask()
}

/// a + b, or a − b when `negate_b`.
#[inline(always)]
pub(crate) fn add<T: Tapered>(f: T, a: u64, b: u64, negate_b: bool) -> u64 {
    let nar = f.nar_word();
    if a == nar || b == nar {
        return nar;
    }
    let b = if negate_b {
        b.wrapping_neg() & f.word_mask()
    } else {
        b
    };
    if a == 0 || b == 0 {
        return a | b;
    }
    // The larger magnitude leads (the patterns order like their magnitudes).
    let (a, b) = if magnitude(f, a) >= magnitude(f, b) {
        (a, b)
    } else {
        (b, a)
    };
    let (sa, ea, ma) = f.unpack(a);
    let (sb, eb, mb) = f.unpack(b);
    // Hidden bits at 61 leave room for the carry. Fractions have at most 29 bits, so a shift
    // below 32 loses nothing, and a sticky bit in bit 0 stays far below the guard.
    let (ma, mb) = (ma >> 1, mb >> 1);
    let d = ((ea - eb) as u32).min(63);
    let lost = mb & ((1u64 << d) - 1) != 0;
    let mb = (mb >> d) | lost as u64;
    let m = if sa == sb { ma + mb } else { ma - mb };
    if m == 0 {
        return 0;
    }
    let top = 63 - m.leading_zeros() as i32; // 62 at most
    let scale = ea - 61 + top;
    f.encode(sa, scale, m << (HIDDEN as i32 - top), false)
}

#[inline(always)]
pub(crate) fn mul<T: Tapered>(f: T, a: u64, b: u64) -> u64 {
    let nar = f.nar_word();
    if a == nar || b == nar {
        return nar;
    }
    if a == 0 || b == 0 {
        return 0;
    }
    let (sa, ea, ma) = f.unpack(a);
    let (sb, eb, mb) = f.unpack(b);
    // Hidden bits at 31: the product's hidden bit lands at 62 or 63, exactly.
    let m = (ma >> 31) * (mb >> 31);
    let carry = (m >> 63) as i32;
    f.encode(sa ^ sb, ea + eb + carry, m >> carry, false)
}

/// a / b; NaR if b is zero.
#[inline(always)]
pub(crate) fn div<T: Tapered>(f: T, a: u64, b: u64) -> u64 {
    let nar = f.nar_word();
    if a == nar || b == nar || b == 0 {
        return nar;
    }
    if a == 0 {
        return 0;
    }
    let (sa, ea, ma) = f.unpack(a);
    let (sb, eb, mb) = f.unpack(b);
    // ma has its hidden bit at 62, the divisor at 30: the quotient has 32 or 33 bits, more
    // than the 29 fraction bits + guard that any word needs.
    let divisor = mb >> 32;
    let q = ma / divisor;
    let sticky = ma % divisor != 0;
    let top = 63 - q.leading_zeros() as i32; // 31 or 32
    let scale = ea - eb + top - 32;
    f.encode(sa ^ sb, scale, q << (HIDDEN as i32 - top), sticky)
}

/// √a, rounded once; NaR for NaR and for a < 0. The exact root's significand is an integer
/// square root: with the scale made even, m = sig·2^(62 + scale mod 2) has 125 or 126 bits,
/// ⌊√m⌋ has its hidden bit at 62, and the remainder is the sticky bit.
pub(crate) fn sqrt<T: Tapered>(f: T, a: u64) -> u64 {
    if a == 0 || a == f.nar_word() {
        return a;
    }
    if (a >> (f.n() - 1)) & 1 == 1 {
        return f.nar_word();
    }
    let (_, scale, sig) = f.unpack(a);
    let odd = scale & 1;
    let m = u128::from(sig) << (62 + odd);
    let q = num_integer::Roots::sqrt(&m);
    f.encode(false, (scale - odd) >> 1, q as u64, q * q != m)
}

pub(crate) fn neg<T: Tapered>(f: T, a: u64) -> u64 {
    a.wrapping_neg() & f.word_mask()
}

pub(crate) fn abs<T: Tapered>(f: T, a: u64) -> u64 {
    if (a >> (f.n() - 1)) & 1 == 1 {
        neg(f, a)
    } else {
        a
    }
}

/// The total order: words compare as two's-complement integers, so NaR is below every real
/// and equal to itself.
pub(crate) fn cmp<T: Tapered>(f: T, a: u64, b: u64) -> Ordering {
    let sx = |p: u64| ((p << (64 - f.n())) as i64) >> (64 - f.n());
    sx(a).cmp(&sx(b))
}

/// The larger (`want` = Greater) or the smaller (Less); NaR if either is NaR.
pub(crate) fn pick<T: Tapered>(f: T, a: u64, b: u64, want: Ordering) -> u64 {
    if a == f.nar_word() || b == f.nar_word() {
        return f.nar_word();
    }
    if cmp(f, b, a) == want {
        b
    } else {
        a
    }
}

/// The word nearest to the exact v·2^scale: a quire's read-out of a value it holds.
pub(crate) fn round_exact<T: Tapered>(f: T, v: i128, scale: i32) -> u64 {
    let (neg, mag) = (v < 0, v.unsigned_abs());
    if mag == 0 {
        return 0;
    }
    let top = 127 - mag.leading_zeros() as i32;
    // The 63 bits from `top` down form sig (hidden at 62); anything below is sticky.
    let lo = top - HIDDEN as i32;
    let (sig, sticky) = if lo >= 0 {
        let sig = (mag >> lo) as u64 & ((1u64 << 63) - 1);
        (sig, mag & ((1u128 << lo) - 1) != 0)
    } else {
        ((mag as u64) << -lo, false)
    };
    f.encode(neg, top + scale, sig, sticky)
}

/// Word `a` of `f` in format `t` of the same family, rounded by `t`.
pub(crate) fn convert<T: Tapered>(f: T, t: T, a: u64) -> u64 {
    if a == 0 {
        return 0;
    }
    if a == f.nar_word() {
        return t.nar_word();
    }
    let (neg, scale, sig) = f.unpack(a);
    t.encode(neg, scale, sig, false)
}

/// The word nearest to an exact ratio (by the family's rounding).
pub(crate) fn from_ratio<T: Tapered>(f: T, neg: bool, num: &BigUint, den: &BigUint) -> u64 {
    if num.bits() == 0 {
        return 0;
    }
    // s = floor(log2(num/den)); sig = floor(num/den · 2^(62-s)) has bit 62 set.
    let mut s = num.bits() as i64 - den.bits() as i64;
    let split = |s: i64| {
        let sh = HIDDEN as i64 - s;
        let (a, b) = if sh >= 0 {
            (num << sh as u64, den.clone())
        } else {
            (num.clone(), den << (-sh) as u64)
        };
        (&a / &b, &a % &b)
    };
    let (mut q, mut r) = split(s);
    if q.bits() <= HIDDEN as u64 {
        s -= 1;
        (q, r) = split(s);
    }
    let sig: u64 = (&q).try_into().expect("62-bit significand");
    let scale = s.clamp(-(1 << 20), 1 << 20) as i32;
    f.encode(neg, scale, sig, r.bits() != 0)
}

/// The word nearest to `x`; NaN and ±∞ give NaR.
pub(crate) fn from_f64<T: Tapered>(f: T, x: f64) -> u64 {
    if x.is_nan() || x.is_infinite() {
        return f.nar_word();
    }
    if x == 0.0 {
        return 0;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let top = 63 - mant.leading_zeros() as i32;
    let sig = mant << (HIDDEN as i32 - top);
    f.encode(x < 0.0, e + top, sig, false)
}

/// The exact value of a word whose scale is at most 960 in magnitude; NaR gives NaN.
pub(crate) fn to_f64<T: Tapered>(f: T, p: u64) -> f64 {
    if p == 0 {
        return 0.0;
    }
    if p == f.nar_word() {
        return f64::NAN;
    }
    let (neg, scale, sig) = f.unpack(p);
    // 2^(scale − 62) from its bits (powi here is a library call the compiler hoists: a
    // decoding hot spot). With |scale| ≤ 960 the halves are normal f64s.
    let e = scale - HIDDEN as i32;
    let pow2 = |e: i32| f64::from_bits(((e.clamp(-1022, 1023) + 1023) as u64) << 52);
    let v = sig as f64 * pow2(e / 2) * pow2(e - e / 2);
    if neg {
        -v
    } else {
        v
    }
}
