//! The NVFP4 dot product (`scale::dot`) against the reference: each block pair's
//! S_a·S_b·Σ q_a·q_b from the codes' decoded values; over many blocks the exact sum divided by
//! s_a·s_b rounded to f64, or each block rounded to f32, added in f32, times f32(1/(s_a·s_b)).

use super::exact::*;
use super::value;
use lpgen_golden::mx::{Accumulation, Exact};
use lpgen_golden::scale::{dot, Nvfp4Block, NVFP4};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::cmp::Ordering;

/// A block's values: S · q_i.
fn block_values(b: &Nvfp4Block) -> Vec<Fr> {
    b.codes
        .iter()
        .map(|&c| {
            let v = e2m1(c & 7).mul(&e4m3(b.scale));
            if c & 8 != 0 {
                v.neg()
            } else {
                v
            }
        })
        .collect()
}

fn block_dot(a: &Nvfp4Block, b: &Nvfp4Block) -> Fr {
    block_values(a)
        .iter()
        .zip(block_values(b))
        .fold(Fr::int(0), |s, (x, y)| s.add(&x.mul(&y)))
}

fn exact_fr(e: &Exact) -> Fr {
    match e {
        Exact::Fin { num, exp } => Fr {
            n: num.clone(),
            d: BigInt::from(1),
        }
        .mul(&Fr::pow2(*exp)),
        Exact::Nan | Exact::Inf(_) => panic!("a finite block dot product: {e:?}"),
    }
}

fn vector(r: &mut Pcg64, n: usize) -> Vec<Nvfp4Block> {
    let base = r.gen_range(-20..20);
    let xs: Vec<f64> = (0..16 * n)
        .map(|_| {
            let b = base + r.gen_range(0..12);
            value(r, b, 3)
        })
        .collect();
    NVFP4.quantize(&xs, 1, 16 * n, None).unwrap().nvfp4_blocks()
}

#[test]
fn nvfp4_dot_products_equal_the_reference() {
    let mut r = Pcg64::seed_from_u64(16);
    for _ in 0..400 {
        let n = r.gen_range(1..6);
        let (a, b) = (vector(&mut r, n), vector(&mut r, n));
        let mut sum = Fr::int(0);
        let mut acc = 0f32;
        for (x, y) in a.iter().zip(&b) {
            let want = block_dot(x, y);
            let got = exact_fr(&dot::dot_block(x, y).unwrap());
            assert_eq!(got.cmp(&want), Ordering::Equal, "{x:?} {y:?}");
            sum = sum.add(&want);
            acc += round_signed(&want, &f32_grid()) as f32;
        }
        let sa = Fr::of(f32::from_bits(a[0].tensor_scale).into());
        let sb = Fr::of(f32::from_bits(b[0].tensor_scale).into());
        let s = sa.mul(&sb);
        let exact = round_signed(&sum.div(&s), &f64_grid());
        let got = dot::dot(&a, &b, Accumulation::Exact).unwrap();
        assert_eq!(got.to_bits(), exact.to_bits(), "exact: {got} != {exact}");
        let alpha = round_grid(&Fr::int(1).div(&s), &f32_grid());
        let f32_want = round_signed(&Fr::of(acc.into()).mul(&alpha), &f32_grid());
        let got = dot::dot(&a, &b, Accumulation::F32).unwrap();
        assert_eq!(
            got.to_bits(),
            f32_want.to_bits(),
            "f32: {got} != {f32_want}"
        );
    }
}

#[test]
fn nan_scales_and_bad_blocks() {
    let ones = NVFP4
        .quantize(&[1.0; 16], 1, 16, None)
        .unwrap()
        .nvfp4_blocks();
    let mut nan = ones.clone();
    nan[0].scale = 0x7f;
    assert_eq!(dot::dot_block(&nan[0], &ones[0]).unwrap(), Exact::Nan);
    assert!(dot::dot(&nan, &ones, Accumulation::F32).unwrap().is_nan());
    assert!(dot::dot(&nan, &ones, Accumulation::Exact).unwrap().is_nan());
    let mut neg = ones.clone();
    neg[0].scale = 0x80;
    assert!(dot::dot_block(&neg[0], &ones[0]).is_err());
    let mut short = ones.clone();
    short[0].codes.pop();
    assert!(dot::dot_block(&short[0], &ones[0]).is_err());
    assert!(dot::dot(&ones, &[], Accumulation::F32).is_err());
    let mut wide = ones.clone();
    wide[0].codes[3] = 16;
    assert!(dot::dot_block(&wide[0], &ones[0]).is_err());
    // 16 · 6 · 6 · 448 · 448 / (2688 · 2688): the ones' tensor scale is 2688, S = 448, q = 6.
    let d = dot::dot(&ones, &ones, Accumulation::Exact).unwrap();
    assert_eq!(d, 16.0);
}

/// A random block: codes of every kind, and a scale byte of any finite UE4M3 value (zero,
/// subnormal, 448) or now and then the NaN 0x7F.
fn raw_block(r: &mut Pcg64) -> Nvfp4Block {
    let scale = match r.gen_range(0..40) {
        0 => 0x7f,
        1..=4 => [0u8, 1, 7, 8, 0x7e][r.gen_range(0..5)],
        _ => r.gen_range(0..0x7f),
    };
    Nvfp4Block {
        tensor_scale: 0x3f80_0000,
        scale,
        codes: (0..16).map(|_| r.gen_range(0..16)).collect(),
    }
}

/// The array PE's accumulation (`dot::dot_unscaled_f32`, no tensor scales) against the
/// reference: each block pair's exact S_a·S_b·Σ q_a·q_b rounded to f32 on the reference's
/// grid, then added to the f32 sum from +0 exactly and rounded again, block by block; a NaN
/// scale anywhere gives f32's canonical NaN. Quantized vectors (cancellations, ties) and raw
/// blocks (subnormal, zero and the largest scales).
#[test]
fn the_pe_accumulation_equals_the_reference() {
    let mut r = Pcg64::seed_from_u64(50);
    for t in 0..2_000 {
        let n = r.gen_range(1..9);
        let (a, b) = if t % 2 == 0 {
            (vector(&mut r, n), vector(&mut r, n))
        } else {
            let a: Vec<_> = (0..n).map(|_| raw_block(&mut r)).collect();
            let b: Vec<_> = (0..n).map(|_| raw_block(&mut r)).collect();
            (a, b)
        };
        let got = dot::dot_unscaled_f32(&a, &b).unwrap();
        if a.iter().chain(&b).any(|x| x.scale == 0x7f) {
            assert_eq!(got.to_bits(), 0x7fc0_0000, "{a:?} {b:?}");
            continue;
        }
        let mut acc = Fr::int(0);
        for (x, y) in a.iter().zip(&b) {
            let term = Fr::of(round_signed(&block_dot(x, y), &f32_grid()));
            acc = Fr::of(round_signed(&acc.add(&term), &f32_grid()));
        }
        // An exact zero is +0 (the terms are never −0, so neither is a sum).
        let want = round_signed(&acc, &f32_grid()) as f32;
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{got} != {want}: {a:?} {b:?}"
        );
    }
    assert!(dot::dot_unscaled_f32(&[], &[]).unwrap().to_bits() == 0);
    let one = raw_block(&mut r);
    assert!(dot::dot_unscaled_f32(&[one], &[]).is_err());
}
