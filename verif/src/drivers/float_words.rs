//! Corner cases and random operands of `float:E:M` words (the float family's
//! [`FamilyWords`]): zeros, subnormals, the normal range's ends, ±1 and its neighbours,
//! infinities and NaNs where the format has them; random words biased toward the binades
//! where rounding is hard (subnormals, overflow, ties, cancellation).

use lpgen_golden::Family;
use lpgen_golden::FloatFormat;

use super::words::FamilyWords;
use crate::rng::Rng;

/// ±0, ±the smallest and largest subnormal, ±the smallest normal and its neighbour, ±max
/// finite and its neighbour, ±1 and its neighbours, ±2, ±∞ (without `:fn`), the canonical
/// NaN and another NaN pattern.
pub fn float_specials(f: FloatFormat) -> Vec<u64> {
    let (mf, m) = (f.frac_bits, f.mask());
    let min_normal = 1u64 << mf;
    let max = f.max_finite(false);
    let one = f.one();
    let mut base = vec![
        0,
        1,
        min_normal - 1,
        min_normal,
        min_normal + 1,
        max,
        max - 1,
        one,
        one + 1,
        one - 1,
        one + min_normal,
    ];
    if !f.finite {
        base.push(f.infinite(false));
    }
    let mut v: Vec<u64> = base.iter().map(|&x| x & m).collect();
    v.extend(base.iter().map(|&x| f.neg(x & m)));
    // NaNs: the canonical one, and the other sign's (and with a spare fraction pattern).
    v.push(f.nan());
    v.push(f.neg(f.nan()));
    if !f.finite {
        v.push(f.infinite(false) | 1);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// A word of the binade `field` (its biased exponent) with a random fraction, either sign.
fn in_binade(r: &mut Rng, f: FloatFormat, field: u64) -> u64 {
    let frac = r.next_u64() & ((1u64 << f.frac_bits) - 1);
    let w = (field << f.frac_bits) | frac;
    if r.coin() {
        f.neg(w)
    } else {
        w
    }
}

/// A float word: uniform, near one, subnormal or just above, near overflow, with a short
/// fraction (ties in sums and products), or special.
pub fn float_word(r: &mut Rng, f: FloatFormat) -> u64 {
    let top = (1u64 << f.exp_bits) - 1;
    match r.below(12) {
        0..=2 => r.next_u64() & f.mask(),
        3..=4 => {
            let bias = f.bias() as u64;
            let field = (bias + r.below(5)).saturating_sub(2).clamp(1, top - 1);
            in_binade(r, f, field)
        }
        5..=6 => {
            let field = r.below(3).min(top - 1);
            in_binade(r, f, field)
        }
        7 => {
            let field = top - 1 - r.below(2).min(top - 2);
            in_binade(r, f, field)
        }
        8..=10 => {
            let cut = r.below(u64::from(f.frac_bits) + 1);
            (r.next_u64() & f.mask()) >> cut << cut
        }
        _ => r.pick(&float_specials(f)),
    }
}

/// A float pair: words, or b in a's binade or next to it (cancellation, ties), or ±a.
pub fn float_pair(r: &mut Rng, f: FloatFormat) -> (u64, u64) {
    let a = float_word(r, f);
    let field = (a >> f.frac_bits) & ((1u64 << f.exp_bits) - 1);
    let top = (1u64 << f.exp_bits) - 1;
    let b = match r.below(8) {
        0..=2 => {
            let near = (field + r.below(3)).saturating_sub(1).min(top - 1);
            in_binade(r, f, near)
        }
        3 => {
            if r.coin() {
                f.neg(a)
            } else {
                a
            }
        }
        _ => float_word(r, f),
    };
    if r.coin() {
        (a, b)
    } else {
        (b, a)
    }
}

impl FamilyWords for FloatFormat {
    fn specials(&self) -> Vec<u64> {
        float_specials(*self)
    }
    fn word(&self, r: &mut Rng, _: bool) -> u64 {
        float_word(r, *self)
    }
    fn pair(&self, r: &mut Rng) -> (u64, u64) {
        float_pair(r, *self)
    }
}
