//! What the hardware offers the training driver, and its golden implementation.
//!
//! Training is written against [`Machine`]: matrix products (the systolic `array`: every
//! element accumulated k = 0..K−1 in order, in a chosen accumulation) and elementwise lane
//! operations (the `vector` unit: `lpgen_golden::AluOp` on words, and conversion between
//! formats of one family). The golden machine computes them with the golden library; the RTL
//! machine runs the same operations on the simulated RTL, so the two agree bit for bit.

use lpgen_golden::{alu, AluOp, Calc, Format, Lns, SumMode};

use crate::TrainError;

/// How a matrix product accumulates (the array's PE kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulate {
    /// s = s + a·b, each step rounded (`lns-plain`).
    Naive,
    /// Kahan-compensated (`lns-kahan`).
    Kahan,
    /// Exact, rounded once (`posit-quire`, `fix`).
    Exact,
}

impl Accumulate {
    fn mode(self) -> SumMode {
        match self {
            Accumulate::Naive => SumMode::Naive,
            Accumulate::Kahan => SumMode::Kahan,
            Accumulate::Exact => SumMode::Quire,
        }
    }
}

/// A row-major matrix of words of one format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mat {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<u64>,
}

impl Mat {
    pub fn filled(rows: usize, cols: usize, w: u64) -> Mat {
        Mat {
            rows,
            cols,
            data: vec![w; rows * cols],
        }
    }

    pub fn at(&self, r: usize, c: usize) -> u64 {
        self.data[r * self.cols + c]
    }

    pub fn transpose(&self) -> Mat {
        let mut data = Vec::with_capacity(self.data.len());
        for c in 0..self.cols {
            for r in 0..self.rows {
                data.push(self.at(r, c));
            }
        }
        Mat {
            rows: self.cols,
            cols: self.rows,
            data,
        }
    }

    pub fn row(&self, r: usize) -> &[u64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

/// The operations training needs from the hardware.
pub trait Machine {
    /// C = A·B in format `f` (A is m×k, B is k×n).
    fn matmul(&mut self, f: Format, acc: Accumulate, a: &Mat, b: &Mat) -> Result<Mat, TrainError>;
    /// y_i = op(a_i, b_i) in format `f` (one operand ops ignore `b`).
    fn lanes(&mut self, f: Format, op: AluOp, a: &[u64], b: &[u64])
        -> Result<Vec<u64>, TrainError>;
    /// Each word of `from` converted to `to` (same family).
    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError>;
    /// A name for reports.
    fn name(&self) -> String;
}

/// A boxed machine (for choosing one at run time).
impl<M: Machine + ?Sized> Machine for Box<M> {
    fn matmul(&mut self, f: Format, acc: Accumulate, a: &Mat, b: &Mat) -> Result<Mat, TrainError> {
        (**self).matmul(f, acc, a, b)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        (**self).lanes(f, op, a, b)
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        (**self).convert(from, to, a)
    }

    fn name(&self) -> String {
        (**self).name()
    }
}

/// The golden machine: the golden library, op for op. With `f32` it is plain float
/// training (libm's exp, f32 rounding everywhere).
#[derive(Default)]
pub struct Golden {
    /// The name reports give (`golden`, or `f32` for float training).
    pub label: String,
    /// LNS only: keep this many fraction bits after every operation, inside products and
    /// sums too (seed 000 §4.5 cleared the low bits after each operation).
    pub keep_bits: Option<u32>,
}

impl Golden {
    pub fn new(label: &str, keep_bits: Option<u32>) -> Golden {
        Golden {
            label: label.into(),
            keep_bits,
        }
    }

    /// Σ a_k·b_k with every operation's low bits cleared (naive or Kahan).
    fn dot_keep(l: &Lns, n: u32, kahan: bool, a: &[u64], b: &[u64]) -> u64 {
        let k = |v: u64| l.clear_low_bits(v, n);
        let (mut s, mut c) = (l.fmt.zero(), l.fmt.zero());
        for (&x, &y) in a.iter().zip(b) {
            let p = k(l.mul(x, y));
            if kahan {
                let tmp = k(l.add(c, p));
                let t = k(l.add(s, tmp));
                c = k(l.sub(tmp, k(l.sub(t, s))));
                s = t;
            } else {
                s = k(l.add(s, p));
            }
        }
        s
    }
}

impl Machine for Golden {
    fn matmul(&mut self, f: Format, acc: Accumulate, a: &Mat, b: &Mat) -> Result<Mat, TrainError> {
        assert_eq!(a.cols, b.rows, "matmul shapes");
        let c = f.calc();
        let bt = b.transpose();
        let keep = self.keep_bits;
        // Each element is one dot product in order; rows are independent, so they are shared
        // among the cores (the result does not depend on how).
        let one_row = |r: usize| -> Result<Vec<u64>, TrainError> {
            (0..b.cols)
                .map(|col| {
                    let (x, y) = (a.row(r), bt.row(col));
                    match (keep, &c) {
                        (Some(n), Calc::Lns(l)) => {
                            Ok(Golden::dot_keep(l, n, acc == Accumulate::Kahan, x, y))
                        }
                        _ => c
                            .dot(acc.mode(), x, y)
                            .map_err(|e| TrainError(e.to_string())),
                    }
                })
                .collect()
        };
        let threads = if a.rows * a.cols * b.cols < 1 << 16 {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        };
        let per = a.rows.div_ceil(threads);
        let parts: Vec<Result<Vec<u64>, TrainError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let one_row = &one_row;
                    s.spawn(move || {
                        let mut out = vec![];
                        for r in t * per..((t + 1) * per).min(a.rows) {
                            out.extend(one_row(r)?);
                        }
                        Ok(out)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("matmul worker"))
                .collect()
        });
        let mut data = Vec::with_capacity(a.rows * b.cols);
        for p in parts {
            data.extend(p?);
        }
        Ok(Mat {
            rows: a.rows,
            cols: b.cols,
            data,
        })
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
        Ok(a.iter()
            .zip(b.iter().chain(std::iter::repeat(&0)))
            .map(|(&x, &y)| {
                // The golden lane's result (`convert` goes through `Machine::convert`).
                let v = alu::result(&c, op.code(), x, y, false, || x);
                match keep {
                    Some((n, l)) => l.clear_low_bits(v, n),
                    None => v,
                }
            })
            .collect())
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        if from == to {
            return Ok(a.to_vec());
        }
        let (fc, tc) = (from.calc(), to.calc());
        Ok(a.iter().map(|&x| alu::convert(&fc, &tc, x)).collect())
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}

/// `--check`: every operation runs on `dut` and on `reference`; the first word that differs
/// stops the run with a report of the operation, the element, and both words.
pub struct Checked<A: Machine, B: Machine> {
    pub dut: A,
    pub reference: B,
    /// Operations compared so far.
    pub ops: u64,
}

impl<A: Machine, B: Machine> Checked<A, B> {
    fn compare(&mut self, what: String, got: &[u64], want: &[u64]) -> Result<(), TrainError> {
        self.ops += 1;
        if let Some(i) = (0..want.len()).find(|&i| got.get(i) != Some(&want[i])) {
            let g = got.get(i).copied().unwrap_or(0);
            return Err(TrainError(format!(
                "--check: operation {} ({what}) differs at element {i}: {} gives {g:#x}, {} gives {:#x} (first differing bit {})",
                self.ops,
                self.dut.name(),
                self.reference.name(),
                want[i],
                (g ^ want[i]).trailing_zeros()
            )));
        }
        Ok(())
    }
}

impl<A: Machine, B: Machine> Machine for Checked<A, B> {
    fn matmul(&mut self, f: Format, acc: Accumulate, a: &Mat, b: &Mat) -> Result<Mat, TrainError> {
        let got = self.dut.matmul(f, acc, a, b)?;
        let want = self.reference.matmul(f, acc, a, b)?;
        let what = format!(
            "matmul in {f}, {acc:?}, {}x{} by {}x{}, row-major",
            a.rows, a.cols, b.rows, b.cols
        );
        self.compare(what, &got.data, &want.data)?;
        Ok(got)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.lanes(f, op, a, b)?;
        let want = self.reference.lanes(f, op, a, b)?;
        self.compare(
            format!("{} on {} words of {f}", op.name(), a.len()),
            &got,
            &want,
        )?;
        Ok(got)
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.convert(from, to, a)?;
        let want = self.reference.convert(from, to, a)?;
        self.compare(format!("convert {from} to {to}"), &got, &want)?;
        Ok(got)
    }

    fn name(&self) -> String {
        format!("{}+check", self.dut.name())
    }
}
