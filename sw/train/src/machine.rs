//! What the hardware offers the training driver, and its golden implementation.
//!
//! Training is written against [`Machine`]: matrix products (the systolic `array`: every
//! element accumulated k = 0..K−1 in order, in a chosen accumulation) and elementwise lane
//! operations (the `vector` unit: `lpgen_golden::AluOp` on words, and conversion between
//! formats of one family). The golden machine computes them with the golden library; the RTL
//! machine runs the same operations on the simulated RTL, so the two agree bit for bit.

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::onebit::{Quantized, Quantizer};
use lpgen_golden::q8::Q8Type;
use lpgen_golden::{alu, AluOp, Calc, Format, Lns, SumMode};

use crate::compress::through_codec;
use crate::TrainError;

mod checked;
mod pool;
pub use checked::Checked;
pub use pool::{fill_in_parallel, in_parallel};

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
    /// The golden library's sum mode of this accumulation.
    pub fn mode(self) -> SumMode {
        match self {
            Accumulate::Naive => SumMode::Naive,
            Accumulate::Kahan => SumMode::Kahan,
            Accumulate::Exact => SumMode::Quire,
        }
    }
}

/// A word as a machine holds it. The golden and RTL machines hold every format's bit pattern
/// in a `u64`; the float machine holds `f32` itself, so that its matrix products and lane
/// loops run on native floats. Both convert to and from the format's bit pattern (for f32,
/// the IEEE bits), which is what checkpoints store.
pub trait Word: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;

    /// The word of format `f` nearest to the real `x` (a constant chosen by the host).
    fn constant(f: Format, x: f64) -> Self {
        Self::from_bits(f.calc().from_f64(x))
    }

    /// The real value of this word of format `f` (host-side reporting and scaling).
    fn value(self, f: Format) -> f64 {
        f.calc().to_f64(self.to_bits())
    }
}

impl Word for u64 {
    fn to_bits(self) -> u64 {
        self
    }
    fn from_bits(bits: u64) -> u64 {
        bits
    }
}

impl Word for f32 {
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
    fn constant(_: Format, x: f64) -> f32 {
        x as f32
    }
    fn value(self, _: Format) -> f64 {
        self as f64
    }
}

/// A row-major matrix of words of one format.
#[derive(Clone, Debug, PartialEq)]
pub struct Mat<W = u64> {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<W>,
}

impl<W: Word> Mat<W> {
    pub fn filled(rows: usize, cols: usize, w: W) -> Mat<W> {
        Mat {
            rows,
            cols,
            data: vec![w; rows * cols],
        }
    }

    pub fn at(&self, r: usize, c: usize) -> W {
        self.data[r * self.cols + c]
    }

    pub fn transpose(&self) -> Mat<W> {
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

    pub fn row(&self, r: usize) -> &[W] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// This matrix as a product operand.
    pub fn view(&self) -> View<'_, W> {
        View {
            mat: self,
            transposed: false,
        }
    }

    /// Its transpose as a product operand (nothing is copied).
    pub fn t(&self) -> View<'_, W> {
        View {
            mat: self,
            transposed: true,
        }
    }
}

/// An operand of a matrix product: a matrix, or its transpose read in place.
#[derive(Clone, Copy, Debug)]
pub struct View<'a, W = u64> {
    pub mat: &'a Mat<W>,
    pub transposed: bool,
}

impl<W: Word> View<'_, W> {
    pub fn rows(&self) -> usize {
        if self.transposed {
            self.mat.cols
        } else {
            self.mat.rows
        }
    }

    pub fn cols(&self) -> usize {
        if self.transposed {
            self.mat.rows
        } else {
            self.mat.cols
        }
    }

    pub fn at(&self, r: usize, c: usize) -> W {
        if self.transposed {
            self.mat.at(c, r)
        } else {
            self.mat.at(r, c)
        }
    }

    /// The operand as a row-major matrix (a copy).
    pub fn to_mat(&self) -> Mat<W> {
        if self.transposed {
            self.mat.transpose()
        } else {
            self.mat.clone()
        }
    }

    /// The operand as a row-major matrix, borrowed unless the view is a transpose.
    pub fn row_major(&self) -> std::borrow::Cow<'_, Mat<W>> {
        if self.transposed {
            std::borrow::Cow::Owned(self.mat.transpose())
        } else {
            std::borrow::Cow::Borrowed(self.mat)
        }
    }

    /// The transposed operand as a row-major matrix: row j holds column j (a copy, unless
    /// the view is already a transpose, whose matrix is that).
    pub fn columns(&self) -> std::borrow::Cow<'_, Mat<W>> {
        if self.transposed {
            std::borrow::Cow::Borrowed(self.mat)
        } else {
            std::borrow::Cow::Owned(self.mat.transpose())
        }
    }
}

/// Checks that `a` (m×k) and `b` (k×n) can be multiplied.
pub fn check_shapes<W: Word>(a: View<'_, W>, b: View<'_, W>) -> Result<(), TrainError> {
    if a.cols() != b.rows() {
        return Err(TrainError(format!(
            "matmul of {}x{} by {}x{}: inner dimensions differ (a trainer bug)",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        )));
    }
    Ok(())
}

/// The operations training needs from the hardware.
pub trait Machine {
    /// How this machine holds a word.
    type Word: Word;
    /// C = A·B in format `f` (A is m×k, B is k×n).
    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, Self::Word>,
        b: View<'_, Self::Word>,
    ) -> Result<Mat<Self::Word>, TrainError>;
    /// y_i = op(a_i, b_i) in format `f` (one operand ops ignore `b`).
    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[Self::Word],
        b: &[Self::Word],
    ) -> Result<Vec<Self::Word>, TrainError>;
    /// Each word of `from` converted to `to` (same family).
    fn convert(
        &mut self,
        from: Format,
        to: Format,
        a: &[Self::Word],
    ) -> Result<Vec<Self::Word>, TrainError>;
    /// Seed 001's 1-bit quantization of every column of the row-major rows × cols matrix `g`
    /// of words of `f` (`lpgen_golden::onebit`), summing each side in `mode`; with
    /// `residual` (same shape) the error feedback, updated in place. The golden quantizer,
    /// unless a machine has hardware for it.
    fn quantize_1bit(
        &mut self,
        f: Format,
        mode: SumMode,
        g: &[u64],
        (rows, cols): (usize, usize),
        residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        let q = Quantizer::new(f, mode).map_err(|e| TrainError(e.to_string()))?;
        Ok(q.matrix(g, rows, cols, residual))
    }
    /// Seed 003's 8-bit codec: every word of `words` (one tensor, of format `f`) encoded with
    /// `codec` and decoded back, gradients summed over `unit` samples (1 for activations).
    /// The golden rule ([`through_codec`]), unless a machine has hardware for it.
    fn through_q8(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[Self::Word],
        unit: f64,
    ) -> Result<Vec<Self::Word>, TrainError> {
        through_codec(codec, f, words, unit)
    }
    /// Seed 002's dynamic fixed-point product (`--dfix-products exact`): C = A·B of `dfix:W`
    /// words, A at scale `ea` and B at `eb`, each dot product accumulated exactly (k = 0..K−1)
    /// and read out once into scale `e`, with the read-outs' overflow counts at e and e − 1.
    /// The golden rule ([`dfix_product`]), unless a machine has hardware for it.
    fn dfix_matmul(
        &mut self,
        f: DfixFormat,
        (a, ea): (&Mat<u64>, i32),
        (b, eb): (&Mat<u64>, i32),
        e: i32,
    ) -> Result<DfixProduct, TrainError> {
        check_shapes(a.view(), b.view())?;
        Ok(dfix_product(f, (a, ea), (b, eb), e))
    }
    /// A name for reports.
    fn name(&self) -> String;
}

/// A dynamic fixed-point product: the words at the output scale, and how many read-outs
/// saturated at that scale and would have at its half (golden `ReadOut`).
#[derive(Clone, Debug, PartialEq)]
pub struct DfixProduct {
    pub c: Mat<u64>,
    pub overflows: u64,
    pub overflows_at_half: u64,
}

/// The golden dynamic fixed-point product: every element one `DfixFormat::dot`.
pub fn dfix_product(
    f: DfixFormat,
    (a, ea): (&Mat<u64>, i32),
    (b, eb): (&Mat<u64>, i32),
    e: i32,
) -> DfixProduct {
    let bt = b.transpose();
    let mut p = DfixProduct {
        c: Mat::filled(a.rows, b.cols, 0),
        overflows: 0,
        overflows_at_half: 0,
    };
    for i in 0..a.rows {
        for j in 0..b.cols {
            let r = f.dot(a.row(i), ea, bt.row(j), eb, e);
            p.c.data[i * b.cols + j] = r.word;
            p.overflows += r.overflow as u64;
            p.overflows_at_half += r.overflow_at_half as u64;
        }
    }
    p
}

/// A boxed machine (for choosing one at run time).
impl<M: Machine + ?Sized> Machine for Box<M> {
    type Word = M::Word;

    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, M::Word>,
        b: View<'_, M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        (**self).matmul(f, acc, a, b)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[M::Word],
        b: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        (**self).lanes(f, op, a, b)
    }

    fn convert(
        &mut self,
        from: Format,
        to: Format,
        a: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        (**self).convert(from, to, a)
    }

    fn quantize_1bit(
        &mut self,
        f: Format,
        mode: SumMode,
        g: &[u64],
        shape: (usize, usize),
        residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        (**self).quantize_1bit(f, mode, g, shape, residual)
    }

    fn through_q8(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[M::Word],
        unit: f64,
    ) -> Result<Vec<M::Word>, TrainError> {
        (**self).through_q8(codec, f, words, unit)
    }

    fn dfix_matmul(
        &mut self,
        f: DfixFormat,
        a: (&Mat<u64>, i32),
        b: (&Mat<u64>, i32),
        e: i32,
    ) -> Result<DfixProduct, TrainError> {
        (**self).dfix_matmul(f, a, b, e)
    }

    fn name(&self) -> String {
        (**self).name()
    }
}

/// The number of threads to use when none is given: every core.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

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
        let a_rows = a.row_major();
        let b_cols = b.columns();
        let (m, n, k) = (a.rows(), b.cols(), a.cols());
        let keep = self.keep_bits;
        // Each element is one dot product, k = 0..K−1 in order, computed by one thread.
        let element = |i: usize| -> Result<u64, TrainError> {
            let (x, y) = (a_rows.row(i / n), b_cols.row(i % n));
            match (keep, &c) {
                (Some(bits), Calc::Lns(l)) => {
                    Ok(Golden::dot_keep(l, bits, acc == Accumulate::Kahan, x, y))
                }
                _ => c
                    .dot(acc.mode(), x, y)
                    .map_err(|e| TrainError(e.to_string())),
            }
        };
        let mut data = vec![0u64; m * n];
        let blocks = fill_in_parallel(self.threads_for(m * n * k), &mut data, |start, block| {
            for (i, out) in (start..).zip(block.iter_mut()) {
                *out = element(i)?;
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
        let (fc, tc) = (from.calc(), to.calc());
        Ok(self.map_lanes(a.len(), |i| alu::convert(&fc, &tc, a[i])))
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}

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
}
