//! An independent exact reference for `fix:I:F` (docs/formats.md), on num-bigint rationals.
//!
//! A word is 1+I+F bits of two's complement, value = integer / 2^F. add/sub are exact then
//! saturate; mul and div round the exact rational to nearest, ties to even, then saturate;
//! x/0 saturates with x's sign and 0/0 = 0; neg/abs saturate. The MAC accumulator holds the
//! exact sum of products (2F fraction bits) modulo 2^acc_bits, sign-extended, and rounds once.
//!
//! Coverage: every pair of `fix:3:4`, `fix:2:5` and `fix:0:7`; a million random pairs (plus
//! every pair of a set of edge values) of `fix:7:8` and `fix:15:16`; FixAcc dot products of
//! random lengths, runs of worst-case products across the wrap-around, and mixed
//! add_product/add_word sequences, against exact sums.

use std::cmp::Ordering;

use lpgen_golden::{Family, FixAcc, FixFormat};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// `fix:I:F` as the reference sees it.
#[derive(Clone, Copy, Debug)]
struct Fx {
    i: u32,
    f: u32,
}

impl Fx {
    fn golden(&self) -> FixFormat {
        FixFormat::new(self.i, self.f).unwrap()
    }

    fn width(&self) -> u32 {
        1 + self.i + self.f
    }

    fn max(&self) -> BigInt {
        (BigInt::one() << (self.width() - 1)) - 1
    }

    fn min(&self) -> BigInt {
        -(BigInt::one() << (self.width() - 1))
    }

    /// The integer a word holds (value · 2^F).
    fn int(&self, bits: u64) -> BigInt {
        assert!(bits >> self.width() == 0, "{bits:#x} is not a word");
        let v = BigInt::from(bits);
        if bits >> (self.width() - 1) & 1 == 1 {
            v - (BigInt::one() << self.width())
        } else {
            v
        }
    }

    /// The word of an integer, saturating.
    fn word(&self, v: &BigInt) -> u64 {
        let v = v.clamp(&self.min(), &self.max()).clone();
        let m = v.mod_floor(&(BigInt::one() << self.width()));
        m.to_u64().unwrap()
    }

    /// num/den (den > 0) rounded to the nearest integer, ties to even.
    fn rne(num: &BigInt, den: &BigInt) -> BigInt {
        assert!(den.is_positive());
        let (q, r) = num.div_mod_floor(den);
        match (BigInt::from(2) * r).cmp(den) {
            Ordering::Less => q,
            Ordering::Greater => q + 1,
            Ordering::Equal if q.is_even() => q,
            Ordering::Equal => q + 1,
        }
    }

    fn add(&self, a: u64, b: u64) -> u64 {
        self.word(&(self.int(a) + self.int(b)))
    }

    fn sub(&self, a: u64, b: u64) -> u64 {
        self.word(&(self.int(a) - self.int(b)))
    }

    /// (a/2^F)(b/2^F) on the 2^-F grid: a·b / 2^F.
    fn mul(&self, a: u64, b: u64) -> u64 {
        let p = self.int(a) * self.int(b);
        self.word(&Fx::rne(&p, &(BigInt::one() << self.f)))
    }

    /// (a/2^F)/(b/2^F) on the 2^-F grid: a·2^F / b.
    fn div(&self, a: u64, b: u64) -> u64 {
        let (x, y) = (self.int(a), self.int(b));
        if y.is_zero() {
            return match x.sign() {
                num_bigint::Sign::Plus => self.word(&self.max()),
                num_bigint::Sign::Minus => self.word(&self.min()),
                num_bigint::Sign::NoSign => 0,
            };
        }
        let num = x << self.f;
        let q = if y.is_negative() {
            Fx::rne(&-num, &-y)
        } else {
            Fx::rne(&num, &y)
        };
        self.word(&q)
    }

    fn neg(&self, a: u64) -> u64 {
        self.word(&-self.int(a))
    }

    fn abs(&self, a: u64) -> u64 {
        self.word(&self.int(a).abs())
    }

    fn acc_bits(&self) -> u32 {
        2 * self.width() + 16
    }

    /// An exact sum (value · 2^(2F)) as the wrapping register holds it.
    fn wrap(&self, s: &BigInt) -> BigInt {
        let m = BigInt::one() << self.acc_bits();
        let r = s.mod_floor(&m);
        if r >= (BigInt::one() << (self.acc_bits() - 1)) {
            r - m
        } else {
            r
        }
    }

    /// The read-out of a register holding `raw` (value · 2^(2F)).
    fn acc_word(&self, raw: &BigInt) -> u64 {
        self.word(&Fx::rne(raw, &(BigInt::one() << self.f)))
    }

    fn describe(&self, bits: u64) -> String {
        format!("{bits:#x} ({}/2^{})", self.int(bits), self.f)
    }
}

/// Compares the golden model and the reference on one pair for every binary operation.
fn check_pair(fx: Fx, g: &FixFormat, a: u64, b: u64, bad: &mut Vec<String>) {
    let ops: [(&str, u64, u64); 4] = [
        ("add", g.add(a, b), fx.add(a, b)),
        ("sub", g.sub(a, b), fx.sub(a, b)),
        ("mul", g.mul(a, b), fx.mul(a, b)),
        ("div", g.div(a, b), fx.div(a, b)),
    ];
    for (name, got, want) in ops {
        if got != want && bad.len() < 12 {
            bad.push(format!(
                "  fix:{}:{} {name} {} , {}: golden {} reference {}",
                fx.i,
                fx.f,
                fx.describe(a),
                fx.describe(b),
                fx.describe(got),
                fx.describe(want)
            ));
        }
    }
}

fn assert_none(bad: &[String], what: &str) {
    assert!(
        bad.is_empty(),
        "{what}: mismatches, first:\n{}",
        bad.join("\n")
    );
}

#[test]
fn reference_self_checks() {
    // Ties to even, both signs; floor semantics of the division.
    let r = |n: i64, d: i64| Fx::rne(&BigInt::from(n), &BigInt::from(d));
    assert_eq!(r(5, 2), BigInt::from(2));
    assert_eq!(r(7, 2), BigInt::from(4));
    assert_eq!(r(-5, 2), BigInt::from(-2));
    assert_eq!(r(-7, 2), BigInt::from(-4));
    assert_eq!(r(-4, 3), BigInt::from(-1));
    assert_eq!(r(5, 3), BigInt::from(2));
    let fx = Fx { i: 3, f: 4 };
    assert_eq!(fx.int(0xff), BigInt::from(-1));
    assert_eq!(fx.int(0x80), BigInt::from(-128));
    assert_eq!(fx.word(&BigInt::from(1000)), 0x7f);
    assert_eq!(fx.word(&BigInt::from(-1000)), 0x80);
    assert_eq!(fx.word(&BigInt::from(-1)), 0xff);
    // 1.5 · 1.5 = 2.25 exactly; 0.0625 · 0.5 = 0.03125 is a tie -> 0 (even); · 1.5 -> 0.0625.
    assert_eq!(fx.mul(0x18, 0x18), 0x24);
    assert_eq!(fx.mul(0x01, 0x08), 0x00);
    assert_eq!(fx.mul(0x01, 0x18), 0x02);
    assert_eq!(fx.div(0x10, 0x30), 0x05); // 1/3 = 5.33/16
    assert_eq!(fx.div(0xf0, 0x00), 0x80);
    assert_eq!(fx.div(0x00, 0x00), 0x00);
}

fn all_pairs(i: u32, f: u32) {
    let fx = Fx { i, f };
    let g = fx.golden();
    let n = 1u64 << fx.width();
    let mut bad = Vec::new();
    for a in 0..n {
        for b in 0..n {
            check_pair(fx, &g, a, b, &mut bad);
        }
        for (name, got, want) in [("neg", g.neg(a), fx.neg(a)), ("abs", g.abs(a), fx.abs(a))] {
            if got != want && bad.len() < 12 {
                bad.push(format!(
                    "  {name} {}: golden {got:#x} reference {want:#x}",
                    fx.describe(a)
                ));
            }
        }
        assert_eq!(g.to_int(a), fx.int(a).to_i64().unwrap());
    }
    assert_none(&bad, &format!("every pair of fix:{i}:{f}"));
}

#[test]
fn all_pairs_fix_3_4() {
    all_pairs(3, 4);
}

#[test]
fn all_pairs_fix_2_5() {
    all_pairs(2, 5);
}

#[test]
fn all_pairs_fix_0_7() {
    all_pairs(0, 7);
}

fn random_pairs(i: u32, f: u32, seed: u64) {
    let fx = Fx { i, f };
    let g = fx.golden();
    let w = fx.width();
    let mask = (1u64 << w) - 1;
    // Edge values: 0, ±1 ulp, ±1, ±1/2 ± ulp, the extremes and their neighbours, every pair.
    let one = 1i64 << f;
    let mut edges: Vec<u64> = [
        0,
        1,
        -1,
        2,
        -2,
        3,
        one,
        -one,
        one + 1,
        one - 1,
        one / 2,
        -one / 2,
        one / 2 + 1,
        3 * one,
        -3 * one,
    ]
    .iter()
    .map(|&v| v as u64 & mask)
    .collect();
    let (min, max) = (1u64 << (w - 1), (1u64 << (w - 1)) - 1);
    edges.extend([
        min,
        min + 1,
        min + 2,
        max,
        max - 1,
        max - 2,
        max / 2,
        min + max / 2,
    ]);
    let mut bad = Vec::new();
    for &a in &edges {
        for &b in &edges {
            check_pair(fx, &g, a, b, &mut bad);
        }
    }
    // A million random pairs in two threads: uniform words; small magnitudes (where mul and
    // div round rather than saturate); and exact division ties, a / b = q/2 · 2^-F with q odd,
    // which need b to be a multiple of 2^(F+1) and never come up at random for wide formats.
    let threads = 2;
    let per = 1_000_000 / threads;
    let found: Vec<Vec<String>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let g = &g;
                s.spawn(move || {
                    let mut rng = Pcg64::seed_from_u64(seed + t as u64);
                    let mut bad = Vec::new();
                    for k in 0..per {
                        let (a, b) = match k % 4 {
                            0 | 1 => (rng.gen::<u64>() & mask, rng.gen::<u64>() & mask),
                            2 => {
                                let lim = 1i64 << (f + (i / 2)).min(w - 2);
                                let a = rng.gen_range(-lim..=lim) as u64 & mask;
                                let b = rng.gen_range(-lim..=lim) as u64 & mask;
                                (a, b)
                            }
                            _ => {
                                // b = m 2^(F+1), a = q m: a 2^F / b = q / 2.
                                let mlim = (1i64 << (i.max(1) - 1)) - 1;
                                let m = rng.gen_range(-mlim..=mlim).max(1);
                                let qlim = (1i64 << (w - 1)) / m.abs() - 1;
                                let q = rng.gen_range(-qlim..=qlim) | 1;
                                let (a, b) = (q * m, m << (f + 1));
                                assert!(fx.int(b as u64 & mask) == BigInt::from(b));
                                (a as u64 & mask, b as u64 & mask)
                            }
                        };
                        check_pair(fx, g, a, b, &mut bad);
                    }
                    bad
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    bad.extend(found.into_iter().flatten());
    assert_none(&bad, &format!("random pairs of fix:{i}:{f}"));
}

#[test]
fn random_pairs_fix_7_8() {
    random_pairs(7, 8, 78);
}

#[test]
fn random_pairs_fix_15_16() {
    random_pairs(15, 16, 1516);
}

// ---------------------------------------------------------------------------------------------
// The wide accumulator.

/// Runs a FixAcc over `ops` ((a, b) products, or words added when b is None) and compares
/// raw() after every step and the read-out at the end with the exact wrapped sum.
fn check_acc(fx: Fx, ops: &[(u64, Option<u64>)], what: &str) {
    let g = fx.golden();
    assert_eq!(
        g.acc_bits(),
        fx.acc_bits(),
        "acc_bits of fix:{}:{}",
        fx.i,
        fx.f
    );
    let mut acc = FixAcc::new(g);
    let mut exact = BigInt::zero();
    for (k, &(a, b)) in ops.iter().enumerate() {
        match b {
            Some(b) => {
                acc.add_product(a, b);
                exact += fx.int(a) * fx.int(b);
            }
            None => {
                acc.add_word(a);
                exact += fx.int(a) << fx.f;
            }
        }
        assert_eq!(
            BigInt::from(acc.raw()),
            fx.wrap(&exact),
            "{what}: raw accumulator after step {k} (exact sum {exact})"
        );
    }
    let want = fx.acc_word(&fx.wrap(&exact));
    assert_eq!(
        acc.to_word(),
        want,
        "{what}: read-out {} want {} (exact sum {exact} / 2^{})",
        fx.describe(acc.to_word()),
        fx.describe(want),
        2 * fx.f
    );
    if ops.iter().all(|(_, b)| b.is_some()) {
        let (a, b): (Vec<u64>, Vec<u64>) = ops.iter().map(|&(a, b)| (a, b.unwrap())).unzip();
        assert_eq!(g.dot_acc(&a, &b), want, "{what}: dot_acc");
    }
}

const ACC_FORMATS: [(u32, u32); 5] = [(3, 4), (0, 7), (7, 8), (15, 16), (2, 5)];

#[test]
fn fixacc_random_dot_products_are_exact_sums_rounded_once() {
    let mut rng = Pcg64::seed_from_u64(2024);
    for (i, f) in ACC_FORMATS {
        let fx = Fx { i, f };
        let mask = (1u64 << fx.width()) - 1;
        for t in 0..400 {
            let len = rng.gen_range(0..=300);
            let ops: Vec<(u64, Option<u64>)> = (0..len)
                .map(|_| (rng.gen::<u64>() & mask, Some(rng.gen::<u64>() & mask)))
                .collect();
            check_acc(fx, &ops, &format!("fix:{i}:{f} dot #{t} (len {len})"));
        }
        // Mixed products and words, small magnitudes so the sum often ends near a tie.
        for t in 0..200 {
            let len = rng.gen_range(1..=64);
            let lim = 1i64 << fx.f.min(fx.width() - 2);
            let ops: Vec<(u64, Option<u64>)> = (0..len)
                .map(|_| {
                    let a = rng.gen_range(-lim..=lim) as u64 & mask;
                    let b = rng.gen_range(-lim..=lim) as u64 & mask;
                    (a, rng.gen_bool(0.8).then_some(b))
                })
                .collect();
            check_acc(fx, &ops, &format!("fix:{i}:{f} mixed #{t}"));
        }
    }
}

#[test]
fn fixacc_worst_case_products_are_exact_then_wrap() {
    for (i, f) in ACC_FORMATS {
        let fx = Fx { i, f };
        let w = fx.width();
        let (min, max) = (1u64 << (w - 1), (1u64 << (w - 1)) - 1);
        // 2^16 products of min·min (the largest product) are exact: the documented guarantee.
        let n = 1usize << 16;
        let ops = vec![(min, Some(min)); n];
        let g = fx.golden();
        let mut acc = FixAcc::new(g);
        for &(a, b) in &ops {
            acc.add_product(a, b.unwrap());
        }
        let exact = BigInt::from(n) * fx.int(min) * fx.int(min);
        assert_eq!(
            BigInt::from(acc.raw()),
            exact,
            "fix:{i}:{f}: 2^16 min·min not exact"
        );
        check_acc(fx, &ops, &format!("fix:{i}:{f} 2^16 × min·min"));
        // One more and the register wraps (exactly at 2^(acc_bits-1)).
        let ops = vec![(min, Some(min)); 2 * n];
        check_acc(fx, &ops, &format!("fix:{i}:{f} 2^17 × min·min"));
        let ops: Vec<_> = (0..2 * n + 3)
            .map(|k| (if k % 3 == 0 { max } else { min }, Some(min)))
            .collect();
        check_acc(fx, &ops, &format!("fix:{i}:{f} mixed extremes"));
        let ops = vec![(min, Some(max)); 2 * n + 1];
        check_acc(fx, &ops, &format!("fix:{i}:{f} 2^17+1 × min·max"));
    }
}
