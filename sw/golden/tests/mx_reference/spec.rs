//! The reference of tests/mx_reference.rs: the OCP MX v1.0 element types, scale, conversion
//! (§6.3) and dot product (§6.4) from the specification's words, in exact integers and
//! dyadic rationals. Nothing here calls the MX module (only its result types are named).

use std::cmp::Ordering;

use lpgen_golden::mx::{Exact, MxBlock};
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};

/// How an element type's top exponent codes are used (spec §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Special {
    /// E4M3: no ∞, NaN only at S.1111.111.
    NanAllOnes,
    /// E5M2: IEEE-like, all-ones exponent holds ±∞ (fraction 0) and NaN.
    Ieee,
    /// FP6, FP4: every code a number.
    None,
}

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Float { e: u32, m: u32, special: Special },
    Int8,
}

/// The element types as the spec states them: (MX name, kind, emax_elem, stated max).
pub const TYPES: [(&str, Kind, i64, f64); 6] = [
    (
        "fp8:e4m3",
        Kind::Float {
            e: 4,
            m: 3,
            special: Special::NanAllOnes,
        },
        8,
        448.0,
    ),
    (
        "fp8:e5m2",
        Kind::Float {
            e: 5,
            m: 2,
            special: Special::Ieee,
        },
        15,
        57344.0,
    ),
    (
        "fp6:e3m2",
        Kind::Float {
            e: 3,
            m: 2,
            special: Special::None,
        },
        4,
        28.0,
    ),
    (
        "fp6:e2m3",
        Kind::Float {
            e: 2,
            m: 3,
            special: Special::None,
        },
        2,
        7.5,
    ),
    (
        "fp4:e2m1",
        Kind::Float {
            e: 2,
            m: 1,
            special: Special::None,
        },
        2,
        6.0,
    ),
    ("int8", Kind::Int8, 0, 127.0 / 64.0),
];

/// An exact dyadic with a sign: (−1)^neg · mag · 2^e (mag < 2^64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct D {
    pub neg: bool,
    pub mag: u64,
    pub e: i64,
}

/// A value of an element code as the spec defines it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    Nan,
    Inf(bool),
    Fin(D),
}

/// Compares magnitudes exactly.
pub fn cmp_mag(a: D, b: D) -> Ordering {
    match (a.mag == 0, b.mag == 0) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    let top = |d: D| d.e + 64 - i64::from(d.mag.leading_zeros());
    match top(a).cmp(&top(b)) {
        Ordering::Equal => {
            let low = a.e.min(b.e);
            (u128::from(a.mag) << (a.e - low)).cmp(&(u128::from(b.mag) << (b.e - low)))
        }
        o => o,
    }
}

pub fn f64_d(x: f64) -> D {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (mag, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    D {
        neg: bits >> 63 == 1,
        mag,
        e,
    }
}

/// The spec's value of `code` of an element type.
pub fn value(kind: Kind, code: u64) -> V {
    match kind {
        Kind::Int8 => {
            let k = code as u8 as i8;
            V::Fin(D {
                neg: k < 0,
                mag: u64::from(k.unsigned_abs()),
                e: -6,
            })
        }
        Kind::Float { e, m, special } => {
            let neg = code >> (e + m) & 1 == 1;
            let field = (code >> m) & ((1 << e) - 1);
            let frac = code & ((1 << m) - 1);
            let ones = (1 << e) - 1;
            let bias = (1i64 << (e - 1)) - 1;
            match special {
                Special::Ieee if field == ones => {
                    return if frac == 0 { V::Inf(neg) } else { V::Nan }
                }
                Special::NanAllOnes if field == ones && frac == (1 << m) - 1 => return V::Nan,
                _ => {}
            }
            let (mag, ex) = if field == 0 {
                (frac, 1 - bias - i64::from(m))
            } else {
                (frac | 1 << m, field as i64 - bias - i64::from(m))
            };
            V::Fin(D { neg, mag, e: ex })
        }
    }
}

pub fn width(kind: Kind) -> u32 {
    match kind {
        Kind::Int8 => 8,
        Kind::Float { e, m, .. } => 1 + e + m,
    }
}

/// The non-negative values an element may take on conversion, ascending, with their codes.
pub fn ladder(kind: Kind) -> Vec<(D, u64)> {
    let codes: Vec<u64> = match kind {
        Kind::Int8 => (0..=127).collect(),
        Kind::Float { e, m, .. } => (0..1u64 << (e + m)).collect(),
    };
    let mut out: Vec<(D, u64)> = codes
        .into_iter()
        .filter_map(|c| match value(kind, c) {
            V::Fin(d) => Some((d, c)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| cmp_mag(a.0, b.0));
    out
}

/// One element converted as §6.3: |q| to the nearest ladder value (ties to the even code),
/// beyond the top to the top; then the sign (a float keeps a zero's sign).
pub fn ref_elem(kind: Kind, lad: &[(D, u64)], q: D) -> u64 {
    let qa = D { neg: false, ..q };
    let (top, top_code) = *lad.last().unwrap();
    let code = if cmp_mag(qa, top) != Ordering::Less {
        top_code
    } else {
        let i = lad.partition_point(|v| cmp_mag(v.0, qa) != Ordering::Greater) - 1;
        let (lo, hi) = (lad[i], lad[i + 1]);
        // Midpoint (lo + hi) / 2 at a common exponent.
        let low = lo.0.e.min(hi.0.e);
        let sum = (lo.0.mag << (lo.0.e - low)) + (hi.0.mag << (hi.0.e - low));
        let mid = D {
            neg: false,
            mag: sum,
            e: low - 1,
        };
        match cmp_mag(qa, mid) {
            Ordering::Less => lo.1,
            Ordering::Greater => hi.1,
            Ordering::Equal if lo.1 % 2 == 0 => lo.1,
            Ordering::Equal => hi.1,
        }
    };
    match kind {
        Kind::Int8 if q.neg => (code as u8).wrapping_neg() as u64,
        Kind::Int8 => code,
        Kind::Float { e, m, .. } => code | u64::from(q.neg) << (e + m),
    }
}

/// §6.3 for a block, as docs/formats.md completes it (NaN/∞ anywhere: scale 0xFF, codes 0;
/// an all-zero block: shared exponent −127).
pub fn ref_block(kind: Kind, emax: i64, xs: &[f64]) -> (u8, Vec<u64>) {
    if xs.iter().any(|x| !x.is_finite()) {
        return (0xff, vec![0; xs.len()]);
    }
    let amax = xs.iter().map(|x| f64_d(*x)).fold(
        D {
            neg: false,
            mag: 0,
            e: 0,
        },
        |m, d| {
            if cmp_mag(d, m) == Ordering::Greater {
                D { neg: false, ..d }
            } else {
                m
            }
        },
    );
    let shared = if amax.mag == 0 {
        -127
    } else {
        // ⌊log2 amax⌋: the t with 2^t <= amax < 2^(t+1).
        let mut t = (amax.mag as f64).log2().floor() as i64 + amax.e;
        let pow = |t: i64| D {
            neg: false,
            mag: 1,
            e: t,
        };
        while cmp_mag(pow(t), amax) == Ordering::Greater {
            t -= 1;
        }
        while cmp_mag(pow(t + 1), amax) != Ordering::Greater {
            t += 1;
        }
        (t - emax).clamp(-127, 127)
    };
    let lad = ladder(kind);
    let codes = xs
        .iter()
        .map(|x| {
            let d = f64_d(*x);
            ref_elem(
                kind,
                &lad,
                D {
                    e: d.e - shared,
                    ..d
                },
            )
        })
        .collect();
    ((shared + 127) as u8, codes)
}

/// f64 of a spec value (exact: every element value times 2^±127 is an f64).
pub fn v_f64(v: V) -> f64 {
    match v {
        V::Nan => f64::NAN,
        V::Inf(n) => {
            if n {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        V::Fin(d) => {
            let x = d.mag as f64 * 2f64.powi(d.e as i32);
            if d.neg {
                -x
            } else {
                x
            }
        }
    }
}

/// Exact rational of a block's dot product from the spec's values: NaN, ±∞ or num · 2^exp.
pub fn ref_dot(kind: Kind, a: &MxBlock, b: &MxBlock) -> Exact {
    if a.scale == 0xff || b.scale == 0xff {
        return Exact::Nan;
    }
    let (mut sum, mut pinf, mut ninf) = (BigInt::zero(), false, false);
    let low = -400i64; // below every product's last place (2^(2·(−16)))
    for (&x, &y) in a.codes.iter().zip(&b.codes) {
        match (value(kind, u64::from(x)), value(kind, u64::from(y))) {
            (V::Nan, _) | (_, V::Nan) => return Exact::Nan,
            (V::Inf(p), V::Inf(q)) => *(if p != q { &mut ninf } else { &mut pinf }) = true,
            (V::Inf(p), V::Fin(d)) | (V::Fin(d), V::Inf(p)) => {
                if d.mag == 0 {
                    return Exact::Nan;
                }
                *(if p != d.neg { &mut ninf } else { &mut pinf }) = true;
            }
            (V::Fin(p), V::Fin(q)) => {
                let t = (BigInt::from(p.mag) * BigInt::from(q.mag)) << (p.e + q.e - low) as usize;
                sum += if p.neg != q.neg { -t } else { t };
            }
        }
    }
    match (pinf, ninf) {
        (true, true) => Exact::Nan,
        (true, false) => Exact::Inf(false),
        (false, true) => Exact::Inf(true),
        _ => Exact::Fin {
            num: sum,
            exp: low + i64::from(a.scale) + i64::from(b.scale) - 254,
        }
        .normalized(),
    }
}

/// The f32 nearest to an exact value, ties to even: the nearest of the f32 neighbours of an
/// f64 approximation, compared exactly (∞ as 2^128, IEEE's overflow rule).
pub fn ref_f32(x: &Exact) -> f32 {
    let (num, exp) = match x {
        Exact::Nan => return f32::NAN,
        Exact::Inf(n) => return if *n { f32::NEG_INFINITY } else { f32::INFINITY },
        Exact::Fin { num, exp } => (num.clone(), *exp),
    };
    let approx =
        num.to_f64().unwrap() * 2f64.powi((exp / 2) as i32) * 2f64.powi((exp - exp / 2) as i32);
    let c = (approx as f32).abs().min(f32::MAX);
    let to_big = |f: f32| -> (BigInt, i64) {
        if f.is_infinite() {
            return (BigInt::from(1), 128);
        }
        let d = f64_d(f64::from(f));
        (BigInt::from(d.mag), d.e)
    };
    let cands = [
        f32::from_bits(c.to_bits().saturating_sub(1)),
        c,
        f32::from_bits(c.to_bits() + 1),
    ];
    let mag = num.magnitude().clone();
    let dist = |f: f32| -> (BigInt, i64) {
        let (m, e) = to_big(f);
        let low = e.min(exp).min(-2000);
        let a = m << (e - low) as usize;
        let b = BigInt::from(mag.clone()) << (exp - low) as usize;
        ((a - b).magnitude().clone().into(), low)
    };
    let best = cands
        .iter()
        .copied()
        .min_by(|&p, &q| {
            let (dp, dq) = (dist(p), dist(q));
            dp.0.cmp(&dq.0)
                .then((p.to_bits() & 1).cmp(&(q.to_bits() & 1)))
        })
        .unwrap();
    if num < BigInt::zero() {
        -best
    } else {
        best
    }
}
