//! An independent high-precision reference for `lns:I:F`, built on `astro-float`.
//!
//! Nothing here uses the golden model's tables, `hiprec` or rounding code: words are decoded
//! by hand, exact logs are evaluated with `astro-float` at `PREC` bits, and every rounding
//! decision is made in integer arithmetic on `floor(t · 2^W)` (W = `FIX_BITS`) after checking
//! that the high-precision value lies more than 2^-`MARGIN_BITS` (in code units) from the
//! rounding boundary. A value that close to a boundary makes the test fail loudly rather than
//! guess.
//!
//! What is compared, exhaustively where the brief asks for it:
//! - add and sub: every pair of words (zero and NaN included) of `lns:5:6` and `lns:4:4`;
//! - mul and div: every pair, against exact code arithmetic;
//! - exp and ln: every word of both formats;
//! - from_f64: a million random f64s per format plus the f64 neighbours of every rounding
//!   boundary 2^((2j+1)/2^(F+1)); from_ratio on small ratios and powers of two;
//! - to_f64_exact: every word of `lns:5:6`;
//! - seed 000 §2.6.1 (1000 ones: naive, Kahan, pairwise) and the Taylor exp/ln of eqs. 2.6,
//!   2.7 over [-4, 4], with the figures printed (`cargo test -- --nocapture`).
//!
//! Layout: `reference` (the reference arithmetic), the exhaustive checks here, `conversions`
//! and `seed000`.

mod conversions;
mod reference;
mod seed000;

use std::sync::OnceLock;

use astro_float::{BigFloat, Consts, RoundingMode, Sign};
use lpgen_golden::Family;
use lpgen_golden::{Calc, LnsFormat, SumMode};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use reference::*;

/// Working precision of every astro-float operation (bits).
const PREC: usize = 256;
/// Fraction bits of the fixed-point image on which rounding decisions are made.
const FIX_BITS: u32 = 224;
/// A reference value must lie more than 2^-MARGIN_BITS code units from a rounding boundary.
const MARGIN_BITS: u32 = 200;
/// Fraction bits of the stored G values (floor of the high-precision value; rounding
/// boundaries are multiples of 2^-1, so flooring to this grid never changes a rounding).
const G_BITS: u32 = 100;

const RM: RoundingMode = RoundingMode::ToEven;

// ---------------------------------------------------------------------------------------------
// Exhaustive drivers.

/// Mismatches found by a sweep: how many, and the first few described.
#[derive(Default)]
struct Mismatches {
    count: u64,
    examples: Vec<String>,
}

impl Mismatches {
    fn push(&mut self, s: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < 12 {
            self.examples.push(s());
        }
    }

    fn merge(&mut self, other: Mismatches) {
        self.count += other.count;
        for e in other.examples {
            if self.examples.len() < 12 {
                self.examples.push(e);
            }
        }
    }

    fn assert_none(&self, what: &str) {
        assert!(
            self.count == 0,
            "{what}: {} mismatches (golden vs reference), first:\n{}",
            self.count,
            self.examples.join("\n")
        );
    }
}

/// Runs `row(a, &mut mismatches)` for a in 0..n, spread over the available threads.
fn par_rows(n: u64, row: impl Fn(u64, &mut Mismatches) + Sync) -> Mismatches {
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(8) as u64;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let row = &row;
                s.spawn(move || {
                    let mut m = Mismatches::default();
                    let mut a = t;
                    while a < n {
                        row(a, &mut m);
                        a += threads;
                    }
                    m
                })
            })
            .collect();
        let mut all = Mismatches::default();
        for h in hs {
            all.merge(h.join().unwrap());
        }
        all
    })
}

type BinOp = fn(&lpgen_golden::Lns, u64, u64) -> u64;

fn check_all_pairs(
    fmt: Fmt,
    name: &str,
    golden: BinOp,
    reference: impl Fn(u64, u64) -> u64 + Sync,
) {
    let ctx = fmt.golden().ctx();
    let n = fmt.words();
    let m = par_rows(n, |a, m| {
        for b in 0..n {
            let (got, want) = (golden(&ctx, a, b), reference(a, b));
            if got != want {
                m.push(|| {
                    format!(
                        "  {name} {} , {} : golden {} reference {}",
                        fmt.describe(a),
                        fmt.describe(b),
                        fmt.describe(got),
                        fmt.describe(want)
                    )
                });
            }
        }
    });
    m.assert_none(&format!(
        "{name} over all {n}x{n} pairs of lns:{}:{}",
        fmt.i, fmt.f
    ));
}

// ---------------------------------------------------------------------------------------------
// The reference itself.

#[test]
fn reference_self_checks() {
    let mut cc = consts();
    // to_fixed on known values, both signs.
    assert_eq!(
        to_fixed(&BigFloat::from_f64(0.75, PREC), 2),
        BigInt::from(3)
    );
    assert_eq!(
        to_fixed(&BigFloat::from_f64(-0.75, PREC), 1),
        BigInt::from(-2)
    );
    assert_eq!(to_fixed(&BigFloat::from_f64(1.5, PREC), 0), BigInt::from(1));
    assert_eq!(
        to_fixed(&BigFloat::from_f64(-1.5, PREC), 0),
        BigInt::from(-2)
    );
    assert_eq!(
        to_fixed(&BigFloat::from_f64(3.0, PREC), -1),
        BigInt::from(1)
    );
    // nearest: 2^6 log2 3 = 101.44..., 2^6 log2 (1/3) = -101.44...
    let l3 = BigFloat::from_word(3, PREC).log2(PREC, RM, &mut cc);
    let t = l3.mul(&BigFloat::from_word(64, PREC), PREC, RM);
    assert_eq!(nearest(&t, &|| "log2 3".into()), 101);
    assert_eq!(nearest(&t.neg(), &|| "-log2 3".into()), -101);
    // The f64 rounding of 2^(1/2) against the f64 value of SQRT_2 (correctly rounded).
    let pow = Pow2::new(1, &mut cc);
    let r2 = pow.get(1);
    assert_eq!(
        to_f64_checked(&r2, true, &|| "sqrt 2".into()),
        std::f64::consts::SQRT_2
    );
    assert_eq!(to_f64_checked(&pow.get(-6), true, &|| "2^-3".into()), 0.125);
    // Known G values of lns:5:6 (docs/formats.md and seed 000 Table 4.10).
    let r = Reference::get(LNS_5_6);
    let sb = |d: usize| r.round_g(0, r.sb[d]);
    let db = |d: usize| r.round_g(0, r.db[d]);
    assert_eq!(sb(0), 64);
    assert_eq!(sb(359), 2);
    assert_eq!((0..r.sb.len()).find(|&d| sb(d) == 0), Some(482));
    assert_eq!((1..r.db.len()).find(|&d| db(d) == 0), Some(483));
    assert!(db(1) < -6 * 64);
    // The boundary reference for conversion against a direct log2 on a few thousand values.
    let mut rng = Pcg64::seed_from_u64(7);
    for _ in 0..3000 {
        let x: f64 = 2f64.powf(rng.gen_range(-33.0..33.0));
        let t = BigFloat::from_f64(x, PREC).log2(PREC, RM, &mut cc).mul(
            &BigFloat::from_word(64, PREC),
            PREC,
            RM,
        );
        let c = nearest(&t, &|| format!("log2 {x:e}"));
        assert_eq!(
            r.convert_f64(x),
            LNS_5_6.finish(false, c as i128),
            "x = {x:e}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// add, sub, mul, div: every pair.

fn add_sub_all_pairs(fmt: Fmt) {
    let r = Reference::get(fmt);
    check_all_pairs(fmt, "add", lpgen_golden::Lns::add, |a, b| {
        r.add(a, b, false)
    });
    check_all_pairs(fmt, "sub", lpgen_golden::Lns::sub, |a, b| r.add(a, b, true));
}

#[test]
fn add_sub_all_pairs_lns_5_6() {
    add_sub_all_pairs(LNS_5_6);
}

#[test]
fn add_sub_all_pairs_lns_4_4() {
    add_sub_all_pairs(LNS_4_4);
}

#[test]
fn x_minus_x_is_exactly_zero_and_reference_rules_hold() {
    // Independent of the G tables: x - x, x + (-x), 0 + x, NaN, for every word.
    for fmt in [LNS_5_6, LNS_4_4] {
        let l = fmt.golden().ctx();
        let (zero, nan) = (fmt.encode(Word::Zero), fmt.encode(Word::NaN));
        for a in 0..fmt.words() {
            let want = if a == nan { nan } else { zero };
            assert_eq!(l.sub(a, a), want, "{}", fmt.describe(a));
            assert_eq!(l.add(a, l.neg(a)), want, "{}", fmt.describe(a));
            assert_eq!(l.add(zero, a), a, "0 + {}", fmt.describe(a));
            assert_eq!(l.add(a, nan), nan);
            assert_eq!(l.mul(a, nan), nan);
            assert_eq!(l.div(a, zero), nan, "{} / 0", fmt.describe(a));
        }
    }
}

fn mul_div_all_pairs(fmt: Fmt) {
    let r = Reference::get(fmt);
    check_all_pairs(fmt, "mul", lpgen_golden::Lns::mul, |a, b| r.mul(a, b));
    check_all_pairs(fmt, "div", lpgen_golden::Lns::div, |a, b| r.div(a, b));
}

#[test]
fn mul_div_all_pairs_lns_5_6() {
    mul_div_all_pairs(LNS_5_6);
}

#[test]
fn mul_div_all_pairs_lns_4_4() {
    mul_div_all_pairs(LNS_4_4);
}

// ---------------------------------------------------------------------------------------------
// exp and ln: every word.

/// Correctly rounded e^x for every word of `fmt`, indexed by word.
fn reference_exp(fmt: Fmt, cc: &mut Consts) -> Vec<u64> {
    let pow = Pow2::new(fmt.f, cc);
    // log2(e^x) · 2^F = x · 2^F / ln 2.
    let k = cc.ln_2(PREC + 64, RM).reciprocal(PREC + 64, RM).mul(
        &BigFloat::from_u64(1 << fmt.f, PREC),
        PREC,
        RM,
    );
    (0..fmt.words())
        .map(|w| match fmt.decode(w) {
            Word::NaN => fmt.encode(Word::NaN),
            Word::Zero => fmt.encode(Word::Num {
                neg: false,
                code: 0,
            }),
            Word::Num { neg, code } => {
                let mut t = pow.get(code).mul(&k, PREC, RM);
                if neg {
                    t = t.neg();
                }
                // Far outside the range the rounding cannot matter (and 2^40 is the limit
                // that `nearest` resolves).
                let lim = BigFloat::from_u64(1 << 30, PREC);
                if t.cmp(&lim) == Some(1) {
                    return fmt.finish(false, i128::MAX);
                }
                if t.cmp(&lim.neg()) == Some(-1) {
                    return fmt.encode(Word::Zero);
                }
                let c = nearest(&t, &|| format!("exp {}", fmt.describe(w)));
                fmt.finish(false, c as i128)
            }
        })
        .collect()
}

/// Correctly rounded ln x for every word of `fmt`, indexed by word.
fn reference_ln(fmt: Fmt, cc: &mut Consts) -> Vec<u64> {
    let ln2 = cc.ln_2(PREC + 64, RM);
    let sf = BigFloat::from_u64(1 << fmt.f, PREC);
    let offset = BigFloat::from_i64(-((fmt.f as i64) << fmt.f), PREC);
    (0..fmt.words())
        .map(|w| match fmt.decode(w) {
            Word::NaN | Word::Zero | Word::Num { neg: true, .. } => fmt.encode(Word::NaN),
            Word::Num { code: 0, .. } => fmt.encode(Word::Zero), // ln 1 = 0
            Word::Num { code, .. } => {
                // ln x = code · ln2 / 2^F; its log2 · 2^F = 2^F log2(|code| ln2) - F 2^F.
                let v = BigFloat::from_i64(code.abs(), PREC).mul(&ln2, PREC + 64, RM);
                let t = v
                    .log2(PREC, RM, cc)
                    .mul(&sf, PREC, RM)
                    .add(&offset, PREC, RM);
                let c = nearest(&t, &|| format!("ln {}", fmt.describe(w)));
                fmt.finish(code < 0, c as i128)
            }
        })
        .collect()
}

fn exp_ln_every_word(fmt: Fmt) {
    let mut cc = consts();
    let l = fmt.golden().ctx();
    let (exp, ln) = (reference_exp(fmt, &mut cc), reference_ln(fmt, &mut cc));
    let mut m = Mismatches::default();
    for w in 0..fmt.words() {
        for (name, got, want) in [
            ("exp", l.exp(w), exp[w as usize]),
            ("ln", l.ln(w), ln[w as usize]),
        ] {
            if got != want {
                m.push(|| {
                    format!(
                        "  {name} {}: golden {} reference {}",
                        fmt.describe(w),
                        fmt.describe(got),
                        fmt.describe(want)
                    )
                });
            }
        }
    }
    m.assert_none(&format!(
        "exp/ln over every word of lns:{}:{}",
        fmt.i, fmt.f
    ));
}

#[test]
fn exp_ln_every_word_lns_5_6() {
    exp_ln_every_word(LNS_5_6);
}

#[test]
fn exp_ln_every_word_lns_4_4() {
    exp_ln_every_word(LNS_4_4);
}

// ---------------------------------------------------------------------------------------------
