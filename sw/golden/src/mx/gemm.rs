//! The product of MX operands at the speed of an f64 GEMM: C = A·B, A's rows and B's columns
//! [`MxVector`]s, every element bit-identical to [`MxVector::dot_f32`] of its row and column
//! (the definition, which `tests` holds this kernel to).
//!
//! Block by block along the reduction dimension: the block's exact integer dot products of
//! every (row, column) pair come from one `matrixmultiply` f64 GEMM over the element
//! integers (at 2^lsb). Where every element integer is below 2^W, W chosen so that a product
//! summed over a block stays below 2^53, every partial sum the GEMM forms, in whatever order,
//! is an integer it holds exactly, so the GEMM's result is the block's exact sum. That sum is
//! rounded once to f32 and added to the element's f32 accumulator in block order, by the same
//! rounding as `dot_f32` ([`round_term`]); blocks with a NaN scale or a special element take
//! its general block product ([`MxVector::block_term`]). Element types with wider integers
//! (fp8 E5M2: 32 bits) run `dot_f32` itself, whose i64 and i128 sums are faster than slices.

use super::block::F32Acc;
use super::product::{int_bits, round_term, MxVector};

/// Bits of an f64's significand: integers below 2^53 are exact.
const F64_EXACT_BITS: u32 = 53;

/// C = A·B (row-major `a.len()` × `b.len()`): element (i, j) is `a[i].dot_f32(&b[j])`, bit
/// for bit. Every vector must be of one format and one length.
pub fn matmul_f32(a: &[MxVector], b: &[MxVector]) -> Vec<f32> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return Vec::new();
    }
    let (format, len) = (a[0].format, a[0].ints.len());
    assert!(
        a.iter()
            .chain(b)
            .all(|v| v.format == format && v.ints.len() == len),
        "MX vectors of one format and length"
    );
    let kb = format.block;
    // A product below 2^2W, a block's sum of K below 2^(2W + log2 K) ≤ 2^53.
    let log_k = kb.next_power_of_two().trailing_zeros();
    if 2 * int_bits(&format) + log_k > F64_EXACT_BITS {
        return a
            .iter()
            .flat_map(|r| b.iter().map(move |c| r.dot_f32(c)))
            .collect();
    }
    // A's integers row-major (m × len), B's held by columns (n × len).
    let ints = |vs: &[MxVector]| -> Vec<f64> {
        let mut out = Vec::with_capacity(vs.len() * len);
        for v in vs {
            out.extend(v.ints.iter().map(|&x| x as f64));
        }
        out
    };
    let (ia, ib) = (ints(a), ints(b));
    let mut acc = vec![F32Acc::new(); m * n];
    let mut c = vec![0f64; m * n];
    let lsb2 = 2 * format.elem_lsb();
    for (blk, k0) in (0..len).step_by(kb).enumerate() {
        let kl = kb.min(len - k0);
        // SAFETY: A is m×len with strides (len, 1), read from column k0 for kl columns; B
        // is len×n held by columns, strides (1, len), from row k0 for kl rows; C is m×n with
        // strides (n, 1). Every index stays in its slice.
        unsafe {
            matrixmultiply::dgemm(
                m,
                kl,
                n,
                1.0,
                ia[k0..].as_ptr(),
                len as isize,
                1,
                ib[k0..].as_ptr(),
                1,
                len as isize,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        let exps =
            |vs: &[MxVector]| -> Vec<Option<i64>> { vs.iter().map(|v| v.block_exp(blk)).collect() };
        let (ea, eb) = (exps(a), exps(b));
        for (e, (slot, &sum)) in acc.iter_mut().zip(&c).enumerate() {
            let (i, j) = (e / n, e % n);
            // An integer below 2^53 in magnitude: exact.
            let sum = i128::from(sum as i64);
            slot.add(match (ea[i], eb[j]) {
                (Some(x), Some(y)) => round_term(sum, lsb2 + x + y),
                _ => a[i].block_term(&b[j], blk, || sum),
            });
        }
    }
    acc.iter().map(F32Acc::result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mx::{MxFormat, ELEMS};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// Values of wide range: zeros, ties on the element grid, tiny and huge blocks (f32
    /// subnormal, zero and infinite block terms), rarely NaN or ∞ (`special`).
    fn values(rng: &mut Pcg64, n: usize, special: bool) -> Vec<f64> {
        (0..n)
            .map(|_| match rng.gen_range(0..60) {
                0 => 0.0,
                1 if special => f64::NAN,
                2 if special => f64::INFINITY,
                3 => f64::from(rng.gen_range(-16i32..16)) * 0.25,
                _ => rng.gen_range(-1.0..1.0) * 2f64.powi(rng.gen_range(-130..130)),
            })
            .collect()
    }

    /// Every element of the kernel's product is `dot_f32` of its row and column: every element
    /// type (on the GEMM, and E5M2 on `dot_f32`), block sizes 1, 7, 32 and 1024, lengths that K does not
    /// divide, NaN and ∞ blocks, and a 1×1 product.
    #[test]
    fn every_element_is_the_dot_product_of_its_row_and_column() {
        let mut rng = Pcg64::seed_from_u64(45);
        for &(name, _) in ELEMS {
            for k in [1, 7, 32, 1024] {
                let f = MxFormat::new(name, k).unwrap();
                let q = f.quantizer();
                for round in 0..4 {
                    let len = rng.gen_range(1..3 * k.min(40));
                    let (m, n) = (rng.gen_range(1..7), rng.gen_range(1..7));
                    let special = round % 2 == 1;
                    let a: Vec<MxVector> = (0..m)
                        .map(|_| q.quantize_vector(&values(&mut rng, len, special)))
                        .collect();
                    let b: Vec<MxVector> = (0..n)
                        .map(|_| q.quantize_vector(&values(&mut rng, len, false)))
                        .collect();
                    let got = matmul_f32(&a, &b);
                    for (e, g) in got.iter().enumerate() {
                        let want = a[e / n].dot_f32(&b[e % n]);
                        assert_eq!(
                            g.to_bits(),
                            want.to_bits(),
                            "{f} {m}x{len}x{n} element {e}: {g} vs {want}"
                        );
                    }
                }
            }
        }
        assert!(matmul_f32(&[], &[]).is_empty());
    }

    /// The largest element integers, summed over a whole block of 1024 with one sign: the
    /// GEMM must hold every bit (or the type take `dot_f32`).
    #[test]
    fn full_blocks_of_the_largest_elements_are_exact() {
        for &(name, _) in ELEMS {
            let f = MxFormat::new(name, 1024).unwrap();
            let q = f.quantizer();
            let max = 2f64.powi(f.emax_elem()) * 1.99;
            let xs: Vec<f64> = (0..1024)
                .map(|i| if i % 3 == 0 { max } else { max * 0.77 })
                .collect();
            let (a, b) = (q.quantize_vector(&xs), q.quantize_vector(&xs));
            let got = matmul_f32(std::slice::from_ref(&a), std::slice::from_ref(&b));
            assert_eq!(got[0].to_bits(), a.dot_f32(&b).to_bits(), "{f}");
        }
    }

    /// A sum past 2^53 whose last unit breaks an f32 tie (fp8 E5M2, K = 1024, both scales
    /// 2^0, element integers at 2^−16): 1020 products (7·2^19)², one 2^15·2^14 (half an f32
    /// unit there) and one 1·1 (the smallest subnormals). Exact, it rounds up; sent to the
    /// GEMM (a bound off by one bit), the f64 sum drops the 1 and rounds the tie to even.
    #[test]
    fn a_tie_broken_by_the_last_unit_is_kept() {
        let f = MxFormat::new("fp8:e5m2", 1024).unwrap();
        let q = f.quantizer();
        let (mut a, mut b) = (vec![0.0; 1024], vec![0.0; 1024]);
        // 2^15 sets both scales to 2^0 (⌊log2 amax⌋ − emax = 15 − 15), against a zero.
        (a[0], b[1]) = (32768.0, 32768.0);
        for i in 2..1022 {
            (a[i], b[i]) = (56.0, 56.0);
        }
        (a[1022], b[1022]) = (0.5, 0.25);
        (a[1023], b[1023]) = (2f64.powi(-16), 2f64.powi(-16));
        let (va, vb) = (q.quantize_vector(&a), q.quantize_vector(&b));
        let big = 1020.0 * 56.0 * 56.0;
        let got = matmul_f32(std::slice::from_ref(&va), std::slice::from_ref(&vb));
        let ulp = 2f32.powi(-2);
        assert_eq!(
            big as f32 % (2.0 * ulp),
            0.0,
            "an even f32, a unit of 2^−2 at 2^21"
        );
        assert_eq!(got[0], big as f32 + ulp, "rounded up, not to even");
        assert_eq!(got[0].to_bits(), va.dot_f32(&vb).to_bits());
    }
}
