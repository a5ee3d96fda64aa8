//! The MX block formats (`lpgen_golden::mx`) against a reference written here from the words
//! of the OCP Microscaling specification v1.0 and docs/formats.md ("MX block formats"), with
//! exact integers and dyadic rationals, never calling the code under test to compute an
//! expected value:
//!
//! - element types (spec §5.3): sign, E exponent bits with bias 2^(E−1) − 1, M fraction bits;
//!   exponent field 0 is subnormal (2^(1−bias) · 0.f); E4M3 has no ∞ and NaN at S.1111.111;
//!   E5M2 is IEEE-like (S.11111.00 = ±∞, other S.11111.xx NaN); E3M2, E2M3 and E2M1 have
//!   neither; INT8 is two's complement k with value k · 2^−6;
//! - the scale: E8M0, value 2^(s − 127), s = 0xFF NaN;
//! - conversion (§6.3): shared exponent ⌊log2 max|V_i|⌋ − emax_elem (8, 15, 4, 2, 2, 0 as the
//!   spec lists them), clamped to [−127, 127]; P_i = V_i / X to the nearest element value,
//!   ties to the even code, beyond ±max to ±max; INT8 to ±127 (the symmetric choice);
//! - the dot product (§6.4): X_A · X_B · Σ P_A,i · P_B,i exactly; over many blocks either
//!   exactly or each block's result rounded to f32 and added in f32.
//!
//! `cargo test --release -p lpgen-golden --test mx_reference -- --ignored` runs 10^5 random
//! blocks per element type.

use std::cmp::Ordering;

use lpgen_golden::mx::{Accumulation, Exact, MxBlock, MxFormat};
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// How an element type's top exponent codes are used (spec §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Special {
    /// E4M3: no ∞, NaN only at S.1111.111.
    NanAllOnes,
    /// E5M2: IEEE-like, all-ones exponent holds ±∞ (fraction 0) and NaN.
    Ieee,
    /// FP6, FP4: every code a number.
    None,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Float { e: u32, m: u32, special: Special },
    Int8,
}

/// The element types as the spec states them: (MX name, kind, emax_elem, stated max).
const TYPES: [(&str, Kind, i64, f64); 6] = [
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
struct D {
    neg: bool,
    mag: u64,
    e: i64,
}

/// A value of an element code as the spec defines it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    Nan,
    Inf(bool),
    Fin(D),
}

/// Compares magnitudes exactly.
fn cmp_mag(a: D, b: D) -> Ordering {
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

fn f64_d(x: f64) -> D {
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
fn value(kind: Kind, code: u64) -> V {
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

fn width(kind: Kind) -> u32 {
    match kind {
        Kind::Int8 => 8,
        Kind::Float { e, m, .. } => 1 + e + m,
    }
}

/// The non-negative values an element may take on conversion, ascending, with their codes.
fn ladder(kind: Kind) -> Vec<(D, u64)> {
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
fn ref_elem(kind: Kind, lad: &[(D, u64)], q: D) -> u64 {
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
fn ref_block(kind: Kind, emax: i64, xs: &[f64]) -> (u8, Vec<u64>) {
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

fn fmt(name: &str, k: usize) -> MxFormat {
    MxFormat::new(name, k).unwrap()
}

fn codes(b: &MxBlock) -> Vec<u64> {
    b.codes.iter().map(|&c| u64::from(c)).collect()
}

/// f64 of a spec value (exact: every element value times 2^±127 is an f64).
fn v_f64(v: V) -> f64 {
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

#[test]
fn every_code_decodes_to_the_specifications_value() {
    for (name, kind, _, max) in TYPES {
        let f = fmt(name, 32);
        let n = 1u64 << width(kind);
        for c in 0..n {
            let want = v_f64(value(kind, c));
            for scale in [0u8, 100, 127, 254] {
                let got = f
                    .dequantize_block(&MxBlock {
                        scale,
                        codes: vec![c as u8],
                    })
                    .unwrap()[0];
                let w = want * 2f64.powi(i32::from(scale) - 127);
                assert!(
                    got.to_bits() == w.to_bits() || (got.is_nan() && w.is_nan()),
                    "{name} code {c:#x} scale {scale}: {got} != {w}"
                );
            }
            let nan = f
                .dequantize_block(&MxBlock {
                    scale: 0xff,
                    codes: vec![c as u8],
                })
                .unwrap();
            assert!(nan[0].is_nan());
        }
        let top = ladder(kind).last().unwrap().0;
        assert_eq!(v_f64(V::Fin(top)), max, "{name}: stated max");
    }
    // The spec's tables, spot by spot.
    let e2m1 = fmt("fp4:e2m1", 32);
    let mags: Vec<f64> = (0..8).map(|c| e2m1.elem_to_f64(c)).collect();
    assert_eq!(mags, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(fmt("fp8:e4m3", 32).elem_to_f64(0x7e), 448.0);
    assert!(fmt("fp8:e4m3", 32).elem_to_f64(0x7f).is_nan());
    assert_eq!(fmt("fp8:e4m3", 32).elem_to_f64(0x01), 2f64.powi(-9));
    assert_eq!(fmt("fp8:e5m2", 32).elem_to_f64(0x7b), 57344.0);
    assert_eq!(fmt("fp8:e5m2", 32).elem_to_f64(0x7c), f64::INFINITY);
    assert_eq!(fmt("fp8:e5m2", 32).elem_to_f64(0x01), 2f64.powi(-16));
    assert_eq!(fmt("fp6:e3m2", 32).elem_to_f64(0x1f), 28.0);
    assert_eq!(fmt("fp6:e2m3", 32).elem_to_f64(0x1f), 7.5);
    assert_eq!(fmt("fp6:e2m3", 32).elem_to_f64(0x3f), -7.5);
    assert_eq!(fmt("int8", 32).elem_to_f64(0x80), -2.0);
    assert_eq!(fmt("int8", 32).elem_to_f64(0x7f), 127.0 / 64.0);
    assert_eq!(MxFormat::scale_exp(0), Some(-127));
    assert_eq!(MxFormat::scale_exp(0xfe), Some(127));
    assert_eq!(MxFormat::scale_exp(0xff), None);
}

/// A random block: mostly small integers times a power of two (exact ties, saturation),
/// else full-precision values; a spread of magnitudes; some zeros; rarely huge or tiny.
fn random_block(rng: &mut Pcg64, k: usize) -> Vec<f64> {
    let base: i32 = match rng.gen_range(0..20) {
        0 => rng.gen_range(-1074..-900),
        1 => rng.gen_range(900..1000),
        _ => rng.gen_range(-140..140),
    };
    let spread = rng.gen_range(0..24);
    (0..k)
        .map(|_| {
            let p = base - rng.gen_range(0..=spread);
            let x = match rng.gen_range(0..10) {
                0 => 0.0,
                1..=5 => f64::from(rng.gen_range(0..512)) * 2f64.powi(p.clamp(-1074, 1000) - 6),
                _ => rng.gen::<f64>() * 2f64.powi(p.clamp(-1000, 1000)),
            };
            let x = if x.is_finite() { x } else { 1.0 };
            if rng.gen() {
                -x
            } else {
                x
            }
        })
        .collect()
}

fn random_blocks_match(blocks: usize) {
    let mut rng = Pcg64::seed_from_u64(33);
    for (name, kind, emax, _) in TYPES {
        for k in [32, 7] {
            let f = fmt(name, k);
            for _ in 0..blocks / 2 {
                let xs = random_block(&mut rng, k);
                let b = f.quantize_block(&xs).unwrap();
                assert_eq!(
                    (b.scale, codes(&b)),
                    ref_block(kind, emax, &xs),
                    "{name} block {xs:?}"
                );
            }
        }
    }
}

#[test]
fn random_blocks_convert_as_the_reference() {
    random_blocks_match(2_000);
}

/// Issue 33's bar: at least 10^5 random blocks per element type, 0 differences.
#[test]
#[ignore]
fn random_blocks_convert_as_the_reference_1e5() {
    random_blocks_match(100_000);
}

#[test]
fn saturation_is_to_max_never_nan_or_infinity() {
    for (name, kind, emax, max) in TYPES {
        let f = fmt(name, 4);
        // max|V| = 1.999 · 2^emax: shared exponent 0, the element rounds past max.
        let big = 1.999 * 2f64.powi(emax as i32);
        let b = f.quantize_block(&[big, -big, 1.0, 0.0]).unwrap();
        assert_eq!(b.scale, 127, "{name}");
        assert_eq!(
            (b.scale, codes(&b)),
            ref_block(kind, emax, &[big, -big, 1.0, 0.0])
        );
        let back = f.dequantize_block(&b).unwrap();
        assert_eq!((back[0], back[1]), (max, -max), "{name}");
        // Scale clamped at 2^127: everything saturates.
        let b = f.quantize_block(&[1e300, -1e300]).unwrap();
        assert_eq!(b.scale, 254);
        let back = f.dequantize_block(&b).unwrap();
        assert_eq!(
            back,
            [max * 2f64.powi(127), -max * 2f64.powi(127)],
            "{name}"
        );
    }
    // INT8 is symmetric: −1.999 gives −127 (0x81), never −128 (0x80).
    let b = fmt("int8", 32).quantize_block(&[-1.999]).unwrap();
    assert_eq!((b.scale, b.codes[0]), (127, 0x81));
}

#[test]
fn zero_tiny_nan_and_infinite_blocks() {
    for (name, kind, emax, _) in TYPES {
        let f = fmt(name, 3);
        let b = f.quantize_block(&[0.0, -0.0, 0.0]).unwrap();
        assert_eq!(b.scale, 0, "{name}: a zero block has the smallest scale");
        assert_eq!(
            (b.scale, codes(&b)),
            ref_block(kind, emax, &[0.0, -0.0, 0.0])
        );
        assert_eq!(b.codes[0], 0);
        let tiny = [5e-324, -1e-310, 1e-320];
        let b = f.quantize_block(&tiny).unwrap();
        assert_eq!(b.scale, 0, "{name}");
        assert_eq!((b.scale, codes(&b)), ref_block(kind, emax, &tiny));
        for bad in [
            [1.0, f64::NAN, 2.0],
            [f64::INFINITY, 1.0, 2.0],
            [0.0, 0.0, f64::NEG_INFINITY],
        ] {
            let b = f.quantize_block(&bad).unwrap();
            assert_eq!(
                b,
                MxBlock {
                    scale: 0xff,
                    codes: vec![0; 3]
                },
                "{name}"
            );
            assert!(f.dequantize_block(&b).unwrap().iter().all(|x| x.is_nan()));
            let one = f.quantize_block(&[1.0, 1.0, 1.0]).unwrap();
            assert_eq!(f.dot_block(&b, &one).unwrap(), Exact::Nan);
        }
    }
}

/// Exact rational of a block's dot product from the spec's values: NaN, ±∞ or num · 2^exp.
fn ref_dot(kind: Kind, a: &MxBlock, b: &MxBlock) -> Exact {
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

fn random_codes(rng: &mut Pcg64, kind: Kind, k: usize) -> MxBlock {
    MxBlock {
        scale: match rng.gen_range(0..50) {
            0 => 0xff,
            1 => 0,
            2 => 0xfe,
            _ => rng.gen_range(100..155),
        },
        codes: (0..k)
            .map(|_| rng.gen_range(0..1u64 << width(kind)) as u8)
            .collect(),
    }
}

#[test]
fn block_dot_is_the_exact_rational() {
    let mut rng = Pcg64::seed_from_u64(64);
    for (name, kind, _, _) in TYPES {
        let f = fmt(name, 32);
        for _ in 0..3_000 {
            let (a, b) = (
                random_codes(&mut rng, kind, 32),
                random_codes(&mut rng, kind, 32),
            );
            assert_eq!(
                f.dot_block(&a, &b).unwrap().normalized(),
                ref_dot(kind, &a, &b),
                "{name} {a:?} {b:?}"
            );
        }
    }
}

/// The f32 nearest to an exact value, ties to even: the nearest of the f32 neighbours of an
/// f64 approximation, compared exactly (∞ as 2^128, IEEE's overflow rule).
fn ref_f32(x: &Exact) -> f32 {
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

#[test]
fn many_blocks_accumulate_in_f32_and_exactly_as_the_reference() {
    let mut rng = Pcg64::seed_from_u64(3264);
    for (name, kind, _, _) in TYPES {
        let f = fmt(name, 8);
        for _ in 0..500 {
            let n = rng.gen_range(1..6);
            let a: Vec<MxBlock> = (0..n).map(|_| random_codes(&mut rng, kind, 8)).collect();
            let b: Vec<MxBlock> = (0..n).map(|_| random_codes(&mut rng, kind, 8)).collect();
            let parts: Vec<Exact> = a.iter().zip(&b).map(|(x, y)| ref_dot(kind, x, y)).collect();
            let mut acc = 0f32;
            for p in &parts {
                acc += ref_f32(p);
            }
            let got = f.dot_f32(&a, &b).unwrap();
            assert!(
                got.to_bits() == acc.to_bits() || (got.is_nan() && acc.is_nan()),
                "{name}: {got} != {acc}"
            );
            let via = f.dot(&a, &b, Accumulation::F32).unwrap();
            assert!(via.is_nan() && acc.is_nan() || via == f64::from(acc));
            // Exact: the sum of the parts.
            let want = if parts.contains(&Exact::Nan) {
                Exact::Nan
            } else {
                let (p, q) = (
                    parts.contains(&Exact::Inf(false)),
                    parts.contains(&Exact::Inf(true)),
                );
                match (p, q) {
                    (true, true) => Exact::Nan,
                    (true, false) => Exact::Inf(false),
                    (false, true) => Exact::Inf(true),
                    _ => {
                        let mut s = BigInt::zero();
                        for part in &parts {
                            if let Exact::Fin { num, exp } = part {
                                s += num.clone() << (exp + 2000) as usize;
                            }
                        }
                        Exact::Fin { num: s, exp: -2000 }.normalized()
                    }
                }
            };
            assert_eq!(f.dot_exact(&a, &b).unwrap().normalized(), want, "{name}");
        }
    }
}

#[test]
fn vectors_split_into_blocks_with_a_shorter_last() {
    let mut rng = Pcg64::seed_from_u64(70);
    let xs: Vec<f64> = (0..70).map(|_| rng.gen_range(-3.0..3.0)).collect();
    for (name, kind, emax, _) in TYPES {
        let blocks = fmt(name, 32).quantize(&xs);
        assert_eq!(
            blocks.iter().map(|b| b.codes.len()).collect::<Vec<_>>(),
            [32, 32, 6]
        );
        for (b, chunk) in blocks.iter().zip(xs.chunks(32)) {
            assert_eq!((b.scale, codes(b)), ref_block(kind, emax, chunk), "{name}");
        }
    }
    let f = fmt("fp4:e2m1", 4);
    assert!(f.quantize_block(&[1.0; 5]).is_err());
    assert!(f.quantize_block(&[]).is_err());
    let one = f.quantize_block(&[1.0; 4]).unwrap();
    let three = f.quantize_block(&[1.0; 3]).unwrap();
    assert!(f.dot_block(&one, &three).is_err());
    assert!(f
        .dequantize_block(&MxBlock {
            scale: 1,
            codes: vec![0x10]
        })
        .is_err());
}

#[test]
fn infinite_elements_in_a_dot_product() {
    // E5M2 has ±∞ codes (0x7c, 0xfc); 0x00 is +0, 0x3c is 1.
    let f = fmt("fp8:e5m2", 2);
    let blk = |a: u8, b: u8| MxBlock {
        scale: 127,
        codes: vec![a, b],
    };
    for (a, b, want) in [
        (blk(0x7c, 0x3c), blk(0x00, 0x3c), Exact::Nan), // ∞ · 0
        (blk(0x7c, 0x3c), blk(0x3c, 0x3c), Exact::Inf(false)),
        (blk(0x7c, 0x3c), blk(0xbc, 0x3c), Exact::Inf(true)), // ∞ · −1
        (blk(0x7c, 0xfc), blk(0x3c, 0x3c), Exact::Nan),       // +∞ − ∞
        (blk(0x7c, 0x7c), blk(0xfc, 0xfc), Exact::Inf(true)),
    ] {
        assert_eq!(f.dot_block(&a, &b).unwrap(), want, "{a:?} {b:?}");
        assert_eq!(
            ref_dot(
                Kind::Float {
                    e: 5,
                    m: 2,
                    special: Special::Ieee
                },
                &a,
                &b
            ),
            want
        );
    }
}

#[test]
fn an_exact_sum_rounds_once_to_f64_with_every_bit() {
    // 2^200 + 2^147 + 1: above the tie between 2^200 and 2^200 + 2^148 by 1, so up.
    let num = (BigInt::from(1) << 200usize) + (BigInt::from(1) << 147usize) + 1;
    let x = Exact::Fin { num, exp: -100 };
    assert_eq!(x.to_f64(), (1.0 + 2f64.powi(-52)) * 2f64.powi(100));
    let tie = Exact::Fin {
        num: (BigInt::from(1) << 200usize) + (BigInt::from(1) << 147usize),
        exp: -100,
    };
    assert_eq!(tie.to_f64(), 2f64.powi(100));
}
