//! Stochastic rounding of a block quantization (`ScaledFormat::quantize_rounded`, the FP4
//! recipes' `+sr`) against the rule written here from docs/formats.md ("Stochastic
//! rounding") and issue 50: the scales are the nearest quantization's (held to the rational
//! reference above); each element's v = |x| · s / S lies between the two neighbouring element
//! values lo ≤ v < hi (a search over the codes); with R random bits, d = ⌊(v − lo) / (hi − lo)
//! · 2^R⌋ and r the top R bits of the next xorshift32 state (x ^= x << 13; x ^= x >> 17;
//! x ^= x << 5, from the seed's state), the element is hi iff d + r ≥ 2^R, else lo; v at or
//! past the largest value is the largest (saturation); the sign is x's (−0 too); S = 0 gives
//! +0. Every element takes one draw, row-major. And the rounding is unbiased: over many
//! draws the dequantized mean is x, within the statistical error of the block's spacing.

use super::e5m2_gemm::{e5m2, e8m0};
use super::exact::*;
use super::value;
use lpgen_golden::rounding::{Rounder, Rounding, Xorshift32};
use lpgen_golden::scale::{Quantized, Scale, ScaledFormat};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::cmp::Ordering;

/// An element family of the test: its magnitude codes in increasing value, its sign bit.
struct Elem {
    mags: Vec<u8>,
    sign: u8,
    value: fn(u8) -> Fr,
}

fn elem(sf: &ScaledFormat) -> Elem {
    match sf.elem.width() {
        4 => Elem {
            mags: (0..=7).collect(),
            sign: 8,
            value: e2m1,
        },
        8 => Elem {
            mags: (0..=0x7b).collect(),
            sign: 0x80,
            value: e5m2,
        },
        w => panic!("no reference element of {w} bits"),
    }
}

fn scale_value(sf: &ScaledFormat, c: u64) -> Fr {
    match sf.scale {
        Scale::E8m0 => e8m0(c),
        Scale::Word { .. } => e4m3(c as u8),
    }
}

/// v's neighbours (lo ≤ v < hi), or (max, None) at or past the largest value.
fn neighbours(e: &Elem, v: &Fr) -> (u8, Option<u8>) {
    let mut lo = e.mags[0];
    for &c in &e.mags {
        match (e.value)(c).cmp(v) {
            Ordering::Greater => return (lo, Some(c)),
            _ => lo = c,
        }
    }
    (lo, None)
}

/// The hand-kept generator: xorshift32 from the seed's state.
struct Gen(u32);

impl Gen {
    fn next(&mut self, bits: u32) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        u64::from(x >> (32 - bits))
    }
}

/// The reference codes of `x` quantized with the scales of `q` (its tensor scale and block
/// scales), R random bits from `seed`.
fn reference(sf: &ScaledFormat, x: &[f64], q: &Quantized, bits: u32, seed: u64) -> Vec<u64> {
    let e = elem(sf);
    let mut g = Gen(Xorshift32::from_seed(seed).state());
    let s = Fr::of(f64::from(f32::from_bits(q.tensor_scale)));
    let blk = q.cols * q.rows / q.scales.len();
    x.iter()
        .enumerate()
        .map(|(n, &xv)| {
            let r = g.next(bits);
            let sv = scale_value(sf, q.scales[n / blk]);
            if sv.is_zero() {
                return 0;
            }
            let v = Fr::of(xv).abs().mul(&s).div(&sv);
            let mag = match neighbours(&e, &v) {
                (lo, None) => lo,
                (lo, Some(hi)) => {
                    let (l, h) = ((e.value)(lo), (e.value)(hi));
                    let d = v
                        .sub(&l)
                        .div(&h.sub(&l))
                        .mul(&Fr::pow2(i64::from(bits)))
                        .floor();
                    let d: u64 = d.try_into().unwrap();
                    if d + r >= 1 << bits {
                        hi
                    } else {
                        lo
                    }
                }
            };
            u64::from(mag | if xv.is_sign_negative() { e.sign } else { 0 })
        })
        .collect()
}

const FORMATS: [&str; 3] = [
    "nvfp4",
    "scaled/fp4:e2m1/b32/e8m0",
    "scaled/fp8:e5m2/b32/e8m0",
];

/// Random blocks of either sign over many binades, zeros and zero blocks among them.
fn tensor(r: &mut Pcg64, rows: usize, cols: usize) -> Vec<f64> {
    let base = r.gen_range(-20..20);
    (0..rows * cols)
        .map(|i| match (i / 16) % 7 {
            0 => 0.0,
            _ => value(r, base, 12),
        })
        .collect()
}

#[test]
fn stochastic_block_quantization_equals_the_rule_bit_for_bit() {
    let mut r = Pcg64::seed_from_u64(17);
    let mut moved = 0;
    for f in FORMATS {
        let sf: ScaledFormat = f.parse().unwrap();
        for t in 0..300 {
            let (rows, cols) = (1 + t % 3, 32 * (1 + t % 2));
            let x = tensor(&mut r, rows, cols);
            let bits = [1, 4, 8, 32][t % 4];
            let seed = r.gen();
            let mut rounder = Rounder::new(Rounding::Stochastic(bits), seed);
            let got = sf
                .quantize_rounded(&x, rows, cols, None, &mut rounder)
                .unwrap();
            let nearest = sf.quantize(&x, rows, cols, None).unwrap();
            assert_eq!(got.scales, nearest.scales, "{f} test {t}: the scales");
            assert_eq!(got.tensor_scale, nearest.tensor_scale, "{f} test {t}");
            assert_eq!(
                got.codes,
                reference(&sf, &x, &got, bits, seed),
                "{f} test {t}"
            );
            moved += got
                .codes
                .iter()
                .zip(&nearest.codes)
                .filter(|(a, b)| a != b)
                .count();
            // One draw per element: the stream goes on where the reference's does.
            let mut g = Gen(Xorshift32::from_seed(seed).state());
            (0..x.len()).for_each(|_| {
                g.next(32);
            });
            assert_eq!(rounder.generator().state(), g.0, "{f} test {t}: draws");
        }
    }
    assert!(moved > 1000, "{moved} elements rounded away from nearest");
}

#[test]
fn stochastic_block_quantization_is_unbiased() {
    let mut r = Pcg64::seed_from_u64(18);
    let draws = 4000;
    for f in FORMATS {
        let sf: ScaledFormat = f.parse().unwrap();
        let e = elem(&sf);
        for t in 0..3 {
            let x = tensor(&mut r, 1, 64);
            let mut rounder = Rounder::new(Rounding::Stochastic(32), r.gen());
            let mut sum = vec![0f64; x.len()];
            let mut q0 = None;
            for _ in 0..draws {
                let q = sf.quantize_rounded(&x, 1, 64, None, &mut rounder).unwrap();
                for (s, v) in sum.iter_mut().zip(sf.dequantize(&q).unwrap()) {
                    *s += v;
                }
                q0 = Some(q);
            }
            let q = q0.unwrap();
            let blk = 64 / q.scales.len();
            let s = f64::from(f32::from_bits(q.tensor_scale));
            for (n, (&xv, total)) in x.iter().zip(sum).enumerate() {
                let mean = total / f64::from(draws);
                let sv = scale_value(&sf, q.scales[n / blk]);
                if sv.is_zero() {
                    assert_eq!(mean, 0.0);
                    continue;
                }
                let v = Fr::of(xv).abs().mul(&Fr::of(s)).div(&sv);
                let to_x = |c: u8| (e.value)(c).mul(&sv).to_f64() / s;
                match neighbours(&e, &v) {
                    // Saturated: always the largest.
                    (lo, None) => assert!(
                        (mean.abs() - to_x(lo)).abs() <= 1e-12 * mean.abs(),
                        "{f} {t} x[{n}] = {xv}: mean {mean}"
                    ),
                    (lo, Some(hi)) => {
                        // σ ≤ spacing / 2: five σ of the mean of `draws`.
                        let spacing = to_x(hi) - to_x(lo);
                        let tol = 2.5 * spacing / f64::from(draws).sqrt();
                        assert!(
                            (mean - xv).abs() <= tol,
                            "{f} {t} x[{n}] = {xv}: mean {mean}, spacing {spacing}"
                        );
                    }
                }
            }
        }
    }
}
