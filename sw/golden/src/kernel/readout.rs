//! Read-outs of exact sums by table, for the accumulators of narrow formats: where a
//! family's [`ExactDot::read_exact`] steps from one word to the next, found once from
//! `read_exact` itself, so that reading an f64 sum is a search among at most a few hundred
//! boundaries instead of a rounding.
//!
//! The boundaries are found by bisection between each two neighbouring values of the
//! format, for each sign: the smallest magnitude whose read-out is the larger value's word.
//! That makes the table `read_exact` exactly wherever the read-out is monotone in the
//! magnitude (a word for every value up to the boundary, the next from it on), which a
//! rounding to nearest with saturation is; the build checks each boundary's two sides, and
//! `tests::read_values_are_read_exact` holds every family's read-out to `read_exact` on sums
//! around every boundary and at random. Sums past the table's range (beyond twice the
//! largest value, where an accumulator may wrap) and NaN are `read_exact`'s.

use super::{integer_and_scale, ExactDot};
use crate::arith::Bits;
use crate::Format;

/// Formats of at most this many bits read out by table (at most 2^8 words: a build of a
/// few thousand read-outs).
pub(crate) const TABLE_BITS: u32 = 8;

/// Each binade's magnitudes are indexed in 2^4 parts (by their top four significand bits):
/// a part holds few boundaries (one or two in a tapered format of 8 bits), which a read-out
/// steps past without a branch.
const PART_SHIFT: u32 = 52 - 4;

/// The least positive f64.
const LEAST: f64 = f64::from_bits(1);

/// The read-out of each nonzero magnitude, by sign: `words[s][i]` for magnitudes from
/// `up[s][i − 1]` (or the least f64) below `up[s][i]` (or `limit`); an exact zero's is `zero`
/// (a float's −0 lies between zero and the least negative value).
#[derive(Debug)]
pub(crate) struct ReadTable {
    up: [Vec<f64>; 2],
    words: [Vec<Bits>; 2],
    /// By sign, for each part of a binade from `base` on (an f64's bits shifted right by
    /// `PART_SHIFT`, less `base`), how many boundaries lie below the part.
    below: [Vec<u16>; 2],
    base: [u64; 2],
    /// The most boundaries any part holds: the steps of a read-out (`up` ends in as many
    /// infinities, so that every step reads a boundary).
    steps: usize,
    zero: Bits,
    /// Magnitudes from here on are `read_exact`'s.
    limit: f64,
}

/// `read_exact` of the f64 `v`: the definition of [`ExactDot::read_values`], which the
/// table is built from.
#[inline]
pub(crate) fn read(x: &(impl ExactDot + ?Sized), v: f64) -> Bits {
    let (units, scale) = integer_and_scale(v);
    x.read_exact(units, scale)
}

impl ReadTable {
    /// The table of `x`'s read-out over the exact values of `words`, or None where the
    /// read-out is not a monotone step between two neighbouring values.
    pub(crate) fn new(x: &dyn ExactDot, words: impl Iterator<Item = Bits>) -> Option<ReadTable> {
        let mut mags: Vec<f64> = words
            .filter_map(|w| x.exact_f64(w))
            .map(f64::abs)
            .filter(|&m| m > 0.0)
            .chain([LEAST])
            .collect();
        mags.sort_by(f64::total_cmp);
        mags.dedup();
        let top = *mags.last().expect("the least f64 at least");
        let limit = 2.0 * top;
        if !limit.is_finite() || limit == 0.0 {
            return None;
        }
        mags.push(limit);
        let mut table = ReadTable {
            up: [Vec::new(), Vec::new()],
            words: [Vec::new(), Vec::new()],
            below: [Vec::new(), Vec::new()],
            base: [0, 0],
            steps: 0,
            zero: read(x, 0.0),
            limit,
        };
        for (s, sign) in [1.0f64, -1.0].into_iter().enumerate() {
            let at = |m: f64| read(x, sign * m);
            table.words[s].push(at(LEAST));
            for pair in mags.windows(2) {
                let (lo, hi) = (at(pair[0]), at(pair[1]));
                if lo != *table.words[s].last().expect("a word") {
                    return None;
                }
                if lo == hi {
                    continue;
                }
                // The smallest magnitude reading `hi`: bits of positive f64s are in order.
                let (mut a, mut b) = (pair[0].to_bits(), pair[1].to_bits());
                while b - a > 1 {
                    let mid = a + (b - a) / 2;
                    if at(f64::from_bits(mid)) == lo {
                        a = mid;
                    } else {
                        b = mid;
                    }
                }
                let t = f64::from_bits(b);
                if at(t) != hi || at(f64::from_bits(a)) != lo {
                    return None;
                }
                table.up[s].push(t);
                table.words[s].push(hi);
            }
            let up = &table.up[s];
            let base = up.first().unwrap_or(&limit).to_bits() >> PART_SHIFT;
            let parts = (limit.to_bits() >> PART_SHIFT) - base + 1;
            table.below[s] = (0..parts)
                .map(|p| {
                    let from = f64::from_bits((base + p) << PART_SHIFT);
                    u16::try_from(up.partition_point(|&t| t < from)).expect("at most 2^16")
                })
                .collect();
            table.base[s] = base;
        }
        // The boundaries of a part: those below the next part's start, less those below its own.
        let most = |below: &[u16], count: usize| {
            let next = below.iter().skip(1).map(|&b| usize::from(b)).chain([count]);
            (below.iter().zip(next))
                .map(|(&b, n)| n - usize::from(b))
                .max()
                .unwrap_or(0)
        };
        table.steps = (0..2)
            .map(|s| most(&table.below[s], table.up[s].len()))
            .max()
            .unwrap_or(0);
        for up in &mut table.up {
            up.extend(std::iter::repeat_n(f64::INFINITY, table.steps));
        }
        Some(table)
    }

    /// The read-out of `v`: the table's word, `read_exact`'s past the table's range.
    #[inline]
    pub(crate) fn read(&self, x: &dyn ExactDot, v: f64) -> Bits {
        let m = v.abs();
        if m >= self.limit || m.is_nan() {
            return read(x, v);
        }
        if m == 0.0 {
            return self.zero;
        }
        let s = usize::from(v.is_sign_negative());
        let part = (m.to_bits() >> PART_SHIFT).saturating_sub(self.base[s]);
        let up = &self.up[s];
        // From the boundaries below m's part, past those of the part at or below m.
        let mut i = usize::from(self.below[s][part as usize]);
        for _ in 0..self.steps {
            i += usize::from(up[i] <= m);
        }
        self.words[s][i]
    }

    /// The boundaries of each sign (for the tests).
    #[cfg(test)]
    pub(crate) fn boundaries(&self) -> [&[f64]; 2] {
        let real = |up: &[f64]| up.len() - self.steps;
        [
            &self.up[0][..real(&self.up[0])],
            &self.up[1][..real(&self.up[1])],
        ]
    }
}

/// [`ExactDot::read_values`] for a family of `bits`-bit words `format`: by its table where
/// the words are at most [`TABLE_BITS`] wide and the table exists, by `read_exact` otherwise.
pub(crate) fn read_values(
    x: &dyn ExactDot,
    (format, bits): (Format, u32),
    sums: &[f64],
    out: &mut Vec<Bits>,
) {
    let table = (bits <= TABLE_BITS)
        .then(|| crate::table::cached(format, || ReadTable::new(x, 0..1 << bits)))
        .and_then(Option::as_ref);
    match table {
        Some(t) => out.extend(sums.iter().map(|&v| t.read(x, v))),
        None => out.extend(sums.iter().map(|&v| read(x, v))),
    }
}
