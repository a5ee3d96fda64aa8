//! The quire: an exact fixed-point accumulator of a tapered format's products, rounded once
//! when read.
//!
//! A quire of `quire_bits()` bits holds a two's-complement integer scaled by
//! 2^-`quire_frac_bits()`. Accumulation wraps modulo 2^quire_bits, as the hardware register
//! does (the carry guard makes that impossible for at least 2^(carry bits) products). NaR is
//! a flag: a NaR operand sets it and only `clear` resets it; a quire whose bits wrap to the
//! NaR pattern 1000…0 also reads out as NaR.

use num_bigint::BigInt;

use super::{Tapered, HIDDEN};

/// A quire for one tapered format: its width and fraction bits are the format's
/// ([`Tapered::quire_bits`], [`Tapered::quire_frac_bits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quire<T> {
    fmt: T,
    /// Little-endian 64-bit limbs, taken modulo 2^quire_bits: bits above it are don't-care
    /// until `normalized` sign-extends them.
    pub(crate) limbs: Vec<u64>,
    nar: bool,
    /// Cached `fmt.quire_bits()` and `fmt.quire_frac_bits()`.
    bits: u32,
    pub(crate) frac_bits: i32,
}

impl<T: Tapered> Quire<T> {
    pub fn new(fmt: T) -> Quire<T> {
        let bits = fmt.quire_bits();
        Quire {
            fmt,
            limbs: vec![0; bits.div_ceil(64) as usize],
            nar: false,
            bits,
            frac_bits: fmt.quire_frac_bits() as i32,
        }
    }

    pub fn format(&self) -> T {
        self.fmt
    }

    pub fn clear(&mut self) {
        self.limbs.iter_mut().for_each(|l| *l = 0);
        self.nar = false;
    }

    /// The limbs with the top one sign-extended from bit quire_bits-1.
    fn normalized(&self) -> Vec<u64> {
        let mut l = self.limbs.clone();
        let top = self.bits - 1;
        let sh = 63 - top % 64;
        let t = &mut l[(top / 64) as usize];
        *t = (((*t << sh) as i64) >> sh) as u64;
        l
    }

    /// NaR: the flag, or the bits equal to the NaR pattern (sign bit alone).
    pub fn is_nar(&self) -> bool {
        if self.nar {
            return true;
        }
        let l = self.normalized();
        let top = self.bits - 1;
        let (ti, tb) = ((top / 64) as usize, top % 64);
        l[..ti].iter().all(|&x| x == 0) && l[ti] == (!0u64 << tb)
    }

    pub fn set_nar(&mut self) {
        self.nar = true;
    }

    pub fn is_zero(&self) -> bool {
        !self.nar && self.normalized().iter().all(|&l| l == 0)
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
        if self.limbs.len() <= 2 {
            let q = self.limbs[0] as u128 | (*self.limbs.get(1).unwrap_or(&0) as u128) << 64;
            self.set_small(accumulate_small(q, negative, m, pos as i32));
            return;
        }
        let (i, off) = ((pos / 64) as usize, pos % 64);
        let n = self.limbs.len();
        if i >= n {
            return; // entirely above the quire: wraps away
        }
        let lo = m << off;
        let hi = if off == 0 { 0 } else { m >> (64 - off) };
        let mut carry = false;
        for (j, part) in [(i, lo), (i + 1, hi)] {
            if j >= n {
                return;
            }
            let l = &mut self.limbs[j];
            let (s1, c1) = if negative {
                l.overflowing_sub(part)
            } else {
                l.overflowing_add(part)
            };
            let (s2, c2) = if negative {
                s1.overflowing_sub(carry as u64)
            } else {
                s1.overflowing_add(carry as u64)
            };
            *l = s2;
            carry = c1 || c2;
        }
        let mut j = i + 2;
        while carry && j < n {
            let l = &mut self.limbs[j];
            let (s, c) = if negative {
                l.overflowing_sub(1)
            } else {
                l.overflowing_add(1)
            };
            *l = s;
            carry = c;
            j += 1;
        }
    }

    /// The limbs of a quire of up to 128 bits, from one u128.
    fn set_small(&mut self, q: u128) {
        self.limbs[0] = q as u64;
        if let Some(l) = self.limbs.get_mut(1) {
            *l = (q >> 64) as u64;
        }
    }

    /// q += a·b (exact). `subtract` gives q -= a·b.
    #[inline]
    pub fn fma(&mut self, a: u64, b: u64, subtract: bool) {
        let nar = self.fmt.nar_word();
        if a == nar || b == nar {
            self.nar = true;
            return;
        }
        if a == 0 || b == 0 {
            return;
        }
        let (neg, m, scale) = self.fmt.product(a, b);
        self.accumulate(neg ^ subtract, m, scale - 62 + self.frac_bits);
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
    pub fn add_word(&mut self, p: u64) {
        let f = self.fmt;
        if p == f.nar_word() {
            self.nar = true;
            return;
        }
        if p == 0 {
            return;
        }
        let (s, e, m) = f.unpack(p);
        self.accumulate(s, m, e - HIDDEN as i32 + self.frac_bits);
    }

    /// The quire's value as an exact integer count of 2^-quire_frac_bits; `None` for NaR.
    pub fn to_bigint(&self) -> Option<BigInt> {
        if self.is_nar() {
            return None;
        }
        let bytes: Vec<u8> = self
            .normalized()
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .collect();
        Some(BigInt::from_signed_bytes_le(&bytes))
    }

    /// Rounds the exact sum to a word, once.
    pub fn to_word(&self) -> u64 {
        let f = self.fmt;
        if self.is_nar() {
            return f.nar_word();
        }
        let mut mag = self.normalized();
        let neg = (mag[mag.len() - 1] as i64) < 0;
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

/// q ± m·2^pos for a quire of up to 128 bits held in one u128, wrapping as the register
/// does (pos counted in quire LSBs; m's bits below 0 are zero; a value below 2^128 never
/// needs pos >= 128).
#[inline(always)]
pub(crate) fn accumulate_small(q: u128, negative: bool, m: u64, pos: i32) -> u128 {
    let v = if pos < 0 {
        debug_assert!(m & ((1u64 << -pos) - 1) == 0, "inexact quire position");
        (m >> -pos) as u128
    } else {
        (m as u128) << (pos as u32).min(127)
    };
    if negative {
        q.wrapping_sub(v)
    } else {
        q.wrapping_add(v)
    }
}

/// The quire PE's accumulation (`Family::accumulator`, mode quire).
impl<T: Tapered + Send + 'static> crate::accumulator::Accumulator for Quire<T> {
    fn clear(&mut self) {
        Quire::clear(self)
    }
    fn add_product(&mut self, a: u64, b: u64) {
        self.fma(a, b, false)
    }
    fn word(&self) -> u64 {
        self.to_word()
    }
    fn word_with(&self, _: &mut crate::Rounder) -> Option<u64> {
        None
    }
}
