//! What the hardware offers the training driver, and the three machines that offer it.
//!
//! Training is written against [`Machine`]: matrix products (the systolic `array`: every
//! element accumulated k = 0..K−1 in order, in a chosen accumulation) and elementwise lane
//! operations (the `vector` unit: `lpgen_golden::AluOp` on words, and conversion between
//! formats of one family). The golden machine ([`golden`]) computes them with the golden
//! library; the RTL machine ([`rtl`]) runs the same operations on the simulated RTL, so the
//! two agree bit for bit; the float machine ([`f32`](mod@f32)) trains in native IEEE binary32.

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::kernel::Cut;
use lpgen_golden::mx::MxFormat;
use lpgen_golden::onebit::{Quantized, Quantizer};
use lpgen_golden::q8::Q8Type;
use lpgen_golden::{AluOp, Format, SumMode};

use crate::compress::through_codec;
use crate::rounding::Draws;
use crate::TrainError;

mod checked;
pub mod f32;
pub mod golden;
pub mod mx;
mod pool;
#[cfg(feature = "rtl")]
pub mod rtl;
mod shared;
pub use checked::Checked;
pub use golden::Golden;
pub use mx::{mx_product, mx_vectors};
pub use pool::{fill_in_parallel, in_parallel};
pub use shared::Shared;

/// How a matrix product accumulates (the array's PE kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulate {
    /// s = s + a·b, each step rounded (`lns-plain`).
    Naive,
    /// Kahan-compensated (`lns-kahan`).
    Kahan,
    /// Exact, rounded once (`posit-quire`, `fix`).
    Exact,
    /// Pairwise: each product rounded, the halves of the terms summed recursively (the
    /// golden `sum::pairwise_sum`: the first ⌊n/2⌋ terms, then the rest); no array PE.
    Pairwise,
    /// A GPU matrix unit's fused dot-product-add (`fdpa:PRESET[:promoteN]`, float formats,
    /// issue 49): its binary32 (binary16) result rounded into the product's format; no array
    /// PE yet.
    Fdpa(Fdpa),
}

impl Accumulate {
    /// The golden library's sum mode of this accumulation.
    pub fn mode(self) -> SumMode {
        match self {
            Accumulate::Naive => SumMode::Naive,
            Accumulate::Kahan => SumMode::Kahan,
            Accumulate::Exact => SumMode::Quire,
            Accumulate::Pairwise => SumMode::Pairwise,
            Accumulate::Fdpa(m) => SumMode::Fdpa(m),
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
pub trait Machine: Send {
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
    /// Whether `matmul(f, acc, …)` makes each element the exact sum of its products, rounded
    /// once, for operands where no word of `words` is special (NaN, NaR, ∞). Products known
    /// to be zero may then be left out of a sum without changing a bit (a convolution's
    /// padding, `layers.rs`). No, unless a machine says so.
    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[Self::Word]) -> bool {
        let _ = (f, acc, words);
        false
    }
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
    /// `--format mx:ELEM[:bK]` (issue 33): C = A·B of f32 words, every row of A and column of
    /// B quantized in MX blocks along the reduction dimension, the blocks' exact dot products
    /// added in f32 ([`mx_product`]). Machines without an MX product refuse.
    fn mx_matmul(
        &mut self,
        mx: MxFormat,
        a: View<'_, Self::Word>,
        b: View<'_, Self::Word>,
    ) -> Result<Mat<Self::Word>, TrainError> {
        let _ = (a, b);
        Err(TrainError(format!(
            "the {} machine has no MX product for {mx}",
            self.name()
        )))
    }
    /// `--rounding stochastic:R`: C = A·B in format `f`, each element accumulated exactly and
    /// read out once, rounded with its own draw (`draws`, row-major). Machines without
    /// stochastic rounding refuse.
    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, Self::Word>,
        b: View<'_, Self::Word>,
        draws: &Draws,
    ) -> Result<Mat<Self::Word>, TrainError> {
        let _ = (f, a, b, draws);
        Err(no_stochastic(&self.name()))
    }
    /// `--rounding stochastic:R`: y_i = op(a_i, b_i) in format `f` (add, sub, mul, div),
    /// rounded with draw i (an exact result, such as fix's sums, ignores it).
    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[Self::Word],
        b: &[Self::Word],
        draws: &Draws,
    ) -> Result<Vec<Self::Word>, TrainError> {
        let _ = (f, op, a, b, draws);
        Err(no_stochastic(&self.name()))
    }
    /// A name for reports.
    fn name(&self) -> String;
    /// The threads the host's own work around this machine's operations may take (im2col,
    /// copies: work whose result no split changes). One, unless a machine says more.
    fn threads(&self) -> usize {
        1
    }
    /// A machine of the same kind and settings on one thread, independent of this one: what
    /// a training step's share of samples runs on (`net_shares`). `None` (the default) where
    /// the machine is one device or holds state of its own (the rtl simulation, the checked
    /// pair, a machine shared by workers): then the step runs whole on this one.
    fn fork(&self) -> Option<Box<dyn Machine<Word = Self::Word>>> {
        None
    }
    /// Where `matmul(f, acc, …)` of an m×n result is best cut into `parts` parts of whole
    /// rows or whole columns, to be computed apart (every cut gives the same words): the
    /// longer side, unless a machine knows its kernels better.
    fn cut(&self, f: Format, acc: Accumulate, m: usize, n: usize, parts: usize) -> Cut {
        let _ = (f, acc, parts);
        Cut::longer(m, n)
    }
}

/// The refusal of a machine without stochastic rounding.
fn no_stochastic(machine: &str) -> TrainError {
    TrainError(format!(
        "--rounding stochastic runs on --backend golden; the {machine} machine rounds to nearest"
    ))
}

/// A dynamic fixed-point product: the words at the output scale, and how many read-outs
/// saturated at that scale and would have at its half (golden `ReadOut`).
#[derive(Clone, Debug, PartialEq)]
pub struct DfixProduct {
    pub c: Mat<u64>,
    pub overflows: u64,
    pub overflows_at_half: u64,
}

/// The golden dynamic fixed-point product: every element a `DfixFormat::dot`, all of them
/// from `DfixFormat::dots` (one f64 GEMM where that is exact).
pub fn dfix_product(
    f: DfixFormat,
    (a, ea): (&Mat<u64>, i32),
    (b, eb): (&Mat<u64>, i32),
    e: i32,
) -> DfixProduct {
    let outs = f.dots((&a.data, ea), (&b.data, eb), (a.rows, a.cols, b.cols), e);
    DfixProduct {
        c: Mat {
            rows: a.rows,
            cols: b.cols,
            data: outs.iter().map(|r| r.word).collect(),
        },
        overflows: outs.iter().filter(|r| r.overflow).count() as u64,
        overflows_at_half: outs.iter().filter(|r| r.overflow_at_half).count() as u64,
    }
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

    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[M::Word]) -> bool {
        (**self).sums_exactly(f, acc, words)
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

    fn mx_matmul(
        &mut self,
        mx: MxFormat,
        a: View<'_, M::Word>,
        b: View<'_, M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        (**self).mx_matmul(mx, a, b)
    }

    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, M::Word>,
        b: View<'_, M::Word>,
        draws: &Draws,
    ) -> Result<Mat<M::Word>, TrainError> {
        (**self).matmul_rounded(f, a, b, draws)
    }

    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[M::Word],
        b: &[M::Word],
        draws: &Draws,
    ) -> Result<Vec<M::Word>, TrainError> {
        (**self).lanes_rounded(f, op, a, b, draws)
    }

    fn name(&self) -> String {
        (**self).name()
    }

    fn threads(&self) -> usize {
        (**self).threads()
    }

    fn fork(&self) -> Option<Box<dyn Machine<Word = M::Word>>> {
        (**self).fork()
    }

    fn cut(&self, f: Format, acc: Accumulate, m: usize, n: usize, parts: usize) -> Cut {
        (**self).cut(f, acc, m, n, parts)
    }
}

/// The m rows of a product computed in blocks of whole columns (`blocks`, each row-major,
/// left to right): row i is each block's row i in turn.
pub fn join_column_blocks<T: Copy>(m: usize, blocks: &[Vec<T>]) -> Vec<T> {
    let widths: Vec<usize> = blocks.iter().map(|b| b.len() / m.max(1)).collect();
    let mut rows = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
    for i in 0..m {
        for (b, &w) in blocks.iter().zip(&widths) {
            rows.extend_from_slice(&b[i * w..(i + 1) * w]);
        }
    }
    rows
}

/// The number of threads to use when none is given: every core.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
