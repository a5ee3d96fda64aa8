//! Stochastic rounding (`lpgen_golden::rounding`, docs/formats.md "Stochastic rounding")
//! against references written here from the contract's own words:
//!
//! 1. the generator: SplitMix64 of the seed, its high half (1 if zero) as the xorshift32
//!    state, one step x ^= x << 13, x ^= x >> 17, x ^= x << 5 per rounded result, r = the top
//!    R bits of the new state; its first states from two seeds pinned, and its period
//!    2^32 − 1 proved by the order of its GF(2) matrix;
//! 2. every pair of words of fp8:e4m3, fp8:e5m2, float:4:3:sat and float:2:5:ftz (add, mul),
//!    random pairs of bf16 and float:11:52 (add, sub, mul, div, fma) and random f64 values:
//!    the exact result (big integers), its kept and discarded bits split here, the rule
//!    applied with the draws of the reference generator;
//! 3. fix: every pair of fix:3:4 (mul, div), random f64 values, and fix → fix conversion,
//!    on the two's complement value;
//! 4. exhaustive over r: a value whose discarded part has top bits d steps for exactly d of
//!    the 2^R draws; and unbiasedness: means of many roundings against nearest's bias.

use lpgen_golden::fixed::round_shift;
use lpgen_golden::float::FloatFormat;
use lpgen_golden::rounding::{Draw, RoundedOps, Rounder, Rounding, Xorshift32};
use lpgen_golden::{BinOp, FixFormat, Format};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

// ---------------------------------------------------------------- the generator, by hand

/// The reference generator, from the contract's words.
struct RefGen(u32);

impl RefGen {
    fn new(seed: u64) -> RefGen {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let hi = (z >> 32) as u32;
        RefGen(if hi == 0 { 1 } else { hi })
    }

    /// The next R random bits.
    fn draw(&mut self, bits: u32) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x >> (32 - bits)
    }
}

/// The published stream: the initial state and the first eight states from seeds 0 and 7
/// (computed apart, in Python, from the same words).
#[test]
fn the_generator_stream_is_pinned() {
    let pinned: [(u64, u32, [u32; 8]); 2] = [
        (
            0,
            0xe220_a839,
            [
                0x13d9_86ea,
                0x439e_3a68,
                0x1ebc_7821,
                0xa6ba_0f5d,
                0x0d6a_4255,
                0xe138_d865,
                0xbcb4_aa9f,
                0x150c_93ec,
            ],
        ),
        (
            7,
            0x63cb_e1e4,
            [
                0xe11a_adff,
                0x2007_e20d,
                0x5483_a9ee,
                0x1671_5f11,
                0x8fff_5ad8,
                0xf029_79ca,
                0x3d1a_9e02,
                0xb587_c48f,
            ],
        ),
    ];
    for (seed, init, states) in pinned {
        let mut g = Xorshift32::from_seed(seed);
        assert_eq!(g.state(), init, "seed {seed}");
        assert_eq!(RefGen::new(seed).0, init);
        for s in states {
            assert_eq!(g.step(), s, "seed {seed}");
        }
        // A rounder's draws are the top R bits of those states.
        for bits in [1, 8, 32] {
            let mut r = Rounder::new(Rounding::Stochastic(bits), seed);
            for s in states {
                assert_eq!(
                    r.draw(),
                    Draw::Stochastic {
                        bits,
                        r: s >> (32 - bits)
                    }
                );
            }
        }
    }
    // Nearest takes no draws; a zero state is refused.
    let mut n = Rounder::nearest();
    assert_eq!(n.draw(), Draw::Nearest);
    assert_eq!(n.generator(), Rounder::nearest().generator());
    assert!(Xorshift32::at(0).is_none());
    // Seeds are all distinct initial states over a small range, never zero.
    let mut inits: Vec<u32> = (0..10_000)
        .map(|s| Xorshift32::from_seed(s).state())
        .collect();
    assert!(inits.iter().all(|&s| s != 0));
    inits.sort();
    inits.dedup();
    assert_eq!(inits.len(), 10_000);
}

/// 32 × 32 matrices over GF(2): column j is the image of bit j.
type Mat = [u32; 32];

fn apply(m: &Mat, x: u32) -> u32 {
    (0..32)
        .filter(|j| x >> j & 1 == 1)
        .fold(0, |acc, j| acc ^ m[j])
}

fn compose(a: &Mat, b: &Mat) -> Mat {
    // (a ∘ b)(e_j) = a(b(e_j)).
    std::array::from_fn(|j| apply(a, b[j]))
}

fn power(m: &Mat, mut k: u64) -> Mat {
    let mut acc: Mat = std::array::from_fn(|j| 1u32 << j);
    let mut base = *m;
    while k > 0 {
        if k & 1 == 1 {
            acc = compose(&acc, &base);
        }
        base = compose(&base, &base);
        k >>= 1;
    }
    acc
}

/// The step is linear over GF(2); its order is 2^32 − 1 (T^(2^32−1) = I and T^((2^32−1)/p)
/// ≠ I for each prime p of 2^32 − 1 = 3·5·17·257·65537), so every nonzero state lies on one
/// cycle of all 2^32 − 1 of them: the state is never zero and the period is maximal.
#[test]
fn the_generator_has_period_two_to_the_32_minus_1() {
    let t: Mat = std::array::from_fn(|j| Xorshift32::at(1 << j).unwrap().step());
    // Linear: the step of a sum is the sum of the steps.
    let mut rng = Pcg64::seed_from_u64(3);
    for _ in 0..1000 {
        let x: u32 = rng.gen_range(1..=u32::MAX);
        assert_eq!(Xorshift32::at(x).unwrap().step(), apply(&t, x));
    }
    let id: Mat = std::array::from_fn(|j| 1u32 << j);
    let n = (1u64 << 32) - 1;
    assert_eq!(power(&t, n), id);
    for p in [3u64, 5, 17, 257, 65537] {
        assert_ne!(power(&t, n / p), id, "order divides (2^32 - 1)/{p}");
    }
    // And a direct run: a million steps from seed 7 never meet zero or the start.
    let mut g = Xorshift32::from_seed(7);
    let start = g.state();
    for _ in 0..1_000_000 {
        let s = g.step();
        assert!(s != 0 && s != start);
    }
}

// ------------------------------------------------------------ the float reference, by hand

/// A float format as the test states it.
#[derive(Clone, Copy, Debug)]
struct P {
    name: &'static str,
    e: u32,
    m: u32,
    fin: bool,
    sat: bool,
    ftz: bool,
}

/// An exact value: NaN, ±∞, or (−1)^neg · n · 2^x.
#[derive(Clone, Debug)]
enum V {
    Nan,
    Inf(bool),
    Fin(bool, BigInt, i64),
}

impl P {
    fn bias(&self) -> i64 {
        (1 << (self.e - 1)) - 1
    }
    fn emin(&self) -> i64 {
        1 - self.bias()
    }
    fn emax(&self) -> i64 {
        self.bias() + i64::from(self.fin)
    }
    fn sign(&self) -> u64 {
        1 << (self.e + self.m)
    }
    fn zero(&self, neg: bool) -> u64 {
        if neg {
            self.sign()
        } else {
            0
        }
    }
    fn ones(&self) -> u64 {
        (1 << self.e) - 1
    }
    fn fmask(&self) -> u64 {
        (1 << self.m) - 1
    }
    fn nan(&self) -> u64 {
        (self.ones() << self.m)
            | if self.fin {
                self.fmask()
            } else {
                1 << (self.m - 1)
            }
    }
    fn max(&self, neg: bool) -> u64 {
        self.zero(neg)
            | if self.fin {
                (self.ones() << self.m) | (self.fmask() - 1)
            } else {
                ((self.ones() - 1) << self.m) | self.fmask()
            }
    }
    fn infinite(&self, neg: bool) -> u64 {
        match (self.fin, self.sat) {
            (false, _) => self.zero(neg) | (self.ones() << self.m),
            (true, true) => self.max(neg),
            (true, false) => self.nan(),
        }
    }
    fn overflow(&self, neg: bool) -> u64 {
        if self.sat {
            self.max(neg)
        } else if self.fin {
            self.nan()
        } else {
            self.infinite(neg)
        }
    }

    /// A word's value by IEEE's formula.
    fn val(&self, w: u64) -> V {
        let neg = w & self.sign() != 0;
        let field = (w >> self.m) & self.ones();
        let frac = w & self.fmask();
        if field == self.ones() && !self.fin {
            return if frac == 0 { V::Inf(neg) } else { V::Nan };
        }
        if field == self.ones() && self.fin && frac == self.fmask() {
            return V::Nan;
        }
        let m = i64::from(self.m);
        if field == 0 {
            let n = if self.ftz { 0 } else { frac };
            V::Fin(neg, BigInt::from(n), self.emin() - m)
        } else {
            V::Fin(
                neg,
                BigInt::from(frac | 1 << self.m),
                field as i64 - self.bias() - m,
            )
        }
    }

    /// (−1)^neg · num/den (den > 0) rounded: `None` is nearest, `Some((R, r))` the rule.
    /// The last place is 2^(max(t, emin) − M) for a value in [2^t, 2^(t+1)) (2^(t − M) with
    /// :ftz); k = the kept magnitude in last places, rem/D the discarded fraction of one.
    fn round(&self, neg: bool, num: &BigUint, den: &BigUint, draw: Option<(u32, u32)>) -> u64 {
        if num.is_zero() {
            return self.zero(neg);
        }
        // t = floor(log2(num/den)).
        let mut t = num.bits() as i64 - den.bits() as i64;
        if shifted(num, -t.min(0)) < shifted(den, t.max(0)) {
            t -= 1;
        }
        let m = i64::from(self.m);
        let mut lsb = if self.ftz {
            t - m
        } else {
            t.max(self.emin()) - m
        };
        let (n, d) = (shifted(num, -lsb.min(0)), shifted(den, lsb.max(0)));
        let (mut k, rem) = n.div_rem(&d);
        let up = match draw {
            None => {
                let twice = &rem << 1u32;
                twice > d || (twice == d && k.is_odd())
            }
            Some((bits, r)) => {
                let dd = (&rem << bits) / &d; // floor(fraction · 2^R)
                dd + BigUint::from(r) >= BigUint::one() << bits
            }
        };
        if up {
            k += 1u32;
        }
        if k.is_zero() {
            return self.zero(neg);
        }
        if k.bits() as i64 > m + 1 {
            k >>= 1u32;
            lsb += 1;
        }
        let k = k.to_u64().unwrap();
        if k >> self.m == 0 {
            return self.zero(neg) | k; // subnormal
        }
        let e = lsb + m;
        if e < self.emin() {
            return self.zero(neg); // :ftz
        }
        let frac = k & self.fmask();
        if e > self.emax() || (self.fin && e == self.emax() && frac == self.fmask()) {
            return self.overflow(neg);
        }
        self.zero(neg) | ((e + self.bias()) as u64) << self.m | frac
    }

    fn round_dy(&self, n: &BigInt, x: i64, draw: Option<(u32, u32)>, zero_neg: bool) -> u64 {
        if n.is_zero() {
            return self.zero(zero_neg);
        }
        let mag = n.abs().to_biguint().unwrap();
        let (num, den) = (shifted(&mag, x.max(0)), shifted(&BigUint::one(), -x.min(0)));
        self.round(n.is_negative(), &num, &den, draw)
    }

    fn add(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
        match (a, b) {
            (V::Nan, _) | (_, V::Nan) => self.nan(),
            (V::Inf(p), V::Inf(q)) if p != q => self.nan(),
            (V::Inf(p), _) | (_, V::Inf(p)) => self.infinite(p),
            (V::Fin(sa, na, xa), V::Fin(sb, nb, xb)) => {
                let x = xa.min(xb);
                let ta = signed(sa, na) << (xa - x) as usize;
                let tb = signed(sb, nb) << (xb - x) as usize;
                self.round_dy(&(ta + tb), x, draw, sa && sb)
            }
        }
    }

    fn product(&self, a: V, b: V) -> V {
        match (a, b) {
            (V::Nan, _) | (_, V::Nan) => V::Nan,
            (V::Inf(p), V::Inf(q)) => V::Inf(p != q),
            (V::Inf(p), V::Fin(s, n, _)) | (V::Fin(s, n, _), V::Inf(p)) => {
                if n.is_zero() {
                    V::Nan
                } else {
                    V::Inf(p != s)
                }
            }
            (V::Fin(sa, na, xa), V::Fin(sb, nb, xb)) => V::Fin(sa != sb, na * nb, xa + xb),
        }
    }

    fn mul(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
        match self.product(a, b) {
            V::Nan => self.nan(),
            V::Inf(neg) => self.infinite(neg),
            V::Fin(s, n, x) => self.round_dy(&signed(s, n), x, draw, s),
        }
    }

    fn div(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
        match (a, b) {
            (V::Nan, _) | (_, V::Nan) | (V::Inf(_), V::Inf(_)) => self.nan(),
            (V::Inf(p), V::Fin(s, ..)) => self.infinite(p != s),
            (V::Fin(s, ..), V::Inf(q)) => self.zero(s != q),
            (V::Fin(sa, na, xa), V::Fin(sb, nb, xb)) => {
                let neg = sa != sb;
                match (na.is_zero(), nb.is_zero()) {
                    (true, true) => self.nan(),
                    (false, true) => self.infinite(neg),
                    (true, false) => self.zero(neg),
                    _ => {
                        let x = xa - xb;
                        let (na, nb) = (na.to_biguint().unwrap(), nb.to_biguint().unwrap());
                        self.round(neg, &shifted(&na, x.max(0)), &shifted(&nb, -x.min(0)), draw)
                    }
                }
            }
        }
    }

    fn fma(&self, a: V, b: V, c: V, draw: Option<(u32, u32)>) -> u64 {
        match (self.product(a, b), c) {
            (V::Fin(s, n, x), V::Fin(sc, nc, xc)) => {
                self.add(V::Fin(s, n, x), V::Fin(sc, nc, xc), draw)
            }
            (p, c) => self.add(p, c, draw),
        }
    }

    fn from_f64(&self, x: f64, draw: Option<(u32, u32)>) -> u64 {
        if x.is_nan() {
            return self.nan();
        }
        if x.is_infinite() {
            return self.infinite(x < 0.0);
        }
        let (neg, n, e) = f64_parts(x);
        self.round_dy(&signed(neg, BigInt::from(n)), e, draw, neg)
    }
}

fn shifted(x: &BigUint, by: i64) -> BigUint {
    assert!(by >= 0);
    x << by as u64
}

fn signed(neg: bool, n: BigInt) -> BigInt {
    if neg {
        -n
    } else {
        n
    }
}

/// x = (−1)^neg · n · 2^e exactly.
fn f64_parts(x: f64) -> (bool, u64, i64) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (n, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    (bits >> 63 == 1, n, e)
}

fn golden(p: &P) -> FloatFormat {
    match p.name.parse::<Format>() {
        Ok(Format::Float(f)) => {
            assert_eq!(
                (f.exp_bits, f.frac_bits, f.finite, f.sat, f.ftz),
                (p.e, p.m, p.fin, p.sat, p.ftz)
            );
            f
        }
        other => panic!("{}: {other:?}", p.name),
    }
}

const fn p(name: &'static str, e: u32, m: u32, fin: bool, sat: bool, ftz: bool) -> P {
    P {
        name,
        e,
        m,
        fin,
        sat,
        ftz,
    }
}

const EIGHT_BIT: [(P, u32); 4] = [
    (p("fp8:e4m3", 4, 3, true, false, false), 3),
    (p("fp8:e5m2", 5, 2, false, false, false), 8),
    (p("float:4:3:sat", 4, 3, false, true, false), 2),
    (p("float:2:5:ftz", 2, 5, false, false, true), 5),
];

/// Every pair of every 8-bit format, add and mul, one rounder per format and op (seed 11):
/// the golden result equals the reference's with the reference generator's draw, pair by
/// pair; and `nearest` is the reference's nearest.
#[test]
fn every_8_bit_pair_adds_and_multiplies_by_the_rule() {
    for (p, bits) in EIGHT_BIT {
        let f = golden(&p);
        for op in ["add", "mul"] {
            let mut rounder = Rounder::new(Rounding::Stochastic(bits), 11);
            let mut gen = RefGen::new(11);
            // Results other than nearest's, and results stepped up from the truncation.
            let (mut ups, mut stepped) = (0u32, 0u32);
            for a in 0..256u64 {
                for b in 0..256u64 {
                    let (got, near) = match op {
                        "add" => (f.add_with(a, b, &mut rounder), f.add(a, b)),
                        _ => (f.mul_with(a, b, &mut rounder), f.mul(a, b)),
                    };
                    let draw = Some((bits, gen.draw(bits)));
                    let (want, want_near) = match op {
                        "add" => (
                            p.add(p.val(a), p.val(b), draw),
                            p.add(p.val(a), p.val(b), None),
                        ),
                        _ => (
                            p.mul(p.val(a), p.val(b), draw),
                            p.mul(p.val(a), p.val(b), None),
                        ),
                    };
                    assert_eq!(got, want, "{} {op} {a:#04x} {b:#04x} R={bits}", p.name);
                    assert_eq!(near, want_near, "{} {op} {a:#04x} {b:#04x}", p.name);
                    ups += u32::from(got != near);
                    stepped += u32::from(got != p.round_exact(op, a, b));
                }
            }
            // The test meets results that round both ways.
            assert!(
                ups > 1000 && stepped > 1000,
                "{} {op}: {ups} {stepped}",
                p.name
            );
        }
    }
}

impl P {
    /// The result truncated (r = 0 never steps): to tell inexact results apart.
    fn round_exact(&self, op: &str, a: u64, b: u64) -> u64 {
        let draw = Some((1, 0));
        match op {
            "add" => self.add(self.val(a), self.val(b), draw),
            _ => self.mul(self.val(a), self.val(b), draw),
        }
    }
}

/// Random words of a wide format, with its corners mixed in.
fn random_word(p: &P, rng: &mut Pcg64) -> u64 {
    let w = 1 + p.e + p.m;
    let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
    match rng.gen_range(0..10) {
        0 => rng.gen::<u64>() & ((1 << p.m) - 1) | (rng.gen::<u64>() & p.sign()), // subnormal
        1 => p.max(rng.gen()) ^ (rng.gen::<u64>() & 3),
        2 => p.nan() ^ (rng.gen::<u64>() & p.sign()),
        _ => rng.gen::<u64>() & mask,
    }
}

/// bf16 and float:11:52 (binary64's shape, so the quotient and the sum must carry R = 32
/// exact bits below 53): random pairs and triples, every rounding operation, one stream.
#[test]
fn random_wide_operands_round_by_the_rule() {
    let wide = [
        (p("bf16", 8, 7, false, false, false), 5, 20_000),
        (p("bf16", 8, 7, false, false, false), 32, 10_000),
        (p("float:11:52", 11, 52, false, false, false), 32, 10_000),
        (p("float:8:23:fn:sat", 8, 23, true, true, false), 17, 5_000),
    ];
    for (p, bits, n) in wide {
        let f = golden(&p);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 2024);
        let mut gen = RefGen::new(2024);
        let mut rng = Pcg64::seed_from_u64(5);
        for i in 0..n {
            let (a, b, c) = (
                random_word(&p, &mut rng),
                random_word(&p, &mut rng),
                random_word(&p, &mut rng),
            );
            let (va, vb, vc) = (p.val(a), p.val(b), p.val(c));
            let checks: [(&str, u64, Box<dyn Fn(Option<(u32, u32)>) -> u64>); 5] = [
                (
                    "add",
                    f.add_with(a, b, &mut rounder),
                    Box::new(|d| p.add(va.clone(), vb.clone(), d)),
                ),
                (
                    "sub",
                    f.sub_with(a, b, &mut rounder),
                    Box::new(|d| p.add(va.clone(), p.val(b ^ p.sign()), d)),
                ),
                (
                    "mul",
                    f.mul_with(a, b, &mut rounder),
                    Box::new(|d| p.mul(va.clone(), vb.clone(), d)),
                ),
                (
                    "div",
                    f.div_with(a, b, &mut rounder),
                    Box::new(|d| p.div(va.clone(), vb.clone(), d)),
                ),
                (
                    "fma",
                    f.fma_with(a, b, c, &mut rounder),
                    Box::new(|d| p.fma(va.clone(), vb.clone(), vc.clone(), d)),
                ),
            ];
            for (op, got, want) in checks {
                let want = want(Some((bits, gen.draw(bits))));
                assert_eq!(
                    got, want,
                    "{} {op} {a:#x} {b:#x} {c:#x} R={bits} #{i}",
                    p.name
                );
            }
            // A conversion from f64: a random value in (or just past) the format's range.
            let x = f64::from_bits(rng.gen());
            let got = f.from_f64_with(x, &mut rounder);
            assert_eq!(
                got,
                p.from_f64(x, Some((bits, gen.draw(bits)))),
                "{} {x:e}",
                p.name
            );
            let y = rng.gen_range(-1.0..1.0) * (rng.gen_range(-150..130) as f64).exp2();
            let got = f.from_f64_with(y, &mut rounder);
            assert_eq!(
                got,
                p.from_f64(y, Some((bits, gen.draw(bits)))),
                "{} {y:e}",
                p.name
            );
        }
    }
}

/// A conversion among floats takes one draw and rounds by the rule: every f16 word into
/// fp8:e4m3 and fp8:e5m2.
#[test]
fn conversions_among_floats_round_by_the_rule() {
    let from = golden(&p("f16", 5, 10, false, false, false));
    let pf = p("f16", 5, 10, false, false, false);
    for (to_p, bits) in [
        (p("fp8:e4m3", 4, 3, true, false, false), 4),
        (p("fp8:e5m2", 5, 2, false, false, false), 9),
    ] {
        let to = golden(&to_p);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 3);
        let mut gen = RefGen::new(3);
        for a in 0..1u64 << 16 {
            let got = from.convert_with(&to, a, &mut rounder);
            let draw = Some((bits, gen.draw(bits)));
            let want = match pf.val(a) {
                V::Nan => to_p.nan(),
                V::Inf(neg) => to_p.infinite(neg),
                V::Fin(s, n, x) => to_p.round_dy(&signed(s, n), x, draw, s),
            };
            assert_eq!(got, want, "f16 {a:#06x} -> {}", to_p.name);
        }
    }
}

/// For values whose discarded part has top R bits d (discarded parts shorter than R, longer
/// than R with bits below the top R, subnormal, below the smallest subnormal, at the
/// overflow edge), exactly d of the 2^R draws step away from zero.
#[test]
fn exactly_d_of_the_2_to_the_r_draws_step() {
    let f: FloatFormat = match "fp8:e4m3".parse::<Format>().unwrap() {
        Format::Float(f) => f,
        _ => unreachable!(),
    };
    // (sig, exp): the value sig·2^exp; its last place 2^lsb; d is computed from the bits.
    let cases: [(u128, i64); 7] = [
        (0b1011_0110, -7),       // 1.0110110: s = 4 discarded bits 0110
        (0b1001_1, -4),          // 1.0011: s = 1 discarded bit
        (0b1111_1011_0111, -11), // s = 8: 1011_0111
        (0b101_1011, -16),       // subnormal (emin − M = −9): s = 7
        (0b1011, -14),           // below the smallest subnormal 2^−9: s = 5
        (0b1110_1101, 1),        // 464 = 448 + 16: past max finite, steps to NaN
        (0b1100_0000, -7),       // exact: d = 0
    ];
    for bits in [1u32, 3, 8, 12] {
        for &(sig, exp) in &cases {
            let top = exp + 127 - i64::from(sig.leading_zeros());
            let lsb = (top - 3).max(-9);
            let s = (lsb - exp).max(0) as u32;
            let disc = sig & ((1 << s) - 1);
            // d = floor(disc / 2^s · 2^R), written out.
            let d = ((disc << bits) >> s) as u32;
            let down = f.round_with(false, sig, exp, Draw::Stochastic { bits, r: 0 });
            let mut ups = 0;
            for r in 0..1u32 << bits {
                let w = f.round_with(false, sig, exp, Draw::Stochastic { bits, r });
                if w != down {
                    ups += 1;
                    // Up is the next code (magnitude + 1), or the overflow word.
                    assert!(w == down + 1, "{sig:#b}·2^{exp}: {down:#x} -> {w:#x}");
                    assert!(r >= (1 << bits) - d, "steps only for r >= 2^R - d");
                }
                // Negative values: the same decision, on the magnitude.
                // (The overflow word of fp8:e4m3 is its one NaN, 0x7f, for either sign.)
                let wn = f.round_with(true, sig, exp, Draw::Stochastic { bits, r });
                assert_eq!(wn, if w == 0x7f { w } else { w | 0x80 });
            }
            assert_eq!(ups, d, "{sig:#b}·2^{exp} R={bits}");
        }
    }
}

/// Unbiased: the mean of many stochastic roundings of x is x within a stated tolerance,
/// while nearest's is off by the discarded part; and a long sum of small terms, which
/// nearest cannot grow, reaches its true value.
#[test]
fn stochastic_rounding_is_unbiased_where_nearest_is_not() {
    let f: FloatFormat = match "bf16".parse::<Format>().unwrap() {
        Format::Float(f) => f,
        _ => unreachable!(),
    };
    let ulp = 2f64.powi(-7);
    // x = 1 + ulp/3: nearest gives 1 every time (bias −ulp/3).
    let x = 1.0 + ulp / 3.0;
    let n = 200_000;
    let mut r = Rounder::new(Rounding::Stochastic(16), 99);
    let mean = (0..n)
        .map(|_| f.to_f64(f.from_f64_with(x, &mut r)))
        .sum::<f64>()
        / n as f64;
    // σ of one rounding ≈ ulp·√(p(1−p)) = 0.47 ulp; of the mean 0.47/√n ≈ 0.001 ulp. The
    // tolerance 0.01 ulp is ten σ plus the 2^−16 ulp the R = 16 cut may lose.
    assert!(((mean - x) / ulp).abs() < 0.01, "mean {mean} vs {x}");
    assert!((f.to_f64(f.from_f64(x)) - x).abs() / ulp > 0.3);
    // 1 + 4096 · 2^−9 = 9: nearest stays at 1 (each term is a quarter of 1's last place).
    let term = f.from_f64(2f64.powi(-9));
    let (mut near, mut sto) = (f.one(), f.one());
    let mut r = Rounder::new(Rounding::Stochastic(8), 1);
    for _ in 0..4096 {
        near = f.add(near, term);
        sto = f.add_with(sto, term, &mut r);
    }
    assert_eq!(f.to_f64(near), 1.0);
    // Past 2 the terms are an eighth of the last place (and less past 4, 8): the sum's σ
    // stays under 0.2; 0.5 is more than two last places at 9 (0.0625 each).
    assert!((f.to_f64(sto) - 9.0).abs() < 0.5, "{}", f.to_f64(sto));
}

// ------------------------------------------------------------------------- fix, by hand

/// fix:I:F's word of (−1)^neg·num/den by the rule on the two's complement value v·2^F: the
/// floor k and the fraction rem/den of one last place; step iff floor(frac·2^R) + r ≥ 2^R;
/// then saturate.
fn fix_round(i: u32, fb: u32, v: (BigInt, BigInt), draw: (u32, u32)) -> u64 {
    let (num, den) = v;
    let scaled = num << fb as usize;
    let (k, rem) = scaled.div_mod_floor(&den);
    let (bits, r) = draw;
    let d: BigInt = (rem << bits as usize) / &den;
    let k = if d + r >= BigInt::one() << bits as usize {
        k + 1
    } else {
        k
    };
    let w = 1 + i + fb;
    let (lo, hi) = (
        -(BigInt::one() << (w - 1) as usize),
        (BigInt::one() << (w - 1) as usize) - 1,
    );
    let k = k.clamp(lo, hi).to_i64().unwrap();
    (k as u64) & ((1 << w) - 1)
}

fn fix_value(i: u32, fb: u32, a: u64) -> BigInt {
    let w = 1 + i + fb;
    let sh = 64 - w;
    BigInt::from(((a << sh) as i64) >> sh)
}

fn fix_format(s: &str) -> FixFormat {
    match s.parse::<Format>().unwrap() {
        Format::Fix(f) => f,
        _ => unreachable!(),
    }
}

/// Every pair of fix:3:4 (mul, div) and of fix:0:7 (mul), random f64 values into fix:7:8
/// and fix:15:16, and every fix:3:4 word into fix:2:1: the golden results equal the rule on
/// the exact value with the reference generator's draws.
#[test]
fn fix_rounds_its_twos_complement_value_by_the_rule() {
    for (spec, i, fb, bits) in [("fix:3:4", 3, 4, 3), ("fix:0:7", 0, 7, 8)] {
        let f = fix_format(spec);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 5);
        let mut gen = RefGen::new(5);
        let mut stepped = 0;
        for a in 0..256u64 {
            for b in 0..256u64 {
                let (x, y) = (fix_value(i, fb, a), fix_value(i, fb, b));
                // a·b: (x·y)/2^(2F) → num/den with den > 0.
                let got = f.mul_with(a, b, &mut rounder);
                let r = gen.draw(bits);
                let want = fix_round(
                    i,
                    fb,
                    (&x * &y, BigInt::one() << (2 * fb) as usize),
                    (bits, r),
                );
                assert_eq!(got, want, "{spec} mul {a:#x} {b:#x}");
                stepped += u32::from(got != f.mul(a, b));
                if spec == "fix:3:4" {
                    let got = f.div_with(a, b, &mut rounder);
                    let r = gen.draw(bits);
                    let want = if y.is_zero() {
                        f.div(a, b) // saturation with x's sign, 0/0 = 0: no rounding
                    } else {
                        let (n, d) = if y.is_negative() {
                            (-&x, -&y)
                        } else {
                            (x.clone(), y.clone())
                        };
                        fix_round(i, fb, (n, d), (bits, r))
                    };
                    assert_eq!(got, want, "{spec} div {a:#x} {b:#x}");
                }
                // add and sub do not round: the same words, no draw.
                assert_eq!(f.binop_with(BinOp::Add, a, b, &mut rounder), f.add(a, b));
            }
        }
        assert!(stepped > 1000, "{spec}: {stepped}");
    }
    let mut rng = Pcg64::seed_from_u64(8);
    for (spec, i, fb, bits) in [
        ("fix:7:8", 7, 8, 12),
        ("fix:15:16", 15, 16, 32),
        ("fix:0:30", 0, 30, 7),
    ] {
        let f = fix_format(spec);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 6);
        let mut gen = RefGen::new(6);
        for _ in 0..20_000 {
            let x = match rng.gen_range(0..4) {
                0 => f64::from_bits(rng.gen()),
                _ => rng.gen_range(-1.0..1.0) * (rng.gen_range(-40..20) as f64).exp2(),
            };
            let got = f.from_f64_with(x, &mut rounder);
            let r = gen.draw(bits);
            let want = if x.is_nan() {
                0
            } else if x.is_infinite() {
                f.from_f64(x)
            } else {
                let (neg, n, e) = f64_parts(x);
                let n = signed(neg, BigInt::from(n));
                let (num, den) = if e >= 0 {
                    (n << e as usize, BigInt::one())
                } else {
                    (n, BigInt::one() << (-e) as usize)
                };
                fix_round(i, fb, (num, den), (bits, r))
            };
            assert_eq!(got, want, "{spec} {x:e}");
        }
    }
    let (from, to) = (fix_format("fix:3:4"), fix_format("fix:2:1"));
    let mut rounder = Rounder::new(Rounding::Stochastic(2), 4);
    let mut gen = RefGen::new(4);
    for a in 0..256u64 {
        let got = from.convert_with(&to, a, &mut rounder);
        let want = fix_round(
            2,
            1,
            (fix_value(3, 4, a), BigInt::from(16)),
            (2, gen.draw(2)),
        );
        assert_eq!(got, want, "fix:3:4 {a:#x} -> fix:2:1");
    }
}

/// fix: exactly d of the 2^R draws step, for positive and negative values (d from the
/// two's complement discarded bits), and the mean of many roundings is unbiased.
#[test]
fn fix_steps_for_exactly_d_draws_and_is_unbiased() {
    let f = fix_format("fix:7:8");
    // Products a·b with 8 discarded bits (R = 3 and 12: longer and shorter than them).
    for (a, b) in [
        (0x0123u64, 0x0045u64),
        (0xfedc, 0x0045),
        (0x0100, 0x0080),
        (0xff01, 0x00ff),
    ] {
        let p = f.to_int(a) as i128 * f.to_int(b) as i128;
        let disc = p.rem_euclid(256) as u32;
        for bits in [3u32, 12] {
            let d = (disc << bits) >> 8;
            let mut ups = 0;
            for r in 0..1u32 << bits {
                let w = f.from_int(round_shift(p, 8, Draw::Stochastic { bits, r }));
                if w != f.from_int(p.div_euclid(256)) {
                    ups += 1;
                    assert!(r >= (1 << bits) - d);
                }
            }
            assert_eq!(ups, d, "{a:#x}·{b:#x} R={bits}");
        }
    }
    // Unbiased: x = −0.3 in fix:7:8 (−76.8 last places): the mean of 10^5 roundings.
    let mut r = Rounder::new(Rounding::Stochastic(16), 12);
    let n = 100_000;
    let mean = (0..n)
        .map(|_| f.to_f64(f.from_f64_with(-0.3, &mut r)))
        .sum::<f64>()
        / n as f64;
    let ulp = 1.0 / 256.0;
    assert!(((mean + 0.3) / ulp).abs() < 0.01, "{mean}");
    assert!((f.to_f64(f.from_f64(-0.3)) + 0.3).abs() / ulp > 0.15);
}
