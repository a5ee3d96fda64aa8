//! The float family (`lpgen_golden::float`) against references written apart from it, from
//! the words of docs/formats.md ("float:E:M"):
//!
//! 1. every pair of words of five 8-bit formats: add, sub, mul, div (and fma on random
//!    triples) against the exact rational result rounded by [`Spec::round`], a search of the
//!    sorted codes for the nearest value, ties to the even code;
//! 2. bf16 and f16 conversions from f64 and f32 against the `half` crate, and add/mul against
//!    `half`'s f32 arithmetic rounded once where the f32 result is exact;
//! 3. `float:8:23` against the native `f32` family on every operation;
//! 4. the exact accumulator against the exact rational sum rounded once.
//!
//! The run of 10^6 pairs per operation for bf16 and f16 is `#[ignore]`d:
//! `cargo test -p lpgen-golden --test float_reference -- --ignored`.

use std::cmp::Ordering;

use half::{bf16, f16};
use lpgen_golden::Family;
use lpgen_golden::{Bits, Calc, FloatFormat, Format, SumMode};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// A format's parameters as the test states them (not read from the golden model).
#[derive(Clone, Copy, Debug)]
struct Params {
    name: &'static str,
    e: u32,
    m: u32,
    fin: bool,
    sat: bool,
    ftz: bool,
}

const EIGHT_BIT: [Params; 5] = [
    Params {
        name: "fp8:e4m3",
        e: 4,
        m: 3,
        fin: true,
        sat: false,
        ftz: false,
    },
    Params {
        name: "fp8:e5m2",
        e: 5,
        m: 2,
        fin: false,
        sat: false,
        ftz: false,
    },
    Params {
        name: "float:3:4",
        e: 3,
        m: 4,
        fin: false,
        sat: false,
        ftz: false,
    },
    Params {
        name: "float:4:3:sat",
        e: 4,
        m: 3,
        fin: false,
        sat: true,
        ftz: false,
    },
    Params {
        name: "float:2:5:ftz",
        e: 2,
        m: 5,
        fin: false,
        sat: false,
        ftz: true,
    },
];

const BF16: Params = Params {
    name: "bf16",
    e: 8,
    m: 7,
    fin: false,
    sat: false,
    ftz: false,
};

const F16: Params = Params {
    name: "f16",
    e: 5,
    m: 10,
    fin: false,
    sat: false,
    ftz: false,
};

/// A word's meaning by IEEE's formula: NaN, ±∞, or ±n·2^−S (n ≥ 0, S = [`Spec::s`]).
#[derive(Clone, Debug)]
enum Rv {
    Nan,
    Inf(bool),
    Fin(bool, BigInt),
}

/// The reference of one format: its parameters and the values of its nonnegative codes,
/// in code order (which is value order), up to one code past the largest finite one.
struct Spec {
    p: Params,
    /// Every value is a multiple of 2^−S, S = M − emin + 2 (two bits more than the smallest
    /// subnormal, so that the :ftz threshold 2^emin − 2^(emin−M−2) is one).
    s: u32,
    /// vals[c] = value of code c times 2^S, c = 0 ..= top.
    vals: Vec<BigInt>,
    /// The code one past the largest finite: the ∞ code, or with :fn the NaN code.
    top: u64,
    golden: FloatFormat,
}

impl Spec {
    fn new(p: Params) -> Spec {
        let bias = (1i64 << (p.e - 1)) - 1;
        let emin = 1 - bias;
        let s = (i64::from(p.m) - emin + 2) as u32;
        let top = if p.fin {
            (1u64 << (p.e + p.m)) - 1
        } else {
            ((1u64 << p.e) - 1) << p.m
        };
        // value = 2^(field − bias) · (1 + frac/2^M), or 2^(1 − bias) · frac/2^M for field 0.
        let vals = (0..=top)
            .map(|c| {
                let (field, frac) = ((c >> p.m) as i64, BigInt::from(c & ((1 << p.m) - 1)));
                let (n, e) = if field == 0 {
                    (frac, 1 - bias - i64::from(p.m))
                } else {
                    ((BigInt::one() << p.m) + frac, field - bias - i64::from(p.m))
                };
                n << (e + i64::from(s)) as usize
            })
            .collect();
        let golden = match p.name.parse::<Format>() {
            Ok(Format::Float(f)) => f,
            other => panic!("{}: {other:?}", p.name),
        };
        assert_eq!(
            (
                golden.exp_bits,
                golden.frac_bits,
                golden.finite,
                golden.sat,
                golden.ftz
            ),
            (p.e, p.m, p.fin, p.sat, p.ftz),
            "{}",
            p.name
        );
        Spec {
            p,
            s,
            vals,
            top,
            golden,
        }
    }

    fn sign(&self) -> u64 {
        1 << (self.p.e + self.p.m)
    }

    fn zero(&self, neg: bool) -> u64 {
        if neg {
            self.sign()
        } else {
            0
        }
    }

    /// The canonical NaN of docs/formats.md: sign 0, exponent all ones, the fraction's top
    /// bit (with :fn: all ones).
    fn nan(&self) -> u64 {
        let ones = ((1u64 << self.p.e) - 1) << self.p.m;
        if self.p.fin {
            ones | ((1 << self.p.m) - 1)
        } else {
            ones | (1 << (self.p.m - 1))
        }
    }

    /// An exact infinite result: ±∞; with :fn NaN, or ±max with :fn:sat.
    fn infinite(&self, neg: bool) -> u64 {
        match (self.p.fin, self.p.sat) {
            (false, _) => self.zero(neg) | self.top,
            (true, true) => self.zero(neg) | (self.top - 1),
            (true, false) => self.nan(),
        }
    }

    /// A finite result past max: ±max with :sat, NaN with :fn, else ±∞.
    fn overflow(&self, neg: bool) -> u64 {
        if self.p.sat {
            self.zero(neg) | (self.top - 1)
        } else if self.p.fin {
            self.nan()
        } else {
            self.zero(neg) | self.top
        }
    }

    fn rv(&self, w: u64) -> Rv {
        let neg = w & self.sign() != 0;
        let c = w & (self.sign() - 1);
        let field = c >> self.p.m;
        let frac = c & ((1 << self.p.m) - 1);
        let ones = (1 << self.p.e) - 1;
        if self.p.fin && c == self.top {
            return Rv::Nan;
        }
        if !self.p.fin && field == ones {
            return if frac == 0 { Rv::Inf(neg) } else { Rv::Nan };
        }
        if self.p.ftz && field == 0 {
            return Rv::Fin(neg, BigInt::zero());
        }
        Rv::Fin(neg, self.vals[c as usize].clone())
    }

    /// The word nearest to (−1)^neg · p/q (p ≥ 0, q > 0), found among the sorted codes;
    /// ties to the even code (= the even significand).
    fn round(&self, neg: bool, p: &BigInt, q: &BigInt) -> u64 {
        if p.is_zero() {
            return self.zero(neg);
        }
        let ps = p << self.s as usize; // x·2^S = ps/q
        let min_normal = 1u64 << self.p.m;
        if self.p.ftz && ps < &self.vals[min_normal as usize] * q {
            // Below 2^emin: 2^emin if it rounds there at M + 1 bits, else zero.
            let threshold = &self.vals[min_normal as usize] - 1; // 2^emin − 2^(emin−M−2)
            return if ps >= threshold * q {
                self.zero(neg) | min_normal
            } else {
                self.zero(neg)
            };
        }
        // The largest c with vals[c] <= x.
        let (mut lo, mut hi) = (0u64, self.top);
        if &self.vals[hi as usize] * q <= ps {
            return self.overflow(neg);
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if &self.vals[mid as usize] * q <= ps {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let twice: BigInt = &ps << 1usize;
        let mid = (&self.vals[lo as usize] + &self.vals[hi as usize]) * q;
        let c = match twice.cmp(&mid) {
            Ordering::Less => lo,
            Ordering::Greater => hi,
            Ordering::Equal => {
                if lo % 2 == 0 {
                    lo
                } else {
                    hi
                }
            }
        };
        if c == self.top {
            self.overflow(neg)
        } else {
            self.zero(neg) | c
        }
    }

    fn pow2s(&self, k: u32) -> BigInt {
        BigInt::one() << (k * self.s) as usize
    }

    /// The signed exact sum x + y (n·2^−S each) rounded; an exact zero is −0 only when both
    /// are zeros of negative sign.
    fn round_sum(&self, terms: &[(bool, BigInt)], k: u32) -> u64 {
        let total: BigInt = terms
            .iter()
            .map(|(neg, n)| if *neg { -n.clone() } else { n.clone() })
            .sum();
        if total.is_zero() {
            return self.zero(terms.iter().all(|(neg, _)| *neg));
        }
        self.round(total.is_negative(), &total.abs(), &self.pow2s(k))
    }

    fn add(&self, a: u64, b: u64) -> u64 {
        match (self.rv(a), self.rv(b)) {
            (Rv::Nan, _) | (_, Rv::Nan) => self.nan(),
            (Rv::Inf(x), Rv::Inf(y)) => {
                if x == y {
                    self.infinite(x)
                } else {
                    self.nan()
                }
            }
            (Rv::Inf(x), _) | (_, Rv::Inf(x)) => self.infinite(x),
            (Rv::Fin(sa, na), Rv::Fin(sb, nb)) => self.round_sum(&[(sa, na), (sb, nb)], 1),
        }
    }

    fn sub(&self, a: u64, b: u64) -> u64 {
        self.add(a, b ^ self.sign())
    }

    /// The product as a term at scale 2^−2S, or NaN / ±∞.
    fn product(&self, a: u64, b: u64) -> Result<(bool, BigInt), Rv> {
        match (self.rv(a), self.rv(b)) {
            (Rv::Nan, _) | (_, Rv::Nan) => Err(Rv::Nan),
            (Rv::Inf(x), Rv::Inf(y)) => Err(Rv::Inf(x != y)),
            (Rv::Inf(x), Rv::Fin(s, n)) | (Rv::Fin(s, n), Rv::Inf(x)) => Err(if n.is_zero() {
                Rv::Nan
            } else {
                Rv::Inf(x != s)
            }),
            (Rv::Fin(sa, na), Rv::Fin(sb, nb)) => Ok((sa != sb, na * nb)),
        }
    }

    fn mul(&self, a: u64, b: u64) -> u64 {
        match self.product(a, b) {
            Err(Rv::Inf(neg)) => self.infinite(neg),
            Err(_) => self.nan(),
            Ok((neg, n)) => self.round(neg, &n, &self.pow2s(2)),
        }
    }

    fn div(&self, a: u64, b: u64) -> u64 {
        match (self.rv(a), self.rv(b)) {
            (Rv::Nan, _) | (_, Rv::Nan) | (Rv::Inf(_), Rv::Inf(_)) => self.nan(),
            (Rv::Inf(x), Rv::Fin(s, _)) => self.infinite(x != s),
            (Rv::Fin(s, _), Rv::Inf(x)) => self.zero(x != s),
            (Rv::Fin(sa, na), Rv::Fin(sb, nb)) => match (na.is_zero(), nb.is_zero()) {
                (true, true) => self.nan(),
                (false, true) => self.infinite(sa != sb),
                _ => self.round(sa != sb, &na, &nb),
            },
        }
    }

    fn fma(&self, a: u64, b: u64, c: u64) -> u64 {
        let p = self.product(a, b);
        match (p, self.rv(c)) {
            (Err(Rv::Nan), _) | (_, Rv::Nan) => self.nan(),
            (Err(Rv::Inf(x)), Rv::Inf(y)) if x != y => self.nan(),
            (Err(Rv::Inf(x)), _) | (_, Rv::Inf(x)) => self.infinite(x),
            (Err(Rv::Fin(..)), _) => unreachable!(),
            (Ok((sp, np)), Rv::Fin(sc, nc)) => {
                let nc = nc << self.s as usize;
                self.round_sum(&[(sp, np), (sc, nc)], 2)
            }
        }
    }

    /// Σ a_k·b_k exactly, rounded once: NaN for a NaN, 0·∞ or ∞ − ∞; an exact zero is +0.
    fn dot(&self, a: &[u64], b: &[u64]) -> u64 {
        let (mut nan, mut pinf, mut ninf) = (false, false, false);
        let mut total = BigInt::zero();
        for (&x, &y) in a.iter().zip(b) {
            match self.product(x, y) {
                Err(Rv::Inf(true)) => ninf = true,
                Err(Rv::Inf(false)) => pinf = true,
                Err(_) => nan = true,
                Ok((neg, n)) => total += if neg { -n } else { n },
            }
        }
        if nan || (pinf && ninf) {
            return self.nan();
        }
        if pinf || ninf {
            return self.infinite(ninf);
        }
        self.round(total.is_negative(), &total.abs(), &self.pow2s(2))
    }

    /// The exact value of an f64 as a rational p/q.
    fn round_f64(&self, x: f64) -> u64 {
        if x.is_nan() {
            return self.nan();
        }
        if x.is_infinite() {
            return self.infinite(x < 0.0);
        }
        let bits = x.to_bits();
        let field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (n, e) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        let (p, q) = if e >= 0 {
            (BigInt::from(n) << e as usize, BigInt::one())
        } else {
            (BigInt::from(n), BigInt::one() << (-e) as usize)
        };
        self.round(x.is_sign_negative(), &p, &q)
    }

    /// A word's value as an f64 (exact for these formats).
    fn value(&self, w: u64) -> f64 {
        match self.rv(w) {
            Rv::Nan => f64::NAN,
            Rv::Inf(neg) => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Rv::Fin(neg, n) => {
                let v = self.f64_of(&n);
                if neg {
                    -v
                } else {
                    v
                }
            }
        }
    }

    /// n·2^−S as an f64 (exact: at most M + 1 significant bits).
    fn f64_of(&self, n: &BigInt) -> f64 {
        let sh = n.bits().saturating_sub(64);
        let top = u64::try_from(n >> sh as usize).unwrap();
        top as f64 * 2f64.powi(sh as i32 - self.s as i32)
    }

    /// The value of code c by the formula, with the code past max finite (2^(emax+1), or
    /// with :fn the NaN code's would-be value) and without :ftz's flush.
    fn raw(&self, c: u64) -> f64 {
        self.f64_of(&self.vals[c as usize])
    }

    fn words(&self) -> u64 {
        1 << (1 + self.p.e + self.p.m)
    }
}

/// (operation, golden, reference) for the binary operations.
type Op = (
    &'static str,
    fn(&FloatFormat, Bits, Bits) -> Bits,
    fn(&Spec, u64, u64) -> u64,
);

const OPS: [Op; 4] = [
    ("add", FloatFormat::add, Spec::add),
    ("sub", FloatFormat::sub, Spec::sub),
    ("mul", FloatFormat::mul, Spec::mul),
    ("div", FloatFormat::div, Spec::div),
];

#[test]
fn every_pair_of_five_8_bit_formats() {
    let mut checked = 0u64;
    for p in EIGHT_BIT {
        let r = Spec::new(p);
        let g = r.golden;
        let n = r.words();
        for a in 0..n {
            for b in 0..n {
                for (name, golden, reference) in OPS {
                    let (got, want) = (golden(&g, a, b), reference(&r, a, b));
                    assert_eq!(
                        got, want,
                        "{} {name} {a:#04x} {b:#04x}: {got:#04x}, reference {want:#04x}",
                        p.name
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 5 * 4 * 65536);
    println!("8-bit formats: {checked} (pair, operation) results checked, 0 differences");
}

#[test]
fn scalar_rules_of_every_8_bit_word() {
    for p in EIGHT_BIT {
        let r = Spec::new(p);
        let g = r.golden;
        for a in 0..r.words() {
            let va = r.value(a);
            let got = g.to_f64(a);
            assert!(
                got == va || (got.is_nan() && va.is_nan()),
                "{} {a:#x}",
                p.name
            );
            assert_eq!(
                got.is_sign_negative(),
                va.is_sign_negative(),
                "{} {a:#x}",
                p.name
            );
            assert_eq!(g.is_nan(a), va.is_nan());
            assert_eq!(g.neg(a), a ^ r.sign());
            assert_eq!(g.abs(a), a & !r.sign());
            assert_eq!(g.from_f64(va), r.round_f64(va), "{} {a:#x}", p.name);
            for x in [va * 1.0625, va * 0.97, va / 3.0, va * 1e-3, va * 1e3] {
                assert_eq!(g.from_f64(x), r.round_f64(x), "{} {x:e}", p.name);
            }
            for b in 0..r.words() {
                let vb = r.value(b);
                assert_eq!(g.cmp(a, b), va.partial_cmp(&vb), "{} {a:#x} {b:#x}", p.name);
                let (mx, mn) = if va.is_nan() || vb.is_nan() {
                    (r.nan(), r.nan())
                } else {
                    let flush = |w: u64| if r.rv(w).is_zero() { w & r.sign() } else { w };
                    (
                        flush(if vb > va { b } else { a }),
                        flush(if vb < va { b } else { a }),
                    )
                };
                assert_eq!(g.max(a, b), mx, "{} max {a:#x} {b:#x}", p.name);
                assert_eq!(g.min(a, b), mn, "{} min {a:#x} {b:#x}", p.name);
            }
            // Conversions to every other 8-bit format round the exact value once.
            for q in EIGHT_BIT {
                let to = Spec::new(q);
                let want = to.round_f64(va);
                let got = Calc::Float(g)
                    .convert_to(&Calc::Float(to.golden), a)
                    .unwrap();
                assert_eq!(got, want, "{} {a:#x} -> {}", p.name, q.name);
            }
        }
    }
}

impl Rv {
    fn is_zero(&self) -> bool {
        matches!(self, Rv::Fin(_, n) if n.is_zero())
    }
}

fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A word: random bits, or near a corner (zero, the subnormals, 1, max, ∞, NaN).
fn word(r: &Spec, g: &mut Pcg64) -> u64 {
    let mask = r.words() - 1;
    let corners = [
        0,
        1,
        2,
        (1 << r.p.m) - 1,
        1 << r.p.m,
        (1 << r.p.m) + 1,
        r.golden.one(),
        r.golden.one() + 1,
        r.golden.one() - 1,
        r.top - 1,
        r.top - 2,
        r.top,
        r.top + 1,
        mask >> 1,
    ];
    let w = match g.gen_range(0..8) {
        0 => corners[g.gen_range(0..corners.len())] ^ (g.gen_range(0..2) * r.sign()),
        _ => g.gen::<u64>(),
    };
    w & mask
}

/// A pair: random words, or operands whose exponents are close (cancellation, carries).
fn pair(r: &Spec, g: &mut Pcg64) -> (u64, u64) {
    let a = word(r, g);
    let b = if g.gen_range(0..4) == 0 {
        let d = g.gen_range(0..(4u64 << r.p.m));
        (a ^ (g.gen_range(0..2) * r.sign()))
            .wrapping_add(d)
            .wrapping_sub(2 << r.p.m)
            & (r.words() - 1)
    } else {
        word(r, g)
    };
    (a, b)
}

fn fma_against_reference(p: Params, triples: usize, seed: u64) {
    let r = Spec::new(p);
    let mut g = rng(seed);
    for _ in 0..triples {
        let (a, b) = pair(&r, &mut g);
        let c = if g.gen_range(0..2) == 0 {
            word(&r, &mut g)
        } else {
            // Near −a·b: cancellation in the fused sum.
            r.golden.neg(r.golden.mul(a, b)) ^ g.gen_range(0..4)
        };
        assert_eq!(
            r.golden.fma(a, b, c),
            r.fma(a, b, c),
            "{} fma {a:#x} {b:#x} {c:#x}",
            p.name
        );
    }
}

#[test]
fn fma_rounds_the_exact_result_once() {
    for (i, p) in EIGHT_BIT.into_iter().enumerate() {
        fma_against_reference(p, 100_000, 50 + i as u64);
    }
    fma_against_reference(BF16, 20_000, 60);
    fma_against_reference(F16, 20_000, 61);
}

fn pairs_against_reference(p: Params, pairs: usize, seed: u64) {
    let r = Spec::new(p);
    let mut g = rng(seed);
    for _ in 0..pairs {
        let (a, b) = pair(&r, &mut g);
        for (name, golden, reference) in OPS {
            let (got, want) = (golden(&r.golden, a, b), reference(&r, a, b));
            assert_eq!(got, want, "{} {name} {a:#x} {b:#x}", p.name);
        }
    }
}

#[test]
fn bf16_and_f16_pairs_against_the_reference() {
    pairs_against_reference(BF16, 20_000, 1);
    pairs_against_reference(F16, 20_000, 2);
}

/// The `half` crate's words for an f64 (its own conversion).
fn half_word(p: &Params, x: f64) -> u64 {
    u64::from(match p.name {
        "bf16" => bf16::from_f64(x).to_bits(),
        _ => f16::from_f64(x).to_bits(),
    })
}

/// f64s for conversions: random bit patterns, random values in and around the format's
/// range, the format's values, their midpoints (ties) and the f64s next to them.
fn conversion_inputs(r: &Spec, g: &mut Pcg64, n: usize) -> Vec<f64> {
    let mut xs = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
    ];
    let step = (r.top / (n as u64 / 8)).max(1) as usize;
    // Every `step`-th code, and all at the top (overflow) and the bottom (subnormals).
    let codes = (0..r.top)
        .step_by(step)
        .chain(r.top - 8..r.top)
        .chain(0..16);
    for c in codes {
        let (v, next) = (r.raw(c), r.raw(c + 1));
        let mid = (v + next) / 2.0; // exact: one bit more than the format's
        for x in [v, mid, next_up(mid), next_down(mid)] {
            xs.push(x);
            xs.push(-x);
        }
    }
    let span = (1i32 << (r.p.e - 1)) + r.p.m as i32 + 4;
    while xs.len() < 2 * n {
        xs.push(f64::from_bits(g.gen()));
        let x: f64 = g.gen_range(1.0..2.0) * 2f64.powi(g.gen_range(-span..span));
        xs.push(if g.gen() { -x } else { x });
    }
    xs
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

#[test]
fn bf16_and_f16_conversions_agree_with_half() {
    for (p, seed) in [(BF16, 10), (F16, 11)] {
        let r = Spec::new(p);
        let mut g = rng(seed);
        let (mut clean, mut half_wrong) = (0, 0);
        for x in conversion_inputs(&r, &mut g, 100_000) {
            let got = r.golden.from_f64(x);
            let want = r.round_f64(x);
            let h = half_word(&p, x);
            assert_eq!(got, want, "{} from_f64({x:e})", p.name);
            if x.is_nan() {
                assert!(r.golden.is_nan(h));
                continue;
            }
            // `half` rounds from the top 32 bits of the f64 (and f16 through f32 with
            // F16C): bit for bit where those hold the whole value.
            if x.to_bits() as u32 == 0 {
                assert_eq!(got, h, "{} from_f64({x:e}) vs half", p.name);
                clean += 1;
            } else if got != h {
                // Its truncation changed the result; the exact reference says which is right.
                assert_ne!(h, want, "{} {x:e}", p.name);
                half_wrong += 1;
            }
        }
        println!(
            "{}: {clean} conversions bit for bit with half; {half_wrong} others where half \
             differs (it rounds from the f64's top 32 bits: ties + 1 ulp; the exact reference \
             agrees with the golden model on each)",
            p.name
        );
        // Every f32 (exactly an f64 with the low 32 bits zero) converts as half converts it.
        for _ in 0..100_000 {
            let x = f32::from_bits(g.gen());
            let h = match p.name {
                "bf16" => bf16::from_f32(x).to_bits(),
                _ => f16::from_f32(x).to_bits(),
            };
            let got = r.golden.from_f64(f64::from(x));
            assert!(
                got == u64::from(h) || (x.is_nan() && r.golden.is_nan(got)),
                "{x:e}"
            );
        }
    }
    // The known case: 1 + 2^−11 + 2^−40 is above the tie between f16's 1 and 1 + 2^−10.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let f = Spec::new(F16);
    assert_eq!(f.golden.from_f64(x), 0x3c01);
    assert_eq!(f.round_f64(x), 0x3c01);
}

/// half's f32 arithmetic rounded once, where the f32 result is exact (so that rounding it
/// to the format is the one rounding of the exact result); `None` where it is not.
fn half_op(p: &Params, op: &str, a: u64, b: u64) -> Option<u64> {
    let to32 = |w: u64| match p.name {
        "bf16" => bf16::from_bits(w as u16).to_f32(),
        _ => f16::from_bits(w as u16).to_f32(),
    };
    let (x, y) = (to32(a), to32(b));
    let z = match op {
        "add" => x + y,
        "mul" => x * y,
        _ => unreachable!(),
    };
    // The exact result in f64 (TwoSum's error term, or a product of 2·11 bits).
    let (x64, y64, z64) = (f64::from(x), f64::from(y), f64::from(z));
    let exact = match op {
        "add" => {
            let s = x64 + y64;
            let bb = s - x64;
            let err = (x64 - (s - bb)) + (y64 - bb);
            err == 0.0 && s == z64
        }
        _ => x64 * y64 == z64,
    };
    if !exact || z.is_nan() {
        return None;
    }
    Some(u64::from(match p.name {
        "bf16" => bf16::from_f32(z).to_bits(),
        _ => f16::from_f32(z).to_bits(),
    }))
}

fn pairs_against_half(p: Params, pairs: usize, seed: u64) -> (usize, usize) {
    let r = Spec::new(p);
    let mut g = rng(seed);
    let (mut compared, mut skipped) = (0, 0);
    for _ in 0..pairs {
        let (a, b) = pair(&r, &mut g);
        for (op, got) in [("add", r.golden.add(a, b)), ("mul", r.golden.mul(a, b))] {
            match half_op(&p, op, a, b) {
                Some(h) => {
                    assert_eq!(got, h, "{} {op} {a:#x} {b:#x}", p.name);
                    compared += 1;
                }
                None => skipped += 1,
            }
        }
    }
    (compared, skipped)
}

#[test]
fn bf16_and_f16_add_and_mul_agree_with_half_where_f32_is_exact() {
    for (p, seed) in [(BF16, 20), (F16, 21)] {
        let (compared, skipped) = pairs_against_half(p, 100_000, seed);
        println!(
            "{}: {compared} results as half's, {skipped} not exact in f32",
            p.name
        );
        assert!(compared > 50_000);
    }
}

/// 10^6 pairs per operation for bf16 and f16: the exact reference (add, sub, mul, div) and
/// half's f32 arithmetic (add, mul, where exact).
#[test]
#[ignore]
fn a_million_pairs_per_operation_for_bf16_and_f16() {
    for (p, seed) in [(BF16, 100), (F16, 101)] {
        pairs_against_reference(p, 1_000_000, seed);
        let (compared, skipped) = pairs_against_half(p, 1_000_000, seed + 10);
        fma_against_reference(p, 1_000_000, seed + 20);
        println!(
            "{}: 10^6 pairs x add, sub, mul, div and 10^6 fma triples as the exact \
             reference; {compared} add/mul results as half's ({skipped} not exact in f32)",
            p.name
        );
    }
}

fn calc(s: &str) -> Calc {
    s.parse::<Format>().unwrap().calc()
}

/// f32 operands: random bits, corners, and pairs of close exponents.
fn f32_pair(g: &mut Pcg64) -> (u64, u64) {
    const CORNERS: [u32; 14] = [
        0,
        0x8000_0000,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x0080_0001,
        0x3f80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x7f7f_ffff,
        0x7f7f_fffe,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
    ];
    let w = |g: &mut Pcg64| -> u32 {
        match g.gen_range(0..8) {
            0 => CORNERS[g.gen_range(0..CORNERS.len())] ^ (g.gen::<u32>() & 0x8000_0000),
            1 => g.gen::<u32>() & 0x807f_ffff, // subnormals
            _ => g.gen(),
        }
    };
    let a = w(g);
    let b = if g.gen_range(0..4) == 0 {
        (a ^ (g.gen::<u32>() & 0x8000_0000))
            .wrapping_add(g.gen_range(0..1u32 << 26))
            .wrapping_sub(1 << 25)
    } else {
        w(g)
    };
    (u64::from(a), u64::from(b))
}

#[test]
fn float_8_23_is_f32_but_for_nan_payloads() {
    let (f, n) = (calc("f32"), calc("float:8:23"));
    let same = |what: &str, x: u64, y: u64, a: u64, b: u64| {
        let nan = |c: &Calc, w| c.is_nan(w);
        assert!(
            x == y || (nan(&f, x) && nan(&n, y)),
            "{what} {a:#x} {b:#x}: f32 {x:#x}, float:8:23 {y:#x}"
        );
    };
    let mut g = rng(3);
    for _ in 0..100_000 {
        let (a, b) = f32_pair(&mut g);
        for (op, x, y) in [
            ("add", f.add(a, b), n.add(a, b)),
            ("sub", f.sub(a, b), n.sub(a, b)),
            ("mul", f.mul(a, b), n.mul(a, b)),
            ("div", f.div(a, b), n.div(a, b)),
            ("max", f.max(a, b), n.max(a, b)),
            ("min", f.min(a, b), n.min(a, b)),
            ("neg", f.neg(a), n.neg(a)),
            ("abs", f.abs(a), n.abs(a)),
        ] {
            same(op, x, y, a, b);
        }
        assert_eq!(f.cmp(a, b), n.cmp(a, b));
        let (x, y) = (f.to_f64(a), n.to_f64(a));
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
        let d = f64::from_bits(g.gen());
        same("from_f64", f.from_f64(d), n.from_f64(d), d.to_bits(), 0);
        let d = f64::from(f32::from_bits(a as u32)) * g.gen_range(0.5..2.0);
        same("from_f64", f.from_f64(d), n.from_f64(d), d.to_bits(), 0);
    }
    // Sums and dot products in the rounded modes, on short vectors.
    for _ in 0..5_000 {
        let k = g.gen_range(0..12);
        let (xs, ys): (Vec<u64>, Vec<u64>) = (0..k).map(|_| f32_pair(&mut g)).unzip();
        for mode in [SumMode::Naive, SumMode::Kahan, SumMode::Pairwise] {
            let (x, y) = (f.sum(mode, &xs).unwrap(), n.sum(mode, &xs).unwrap());
            same("sum", x, y, k as u64, 0);
            let (x, y) = (
                f.dot(mode, &xs, &ys).unwrap(),
                n.dot(mode, &xs, &ys).unwrap(),
            );
            same("dot", x, y, k as u64, 0);
        }
    }
    // Decimal operands (from_ratio) and exp / ln (f32's libm result rounded to f32 is double
    // rounding: counted, and each difference checked to be float:8:23's correct rounding).
    let mut transcendental_differences = 0;
    for i in 0..20_000 {
        let s = format!(
            "{:e}",
            g.gen_range(-1.0f64..1.0) * 10f64.powi(g.gen_range(-45..39))
        );
        assert_eq!(f.parse(&s).unwrap(), n.parse(&s).unwrap(), "{s}");
        let (a, _) = f32_pair(&mut g);
        let a = if i % 2 == 0 {
            a
        } else {
            n.from_f64(g.gen_range(-100.0..100.0))
        };
        for (x, y) in [(f.exp(a), n.exp(a)), (f.ln(a), n.ln(a))] {
            if !(x == y || (f.is_nan(x) && n.is_nan(y))) {
                transcendental_differences += 1;
            }
        }
    }
    println!("float:8:23 vs f32: exp/ln differ on {transcendental_differences} of 40000");
    assert_eq!(transcendental_differences, 0);
}

#[test]
fn exact_dot_is_the_exact_sum_rounded_once() {
    let mut g = rng(4);
    for p in EIGHT_BIT.into_iter().chain([BF16, F16]) {
        let r = Spec::new(p);
        let c = Calc::Float(r.golden);
        for i in 0..3_000 {
            let k = g.gen_range(0..24);
            let (a, b): (Vec<u64>, Vec<u64>) = (0..k)
                .map(|_| {
                    if i % 4 == 0 {
                        (word(&r, &mut g), word(&r, &mut g))
                    } else {
                        // Finite operands: NaN and ∞ would decide most sums.
                        let mut w = || loop {
                            let w = word(&r, &mut g);
                            if r.golden.to_f64(w).is_finite() {
                                return w;
                            }
                        };
                        (w(), w())
                    }
                })
                .unzip();
            assert_eq!(
                c.dot(SumMode::Quire, &a, &b).unwrap(),
                r.dot(&a, &b),
                "{} {a:x?} {b:x?}",
                p.name
            );
            let ones = vec![r.golden.one(); k];
            assert_eq!(
                c.sum(SumMode::Quire, &a).unwrap(),
                r.dot(&a, &ones),
                "{}",
                p.name
            );
        }
    }
}
