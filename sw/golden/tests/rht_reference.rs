//! The random Hadamard transform (`lpgen_golden::scale::hadamard`) against a reference
//! written here from its definition (docs/formats.md, "Random Hadamard transform"), never
//! calling the code under test for an expected value:
//!
//! - H16 built by Sylvester's doubling H_2n = [[H, H], [H, −H]] from H_1 = [1], then / 4;
//! - d_j = −1 where bit j of the low 16 bits of SplitMix64's first output is set (SplitMix64
//!   written out here);
//! - each input rounded to binary32, y_i = (Σ_j in order j = 0 … 15 of H_ij·d_j·x_j, from +0,
//!   each addition rounded to binary32) · 1/4 rounded to binary32, done with the float
//!   family's `float:8:23` words (not native f32 arithmetic).
//!
//! And the property the recipes rely on, on values where every step is exact: the product
//! of two transformed operands equals the untransformed product, and (HD)ᵀ(HD) = I.

use lpgen_golden::scale::hadamard::{Rht, TILE};
use lpgen_golden::Format;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Sylvester's H16 (entries ±1, before the 1/4).
fn sylvester() -> Vec<Vec<i8>> {
    let mut h = vec![vec![1i8]];
    while h.len() < TILE {
        let n = h.len();
        let mut next = vec![vec![0i8; 2 * n]; 2 * n];
        for i in 0..n {
            for j in 0..n {
                next[i][j] = h[i][j];
                next[i][j + n] = h[i][j];
                next[i + n][j] = h[i][j];
                next[i + n][j + n] = -h[i][j];
            }
        }
        h = next;
    }
    h
}

fn splitmix_first(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The reference transform of one tile of f64 inputs: binary32 words out.
fn reference(neg: u16, x: &[f64]) -> Vec<u64> {
    let f: Format = "float:8:23".parse().unwrap();
    let c = f.calc();
    let h = sylvester();
    let quarter = c.from_f64(0.25);
    let xs: Vec<u64> = x.iter().map(|&v| c.from_f64(v)).collect();
    (0..TILE)
        .map(|i| {
            let mut acc = c.zero();
            for j in 0..TILE {
                let minus = (h[i][j] < 0) ^ (neg >> j & 1 == 1);
                let t = if minus { c.neg(xs[j]) } else { xs[j] };
                acc = c.add(acc, t);
            }
            c.mul(acc, quarter)
        })
        .collect()
}

fn same(got: f64, want: u64) -> bool {
    let w = f32::from_bits(want as u32);
    (got.is_nan() && w.is_nan()) || (got as f32).to_bits() == want as u32 && got == f64::from(w)
}

/// A value of a wide range: f32 values of every binade, subnormals, f64 values between
/// f32 words, zeros of both signs, near-overflow values, infinities.
fn value(rng: &mut Pcg64) -> f64 {
    let sign = if rng.gen::<bool>() { -1.0 } else { 1.0 };
    match rng.gen_range(0..20) {
        0 => 0.0 * sign,
        1 => sign * f64::from(f32::from_bits(rng.gen_range(1..0x80_0000))),
        2 => sign * f64::from(f32::MAX) * rng.gen_range(0.5..1.0),
        3 if rng.gen_range(0..8) == 0 => sign * f64::INFINITY,
        4..=7 => sign * rng.gen::<f64>() * 2f64.powi(rng.gen_range(-140..120)),
        _ => sign * f64::from(rng.gen::<f32>()) * 2f64.powi(rng.gen_range(-10..10)),
    }
}

#[test]
fn transform_equals_the_reference() {
    let mut rng = Pcg64::seed_from_u64(50);
    for n in 0..20_000 {
        let neg: u16 = rng.gen();
        let rht = Rht::new(neg);
        let rows = 1 + n % 3;
        let x: Vec<f64> = (0..rows * TILE).map(|_| value(&mut rng)).collect();
        let got = rht.transform_rows(&x, rows, TILE).unwrap();
        for r in 0..rows {
            let want = reference(neg, &x[r * TILE..(r + 1) * TILE]);
            for i in 0..TILE {
                assert!(
                    same(got[r * TILE + i], want[i]),
                    "mask {neg:#06x}, row {r}, output {i}: got {:e}, want {:e} (x {:?})",
                    got[r * TILE + i],
                    f32::from_bits(want[i] as u32),
                    &x[r * TILE..(r + 1) * TILE]
                );
            }
        }
    }
}

#[test]
fn signs_come_from_the_seed() {
    for seed in [0u64, 1, 2, 3, 50, u64::MAX] {
        assert_eq!(Rht::from_seed(seed).neg, splitmix_first(seed) as u16);
    }
}

#[test]
fn the_product_is_unchanged_on_exact_values() {
    let mut rng = Pcg64::seed_from_u64(16);
    for _ in 0..2_000 {
        let rht = Rht::new(rng.gen());
        let tiles = rng.gen_range(1..5);
        let k = tiles * TILE;
        // Integers below 2^10: every binary32 sum of 16 is exact, every output a multiple
        // of 1/4, every product of two outputs exact in f64.
        let a: Vec<f64> = (0..k)
            .map(|_| f64::from(rng.gen_range(-1000..=1000)))
            .collect();
        let b: Vec<f64> = (0..k)
            .map(|_| f64::from(rng.gen_range(-1000..=1000)))
            .collect();
        let (ta, tb) = (
            rht.transform_rows(&a, 1, k).unwrap(),
            rht.transform_rows(&b, 1, k).unwrap(),
        );
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
        assert_eq!(dot(&ta, &tb), dot(&a, &b));
        assert_ne!(ta, a, "the transform moved nothing");
    }
}

#[test]
fn hd_is_orthogonal() {
    for neg in [0u16, 0xffff, 0x8001, 0x1234, 0xa5a5] {
        let rht = Rht::new(neg);
        // Column k of HD: the transform of the unit vector e_k.
        let cols: Vec<Vec<f64>> = (0..TILE)
            .map(|k| {
                let e: Vec<f64> = (0..TILE).map(|j| f64::from(u8::from(j == k))).collect();
                rht.transform_rows(&e, 1, TILE).unwrap()
            })
            .collect();
        for (k, ck) in cols.iter().enumerate() {
            assert!(ck.iter().all(|v| v.abs() == 0.25));
            for (l, cl) in cols.iter().enumerate() {
                let d: f64 = ck.iter().zip(cl).map(|(p, q)| p * q).sum();
                assert_eq!(
                    d,
                    f64::from(u8::from(k == l)),
                    "mask {neg:#x}, columns {k}, {l}"
                );
            }
        }
    }
}

#[test]
fn a_row_length_not_a_multiple_of_16_is_refused() {
    let e = Rht::new(0).transform_rows(&[1.0; 24], 2, 12).unwrap_err();
    assert!(e.0.contains("multiple of 16"), "{}", e.0);
}
