//! A Kahan step of the LNS lanes with one table lookup where the definition takes three.
//!
//! The step (`sum::kahan_formula`) is y = c ⊕ x, t = s ⊕ y, c' = y ⊖ (t ⊖ s): four LNS
//! additions, each a lookup of the merged G table. The last three depend on s and y alone,
//! and only through the signs, which of the two leads (is larger in magnitude), and their
//! difference d = ||s| − |y||: with no result saturated or flushed, every one of them is the
//! leading magnitude M = max(|s|, |y|) plus an offset fixed by those, since an LNS sum of
//! two magnitudes is the larger plus G of their difference. So (t, c') is M plus one table
//! entry: [`KahanSteps`], one entry per (which leads, the signs differ, min(d, last)),
//! computed once per format by running the definition's three additions at a magnitude far
//! from every bound. Beyond the tables' last difference every further d gives the same
//! entry (each G is 0 there: t is the leader, c' is y or 0).
//!
//! Where an intermediate result would have saturated or flushed, the offsets do not hold.
//! [`KahanSteps::step`] sees that from the entry and from bounds on t ⊖ s taken over the
//! whole table, and says so (`None`): the caller then takes the definition's three
//! additions. A zero s or y needs no entry: t is the other one and c' is 0.
//!
//! `KahanSteps::step` is the statement the vector lanes (`avx512.rs`) follow operation by
//! operation; the tests hold it to `kahan_formula` for every pair of lns:5:6 values.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::arith::Arith;

use super::{signed, LnsLanes};

/// Bits of an entry: t's offset from M in the low [`G_BITS`] (two's complement), c's offset
/// from |y| in the next [`C_BITS`], and three flags.
pub(super) const G_BITS: u32 = 11;
pub(super) const C_BITS: u32 = 13;
/// t is zero (s and y cancel exactly: the sentinel of the difference table).
pub(super) const T_ZERO: i32 = 1 << 29;
/// c' is zero.
pub(super) const C_ZERO: i32 = 1 << 30;
/// c' has the sign opposite to s's.
pub(super) const C_NEG: i32 = i32::MIN;

/// The Kahan steps' table of one LNS format (see the module's comment).
#[derive(Debug)]
pub(crate) struct KahanSteps {
    /// `table[(2·y_leads + opp)·stride + min(d, stride − 1)]`, `stride` the merged G table's.
    pub(super) table: Vec<i32>,
    pub(super) stride: usize,
    /// The least |t ⊖ s| − |y| over the entries where t ⊖ s is not zero, and the greatest
    /// |t ⊖ s| − M: a lane whose |y| + `w_low` ≥ 1 and M + `w_high` ≤ cmax has t ⊖ s neither
    /// flushed nor saturated.
    pub(super) w_low: i32,
    pub(super) w_high: i32,
}

/// The magnitude the entries are computed at: far from every bound of the offsets (each is
/// at most a few times the tables' length).
const M_REF: i32 = 1 << 24;

impl KahanSteps {
    /// The table of `l`'s format, built on first use and shared; `None` where an offset
    /// does not fit its bits (formats of more than six fraction bits).
    pub(crate) fn get(l: &LnsLanes) -> Option<&'static KahanSteps> {
        type Cache = Mutex<HashMap<(u32, u32), Option<&'static KahanSteps>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key = (l.lns.fmt.int_bits, l.lns.fmt.frac_bits);
        let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
        *cache
            .entry(key)
            .or_insert_with(|| KahanSteps::build(l).map(|t| &*Box::leak(Box::new(t))))
    }

    /// The entries by the definition's additions (`l`'s, with no result saturated), or
    /// `None` where one does not fit.
    fn build(l: &LnsLanes) -> Option<KahanSteps> {
        let free = LnsLanes {
            cmax: i32::MAX / 2,
            keep: -1,
            ..*l
        };
        let stride = l.lns.stride;
        let (mut w_low, mut w_high) = (i32::MAX, i32::MIN);
        let mut table = vec![0; 4 * stride];
        for (at, entry) in table.iter_mut().enumerate() {
            let (y_leads, opp, d) = (at / (2 * stride) == 1, at / stride % 2 == 1, at % stride);
            if y_leads && d == 0 {
                continue; // a tie: s leads
            }
            let d = d as i32;
            let s = M_REF - if y_leads { d } else { 0 };
            let y = signed(M_REF - if y_leads { 0 } else { d }, -i32::from(opp));
            let (t, c) =
                crate::sum::kahan_formula(s, 0, y, |a, b| free.add(a, b), |a, b| free.sub(a, b));
            let w = free.sub(t, s);
            if w != 0 {
                w_low = w_low.min(w.abs() - y.abs());
                w_high = w_high.max(w.abs() - M_REF);
            }
            let g = t.abs() - M_REF;
            let oc = c.abs() - y.abs();
            let fits = |v: i32, bits: u32| (-(1 << (bits - 1))..1 << (bits - 1)).contains(&v);
            if !(t == 0 || fits(g, G_BITS)) || !(c == 0 || fits(oc, C_BITS)) {
                return None;
            }
            *entry = match t {
                0 => T_ZERO,
                _ => g & ((1 << G_BITS) - 1),
            } | match c {
                0 => C_ZERO,
                _ => (oc & ((1 << C_BITS) - 1)) << G_BITS,
            } | if c < 0 { C_NEG } else { 0 };
        }
        Some(KahanSteps {
            table,
            stride,
            w_low,
            w_high,
        })
    }

    /// (t, c') of the Kahan step of sum `s` with y = c ⊕ x in `l` (which clears no bits),
    /// or `None` where an intermediate result would saturate or flush: then the definition's
    /// additions give them. (Only the tests call it: the lanes run its vector form.)
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn step(&self, l: &LnsLanes, s: i32, y: i32) -> Option<(i32, i32)> {
        if s == 0 || y == 0 {
            return Some((s + y, 0));
        }
        let (ms, my) = (s.abs(), y.abs());
        let (m, d) = (ms.max(my), (ms - my).unsigned_abs() as usize);
        let y_leads = my > ms;
        let opp = (s ^ y) < 0;
        let at = (2 * usize::from(y_leads) + usize::from(opp)) * self.stride;
        let e = self.table[at + d.min(self.stride - 1)];
        let g = e << (32 - G_BITS) >> (32 - G_BITS);
        let oc = e << (32 - G_BITS - C_BITS) >> (32 - C_BITS);
        let t_free = m + g;
        let t_zero = e & T_ZERO != 0;
        let t_ok = t_zero || (1..=l.cmax).contains(&t_free);
        let w_ok = my + self.w_low >= 1 && m + self.w_high <= l.cmax;
        if !(t_ok && w_ok) {
            return None;
        }
        let lead = if y_leads { y } else { s };
        let t = signed(if t_zero { 0 } else { t_free }, lead >> 31);
        let cm = match e & C_ZERO {
            0 => (my + oc).clamp(0, l.cmax),
            _ => 0,
        };
        let neg = (s >> 31) ^ -i32::from(e & C_NEG != 0);
        Some((t, signed(cm, neg)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lns::Lns;

    fn lns(s: &str) -> Lns {
        match s.parse::<crate::Format>().unwrap().calc() {
            crate::Calc::Lns(l) => l,
            _ => unreachable!(),
        }
    }

    /// For every pair of values s, y of lns:5:6, lns:4:4 and lns:3:3, the table's step is
    /// the definition's (`kahan_formula` with c = 0, so that y = c ⊕ x is y), or declines.
    /// It declines only near the ends of the range.
    #[test]
    fn table_steps_are_the_formulas_steps() {
        for f in ["lns:5:6", "lns:4:4", "lns:3:3", "lns:4:6", "lns:6:5"] {
            let l = lns(f).lanes();
            let k = KahanSteps::get(&l).unwrap_or_else(|| panic!("{f}: a table"));
            let (mut declined, mut declined_mid) = (0u64, 0u64);
            for s in -l.cmax..=l.cmax {
                for y in -l.cmax..=l.cmax {
                    let want =
                        crate::sum::kahan_formula(s, 0, y, |a, b| l.add(a, b), |a, b| l.sub(a, b));
                    match k.step(&l, s, y) {
                        Some(got) => assert_eq!(got, want, "{f}: s {s}, y {y}"),
                        None => {
                            declined += 1;
                            let mid = (l.cmax / 4..=3 * l.cmax / 4).contains(&s.abs())
                                && (l.cmax / 4..=3 * l.cmax / 4).contains(&y.abs());
                            declined_mid += u64::from(mid);
                        }
                    }
                }
            }
            let all = (2 * l.cmax as u64 + 1).pow(2);
            assert_eq!(declined_mid, 0, "{f}: declined in the middle of the range");
            assert!(declined * 4 < all, "{f}: declined {declined} of {all}");
        }
    }

    /// Formats whose offsets do not fit an entry have no table.
    #[test]
    fn wide_fractions_have_no_table() {
        assert!(KahanSteps::get(&lns("lns:2:8").lanes()).is_none());
        assert!(KahanSteps::get(&lns("lns:5:6").lanes()).is_some());
    }
}
