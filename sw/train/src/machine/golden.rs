//! The golden machine: every [`Machine`] operation computed by the golden library, op for op,
//! each output element whole by one thread, so the results do not depend on the thread count.

use lpgen_golden::{alu, AluOp, BinOp, Calc, Format, Lns, SumMode};

use lpgen_golden::kernel::{self, Cut, Operand};

use super::{
    all_cores, check_shapes, fill_in_parallel, in_parallel, join_column_blocks, Accumulate,
    Machine, Mat, View,
};
use crate::rounding::Draws;
use crate::TrainError;

/// The golden machine: the golden library, op for op, on `threads` threads. With `f32` it is
/// float training through the golden f32 arithmetic (the bit-exact reference of the float
/// machine's lanes).
pub struct Golden {
    /// The name reports give (`golden`, or `f32` for float training).
    pub label: String,
    /// LNS only: keep this many fraction bits after every operation, inside products and
    /// sums too (seed 000 §4.5 cleared the low bits after each operation).
    pub keep_bits: Option<u32>,
    /// Threads for products and lane operations: each output element is computed whole by
    /// one thread, in order, so the results do not depend on the count.
    pub threads: usize,
}

impl Default for Golden {
    fn default() -> Golden {
        Golden::new("golden", None)
    }
}

/// Below this many multiply-adds (or lane operations) a job runs on one thread: starting
/// threads costs more than it saves.
const PARALLEL_FROM: usize = 1 << 11;

impl Golden {
    /// A golden machine on every core.
    pub fn new(label: &str, keep_bits: Option<u32>) -> Golden {
        Golden {
            label: label.into(),
            keep_bits,
            threads: all_cores(),
        }
    }

    /// The threads for a job of `work` operations.
    fn threads_for(&self, work: usize) -> usize {
        if work < PARALLEL_FROM {
            1
        } else {
            self.threads
        }
    }

    /// `--keep-bits`: C = A·B with every operation's low bits cleared (`Lns::dots_keeping`,
    /// on the lockstep lanes), blocks of rows on the machine's threads.
    fn keep_bits_product(
        &self,
        l: &Lns,
        bits: u32,
        acc: Accumulate,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        let (a_rows, b_cols) = (a.row_major(), b.columns());
        let (m, n, k) = (a.rows(), b.cols(), a.cols());
        let kahan = acc == Accumulate::Kahan;
        let cols: Vec<&[u64]> = (0..n).map(|j| b_cols.row(j)).collect();
        let t = self.threads_for(m * n * k);
        let parts = t.min(m).max(1);
        let blocks = in_parallel(t, parts, |p| {
            let rows: Vec<&[u64]> = (p * m / parts..(p + 1) * m / parts)
                .map(|i| a_rows.row(i))
                .collect();
            l.dots_keeping(bits, kahan, &rows, &cols)
        });
        Ok(Mat {
            rows: m,
            cols: n,
            data: blocks.concat(),
        })
    }
}

impl Machine for Golden {
    type Word = u64;

    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        check_shapes(a, b)?;
        let c = f.calc();
        let (m, n, k) = (a.rows(), b.cols(), a.cols());
        if let (Some(bits), Calc::Lns(l)) = (self.keep_bits, &c) {
            return self.keep_bits_product(l, bits, acc, a, b);
        }
        // The golden kernels: each element equal to `Calc::dot` of its row and column.
        let (a, b) = (operand(a), operand(b));
        let t = self.threads_for(m * n * k);
        let cut = kernel::cut(&c, acc.mode(), m, n, t);
        let parts = t.min(if cut == Cut::Rows { m } else { n }).max(1);
        let blocks = in_parallel(t, parts, |p| {
            let block = |len: usize| (p * len / parts, (p + 1) * len / parts);
            if cut == Cut::Rows {
                let (r0, r1) = block(m);
                kernel::matmul(&c, acc.mode(), a.rows_range(r0, r1), b)
            } else {
                let (c0, c1) = block(n);
                kernel::matmul(&c, acc.mode(), a, b.cols_range(c0, c1))
            }
        });
        let blocks = blocks
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TrainError(e.to_string()))?;
        let data = if blocks.len() == 1 {
            blocks.into_iter().next().unwrap_or_default()
        } else if cut == Cut::Rows {
            blocks.concat()
        } else {
            join_column_blocks(m, &blocks)
        };
        Ok(Mat {
            rows: m,
            cols: n,
            data,
        })
    }

    /// Mode quire of a family with an exact kernel: the exact sum read out once (with
    /// `keep_bits`, LNS products are the family's own, not taken here).
    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[u64]) -> bool {
        self.keep_bits.is_none()
            && acc.mode() == SumMode::Quire
            && kernel::sums_exactly(&f.calc(), words)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        let c = f.calc();
        let keep = match (self.keep_bits, &c) {
            (Some(n), Calc::Lns(l)) => Some((n, l)),
            _ => None,
        };
        if keep.is_none() && b.len() == a.len() {
            // Whole blocks through the golden library's lane kernels.
            let mut out = vec![0u64; a.len()];
            fill_in_parallel(self.threads_for(a.len()), &mut out, |start, block| {
                let span = start..start + block.len();
                kernel::lane_op(&c, op, &a[span.clone()], &b[span], block);
            });
            return Ok(out);
        }
        let lane = |i: usize| {
            let (x, y) = (a[i], b.get(i).copied().unwrap_or(0));
            // The golden lane's result (`convert` goes through `Machine::convert`).
            let v = alu::result(&c, op.code(), x, y, false, || x);
            match keep {
                Some((n, l)) => l.clear_low_bits(v, n),
                None => v,
            }
        };
        Ok(self.map_lanes(a.len(), lane))
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        if from == to {
            return Ok(a.to_vec());
        }
        let conversion = alu::Conversion::tabled(&from.calc(), &to.calc());
        Ok(self.map_lanes(a.len(), |i| conversion.word(a[i])))
    }

    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, u64>,
        b: View<'_, u64>,
        draws: &Draws,
    ) -> Result<Mat, TrainError> {
        check_shapes(a, b)?;
        let (m, n, k) = (a.rows(), b.cols(), a.cols());
        draws.check(m * n)?;
        let c = f.calc();
        let (a_rows, b_cols) = (a.row_major(), b.columns());
        let mut data = vec![0u64; m * n];
        let blocks = fill_in_parallel(self.threads_for(m * n * k), &mut data, |start, block| {
            for (i, out) in (start..).zip(block.iter_mut()) {
                let (x, y) = (a_rows.row(i / n), b_cols.row(i % n));
                *out = c
                    .dot_exact_with(x, y, &mut draws.rounder(i))
                    .map_err(|e| TrainError(e.0))?;
            }
            Ok::<(), TrainError>(())
        });
        blocks.into_iter().collect::<Result<(), TrainError>>()?;
        Ok(Mat {
            rows: m,
            cols: n,
            data,
        })
    }

    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
        draws: &Draws,
    ) -> Result<Vec<u64>, TrainError> {
        draws.check(a.len())?;
        let op = match op {
            AluOp::Add => BinOp::Add,
            AluOp::Sub => BinOp::Sub,
            AluOp::Mul => BinOp::Mul,
            AluOp::Div => BinOp::Div,
            other => {
                return Err(TrainError(format!(
                    "lane {other:?} does not round (a trainer bug: only add, sub, mul and div take draws)"
                )))
            }
        };
        let c = f.calc();
        c.check_rounding(draws.rounding)
            .map_err(|e| TrainError(e.0))?;
        let lane = |i: usize| {
            let (x, y) = (a[i], b.get(i).copied().unwrap_or(0));
            c.binop_with(op, x, y, &mut draws.rounder(i))
                .expect("the rounding was checked")
        };
        Ok(self.map_lanes(a.len(), lane))
    }

    fn mx_matmul(
        &mut self,
        mx: lpgen_golden::mx::MxFormat,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat<u64>, TrainError> {
        crate::machine::mx_product(mx, a, b, self.threads)
    }

    fn name(&self) -> String {
        self.label.clone()
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn fork(&self) -> Option<Box<dyn Machine<Word = u64>>> {
        Some(Box::new(Golden {
            label: self.label.clone(),
            keep_bits: self.keep_bits,
            threads: 1,
        }))
    }

    fn cut(&self, f: Format, acc: Accumulate, m: usize, n: usize, parts: usize) -> Cut {
        match (self.keep_bits, f.calc()) {
            // `keep_bits_product` cuts its rows.
            (Some(_), Calc::Lns(_)) => Cut::Rows,
            (_, c) => kernel::cut(&c, acc.mode(), m, n, parts),
        }
    }
}

/// A product operand as the golden kernels take it (a transpose is read in place).
pub(crate) fn operand<'a>(v: View<'a, u64>) -> Operand<'a> {
    let m = Operand::row_major(&v.mat.data, v.mat.rows, v.mat.cols);
    if v.transposed {
        m.t()
    } else {
        m
    }
}

/// One draw per result.
impl Golden {
    /// `lane(i)` for i in 0..n, shared among the threads in contiguous blocks.
    fn map_lanes(&self, n: usize, lane: impl Fn(usize) -> u64 + Sync) -> Vec<u64> {
        let mut out = vec![0u64; n];
        fill_in_parallel(self.threads_for(n), &mut out, |start, block| {
            for (i, w) in (start..).zip(block.iter_mut()) {
                *w = lane(i);
            }
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Products and lanes big enough to be split among threads give the same words on 1, 2
    /// and 3 threads (each output element is computed whole, in order, by one thread).
    #[test]
    fn golden_results_do_not_depend_on_threads() {
        let (m, k, n) = (24, 300, 40);
        assert!(m * k * n >= 4 * PARALLEL_FROM && m * n * 20 >= PARALLEL_FROM);
        for (f, acc) in [
            ("lns:5:6", Accumulate::Kahan),
            ("posit:8:2", Accumulate::Exact),
            ("posit:16:1", Accumulate::Naive),
            ("fix:7:8", Accumulate::Exact),
        ] {
            let f: Format = f.parse().unwrap();
            let c = f.calc();
            let word = |i: usize| c.from_f64(((i * 7919 % 1000) as f64 - 500.0) / 300.0);
            let a = Mat {
                rows: m,
                cols: k,
                data: (0..m * k).map(word).collect(),
            };
            let b = Mat {
                rows: n,
                cols: k,
                data: (0..n * k).map(|i| word(i + 17)).collect(),
            };
            let lanes_a: Vec<u64> = (0..m * n * 20).map(word).collect();
            let lanes_b: Vec<u64> = (0..m * n * 20).map(|i| word(i + 3)).collect();
            let run = |threads: usize| {
                let mut g = Golden {
                    threads,
                    ..Golden::default()
                };
                let c = g.matmul(f, acc, a.view(), b.t()).unwrap();
                let l = g.lanes(f, AluOp::Mul, &lanes_a, &lanes_b).unwrap();
                (c, l)
            };
            let one = run(1);
            assert_eq!(run(2), one, "{f}");
            assert_eq!(run(3), one, "{f}");
        }
    }

    /// A pairwise product on the golden machine, against the rule written here from the
    /// definition: each product rounded, the first ⌊n/2⌋ terms summed, then the rest, and the
    /// two halves added (lns:5:6 adds round, so the order shows).
    #[test]
    fn pairwise_products_sum_halves_recursively() {
        let f: Format = "lns:5:6".parse().unwrap();
        let c = f.calc();
        // 64 and then small terms: added one by one each is lost in 64's rounding (lns:5:6
        // steps by 2^(1/64) there, about 0.7); pairwise they are summed among themselves first.
        let k = 13;
        let x: Vec<u64> = (0..k).map(|i| c.from_f64(1.0 + (i % 2) as f64)).collect();
        let y: Vec<u64> = (0..k)
            .map(|i| c.from_f64(if i == 0 { 64.0 } else { 0.15 }))
            .collect();
        fn halves(c: &Calc, t: &[u64]) -> u64 {
            match t.len() {
                0 => c.zero(),
                1 => t[0],
                n => c.add(halves(c, &t[..n / 2]), halves(c, &t[n / 2..])),
            }
        }
        let products: Vec<u64> = x.iter().zip(&y).map(|(&p, &q)| c.mul(p, q)).collect();
        let want = halves(&c, &products);
        let naive = products.iter().fold(c.zero(), |s, &p| c.add(s, p));
        assert_ne!(want, naive, "the data must tell the orders apart");
        let a = Mat {
            rows: 1,
            cols: k,
            data: x,
        };
        let b = Mat {
            rows: k,
            cols: 1,
            data: y,
        };
        let got = Golden::default()
            .matmul(f, Accumulate::Pairwise, a.view(), b.view())
            .unwrap();
        assert_eq!(got.data, vec![want]);
    }

    /// `--rounding stochastic:R`: element i of a lane operation or a product is rounded with
    /// the stream's i-th position, the same as the golden operations would round with one
    /// rounder drawing element after element (the golden model's stream, one draw each).
    #[test]
    fn rounded_lanes_and_products_take_the_stream_element_by_element() {
        use crate::rounding::Stream;
        use lpgen_golden::{Rounder, Rounding};
        for f in ["bf16", "fix:3:4"] {
            let f: Format = f.parse().unwrap();
            let c = f.calc();
            let r = Rounding::Stochastic(6);
            let word = |i: usize| c.from_f64(((i * 7919 % 1000) as f64 - 500.0) / 300.0);
            let (a, b): (Vec<u64>, Vec<u64>) = (0..3000).map(|i| (word(i), word(i + 5))).unzip();
            let mut g = Golden::default();
            let mut stream = Stream::new(r, 4);
            let got = g
                .lanes_rounded(f, AluOp::Mul, &a, &b, &stream.take(a.len()))
                .unwrap();
            let mut seq = Rounder::new(r, 4);
            let want: Vec<u64> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| c.binop_with(BinOp::Mul, x, y, &mut seq).unwrap())
                .collect();
            assert_eq!(got, want, "{f} lanes");
            assert_ne!(
                got,
                g.lanes(f, AluOp::Mul, &a, &b).unwrap(),
                "{f}: nothing moved"
            );
            // A 30x50 by 50x40 product goes on from where the lanes left the stream.
            let am = Mat {
                rows: 30,
                cols: 50,
                data: a[..1500].to_vec(),
            };
            let bm = Mat {
                rows: 40,
                cols: 50,
                data: b[..2000].to_vec(),
            };
            let p = g
                .matmul_rounded(f, am.view(), bm.t(), &stream.take(30 * 40))
                .unwrap();
            for i in 0..30 * 40 {
                let want = c
                    .dot_exact_with(am.row(i / 40), bm.row(i % 40), &mut seq)
                    .unwrap();
                assert_eq!(p.data[i], want, "{f} product element {i}");
            }
        }
    }
}
