//! The float reference, from docs/formats.md's words: exact values in big integers, the
//! last place found, kept and discarded parts split, the rule applied.

use lpgen_golden::float::FloatFormat;
use lpgen_golden::Format;
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// A float format as the test states it.
#[derive(Clone, Copy, Debug)]
pub struct P {
    pub name: &'static str,
    pub e: u32,
    pub m: u32,
    pub fin: bool,
    pub sat: bool,
    pub ftz: bool,
}

/// An exact value: NaN, ±∞, or (−1)^neg · n · 2^x.
#[derive(Clone, Debug)]
pub enum V {
    Nan,
    Inf(bool),
    Fin(bool, BigInt, i64),
}

impl P {
    pub fn bias(&self) -> i64 {
        (1 << (self.e - 1)) - 1
    }
    pub fn emin(&self) -> i64 {
        1 - self.bias()
    }
    pub fn emax(&self) -> i64 {
        self.bias() + i64::from(self.fin)
    }
    pub fn sign(&self) -> u64 {
        1 << (self.e + self.m)
    }
    pub fn zero(&self, neg: bool) -> u64 {
        if neg {
            self.sign()
        } else {
            0
        }
    }
    pub fn ones(&self) -> u64 {
        (1 << self.e) - 1
    }
    pub fn fmask(&self) -> u64 {
        (1 << self.m) - 1
    }
    pub fn nan(&self) -> u64 {
        (self.ones() << self.m)
            | if self.fin {
                self.fmask()
            } else {
                1 << (self.m - 1)
            }
    }
    pub fn max(&self, neg: bool) -> u64 {
        self.zero(neg)
            | if self.fin {
                (self.ones() << self.m) | (self.fmask() - 1)
            } else {
                ((self.ones() - 1) << self.m) | self.fmask()
            }
    }
    pub fn infinite(&self, neg: bool) -> u64 {
        match (self.fin, self.sat) {
            (false, _) => self.zero(neg) | (self.ones() << self.m),
            (true, true) => self.max(neg),
            (true, false) => self.nan(),
        }
    }
    pub fn overflow(&self, neg: bool) -> u64 {
        if self.sat {
            self.max(neg)
        } else if self.fin {
            self.nan()
        } else {
            self.infinite(neg)
        }
    }

    /// A word's value by IEEE's formula.
    pub fn val(&self, w: u64) -> V {
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
    pub fn round(&self, neg: bool, num: &BigUint, den: &BigUint, draw: Option<(u32, u32)>) -> u64 {
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

    pub fn round_dy(&self, n: &BigInt, x: i64, draw: Option<(u32, u32)>, zero_neg: bool) -> u64 {
        if n.is_zero() {
            return self.zero(zero_neg);
        }
        let mag = n.abs().to_biguint().unwrap();
        let (num, den) = (shifted(&mag, x.max(0)), shifted(&BigUint::one(), -x.min(0)));
        self.round(n.is_negative(), &num, &den, draw)
    }

    pub fn add(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
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

    pub fn product(&self, a: V, b: V) -> V {
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

    pub fn mul(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
        match self.product(a, b) {
            V::Nan => self.nan(),
            V::Inf(neg) => self.infinite(neg),
            V::Fin(s, n, x) => self.round_dy(&signed(s, n), x, draw, s),
        }
    }

    pub fn div(&self, a: V, b: V, draw: Option<(u32, u32)>) -> u64 {
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

    pub fn fma(&self, a: V, b: V, c: V, draw: Option<(u32, u32)>) -> u64 {
        match (self.product(a, b), c) {
            (V::Fin(s, n, x), V::Fin(sc, nc, xc)) => {
                self.add(V::Fin(s, n, x), V::Fin(sc, nc, xc), draw)
            }
            (p, c) => self.add(p, c, draw),
        }
    }

    pub fn round_f64(&self, x: f64, draw: Option<(u32, u32)>) -> u64 {
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

pub fn shifted(x: &BigUint, by: i64) -> BigUint {
    assert!(by >= 0);
    x << by as u64
}

pub fn signed(neg: bool, n: BigInt) -> BigInt {
    if neg {
        -n
    } else {
        n
    }
}

/// x = (−1)^neg · n · 2^e exactly.
pub fn f64_parts(x: f64) -> (bool, u64, i64) {
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

pub fn golden(p: &P) -> FloatFormat {
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

pub const fn p(name: &'static str, e: u32, m: u32, fin: bool, sat: bool, ftz: bool) -> P {
    P {
        name,
        e,
        m,
        fin,
        sat,
        ftz,
    }
}

pub const EIGHT_BIT: [(P, u32); 4] = [
    (p("fp8:e4m3", 4, 3, true, false, false), 3),
    (p("fp8:e5m2", 5, 2, false, false, false), 8),
    (p("float:4:3:sat", 4, 3, false, true, false), 2),
    (p("float:2:5:ftz", 2, 5, false, false, true), 5),
];
