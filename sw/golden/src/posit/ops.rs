//! Posit add, subtract, multiply, divide, compare: exact intermediate, one rounding.

use std::cmp::Ordering;

use super::{with_const_format, PositFormat, HIDDEN};

impl PositFormat {
    /// |p| as an unsigned pattern: orders like the magnitude (for non-NaR p).
    #[inline(always)]
    fn magnitude(self, p: u64) -> u64 {
        let sign = (((p << (64 - self.n)) as i64) >> 63) as u64;
        ((p ^ sign).wrapping_sub(sign)) & self.mask()
    }

    /// a + b, or a - b when `negate_b`.
    #[inline(always)]
    fn add_impl(self, a: u64, b: u64, negate_b: bool) -> u64 {
        let nar = self.nar();
        if a == nar || b == nar {
            return nar;
        }
        let b = if negate_b {
            b.wrapping_neg() & self.mask()
        } else {
            b
        };
        if a == 0 || b == 0 {
            return a | b;
        }
        // The larger magnitude leads (posit patterns order like their magnitudes).
        let (a, b) = if self.magnitude(a) >= self.magnitude(b) {
            (a, b)
        } else {
            (b, a)
        };
        let (sa, ea, ma) = self.unpack(a);
        let (sb, eb, mb) = self.unpack(b);
        // Hidden bits at 61 leave room for the carry. Posit fractions have at most 29 bits, so
        // a shift below 32 loses nothing, and a sticky bit in bit 0 stays far below the guard.
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
        self.encode(sa, scale, m << (HIDDEN as i32 - top), false)
    }

    #[inline(always)]
    fn mul_impl(self, a: u64, b: u64) -> u64 {
        let nar = self.nar();
        if a == nar || b == nar {
            return nar;
        }
        if a == 0 || b == 0 {
            return 0;
        }
        let (sa, ea, ma) = self.unpack(a);
        let (sb, eb, mb) = self.unpack(b);
        // Hidden bits at 31: the product's hidden bit lands at 62 or 63, exactly.
        let m = (ma >> 31) * (mb >> 31);
        let carry = (m >> 63) as i32;
        self.encode(sa ^ sb, ea + eb + carry, m >> carry, false)
    }

    #[inline(always)]
    fn div_impl(self, a: u64, b: u64) -> u64 {
        let nar = self.nar();
        if a == nar || b == nar || b == 0 {
            return nar;
        }
        if a == 0 {
            return 0;
        }
        let (sa, ea, ma) = self.unpack(a);
        let (sb, eb, mb) = self.unpack(b);
        // ma has its hidden bit at 62, the divisor at 30: the quotient has 32 or 33 bits,
        // more than the 29 fraction bits + guard that any posit of <= 32 bits needs.
        let divisor = mb >> 32;
        let q = ma / divisor;
        let sticky = ma % divisor != 0;
        let top = 63 - q.leading_zeros() as i32; // 31 or 32
        let scale = ea - eb + top - 32;
        self.encode(sa ^ sb, scale, q << (HIDDEN as i32 - top), sticky)
    }

    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| f.add_impl(a, b, false))
    }

    #[inline]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| f.add_impl(a, b, true))
    }

    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| f.mul_impl(a, b))
    }

    /// a / b; NaR if b is zero.
    #[inline]
    pub fn div(&self, a: u64, b: u64) -> u64 {
        with_const_format!(*self, |f| f.div_impl(a, b))
    }

    pub fn neg(&self, a: u64) -> u64 {
        a.wrapping_neg() & self.mask()
    }

    /// √a, rounded once (bit-string rounding, ties to even); NaR for NaR and for a < 0.
    /// The exact root's significand is an integer square root: with the scale made even,
    /// m = sig·2^(62 + scale mod 2) has 125 or 126 bits, ⌊√m⌋ has its hidden bit at 62, and
    /// the remainder is the sticky bit.
    pub fn sqrt(&self, a: u64) -> u64 {
        if a == 0 || a == self.nar() {
            return a;
        }
        if (a >> (self.n - 1)) & 1 == 1 {
            return self.nar();
        }
        let (_, scale, sig) = self.unpack(a);
        let odd = scale & 1;
        let m = u128::from(sig) << (62 + odd);
        let q = num_integer::Roots::sqrt(&m);
        self.encode(false, (scale - odd) >> 1, q as u64, q * q != m)
    }

    pub fn abs(&self, a: u64) -> u64 {
        if (a >> (self.n - 1)) & 1 == 1 {
            self.neg(a)
        } else {
            a
        }
    }

    /// The standard's total order: posits compare as two's-complement integers, so NaR is
    /// below every real and equal to itself.
    pub fn cmp(&self, a: u64, b: u64) -> Ordering {
        let sx = |p: u64| ((p << (64 - self.n)) as i64) >> (64 - self.n);
        sx(a).cmp(&sx(b))
    }

    /// The larger; NaR if either is NaR (as an ALU lane propagates it).
    pub fn max(&self, a: u64, b: u64) -> u64 {
        if a == self.nar() || b == self.nar() {
            return self.nar();
        }
        if self.cmp(a, b) == Ordering::Less {
            b
        } else {
            a
        }
    }

    /// The smaller; NaR if either is NaR.
    pub fn min(&self, a: u64, b: u64) -> u64 {
        if a == self.nar() || b == self.nar() {
            return self.nar();
        }
        if self.cmp(a, b) == Ordering::Greater {
            b
        } else {
            a
        }
    }
}
