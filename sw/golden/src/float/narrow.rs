//! The binary32 path of narrow formats: sums and products computed by the machine's f32
//! arithmetic and rounded once more, to the format, for the formats where that second
//! rounding gives the correctly rounded result (bf16, f16 and their like; the slow path,
//! [`FloatFormat::add_d`] and [`FloatFormat::mul_d`], stays the definition, and this
//! module's tests check the two agree).
//!
//! Why it is exact, for a format with M fraction bits and no suffix (`:fn`, `:sat`, `:ftz`
//! and `:nonan` keep the slow path), E ≤ 7 and M ≤ 10, or E = 8 and M ≤ 7:
//! - every word is an f32 (its exponent range lies inside binary32's, subnormals included);
//! - a product of two words has at most 2(M + 1) ≤ 22 significant bits and, for E ≤ 7, its
//!   last bit weighs at least 2^(2·(emin − M)) ≥ 2^−144, so f32 holds it exactly (or
//!   overflows where the format overflows too). For E = 8 a product below 2^emin may lose
//!   bits in f32's subnormals, but only one whose top bit lies below 2^(emin − M − 1), half
//!   the smallest subnormal (with M ≤ 7 its ≤ 16 bits reach 2^−149 otherwise): f32 rounds it
//!   to at most that half, which the format rounds to zero as it does the exact product;
//! - a sum is rounded by f32 to 24 ≥ 2(M + 1) + 2 bits, where rounding twice to nearest
//!   equals rounding once (Figueroa, "When is double rounding innocuous?", SIGNUM 1995);
//!   below 2^−126 the sum of two words is exact in f32 (both are multiples of 2^(emin − M)).
//! - overflow: f32's infinity from finite words lies past the format's largest finite
//!   value plus half a unit, so the format overflows (to ±∞: no `:sat`) either way.
//!
//! Training in bf16 and f16 runs about 5 times as fast on it (docs/perf.md, "bf16 and f16 on
//! the binary32 path").

use super::FloatFormat;
use crate::arith::{Arith, Bits};

mod lanes;

/// A format on the binary32 path (from [`FloatFormat::narrow`]); its working values are the
/// f32s of its words.
#[derive(Clone, Copy, Debug)]
pub struct Narrow {
    f: FloatFormat,
    /// f32's exponent bias minus the format's.
    rebias: u32,
}

impl FloatFormat {
    /// The binary32 path of this format, if its sums and products are f32's rounded once more
    /// (the module documentation says which formats and why).
    #[inline(always)]
    pub fn narrow(&self) -> Option<Narrow> {
        let plain = !(self.finite || self.sat || self.ftz || self.no_nan);
        let (e, m) = (self.exp_bits, self.frac_bits);
        let fits = (e <= 7 && m <= 10) || (e == 8 && m <= 7);
        (plain && fits).then(|| Narrow::new(*self))
    }
}

/// 2^k as an f32, for −149 ≤ k ≤ 127.
fn f32_pow2(k: i64) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1 << (k + 149))
    }
}

impl Narrow {
    /// The path's constants for `f` (whether the path is exact for `f` is
    /// [`FloatFormat::narrow`]'s to say).
    #[inline(always)]
    fn new(f: FloatFormat) -> Narrow {
        Narrow {
            f,
            rebias: (127 - f.bias()) as u32,
        }
    }

    /// Whether the format has binary32's exponent range (8 exponent bits, bias 127: bf16).
    /// Its subnormals are then binary32's on the same bit grid, and rounding binary32's bits
    /// to its last place carries past its largest finite value onto ∞: rounding the bits is
    /// the whole rounding.
    #[inline(always)]
    fn f32_range(&self) -> bool {
        self.rebias == 0
    }

    /// 2^(emin − M), the weight of a subnormal's last bit.
    fn sub_lsb(&self) -> f32 {
        f32_pow2(self.f.emin() - i64::from(self.f.frac_bits))
    }

    /// The f32 bits of the largest finite value.
    #[inline(always)]
    fn max_finite(&self) -> u32 {
        let max_field = (self.f.exp_ones() - 1) as u32 + self.rebias;
        max_field << 23 | (self.f.frac_mask() as u32) << (23 - self.f.frac_bits)
    }

    /// `x` (an f32) rounded to the nearest value of the format, ties to the even one, as an
    /// f32 (±∞ past the largest finite value; NaN stays NaN).
    #[inline]
    pub fn round_f32(&self, x: f32) -> f32 {
        let u = x.to_bits();
        let (sign, abs) = (u & 0x8000_0000, u & 0x7fff_ffff);
        if abs < (self.rebias + 1) << 23 {
            // Below 2^emin, the subnormal grid: x + 1.5 · 2^(emin − M + 23) has its last
            // place at 2^(emin − M), so the FPU rounds x there.
            let magic = 1.5 * f32_pow2(self.f.emin() - i64::from(self.f.frac_bits) + 23);
            let y = (x + magic) - magic;
            return f32::from_bits(y.to_bits() | sign);
        }
        if abs >= 0x7f80_0000 {
            return x;
        }
        let k = 23 - self.f.frac_bits;
        let r = (abs + (1 << (k - 1)) - 1 + ((abs >> k) & 1)) & !((1 << k) - 1);
        f32::from_bits(
            sign | if r > self.max_finite() {
                0x7f80_0000
            } else {
                r
            },
        )
    }

    /// The exact value of a word (NaN words give an f32 NaN).
    #[inline(always)]
    pub fn to_f32(&self, w: Bits) -> f32 {
        let m = self.f.frac_bits;
        let e = self.f.exp_bits;
        let sign = ((w >> (e + m)) as u32 & 1) << 31;
        let field = (w >> m) as u32 & ((1 << e) - 1);
        let frac = w as u32 & ((1 << m) - 1);
        // All three cases computed, then one picked: a branch on the field would be
        // mispredicted at every zero among the nonzeros (a ReLU's outputs), and these words
        // are decoded by the million.
        let special = if frac == 0 { 0x7f80_0000 } else { 0x7fc0_0000 };
        // A format with binary32's exponent range has binary32's subnormals, whose bits are
        // its own shifted; the product by the last bit's weight would then take a subnormal
        // operand, which the FPU runs slowly (at every zero).
        let subnormal = if self.f32_range() {
            frac << (23 - m)
        } else {
            (frac as f32 * self.sub_lsb()).to_bits()
        };
        let normal = (field + self.rebias) << 23 | frac << (23 - m);
        let mag = match field {
            0 => subnormal,
            f if f == (1 << e) - 1 => special,
            _ => normal,
        };
        f32::from_bits(sign | mag)
    }

    /// The word nearest to `x`, ties to the even word (NaN → the canonical NaN, ±∞ and what
    /// rounds past the largest finite value → ±∞).
    #[inline(always)]
    pub fn from_f32(&self, x: f32) -> Bits {
        let f = &self.f;
        let m = f.frac_bits;
        let u = x.to_bits();
        let abs = u & 0x7fff_ffff;
        let sign = Bits::from(u >> 31) << (f.exp_bits + m);
        let inf = f.exp_ones() << m;
        if abs > 0x7f80_0000 {
            return f.nan();
        }
        if abs == 0x7f80_0000 {
            return sign | inf;
        }
        let field = abs >> 23;
        if field > self.rebias {
            // A normal of the format before rounding: rebias, round off 23 − M bits (a carry
            // into the exponent is the next binade, or ∞ past the largest).
            let v = abs - (self.rebias << 23);
            let k = 23 - m;
            let r = (v + (1 << (k - 1)) - 1 + ((v >> k) & 1)) >> k;
            return sign | Bits::from(r).min(inf);
        }
        // Below 2^emin: a subnormal of the format (or zero, or the smallest normal).
        let (sig, exp) = if field == 0 {
            (abs, -149)
        } else {
            (abs & 0x7f_ffff | 1 << 23, field as i64 - 150)
        };
        let s = f.emin() - i64::from(m) - exp;
        if s > 25 {
            // Below half the smallest subnormal (sig < 2^24).
            return sign;
        }
        if s <= 0 {
            // Not reached on the path (an f32 below 2^emin has its last bit below the
            // format's), kept so that no shift is negative.
            return sign | Bits::from(sig << -s);
        }
        let (q, rem, half) = (sig >> s, sig & ((1 << s) - 1), 1 << (s - 1));
        let up = rem > half || (rem == half && q & 1 == 1);
        sign | Bits::from(q + u32::from(up))
    }

    /// a + b rounded to nearest.
    #[inline(always)]
    pub fn add(&self, a: Bits, b: Bits) -> Bits {
        self.from_f32(self.to_f32(a) + self.to_f32(b))
    }

    /// a · b rounded to nearest.
    #[inline(always)]
    pub fn mul(&self, a: Bits, b: Bits) -> Bits {
        self.from_f32(self.to_f32(a) * self.to_f32(b))
    }
}

/// Sums and dot products on the path (`sum::naive_dot` and the rest) keep each partial
/// result as the f32 of its word.
impl Arith for Narrow {
    type Val = f32;
    #[inline(always)]
    fn load(&self, w: Bits) -> f32 {
        self.to_f32(w)
    }
    #[inline(always)]
    fn store(&self, v: f32) -> Bits {
        self.from_f32(v)
    }
    #[inline(always)]
    fn zero(&self) -> f32 {
        0.0
    }
    #[inline(always)]
    fn add(&self, a: f32, b: f32) -> f32 {
        self.round_f32(a + b)
    }
    #[inline(always)]
    fn sub(&self, a: f32, b: f32) -> f32 {
        self.round_f32(a - b)
    }
    #[inline(always)]
    fn mul(&self, a: f32, b: f32) -> f32 {
        self.round_f32(a * b)
    }
}

#[cfg(test)]
mod tests {
    use crate::family_trait::Family;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;
    use crate::rounding::Draw;

    /// Formats on the path: bf16, f16, and the edges of the rule (E = 8 with M = 7, E = 7
    /// with M = 10, E = 2), as `float:E:M`.
    pub(super) const ON_PATH: &[(u32, u32)] =
        &[(8, 7), (5, 10), (7, 10), (6, 9), (8, 5), (4, 6), (2, 10)];

    pub(super) fn plain(e: u32, m: u32) -> FloatFormat {
        FloatFormat::new(e, m, false, false, false).unwrap()
    }

    /// A pair that stresses the rounding: random words, or the second word a few binades
    /// from the first (long carries and near ties), with specials and zeros among them.
    pub(super) fn pair(f: &FloatFormat, rng: &mut Pcg64) -> (Bits, Bits) {
        let w = f.width();
        let a = rng.gen::<u64>() & f.mask();
        let b = match rng.gen_range(0..4) {
            0 => rng.gen::<u64>() & f.mask(),
            1 => {
                // Same sign or not, an exponent within M + 3 of a's.
                let shift = u64::from(rng.gen_range(0..=(f.frac_bits + 3))) << f.frac_bits;
                let frac = rng.gen::<u64>() & f.frac_mask();
                let base = a & !f.frac_mask();
                (base.saturating_sub(shift) | frac) ^ (rng.gen::<u64>() & 1) << (w - 1)
            }
            2 => a ^ (rng.gen::<u64>() & 1) << (w - 1) ^ (rng.gen::<u64>() & 3),
            _ => [0, f.sign_bit(), 1, f.exp_ones() << f.frac_bits, f.nan()][rng.gen_range(0..5)],
        };
        (a, b & f.mask())
    }

    /// Two normal words whose product lies below the smallest normal (biased exponents
    /// summing to bias − M − 1 … bias, the product 2^(emin − k) · [1, 4) for k = 1 … M + 2).
    fn tiny_product(f: &FloatFormat, rng: &mut Pcg64) -> (Bits, Bits) {
        let k = rng.gen_range(1..=u64::from(f.frac_bits) + 2);
        let sum = (f.bias() as u64 + 1).saturating_sub(k);
        if sum < 2 {
            // Too few binades for two normals (E = 2, say): any pair.
            return pair(f, rng);
        }
        let ea = rng.gen_range(1..sum);
        let eb = sum - ea;
        let word = |e: u64, rng: &mut Pcg64| e << f.frac_bits | (rng.gen::<u64>() & f.frac_mask());
        (word(ea, rng), word(eb, rng))
    }

    /// The path's sum and product of two words are the slow path's.
    fn agrees(n: &Narrow, a: Bits, b: Bits) {
        let f = &n.f;
        assert_eq!(
            n.add(a, b),
            f.add_d(a, b, Draw::Nearest),
            "{f} {a:#x}+{b:#x}"
        );
        assert_eq!(
            n.mul(a, b),
            f.mul_d(a, b, Draw::Nearest),
            "{f} {a:#x}*{b:#x}"
        );
    }

    /// A working value is the f32 of word `w` (both NaN, or the same bits).
    fn same_value(n: &Narrow, x: f32, w: Bits) {
        let y = n.to_f32(w);
        assert!(
            x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
            "{x:e} vs {w:#x}"
        );
    }

    /// The path gives the slow path's word on random and stressed pairs (and products below
    /// the smallest normal), and every word
    /// goes to its f32 and back (NaNs to the canonical NaN).
    #[test]
    fn the_f32_path_is_the_slow_path() {
        let mut rng = Pcg64::seed_from_u64(0x32);
        for &(e, m) in ON_PATH {
            let f = plain(e, m);
            let n = f
                .narrow()
                .unwrap_or_else(|| panic!("float:{e}:{m} is on the path"));
            for w in 0..=f.mask() {
                let back = if f.is_nan(w) { f.nan() } else { w };
                assert_eq!(n.from_f32(n.to_f32(w)), back, "float:{e}:{m} word {w:#x}");
                let (x, y) = (f64::from(n.to_f32(w)), f.to_f64(w));
                assert!(
                    x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
                    "{w:#x}"
                );
            }
            for _ in 0..100_000 {
                let (a, b) = pair(&f, &mut rng);
                agrees(&n, a, b);
                // The working values of sums and dot products, rounded in f32.
                let (x, y) = (n.load(a), n.load(b));
                same_value(&n, Arith::add(&n, x, y), n.add(a, b));
                same_value(&n, Arith::sub(&n, x, y), Family::sub(&f, a, b));
                same_value(&n, Arith::mul(&n, x, y), n.mul(a, b));
                let (a, b) = tiny_product(&f, &mut rng);
                agrees(&n, a, b);
                same_value(&n, Arith::mul(&n, n.load(a), n.load(b)), n.mul(a, b));
            }
        }
    }

    /// bf16's word of every binary32 below 2^−126 (its subnormals and zeros, both signs) and
    /// of random finite ones is the `half` crate's.
    #[test]
    fn bf16_rounds_binary32_subnormals_as_half_does() {
        let n = plain(8, 7).narrow().unwrap();
        let mut rng = Pcg64::seed_from_u64(0x33);
        let tiny = (0..1u32 << 23).flat_map(|u| [u, u | 1 << 31]);
        let random = (0..1 << 20).map(|_| rng.gen::<u32>());
        for u in tiny
            .chain(random)
            .filter(|&u| f32::from_bits(u).is_finite())
        {
            let x = f32::from_bits(u);
            let want = half::bf16::from_f32(x).to_bits();
            assert_eq!(n.from_f32(x), Bits::from(want), "{u:#x}");
        }
    }

    /// Every pair of bf16 and of f16 words, sums and products: the path is the slow path
    /// (2 · 2 · 2^32 operations on two threads; 25 minutes at load 7, 2026-11-27, passed:
    /// `cargo test --release -p lpgen-golden --lib every_pair -- --ignored`).
    #[test]
    #[ignore]
    fn every_pair_of_bf16_and_f16() {
        for (e, m) in [(8, 7), (5, 10)] {
            let f = plain(e, m);
            let n = f.narrow().unwrap();
            let half = |lo: u64, hi: u64| {
                for a in lo..hi {
                    for b in 0..=f.mask() {
                        agrees(&n, a, b);
                    }
                }
            };
            let mid = 1 << (f.width() - 1);
            std::thread::scope(|s| {
                s.spawn(|| half(0, mid));
                half(mid, f.mask() + 1);
            });
        }
    }

    /// The rule is tight where it says: E = 8 with M = 8 loses products in f32's subnormals,
    /// and M = 11 (E = 5) sums rounded twice; both are found wrong on the path, so they keep
    /// the slow one.
    #[test]
    fn formats_past_the_rule_would_round_wrongly() {
        for (e, m, mul) in [(5, 11, false), (8, 10, true), (8, 8, true)] {
            let f = plain(e, m);
            assert!(f.narrow().is_none());
            let n = Narrow::new(f);
            let mut rng = Pcg64::seed_from_u64(0x33);
            let wrong = (0..2_000_000).any(|_| {
                let (a, b) = if mul {
                    tiny_product(&f, &mut rng)
                } else {
                    pair(&f, &mut rng)
                };
                if mul {
                    n.mul(a, b) != f.mul_d(a, b, Draw::Nearest)
                } else {
                    n.add(a, b) != f.add_d(a, b, Draw::Nearest)
                }
            });
            assert!(
                wrong,
                "float:{e}:{m}: no pair found where the f32 path is wrong"
            );
        }
    }

    /// Suffixed formats keep the slow path (their overflow and flush rules are not f32's).
    #[test]
    fn suffixes_keep_the_slow_path() {
        for (fin, sat, ftz) in [
            (true, false, false),
            (false, true, false),
            (false, false, true),
        ] {
            assert!(FloatFormat::new(8, 7, fin, sat, ftz)
                .unwrap()
                .narrow()
                .is_none());
        }
        assert!(plain(8, 7).narrow().is_some());
    }
}
