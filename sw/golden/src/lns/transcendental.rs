//! exp and ln in LNS: the correct rounding of an f64 log (`pack_log2`, which the LNS `Family`
//! impl's `exp` and `ln` in `family.rs` use), and seed 000's Taylor series built from LNS ops.

use num_bigint::BigInt;

use super::{Lns, LnsFormat};
use crate::family_trait::Family;
use crate::hiprec;

/// libm answers closer than this (in code units) to a rounding boundary are re-decided exactly.
const MARGIN: f64 = 1.0 / (1u64 << 20) as f64;

impl LnsFormat {
    /// Rounds a log2 value given by libm (`fast`) or by `hiprec` (`exact`) and packs it.
    pub(super) fn pack_log2(&self, neg: bool, fast: f64, exact: impl FnMut(u32) -> BigInt) -> u64 {
        let t = fast * (1u64 << self.frac_bits) as f64;
        let lim = self.code_max() as f64 + 2.0;
        if t.is_finite() && (t - t.floor() - 0.5).abs() > MARGIN {
            if t > lim {
                return self.pack(neg, self.code_max());
            }
            if t < -lim {
                return self.zero();
            }
            let code = BigInt::from(t.round() as i64);
            return self.pack_rounded(neg, &code);
        }
        let code = hiprec::round_enclosure(self.frac_bits, exact);
        self.pack_rounded(neg, &code)
    }
}

impl Lns {
    /// e^x as seed 000 eq. 2.6, every step an LNS operation. Range reduction keeps the series
    /// where it converges: y = x / 2^k with |y| <= 1/2 (exact: k is subtracted from the log),
    /// p = 1 + y + y²/2 + y³/6 + y⁴/24 accumulated left to right with t <- t·y/j, then p is
    /// squared k times (exact: the log doubles, saturating).
    pub fn exp_taylor(&self, x: u64) -> u64 {
        let f = self.fmt;
        let (neg, c) = f.unpack(x);
        if c == f.code_reserved() {
            return if neg { f.nan() } else { f.one() };
        }
        let one_code = 1i32 << f.frac_bits;
        // k = max(0, ceil(c / 2^F) + 1) so that log2|y| <= -1.
        let k = ((c + one_code - 1).div_euclid(one_code) + 1).max(0);
        let y = self.finish(neg, c - k * one_code);
        let one = f.one();
        let mut t = y;
        let mut p = self.add(one, y);
        for j in [2.0, 3.0, 4.0] {
            t = self.div(self.mul(t, y), f.from_f64(j));
            p = self.add(p, t);
        }
        for _ in 0..k {
            p = self.mul(p, p);
        }
        p
    }

    /// ln x as seed 000 eq. 2.7, every step an LNS operation. Range reduction: x = 2^n m with
    /// n the nearest integer to log2 x (m = x / 2^n exactly); y = (m-1)/(m+1);
    /// ln m = 2(y + y³/3 + y⁵/5); ln x = n·ln2 + ln m with n and ln 2 converted to the format.
    pub fn ln_taylor(&self, x: u64) -> u64 {
        let f = self.fmt;
        let (neg, c) = f.unpack(x);
        if neg || c == f.code_reserved() {
            return f.nan();
        }
        let one_code = 1i32 << f.frac_bits;
        let n = (c + one_code / 2).div_euclid(one_code);
        let m = f.pack(false, c - n * one_code);
        let one = f.one();
        let y = self.div(self.sub(m, one), self.add(m, one));
        let y2 = self.mul(y, y);
        let y3 = self.mul(y, y2);
        let y5 = self.mul(y3, y2);
        let mut s = self.add(y, self.div(y3, f.from_f64(3.0)));
        s = self.add(s, self.div(y5, f.from_f64(5.0)));
        s = self.mul(s, f.from_f64(2.0));
        let n_ln2 = self.mul(f.from_f64(n as f64), f.from_f64(std::f64::consts::LN_2));
        self.add(n_ln2, s)
    }
}
