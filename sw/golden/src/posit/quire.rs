//! The quire: an exact fixed-point accumulator of posit products, rounded once when read.
//!
//! A quire of `quire_bits()` bits holds a two's-complement integer scaled by
//! 2^-`quire_frac_bits()`. Accumulation wraps modulo 2^quire_bits, as the hardware register
//! does (the carry guard makes that impossible for at least 2^(carry bits) products). NaR is
//! a flag: a NaR operand sets it and only `clear` resets it; a quire whose bits wrap to the
//! standard's NaR pattern 1000…0 also reads out as NaR.

use num_bigint::BigInt;

use super::{with_const_format, PositFormat, HIDDEN};

/// A quire for one posit format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quire {
    fmt: PositFormat,
    /// Little-endian 64-bit limbs, taken modulo 2^quire_bits: bits above it are don't-care
    /// until `normalized` sign-extends them.
    pub(super) limbs: Vec<u64>,
    nar: bool,
    /// Cached `fmt.quire_bits()` and `fmt.quire_frac_bits()`.
    bits: u32,
    pub(super) frac_bits: i32,
}

impl Quire {
    pub fn new(fmt: PositFormat) -> Quire {
        let bits = fmt.quire_bits();
        Quire {
            fmt,
            limbs: vec![0; bits.div_ceil(64) as usize],
            nar: false,
            bits,
            frac_bits: fmt.quire_frac_bits() as i32,
        }
    }

    pub fn format(&self) -> PositFormat {
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
        let nar = self.fmt.nar();
        if a == nar || b == nar {
            self.nar = true;
            return;
        }
        if a == 0 || b == 0 {
            return;
        }
        let (neg, m, scale) = product(self.fmt, a, b);
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
    pub fn add_posit(&mut self, p: u64) {
        let f = self.fmt;
        if p == f.nar() {
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

    /// Rounds the exact sum to a posit, once.
    pub fn to_posit(&self) -> u64 {
        let f = self.fmt;
        if self.is_nar() {
            return f.nar();
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

/// a·b of two nonzero, non-NaR posits of `f` as (sign, m, scale): m·2^(scale−62) exactly,
/// m < 2^64 (hidden bits at 31 each).
#[inline(always)]
pub(super) fn product(f: PositFormat, a: u64, b: u64) -> (bool, u64, i32) {
    with_const_format!(f, |f| {
        let (sa, ea, ma) = f.unpack(a);
        let (sb, eb, mb) = f.unpack(b);
        (sa ^ sb, (ma >> 31) * (mb >> 31), ea + eb)
    })
}

/// q ± m·2^pos for a quire of up to 128 bits held in one u128, wrapping as the register
/// does (pos counted in quire LSBs; m's bits below 0 are zero; a value below 2^128 never
/// needs pos >= 128).
#[inline(always)]
fn accumulate_small(q: u128, negative: bool, m: u64, pos: i32) -> u128 {
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

impl PositFormat {
    /// Fused dot product: Σ a_k·b_k accumulated exactly in a quire, rounded once.
    pub fn dot_quire(&self, a: &[u64], b: &[u64]) -> u64 {
        let bits = self.quire_bits();
        if bits > 128 {
            let mut q = Quire::new(*self);
            for (&x, &y) in a.iter().zip(b) {
                q.add_product(x, y);
            }
            return q.to_posit();
        }
        // Up to 128 bits: the same steps as `fma` on a local u128, one read-out at the end,
        // without a heap-allocated quire (a dot product per output element would otherwise
        // allocate three times, and threads contend in the allocator).
        let nar = self.nar();
        if let Some(t) = super::table::tables(*self).filter(|t| t.terms.is_some()) {
            // Up to 8 bits: words decoded by table.
            return match t.quire_dot(nar, a, b) {
                Some(acc) => self.small_quire_to_posit(bits, acc),
                None => nar,
            };
        }
        let frac_bits = self.quire_frac_bits() as i32;
        let mut acc = 0u128;
        for (&x, &y) in a.iter().zip(b) {
            if x == nar || y == nar {
                return nar;
            }
            if x != 0 && y != 0 {
                let (neg, m, scale) = product(*self, x, y);
                acc = accumulate_small(acc, neg, m, scale - 62 + frac_bits);
            }
        }
        self.small_quire_to_posit(bits, acc)
    }

    /// `Quire::to_posit` of a quire of `bits` ≤ 128 bits held in one u128 (its bits above
    /// `bits` are don't-care, as in the register): the same rounding, on a stack value.
    fn small_quire_to_posit(&self, bits: u32, acc: u128) -> u64 {
        let unused = 128 - bits;
        let v = ((acc << unused) as i128) >> unused;
        // NaR is the sign bit alone.
        if v == i128::MIN >> unused {
            return self.nar();
        }
        self.round_exact(v, -(self.quire_frac_bits() as i32))
    }

    /// The posit nearest to the exact v·2^scale: the quire's read-out of a value it holds.
    fn round_exact(&self, v: i128, scale: i32) -> u64 {
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
        self.encode(neg, top + scale, sig, sticky)
    }
}

/// The quire as the matrix-product kernel feeds it.
impl crate::kernel::ExactDot for PositFormat {
    /// Every posit the kernel takes (up to 32 bits, es ≤ 5) is an f64; NaR is the reference's.
    fn exact_f64(&self, w: u64) -> Option<f64> {
        (w != self.nar()).then(|| self.to_f64(w))
    }
    /// A quire of up to 128 bits: any number (the read-out wraps the sum as the register
    /// would have). A wider one: fewer than 2^carry products of maxpos², which cannot wrap.
    fn max_terms(&self) -> u64 {
        if self.quire_bits() <= 128 {
            u64::MAX
        } else {
            (1u64 << self.quire_carry_bits().min(63)) - 1
        }
    }
    /// The quire holding v·2^scale (modulo 2^quire_bits, as the register wraps) read out.
    fn read_exact(&self, v: i128, scale: i32) -> u64 {
        let bits = self.quire_bits();
        if bits > 128 {
            return self.round_exact(v, scale);
        }
        // In quire units of 2^-frac_bits (every product is a multiple of minpos²).
        let sh = scale + self.quire_frac_bits() as i32;
        let q = match sh {
            0.. if sh >= 128 => 0,
            0.. => v.wrapping_shl(sh as u32),
            _ => v >> -sh,
        };
        self.small_quire_to_posit(bits, q as u128)
    }
}

/// The posit-quire PE's accumulation (`Family::accumulator`, mode quire).
impl crate::accumulator::Accumulator for Quire {
    fn clear(&mut self) {
        Quire::clear(self)
    }
    fn add_product(&mut self, a: u64, b: u64) {
        self.fma(a, b, false)
    }
    fn word(&self) -> u64 {
        self.to_posit()
    }
    fn word_with(&self, _: &mut crate::Rounder) -> Option<u64> {
        None
    }
}
