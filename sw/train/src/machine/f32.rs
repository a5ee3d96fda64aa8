//! The float machine: training in IEEE binary32 at the speed of the host. Words are `f32`;
//! matrix products are cache-blocked SIMD kernels (`matrixmultiply`'s sgemm) shared among the
//! cores by output rows or columns; lane operations are plain loops over `f32` slices.
//!
//! Lanes are bit-identical to the golden f32 lanes (`lpgen_golden::alu`, tested below);
//! products round differently from the golden machine's in-order f32 dot products (the
//! kernel accumulates in blocks with fused multiply-adds), within f32 rounding.

use lpgen_golden::{AluOp, Format, F32};

use crate::machine::{all_cores, check_shapes, in_parallel, Accumulate, Machine, Mat, View};
use crate::TrainError;

/// The float machine on `threads` threads.
pub struct Float {
    pub threads: usize,
}

impl Default for Float {
    fn default() -> Float {
        Float {
            threads: all_cores(),
        }
    }
}

/// Below this many multiply-adds a product runs on one thread.
const PARALLEL_FROM: usize = 1 << 16;

/// A matrix's base pointer, shared by the threads of one product: they read the operands and
/// each writes its own rows or columns of the output.
#[derive(Clone, Copy)]
struct Shared<P>(P);
// SAFETY: the operands are only read while the product runs, and the threads write disjoint
// elements of the output (see `matmul`).
unsafe impl<P> Send for Shared<P> {}
unsafe impl<P> Sync for Shared<P> {}

/// (row stride, column stride) of an operand in its matrix's storage.
fn strides(v: &View<'_, f32>) -> (isize, isize) {
    let cols = v.mat.cols as isize;
    if v.transposed {
        (1, cols)
    } else {
        (cols, 1)
    }
}

impl Machine for Float {
    type Word = f32;

    fn matmul(
        &mut self,
        f: Format,
        _acc: Accumulate,
        a: View<'_, f32>,
        b: View<'_, f32>,
    ) -> Result<Mat<f32>, TrainError> {
        if f != Format::F32(F32) {
            return Err(TrainError(format!(
                "the float machine computes in f32, not {f}"
            )));
        }
        check_shapes(a, b)?;
        let (m, k, n) = (a.rows(), a.cols(), b.cols());
        let mut c = vec![0f32; m * n];
        let ((rsa, csa), (rsb, csb)) = (strides(&a), strides(&b));
        let threads = if m * n * k < PARALLEL_FROM {
            1
        } else {
            self.threads
        };
        // Split the larger output dimension: each thread computes a block of whole rows or
        // whole columns of C, every element over all of k.
        let by_rows = m >= n;
        let span = if by_rows { m } else { n };
        let per = span.div_ceil(threads.clamp(1, span.max(1))).max(1);
        let (pa, pb, pc) = (
            Shared(a.mat.data.as_ptr()),
            Shared(b.mat.data.as_ptr()),
            Shared(c.as_mut_ptr()),
        );
        in_parallel(threads, span.div_ceil(per), |part| {
            let (lo, hi) = (part * per, ((part + 1) * per).min(span));
            let (pa, pb, pc) = (pa, pb, pc);
            // SAFETY: the operands hold m×k and k×n elements at the given strides (shapes
            // checked above); part `part` writes only rows (or columns) lo..hi of C, which no
            // other part writes, and C outlives the scope of the threads.
            unsafe {
                if by_rows {
                    matrixmultiply::sgemm(
                        hi - lo,
                        k,
                        n,
                        1.0,
                        pa.0.offset(lo as isize * rsa),
                        rsa,
                        csa,
                        pb.0,
                        rsb,
                        csb,
                        0.0,
                        pc.0.add(lo * n),
                        n as isize,
                        1,
                    );
                } else {
                    matrixmultiply::sgemm(
                        m,
                        k,
                        hi - lo,
                        1.0,
                        pa.0,
                        rsa,
                        csa,
                        pb.0.offset(lo as isize * csb),
                        rsb,
                        csb,
                        0.0,
                        pc.0.add(lo),
                        n as isize,
                        1,
                    );
                }
            }
        });
        Ok(Mat {
            rows: m,
            cols: n,
            data: c,
        })
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[f32],
        b: &[f32],
    ) -> Result<Vec<f32>, TrainError> {
        if f != Format::F32(F32) {
            return Err(TrainError(format!(
                "the float machine computes in f32, not {f}"
            )));
        }
        // Generic (not `fn` pointers) so that each loop is inlined and vectorised.
        fn two(a: &[f32], b: &[f32], g: impl Fn(f32, f32) -> f32) -> Vec<f32> {
            if b.len() >= a.len() {
                a.iter().zip(b).map(|(&x, &y)| g(x, y)).collect()
            } else {
                // A short `b` reads as zeros, as the golden lanes read it.
                let pad = b.iter().copied().chain(std::iter::repeat(0.0));
                a.iter().zip(pad).map(|(&x, y)| g(x, y)).collect()
            }
        }
        fn one(a: &[f32], g: impl Fn(f32) -> f32) -> Vec<f32> {
            a.iter().map(|&x| g(x)).collect()
        }
        // The golden f32 lane of each opcode (`lpgen_golden::Calc::F32`, `alu::result`).
        Ok(match op {
            AluOp::Add => two(a, b, |x, y| x + y),
            AluOp::Sub => two(a, b, |x, y| x - y),
            AluOp::Mul => two(a, b, |x, y| x * y),
            AluOp::Div => two(a, b, |x, y| x / y),
            AluOp::Max => two(a, b, |x, y| {
                if x.is_nan() || y.is_nan() {
                    f32::NAN
                } else {
                    x.max(y)
                }
            }),
            AluOp::Min => two(a, b, |x, y| {
                if x.is_nan() || y.is_nan() {
                    f32::NAN
                } else {
                    x.min(y)
                }
            }),
            AluOp::Lt => two(a, b, |x, y| if x < y { 1.0 } else { 0.0 }),
            AluOp::Neg => one(a, |x| -x),
            AluOp::Abs => one(a, f32::abs),
            // The trainer's lanes select nothing (sel = 0 gives b) and convert nothing here.
            AluOp::Select => two(a, b, |_, y| y),
            AluOp::Convert => a.to_vec(),
            AluOp::Sqrt => one(a, f32::sqrt),
        })
    }

    fn convert(&mut self, from: Format, to: Format, a: &[f32]) -> Result<Vec<f32>, TrainError> {
        if from != Format::F32(F32) || to != Format::F32(F32) {
            return Err(TrainError(format!(
                "the float machine converts only f32 to f32, not {from} to {to}"
            )));
        }
        Ok(a.to_vec())
    }

    fn mx_matmul(
        &mut self,
        mx: lpgen_golden::mx::MxFormat,
        a: View<'_, f32>,
        b: View<'_, f32>,
    ) -> Result<Mat<f32>, TrainError> {
        crate::machine::mx_product(mx, a, b, self.threads)
    }

    fn name(&self) -> String {
        "f32".into()
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn fork(&self) -> Option<Box<dyn Machine<Word = f32>>> {
        Some(Box::new(Float { threads: 1 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Golden, Word};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// Bit patterns that exercise every special case: zeros, infinities, NaNs, subnormals,
    /// the extremes, and random words.
    fn words(n: usize) -> Vec<f32> {
        let mut rng = Pcg64::seed_from_u64(7);
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::MAX,
            f32::MIN,
        ];
        let mut v: Vec<f32> = special.to_vec();
        v.extend((0..n).map(|_| f32::from_bits(rng.gen())));
        v.extend((0..n).map(|_| rng.gen_range(-4.0f32..4.0)));
        v
    }

    #[test]
    fn lanes_are_the_golden_f32_lanes_bit_for_bit() {
        let a = words(2000);
        let mut b = a.clone();
        b.rotate_left(5);
        let (ua, ub): (Vec<u64>, Vec<u64>) = (
            a.iter().map(|x| x.to_bits() as u64).collect(),
            b.iter().map(|x| x.to_bits() as u64).collect(),
        );
        let mut golden = Golden::new("f32", None);
        for op in AluOp::ALL {
            if op == AluOp::Convert {
                continue;
            }
            let want = golden.lanes(Format::F32(F32), op, &ua, &ub).unwrap();
            let got = Float::default()
                .lanes(Format::F32(F32), op, &a, &b)
                .unwrap();
            for i in 0..a.len() {
                assert_eq!(
                    Word::to_bits(got[i]),
                    want[i],
                    "{} on {:e}, {:e}",
                    op.name(),
                    a[i],
                    b[i]
                );
            }
        }
    }

    #[test]
    fn products_match_f64_references_and_do_not_depend_on_threads_or_views() {
        let mut rng = Pcg64::seed_from_u64(3);
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 2),
            (20, 784, 64),
            (64, 20, 100),
            (7, 300, 3),
        ] {
            let rand = |r: usize, c: usize, rng: &mut Pcg64| Mat {
                rows: r,
                cols: c,
                data: (0..r * c).map(|_| rng.gen_range(-1.0f32..1.0)).collect(),
            };
            let a = rand(m, k, &mut rng);
            let bt = rand(n, k, &mut rng);
            let b = bt.transpose();
            let one = Float { threads: 1 }
                .matmul(Format::F32(F32), Accumulate::Naive, a.view(), b.view())
                .unwrap();
            for threads in [2, 3] {
                let mut fl = Float { threads };
                let c = fl
                    .matmul(Format::F32(F32), Accumulate::Naive, a.view(), bt.t())
                    .unwrap();
                assert_eq!(c, one, "{m}x{k}x{n} on {threads} threads");
                let at = a.transpose();
                let c = fl
                    .matmul(Format::F32(F32), Accumulate::Naive, at.t(), b.view())
                    .unwrap();
                assert_eq!(c, one, "{m}x{k}x{n}, A transposed");
            }
            for i in 0..m {
                for j in 0..n {
                    let exact: f64 = (0..k).map(|l| a.at(i, l) as f64 * b.at(l, j) as f64).sum();
                    let bound: f64 = (0..k)
                        .map(|l| (a.at(i, l) as f64 * b.at(l, j) as f64).abs())
                        .sum::<f64>()
                        * k as f64
                        * f32::EPSILON as f64;
                    let got = one.at(i, j) as f64;
                    assert!(
                        (got - exact).abs() <= bound + 1e-30,
                        "{m}x{k}x{n} at {i},{j}"
                    );
                }
            }
        }
        let bad = Float::default().matmul(
            Format::F32(F32),
            Accumulate::Naive,
            Mat::filled(2, 3, 0f32).view(),
            Mat::filled(2, 3, 0f32).view(),
        );
        assert!(bad.unwrap_err().0.contains("inner dimensions differ"));
    }
}
