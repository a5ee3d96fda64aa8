//! `lns:I:F`: sign plus a two's-complement log2 magnitude of 1+I+F bits with F fraction bits.
//!
//! A word is `[S][L]`. The most negative L is reserved: zero when S = 0, NaN when S = 1. Every
//! operation rounds the exact log2 of the exact result to nearest (see `docs/formats.md`):
//! multiply and divide add and subtract codes exactly; add and subtract use the G tables, and
//! since `La` is on the grid, `La + round(G(d))` is `round(La + G(d))`. Results whose rounded
//! log exceeds the largest code saturate to it; results whose rounded log falls below the
//! smallest valid code flush to zero.

mod family;
mod gtable;
mod lanes;
pub use family::FAMILY;
mod sqrt;
mod transcendental;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

pub use gtable::{GFunction, GTables};

use crate::format::{err, FormatError};
use crate::hiprec;
use crate::sum::{kahan_formula, Kahan};

/// Parameters of `lns:I:F`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LnsFormat {
    pub int_bits: u32,
    pub frac_bits: u32,
}

impl fmt::Display for LnsFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lns:{}:{}", self.int_bits, self.frac_bits)
    }
}

/// Supported ranges: the value range 2^±2^I must fit an f64 for reporting, and the tables of
/// F = 16 already hold ~1.2 million entries each.
pub const MAX_INT_BITS: u32 = 9;
pub const MAX_FRAC_BITS: u32 = 16;

impl LnsFormat {
    pub fn new(int_bits: u32, frac_bits: u32) -> Result<Self, FormatError> {
        if !(1..=MAX_INT_BITS).contains(&int_bits) {
            return err(format!(
                "format 'lns:{int_bits}:{frac_bits}': integer bits must be 1..={MAX_INT_BITS} (e.g. lns:5:6)"
            ));
        }
        if !(1..=MAX_FRAC_BITS).contains(&frac_bits) {
            return err(format!(
                "format 'lns:{int_bits}:{frac_bits}': fraction bits must be 1..={MAX_FRAC_BITS} (e.g. lns:5:6)"
            ));
        }
        Ok(LnsFormat {
            int_bits,
            frac_bits,
        })
    }

    /// Bits of a word: sign + log.
    pub fn width(&self) -> u32 {
        2 + self.int_bits + self.frac_bits
    }

    /// Bits of the log field L.
    pub fn log_width(&self) -> u32 {
        1 + self.int_bits + self.frac_bits
    }

    /// The reserved (most negative) code.
    pub fn code_reserved(&self) -> i32 {
        -(1 << (self.int_bits + self.frac_bits))
    }

    /// The smallest code of a nonzero value.
    pub fn code_min(&self) -> i32 {
        self.code_reserved() + 1
    }

    /// The largest code.
    pub fn code_max(&self) -> i32 {
        (1 << (self.int_bits + self.frac_bits)) - 1
    }

    pub fn pack(&self, neg: bool, code: i32) -> u64 {
        let lw = self.log_width();
        ((neg as u64) << lw) | (code as u32 as u64 & ((1u64 << lw) - 1))
    }

    /// (sign, code) of a word; the code is sign-extended.
    #[inline(always)]
    pub fn unpack(&self, bits: u64) -> (bool, i32) {
        let lw = self.log_width();
        let neg = (bits >> lw) & 1 == 1;
        let code = ((bits << (64 - lw)) as i64 >> (64 - lw)) as i32;
        (neg, code)
    }

    pub fn zero(&self) -> u64 {
        self.pack(false, self.code_reserved())
    }

    pub fn nan(&self) -> u64 {
        self.pack(true, self.code_reserved())
    }

    pub fn one(&self) -> u64 {
        self.pack(false, 0)
    }

    pub fn is_nan(&self, bits: u64) -> bool {
        bits == self.nan()
    }

    pub fn is_zero(&self, bits: u64) -> bool {
        bits == self.zero()
    }

    /// Is `bits` a word of this format (no bits above the width)?
    pub fn is_word(&self, bits: u64) -> bool {
        bits >> self.width() == 0
    }

    /// The arithmetic context (format plus its G tables).
    pub fn ctx(&self) -> Lns {
        let t = GTables::get(self.int_bits, self.frac_bits);
        Lns {
            fmt: *self,
            g: &t.merged,
            stride: t.stride,
            lw: self.log_width(),
            reserved: self.code_reserved(),
            max: self.code_max(),
        }
    }

    /// Packs a rounded code (as a big integer) with saturation and flushing.
    fn pack_rounded(&self, neg: bool, code: &BigInt) -> u64 {
        if *code > BigInt::from(self.code_max()) {
            self.pack(neg, self.code_max())
        } else if *code < BigInt::from(self.code_min()) {
            self.zero()
        } else {
            self.pack(neg, i32::try_from(code).unwrap())
        }
    }

    /// The word nearest (in the log domain) to num/den.
    pub fn from_ratio(&self, neg: bool, num: &BigUint, den: &BigUint) -> u64 {
        if num == &BigUint::from(0u32) {
            return self.zero();
        }
        let f = self.frac_bits;
        // Cheap range check first: |log2| beyond 2^I + 2 saturates or flushes whatever the digits.
        let approx_log2 = num.bits() as i64 - den.bits() as i64;
        let lim = (1i64 << self.int_bits) + 2;
        if approx_log2 > lim {
            return self.pack(neg, self.code_max());
        }
        if approx_log2 < -lim {
            return self.zero();
        }
        // Fast path: libm on the f64 images of num and den (each within an ulp), accepted away
        // from a rounding boundary like every libm answer here.
        if let (Some(n), Some(d)) = (num.to_f64(), den.to_f64()) {
            if n.is_finite() && d.is_finite() && n > 0.0 && d > 0.0 {
                let t = (n.log2() - d.log2()) * (1u64 << f) as f64;
                if let Some(code) = self.round_fast(t) {
                    return self.pack_rounded(neg, &BigInt::from(code));
                }
            }
        }
        let code = hiprec::round_enclosure(f, |w| hiprec::log2_ratio(num, den, w));
        self.pack_rounded(neg, &code)
    }

    /// The nearest integer to a libm-computed code `t`, if `t` is safely away (2^-20 code
    /// units, where libm errors are below 2^-24) from a rounding boundary.
    fn round_fast(&self, t: f64) -> Option<i64> {
        let safe = t.is_finite() && (t - t.floor() - 0.5).abs() > 1.0 / (1u64 << 20) as f64;
        safe.then(|| t.round().clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64)
    }

    /// The word nearest (in the log domain) to `x`. ±∞ and NaN give NaN.
    pub fn from_f64(&self, x: f64) -> u64 {
        if x.is_nan() || x.is_infinite() {
            return self.nan();
        }
        if x == 0.0 {
            return self.zero();
        }
        let neg = x < 0.0;
        if let Some(code) = self.round_fast(x.abs().log2() * (1u64 << self.frac_bits) as f64) {
            return self.pack_rounded(neg, &BigInt::from(code));
        }
        let (num, den) = crate::exact::f64_ratio(x.abs());
        self.from_ratio(neg, &num, &den)
    }

    /// The value as the nearest f64 (libm exp2: for speed, not for display).
    pub fn to_f64(&self, bits: u64) -> f64 {
        let (neg, code) = self.unpack(bits);
        if code == self.code_reserved() {
            return if neg { f64::NAN } else { 0.0 };
        }
        let v = (code as f64 / (1u64 << self.frac_bits) as f64).exp2();
        if neg {
            -v
        } else {
            v
        }
    }

    /// The value as the correctly rounded f64 (deterministic; for display).
    pub fn to_f64_exact(&self, bits: u64) -> f64 {
        let (neg, code) = self.unpack(bits);
        if code == self.code_reserved() {
            return if neg { f64::NAN } else { 0.0 };
        }
        // 2^(code/2^F) = 2^n · 2^(r/2^F), n = floor: the second factor, correctly rounded once
        // per (F, r) and cached; scaling by 2^n is exact.
        let f = self.frac_bits;
        let n = code >> f;
        let r = (code - (n << f)) as u32;
        let v = exp2_frac_f64(f, r) * (2f64).powi(n);
        if neg {
            -v
        } else {
            v
        }
    }
}

/// 2^(r/2^F) for 0 <= r < 2^F, correctly rounded to f64, memoised.
fn exp2_frac_f64(frac_bits: u32, r: u32) -> f64 {
    static CACHE: OnceLock<Mutex<HashMap<(u32, u32), f64>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(&v) = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(frac_bits, r))
    {
        return v;
    }
    let mant = hiprec::round_enclosure(52, |w| hiprec::exp2(&BigInt::from(r), frac_bits, w));
    let m: u64 = (&mant).try_into().expect("53-bit mantissa");
    let v = m as f64 / (1u64 << 52) as f64;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((frac_bits, r), v);
    v
}

/// An LNS value split into sign and code (zero: `+reserved`, NaN: `-reserved`), the form in
/// which generic algorithms run LNS arithmetic without packing every intermediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub neg: bool,
    pub code: i32,
}

/// An LNS arithmetic context: the format, its G tables and the constants the hot paths use.
/// Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct Lns {
    pub fmt: LnsFormat,
    /// `GTables::merged`.
    g: &'static [i32],
    stride: usize,
    /// log_width(), code_reserved(), code_max().
    lw: u32,
    reserved: i32,
    max: i32,
}

impl Lns {
    #[inline(always)]
    fn unpack(&self, bits: u64) -> (bool, i32) {
        let neg = (bits >> self.lw) & 1 == 1;
        let sh = 64 - self.lw;
        (neg, ((bits << sh) as i64 >> sh) as i32)
    }

    #[inline(always)]
    fn pack(&self, neg: bool, code: i32) -> u64 {
        ((neg as u64) << self.lw) | (code as u32 as u64 & ((1u64 << self.lw) - 1))
    }

    /// Saturates above the largest code, flushes below the smallest.
    #[inline(always)]
    fn finish(&self, neg: bool, code: i32) -> u64 {
        self.join(self.finish_split(neg, code))
    }

    /// A word in the split form the hot loops work in.
    #[inline(always)]
    pub fn split(&self, w: u64) -> Split {
        let (neg, code) = self.unpack(w);
        Split { neg, code }
    }

    /// The word of a split value.
    #[inline(always)]
    pub fn join(&self, v: Split) -> u64 {
        self.pack(v.neg, v.code)
    }

    #[inline(always)]
    fn finish_split(&self, neg: bool, code: i32) -> Split {
        self.finish_flagged(neg, code).0
    }

    /// The rounded code `code` of a result, saturated above the largest code and flushed
    /// below the smallest, with the overflow flag: the code exceeded the largest, so the
    /// result saturated (the `overflow` output of the LNS units, docs/formats.md). A flush
    /// to zero is no overflow.
    #[inline(always)]
    fn finish_flagged(&self, neg: bool, code: i32) -> (Split, bool) {
        if code > self.max {
            let v = Split {
                neg,
                code: self.max,
            };
            (v, true)
        } else if code <= self.reserved {
            let v = Split {
                neg: false,
                code: self.reserved,
            };
            (v, false)
        } else {
            (Split { neg, code }, false)
        }
    }

    #[inline(always)]
    pub fn mul_split(&self, a: Split, b: Split) -> Split {
        self.mul_split_flagged(a, b).0
    }

    /// a·b in split form with the overflow flag (zero and NaN operands never overflow).
    #[inline(always)]
    pub fn mul_split_flagged(&self, a: Split, b: Split) -> (Split, bool) {
        let r = self.reserved;
        if a.code == r || b.code == r {
            let nan = (a.code == r && a.neg) || (b.code == r && b.neg);
            return (Split { neg: nan, code: r }, false);
        }
        self.finish_flagged(a.neg ^ b.neg, a.code + b.code)
    }

    /// a + b in split form: the one definition of LNS addition.
    #[inline(always)]
    pub fn add_split(&self, a: Split, b: Split) -> Split {
        self.add_split_flagged(a, b).0
    }

    /// a + b in split form with the overflow flag: the rounded log of the exact sum
    /// (La + G(d)) exceeded the largest code and saturated. Zero and NaN operands never
    /// overflow.
    #[inline(always)]
    pub fn add_split_flagged(&self, a: Split, b: Split) -> (Split, bool) {
        let r = self.reserved;
        if a.code == r || b.code == r {
            if (a.code == r && a.neg) || (b.code == r && b.neg) {
                return (Split { neg: true, code: r }, false); // NaN
            }
            return (if a.code == r { b } else { a }, false);
        }
        // The larger magnitude leads; its sign is the result's. One table lookup covers both
        // G functions, the zero beyond each table and x - x (the db[0] sentinel flushes).
        // Written with masks: on random data these choices would be unpredictable branches.
        let a_leads = a.code >= b.code;
        let big = a.code.max(b.code);
        let s = (a.neg & a_leads) | (b.neg & !a_leads);
        let d = (a.code - b.code).unsigned_abs() as usize;
        let half = self.stride & ((a.neg != b.neg) as usize).wrapping_neg();
        let g = self.g[half + d.min(self.stride - 1)];
        self.finish_flagged(s, big + g)
    }

    /// -a in split form (zero and NaN unchanged).
    #[inline(always)]
    pub fn neg_split(&self, a: Split) -> Split {
        Split {
            neg: a.neg ^ (a.code != self.reserved),
            code: a.code,
        }
    }

    /// (a·b, overflow): the product and whether its exact log exceeded the largest code
    /// and saturated (the `overflow` output of `lns-mul`).
    pub fn mul_flagged(&self, a: u64, b: u64) -> (u64, bool) {
        let (v, over) = self.mul_split_flagged(self.split(a), self.split(b));
        (self.join(v), over)
    }

    /// (a/b, overflow), as [`Lns::mul_flagged`] (`lns-mul` with `div`). A NaN operand or a
    /// division by zero gives NaN, and zero divided gives zero, without overflow.
    pub fn div_flagged(&self, a: u64, b: u64) -> (u64, bool) {
        let (sa, ca) = self.unpack(a);
        let (sb, cb) = self.unpack(b);
        let r = self.reserved;
        if (ca == r && sa) || cb == r {
            return (self.fmt.nan(), false); // NaN operand, or division by zero
        }
        if ca == r {
            return (self.fmt.zero(), false);
        }
        let (v, over) = self.finish_flagged(sa ^ sb, ca - cb);
        (self.join(v), over)
    }

    /// (a + b, overflow): the sum and whether it saturated (the `overflow` output of
    /// `lns-add`).
    pub fn add_flagged(&self, a: u64, b: u64) -> (u64, bool) {
        let (v, over) = self.add_split_flagged(self.split(a), self.split(b));
        (self.join(v), over)
    }

    /// (a − b, overflow), as [`Lns::add_flagged`].
    pub fn sub_flagged(&self, a: u64, b: u64) -> (u64, bool) {
        let b = self.neg_split(self.split(b));
        let (v, over) = self.add_split_flagged(self.split(a), b);
        (self.join(v), over)
    }

    /// One step of the `lns-kahan` PE: the product a·b, then the Kahan step of `k` with it
    /// ([`crate::sum::kahan_formula`]); true when the product or one of the step's four
    /// additions saturated (the unit's `overflow` output for this step).
    pub fn kahan_mac_flagged(&self, k: &mut Kahan, a: u64, b: u64) -> bool {
        let (x, over) = self.mul_flagged(a, b);
        let flag = std::cell::Cell::new(over);
        let op = |(v, o): (u64, bool)| {
            flag.set(flag.get() | o);
            v
        };
        let (s, c) = kahan_formula(
            k.sum,
            k.comp,
            x,
            |p, q| op(self.add_flagged(p, q)),
            |p, q| op(self.sub_flagged(p, q)),
        );
        (k.sum, k.comp) = (s, c);
        flag.get()
    }

    /// Keeps `n` of the F fraction bits of the log by clearing the others (seed 000 §4.5:
    /// the reduced-precision experiments cleared the low bits after every operation).
    pub fn clear_low_bits(&self, a: u64, n: u32) -> u64 {
        let f = &self.fmt;
        let (s, c) = f.unpack(a);
        if c == f.code_reserved() || n >= f.frac_bits {
            return a;
        }
        let c = c & !((1i32 << (f.frac_bits - n)) - 1);
        self.finish(s, c)
    }

    /// Σ a_k·b_k in k order, naive or Kahan ([`kahan_formula`]), with every operation's
    /// result cleared to `n` fraction bits ([`Lns::clear_low_bits`]): `--keep-bits`. The
    /// definition [`Lns::dots_keeping`] computes on the lockstep lanes.
    pub fn dot_keeping(&self, n: u32, kahan: bool, a: &[u64], b: &[u64]) -> u64 {
        use crate::family_trait::Family;
        let k = |v: u64| self.clear_low_bits(v, n);
        let (mut s, mut c) = (self.fmt.zero(), self.fmt.zero());
        for (&x, &y) in a.iter().zip(b) {
            let p = k(self.mul(x, y));
            (s, c) = if kahan {
                kahan_formula(s, c, p, |p, q| k(self.add(p, q)), |p, q| k(self.sub(p, q)))
            } else {
                (k(self.add(s, p)), c)
            };
        }
        s
    }
}

#[cfg(test)]
mod tests;
