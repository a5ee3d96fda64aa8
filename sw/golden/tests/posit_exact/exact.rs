//! Exact dyadic rationals m·2^e, and exact results (dyadics or ratios) to be rounded.

use super::*;

/// The exact number m·2^e, kept with m odd (or m = 0 and e = 0), so equal values are equal
/// structs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dyadic {
    pub(crate) m: BigInt,
    pub(crate) e: i64,
}

impl Dyadic {
    pub(crate) fn new(m: BigInt, e: i64) -> Dyadic {
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

    pub(crate) fn zero() -> Dyadic {
        Dyadic::new(BigInt::zero(), 0)
    }

    pub(crate) fn int(i: i64) -> Dyadic {
        Dyadic::new(BigInt::from(i), 0)
    }

    /// 2^e.
    pub(crate) fn pow2(e: i64) -> Dyadic {
        Dyadic::new(BigInt::one(), e)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.m.is_zero()
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.m.sign() == Sign::Minus
    }

    pub(crate) fn neg(&self) -> Dyadic {
        Dyadic {
            m: -&self.m,
            e: self.e,
        }
    }

    pub(crate) fn add(&self, o: &Dyadic) -> Dyadic {
        let e = self.e.min(o.e);
        Dyadic::new(
            (&self.m << (self.e - e) as u64) + (&o.m << (o.e - e) as u64),
            e,
        )
    }

    pub(crate) fn sub(&self, o: &Dyadic) -> Dyadic {
        self.add(&o.neg())
    }

    pub(crate) fn mul(&self, o: &Dyadic) -> Dyadic {
        Dyadic::new(&self.m * &o.m, self.e + o.e)
    }

    /// The exact value of a finite f64, from its bits.
    pub(crate) fn from_f64(x: f64) -> Dyadic {
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
    pub(crate) fn scaled(&self, frac_bits: u32) -> Option<BigInt> {
        let sh = self.e + frac_bits as i64;
        (sh >= 0).then(|| &self.m << sh as u64)
    }

    pub(crate) fn cmp(&self, o: &Dyadic) -> Ordering {
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
pub(crate) enum Exact {
    NaR,
    Dyadic(Dyadic),
    Ratio(Dyadic, Dyadic),
}

impl Exact {
    pub(crate) fn ratio(num: Dyadic, den: Dyadic) -> Exact {
        assert!(!den.is_zero());
        if den.is_negative() {
            Exact::Ratio(num.neg(), den.neg())
        } else {
            Exact::Ratio(num, den)
        }
    }

    /// Where the exact value lies relative to v.
    pub(crate) fn cmp(&self, v: &Dyadic) -> Ordering {
        match self {
            Exact::NaR => unreachable!(),
            Exact::Dyadic(x) => x.cmp(v),
            // num/den <=> v  iff  num <=> v·den, as den > 0.
            Exact::Ratio(num, den) => num.cmp(&v.mul(den)),
        }
    }
}
