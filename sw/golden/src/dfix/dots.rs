//! Every dot product of a dynamic fixed-point product at once ([`DfixFormat::dots`]): the
//! exact integer sums of [`DfixFormat::dot`], one f64 GEMM of the words' integers where no
//! sum can leave f64's integers, each then read out as `dot` reads it. `dot` stays the
//! definition; `dots_are_the_dot_products` holds this to it.

use super::{DfixFormat, ReadOut};

impl DfixFormat {
    /// Every [`DfixFormat::dot`] of a row of `a` (m × k, row-major, at scale `ea`) with a
    /// column of `b` (k × n, row-major, at scale `eb`), read out into scale `e`, row-major.
    ///
    /// The exact sum Σ a_i·b_i of W-bit integers is at most K·2^(2W−2) in magnitude, and so is
    /// every partial sum, in any order. Where that is at most 2^53 every partial sum is an
    /// integer f64 holds, so an f64 GEMM (matrixmultiply, any order, with or without fused
    /// multiply-adds) gives the exact sums; otherwise each is summed in i128 as `dot` does.
    pub fn dots(
        &self,
        (a, ea): (&[u64], i32),
        (b, eb): (&[u64], i32),
        (m, k, n): (usize, usize, usize),
        e: i32,
    ) -> Vec<ReadOut> {
        assert!(
            a.len() == m * k && b.len() == k * n,
            "an m×k and a k×n matrix"
        );
        let sums = match self.gemm_is_exact(k) {
            true => self.gemm(a, b, (m, k, n)),
            false => (0..m * n)
                .map(|ij| {
                    let (i, j) = (ij / n, ij % n);
                    (0..k)
                        .map(|t| {
                            self.to_int(a[i * k + t]) as i128 * self.to_int(b[t * n + j]) as i128
                        })
                        .sum()
                })
                .collect(),
        };
        sums.into_iter()
            .map(|acc| self.read_out(acc, ea + eb, e))
            .collect()
    }

    /// Whether every partial sum of K products of words is an integer below 2^53.
    fn gemm_is_exact(&self, k: usize) -> bool {
        let bits =
            2 * (self.width as u64 - 1) + (k.max(1) as u64).next_power_of_two().ilog2() as u64;
        bits <= 53
    }

    /// The exact sums by one f64 GEMM of the words' integers.
    fn gemm(&self, a: &[u64], b: &[u64], (m, k, n): (usize, usize, usize)) -> Vec<i128> {
        let ints = |w: &[u64]| {
            w.iter()
                .map(|&x| self.to_int(x) as f64)
                .collect::<Vec<f64>>()
        };
        let (fa, fb) = (ints(a), ints(b));
        let mut c = vec![0.0f64; m * n];
        if m * n > 0 && k > 0 {
            // SAFETY: A is m×k with strides (k, 1), B is k×n with strides (n, 1), C is m×n
            // with strides (n, 1); the assert of `dots` and the lengths above say the slices
            // hold those elements.
            unsafe {
                matrixmultiply::dgemm(
                    m,
                    k,
                    n,
                    1.0,
                    fa.as_ptr(),
                    k as isize,
                    1,
                    fb.as_ptr(),
                    n as isize,
                    1,
                    0.0,
                    c.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
        }
        // Integers below 2^53: exact as i64 (one instruction, where f64 → i128 is a call).
        c.into_iter().map(|x| x as i64 as i128).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dots` is `dot` of every row and column: widths 4 to 32 (the GEMM and the i128 sums),
    /// K from 0 to past the GEMM's bound for 16 bits, words at the extremes (−2^(W−1) with
    /// itself: the largest products) and random, scales that read out exactly, round and
    /// saturate.
    #[test]
    fn dots_are_the_dot_products() {
        let mut r = crate::test_words(18);
        // The GEMM's bound: 2(W − 1) + ⌈log2 K⌉ ≤ 53.
        let d = |w| DfixFormat::new(w).unwrap();
        assert!(d(16).gemm_is_exact(1 << 23) && !d(16).gemm_is_exact((1 << 23) + 1));
        assert!(d(17).gemm_is_exact(1 << 21) && !d(17).gemm_is_exact((1 << 21) + 1));
        // At the bound: K = 2^23 odd products (2^15 − 1)·(1 − 2^15) of 16-bit words sum to
        // just under −2^53 (the GEMM), one more term passes it (i128: f64 would round).
        let f = d(16);
        for k in [1usize << 23, (1 << 23) + 1] {
            let (a, b) = (vec![0x7fff; k], vec![0x8001; k]);
            let got = f.dots((&a, -8), (&b, -8), (1, k, 1), 24);
            assert_eq!(got[0], f.dot(&a, -8, &b, -8, 24), "dfix:16 K = {k}");
        }
        for w in [4u32, 8, 12, 16, 24, 32] {
            let f = DfixFormat::new(w).unwrap();
            let mask = (1u64 << w) - 1;
            let min = 1u64 << (w - 1);
            for (m, k, n) in [
                (1, 0, 1),
                (3, 1, 2),
                (5, 37, 4),
                (2, 300, 3),
                (2, 1 << 13, 2),
            ] {
                for extreme in [false, true] {
                    let mut word = |_| {
                        if extreme && r() & 1 == 0 {
                            min
                        } else {
                            r() & mask
                        }
                    };
                    let a: Vec<u64> = (0..m * k).map(&mut word).collect();
                    let b: Vec<u64> = (0..k * n).map(&mut word).collect();
                    for (ea, eb, e) in [(-4, -3, -7), (-4, -3, 0), (0, 0, -20), (2, 1, 20)] {
                        let got = f.dots((&a, ea), (&b, eb), (m, k, n), e);
                        for i in 0..m {
                            let col = |j: usize| (0..k).map(|t| b[t * n + j]).collect::<Vec<_>>();
                            for j in 0..n {
                                let want = f.dot(&a[i * k..(i + 1) * k], ea, &col(j), eb, e);
                                let what = format!("dfix:{w} {m}x{k}x{n} ({i}, {j}) e {e}");
                                assert_eq!(got[i * n + j], want, "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
}
