//! Block-scaled products (`block.rs`) against references computed here from the golden
//! quantization and the golden block dot products: NVFP4's `scale::dot::dot` (F32
//! accumulation) on the operands zero-padded by hand, MX's `dot_f32` on the unpadded
//! operands (its shorter last block: the padding is that block), and with `+rht16` the
//! operands transformed by the golden `Rht::from_seed(seed)` first.

use lpgen_golden::mx::{Accumulation, MxFormat};
use lpgen_golden::scale::hadamard::Rht;
use lpgen_golden::scale::{dot, NVFP4};
use rand::{Rng, SeedableRng};

use super::*;
use crate::machine::Golden;
use crate::net::tests::cfg;
use crate::scaling::Scaling;

/// A bf16 matrix of values over several binades, and its values.
fn matrix(rng: &mut rand_pcg::Pcg64, rows: usize, cols: usize) -> (Mat<u64>, Vec<f64>) {
    let bf16: Format = "bf16".parse().unwrap();
    let data: Vec<u64> = (0..rows * cols)
        .map(|_| {
            let v = rng.gen_range(-1.0..1.0) * 2f64.powi(rng.gen_range(-12..4));
            bf16.calc().from_f64(v)
        })
        .collect();
    let vals = data.iter().map(|&w| bf16.calc().to_f64(w)).collect();
    (Mat { rows, cols, data }, vals)
}

/// Rows along K zero-padded to `kp`: A's rows, or B's columns.
fn padded(v: &[f64], (rows, k, kp): (usize, usize, usize), by_cols: bool, n: usize) -> Vec<f64> {
    let mut x = vec![0.0; rows * kp];
    for r in 0..rows {
        for c in 0..k {
            x[r * kp + c] = if by_cols { v[c * n + r] } else { v[r * k + c] };
        }
    }
    x
}

fn product(c: &crate::config::Config, place: Place, a: &Mat<u64>, b: &Mat<u64>) -> Vec<u64> {
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, c);
    let recipe = c.scaling.get(place).unwrap();
    let bf16 = c.stages.f;
    net.scaled_product((place, 0, recipe), (a.view(), bf16), (b.view(), bf16), true)
        .unwrap()
        .data
}

#[test]
fn nvfp4_products_are_the_golden_dot_products_of_the_padded_operands() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(50);
    for (scaling, place) in [
        ("all=nvfp4", Place::Forward),
        ("all=nvfp4", Place::Gradient),
        ("FB=nvfp4,G=nvfp4+rht16", Place::Gradient),
    ] {
        let mut c = cfg("bf16");
        c.scaling = Scaling::parse(scaling).unwrap();
        c.seed = 7;
        let rht = scaling.contains("rht").then(|| Rht::from_seed(7));
        for (m, k, n) in [(3, 40, 2), (1, 16, 5), (4, 7, 3), (2, 33, 1)] {
            let (a, va) = matrix(&mut rng, m, k);
            let (b, vb) = matrix(&mut rng, k, n);
            let kp = k.div_ceil(16) * 16;
            let mut xa = padded(&va, (m, k, kp), false, 0);
            let mut xb = padded(&vb, (n, k, kp), true, n);
            if let Some(r) = rht {
                xa = r.transform_rows(&xa, m, kp).unwrap();
                xb = r.transform_rows(&xb, n, kp).unwrap();
            }
            let qa = NVFP4.quantize(&xa, m, kp, None).unwrap().nvfp4_blocks();
            let qb = NVFP4.quantize(&xb, n, kp, None).unwrap().nvfp4_blocks();
            let got = product(&c, place, &a, &b);
            let kb = kp / 16;
            for i in 0..m {
                for j in 0..n {
                    let (ra, rb) = (&qa[i * kb..(i + 1) * kb], &qb[j * kb..(j + 1) * kb]);
                    let want = dot::dot(ra, rb, Accumulation::F32).unwrap();
                    let want = c.stages.f.calc().from_f64(want);
                    assert_eq!(got[i * n + j], want, "{scaling} {m}×{k}×{n}: C[{i}][{j}]");
                }
            }
        }
    }
}

#[test]
fn mx_products_are_mx_dot_products_with_a_shorter_last_block() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(33);
    // MXFP4, and MXFP8's backward E5M2 (the golden block product's integer path).
    for (scaling, elem) in [
        ("all=mxfp4", "fp4:e2m1"),
        ("all=scaled/fp8:e5m2/b32/e8m0", "fp8:e5m2"),
    ] {
        let mut c = cfg("bf16");
        c.scaling = Scaling::parse(scaling).unwrap();
        let mx = MxFormat::new(elem, 32).unwrap();
        for (m, k, n) in [(3, 40, 2), (2, 32, 3), (1, 70, 4)] {
            let (a, va) = matrix(&mut rng, m, k);
            let (b, vb) = matrix(&mut rng, k, n);
            let got = product(&c, Place::Backward, &a, &b);
            for i in 0..m {
                for j in 0..n {
                    let col: Vec<f64> = (0..k).map(|t| vb[t * n + j]).collect();
                    let want = mx
                        .dot_f32(&mx.quantize(&va[i * k..(i + 1) * k]), &mx.quantize(&col))
                        .unwrap();
                    let want = c.stages.f.calc().from_f64(f64::from(want));
                    assert_eq!(got[i * n + j], want, "{elem} {m}×{k}×{n}: C[{i}][{j}]");
                }
            }
        }
    }
}

/// `+sr`: the G product's operands quantized by the golden `quantize_rounded` from the pass's
/// rounder (A, then B, each row by row along K, padded), multiplied by the golden gemm; the
/// rounder goes on past both; the F and B stages of the same string round to nearest, and a
/// G product with `+sr` outside a gradients pass is refused.
#[test]
fn stochastic_g_products_quantize_by_the_passs_rounder() {
    use lpgen_golden::rounding::{Rounder, Rounding};
    use lpgen_golden::scale::{gemm, ScaledFormat};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(51);
    for scaling in ["FB=nvfp4,G=nvfp4+sr", "FB=mxfp4,G=mxfp4+rht16+sr"] {
        let mut c = cfg("bf16");
        c.scaling = Scaling::parse(scaling).unwrap();
        c.seed = 9;
        let format: ScaledFormat = match scaling.contains("mxfp4") {
            true => crate::scaling::MXFP4.parse().unwrap(),
            false => NVFP4,
        };
        let tile = if scaling.contains("mxfp4") { 32 } else { 16 };
        let rht = scaling.contains("rht").then(|| Rht::from_seed(9));
        for (m, k, n) in [(3, 40, 2), (2, 33, 3)] {
            let (a, va) = matrix(&mut rng, m, k);
            let (b, vb) = matrix(&mut rng, k, n);
            let kp = k.div_ceil(tile) * tile;
            let mut xa = padded(&va, (m, k, kp), false, 0);
            let mut xb = padded(&vb, (n, k, kp), true, n);
            if let Some(r) = rht {
                xa = r.transform_rows(&xa, m, kp).unwrap();
                xb = r.transform_rows(&xb, n, kp).unwrap();
            }
            let start = Rounder::new(Rounding::Stochastic(32), rng.gen());
            let mut mine = start;
            let qa = format
                .quantize_rounded(&xa, m, kp, None, &mut mine)
                .unwrap();
            let qb = format
                .quantize_rounded(&xb, n, kp, None, &mut mine)
                .unwrap();
            let want: Vec<u64> = gemm::gemm_f32(&format, &qa, &qb)
                .unwrap()
                .iter()
                .map(|&v| c.stages.g.calc().from_f64(f64::from(v)))
                .collect();
            let mut g = Golden::default();
            let mut scales = crate::scaling::Scales {
                sr: Some(start),
                ..Default::default()
            };
            let mut net = Net {
                m: &mut g,
                cfg: &c,
                storage: None,
                stream: None,
                scales: Some(&mut scales),
            };
            let recipe = c.scaling.get(Place::Gradient).unwrap();
            let bf16 = c.stages.g;
            let got = net
                .scaled_product(
                    (Place::Gradient, 0, recipe),
                    (a.view(), bf16),
                    (b.view(), bf16),
                    true,
                )
                .unwrap()
                .data;
            assert_eq!(got, want, "{scaling} {m}×{k}×{n}");
            assert_eq!(scales.sr, Some(mine), "{scaling}: the rounder goes on");
            // Nearest elsewhere, and the stochastic products differ from the nearest ones.
            let nearest = product(&c, Place::Forward, &a, &b);
            let fa = format.quantize(&xa, m, kp, None).unwrap();
            let fb = format.quantize(&xb, n, kp, None).unwrap();
            assert!(qa.codes != fa.codes || qb.codes != fb.codes, "{scaling}");
            if rht.is_none() {
                let plain: Vec<u64> = gemm::gemm_f32(&format, &fa, &fb)
                    .unwrap()
                    .iter()
                    .map(|&v| c.stages.f.calc().from_f64(f64::from(v)))
                    .collect();
                assert_eq!(nearest, plain, "{scaling}: F rounds to nearest");
            }
        }
        let (a, _) = matrix(&mut rng, 2, 16);
        let (b, _) = matrix(&mut rng, 16, 2);
        let mut g = Golden::default();
        let mut net = Net::new(&mut g, &c);
        let recipe = c.scaling.get(Place::Gradient).unwrap();
        let bf16 = c.stages.g;
        let e = net
            .scaled_product(
                (Place::Gradient, 0, recipe),
                (a.view(), bf16),
                (b.view(), bf16),
                true,
            )
            .unwrap_err();
        assert!(e.0.contains("+sr"), "{e}");
    }
}

/// A NaN in an operand makes its row's (column's) outputs NaN and leaves the others.
#[test]
fn a_nan_operand_spoils_its_row_only() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let mut c = cfg("bf16");
    c.scaling = Scaling::parse("all=nvfp4").unwrap();
    let bf16 = c.stages.f;
    let (mut a, _) = matrix(&mut rng, 3, 20);
    let (b, _) = matrix(&mut rng, 20, 2);
    let clean = product(&c, Place::Forward, &a, &b);
    a.data[25] = bf16.calc().from_f64(f64::NAN);
    let got = product(&c, Place::Forward, &a, &b);
    for (idx, (&g, &w)) in got.iter().zip(&clean).enumerate() {
        match idx / 2 {
            1 => assert!(bf16.calc().to_f64(g).is_nan(), "C {idx}"),
            _ => assert_eq!(g, w, "C {idx}"),
        }
    }
}
