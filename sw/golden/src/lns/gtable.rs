//! The G-function tables of LNS addition, computed once per format and shared.
//!
//! `sb[d] = round(2^F log2(1 + 2^(-d/2^F)))` and `db[d] = round(2^F log2(1 - 2^(-d/2^F)))`
//! for code differences `d >= 0`, rounded to nearest. No entry is ever exactly halfway: that
//! would make 1 ± 2^(-2m/K) equal to 2^((2j+1)/K) with K = 2^(F+1), and reducing the polynomial
//! t^(2j+1+2m) ∓ t^(2m) - 1 modulo x^K - 2 (the minimal polynomial of t = 2^(1/K)) never gives
//! zero, because an odd and an even exponent cannot cancel. So every entry has one right answer.
//!
//! Entries are first computed with libm in f64 and accepted only when they lie more than
//! `MARGIN` (in table units) from a rounding boundary, far beyond any libm's error; the rest are
//! decided by the big-integer evaluation of `hiprec`. The tables are therefore identical on
//! every machine whatever its libm, and a test compares the fast path with `hiprec` directly.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use num_bigint::{BigInt, BigUint};

use crate::hiprec;

/// Distance from a rounding boundary, in table units, below which libm is not trusted.
const MARGIN: f64 = 1.0 / (1u64 << 20) as f64;

/// The two tables for one (I, F).
#[derive(Debug, PartialEq, Eq)]
pub struct GTables {
    pub frac_bits: u32,
    /// `sb[d]` for `d` in `0..sb.len()`; every larger `d` gives 0.
    pub sb: Vec<i32>,
    /// `db[d]` for `d` in `1..db.len()`; `db[0]` is unused (x - x is exactly zero);
    /// every larger `d` gives 0.
    pub db: Vec<i32>,
    /// Both tables in one array for branch-free lookup: `merged[opp·stride + min(d, stride-1)]`
    /// with `opp` = 1 when the signs differ. Each half is zero-padded to `stride` entries, and
    /// `db[0]` is a sentinel so far below every code that x - x flushes to zero.
    pub merged: Vec<i32>,
    pub stride: usize,
}

/// The `db[0]` sentinel of `merged`: any code plus this is below every format's `code_min`.
pub const DB0_SENTINEL: i32 = -(1 << 30);

/// Which of the two functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GFunction {
    /// sb(d) = log2(1 + 2^-d)
    Sum,
    /// db(d) = log2(1 - 2^-d)
    Difference,
}

/// The entry for code difference `d` via libm, if it is safely away from a boundary.
fn entry_fast(g: GFunction, d: u32, frac_bits: u32) -> Option<i32> {
    let x = d as f64 / (1u64 << frac_bits) as f64;
    let v = match g {
        GFunction::Sum => (-x).exp2().ln_1p() / std::f64::consts::LN_2,
        GFunction::Difference => {
            (-(-x * std::f64::consts::LN_2).exp_m1()).ln() / std::f64::consts::LN_2
        }
    };
    let t = v * (1u64 << frac_bits) as f64;
    let dist = (t - t.floor() - 0.5).abs();
    (dist > MARGIN && t.is_finite()).then(|| t.round() as i32)
}

/// The entry for code difference `d` by deterministic big-integer evaluation.
pub fn entry_exact(g: GFunction, d: u32, frac_bits: u32) -> i32 {
    assert!(g == GFunction::Sum || d > 0);
    let r = hiprec::round_enclosure(frac_bits, |w| {
        // y = 2^(-d / 2^F) with enough extra bits that 1 - y keeps w bits of relative precision.
        let wy = w + frac_bits + 8;
        let y = hiprec::exp2(&BigInt::from(-(d as i64)), frac_bits, wy);
        let one = BigInt::from(1) << wy;
        let num = match g {
            GFunction::Sum => one.clone() + y,
            GFunction::Difference => one.clone() - y,
        };
        let num = num.to_biguint().expect("1 - 2^-d is positive");
        let den = BigUint::from(1u32) << wy;
        hiprec::log2_ratio(&num, &den, w)
    });
    i32::try_from(r).expect("G table entry fits i32")
}

/// One entry, fast path first.
pub fn entry(g: GFunction, d: u32, frac_bits: u32) -> i32 {
    entry_fast(g, d, frac_bits).unwrap_or_else(|| entry_exact(g, d, frac_bits))
}

fn build_one(g: GFunction, frac_bits: u32, max_d: u32) -> Vec<i32> {
    let mut t = Vec::new();
    if g == GFunction::Difference {
        t.push(i32::MIN);
    }
    // |sb| and |db| decrease with d: stop at the first entry that rounds to zero.
    for d in t.len() as u32..=max_d {
        let e = entry(g, d, frac_bits);
        if e == 0 {
            break;
        }
        t.push(e);
    }
    t
}

impl GTables {
    /// Builds the tables for F fraction bits, for differences up to `max_d`.
    pub fn build(frac_bits: u32, max_d: u32) -> GTables {
        let sb = build_one(GFunction::Sum, frac_bits, max_d);
        let db = build_one(GFunction::Difference, frac_bits, max_d);
        let stride = sb.len().max(db.len()) + 1;
        let mut merged = vec![0; 2 * stride];
        merged[..sb.len()].copy_from_slice(&sb);
        merged[stride..stride + db.len()].copy_from_slice(&db);
        merged[stride] = DB0_SENTINEL;
        GTables {
            frac_bits,
            sb,
            db,
            merged,
            stride,
        }
    }

    /// The shared tables of `lns:I:F`, built on first use.
    pub fn get(int_bits: u32, frac_bits: u32) -> &'static GTables {
        // Each thread remembers the last format it asked for: an LNS calculator is made for
        // every word a host constant or conversion takes, and would otherwise take the
        // shared lock and hash each time.
        type Entry = ((u32, u32), &'static GTables);
        thread_local! {
            static LAST: std::cell::Cell<Option<Entry>> = const { std::cell::Cell::new(None) };
        }
        let key = (int_bits, frac_bits);
        if let Some((k, t)) = LAST.get() {
            if k == key {
                return t;
            }
        }
        static CACHE: OnceLock<Mutex<HashMap<(u32, u32), &'static GTables>>> = OnceLock::new();
        let mut cache = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let t = *cache.entry(key).or_insert_with(|| {
            // The largest difference between two valid codes is 2^(I+F+1) - 2.
            let max_d = (1u32 << (int_bits + frac_bits + 1)) - 2;
            Box::leak(Box::new(GTables::build(frac_bits, max_d)))
        });
        LAST.set(Some((key, t)));
        t
    }

    /// A short, stable digest of both tables (FNV-1a 64 over the little-endian entries), for
    /// manifests and for telling two builds apart.
    pub fn digest(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in self.sb.iter().chain(self.db.iter().skip(1)) {
            for b in v.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("fnv1a64:{h:016x}:sb{}:db{}", self.sb.len(), self.db.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_agrees_with_big_integer_evaluation() {
        // Every entry of lns:x:6 and a stride through F = 10 (the slow path is ~50 µs an entry).
        for (f, stride) in [(4u32, 1usize), (6, 1), (10, 7)] {
            let t = GTables::build(f, 1 << 14);
            for (d, &v) in t.sb.iter().enumerate().step_by(stride) {
                assert_eq!(
                    v,
                    entry_exact(GFunction::Sum, d as u32, f),
                    "sb F={f} d={d}"
                );
            }
            for (d, &v) in t.db.iter().enumerate().skip(1).step_by(stride) {
                assert_eq!(
                    v,
                    entry_exact(GFunction::Difference, d as u32, f),
                    "db F={f} d={d}"
                );
            }
        }
    }

    #[test]
    fn known_entries_of_lns_5_6() {
        let t = GTables::get(5, 6);
        assert_eq!(t.sb[0], 64); // log2(2) = 1
        assert_eq!(t.sb[359], 2); // the 98 + 2 step of seed 000 Table 4.10
        assert_eq!((t.sb.len(), t.db.len()), (482, 483));
        assert_eq!(t.digest(), "fnv1a64:032ca2bc949cafb1:sb482:db483");
        assert!(t.db[1] < -6 * 64);
    }

    #[test]
    fn digest_is_stable_and_tells_formats_apart() {
        assert_eq!(
            GTables::get(5, 6).digest(),
            GTables::build(6, 4094).digest()
        );
        assert_ne!(GTables::get(5, 6).digest(), GTables::get(4, 4).digest());
    }
}
