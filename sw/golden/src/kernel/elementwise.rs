//! Elementwise kernels for floats of at most 16 bits (bf16, f16, fp8:e4m3, fp8:e5m2 and every
//! `float:E:M` of that width without `:ftz`): decode, encode (from f64, to nearest), quantize,
//! and a + b, a − b, a · b, a / b, over whole slices of words, at the speed of the machine's f64 unit.
//!
//! A definition-preserving fast path (issue 45): every word is the golden per-element
//! operation's ([`FloatFormat::to_f64`], [`FloatFormat::from_f64`], [`FloatFormat::add`],
//! [`FloatFormat::sub`], [`FloatFormat::mul`]), which stay the reference; the tests of this
//! module hold the kernels to them (every word, every pair of 8-bit words, every word's
//! neighbours and midpoints, random and special values).
//!
//! - **Decode** looks each word up in a table of the 2^W f64 values, built once per format
//!   from the golden decoder (`to_f64`, NaN words as `f64::NAN`); the AVX2 loops read bf16
//!   words, the top halves of binary32 words, as binary32 instead (checked against the table
//!   on every word).
//! - **Encode** rounds an f64 to the nearest word with no branch: above the smallest normal
//!   the f64's bits are rebiased and rounded to nearest even on the integer (a carry is the
//!   next binade, past the largest finite magnitude the format's overflow word); below it the
//!   machine's own f64 addition rounds |x| + 2^(emin − M + 52) once at the subnormal grid's
//!   last place 2^(emin − M); NaN, ±∞ and overflow are selected last.
//! - **a ∘ b** (∘ = +, −, ·, ÷) decodes both words, computes in f64, and encodes the f64 once
//!   (plain bf16 on AVX2: the golden's own binary32 path, [`FloatFormat::narrow`], on eight
//!   f32 lanes).
//!   Why that is the correctly rounded result, for E ≤ 8 and at most 16 bits (so M ≤ 13;
//!   every format here):
//!   * a product of two words has at most 2(M + 1) ≤ 28 significant bits and an exponent
//!     within ±2·(2^(E−1) + M) ≤ ±282, so f64 holds it exactly (no overflow, no subnormal);
//!     rounding it once to the format is the golden product;
//!   * a sum (or difference) of two words is exact in f64 when the words' exponents are
//!     within 53 − (M + 2) of each other; otherwise f64 rounds it once, to 53 bits, and
//!     53 ≥ 2(M + 1) + 2 = 30 makes the second rounding (to M + 1 bits) innocuous: rounding to
//!     nearest twice, first to 2p + 2 or more bits, equals rounding once (Figueroa, "When is
//!     double rounding innocuous?", SIGNUM 1995) — and f64's range holds every sum of two
//!     words as a normal number or zero, so neither rounding meets a range limit first (the
//!     format's overflow and subnormal rules are applied once, by the encoder, to a value
//!     that lies on the same side of every rounding boundary as the exact sum);
//!   * a quotient q = a / b of two words (nonzero b) lies between 2^−282 and 2^282, so f64
//!     rounds it once, to 53 bits, as a normal number. A midpoint μ between two neighbouring
//!     values of the format (normal or subnormal) has at most M + 1 bits, and if q ≠ μ then
//!     |q − μ| = |a − μ·b| / |b| ≥ 2^(e_μ − 2M − 3) (a − μ·b is a nonzero multiple of
//!     ulp(μ)·ulp(b)/2), more than f64's rounding error at q, 2^(e_q − 53), since 2M + 3 < 53:
//!     f64's quotient lies on the same side of every midpoint as q, or is μ exactly when q
//!     is, and the encoder's one rounding gives the golden quotient;
//!   * the special cases are IEEE's in both: a NaN operand, ∞ − ∞ and 0 · ∞ give f64 NaN,
//!     which encodes to the format's NaN; ±∞ encodes to the format's infinite result; an
//!     exact zero sum is +0 unless both terms are −0 (f64's rule in round-to-nearest, and the
//!     golden `round_sum`'s); a zero product has the XOR of the signs in both.
//!
//! The loops run on AVX2 where the machine has them (found at run time: four f64 lanes, the
//! encoder's selects as blends, the table read by gathers) and in portable code otherwise;
//! the tests run whichever the machine has, and the portable encoder is checked on its own.

use crate::arith::pow2;
use crate::arith::Bits;
use crate::family_trait::Family;
use crate::float::FloatFormat;
use crate::table::cached;

/// A word of at most 16 bits as stored in memory (`u8` for formats of at most 8 bits, `u16`
/// up to 16).
pub trait Word: Copy + Default + Send + Sync + 'static {
    /// The word's bits.
    fn bits(self) -> usize;
    /// The word of `bits` (which fit).
    fn of(bits: u64) -> Self;
}

impl Word for u8 {
    #[inline(always)]
    fn bits(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn of(bits: u64) -> Self {
        bits as u8
    }
}

impl Word for u16 {
    #[inline(always)]
    fn bits(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn of(bits: u64) -> Self {
        bits as u16
    }
}

/// An elementwise operation on two words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// The elementwise kernels of one float format ([`FloatKernel::of`]).
pub struct FloatKernel {
    f: FloatFormat,
    /// The value of every word (NaN words: `f64::NAN`).
    values: Box<[f64]>,
    /// 2^W − 1: a word's bits beyond the format's width are ignored (callers check them).
    index_mask: usize,
    /// bf16 (E = 8, M = 7, with ∞ and NaN codes): each word is the top half of the binary32
    /// word of its value (the AVX2 loops decode it so, without the table).
    binary32_top: bool,
    /// Plain bf16, whose golden sums and products are binary32's rounded once more.
    narrow_bf16: bool,
    enc: Encoder,
}

/// The constants of the branch-free encoder.
#[derive(Clone, Copy, Debug)]
struct Encoder {
    /// The f64 bits of 2^emin, the smallest normal: below it the subnormal grid.
    min_normal: u64,
    /// (1023 − bias) << 52: an f64's bits minus this are the format's exponent field and
    /// fraction, before rounding.
    rebias: u64,
    /// 52 − M: the f64 fraction bits rounded off.
    k: u32,
    /// 2^(k−1) − 1: adding it and the kept part's last bit rounds to nearest even.
    half: u64,
    /// 2^(emin − M + 52) and its bits: |x| + magic has its last place at 2^(emin − M).
    magic: f64,
    magic_bits: u64,
    /// The largest finite magnitude (the word without its sign).
    max_mag: u64,
    /// The sign bit's position (W − 1).
    sign_shift: u32,
    /// The words of NaN, ±∞ (by sign) and of an overflow (by sign).
    nan: u64,
    inf: [u64; 2],
    over: [u64; 2],
}

impl Encoder {
    fn new(f: FloatFormat) -> Encoder {
        let m = f.frac_bits;
        let k = 52 - m;
        Encoder {
            min_normal: pow2(f.emin()).to_bits(),
            rebias: ((1023 - f.bias()) as u64) << 52,
            k,
            half: (1 << (k - 1)) - 1,
            magic: pow2(f.emin() - i64::from(m) + 52),
            magic_bits: pow2(f.emin() - i64::from(m) + 52).to_bits(),
            max_mag: f.max_finite(false),
            sign_shift: f.width() - 1,
            nan: f.nan(),
            inf: [f.infinite(false), f.infinite(true)],
            over: [f.overflow(false), f.overflow(true)],
        }
    }

    /// The word nearest to `x`: [`FloatFormat::from_f64`] without a branch.
    #[inline(always)]
    fn encode(&self, x: f64) -> u64 {
        let u = x.to_bits();
        let neg = (u >> 63) as usize;
        let abs = u & !(1 << 63);
        // Below 2^emin: the FPU rounds |x| once at the subnormal grid's last place; q ≤ 2^M
        // (2^M: rounded up to the smallest normal, whose word it is).
        let sub = (f64::from_bits(abs) + self.magic)
            .to_bits()
            .wrapping_sub(self.magic_bits);
        // From 2^emin: the exponent field and fraction, rounded to nearest even at 2^k.
        let v = abs.wrapping_sub(self.rebias);
        let normal = v.wrapping_add(self.half + ((v >> self.k) & 1)) >> self.k;
        let mag = if abs < self.min_normal { sub } else { normal };
        let word = if mag > self.max_mag {
            self.over[neg]
        } else {
            (neg as u64) << self.sign_shift | mag
        };
        let special = if abs > 0x7ff0_0000_0000_0000 {
            self.nan
        } else {
            self.inf[neg]
        };
        if abs >= 0x7ff0_0000_0000_0000 {
            special
        } else {
            word
        }
    }
}

impl FloatKernel {
    /// The kernels of `f`, built once per format and process; `None` for a format they do not
    /// serve (wider than 16 bits, `:ftz`, or E > 8).
    pub fn of(f: FloatFormat) -> Option<&'static FloatKernel> {
        let serves = f.width() <= 16 && !f.ftz && f.exp_bits <= 8;
        serves.then(|| cached(crate::Format::Float(f), || FloatKernel::new(f)))
    }

    fn new(f: FloatFormat) -> FloatKernel {
        let values = (0..1u64 << f.width())
            .map(|w| if f.is_nan(w) { f64::NAN } else { f.to_f64(w) })
            .collect();
        FloatKernel {
            f,
            values,
            index_mask: (1 << f.width()) - 1,
            binary32_top: (f.exp_bits, f.frac_bits, f.finite, f.no_nan) == (8, 7, false, false),
            narrow_bf16: (f.exp_bits, f.frac_bits) == (8, 7) && f.narrow().is_some(),
            enc: Encoder::new(f),
        }
    }

    /// The format.
    pub fn format(&self) -> FloatFormat {
        self.f
    }

    /// The value of word `w` (NaN for NaN words).
    #[inline(always)]
    pub fn value<W: Word>(&self, w: W) -> f64 {
        self.values[w.bits() & self.index_mask]
    }

    /// `FloatFormat::max` (`larger`) or `min` of each pair of words, their values read from
    /// the table: the format's NaN if either is NaN, else the larger (smaller) operand, the
    /// first when they are equal (±0). The kernel serves no `:ftz` format, so no result is
    /// flushed.
    pub fn max_min_words(&self, larger: bool, a: &[Bits], b: &[Bits], out: &mut [Bits]) {
        assert!(
            a.len() == out.len() && b.len() == out.len(),
            "operands of one length"
        );
        let nan = self.f.nan();
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            if (x | y) > self.index_mask as Bits {
                // Not words of the format: the operation itself says what they give.
                *o = if larger {
                    self.f.max(x, y)
                } else {
                    self.f.min(x, y)
                };
                continue;
            }
            let (vx, vy) = (self.values[x as usize], self.values[y as usize]);
            let second = if larger { vy > vx } else { vy < vx };
            *o = match (vx.is_nan() || vy.is_nan(), second) {
                (true, _) => nan,
                (false, true) => y,
                (false, false) => x,
            };
        }
    }

    /// The word nearest to `x` ([`FloatFormat::from_f64`]).
    #[inline(always)]
    pub fn word(&self, x: f64) -> Bits {
        self.enc.encode(x)
    }

    /// `out[i]` = the value of `words[i]` (NaN for NaN words).
    pub fn decode<W: Word>(&self, words: &[W], out: &mut [f64]) {
        assert_eq!(words.len(), out.len(), "as many values as words");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.decode_avx2(words, out) };
        }
        self.decode_lanes(words, out)
    }

    /// `out[i]` = the word nearest to `xs[i]`.
    pub fn encode<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        assert_eq!(xs.len(), out.len(), "as many words as values");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.encode_avx2(xs, out) };
        }
        self.encode_lanes(xs, out)
    }

    /// `out[i]` = `xs[i]` rounded into the format, as an f64 (the value of its word).
    pub fn quantize(&self, xs: &[f64], out: &mut [f64]) {
        assert_eq!(xs.len(), out.len(), "as many results as values");
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.quantize_avx2(xs, out) };
        }
        self.quantize_lanes(xs, out)
    }

    /// `out[i]` = `a[i]` ∘ `b[i]` rounded once.
    pub fn binop<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        assert!(
            a.len() == out.len() && b.len() == out.len(),
            "operands of one length"
        );
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.binop_avx2(op, a, b, out) };
        }
        self.binop_lanes(op, a, b, out)
    }

    /// [`Self::binop`] on words held in [`Bits`] (as the training machines hold them), which
    /// must lie within the format's width: in blocks through `u8` or `u16` words.
    pub fn binop_words(&self, op: ElemOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) {
        if self.f.width() <= 8 {
            self.binop_via::<u8>(op, a, b, out)
        } else {
            self.binop_via::<u16>(op, a, b, out)
        }
    }

    fn binop_via<W: Word>(&self, op: ElemOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) {
        assert!(
            a.len() == out.len() && b.len() == out.len(),
            "operands of one length"
        );
        const BLOCK: usize = 1024;
        let narrow = |from: &[Bits], to: &mut [W]| {
            for (t, &w) in to.iter_mut().zip(from) {
                debug_assert!(
                    w <= self.index_mask as Bits,
                    "{w:#x} is a word of the format"
                );
                *t = W::of(w);
            }
        };
        let (mut wa, mut wb, mut wo) = (
            [W::default(); BLOCK],
            [W::default(); BLOCK],
            [W::default(); BLOCK],
        );
        for ((a, b), o) in a
            .chunks(BLOCK)
            .zip(b.chunks(BLOCK))
            .zip(out.chunks_mut(BLOCK))
        {
            let n = o.len();
            narrow(a, &mut wa[..n]);
            narrow(b, &mut wb[..n]);
            self.binop(op, &wa[..n], &wb[..n], &mut wo[..n]);
            for (o, w) in o.iter_mut().zip(&wo[..n]) {
                *o = w.bits() as Bits;
            }
        }
    }

    #[inline(always)]
    fn decode_lanes<W: Word>(&self, words: &[W], out: &mut [f64]) {
        for (o, &w) in out.iter_mut().zip(words) {
            *o = self.value(w);
        }
    }

    #[inline(always)]
    fn encode_lanes<W: Word>(&self, xs: &[f64], out: &mut [W]) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = W::of(self.enc.encode(x));
        }
    }

    #[inline(always)]
    fn quantize_lanes(&self, xs: &[f64], out: &mut [f64]) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = self.values[self.enc.encode(x) as usize];
        }
    }

    #[inline(always)]
    fn binop_lanes<W: Word>(&self, op: ElemOp, a: &[W], b: &[W], out: &mut [W]) {
        match op {
            ElemOp::Add => self.zip_lanes(a, b, out, |x, y| x + y),
            ElemOp::Sub => self.zip_lanes(a, b, out, |x, y| x - y),
            ElemOp::Mul => self.zip_lanes(a, b, out, |x, y| x * y),
            ElemOp::Div => self.zip_lanes(a, b, out, |x, y| x / y),
        }
    }

    #[inline(always)]
    fn zip_lanes<W: Word>(&self, a: &[W], b: &[W], out: &mut [W], op: impl Fn(f64, f64) -> f64) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = W::of(self.enc.encode(op(self.value(x), self.value(y))));
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(test)]
mod tests;
