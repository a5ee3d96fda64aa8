//! [`MxFormat::quantize_dense`] against [`MxFormat::quantize`] of each vector (values), and
//! [`matmul_dense`] against [`MxVector::dot_f32`] of each row and column (bits).

use super::*;
use crate::mx::{MxVector, ELEMS};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// f32 values of wide range: zeros of both signs, points on and between element grids
/// (ties), f32 subnormals, blocks near f32's top (clamped scales), rarely NaN or ±∞.
fn values(rng: &mut Pcg64, n: usize, special: bool) -> Vec<f32> {
    let scale = 2f64.powi(rng.gen_range(-150..120));
    (0..n)
        .map(|_| match rng.gen_range(0..50) {
            0 => 0.0,
            1 => -0.0,
            2 if special => f32::NAN,
            3 if special => f32::NEG_INFINITY,
            4 => f32::MAX,
            5 => f32::from_bits(rng.gen_range(1..1 << 23)),
            // Multiples of 2^−4 times the block's scale: element ties at every width.
            6..=20 => (f64::from(rng.gen_range(-64i32..64)) * 0.0625 * scale) as f32,
            _ => (rng.gen_range(-1.0..1.0) * scale * 2f64.powi(rng.gen_range(-12..12))) as f32,
        })
        .collect()
}

/// The definition's values of each vector: `quantize`, then the blocks' values (+0 for
/// zeros, as `quantize_dense` gives them).
fn reference(f: &MxFormat, vectors: &[Vec<f32>]) -> Vec<Vec<f64>> {
    vectors
        .iter()
        .map(|v| {
            let xs: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
            let blocks = f.quantize(&xs);
            blocks
                .iter()
                .flat_map(|b| f.dequantize_block(b).unwrap())
                .map(|y| y + 0.0)
                .collect()
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `quantize_dense` of `x` by each compilation this machine runs, which must agree to the bit
/// (NaN with NaN); the values.
fn quantize_every_way(f: &MxFormat, x: &[f32], rows: usize, cols: usize, along: Along) -> Vec<f64> {
    let here = Compiled::here();
    let each: Vec<Vec<f64>> = here
        .iter()
        .map(|&c| f.quantize_dense_on(c, x, rows, cols, along))
        .collect();
    for (c, got) in here.iter().zip(&each) {
        for (e, (&g, &w)) in got.iter().zip(&each[0]).enumerate() {
            assert!(same(g, w), "{f} {c:?} at {e}: {g:e} vs portable {w:e}");
        }
    }
    assert_eq!(f.quantize_dense(x, rows, cols, along).len(), x.len());
    each.into_iter().last().unwrap()
}

/// Every element's value is the definition's, along rows and along columns, for every
/// element type and block sizes that do and do not divide the vectors.
#[test]
fn quantize_dense_gives_the_definitions_values() {
    let mut rng = Pcg64::seed_from_u64(50);
    for &(name, _) in ELEMS {
        for k in [1, 7, 32] {
            let f = MxFormat::new(name, k).unwrap();
            for round in 0..30 {
                let (vecs, len) = (rng.gen_range(1..6), rng.gen_range(1..3 * k + 5));
                let v: Vec<Vec<f32>> = (0..vecs)
                    .map(|_| values(&mut rng, len, round % 3 == 0))
                    .collect();
                let want = reference(&f, &v);
                // Along rows: vector i is stored row i.
                let x: Vec<f32> = v.concat();
                let got = quantize_every_way(&f, &x, vecs, len, Along::Rows);
                for (i, w) in want.iter().enumerate() {
                    for (j, &w) in w.iter().enumerate() {
                        let g = got[i * len + j];
                        assert!(
                            same(g, w),
                            "{f} rows: ({i}, {j}) of {:e}: {g:e} vs {w:e}",
                            v[i][j]
                        );
                    }
                }
                // Along columns: vector i is stored column i (len × vecs).
                let xt: Vec<f32> = (0..len * vecs).map(|e| v[e % vecs][e / vecs]).collect();
                let got = quantize_every_way(&f, &xt, len, vecs, Along::Columns);
                for (i, w) in want.iter().enumerate() {
                    for (j, &w) in w.iter().enumerate() {
                        let g = got[j * vecs + i];
                        assert!(
                            same(g, w),
                            "{f} columns: ({i}, {j}) of {:e}: {g:e} vs {w:e}",
                            v[i][j]
                        );
                    }
                }
            }
        }
    }
}

/// Every word of f32 whose block scale is 2^0 ... and the midpoints: each f32 value x in
/// [−2^(emax+1), 2^(emax+1)) of a stride through the words, in a block with one fixed
/// largest element, rounds as `quantize` does (ties in particular).
#[test]
fn every_grid_point_and_midpoint_rounds_as_the_definition() {
    for &(name, _) in ELEMS {
        let f = MxFormat::new(name, 2).unwrap();
        // The block's other element fixes its scale: 2^emax_elem · 1.5 gives e = 0.
        let big = 1.5 * 2f32.powi(f.emax_elem());
        let xs: Vec<f32> = (0..1u32 << 16)
            .map(|i| f32::from_bits(i << 15))
            .filter(|x| x.is_finite() && x.abs() < 2.0 * big)
            .collect();
        let v: Vec<Vec<f32>> = xs.iter().map(|&x| vec![x, big]).collect();
        let want = reference(&f, &v);
        let got = quantize_every_way(&f, &v.concat(), v.len(), 2, Along::Rows);
        for (i, w) in want.iter().enumerate() {
            assert!(
                same(got[2 * i], w[0]),
                "{f}: {:e}: {:e} vs {:e}",
                xs[i],
                got[2 * i],
                w[0]
            );
        }
    }
}

/// Every element of the product is `dot_f32` of its row and column, bit for bit: every
/// element type the GEMM is exact for, operands stored as given and transposed, K = 1, 7, 32
/// and lengths K does not divide, NaN and ∞ blocks.
#[test]
fn matmul_dense_is_dot_f32_of_each_row_and_column() {
    let mut rng = Pcg64::seed_from_u64(51);
    for &(name, _) in ELEMS {
        for k in [1, 7, 32] {
            let f = MxFormat::new(name, k).unwrap();
            if !f.dense_product_is_exact() {
                continue;
            }
            let q = f.quantizer();
            for round in 0..8 {
                let len = rng.gen_range(1..3 * k + 40);
                // Up to 3 tiles of rows and of columns, the last partial.
                let (m, n) = (rng.gen_range(1..13), rng.gen_range(1..26));
                let rows: Vec<Vec<f32>> = (0..m)
                    .map(|_| values(&mut rng, len, round % 2 == 1))
                    .collect();
                let cols: Vec<Vec<f32>> = (0..n).map(|_| values(&mut rng, len, false)).collect();
                let vector = |v: &Vec<f32>| -> MxVector {
                    q.quantize_vector(&v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>())
                };
                let (va, vb): (Vec<MxVector>, Vec<MxVector>) = (
                    rows.iter().map(vector).collect(),
                    cols.iter().map(vector).collect(),
                );
                // A stored m × len (rows) or len × m (transposed: columns); B likewise.
                let (ta, tb) = (round % 2 == 0, round % 4 < 2);
                let a_stored: Vec<f32> = if ta {
                    (0..len * m).map(|e| rows[e % m][e / m]).collect()
                } else {
                    rows.concat()
                };
                let b_stored: Vec<f32> = if tb {
                    cols.concat()
                } else {
                    (0..len * n).map(|e| cols[e % n][e / n]).collect()
                };
                let qa = if ta {
                    f.quantize_dense(&a_stored, len, m, Along::Columns)
                } else {
                    f.quantize_dense(&a_stored, m, len, Along::Rows)
                };
                let qb = if tb {
                    f.quantize_dense(&b_stored, n, len, Along::Rows)
                } else {
                    f.quantize_dense(&b_stored, len, n, Along::Columns)
                };
                let a = if ta {
                    Operand::stored(&qa, len, m, true)
                } else {
                    Operand::stored(&qa, m, len, false)
                };
                let b = if tb {
                    Operand::stored(&qb, n, len, true)
                } else {
                    Operand::stored(&qb, len, n, false)
                };
                let got = matmul_dense(&f, a, b);
                for (e, g) in got.iter().enumerate() {
                    let want = va[e / n].dot_f32(&vb[e % n]);
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "{f} {m}x{len}x{n} ({e}): {g} vs {want}"
                    );
                }
            }
        }
    }
}

/// The largest element integers summed over a block of 1024 with one sign: the formats
/// that pass `dense_product_is_exact` hold every bit, and fp8 E5M2 (32-bit integers) does not
/// pass at this K, even split in two.
#[test]
fn the_exactness_bound_holds_at_full_blocks() {
    for &(name, _) in ELEMS {
        let f = MxFormat::new(name, 1024).unwrap();
        assert_eq!(f.dense_product_is_exact(), name != "fp8:e5m2", "{f}");
        if !f.dense_product_is_exact() {
            continue;
        }
        let max = 2f32.powi(f.emax_elem()) * 1.99;
        let xs: Vec<f32> = (0..1024)
            .map(|i| if i % 3 == 0 { max } else { max * 0.77 })
            .collect();
        let q = f.quantize_dense(&xs, 1, 1024, Along::Rows);
        let got = matmul_dense(
            &f,
            Operand::stored(&q, 1, 1024, false),
            Operand::stored(&q, 1024, 1, false),
        );
        let v = f
            .quantizer()
            .quantize_vector(&xs.iter().map(|&x| f64::from(x)).collect::<Vec<_>>());
        assert_eq!(got[0].to_bits(), v.dot_f32(&v).to_bits(), "{f}");
    }
    assert!(matmul_dense(
        &MxFormat::new("fp4:e2m1", 32).unwrap(),
        Operand::stored(&[], 0, 3, false),
        Operand::stored(&[0.0; 6], 3, 2, false)
    )
    .is_empty());
}

/// fp8 E5M2's blocks of 32 take two GEMMs (A's integers split at bit 16), and their sum is
/// rounded once: 2^30 + 2^6 + 2^−32 (a row [2^15, 2^3, 2^−16] with itself) lies just above
/// an f32 tie that binary64's nearest sum (2^30 + 2^6) would round to even, down. The high
/// part holds 2^30 + 2^6, the low part 2^−32; the definition rounds up, to 2^30 + 2^7.
#[test]
fn split_sums_round_once() {
    let f = MxFormat::new("fp8:e5m2", 32).unwrap();
    assert_eq!(f.dense_sums(), Some(DenseSums::Split(16)));
    // At K = 64 neither part's GEMM would be exact (3·32 + 2·6 > 106).
    assert_eq!(MxFormat::new("fp8:e5m2", 64).unwrap().dense_sums(), None);
    let row = [2f32.powi(15), 8.0, 2f32.powi(-16)];
    let q = f.quantize_dense(&row, 1, 3, Along::Rows);
    let qt = f.quantize_dense(&row, 3, 1, Along::Columns);
    let got = matmul_dense(
        &f,
        Operand::stored(&q, 1, 3, false),
        Operand::stored(&qt, 3, 1, false),
    );
    let v = f
        .quantizer()
        .quantize_vector(&row.iter().map(|&x| f64::from(x)).collect::<Vec<_>>());
    assert_eq!(got[0], 2f32.powi(30) + 128.0);
    assert_eq!(got[0].to_bits(), v.dot_f32(&v).to_bits());
    // Just above, just below and on the tie, either sign, either order.
    let (tie, tiny) = (2f64.powi(30) + 64.0, 2f64.powi(-32));
    for sign in [1.0, -1.0] {
        let at = |x: f32| sign as f32 * x;
        for (a, b) in [(tie, tiny), (tiny, tie)] {
            assert_eq!(round_sum_f32(sign * a, sign * b), at(2f32.powi(30) + 128.0));
        }
        assert_eq!(round_sum_f32(sign * tie, -sign * tiny), at(2f32.powi(30)));
        assert_eq!(round_sum_f32(sign * tie, 0.0), at(2f32.powi(30)));
    }
    assert!(round_sum_f32(f64::NAN, 1.0).is_nan());
}

/// fp8 E5M2 blocks of 32 with every element at an extreme of the element's range (its
/// largest values, its subnormals, and values just above and below the split), either
/// sign: the two GEMMs' sums are the definition's, bit for bit.
#[test]
fn split_sums_hold_at_the_range_extremes() {
    let f = MxFormat::new("fp8:e5m2", 32).unwrap();
    let q = f.quantizer();
    let mut rng = Pcg64::seed_from_u64(52);
    let picks = [
        57344.0,
        49152.0,
        40960.0,
        1.75,
        1.0,
        0.75,
        0.5,
        3.0 * 2f32.powi(-16),
        2f32.powi(-16),
    ];
    let vector = |rng: &mut Pcg64| -> Vec<f32> {
        let mut v: Vec<f32> = (0..32)
            .map(|_| picks[rng.gen_range(0..picks.len())] * if rng.gen() { 1.0 } else { -1.0 })
            .collect();
        v[0] = 57344.0; // every block at the top of the range: scale 2^0
        v
    };
    for _ in 0..200 {
        let (m, n) = (rng.gen_range(1..6), rng.gen_range(1..6));
        let rows: Vec<Vec<f32>> = (0..m).map(|_| vector(&mut rng)).collect();
        let cols: Vec<Vec<f32>> = (0..n).map(|_| vector(&mut rng)).collect();
        let qa = f.quantize_dense(&rows.concat(), m, 32, Along::Rows);
        let qb = f.quantize_dense(&cols.concat(), n, 32, Along::Rows);
        let got = matmul_dense(
            &f,
            Operand::stored(&qa, m, 32, false),
            Operand::stored(&qb, n, 32, true),
        );
        let mx =
            |v: &Vec<f32>| q.quantize_vector(&v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>());
        for (e, g) in got.iter().enumerate() {
            let want = mx(&rows[e / n]).dot_f32(&mx(&cols[e % n]));
            assert_eq!(g.to_bits(), want.to_bits(), "({e}): {g} vs {want}");
        }
    }
}
