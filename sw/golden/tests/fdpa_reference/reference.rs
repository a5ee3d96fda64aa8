//! Issue 49's "The arithmetic", written from its text with exact rationals, apart from the
//! golden model: every value is an exact dyadic rational n·2^k (a `BigInt` n), the words are
//! decoded from their bit fields here, and the roundings are searches by comparison.

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// The rounding of a chunk's sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rho {
    RzF32,
    RzE8m13,
    RneF16,
}

/// An operand format's fields, as the test states them.
#[derive(Clone, Copy, Debug)]
pub struct Fmt {
    pub e: u32,
    pub m: u32,
    /// `:fn` (no infinities, NaN at the all-ones code) or `:nonan` (no NaN either).
    pub fin: bool,
    pub nonan: bool,
    pub ftz: bool,
}

/// What the test says a mode computes.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub l: usize,
    pub f: i64,
    pub rho: Rho,
    pub promote: Option<usize>,
    /// binary32 operands read as tf32 (the low 13 fraction bits dropped).
    pub tf32: bool,
}

/// An exact rational n·2^k.
#[derive(Clone, Debug)]
pub struct Q {
    pub n: BigInt,
    pub k: i64,
}

impl Q {
    fn mul(&self, o: &Q) -> Q {
        Q {
            n: &self.n * &o.n,
            k: self.k + o.k,
        }
    }
    pub fn add(&self, o: &Q) -> Q {
        let k = self.k.min(o.k);
        Q {
            n: (&self.n << (self.k - k) as usize) + (&o.n << (o.k - k) as usize),
            k,
        }
    }
    /// self·2^s.
    fn scale(&self, s: i64) -> Q {
        Q {
            n: self.n.clone(),
            k: self.k + s,
        }
    }
    /// Toward zero to an integer.
    fn trunc(&self) -> BigInt {
        if self.k >= 0 {
            &self.n << self.k as usize
        } else {
            // BigInt's `/` truncates toward zero.
            &self.n / (BigInt::one() << (-self.k) as usize)
        }
    }
    fn is_zero(&self) -> bool {
        self.n.is_zero()
    }
    fn neg(&self) -> bool {
        self.n.is_negative()
    }
    fn abs(&self) -> Q {
        Q {
            n: self.n.abs(),
            k: self.k,
        }
    }
    /// ⌊log2 |self|⌋ (self ≠ 0).
    fn log2(&self) -> i64 {
        self.n.abs().bits() as i64 - 1 + self.k
    }
}

/// A decoded operand or term: NaN, ±∞, or s·2^e (s signed, 1 ≤ |s| < 2 for a normal).
#[derive(Clone, Debug)]
pub enum Num {
    Nan,
    Inf(bool),
    Fin { s: Q, e: i64 },
}

/// The word `w` of `f` as s·2^e, from its bit fields (a subnormal at 1 − bias, s < 1).
pub fn decode(f: Fmt, w: u64, tf32: bool) -> Num {
    let (e, m) = (f.e, f.m);
    let neg = (w >> (e + m)) & 1 == 1;
    let field = (w >> m) & ((1 << e) - 1);
    let mut frac = w & ((1 << m) - 1);
    let ones = (1 << e) - 1;
    if field == ones && !f.fin {
        return if frac == 0 { Num::Inf(neg) } else { Num::Nan };
    }
    if field == ones && f.fin && !f.nonan && frac == (1 << m) - 1 {
        return Num::Nan;
    }
    if tf32 {
        frac &= !((1 << 13) - 1);
    }
    let bias = (1i64 << (e - 1)) - 1;
    let (sig, ex) = if field == 0 {
        (if f.ftz { 0 } else { frac }, 1 - bias)
    } else {
        (frac | 1 << m, field as i64 - bias)
    };
    let n = BigInt::from(sig);
    Num::Fin {
        s: Q {
            n: if neg { -n } else { n },
            k: -(m as i64),
        },
        e: ex,
    }
}

const F32: Fmt = Fmt {
    e: 8,
    m: 23,
    fin: false,
    nonan: false,
    ftz: false,
};
const F16: Fmt = Fmt {
    e: 5,
    m: 10,
    fin: false,
    nonan: false,
    ftz: false,
};

fn out_fmt(rho: Rho) -> Fmt {
    match rho {
        Rho::RzF32 | Rho::RzE8m13 => F32,
        Rho::RneF16 => F16,
    }
}

/// The exponent of a term whose s is 0.
fn e_zero(rho: Rho) -> i64 {
    match rho {
        Rho::RzF32 | Rho::RzE8m13 => -133,
        Rho::RneF16 => -21,
    }
}

/// The IEEE word of sign `neg`, unbiased exponent `ex` and fraction `frac` (ex = 1 − bias
/// with a fraction below 2^m: a subnormal).
fn word(f: Fmt, neg: bool, field: u64, frac: u64) -> u64 {
    (u64::from(neg) << (f.e + f.m)) | (field << f.m) | frac
}

/// |x| toward zero with `m` fraction bits in the exponent range of `f` (an IEEE format with
/// subnormals; overflow: the largest value with m fraction bits), as a word of `f`.
fn round_rz(x: &Q, f: Fmt, m: u32) -> u64 {
    if x.is_zero() {
        return 0;
    }
    let bias = (1i64 << (f.e - 1)) - 1;
    let (emin, emax) = (1 - bias, bias);
    let e = x.log2();
    if e > emax {
        let frac = ((1u64 << m) - 1) << (f.m - m);
        return word(f, x.neg(), (emax + bias) as u64, frac);
    }
    let e = e.max(emin);
    // q = ⌊|x| / 2^(e − m)⌋, at most 2^(m+1) − 1.
    let q: u64 = x.abs().scale(m as i64 - e).trunc().try_into().unwrap();
    if q == 0 {
        return 0;
    }
    let frac = (q & ((1 << m) - 1)) << (f.m - m);
    let field = if q >> m == 0 { 0 } else { (e + bias) as u64 };
    word(f, x.neg(), field, frac)
}

/// x to the nearest value of `f` (IEEE, with subnormals), ties to the even fraction;
/// overflow ±∞. A zero result keeps the sign `zero_neg`.
pub fn round_ne(x: &Q, f: Fmt, zero_neg: bool) -> u64 {
    if x.is_zero() {
        return word(f, zero_neg, 0, 0);
    }
    let bias = (1i64 << (f.e - 1)) - 1;
    let (emin, emax, m) = (1 - bias, bias, i64::from(f.m));
    let e = x.log2().max(emin);
    let scaled = x.abs().scale(m - e);
    let q = scaled.trunc();
    // The remainder against one half: 2·(scaled − q) vs 1.
    let rem = scaled.add(&Q {
        n: -q.clone(),
        k: 0,
    });
    let twice = rem.scale(1);
    let one = Q {
        n: BigInt::one(),
        k: 0,
    };
    let up = match cmp(&twice, &one) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => (&q & BigInt::one()) == BigInt::one(),
    };
    let mut q: u64 = (q + u64::from(up)).try_into().unwrap();
    let mut e = e;
    if q >> (m + 1) != 0 {
        q >>= 1;
        e += 1;
    }
    if e > emax {
        return word(f, x.neg(), (2 * bias + 1) as u64, 0);
    }
    if q == 0 {
        return word(f, x.neg(), 0, 0);
    }
    let field = if q >> m == 0 { 0 } else { (e + bias) as u64 };
    word(f, x.neg(), field, q & ((1 << m) - 1))
}

fn cmp(a: &Q, b: &Q) -> std::cmp::Ordering {
    let d = a.add(&Q {
        n: -b.n.clone(),
        k: b.k,
    });
    d.n.sign().cmp(&num_bigint::Sign::NoSign)
}

fn nan(rho: Rho) -> u64 {
    match rho {
        Rho::RzF32 | Rho::RzE8m13 => 0x7FFF_FFFF,
        Rho::RneF16 => 0x7FFF,
    }
}

fn inf(rho: Rho, neg: bool) -> u64 {
    let f = out_fmt(rho);
    word(f, neg, (1 << f.e) - 1, 0)
}

/// A product's term: s_a·s_b at e_a + e_b (NaN for a NaN operand or ∞·0).
fn product(x: Num, y: Num) -> Num {
    match (x, y) {
        (Num::Nan, _) | (_, Num::Nan) => Num::Nan,
        (Num::Inf(p), Num::Inf(q)) => Num::Inf(p != q),
        (Num::Inf(p), Num::Fin { s, .. }) | (Num::Fin { s, .. }, Num::Inf(p)) => {
            if s.is_zero() {
                Num::Nan
            } else {
                Num::Inf(p != s.neg())
            }
        }
        (Num::Fin { s: sa, e: ea }, Num::Fin { s: sb, e: eb }) => Num::Fin {
            s: sa.mul(&sb),
            e: ea + eb,
        },
    }
}

/// One chunk: C ← step(chunk, C), the output word.
fn step(spec: &Spec, f: Fmt, a: &[u64], b: &[u64], c: u64) -> u64 {
    let rho = spec.rho;
    let mut terms: Vec<Num> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| product(decode(f, x, spec.tf32), decode(f, y, spec.tf32)))
        .collect();
    terms.push(decode(out_fmt(rho), c, false));
    if terms.iter().any(|t| matches!(t, Num::Nan)) {
        return nan(rho);
    }
    let pos = terms.iter().any(|t| matches!(t, Num::Inf(false)));
    let neg = terms.iter().any(|t| matches!(t, Num::Inf(true)));
    if pos && neg {
        return nan(rho);
    }
    if pos || neg {
        return inf(rho, neg);
    }
    // A zero term stands at e_zero.
    let fins: Vec<(Q, i64)> = terms
        .into_iter()
        .map(|t| match t {
            Num::Fin { s, e } => {
                let e = if s.is_zero() { e_zero(rho) } else { e };
                (s, e)
            }
            Num::Nan | Num::Inf(_) => unreachable!("handled above"),
        })
        .collect();
    let e_max = fins.iter().map(|(_, e)| *e).max().unwrap();
    // t_i = trunc(s_i·2^(e_i − e_max + F))·2^(−F), summed exactly, times 2^e_max.
    let mut sum = BigInt::zero();
    for (s, e) in &fins {
        sum += s.scale(e - e_max + spec.f).trunc();
    }
    let x = Q {
        n: sum,
        k: e_max - spec.f,
    };
    match rho {
        Rho::RzF32 => round_rz(&x, F32, 23),
        Rho::RzE8m13 => round_rz(&x, F32, 13),
        // A −0 result (a negative sum below half the smallest subnormal) is +0.
        Rho::RneF16 => match round_ne(&x, F16, false) {
            0x8000 => 0,
            w => w,
        },
    }
}

/// The chunks of L from C.
fn chunked(spec: &Spec, f: Fmt, a: &[u64], b: &[u64], mut c: u64) -> u64 {
    let mut k = 0;
    while k < a.len() {
        let end = (k + spec.l).min(a.len());
        c = step(spec, f, &a[k..end], &b[k..end], c);
        k = end;
    }
    c
}

/// x + y in binary32, rounded to nearest even (IEEE: NaN, ∞ − ∞ NaN, an exact zero sum +0
/// unless both are −0).
fn add_f32(x: u64, y: u64) -> u64 {
    match (decode(F32, x, false), decode(F32, y, false)) {
        (Num::Nan, _) | (_, Num::Nan) => 0x7FFF_FFFF,
        (Num::Inf(p), Num::Inf(q)) if p != q => 0x7FFF_FFFF,
        (Num::Inf(p), _) | (_, Num::Inf(p)) => inf(Rho::RzF32, p),
        (Num::Fin { s: sx, e: ex }, Num::Fin { s: sy, e: ey }) => {
            let both_neg = x >> 31 == 1 && y >> 31 == 1;
            round_ne(&sx.scale(ex).add(&sy.scale(ey)), F32, both_neg)
        }
    }
}

/// D = Σ a_k·b_k + C as the issue defines it: the output word.
pub fn fdpa(spec: &Spec, f: Fmt, a: &[u64], b: &[u64], c: u64) -> u64 {
    let Some(n) = spec.promote else {
        return chunked(spec, f, a, b, c);
    };
    let mut acc = c;
    let mut k = 0;
    while k < a.len() {
        let end = (k + n).min(a.len());
        acc = add_f32(acc, chunked(spec, f, &a[k..end], &b[k..end], 0));
        k = end;
    }
    acc
}
