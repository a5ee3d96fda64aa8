//! The quire: an exact fixed-point accumulator of posit products, rounded once when read.
//!
//! A quire of `quire_bits()` bits holds a two's-complement integer scaled by
//! 2^-`quire_frac_bits()`. Accumulation wraps modulo 2^quire_bits, as the hardware does; the
//! pattern 1000…0 is NaR (the standards' encoding), and NaR absorbs every later operation.
//! The carry guard makes wrapping impossible for at least 2^(carry bits) products.

use num_bigint::BigInt;

use super::{PositFormat, HIDDEN};

/// A quire for one posit format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quire {
    fmt: PositFormat,
    /// Little-endian 64-bit limbs; the top limb is kept sign-extended from bit quire_bits-1.
    limbs: Vec<u64>,
}

impl Quire {
    pub fn new(fmt: PositFormat) -> Quire {
        let n = fmt.quire_bits().div_ceil(64) as usize;
        Quire {
            fmt,
            limbs: vec![0; n],
        }
    }

    pub fn format(&self) -> PositFormat {
        self.fmt
    }

    pub fn clear(&mut self) {
        self.limbs.iter_mut().for_each(|l| *l = 0);
    }

    fn top_bit(&self) -> u32 {
        self.fmt.quire_bits() - 1
    }

    /// Is the quire NaR (sign bit set, every other bit clear)?
    pub fn is_nar(&self) -> bool {
        let top = self.top_bit();
        let (ti, tb) = ((top / 64) as usize, top % 64);
        // Below the sign bit every bit is clear; the top limb holds the sign extension.
        self.limbs[..ti].iter().all(|&l| l == 0) && self.limbs[ti] == (!0u64 << tb)
    }

    pub fn set_nar(&mut self) {
        self.clear();
        let top = self.top_bit();
        let (ti, tb) = ((top / 64) as usize, top % 64);
        self.limbs[ti] = !0u64 << tb;
    }

    pub fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// Re-establishes the sign extension of the top limb (wrapping at quire_bits).
    #[inline(always)]
    fn wrap(&mut self) {
        let top = self.top_bit();
        let (ti, tb) = ((top / 64) as usize, top % 64);
        let sh = 63 - tb;
        let l = &mut self.limbs[ti];
        *l = (((*l << sh) as i64) >> sh) as u64;
    }

    /// Adds (or subtracts) m·2^pos (pos counted in quire LSBs; m's bits below 0 are zero).
    #[inline(always)]
    fn accumulate(&mut self, negative: bool, m: u64, pos: i32) {
        let (m, pos) = if pos < 0 {
            debug_assert!(m & ((1u64 << -pos) - 1) == 0, "inexact quire position");
            (m >> -pos, 0u32)
        } else {
            (m, pos as u32)
        };
        let (i, off) = ((pos / 64) as usize, pos % 64);
        let lo = m << off;
        let hi = if off == 0 { 0 } else { m >> (64 - off) };
        let n = self.limbs.len();
        if i >= n {
            return; // entirely above the quire: wraps away
        }
        if !negative {
            let (s, c1) = self.limbs[i].overflowing_add(lo);
            self.limbs[i] = s;
            let mut carry = c1 as u64;
            let mut j = i + 1;
            if j < n {
                let (s, c2) = self.limbs[j].overflowing_add(hi);
                let (s, c3) = s.overflowing_add(carry);
                self.limbs[j] = s;
                carry = (c2 || c3) as u64;
                j += 1;
            }
            while carry != 0 && j < n {
                let (s, c) = self.limbs[j].overflowing_add(1);
                self.limbs[j] = s;
                carry = c as u64;
                j += 1;
            }
        } else {
            let (s, b1) = self.limbs[i].overflowing_sub(lo);
            self.limbs[i] = s;
            let mut borrow = b1 as u64;
            let mut j = i + 1;
            if j < n {
                let (s, b2) = self.limbs[j].overflowing_sub(hi);
                let (s, b3) = s.overflowing_sub(borrow);
                self.limbs[j] = s;
                borrow = (b2 || b3) as u64;
                j += 1;
            }
            while borrow != 0 && j < n {
                let (s, b) = self.limbs[j].overflowing_sub(1);
                self.limbs[j] = s;
                borrow = b as u64;
                j += 1;
            }
        }
        self.wrap();
    }

    /// q += a·b (exact). `subtract` gives q -= a·b.
    #[inline]
    pub fn fma(&mut self, a: u64, b: u64, subtract: bool) {
        let f = self.fmt;
        if a == f.nar() || b == f.nar() || self.is_nar() {
            self.set_nar();
            return;
        }
        if a == 0 || b == 0 {
            return;
        }
        let (sa, ea, ma) = f.unpack(a);
        let (sb, eb, mb) = f.unpack(b);
        // a·b = m·2^(ea+eb-62) exactly, m < 2^64 (hidden bits at 31 each).
        let m = (ma >> 31) * (mb >> 31);
        let pos = ea + eb - 62 + f.quire_frac_bits() as i32;
        self.accumulate(sa ^ sb ^ subtract, m, pos);
    }

    /// q += a·b.
    #[inline]
    pub fn add_product(&mut self, a: u64, b: u64) {
        self.fma(a, b, false);
    }

    /// q -= a·b.
    #[inline]
    pub fn sub_product(&mut self, a: u64, b: u64) {
        self.fma(a, b, true);
    }

    /// q += p.
    pub fn add_posit(&mut self, p: u64) {
        let f = self.fmt;
        if p == f.nar() || self.is_nar() {
            self.set_nar();
            return;
        }
        if p == 0 {
            return;
        }
        let (s, e, m) = f.unpack(p);
        self.accumulate(s, m, e - HIDDEN as i32 + f.quire_frac_bits() as i32);
    }

    /// The quire's value as an exact integer count of 2^-quire_frac_bits; `None` for NaR.
    pub fn to_bigint(&self) -> Option<BigInt> {
        if self.is_nar() {
            return None;
        }
        let bytes: Vec<u8> = self.limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
        Some(BigInt::from_signed_bytes_le(&bytes))
    }

    /// Rounds the exact sum to a posit, once.
    pub fn to_posit(&self) -> u64 {
        let f = self.fmt;
        if self.is_nar() {
            return f.nar();
        }
        let neg = (self.limbs[self.limbs.len() - 1] as i64) < 0;
        let mut mag = self.limbs.clone();
        if neg {
            // Two's-complement negation.
            let mut carry = 1u64;
            for l in mag.iter_mut() {
                let (s, c) = (!*l).overflowing_add(carry);
                *l = s;
                carry = c as u64;
            }
        }
        let Some(hi) = mag.iter().rposition(|&l| l != 0) else {
            return 0;
        };
        let top = hi as i32 * 64 + 63 - mag[hi].leading_zeros() as i32;
        // The 63 bits from `top` down form sig (hidden at 62); anything below is sticky.
        let bit = |i: i32| -> u64 {
            if i < 0 {
                0
            } else {
                (mag[(i / 64) as usize] >> (i % 64)) & 1
            }
        };
        let lo = top - HIDDEN as i32;
        let mut sig = 0u64;
        if lo >= 0 {
            let (li, off) = ((lo / 64) as usize, lo % 64);
            sig = mag[li] >> off;
            if off != 0 && li + 1 < mag.len() {
                sig |= mag[li + 1] << (64 - off);
            }
            sig &= (1u64 << 63) - 1;
        } else {
            for i in (0..=top).rev() {
                sig = (sig << 1) | bit(i);
            }
            sig <<= -lo;
        }
        let sticky = lo > 0 && {
            let (li, off) = ((lo / 64) as usize, lo % 64);
            mag[..li].iter().any(|&l| l != 0) || mag[li] & ((1u64 << off) - 1) != 0
        };
        let scale = top - f.quire_frac_bits() as i32;
        f.encode(neg, scale, sig, sticky)
    }
}

impl PositFormat {
    /// Fused dot product: Σ a_k·b_k accumulated exactly in a quire, rounded once.
    pub fn dot_quire(&self, a: &[u64], b: &[u64]) -> u64 {
        let mut q = Quire::new(*self);
        for (&x, &y) in a.iter().zip(b) {
            q.add_product(x, y);
        }
        q.to_posit()
    }
}
