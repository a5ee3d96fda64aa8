//! The golden posits against an independent exact reference written from the definition of a
//! posit, sharing no code with the golden model:
//!
//! - a posit bit pattern is decoded to an exact dyadic m·2^e by reading its sign, regime,
//!   exponent and fraction bits one at a time;
//! - a + b, a - b and a·b are exact dyadics, a / b an exact ratio (compared by
//!   cross-multiplication);
//! - an exact value x is rounded by finding the two adjacent N-bit posits around it (a binary
//!   search over all posits in two's-complement order) and comparing x with their bit-string
//!   midpoint, the (N+1)-bit posit `(lower << 1) | 1` of the same es; a tie goes to the even
//!   pattern. Beyond ±maxpos the result saturates; between 0 and ±minpos it is ±minpos, except
//!   in the `:u` variant, where 0 is one more rounding target (midpoint: the (N+1)-bit minpos).
//!
//! Checked: every operand pair of every small format, quire read-outs and contents of random
//! dot products, `from_f64` and `from_ratio`. The seed is fixed so that a failure reproduces;
//! `LPGEN_SEED=<u64>` picks another one.
//!
//! Layout: `exact` (dyadic rationals), `reference` (posits from the definition), the operand
//! pairs here, `quire` and `conversions`.

mod conversions;
mod exact;
mod quire;
mod reference;

use std::borrow::Cow;
use std::cmp::Ordering;

use lpgen_golden::Family;
use lpgen_golden::{PositFormat, PositStandard, Quire};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use exact::{Dyadic, Exact};
use reference::{decode, Reference};

fn seed() -> u64 {
    std::env::var("LPGEN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_e8ac_7000)
}

// ---------------------------------------------------------------------------------------------
// Operations.

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

const OPS: [Op; 4] = [Op::Add, Op::Sub, Op::Mul, Op::Div];

/// The exact result of `a op b`.
fn exact_op(r: &Reference, op: Op, a: u64, b: u64) -> Exact {
    let (Some(x), Some(y)) = (r.operand(a), r.operand(b)) else {
        return Exact::NaR;
    };
    match op {
        Op::Add => Exact::Dyadic(x.add(&y)),
        Op::Sub => Exact::Dyadic(x.sub(&y)),
        Op::Mul => Exact::Dyadic(x.mul(&y)),
        Op::Div if y.is_zero() => Exact::NaR,
        Op::Div => Exact::ratio(x.into_owned(), y.into_owned()),
    }
}

fn golden_op(fmt: &PositFormat, op: Op, a: u64, b: u64) -> u64 {
    match op {
        Op::Add => fmt.add(a, b),
        Op::Sub => fmt.sub(a, b),
        Op::Mul => fmt.mul(a, b),
        Op::Div => fmt.div(a, b),
    }
}

fn hex(fmt: &PositFormat, p: u64) -> String {
    format!("0x{p:0w$x}", w = fmt.n.div_ceil(4) as usize)
}

// ---------------------------------------------------------------------------------------------
// Every operand pair.

/// Checks the operand pairs `pair(0) .. pair(count - 1)` for all four operations, on all cores.
fn check_pairs(fmt: PositFormat, what: &str, count: u64, pair: impl Fn(u64) -> (u64, u64) + Sync) {
    let r = Reference::new(&fmt);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (r, pair) = (&r, &pair);
                s.spawn(move || {
                    let mut out = Vec::new();
                    for (a, b) in (t..count).step_by(threads as usize).map(pair) {
                        for op in OPS {
                            let want = r.round(&exact_op(r, op, a, b));
                            let got = golden_op(&fmt, op, a, b);
                            if got != want && out.len() < 8 {
                                out.push(format!(
                                    "  {op:?}({}, {}) = {}, reference {}   ({} {op:?} {} = {}, reference {})",
                                    hex(&fmt, a),
                                    hex(&fmt, b),
                                    hex(&fmt, got),
                                    hex(&fmt, want),
                                    fmt.to_f64(a),
                                    fmt.to_f64(b),
                                    fmt.to_f64(got),
                                    fmt.to_f64(want),
                                ));
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{fmt} ({what}, seed {:#x}): results differ from the exact reference:\n{}",
        seed(),
        failures.join("\n")
    );
}

/// Checks every operand pair of `fmt` for all four operations; returns the number of pairs.
fn check_all_pairs(fmt: PositFormat) -> u64 {
    let words = 1u64 << fmt.n;
    check_pairs(fmt, "every pair", words * words, |j| {
        (j >> fmt.n, j & fmt.mask())
    });
    words * words
}

/// Random operand pairs: uniform patterns, special values and their neighbours, and nearby
/// operands (which cancel in add and sub).
fn check_random_pairs(fmt: PositFormat, count: usize) {
    let mut rng = Pcg64::seed_from_u64(seed() ^ 0x9a1 ^ u64::from(fmt.n << 8 | fmt.es));
    let mask = fmt.mask();
    let specials: Vec<u64> = [0, 1, fmt.one(), fmt.maxpos(), fmt.nar()]
        .iter()
        .flat_map(|&c| [c.wrapping_sub(1), c, c + 1])
        .flat_map(|p| [p & mask, p.wrapping_neg() & mask])
        .collect();
    let operand = |rng: &mut Pcg64| {
        if rng.gen_ratio(1, 16) {
            specials[rng.gen_range(0..specials.len())]
        } else {
            rng.gen::<u64>() & mask
        }
    };
    let pairs: Vec<(u64, u64)> = (0..count)
        .map(|_| {
            let a = operand(&mut rng);
            let b = match rng.gen_range(0..4) {
                0 => a.wrapping_add(rng.gen_range(0..64)).wrapping_sub(32) & mask,
                1 => {
                    a.wrapping_neg()
                        .wrapping_add(rng.gen_range(0..64))
                        .wrapping_sub(32)
                        & mask
                }
                _ => operand(&mut rng),
            };
            (a, b)
        })
        .collect();
    check_pairs(fmt, "random pairs", count as u64, |j| pairs[j as usize]);
}

fn draft(n: u32, es: u32) -> PositFormat {
    PositFormat::new(n, es, PositStandard::Draft2017, false).unwrap()
}

fn draft_u(n: u32, es: u32) -> PositFormat {
    PositFormat::new(n, es, PositStandard::Draft2017, true).unwrap()
}

fn std2022(n: u32, underflow: bool) -> PositFormat {
    PositFormat::new(n, 2, PositStandard::Std2022, underflow).unwrap()
}

#[test]
fn every_pair_of_every_draft_format_up_to_8_bits() {
    let mut pairs = 0;
    for n in 3..=8 {
        for es in 0..=(n - 3).min(5) {
            pairs += check_all_pairs(draft(n, es));
        }
    }
    assert_eq!(
        pairs,
        64 + 2 * 256 + 3 * 1024 + 4 * 4096 + 5 * 16384 + 6 * 65536
    );
}

#[test]
fn every_pair_of_posit_9() {
    for es in 0..=3 {
        check_all_pairs(draft(9, es));
    }
}

#[test]
fn every_pair_of_posit_10_es_0_and_1() {
    for es in 0..=1 {
        check_all_pairs(draft(10, es));
    }
}

#[test]
fn every_pair_of_posit_10_es_2_and_3() {
    for es in 2..=3 {
        check_all_pairs(draft(10, es));
    }
}

#[test]
fn every_pair_of_the_2022_standard_up_to_10_bits() {
    for n in 3..=10 {
        check_all_pairs(std2022(n, false));
    }
}

#[test]
fn every_pair_of_the_underflow_variant() {
    for n in [4, 5, 6, 8] {
        for es in 0..=(n - 3).min(2) {
            check_all_pairs(draft_u(n, es));
        }
    }
    check_all_pairs(std2022(8, true));
    check_all_pairs(std2022(6, true));
}

#[test]
fn random_pairs_of_wider_formats() {
    for fmt in [
        draft(32, 0),
        draft(32, 2),
        draft(32, 5),
        std2022(32, true),
        draft(28, 1),
        draft(24, 3),
        draft(20, 4),
        draft_u(17, 0),
    ] {
        check_random_pairs(fmt, 5_000);
    }
    for fmt in [
        draft(16, 0),
        draft(16, 1),
        std2022(16, false),
        draft(13, 5),
        draft_u(12, 2),
    ] {
        check_random_pairs(fmt, 100_000);
    }
}

// ---------------------------------------------------------------------------------------------
// The reference itself.

#[test]
fn reference_decodes_known_values() {
    let d = |n, es, p| decode(n, es, p).unwrap();
    // The worked example of the posit literature: posit(16, 3) 0b0000110111011101 is
    // 256^-3 · 2^5 · (1 + 221/256) = 477 · 2^-27.
    assert_eq!(
        d(16, 3, 0b0000_1101_1101_1101),
        Dyadic::new(477.into(), -27)
    );
    assert_eq!(d(8, 0, 0x40), Dyadic::int(1));
    assert_eq!(d(8, 0, 0x7f), Dyadic::int(64));
    assert_eq!(d(8, 0, 0x01), Dyadic::pow2(-6));
    assert_eq!(d(8, 0, 0xc0), Dyadic::int(-1));
    assert_eq!(d(8, 0, 0x81), Dyadic::int(-64));
    assert_eq!(d(8, 0, 0x60), Dyadic::int(2));
    assert_eq!(d(8, 0, 0x50), Dyadic::new(3.into(), -1));
    assert_eq!(d(32, 2, 0x7fff_ffff), Dyadic::pow2(120));
    assert_eq!(d(32, 2, 1), Dyadic::pow2(-120));
    assert_eq!(d(32, 2, 2), Dyadic::pow2(-116));
    assert_eq!(d(32, 2, 3), Dyadic::pow2(-114));
    assert_eq!(d(3, 2, 1), Dyadic::pow2(-4));
    assert_eq!(d(3, 2, 3), Dyadic::pow2(4));
    // The exponent bits cut off by the end of the word count as 0.
    assert_eq!(d(6, 2, 0b000011), Dyadic::pow2(-12 + 2));
    assert!(decode(8, 0, 0x80).is_none());
    assert!(decode(8, 0, 0).unwrap().is_zero());
}

#[test]
fn reference_values_increase_in_twos_complement_order() {
    // The binary search rests on this; the midpoints must lie strictly between neighbours.
    for (n, es) in [(3, 0), (5, 2), (8, 0), (8, 5), (10, 3), (12, 2), (16, 1)] {
        for fmt in [draft(n, es), draft_u(n, es)] {
            let r = Reference::new(&fmt);
            let (values, mids) = r.table.as_ref().unwrap();
            for i in 0..values.len() - 1 {
                assert_eq!(values[i].cmp(&mids[i]), Ordering::Less, "{fmt} {i}");
                assert_eq!(mids[i].cmp(&values[i + 1]), Ordering::Less, "{fmt} {i}");
            }
        }
    }
}

#[test]
fn reference_rounds_known_cases() {
    let fmt = draft(8, 0);
    let r = Reference::new(&fmt);
    let round = |x: Dyadic| r.round(&Exact::Dyadic(x));
    // 1 + 1/64 lies half way between 1 (0x40) and 1 + 1/32 (0x41): ties to even.
    assert_eq!(round(Dyadic::new(65.into(), -6)), 0x40);
    // 3 + 1/16 between 3 (0x68) and 3.125 (0x69), 3 + 3/16 between 0x69 and 3.25 (0x6a).
    assert_eq!(round(Dyadic::new(49.into(), -4)), 0x68);
    assert_eq!(round(Dyadic::new(51.into(), -4)), 0x6a);
    assert_eq!(
        round(Dyadic::new(50.into(), -4).add(&Dyadic::pow2(-20))),
        0x69
    );
    assert_eq!(round(Dyadic::int(1000)), 0x7f);
    assert_eq!(round(Dyadic::int(-1000)), 0x81);
    assert_eq!(round(Dyadic::pow2(-100)), 0x01);
    assert_eq!(round(Dyadic::pow2(-100).neg()), 0xff);
    // Between 32 (0x7e) and 64 (0x7f) the bit-string midpoint is 0x7e·2+1 of posit:9:0, 48.
    assert_eq!(round(Dyadic::int(48)), 0x7e);
    assert_eq!(round(Dyadic::int(49)), 0x7f);
    let u = Reference::new(&draft_u(8, 0));
    let round_u = |x: Dyadic| u.round(&Exact::Dyadic(x));
    // The :u variant: minpos/2 = 2^-7 is the midpoint between 0 and minpos, a tie, to 0.
    assert_eq!(round_u(Dyadic::pow2(-7)), 0);
    assert_eq!(round_u(Dyadic::pow2(-7).neg()), 0);
    assert_eq!(round_u(Dyadic::new(129.into(), -14)), 0x01);
    assert_eq!(round_u(Dyadic::new((-129).into(), -14)), 0xff);
    assert_eq!(round_u(Dyadic::new(127.into(), -14)), 0);
    // A quotient: 1/3 lies between 0x15 (0.328125) and 0x16 (0.34375), below their midpoint.
    let third = Exact::ratio(Dyadic::int(1), Dyadic::int(3));
    assert_eq!(r.round(&third), 0x15);
    assert_eq!(
        r.round(&Exact::ratio(Dyadic::int(1), Dyadic::int(-3))),
        0xeb
    );
}

#[test]
fn golden_to_f64_is_the_exact_value() {
    for (n, es, std) in [
        (8, 0, PositStandard::Draft2017),
        (10, 3, PositStandard::Draft2017),
        (12, 5, PositStandard::Draft2017),
        (16, 1, PositStandard::Draft2017),
        (16, 2, PositStandard::Std2022),
    ] {
        let fmt = PositFormat::new(n, es, std, false).unwrap();
        for p in 0..1u64 << n {
            match decode(n, es, p) {
                None => assert!(fmt.to_f64(p).is_nan()),
                Some(v) => assert_eq!(Dyadic::from_f64(fmt.to_f64(p)), v, "{fmt} {p:#x}"),
            }
        }
    }
    let mut rng = Pcg64::seed_from_u64(seed() ^ 0xf64);
    for (n, es) in [(32, 2), (32, 5), (24, 4), (20, 0)] {
        let fmt = draft(n, es);
        for _ in 0..100_000 {
            let p = rng.gen::<u64>() & fmt.mask();
            if p != fmt.nar() {
                let want = decode(n, es, p).unwrap();
                assert_eq!(
                    Dyadic::from_f64(fmt.to_f64(p)),
                    want,
                    "{fmt} {p:#x} (seed {:#x})",
                    seed()
                );
            }
        }
    }
}
