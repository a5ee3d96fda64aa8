//! The `convert` unit's float ↔ fix pairs (`lpgen_golden::alu::convert`) against a reference
//! written here from docs/formats.md's words, in exact integer arithmetic: a fix word is
//! v·2^−F (v its two's-complement integer); a float word is ±frac·2^(1−bias−M) (exponent
//! field 0) or ±(2^M + frac)·2^(field−bias−M), NaN/∞ at the all-ones field (with `:fn` NaN only
//! at the all-ones code). Float → fix: the value times 2^F rounded to the nearest integer, ties
//! to even, saturated to the fix range; NaN → 0, ±∞ → the range's ends. Fix → float: the
//! nearest float, found by searching the sorted codes, ties to the even code; past max
//! finite the overflow word (±max with `:sat`, NaN with `:fn`, else ±∞); zero → +0, a
//! negative value that rounds to zero → −0.

use std::cmp::Ordering;

use lpgen_golden::alu::{convert, convert_pair};
use lpgen_golden::Format;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Every value is an integer multiple of 2^−K (K covers bf16's smallest subnormal, 2^−133,
/// and a fix word's 2^−31).
const K: usize = 160;

/// A float format as the test states it: E, M, `:fn`, `:sat` (no `:ftz`: its own test file,
/// float_reference.rs, covers that rule; the conversions round through the same one).
struct Float {
    name: &'static str,
    e: u32,
    m: u32,
    fin: bool,
    sat: bool,
}

const FLOATS: [Float; 7] = [
    Float {
        name: "fp8:e4m3",
        e: 4,
        m: 3,
        fin: true,
        sat: false,
    },
    Float {
        name: "fp8:e5m2",
        e: 5,
        m: 2,
        fin: false,
        sat: false,
    },
    Float {
        name: "float:3:4",
        e: 3,
        m: 4,
        fin: false,
        sat: false,
    },
    Float {
        name: "fp8:e4m3:sat",
        e: 4,
        m: 3,
        fin: true,
        sat: true,
    },
    Float {
        name: "float:5:2:sat",
        e: 5,
        m: 2,
        fin: false,
        sat: true,
    },
    Float {
        name: "bf16",
        e: 8,
        m: 7,
        fin: false,
        sat: false,
    },
    Float {
        name: "f16",
        e: 5,
        m: 10,
        fin: false,
        sat: false,
    },
];

/// (I, F) of the fix formats.
const FIXES: [(u32, u32); 5] = [(3, 4), (0, 7), (7, 8), (2, 1), (15, 16)];

enum Rv {
    Nan,
    Inf(bool),
    /// ±n·2^−K
    Fin(bool, BigInt),
}

impl Float {
    fn bias(&self) -> i64 {
        (1 << (self.e - 1)) - 1
    }
    fn sign(&self) -> u64 {
        1 << (self.e + self.m)
    }
    /// The magnitude of code c (no sign bit) by the formula, times 2^K, whatever the field.
    fn code_value(&self, c: u64) -> BigInt {
        let (field, frac) = ((c >> self.m) as i64, BigInt::from(c & ((1 << self.m) - 1)));
        let (n, e) = if field == 0 {
            (frac, 1 - self.bias() - i64::from(self.m))
        } else {
            (
                (BigInt::one() << self.m) + frac,
                field - self.bias() - i64::from(self.m),
            )
        };
        n << (e + K as i64) as usize
    }
    /// The code one past the largest finite magnitude (∞, or with :fn the NaN code).
    fn top(&self) -> u64 {
        if self.fin {
            (1 << (self.e + self.m)) - 1
        } else {
            ((1 << self.e) - 1) << self.m
        }
    }
    fn rv(&self, w: u64) -> Rv {
        let neg = w & self.sign() != 0;
        let c = w & (self.sign() - 1);
        if self.fin && c == self.top() {
            return Rv::Nan;
        }
        if !self.fin && c >= self.top() {
            return if c == self.top() {
                Rv::Inf(neg)
            } else {
                Rv::Nan
            };
        }
        Rv::Fin(neg, self.code_value(c))
    }
    fn overflow(&self, neg: bool) -> u64 {
        let s = if neg { self.sign() } else { 0 };
        if self.sat {
            s | (self.top() - 1)
        } else if self.fin {
            // The canonical NaN: sign 0, every other bit set.
            self.top()
        } else {
            s | self.top()
        }
    }
    /// The word nearest to (−1)^neg · x·2^−K.
    fn round(&self, neg: bool, x: &BigInt) -> u64 {
        let s = if neg { self.sign() } else { 0 };
        let top = self.top();
        if self.code_value(top) <= *x {
            return self.overflow(neg);
        }
        let (mut lo, mut hi) = (0u64, top);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.code_value(mid) <= *x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let twice: BigInt = x << 1usize;
        let c = match twice.cmp(&(self.code_value(lo) + self.code_value(hi))) {
            Ordering::Less => lo,
            Ordering::Greater => hi,
            Ordering::Equal if lo % 2 == 0 => lo,
            Ordering::Equal => hi,
        };
        if c == top {
            self.overflow(neg)
        } else {
            s | c
        }
    }
}

/// A fix word of (I, F) for the integer v, saturated.
fn fix_word(i: u32, f: u32, v: &BigInt) -> u64 {
    let w = 1 + i + f;
    let (lo, hi) = (-(BigInt::one() << (w - 1)), (BigInt::one() << (w - 1)) - 1);
    let v = v.clamp(&lo, &hi).clone();
    let v = i64::try_from(v).unwrap();
    (v as u64) & ((1 << w) - 1)
}

/// The fix integer of a word of (I, F).
fn fix_int(i: u32, f: u32, w: u64) -> i64 {
    let sh = 64 - (1 + i + f);
    ((w << sh) as i64) >> sh
}

fn float_to_fix(x: &Float, (i, f): (u32, u32), w: u64) -> u64 {
    match x.rv(w) {
        Rv::Nan => 0,
        Rv::Inf(neg) => fix_word(i, f, &BigInt::from(if neg { -1i64 } else { 1 } << 40)),
        Rv::Fin(neg, n) => {
            // n·2^(F−K), to the nearest integer, ties to even.
            let (q, r) = (n << f as usize).div_mod_floor(&(BigInt::one() << K));
            let twice: BigInt = r << 1usize;
            let up = match twice.cmp(&(BigInt::one() << K)) {
                Ordering::Greater => true,
                Ordering::Equal => q.is_odd(),
                Ordering::Less => false,
            };
            let q = if up { q + 1 } else { q };
            fix_word(i, f, &if neg { -q } else { q })
        }
    }
}

fn fix_to_float(x: &Float, (i, f): (u32, u32), w: u64) -> u64 {
    let v = BigInt::from(fix_int(i, f, w));
    if v.is_zero() {
        return 0;
    }
    x.round(v.is_negative(), &(v.abs() << (K - f as usize)))
}

fn pair(from: &str, to: &str) -> (lpgen_golden::Calc, lpgen_golden::Calc) {
    let (f, t): (Format, Format) = (from.parse().unwrap(), to.parse().unwrap());
    convert_pair(f, t).unwrap();
    (f.calc(), t.calc())
}

#[test]
fn every_float_word_to_fix_is_its_value_rounded_and_saturated() {
    for x in &FLOATS {
        for (i, f) in FIXES {
            let (from, to) = pair(x.name, &format!("fix:{i}:{f}"));
            for w in 0..1u64 << (1 + x.e + x.m) {
                let want = float_to_fix(x, (i, f), w);
                assert_eq!(
                    convert(&from, &to, w),
                    want,
                    "{} {w:#x} -> fix:{i}:{f}",
                    x.name
                );
            }
        }
    }
}

#[test]
fn fix_words_to_float_are_the_nearest_float() {
    let mut rng = Pcg64::seed_from_u64(0x5eed_f1c5);
    for x in &FLOATS {
        for (i, f) in FIXES {
            let (from, to) = pair(&format!("fix:{i}:{f}"), x.name);
            let bits = 1 + i + f;
            let words: Vec<u64> = if bits <= 16 {
                (0..1u64 << bits).collect()
            } else {
                let mut ws: Vec<u64> = (0..20_000)
                    .map(|_| rng.gen::<u64>() >> (64 - bits))
                    .collect();
                // The range's ends, ±1 code, and ties at the float's precision.
                ws.extend([
                    0,
                    1,
                    (1 << bits) - 1,
                    1 << (bits - 1),
                    (1 << (bits - 1)) - 1,
                ]);
                ws.extend((0..2000).map(|_| {
                    let t = (rng.gen::<u64>() | 1) << rng.gen_range(0..8);
                    t & ((1 << bits) - 1)
                }));
                ws
            };
            for w in words {
                let want = fix_to_float(x, (i, f), w);
                assert_eq!(
                    convert(&from, &to, w),
                    want,
                    "fix:{i}:{f} {w:#x} -> {}",
                    x.name
                );
            }
        }
    }
}

#[test]
fn the_reference_sees_the_rules_it_states() {
    // Spot checks of the reference itself, from the spec's words.
    let e4m3 = &FLOATS[0];
    // fix:7:8 0x7fff = 127.99… → e4m3 128 = 0x70 (2^7: field 14 → 0b0111_0000).
    assert_eq!(fix_to_float(e4m3, (7, 8), 0x7fff), 0x70);
    // fix:3:4 −1/16 → float:3:4's 2^−6 grid: −0.0625 = −4·2^−6 exactly: 0x80 | 4.
    assert_eq!(fix_to_float(&FLOATS[2], (3, 4), 0xff), 0x84);
    // e4m3 max 448 = 0x7e → fix:7:8 saturates at 0x7fff; NaN 0x7f → 0.
    assert_eq!(float_to_fix(e4m3, (7, 8), 0x7e), 0x7fff);
    assert_eq!(float_to_fix(e4m3, (7, 8), 0x7f), 0);
    // 2.5 (e4m3 0x42) → fix:2:0 ties to even 2; 3.5 (0x46) → 4 saturates at 3.
    assert_eq!(float_to_fix(e4m3, (2, 0), 0x42), 2);
    assert_eq!(float_to_fix(e4m3, (2, 0), 0x46), 3);
}

#[test]
fn convert_pairs_are_within_a_family_or_float_and_fix() {
    let ok = |f: &str, t: &str| convert_pair(f.parse().unwrap(), t.parse().unwrap()).is_ok();
    assert!(ok("bf16", "fix:7:8") && ok("fix:7:8", "fp8:e4m3") && ok("f16", "bf16"));
    assert!(!ok("posit:8", "fix:7:8") && !ok("bf16", "posit:16") && !ok("lns:5:6", "f16"));
    assert!(!ok("dfix:8", "bf16") && !ok("f32", "posit:8"));
    // f32 converts as float:8:23 (the same words).
    assert!(ok("f32", "fix:7:8") && ok("fix:7:8", "f32") && ok("f32", "bf16") && ok("f32", "f32"));
}
