//! [`gemm_f32`] against the block dot products that define it: NVFP4's [`super::super::dot::dot`]
//! (F32 accumulation) and MX's `MxFormat::dot_f32` (MXFP4, MXFP8 E4M3 and E5M2 are
//! `scaled/ELEM/b32/e8m0`, word for word), on random matrices whose values span many binades,
//! with zero blocks, blocks far below their tensor's amax and sign mixtures; and its integer
//! path against its f64 path on every format both take, raw codes included (NaN and ±∞
//! elements, NaN scales). tests/nvfp4_reference/e5m2_gemm.rs holds the integer path to an
//! exact-rational reference.

use super::*;
use crate::mx::{Accumulation, MxFormat};
use crate::rng::Rng;
use crate::scale::quant::ONE_F32;
use crate::scale::{dot, NVFP4};

fn matrix(rng: &mut Rng, rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols)
        .map(|n| {
            let r = n / cols;
            let block_scale = 2f64.powi((rng.below(40) as i32) - 20);
            let v = (rng.below(1 << 20) as f64 - (1 << 19) as f64) / (1 << 19) as f64;
            match (r + n / 16) % 7 {
                0 => 0.0,
                1 => v * 1e-12,
                _ => v * block_scale,
            }
        })
        .collect()
}

#[test]
fn nvfp4_gemm_is_the_nvfp4_dot_product() {
    let mut rng = Rng(50);
    for t in 0..60 {
        let (m, n, kb) = (1 + t % 4, 1 + t % 3, 1 + t % 5);
        let k = 16 * kb;
        let (a, b) = (matrix(&mut rng, m, k), matrix(&mut rng, n, k));
        let qa = NVFP4.quantize(&a, m, k, None).unwrap();
        let qb = NVFP4.quantize(&b, n, k, None).unwrap();
        let c = gemm_f32(&NVFP4, &qa, &qb).unwrap();
        let (ba, bb) = (qa.nvfp4_blocks(), qb.nvfp4_blocks());
        for i in 0..m {
            for j in 0..n {
                let want = dot::dot(
                    &ba[i * kb..(i + 1) * kb],
                    &bb[j * kb..(j + 1) * kb],
                    Accumulation::F32,
                )
                .unwrap();
                assert_eq!(
                    f64::from(c[i * n + j]).to_bits(),
                    want.to_bits(),
                    "test {t}, C[{i}][{j}]"
                );
            }
        }
    }
}

#[test]
fn mx_gemm_is_mx_dot_f32() {
    let mut rng = Rng(33);
    for elem in ["fp4:e2m1", "fp8:e4m3", "fp6:e3m2", "fp8:e5m2"] {
        let sf: ScaledFormat = format!("scaled/{elem}/b32/e8m0").parse().unwrap();
        let mx = MxFormat::new(elem, 32).unwrap();
        for t in 0..30 {
            let (m, n, kb) = (1 + t % 3, 1 + t % 4, 1 + t % 3);
            let k = 32 * kb;
            let (a, b) = (matrix(&mut rng, m, k), matrix(&mut rng, n, k));
            let qa = sf.quantize(&a, m, k, None).unwrap();
            let qb = sf.quantize(&b, n, k, None).unwrap();
            let c = gemm_f32(&sf, &qa, &qb).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let want = mx
                        .dot_f32(
                            &mx.quantize(&a[i * k..(i + 1) * k]),
                            &mx.quantize(&b[j * k..(j + 1) * k]),
                        )
                        .unwrap();
                    assert_eq!(
                        c[i * n + j].to_bits(),
                        want.to_bits(),
                        "{elem} {t} C[{i}][{j}]"
                    );
                }
            }
        }
    }
}

#[test]
fn formats_whose_blocks_f64_cannot_hold_take_the_integer_path_or_are_refused() {
    for s in ["scaled/fp8:e5m2/b32/e8m0", "scaled/f16/b16/ue4m3"] {
        let sf: ScaledFormat = s.parse().unwrap();
        assert!(exact_in_f64(&sf).is_err(), "{s}");
        check(&sf).unwrap();
    }
    for s in [
        "scaled/bf16/b16/ue4m3",
        "scaled/posit:8/b16/e8m0",
        "scaled/fp4:e2m1/row/ue4m3",
    ] {
        let sf: ScaledFormat = s.parse().unwrap();
        assert!(check(&sf).is_err(), "{s}");
    }
    for s in [
        "nvfp4",
        "scaled/fp4:e2m1/b32/e8m0",
        "scaled/fp8:e4m3/b32/e8m0",
    ] {
        exact_in_f64(&s.parse().unwrap()).unwrap();
    }
}

/// A tensor of `sf` with random codes: every element code (NaN and ±∞ where the format has
/// them, one block in three), and random scale codes (NaN ones among them where the scale
/// has one), with a tensor scale where the format has one.
fn raw(rng: &mut Rng, sf: &ScaledFormat, (rows, cols): (usize, usize)) -> Quantized {
    let groups = sf.groups(rows, cols).unwrap();
    let (ew, sw) = (sf.elem.width(), sf.scale.code_bits());
    let block = cols / (groups / rows);
    let elem_max = sf.elem_calc().from_f64(sf.elem_max());
    let codes = (0..rows * cols)
        .map(|n| match (n / block) % 3 {
            // Finite codes only: at most the largest magnitude.
            0 | 1 => {
                let c = rng.below(1 << ew);
                let sign = c & (1 << (ew - 1));
                sign | (c & !sign).min(elem_max)
            }
            _ => rng.below(1 << ew),
        })
        .collect();
    let scales = (0..groups)
        .map(|_| {
            let c = rng.below(1 << sw);
            // E8M0 codes near the middle mostly, so that products stay finite.
            match (sf.scale, rng.below(4)) {
                (Scale::E8m0, 0) => c,
                (Scale::E8m0, _) => 127 - 20 + c % 40,
                _ => c,
            }
        })
        .collect();
    let tensor_scale = match sf.tensor_scale {
        true => (f32::from_bits(ONE_F32) * 2f32.powi(rng.below(40) as i32 - 20)).to_bits(),
        false => ONE_F32,
    };
    Quantized {
        rows,
        cols,
        tensor_scale,
        scales,
        codes,
    }
}

#[test]
fn the_integer_path_is_the_f64_path_where_both_hold() {
    let mut rng = Rng(128);
    for s in [
        "nvfp4",
        "scaled/fp4:e2m1/b32/e8m0",
        "scaled/fp8:e4m3/b32/e8m0",
        "scaled/fp6:e3m2/b32/e8m0",
        "scaled/fp6:e2m3/b16/ue5m3",
        "scaled/fp8:e4m3/b16/ue4m3/t",
        "scaled/fp4:e2m1/b8/ue5m3/t",
    ] {
        let sf: ScaledFormat = s.parse().unwrap();
        exact_in_f64(&sf).unwrap();
        let blk = block_of(&sf).unwrap();
        for t in 0..40 {
            let (m, n, k) = (1 + t % 3, 1 + t % 4, blk * (1 + t % 3));
            let (qa, qb) = match t % 2 {
                0 => {
                    let (a, b) = (matrix(&mut rng, m, k), matrix(&mut rng, n, k));
                    (
                        sf.quantize(&a, m, k, None).unwrap(),
                        sf.quantize(&b, n, k, None).unwrap(),
                    )
                }
                _ => (raw(&mut rng, &sf, (m, k)), raw(&mut rng, &sf, (n, k))),
            };
            let f = gemm_on(&sf, &qa, &qb, Path::F64).unwrap();
            let i = gemm_on(&sf, &qa, &qb, Path::Int).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&f), bits(&i), "{s} test {t}");
        }
    }
}
