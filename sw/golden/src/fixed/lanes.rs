//! fix's elementwise + − · ÷, max and min over slices, in i64: a fix word has at most 32
//! bits, so every sum, product and shifted dividend of two fits. The family's operations
//! (`Family for FixFormat`, in i128) stay the definition, and the tests below hold these to
//! them word for word.

use super::FixFormat;
use crate::arith::Bits;
use crate::AluOp;

/// `out[i]` = `a[i]` op `b[i]` ([`crate::Family::binop_lanes`]); `false` for the other
/// operations.
pub(super) fn binop(f: &FixFormat, op: AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
    let (lo, hi) = (f.min_int(), f.max_int());
    let mask = u64::MAX >> (64 - f.width());
    let frac = f.frac_bits;
    // The word of an integer, saturating (`FixFormat::from_int`).
    let word = move |v: i64| (v.clamp(lo, hi) as u64) & mask;
    let int = |w: Bits| f.to_int(w);
    match op {
        AluOp::Add => each(a, b, out, |x, y| word(int(x) + int(y))),
        AluOp::Sub => each(a, b, out, |x, y| word(int(x) - int(y))),
        AluOp::Mul => each(a, b, out, |x, y| word(nearest_shift(int(x) * int(y), frac))),
        AluOp::Div => each(a, b, out, |x, y| word(quotient(int(x), int(y), frac))),
        AluOp::Max => each(a, b, out, |x, y| if int(x) < int(y) { y } else { x }),
        AluOp::Min => each(a, b, out, |x, y| if int(x) > int(y) { y } else { x }),
        _ => return false,
    }
    true
}

#[inline(always)]
fn each(a: &[Bits], b: &[Bits], out: &mut [Bits], op: impl Fn(Bits, Bits) -> Bits) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = op(x, y);
    }
}

/// x / 2^sh to nearest, ties to even (`fixed::round_shift` to nearest), for sh < 63.
#[inline(always)]
fn nearest_shift(x: i64, sh: u32) -> i64 {
    if sh == 0 {
        return x;
    }
    let q = x >> sh;
    let rem = x - (q << sh);
    let half = 1i64 << (sh - 1);
    q + i64::from(rem > half || (rem == half && q & 1 == 1))
}

/// x·2^frac / y to nearest, ties to even; y = 0 gives the extreme of x's sign, or 0
/// (`FixFormat::div_d` to nearest).
#[inline(always)]
fn quotient(x: i64, y: i64, frac: u32) -> i64 {
    if y == 0 {
        return match x.signum() {
            -1 => i64::MIN,
            0 => 0,
            _ => i64::MAX,
        };
    }
    let (num, den) = if y < 0 {
        (-(x << frac), -y)
    } else {
        (x << frac, y)
    };
    let (q, r) = (num.div_euclid(den), num.rem_euclid(den));
    q + i64::from(2 * r > den || (2 * r == den && q & 1 == 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;

    /// Every pair of words of 8-bit formats, and random and corner pairs (zero, ±1 ulp, the
    /// extremes, words with bits above the format) of wider ones up to 32 bits, give the
    /// family's words for every operation.
    #[test]
    fn lanes_are_the_family_operations() {
        // + − · ÷ max min: the opcodes' first six.
        let ops = &AluOp::ALL[..6];
        let mut next = crate::test_words(0x2545_f491_4f6c_dd1d);
        for (i, fr) in [
            (3, 4),
            (7, 0),
            (0, 7),
            (7, 8),
            (15, 16),
            (0, 31),
            (31, 0),
            (10, 5),
        ] {
            let f = FixFormat::new(i, fr).unwrap();
            let w = f.width();
            let mask = u64::MAX >> (64 - w);
            let (a, b): (Vec<Bits>, Vec<Bits>) = if w <= 8 {
                (0..1u64 << (2 * w)).map(|xy| (xy >> w, xy & mask)).unzip()
            } else {
                let corners = [
                    0,
                    1,
                    2,
                    mask,
                    mask - 1,
                    mask >> 1,
                    (mask >> 1) + 1,
                    (mask >> 1) - 1,
                ];
                let mut pairs: Vec<(Bits, Bits)> = (0..100_000)
                    .map(|_| (next() & mask, next() & mask))
                    .collect();
                for &x in &corners {
                    pairs.extend(corners.iter().map(|&y| (x, y)));
                    // One integer in two words: which of them max and min give.
                    pairs.extend([(x | !mask, x), (x, x | !mask)]);
                    pairs.extend((0..200).flat_map(|_| {
                        let y = next() & mask;
                        [(x, y), (y, x), (x | !mask, y)]
                    }));
                }
                pairs.into_iter().unzip()
            };
            for &op in ops {
                let mut got = vec![0; a.len()];
                assert!(binop(&f, op, &a, &b, &mut got));
                for (i, &g) in got.iter().enumerate() {
                    let (x, y) = (a[i], b[i]);
                    let want = match op {
                        AluOp::Add => f.add(x, y),
                        AluOp::Sub => f.sub(x, y),
                        AluOp::Mul => f.mul(x, y),
                        AluOp::Div => Family::div(&f, x, y),
                        AluOp::Max => Family::max(&f, x, y),
                        AluOp::Min => Family::min(&f, x, y),
                        _ => unreachable!(),
                    };
                    assert_eq!(g, want, "{f} {op:?} {x:#x} {y:#x}");
                }
            }
        }
        let f = FixFormat::new(7, 8).unwrap();
        assert!(!binop(&f, AluOp::Sqrt, &[1], &[1], &mut [0]));
    }
}
