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

use std::borrow::Cow;
use std::cmp::Ordering;

use lpgen_golden::{PositFormat, PositStandard, Quire};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn seed() -> u64 {
    std::env::var("LPGEN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_e8ac_7000)
}

// ---------------------------------------------------------------------------------------------
// Exact dyadic rationals.

/// The exact number m·2^e, kept with m odd (or m = 0 and e = 0), so equal values are equal
/// structs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dyadic {
    m: BigInt,
    e: i64,
}

impl Dyadic {
    fn new(m: BigInt, e: i64) -> Dyadic {
        match m.trailing_zeros() {
            None => Dyadic {
                m: BigInt::zero(),
                e: 0,
            },
            Some(tz) => Dyadic {
                m: m >> tz,
                e: e + tz as i64,
            },
        }
    }

    fn zero() -> Dyadic {
        Dyadic::new(BigInt::zero(), 0)
    }

    fn int(i: i64) -> Dyadic {
        Dyadic::new(BigInt::from(i), 0)
    }

    /// 2^e.
    fn pow2(e: i64) -> Dyadic {
        Dyadic::new(BigInt::one(), e)
    }

    fn is_zero(&self) -> bool {
        self.m.is_zero()
    }

    fn is_negative(&self) -> bool {
        self.m.sign() == Sign::Minus
    }

    fn neg(&self) -> Dyadic {
        Dyadic {
            m: -&self.m,
            e: self.e,
        }
    }

    fn add(&self, o: &Dyadic) -> Dyadic {
        let e = self.e.min(o.e);
        Dyadic::new(
            (&self.m << (self.e - e) as u64) + (&o.m << (o.e - e) as u64),
            e,
        )
    }

    fn sub(&self, o: &Dyadic) -> Dyadic {
        self.add(&o.neg())
    }

    fn mul(&self, o: &Dyadic) -> Dyadic {
        Dyadic::new(&self.m * &o.m, self.e + o.e)
    }

    /// The exact value of a finite f64, from its bits.
    fn from_f64(x: f64) -> Dyadic {
        assert!(x.is_finite());
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let frac = (bits & ((1 << 52) - 1)) as i64;
        let (m, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp - 1075)
        };
        Dyadic::new(BigInt::from(if x < 0.0 { -m } else { m }), e)
    }

    /// The value as an integer count of 2^-frac_bits, if it is one.
    fn scaled(&self, frac_bits: u32) -> Option<BigInt> {
        let sh = self.e + frac_bits as i64;
        (sh >= 0).then(|| &self.m << sh as u64)
    }

    fn cmp(&self, o: &Dyadic) -> Ordering {
        let rank = |s: Sign| match s {
            Sign::Minus => -1,
            Sign::NoSign => 0,
            Sign::Plus => 1,
        };
        let (sa, sb) = (self.m.sign(), o.m.sign());
        if sa != sb || sa == Sign::NoSign {
            return rank(sa).cmp(&rank(sb));
        }
        // Same sign: compare magnitudes, first by the position of the leading bit.
        let (ta, tb) = (self.m.bits() as i64 + self.e, o.m.bits() as i64 + o.e);
        let mag = if ta != tb {
            ta.cmp(&tb)
        } else {
            let e = self.e.min(o.e);
            (self.m.magnitude() << (self.e - e) as u64).cmp(&(o.m.magnitude() << (o.e - e) as u64))
        };
        if sa == Sign::Minus {
            mag.reverse()
        } else {
            mag
        }
    }
}

/// An exact result to be rounded: a dyadic, or a quotient num/den with den > 0.
enum Exact {
    NaR,
    Dyadic(Dyadic),
    Ratio(Dyadic, Dyadic),
}

impl Exact {
    fn ratio(num: Dyadic, den: Dyadic) -> Exact {
        assert!(!den.is_zero());
        if den.is_negative() {
            Exact::Ratio(num.neg(), den.neg())
        } else {
            Exact::Ratio(num, den)
        }
    }

    /// Where the exact value lies relative to v.
    fn cmp(&self, v: &Dyadic) -> Ordering {
        match self {
            Exact::NaR => unreachable!(),
            Exact::Dyadic(x) => x.cmp(v),
            // num/den <=> v  iff  num <=> v·den, as den > 0.
            Exact::Ratio(num, den) => num.cmp(&v.mul(den)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Posits from the definition.

/// The value of the `n`-bit posit with bit pattern `p` and `es` exponent bits, read bit by bit;
/// `None` for NaR.
///
/// After the sign comes the regime, a run of equal bits ended by the opposite bit (or by the
/// end of the word): a run of m ones means k = m - 1, a run of m zeros k = -m. Then come es
/// exponent bits (those cut off by the end of the word are 0) and the fraction f of the
/// remaining F bits. The value is (1 + f/2^F) · 2^(k·2^es + e). A negative posit is the two's
/// complement of the pattern of its absolute value.
fn decode(n: u32, es: u32, p: u64) -> Option<Dyadic> {
    assert!(n < 64 && p >> n == 0);
    if p == 0 {
        return Some(Dyadic::zero());
    }
    if p == 1 << (n - 1) {
        return None;
    }
    let negative = p >> (n - 1) == 1;
    let w = if negative { (1 << n) - p } else { p };
    // The n-1 bits after the sign, most significant first.
    let bits: Vec<u64> = (0..n - 1).rev().map(|i| (w >> i) & 1).collect();
    let run = bits.iter().take_while(|&&b| b == bits[0]).count();
    let k = if bits[0] == 1 {
        run as i64 - 1
    } else {
        -(run as i64)
    };
    let mut rest = bits.iter().skip(run + 1); // the regime and its terminating bit
    let mut e = 0;
    for _ in 0..es {
        e = 2 * e + *rest.next().unwrap_or(&0) as i64;
    }
    let fraction: Vec<u64> = rest.copied().collect();
    let mut m = BigInt::one(); // the hidden bit
    for &b in &fraction {
        m = m * 2 + b;
    }
    let v = Dyadic::new(m, k * (1 << es) + e - fraction.len() as i64);
    Some(if negative { v.neg() } else { v })
}

/// Rounding to one posit format by the bit-string midpoints.
struct Reference {
    n: u32,
    es: u32,
    underflow: bool,
    /// For small n: the values of the patterns -maxpos ..= maxpos in two's-complement order,
    /// and the midpoints above each of them.
    table: Option<(Vec<Dyadic>, Vec<Dyadic>)>,
}

impl Reference {
    fn new(fmt: &PositFormat) -> Reference {
        let mut r = Reference {
            n: fmt.n,
            es: fmt.es,
            underflow: fmt.underflow,
            table: None,
        };
        if r.n <= 16 {
            let all = -r.maxi()..=r.maxi();
            let values = all.clone().map(|i| r.value(i).into_owned()).collect();
            let mids = all.map(|i| r.midpoint(i).into_owned()).collect();
            r.table = Some((values, mids));
        }
        r
    }

    /// The signed index of maxpos; the posits are the indices -maxi ..= maxi.
    fn maxi(&self) -> i64 {
        (1 << (self.n - 1)) - 1
    }

    fn word(&self, i: i64) -> u64 {
        (i as u64) & ((1 << self.n) - 1)
    }

    fn nar(&self) -> u64 {
        1 << (self.n - 1)
    }

    /// The value of the posit with (signed) pattern i.
    fn value(&self, i: i64) -> Cow<'_, Dyadic> {
        match &self.table {
            Some((values, _)) => Cow::Borrowed(&values[(i + self.maxi()) as usize]),
            None => Cow::Owned(decode(self.n, self.es, self.word(i)).expect("not NaR")),
        }
    }

    /// The bit-string midpoint between the posits i and i + 1: the (N+1)-bit posit 2i + 1.
    fn midpoint(&self, i: i64) -> Cow<'_, Dyadic> {
        match &self.table {
            Some((_, mids)) => Cow::Borrowed(&mids[(i + self.maxi()) as usize]),
            None => {
                let p = ((2 * i + 1) as u64) & ((1 << (self.n + 1)) - 1);
                Cow::Owned(decode(self.n + 1, self.es, p).expect("not NaR"))
            }
        }
    }

    /// The value of a posit word; `None` for NaR.
    fn operand(&self, p: u64) -> Option<Cow<'_, Dyadic>> {
        if p == self.nar() {
            return None;
        }
        let i = ((p << (64 - self.n)) as i64) >> (64 - self.n);
        Some(self.value(i))
    }

    fn round(&self, x: &Exact) -> u64 {
        let x = match x {
            Exact::NaR => return self.nar(),
            x => x,
        };
        let maxi = self.maxi();
        if x.cmp(&Dyadic::zero()) == Ordering::Equal {
            return 0;
        }
        if x.cmp(&self.value(maxi)) != Ordering::Less {
            return self.word(maxi);
        }
        if x.cmp(&self.value(-maxi)) != Ordering::Greater {
            return self.word(-maxi);
        }
        // value(lo) < x < value(hi).
        let (mut lo, mut hi) = (-maxi, maxi);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match x.cmp(&self.value(mid)) {
                Ordering::Less => hi = mid,
                Ordering::Equal => return self.word(mid),
                Ordering::Greater => lo = mid,
            }
        }
        if !self.underflow {
            // Never round to zero: between 0 and ±minpos the result is ±minpos.
            if lo == 0 {
                return self.word(1);
            }
            if hi == 0 {
                return self.word(-1);
            }
        }
        match x.cmp(&self.midpoint(lo)) {
            Ordering::Less => self.word(lo),
            Ordering::Greater => self.word(hi),
            Ordering::Equal => self.word(if lo % 2 == 0 { lo } else { hi }),
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Quires.

/// One step of a dot product.
#[derive(Clone, Copy, Debug)]
enum Step {
    AddProduct(u64, u64),
    SubProduct(u64, u64),
    AddPosit(u64),
}

/// A random operand for a dot product of the given style.
fn dot_operand(rng: &mut Pcg64, fmt: &PositFormat, style: u32, nar_allowed: bool) -> u64 {
    let mask = fmt.mask();
    let specials = [
        0,
        1,
        mask,
        fmt.maxpos(),
        fmt.nar() + 1,
        fmt.one(),
        fmt.one().wrapping_neg() & mask,
    ];
    loop {
        let p = match (style, rng.gen_range(0..32)) {
            (_, 0) => specials[rng.gen_range(0..specials.len())],
            (_, 1) if nar_allowed => fmt.nar(),
            // Near ±1: sums with much cancellation and many rounding cases.
            (0, _) => {
                let off = rng.gen_range(0..1u64 << (fmt.n - 3));
                let p = fmt.one().wrapping_add(off).wrapping_sub(1 << (fmt.n - 4)) & mask;
                if rng.gen() {
                    p
                } else {
                    p.wrapping_neg() & mask
                }
            }
            // Near ±minpos: tiny sums, rounding around minpos and, for :u, to zero.
            (1, _) => {
                let p = rng.gen_range(1..64u64.min(fmt.maxpos()));
                if rng.gen() {
                    p
                } else {
                    p.wrapping_neg() & mask
                }
            }
            // Any pattern.
            _ => rng.gen::<u64>() & mask,
        };
        if p != fmt.nar() || nar_allowed {
            return p;
        }
    }
}

/// A random dot product of 1..=64 steps. One in 16 ends by undoing every step, so that its
/// sum is exactly 0; two in 16 also add a posit and the distance to the bit-string midpoint
/// above it, so that the sum is a tie.
fn random_dot(rng: &mut Pcg64, fmt: &PositFormat, r: &Reference) -> Vec<Step> {
    let len: usize = rng.gen_range(1..=64);
    let style = rng.gen_range(0..3);
    let nar_allowed = rng.gen_ratio(1, 20);
    let ending = rng.gen_range(0..16);
    let mut steps = if ending == 1 || ending == 2 {
        tie_steps(rng, fmt, r)
    } else {
        Vec::new()
    };
    let len = if ending <= 2 { len.div_ceil(2) } else { len };
    let first = steps.len();
    while steps.len() < len {
        let a = dot_operand(rng, fmt, style, nar_allowed);
        let b = dot_operand(rng, fmt, style, nar_allowed);
        steps.push(match rng.gen_range(0..16) {
            0 => Step::AddPosit(a),
            // Undo an earlier product, so that the sum cancels.
            1 | 2 if !steps.is_empty() => undo(fmt, steps[rng.gen_range(0..steps.len())]),
            3..=9 => Step::AddProduct(a, b),
            _ => Step::SubProduct(a, b),
        });
    }
    if ending <= 2 {
        let undo: Vec<Step> = steps[first..].iter().rev().map(|&s| undo(fmt, s)).collect();
        steps.extend(undo);
    }
    steps
}

/// ±(x + d), where x is a posit and d, also a posit, is the distance from x to the midpoint
/// between x and the next posit.
fn tie_steps(rng: &mut Pcg64, fmt: &PositFormat, r: &Reference) -> Vec<Step> {
    loop {
        let i = rng.gen_range(1..r.maxi());
        let d = r.midpoint(i).sub(&r.value(i));
        let p = r.round(&Exact::Dyadic(d.clone()));
        if r.operand(p).is_some_and(|v| *v == d) {
            let one = fmt.one();
            return if rng.gen() {
                vec![Step::AddPosit(r.word(i)), Step::AddProduct(p, one)]
            } else {
                vec![Step::AddPosit(r.word(-i)), Step::SubProduct(p, one)]
            };
        }
    }
}

fn undo(fmt: &PositFormat, s: Step) -> Step {
    match s {
        Step::AddProduct(a, b) => Step::SubProduct(a, b),
        Step::SubProduct(a, b) => Step::AddProduct(a, b),
        Step::AddPosit(a) => Step::AddPosit(fmt.neg(a)),
    }
}

/// The exact value of a dot product; `None` if an operand is NaR.
fn exact_dot(r: &Reference, steps: &[Step]) -> Option<Dyadic> {
    let mut sum = Dyadic::zero();
    for &s in steps {
        let term = match s {
            Step::AddProduct(a, b) => r.operand(a)?.mul(&*r.operand(b)?),
            Step::SubProduct(a, b) => r.operand(a)?.mul(&*r.operand(b)?).neg(),
            Step::AddPosit(a) => r.operand(a)?.into_owned(),
        };
        sum = sum.add(&term);
    }
    Some(sum)
}

fn golden_dot(fmt: PositFormat, steps: &[Step]) -> Quire {
    let mut q = Quire::new(fmt);
    for &s in steps {
        match s {
            Step::AddProduct(a, b) => q.add_product(a, b),
            Step::SubProduct(a, b) => q.sub_product(a, b),
            Step::AddPosit(a) => q.add_posit(a),
        }
    }
    q
}

/// Random dot products: the quire holds the exact sum (scaled by 2^quire_frac_bits) and reads
/// out its reference rounding.
fn check_quire(fmt: PositFormat, dots: usize) {
    let r = Reference::new(&fmt);
    let qfb = fmt.quire_frac_bits();
    let mut rng = Pcg64::seed_from_u64(seed() ^ u64::from(fmt.n << 8 | fmt.es));
    let (mut nar, mut zero, mut inexact, mut ties) = (0, 0, 0, 0);
    for _ in 0..dots {
        let steps = random_dot(&mut rng, &fmt, &r);
        let q = golden_dot(fmt, &steps);
        let ctx = || format!("{fmt}, seed {:#x}, steps {steps:x?}", seed());
        match exact_dot(&r, &steps) {
            None => {
                nar += 1;
                assert_eq!(q.to_bigint(), None, "{}", ctx());
                assert_eq!(q.to_posit(), fmt.nar(), "{}", ctx());
            }
            Some(sum) => {
                let scaled = sum
                    .scaled(qfb)
                    .unwrap_or_else(|| panic!("{}: sum {sum:?} has bits below the quire", ctx()));
                assert_eq!(q.to_bigint(), Some(scaled), "quire contents, {}", ctx());
                let want = r.round(&Exact::Dyadic(sum.clone()));
                let got = q.to_posit();
                assert_eq!(
                    got,
                    want,
                    "read-out {} vs reference {} of {sum:?}, {}",
                    hex(&fmt, got),
                    hex(&fmt, want),
                    ctx()
                );
                zero += sum.is_zero() as u32;
                inexact += (r.operand(got).is_some_and(|v| *v != sum)) as u32;
                let i = ((got << (64 - fmt.n)) as i64) >> (64 - fmt.n);
                ties += (i.abs() < r.maxi() && (*r.midpoint(i) == sum || *r.midpoint(i - 1) == sum))
                    as u32;
            }
        }
    }
    // The sums covered NaR, exact zeros, rounding and ties.
    assert!(
        nar > 0 && zero > 0 && inexact > dots as u32 / 4 && ties > dots as u32 / 20,
        "{fmt}: {nar} NaR, {zero} zero, {inexact} inexact, {ties} tied sums"
    );
}

#[test]
fn quire_sizes() {
    // quire_frac_bits = 2·(N-2)·2^es, enough for minpos²; the carry guard is N-1 bits in the
    // 2017 draft and 31 in the 2022 standard; plus a sign bit and as many integer bits.
    for n in 3..=32 {
        for es in 0..=(n - 3).min(5) {
            let fmt = draft(n, es);
            assert_eq!(fmt.quire_frac_bits(), (2 * (n - 2)) << es, "{fmt}");
            assert_eq!(fmt.quire_bits(), 1 + (n - 1) + 4 * ((n - 2) << es), "{fmt}");
        }
        let fmt = std2022(n, false);
        assert_eq!(fmt.quire_bits(), 1 + 31 + 4 * ((n - 2) << 2), "{fmt}");
        assert_eq!(fmt.quire_bits(), 16 * n, "{fmt}");
    }
    // N²/2 for the draft's recommended es.
    for (n, es) in [(8, 0), (16, 1), (32, 2)] {
        assert_eq!(draft(n, es).quire_bits(), n * n / 2);
    }
}

#[test]
fn quire_posit_16_and_32_of_the_2022_standard() {
    assert_eq!(std2022(16, false).quire_bits(), 256);
    assert_eq!(std2022(32, false).quire_bits(), 512);
    check_quire(std2022(16, false), 3000);
    check_quire(std2022(32, false), 3000);
}

#[test]
fn quire_draft_formats() {
    assert_eq!(draft(16, 1).quire_bits(), 128);
    assert_eq!(draft_u(8, 2).quire_bits(), 1 + 7 + 2 * 2 * 6 * 4);
    for fmt in [
        draft(16, 1),
        draft_u(8, 2),
        draft(8, 0),
        draft(10, 3),
        draft(12, 5),
        draft(32, 2),
        draft_u(16, 1),
        std2022(12, true),
    ] {
        check_quire(fmt, 2000);
    }
}

#[test]
fn quire_reads_tiny_posit_32_sums() {
    // Sums below 2^-112, where softposit 0.4's Q32E2 reads 0 (see posit_softposit.rs).
    for fmt in [draft(32, 2), std2022(32, false)] {
        let r = Reference::new(&fmt);
        let mut q = Quire::new(fmt);
        q.sub_product(0xffff_ffff, 0x5a15_df2f);
        assert_eq!(q.to_posit(), 2);
        let sum = exact_dot(&r, &[Step::SubProduct(0xffff_ffff, 0x5a15_df2f)]).unwrap();
        assert_eq!(r.round(&Exact::Dyadic(sum)), 2);
        let mut rng = Pcg64::seed_from_u64(seed() ^ 0x7149);
        for _ in 0..2000 {
            // Products of two operands of scale about -60 or of minpos and a small one.
            let steps: Vec<Step> = (0..rng.gen_range(1..4))
                .map(|_| {
                    let a = rng.gen_range(0x0000_0001..0x0800_0000u64);
                    let b = if rng.gen() {
                        rng.gen_range(0x4000_0000..0x7000_0000)
                    } else {
                        a
                    };
                    if rng.gen() {
                        Step::AddProduct(a, b)
                    } else {
                        Step::SubProduct(a, b)
                    }
                })
                .collect();
            let sum = exact_dot(&r, &steps).unwrap();
            let q = golden_dot(fmt, &steps);
            assert_eq!(
                q.to_bigint(),
                sum.scaled(fmt.quire_frac_bits()),
                "{steps:x?}"
            );
            assert_eq!(q.to_posit(), r.round(&Exact::Dyadic(sum)), "{steps:x?}");
        }
    }
}

#[test]
fn quire_wraps_modulo_its_width() {
    // posit:8:0: 32-bit quire, 12 fraction bits, maxpos² = 2^12 = 2^24 quire units.
    let fmt = draft(8, 0);
    assert_eq!(fmt.quire_bits(), 32);
    let maxpos = fmt.maxpos();
    let half = fmt.from_f64(32.0);
    let mut q = Quire::new(fmt);
    for _ in 0..127 {
        q.add_product(maxpos, maxpos);
    }
    assert_eq!(q.to_bigint(), Some(BigInt::from((1i64 << 31) - (1 << 24))));
    q.add_product(maxpos, half); // + 2^23 units
    q.add_product(maxpos, maxpos); // 2^31 + 2^23 wraps to -(2^31 - 2^23)
    assert_eq!(q.to_bigint(), Some(-BigInt::from((1i64 << 31) - (1 << 23))));
    assert_eq!(q.to_posit(), fmt.neg(maxpos));
    // Bits that wrap to exactly 2^31, the standard's NaR pattern 10…0, read out as NaR.
    let mut q = Quire::new(fmt);
    for _ in 0..128 {
        q.add_product(maxpos, maxpos);
    }
    assert_eq!(q.to_posit(), fmt.nar());
}

// ---------------------------------------------------------------------------------------------
// Conversions.

/// Random f64s over (and beyond) the format's range, its midpoints and their f64 neighbours,
/// and the f64 special values.
fn check_from_f64(fmt: PositFormat, count: usize) {
    let r = Reference::new(&fmt);
    let mut rng = Pcg64::seed_from_u64(seed() ^ 0xf640 ^ u64::from(fmt.n << 8 | fmt.es));
    let max_scale = ((fmt.n - 1) << fmt.es) as i32 + 4;
    let mut xs = vec![
        0.0,
        -0.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        1.0,
        -1.0,
    ];
    for _ in 0..count {
        let x = match rng.gen_range(0..4) {
            0 => f64::from_bits(rng.gen()),
            1 => {
                // A midpoint, exactly or one f64 ulp away.
                let i = rng.gen_range(-r.maxi()..r.maxi());
                let m = r.midpoint(i);
                let x = m.m.to_string().parse::<f64>().unwrap() * (2f64).powi(m.e as i32);
                assert_eq!(Dyadic::from_f64(x), *m, "midpoints are f64s");
                let b = x.to_bits();
                [x, f64::from_bits(b + 1), f64::from_bits(b.wrapping_sub(1))]
                    [rng.gen_range(0..3usize)]
            }
            _ => {
                let m = 1.0 + rng.gen::<f64>();
                let e = rng.gen_range(-max_scale..=max_scale);
                let s = if rng.gen() { 1.0 } else { -1.0 };
                s * m * (2f64).powi(e)
            }
        };
        xs.push(x);
    }
    let mut checked = 0;
    for x in xs {
        let want = if x.is_finite() {
            r.round(&Exact::Dyadic(Dyadic::from_f64(x)))
        } else {
            fmt.nar()
        };
        let got = fmt.from_f64(x);
        assert_eq!(
            got,
            want,
            "{fmt}: from_f64({x:e} = {:#x}) = {}, reference {} (seed {:#x})",
            x.to_bits(),
            hex(&fmt, got),
            hex(&fmt, want),
            seed()
        );
        checked += 1;
    }
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(fmt.from_f64(x), fmt.nar(), "{fmt}: from_f64({x})");
    }
    assert!(checked > count);
}

#[test]
fn from_f64_matches_the_reference() {
    for fmt in [
        draft(8, 0),
        draft(8, 5),
        draft_u(8, 2),
        draft(10, 3),
        draft(16, 1),
        std2022(16, false),
        std2022(32, false),
        draft(32, 2),
        draft(32, 5),
        draft_u(32, 5),
        draft_u(24, 4),
        draft(5, 1),
    ] {
        check_from_f64(fmt, 30_000);
    }
}

/// num/den from a decimal string like "-6.02214076e23".
fn decimal(s: &str) -> (bool, BigUint, BigUint) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let (mant, exp) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap()),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits: BigUint = format!("{int}{frac}").parse().unwrap();
    let exp = exp - frac.len() as i32;
    let ten = BigUint::from(10u32);
    if exp >= 0 {
        (neg, digits * ten.pow(exp as u32), BigUint::one())
    } else {
        (neg, digits, ten.pow(-exp as u32))
    }
}

fn ratio_exact(neg: bool, num: &BigUint, den: &BigUint) -> Exact {
    let sign = if neg { Sign::Minus } else { Sign::Plus };
    let num = Dyadic::new(BigInt::from_biguint(sign, num.clone()), 0);
    Exact::ratio(num, Dyadic::new(BigInt::from(den.clone()), 0))
}

#[test]
fn from_ratio_matches_the_reference_on_decimals() {
    let decimals = [
        "0.1",
        "-0.1",
        "1",
        "3.14159265358979323846",
        "-2.5",
        "2.75",
        "0.0078125",
        "1e-30",
        "-1e-40",
        "6.02214076e23",
        "1.7976931348623157e308",
        "123456789",
        "0.333333333333333333333333333333",
        "65535.5",
        "1e-200",
        "0",
    ];
    for fmt in [
        draft(8, 0),
        draft_u(8, 2),
        draft(16, 1),
        std2022(16, false),
        std2022(32, false),
        draft(32, 5),
        draft_u(12, 1),
    ] {
        let r = Reference::new(&fmt);
        for s in decimals {
            let (neg, num, den) = decimal(s);
            let want = r.round(&ratio_exact(neg, &num, &den));
            let got = fmt.from_ratio(neg, &num, &den);
            assert_eq!(
                got,
                want,
                "{fmt}: from_ratio({s}) = {}, reference {}",
                hex(&fmt, got),
                hex(&fmt, want)
            );
        }
    }
    assert_eq!(decimal("-6.25e-1"), (true, 625u32.into(), 1000u32.into()));
}

#[test]
fn from_ratio_at_and_next_to_every_midpoint() {
    // Each midpoint exactly (a tie), and a third of 2^-400 above and below it.
    for fmt in [
        draft(8, 0),
        draft(6, 2),
        draft_u(7, 1),
        std2022(8, true),
        draft(10, 3),
    ] {
        let r = Reference::new(&fmt);
        let t = 400;
        let mut checked = 0;
        let beyond = [
            r.value(r.maxi()).mul(&Dyadic::int(3)),
            r.value(1).mul(&Dyadic::pow2(-3)),
        ];
        let points = (-r.maxi()..r.maxi())
            .map(|i| r.midpoint(i).into_owned())
            .chain(beyond.iter().flat_map(|x| [x.clone(), x.neg()]));
        for m in points {
            assert!(m.e > -t);
            let scaled = &m.m << (m.e + t) as u64; // m·2^t, an integer
            let den3 = BigUint::from(3u32) << t as u64;
            for (num, den) in [
                (scaled.clone(), BigUint::one() << t as u64),
                (&scaled * 3 + 1, den3.clone()),
                (&scaled * 3 - 1, den3.clone()),
            ] {
                let neg = num.sign() == Sign::Minus;
                let mag = num.magnitude().clone();
                let want = r.round(&ratio_exact(neg, &mag, &den));
                let got = fmt.from_ratio(neg, &mag, &den);
                assert_eq!(got, want, "{fmt}: from_ratio({num}/{den})");
                checked += 1;
            }
        }
        assert!(checked > 3 * r.maxi());
    }
}
