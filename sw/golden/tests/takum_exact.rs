//! The takum family against a reference written here from the definition's own words
//! (Hunhold 2024, linear takums; docs/formats.md), in exact rationals:
//! - a word is decoded bit by bit: sign, then D, R2 R1 R0, r = D ? R : 7 − R characteristic
//!   bits C (bits past the word's end read 0), the rest the mantissa M of p bits;
//!   c = D ? 2^r − 1 + C : −2^(r+1) + 1 + C; value (1 + M/2^p)·2^c; a negative word is the
//!   negation of its two's-complement negation's value; 0 is zero and 1000…0 NaR;
//! - rounding cuts the infinitely long takum of the exact value to N bits, to nearest, ties
//!   to the even word: the cut between words w and w + 1 is the value of the (N+1)-bit word
//!   2w + 1 (the string continued by a one); a nonzero value never rounds to 0 or NaR.
//!
//! Every pair of `takum:8` words for +, −, ·, ÷, every word's √, conversions between widths,
//! random `takum:16` pairs and quire dot products.

use std::cmp::Ordering;

use lpgen_golden::{Bits, Calc, Format, SumMode};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// An exact rational n/d, d > 0.
#[derive(Clone, Debug)]
struct Q {
    n: BigInt,
    d: BigInt,
}

impl Q {
    fn int(n: i64) -> Q {
        Q {
            n: n.into(),
            d: BigInt::one(),
        }
    }
    fn pow2(e: i64) -> Q {
        let p = BigInt::one() << e.unsigned_abs();
        if e >= 0 {
            Q {
                n: p,
                d: BigInt::one(),
            }
        } else {
            Q {
                n: BigInt::one(),
                d: p,
            }
        }
    }
    fn add(&self, o: &Q) -> Q {
        Q {
            n: &self.n * &o.d + &o.n * &self.d,
            d: &self.d * &o.d,
        }
    }
    fn neg(&self) -> Q {
        Q {
            n: -&self.n,
            d: self.d.clone(),
        }
    }
    fn mul(&self, o: &Q) -> Q {
        Q {
            n: &self.n * &o.n,
            d: &self.d * &o.d,
        }
    }
    fn div(&self, o: &Q) -> Q {
        let (n, d) = (&self.n * &o.d, &self.d * &o.n);
        if d.is_negative() {
            Q { n: -n, d: -d }
        } else {
            Q { n, d }
        }
    }
    fn cmp(&self, o: &Q) -> Ordering {
        (&self.n * &o.d).cmp(&(&o.n * &self.d))
    }
}

/// The value of an `n`-bit word by the definition; `None` for NaR.
fn decode(w: u64, n: u32) -> Option<Q> {
    if w == 0 {
        return Some(Q::int(0));
    }
    if w == 1 << (n - 1) {
        return None;
    }
    if w >> (n - 1) == 1 {
        let neg = (1u64 << n) - w;
        return decode(neg, n).map(|q| q.neg());
    }
    // Bit i of the string after the sign, i = 0 first; past the end, 0.
    let bit = |i: u32| -> i64 {
        if i + 1 < n {
            ((w >> (n - 2 - i)) & 1) as i64
        } else {
            0
        }
    };
    let d = bit(0);
    let reg = 4 * bit(1) + 2 * bit(2) + bit(3);
    let r = if d == 1 { reg } else { 7 - reg } as u32;
    let c_field = (0..r).fold(0i64, |acc, i| 2 * acc + bit(4 + i));
    let c = if d == 1 {
        (1i64 << r) - 1 + c_field
    } else {
        -(1i64 << (r + 1)) + 1 + c_field
    };
    let p = n as i64 - 5 - r as i64;
    let m = (0..p.max(0) as u32).fold(0i64, |acc, i| 2 * acc + bit(4 + r + i));
    let one_plus_f = Q::int(1).add(&Q::int(m).mul(&Q::pow2(-p.max(0))));
    Some(one_plus_f.mul(&Q::pow2(c)))
}

/// The rounding of one width: each positive word's value and each cut above it.
struct Rounding {
    n: u32,
    values: Vec<Q>,
    cuts: Vec<Q>,
}

impl Rounding {
    fn new(n: u32) -> Rounding {
        let maxpos = (1u64 << (n - 1)) - 1;
        let values: Vec<Q> = (0..=maxpos).map(|w| decode(w, n).unwrap()).collect();
        let cuts = (0..maxpos)
            .map(|w| decode(2 * w + 1, n + 1).unwrap())
            .collect();
        Rounding { n, values, cuts }
    }

    /// The word nearest to the exact x (`above(q)` = x's order against q), by the rule above.
    fn round(&self, neg: bool, zero: bool, above: impl Fn(&Q) -> Ordering) -> u64 {
        if zero {
            return 0;
        }
        let maxpos = self.values.len() as u64 - 1;
        // The largest w ≥ 1 with value(w) ≤ |x| (0 when |x| < minpos).
        let w = self.values[1..].partition_point(|v| above(v) != Ordering::Less) as u64;
        let u = if w == 0 {
            1
        } else if w == maxpos {
            maxpos
        } else {
            match above(&self.cuts[w as usize]) {
                Ordering::Less => w,
                Ordering::Greater => w + 1,
                Ordering::Equal => w + (w & 1),
            }
        };
        let word = if neg { (1u64 << self.n) - u } else { u };
        word & ((1u64 << self.n) - 1)
    }

    /// The word nearest to the exact rational x.
    fn of(&self, x: &Q) -> u64 {
        let mag = Q {
            n: x.n.abs(),
            d: x.d.clone(),
        };
        self.round(x.n.is_negative(), x.n.is_zero(), |q| mag.cmp(q))
    }
}

fn takum(n: u32) -> Format {
    format!("takum:{n}").parse().unwrap()
}

/// Ratios below minpos and above maxpos saturate; the values are strictly increasing.
#[test]
fn words_order_like_their_values_and_decode_by_the_definition() {
    for n in [6, 8, 12, 16] {
        let c = takum(n).calc();
        let r = Rounding::new(n);
        for w in 1..r.values.len() {
            assert_eq!(
                r.values[w - 1].cmp(&r.values[w]),
                Ordering::Less,
                "n={n} w={w}"
            );
        }
        for w in 0..1u64 << n {
            match decode(w, n) {
                None => assert!(c.is_nan(w)),
                Some(q) => {
                    let v = c.to_f64(w);
                    // Every takum of up to 32 bits is an f64; compare exactly.
                    let got = exact_f64(v);
                    assert_eq!(got.cmp(&q), Ordering::Equal, "takum:{n} word {w:#x}: {v}");
                }
            }
        }
    }
}

fn exact_f64(v: f64) -> Q {
    if v == 0.0 {
        return Q::int(0);
    }
    let bits = v.abs().to_bits();
    let (e, m) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
    let (m, e) = if e == 0 {
        (m, -1074)
    } else {
        (m | 1 << 52, e - 1075)
    };
    let q = Q::int(m as i64).mul(&Q::pow2(e));
    if v < 0.0 {
        q.neg()
    } else {
        q
    }
}

fn check_pairs(n: u32, pairs: impl Iterator<Item = (u64, u64)>) -> usize {
    let c = takum(n).calc();
    let r = Rounding::new(n);
    let nar = 1u64 << (n - 1);
    let mut checked = 0;
    for (a, b) in pairs {
        let (x, y) = (decode(a, n), decode(b, n));
        let ops: [(&str, Bits, Option<Q>); 4] = match (&x, &y) {
            (Some(x), Some(y)) => [
                ("add", c.add(a, b), Some(x.add(y))),
                ("sub", c.sub(a, b), Some(x.add(&y.neg()))),
                ("mul", c.mul(a, b), Some(x.mul(y))),
                ("div", c.div(a, b), (!y.n.is_zero()).then(|| x.div(y))),
            ],
            _ => [
                ("add", c.add(a, b), None),
                ("sub", c.sub(a, b), None),
                ("mul", c.mul(a, b), None),
                ("div", c.div(a, b), None),
            ],
        };
        for (op, got, exact) in ops {
            let want = exact.map_or(nar, |q| r.of(&q));
            assert_eq!(got, want, "takum:{n} {a:#x} {op} {b:#x}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_pair_of_takum8_words_rounds_by_the_definition() {
    let all = (0..256u64).flat_map(|a| (0..256u64).map(move |b| (a, b)));
    assert_eq!(check_pairs(8, all), 4 * 65536);
}

#[test]
fn random_takum16_pairs_round_by_the_definition() {
    let mut rng = Pcg64::seed_from_u64(16);
    let pairs: Vec<(u64, u64)> = (0..20_000)
        .map(|_| (rng.gen_range(0..1u64 << 16), rng.gen_range(0..1u64 << 16)))
        .collect();
    check_pairs(16, pairs.into_iter());
}

#[test]
fn square_roots_round_by_the_definition() {
    for n in [8, 12] {
        let c = takum(n).calc();
        let r = Rounding::new(n);
        for w in 0..1u64 << n {
            let want = match decode(w, n) {
                Some(x) if !x.n.is_negative() => {
                    // √x against q: x against q².
                    r.round(false, x.n.is_zero(), |q| x.cmp(&q.mul(q)))
                }
                _ => 1 << (n - 1),
            };
            assert_eq!(c.sqrt(w), want, "takum:{n} sqrt {w:#x}");
        }
    }
}

#[test]
fn conversions_between_widths_round_by_the_definition() {
    for (from, to) in [(16, 8), (12, 16), (8, 6)] {
        let (f, t) = (takum(from).calc(), takum(to).calc());
        let r = Rounding::new(to);
        for w in 0..1u64 << from {
            let want = decode(w, from).map_or(1 << (to - 1), |q| r.of(&q));
            let got = f.convert_to(&t, w).unwrap();
            assert_eq!(got, want, "takum:{from} {w:#x} to takum:{to}");
        }
    }
}

#[test]
fn f64_inputs_round_by_the_definition() {
    let mut rng = Pcg64::seed_from_u64(8);
    for n in [8, 16, 32] {
        let c = takum(n).calc();
        let r = (n <= 16).then(|| Rounding::new(n));
        for _ in 0..5_000 {
            let x = f64::from_bits(rng.gen::<u64>());
            if !x.is_finite() {
                assert_eq!(c.from_f64(x), 1 << (n - 1));
                continue;
            }
            if let Some(r) = &r {
                assert_eq!(c.from_f64(x), r.of(&exact_f64(x)), "takum:{n} {x:e}");
            } else {
                // Round trip: every takum:32 word is its own f64.
                let w = c.from_f64(x);
                assert_eq!(c.from_f64(c.to_f64(w)), w);
            }
        }
    }
}

#[test]
fn quire_dot_products_round_the_exact_sum_once() {
    let mut rng = Pcg64::seed_from_u64(4);
    for n in [8, 16] {
        let c = takum(n).calc();
        let r = Rounding::new(n);
        let nar = 1u64 << (n - 1);
        for _ in 0..2_000 {
            let k = rng.gen_range(1..40);
            // A quarter of the words at the extremes: the quire must hold minpos² and maxpos².
            let corners = [1, nar - 1, nar + 1, (1 << n) - 1, c.one()];
            let word = |rng: &mut Pcg64| loop {
                let w = if rng.gen_range(0..4) == 0 {
                    corners[rng.gen_range(0..corners.len())]
                } else {
                    rng.gen_range(0..1u64 << n)
                };
                if w != nar {
                    break w;
                }
            };
            let a: Vec<u64> = (0..k).map(|_| word(&mut rng)).collect();
            let b: Vec<u64> = (0..k).map(|_| word(&mut rng)).collect();
            let exact = a.iter().zip(&b).fold(Q::int(0), |s, (&x, &y)| {
                s.add(&decode(x, n).unwrap().mul(&decode(y, n).unwrap()))
            });
            let got = c.dot(SumMode::Quire, &a, &b).unwrap();
            assert_eq!(got, r.of(&exact), "takum:{n} {a:x?}·{b:x?}");
        }
        assert_eq!(c.dot(SumMode::Quire, &[nar], &[c.one()]).unwrap(), nar);
        // minpos² is far below minpos: the exact sum saturates to ±minpos, never 0.
        assert_eq!(c.dot(SumMode::Quire, &[1], &[1]).unwrap(), 1);
        let minneg = (1 << n) - 1;
        assert_eq!(c.dot(SumMode::Quire, &[1], &[minneg]).unwrap(), minneg);
        // minpos·minpos − minpos·w2 differs only in the products' lowest bits: a quire that
        // drops them gives 0, the exact sum is just below zero.
        let (a, b) = ([1, 1], [1, (1 << n) - 2]);
        assert_eq!(c.dot(SumMode::Quire, &a, &b).unwrap(), minneg, "takum:{n}");
    }
}

#[test]
fn the_family_is_registered_and_refuses_what_it_lacks() {
    let f = takum(16);
    assert_eq!(f.to_string(), "takum:16");
    assert_eq!(f.width(), 16);
    for bad in ["takum:5", "takum:33", "takum", "takum:16:2", "takum:16:u"] {
        let e = bad.parse::<Format>().unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("takum"), "{bad}: {e}");
    }
    let fdpa = "fdpa:hopper".parse::<SumMode>().unwrap();
    assert!(f.calc().dot(fdpa, &[0], &[0]).is_err());
    assert!(matches!(f.calc(), Calc::Takum(_)));
}
