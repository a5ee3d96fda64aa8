//! The reference's exact arithmetic: rationals of `BigInt`s, rounding to a binary float's grid
//! by floor-and-compare, and the UE4M3 and E2M1 codes decoded from their bit fields.

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;

/// An exact rational n/d, d > 0.
#[derive(Clone, Debug)]
pub struct Fr {
    pub n: BigInt,
    pub d: BigInt,
}

impl Fr {
    pub fn int(n: i64) -> Fr {
        Fr {
            n: n.into(),
            d: BigInt::one(),
        }
    }
    /// 2^k.
    pub fn pow2(k: i64) -> Fr {
        if k >= 0 {
            Fr {
                n: BigInt::one() << k as usize,
                d: BigInt::one(),
            }
        } else {
            Fr {
                n: BigInt::one(),
                d: BigInt::one() << (-k) as usize,
            }
        }
    }
    /// The exact value of a finite f64, from its bit fields.
    pub fn of(x: f64) -> Fr {
        let b = x.to_bits();
        let field = ((b >> 52) & 0x7ff) as i64;
        let frac = (b & ((1 << 52) - 1)) as i64;
        let (m, e) = if field == 0 {
            (frac, -1074)
        } else {
            (frac + (1 << 52), field - 1075)
        };
        let v = Fr::int(m).mul(&Fr::pow2(e));
        if b >> 63 == 1 {
            v.neg()
        } else {
            v
        }
    }
    pub fn mul(&self, o: &Fr) -> Fr {
        Fr {
            n: &self.n * &o.n,
            d: &self.d * &o.d,
        }
    }
    pub fn div(&self, o: &Fr) -> Fr {
        let (n, d) = (&self.n * &o.d, &self.d * &o.n);
        if d.is_negative() {
            Fr { n: -n, d: -d }
        } else {
            Fr { n, d }
        }
    }
    pub fn add(&self, o: &Fr) -> Fr {
        Fr {
            n: &self.n * &o.d + &o.n * &self.d,
            d: &self.d * &o.d,
        }
    }
    pub fn sub(&self, o: &Fr) -> Fr {
        Fr {
            n: &self.n * &o.d - &o.n * &self.d,
            d: &self.d * &o.d,
        }
    }
    pub fn neg(&self) -> Fr {
        Fr {
            n: -&self.n,
            d: self.d.clone(),
        }
    }
    pub fn abs(&self) -> Fr {
        Fr {
            n: self.n.abs(),
            d: self.d.clone(),
        }
    }
    pub fn cmp(&self, o: &Fr) -> Ordering {
        (&self.n * &o.d).cmp(&(&o.n * &self.d))
    }
    pub fn is_zero(&self) -> bool {
        self.n.is_zero()
    }
    /// ⌊self⌋.
    pub fn floor(&self) -> BigInt {
        let (q, r) = (&self.n / &self.d, &self.n % &self.d);
        if r.is_negative() {
            q - 1
        } else {
            q
        }
    }
    /// ⌊log2 self⌋ of a positive value, by comparison.
    pub fn floor_log2(&self) -> i64 {
        let mut k = self.n.bits() as i64 - self.d.bits() as i64;
        while self.cmp(&Fr::pow2(k)) == Ordering::Less {
            k -= 1;
        }
        while self.cmp(&Fr::pow2(k + 1)) != Ordering::Less {
            k += 1;
        }
        k
    }
    pub fn to_f64(&self) -> f64 {
        // Only for values that are f64s (checked by the callers' round trip).
        let v = self.abs();
        if v.is_zero() {
            return if self.n.is_negative() { -0.0 } else { 0.0 };
        }
        let e = v.floor_log2();
        let m = v.div(&Fr::pow2(e - 52)).floor();
        let m: u64 = m.try_into().unwrap();
        let x = m as f64 * 2f64.powi((e - 52) as i32);
        if self.n.is_negative() {
            -x
        } else {
            x
        }
    }
}

/// A binary float's positive grid: M fraction bits, smallest normal exponent emin, largest
/// finite value max.
pub struct Grid {
    m: i64,
    emin: i64,
    max: Fr,
}

/// A positive r rounded to nearest on `g`'s grid, ties to the even significand, saturating
/// at max: floor to the binade's last place, then compare the remainder with half of it.
pub fn round_grid(r: &Fr, g: &Grid) -> Fr {
    if r.is_zero() {
        return Fr::int(0);
    }
    let e = r.floor_log2().max(g.emin);
    let ulp = Fr::pow2(e - g.m);
    let q = r.div(&ulp).floor();
    let rem = r.sub(
        &Fr {
            n: q.clone(),
            d: BigInt::one(),
        }
        .mul(&ulp),
    );
    let half = ulp.mul(&Fr::pow2(-1));
    let up = match rem.cmp(&half) {
        Ordering::Greater => true,
        Ordering::Equal => (&q % 2u32) == BigInt::one(),
        Ordering::Less => false,
    };
    let v = Fr {
        n: q + u32::from(up),
        d: BigInt::one(),
    }
    .mul(&ulp);
    if v.cmp(&g.max) == Ordering::Greater {
        g.max.clone()
    } else {
        v
    }
}

pub fn f32_grid() -> Grid {
    Grid {
        m: 23,
        emin: -126,
        max: Fr::int((1 << 24) - 1).mul(&Fr::pow2(104)),
    }
}

pub fn f64_grid() -> Grid {
    Grid {
        m: 52,
        emin: -1022,
        max: Fr::of(f64::MAX),
    }
}

/// An E4M3 code's value (0x00..=0x7E), from its fields.
pub fn e4m3(c: u8) -> Fr {
    let (e, m) = (i64::from(c >> 3 & 0xf), i64::from(c & 7));
    if e == 0 {
        Fr::int(m).mul(&Fr::pow2(-9))
    } else {
        Fr::int(8 + m).mul(&Fr::pow2(e - 10))
    }
}

/// An E2M1 magnitude code's value (0..=7).
pub fn e2m1(c: u8) -> Fr {
    let (e, m) = (i64::from(c >> 1 & 3), i64::from(c & 1));
    if e == 0 {
        Fr::int(m).mul(&Fr::pow2(-1))
    } else {
        Fr::int(2 + m).mul(&Fr::pow2(e - 2))
    }
}

/// The code among `codes` whose value is nearest to r >= 0, ties to the even code;
/// beyond the largest, the largest (saturation).
pub fn nearest(r: &Fr, codes: impl Iterator<Item = u8>, value: fn(u8) -> Fr) -> u8 {
    let mut best: Option<(u8, Fr)> = None;
    for c in codes {
        let d = value(c).sub(r).abs();
        best = match best {
            None => Some((c, d)),
            Some((b, bd)) => match d.cmp(&bd) {
                Ordering::Less => Some((c, d)),
                Ordering::Equal if c % 2 == 0 => Some((c, d)),
                _ => Some((b, bd)),
            },
        };
    }
    best.unwrap().0
}

/// A rational of either sign rounded on `g`'s grid (nearest, ties to even), as an f64 (+0 for
/// zero).
pub fn round_signed(r: &Fr, g: &Grid) -> f64 {
    let v = round_grid(&r.abs(), g).to_f64();
    if r.n.is_negative() {
        -v
    } else {
        v
    }
}
