//! The block product of MXFP8's backward format, E5M2 elements with an E8M0 scale per 32
//! (`scaled/fp8:e5m2/b32/e8m0`: `scale::gemm::gemm_f32` on its integer path, f64 being
//! refused) against the words of its doc, with exact rationals: each block pair's exact
//! result S_a · S_b · Σ q_a · q_b rounded once to f32 (nearest, ties to even; ±∞ from half an
//! ulp past the largest finite value), added in block order to an f32 accumulator from +0,
//! times f32(1/(s_a · s_b)) (1: no tensor scale); a NaN sum is f32's canonical NaN. E5M2: sign, 5 exponent bits (bias 15, field
//! 0 subnormal: m · 2^−16), 2 fraction bits, 57344 the largest finite value; E8M0: 2^(c − 127).

use super::exact::*;
use lpgen_golden::scale::{gemm, Quantized, ScaledFormat};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::cmp::Ordering;

/// An E5M2 code's value (finite codes: magnitude at most 0x7B), from its fields.
pub fn e5m2(c: u8) -> Fr {
    let (e, m) = (i64::from(c >> 2 & 0x1f), i64::from(c & 3));
    let v = if e == 0 {
        Fr::int(m).mul(&Fr::pow2(-16))
    } else {
        Fr::int(4 + m).mul(&Fr::pow2(e - 17))
    };
    if c & 0x80 != 0 {
        v.neg()
    } else {
        v
    }
}

pub fn e8m0(c: u64) -> Fr {
    Fr::pow2(c as i64 - 127)
}

/// r rounded once to f32: nearest on f32's grid, ±∞ from (2^25 − 1) · 2^103 (half an ulp
/// past the largest finite value) on.
fn f32_of(r: &Fr) -> f32 {
    let overflow = Fr::int((1 << 25) - 1).mul(&Fr::pow2(103));
    match r.abs().cmp(&overflow) {
        Ordering::Less => round_signed(r, &f32_grid()) as f32,
        _ if r.n.sign() == num_bigint::Sign::Minus => f32::NEG_INFINITY,
        _ => f32::INFINITY,
    }
}

/// The reference C[i][j] of two tensors' codes.
fn reference(a: &Quantized, b: &Quantized, blk: usize) -> Vec<f32> {
    let k = a.cols;
    let mut c = vec![];
    for i in 0..a.rows {
        for j in 0..b.rows {
            let mut acc = 0f32;
            for g in 0..k / blk {
                let (sa, sb) = (
                    e8m0(a.scales[i * k / blk + g]),
                    e8m0(b.scales[j * k / blk + g]),
                );
                let mut sum = Fr::int(0);
                for t in g * blk..(g + 1) * blk {
                    let (x, y) = (a.codes[i * k + t] as u8, b.codes[j * k + t] as u8);
                    sum = sum.add(&e5m2(x).mul(&e5m2(y)));
                }
                acc += f32_of(&sum.mul(&sa).mul(&sb));
            }
            // ∞ − ∞: f32's canonical NaN, whatever the host's addition gives.
            c.push(if acc.is_nan() {
                f32::from_bits(0x7fc0_0000)
            } else {
                acc
            });
        }
    }
    c
}

/// A random E5M2 code: zeros, subnormals (field 0), the largest magnitude (saturation's
/// value), or any finite code; either sign.
fn code(r: &mut Pcg64) -> u64 {
    let mag = match r.gen_range(0..8) {
        0 => 0,
        1 => r.gen_range(1..4),
        2 => 0x7b,
        _ => r.gen_range(0..=0x7b),
    };
    mag | if r.gen() { 0x80 } else { 0 }
}

/// A random E8M0 code of regime `t`: any; small (S_a · S_b near 2^−200: f32 results zero
/// and subnormal); large (±∞); near 2^0.
fn scale(r: &mut Pcg64, t: usize) -> u64 {
    match t % 5 {
        0 => r.gen_range(0..=254),
        1 => r.gen_range(20..50),
        2 => r.gen_range(190..=254),
        _ => r.gen_range(100..150),
    }
}

#[test]
fn e5m2_block_products_equal_the_rational_reference() {
    let sf: ScaledFormat = "scaled/fp8:e5m2/b32/e8m0".parse().unwrap();
    assert!(gemm::exact_in_f64(&sf).is_err());
    let mut r = Pcg64::seed_from_u64(5);
    let (mut inf, mut zero, mut subnormal, mut nan) = (0, 0, 0, 0);
    for t in 0..150 {
        let (m, n, k) = (1 + t % 3, 1 + t % 2, 32 * (1 + t % 3));
        let mut q = |rows: usize| Quantized {
            rows,
            cols: k,
            tensor_scale: 0x3f80_0000,
            scales: (0..rows * k / 32).map(|_| scale(&mut r, t)).collect(),
            codes: (0..rows * k).map(|_| code(&mut r)).collect(),
        };
        let (a, b) = (q(m), q(n));
        let got = gemm::gemm_f32(&sf, &a, &b).unwrap();
        let want = reference(&a, &b, 32);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.to_bits(), w.to_bits(), "test {t}: {g} against {w}");
            inf += usize::from(w.is_infinite());
            zero += usize::from(*w == 0.0);
            subnormal += usize::from(w.is_subnormal());
            nan += usize::from(w.is_nan());
        }
    }
    assert!(
        inf > 0 && zero > 0 && subnormal > 0 && nan > 0,
        "{inf} {zero} {subnormal} {nan}"
    );
}

/// Tensors quantized by the golden rule (values over many binades, zero blocks, saturation:
/// E8M0's power-of-two scale leaves x / S up to 2^16 > 57344), then multiplied.
#[test]
fn quantized_e5m2_tensors_multiply_as_the_reference() {
    let sf: ScaledFormat = "scaled/fp8:e5m2/b32/e8m0".parse().unwrap();
    let mut r = Pcg64::seed_from_u64(52);
    let (mut saturated, mut subnormal) = (0, 0);
    for t in 0..60 {
        let (m, n, k) = (1 + t % 2, 1 + t % 3, 32 * (1 + t % 2));
        let mut x = |rows: usize| -> Vec<f64> {
            (0..rows * k)
                .map(|i| match (i / 32) % 5 {
                    0 => 0.0,
                    _ => super::value(&mut r, -30, 60),
                })
                .collect()
        };
        let (xa, xb) = (x(m), x(n));
        let a = sf.quantize(&xa, m, k, None).unwrap();
        let b = sf.quantize(&xb, n, k, None).unwrap();
        for q in [&a, &b] {
            saturated += q.codes.iter().filter(|&&c| c & 0x7f == 0x7b).count();
            subnormal += q
                .codes
                .iter()
                .filter(|&&c| c & 0x7c == 0 && c & 3 != 0)
                .count();
        }
        let got = gemm::gemm_f32(&sf, &a, &b).unwrap();
        let want = reference(&a, &b, 32);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "test {t}");
    }
    assert!(saturated > 0 && subnormal > 0, "{saturated} {subnormal}");
}
