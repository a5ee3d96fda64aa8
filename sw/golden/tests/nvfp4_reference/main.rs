//! NVFP4 and delayed scaling (`lpgen_golden::scale`) against a reference written here from the
//! words of SPEC.md §3 and issue 50, with exact rationals (a `BigInt` numerator over a
//! `BigInt` denominator), never calling the code under test for an expected value:
//!
//! - E2M1: sign, 2 exponent bits (bias 1), 1 fraction bit: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6};
//! - UE4M3: an E4M3 byte with the sign 0 (bias 7, subnormals, 0x7F NaN, 448 the largest);
//! - s_enc = 6·448/A rounded to f32 (nearest, ties to even, saturating; 1 when A = 0 or when
//!   it rounds to 0); S = ue4m3(amax(block)/6 · s_enc); element = e2m1(x · s_enc / S), +0
//!   where S = 0 (a negative x that rounds to zero: −0); dequantized q·S/s_enc rounded to f64;
//! - the roundings to UE4M3 and E2M1 are searches over every finite code by comparison
//!   (ties to the even code), the one to f32 and f64 is floor-and-compare on the binade's
//!   grid;
//! - delayed scaling keeps every amax in a `Vec` and takes the largest of the last H.
//!
//! `NVFP4_BLOCKS` sets the random blocks (default 5,000, a second in debug); the 10^5:
//! `NVFP4_BLOCKS=100000 cargo test --release -p lpgen-golden --test nvfp4_reference`.

mod dot;
mod e5m2_gemm;
mod exact;
mod stochastic;

use exact::*;
use lpgen_golden::scale::{Delayed, Granularity, Rule, Scale, ScaledFormat, NVFP4};
use lpgen_golden::Format;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::cmp::Ordering;

/// What the reference computes for one block: s_enc's f32 bits, S's code, the element codes,
/// the dequantized values.
#[derive(Debug, PartialEq)]
struct Want {
    s_enc: u32,
    scale: u8,
    codes: Vec<u8>,
    values: Vec<u64>,
}

/// s_enc for tensor amax A (by the reference's f32 rounding).
fn s_enc(a: f64) -> Fr {
    if a == 0.0 {
        return Fr::int(1);
    }
    let s = round_grid(&Fr::int(6 * 448).div(&Fr::of(a)), &f32_grid());
    if s.is_zero() {
        Fr::int(1)
    } else {
        s
    }
}

fn reference_block(xs: &[f64], s: &Fr) -> Want {
    let amax = xs
        .iter()
        .map(|&x| Fr::of(x).abs())
        .fold(Fr::int(0), |m, v| {
            if v.cmp(&m) == Ordering::Greater {
                v
            } else {
                m
            }
        });
    let target = amax.div(&Fr::int(6)).mul(s);
    let scale = nearest(&target, 0..=0x7e, e4m3);
    let sv = e4m3(scale);
    let codes: Vec<u8> = xs
        .iter()
        .map(|&x| {
            if sv.is_zero() {
                return 0;
            }
            let v = Fr::of(x).mul(s).div(&sv);
            let mag = nearest(&v.abs(), 0..=7, e2m1);
            mag | if x.is_sign_negative() { 8 } else { 0 }
        })
        .collect();
    let values = codes
        .iter()
        .map(|&c| {
            let q = e2m1(c & 7);
            let v = round_grid(&q.mul(&sv).div(s), &f64_grid()).to_f64();
            let v = if c & 8 != 0 { -v } else { v };
            v.to_bits()
        })
        .collect();
    Want {
        s_enc: (s.to_f64() as f32).to_bits(),
        scale,
        codes,
        values,
    }
}

fn got_block(xs: &[f64], a: Option<f64>) -> Want {
    let q = NVFP4.quantize(xs, 1, xs.len(), a).unwrap();
    let b = &q.nvfp4_blocks()[0];
    Want {
        s_enc: q.tensor_scale,
        scale: b.scale,
        codes: b.codes.clone(),
        values: NVFP4
            .dequantize(&q)
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    }
}

fn blocks() -> usize {
    std::env::var("NVFP4_BLOCKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000)
}

/// A random value: f32-like (24 bits) or f64 (53 bits), over `span` binades from `base`,
/// zero one time in eight, either sign.
pub(crate) fn value(r: &mut Pcg64, base: i32, span: i32) -> f64 {
    if r.gen_ratio(1, 8) {
        return if r.gen() { 0.0 } else { -0.0 };
    }
    let bits = if r.gen() { 24 } else { 53 };
    let m = (r.gen::<u64>() >> (64 - bits)) | 1 << (bits - 1);
    let v = m as f64 * 2f64.powi(base + r.gen_range(0..span) - bits);
    if r.gen() {
        -v
    } else {
        v
    }
}

#[test]
fn nvfp4_equals_the_rational_reference_on_random_blocks() {
    let mut r = Pcg64::seed_from_u64(50);
    let (mut subnormal, mut saturated, mut zero_scale) = (0, 0, 0);
    for _ in 0..blocks() {
        let base = r.gen_range(-140..120);
        let span = r.gen_range(1..12);
        let xs: Vec<f64> = (0..16).map(|_| value(&mut r, base, span)).collect();
        let amax = xs.iter().fold(0f64, |m, x| m.max(x.abs()));
        // The tensor amax: the block's own, a larger tensor's (subnormal and zero scales),
        // a smaller one (saturation), or 0.
        let a = match r.gen_range(0..8) {
            0..=2 => amax,
            3..=5 => amax * 2f64.powi(r.gen_range(0..30)) * r.gen_range(1.0..2.0),
            6 => amax * r.gen_range(0.0..1.0),
            _ => 0.0,
        };
        let s = s_enc(a);
        let want = reference_block(&xs, &s);
        subnormal += usize::from(want.scale > 0 && want.scale < 8);
        saturated += usize::from(want.scale == 0x7e);
        zero_scale += usize::from(want.scale == 0);
        assert_eq!(got_block(&xs, Some(a)), want, "{xs:?} A = {a:e}");
    }
    let n = blocks();
    eprintln!("{n} blocks: {subnormal} subnormal scales, {saturated} saturated, {zero_scale} zero");
    assert!(
        subnormal > n / 100 && saturated > n / 100 && zero_scale > n / 100,
        "corners reached: {subnormal} subnormal, {saturated} saturated, {zero_scale} zero scales"
    );
}

#[test]
fn nvfp4_corners() {
    let cases: Vec<(Vec<f64>, Option<f64>)> = vec![
        (vec![0.0; 16], None),
        (vec![-0.0; 16], Some(1.0)),
        (vec![0.0; 16], Some(0.0)),
        ((0..16).map(|i| i as f64 - 8.0).collect(), None),
        (
            (0..16).map(|i| (i as f64 - 8.0) * 0.25).collect(),
            Some(2688.0),
        ),
        (vec![1e-300; 16], None),
        (vec![f64::MAX; 16], None),
        (vec![-f64::MAX; 16], Some(1.0)),
        (vec![5e-324; 16], None),
        (vec![1.0; 16], Some(1e-300)),
        (vec![1.0; 16], Some(1e300)),
        (vec![1.0; 16], Some(f64::MAX)),
        ((0..16).map(|i| 2f64.powi(-i)).collect(), None),
        ((0..16).map(|i| -(2f64.powi(i * 3))).collect(), Some(1e9)),
        (
            (0..16).map(|i| f64::from(i) * 448.0 / 6.0).collect(),
            Some(448.0),
        ),
    ];
    for (xs, a) in cases {
        let aa = a.unwrap_or_else(|| xs.iter().fold(0f64, |m, x| m.max(x.abs())));
        let want = reference_block(&xs, &s_enc(aa));
        assert_eq!(got_block(&xs, a), want, "{xs:?} {a:?}");
    }
}

#[test]
fn a_tensor_of_many_blocks_takes_its_amax_and_each_blocks_own() {
    let mut r = Pcg64::seed_from_u64(7);
    for _ in 0..50 {
        let (rows, nb) = (r.gen_range(1..4), r.gen_range(1..5));
        let cols = 16 * nb;
        let base = r.gen_range(-20..20);
        let xs: Vec<f64> = (0..rows * cols)
            .map(|_| {
                let b = base + r.gen_range(0..8);
                value(&mut r, b, 4)
            })
            .collect();
        let a = xs.iter().fold(0f64, |m, x| m.max(x.abs()));
        let s = s_enc(a);
        let q = NVFP4.quantize(&xs, rows, cols, None).unwrap();
        let deq = NVFP4.dequantize(&q).unwrap();
        for (b, chunk) in xs.chunks(16).enumerate() {
            let want = reference_block(chunk, &s);
            assert_eq!(q.scales[b], u64::from(want.scale));
            let codes: Vec<u64> = want.codes.iter().map(|&c| u64::from(c)).collect();
            assert_eq!(&q.codes[b * 16..(b + 1) * 16], &codes[..]);
            let vals: Vec<u64> = deq[b * 16..(b + 1) * 16]
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(vals, want.values);
        }
    }
}

/// Every scale code of UE4M3, UE5M3 and E8M0 is the word the float family gives its value
/// (`float:4:3:fn`, `float:5:3:fn`, binary32's exponent field), and the scale a group gets
/// for amax = value · elem_max is that code.
#[test]
fn scale_codes_are_the_float_familys_words() {
    let elem = "fp8:e4m3";
    for (scale, float, codes) in [
        ("ue4m3", "float:4:3:fn:sat", 0..=0x7eu64),
        ("ue5m3", "float:5:3:fn:sat", 0..=0xfe),
        ("e8m0", "f32", 0..=0xfe),
    ] {
        let sf: Scale = scale.parse().unwrap();
        let f = ScaledFormat::new(elem, Granularity::Block(32), sf, false).unwrap();
        let calc = float.parse::<Format>().unwrap().calc();
        for c in codes {
            let v = sf.value(c);
            let word = calc.from_f64(v);
            let code = if scale == "e8m0" { word >> 23 } else { word };
            assert_eq!(code, c, "{scale} code {c:#x}: value {v:e}");
            assert_eq!(calc.to_f64(word), v);
            // amax = v · 448 (E4M3's largest, an exact product): S = v.
            let amax = v * 448.0;
            if scale != "e8m0" {
                assert_eq!(f.group_scale(amax, 1f32.to_bits(), 0), c, "{scale} {c:#x}");
            } else {
                // E8M0 takes ⌊log2 amax⌋ − 8: 448 = 1.75 · 2^8, so 2^e · 448 gives e.
                assert_eq!(f.group_scale(amax, 1f32.to_bits(), 0), c, "e8m0 {c:#x}");
            }
        }
    }
    // UE5M3's largest: 1.75 · 2^16, and 0xFF its NaN.
    let ue5m3: Scale = "ue5m3".parse().unwrap();
    assert_eq!(ue5m3.value(0xfe), 114688.0);
    assert!(ue5m3.value(0xff).is_nan());
}

/// The reference of delayed scaling: every amax kept in a Vec; step t's scale from the
/// largest of the last H amaxes of the steps before it, the previous scale where that is 0
/// (1 at the start).
#[test]
fn delayed_scaling_equals_a_hand_kept_history() {
    let mut r = Pcg64::seed_from_u64(1024);
    for (h, margin) in [(1usize, 0i32), (3, 0), (16, 1), (5, -2)] {
        let rule = Rule::Delayed { history: h, margin };
        let mut d = Delayed::new(NVFP4, rule).unwrap();
        let mut amaxes: Vec<f64> = Vec::new();
        let mut s = Fr::int(1);
        for step in 0..120 {
            let xs: Vec<f64> = if r.gen_ratio(1, 10) {
                vec![0.0; 32]
            } else {
                let base = r.gen_range(-6..6) + (step / 20);
                (0..32).map(|_| value(&mut r, base, 3)).collect()
            };
            let q = d.quantize(&xs, 2, 16).unwrap();
            assert_eq!(
                q.tensor_scale,
                (s.to_f64() as f32).to_bits(),
                "H {h} step {step}"
            );
            for (b, chunk) in xs.chunks(16).enumerate() {
                let want = reference_block(chunk, &s);
                assert_eq!(q.scales[b], u64::from(want.scale), "H {h} step {step}");
                let codes: Vec<u64> = want.codes.iter().map(|&c| u64::from(c)).collect();
                assert_eq!(&q.codes[b * 16..(b + 1) * 16], &codes[..]);
            }
            amaxes.push(xs.iter().fold(0f64, |m, x| m.max(x.abs())));
            let window = &amaxes[amaxes.len().saturating_sub(h)..];
            let m = window.iter().fold(0f64, |m, &a| m.max(a));
            if m > 0.0 {
                let t = Fr::int(6 * 448).div(&Fr::of(m).mul(&Fr::pow2(i64::from(margin))));
                s = round_grid(&t, &f32_grid());
            }
        }
    }
}

/// TransformerEngine's FP8 per-tensor delayed scaling as tensor granularity with an f32
/// scale: S = f32(max(history) · 2^margin / 448), elements e4m3(x / S).
#[test]
fn delayed_per_tensor_fp8_equals_a_hand_kept_history() {
    let f: ScaledFormat = "scaled/fp8:e4m3/tensor/f32".parse().unwrap();
    let e4m3_calc = "float:4:3:fn:sat".parse::<Format>().unwrap().calc();
    let mut d = Delayed::new(f, "delayed:4:1".parse().unwrap()).unwrap();
    let mut r = Pcg64::seed_from_u64(8);
    let (mut amaxes, mut big_s) = (Vec::new(), Fr::int(1));
    for step in 0..60 {
        let xs: Vec<f64> = (0..8).map(|_| value(&mut r, (step % 13) - 6, 4)).collect();
        let q = d.quantize(&xs, 1, 8).unwrap();
        let sv = big_s.to_f64();
        assert_eq!(f32::from_bits(q.scales[0] as u32), sv as f32, "step {step}");
        for (x, &c) in xs.iter().zip(&q.codes) {
            // Every e4m3 word, nearest by comparison (ties to the even code).
            let v = Fr::of(*x).div(&big_s);
            let best = (0..=0x7eu8)
                .min_by(|&p, &q2| {
                    let dp = e4m3(p).sub(&v.abs()).abs();
                    let dq = e4m3(q2).sub(&v.abs()).abs();
                    dp.cmp(&dq).then((p % 2).cmp(&(q2 % 2)))
                })
                .unwrap();
            let want = u64::from(best | if x.is_sign_negative() { 0x80 } else { 0 });
            assert_eq!(c, want, "{x} / {sv}");
            assert_eq!(e4m3_calc.to_f64(c).abs(), e4m3(best).to_f64());
        }
        amaxes.push(xs.iter().fold(0f64, |m, x| m.max(x.abs())));
        let m = amaxes[amaxes.len().saturating_sub(4)..]
            .iter()
            .fold(0f64, |m, &a| m.max(a));
        if m > 0.0 {
            let t = Fr::of(m).mul(&Fr::int(2)).div(&Fr::int(448));
            big_s = round_grid(&t, &f32_grid());
        }
    }
    assert!(Delayed::new(f, Rule::Current).is_err());
    assert!(Delayed::new(
        f,
        Rule::Delayed {
            history: 0,
            margin: 0
        }
    )
    .is_err());
}
