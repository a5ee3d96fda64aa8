//! One machine used by two threads in turn: overlapped double buffering (`trainer/overlap.rs`)
//! computes a half-minibatch on the worker's thread while the previous half's exchange runs on
//! a communication thread, and both may need the worker's one machine (the exchange for the
//! 1-bit quantization and AdaGrad's normalization). Each operation takes the machine's lock
//! for its duration, so operations never interleave inside the machine and each gives what it
//! gives alone; the exchange's transport and host work run while the other thread holds it.

use std::sync::{Mutex, MutexGuard, PoisonError};

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::onebit::Quantized;
use lpgen_golden::q8::Q8Type;
use lpgen_golden::{AluOp, Format, SumMode};

use super::{Accumulate, DfixProduct, Machine, Mat, View};
use crate::rounding::Draws;
use crate::TrainError;

/// A handle on a machine behind a lock; make one per thread from the same lock.
pub struct Shared<'s, 'm, M: Machine>(pub &'s Mutex<&'m mut M>);

impl<'m, M: Machine> Shared<'_, 'm, M> {
    /// The machine, for one operation (a poisoned lock means the other thread panicked, which
    /// its join reports; the machine itself is left as the operation left it).
    fn m(&self) -> MutexGuard<'_, &'m mut M> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<M: Machine> Machine for Shared<'_, '_, M> {
    type Word = M::Word;

    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, M::Word>,
        b: View<'_, M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        self.m().matmul(f, acc, a, b)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[M::Word],
        b: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        self.m().lanes(f, op, a, b)
    }

    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[M::Word]) -> bool {
        self.m().sums_exactly(f, acc, words)
    }

    fn convert(
        &mut self,
        from: Format,
        to: Format,
        a: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        self.m().convert(from, to, a)
    }

    fn quantize_1bit(
        &mut self,
        f: Format,
        mode: SumMode,
        g: &[u64],
        shape: (usize, usize),
        residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        self.m().quantize_1bit(f, mode, g, shape, residual)
    }

    fn through_q8(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[M::Word],
        unit: f64,
    ) -> Result<Vec<M::Word>, TrainError> {
        self.m().through_q8(codec, f, words, unit)
    }

    fn dfix_matmul(
        &mut self,
        f: DfixFormat,
        a: (&Mat<u64>, i32),
        b: (&Mat<u64>, i32),
        e: i32,
    ) -> Result<DfixProduct, TrainError> {
        self.m().dfix_matmul(f, a, b, e)
    }

    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, M::Word>,
        b: View<'_, M::Word>,
        draws: &Draws,
    ) -> Result<Mat<M::Word>, TrainError> {
        self.m().matmul_rounded(f, a, b, draws)
    }

    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[M::Word],
        b: &[M::Word],
        draws: &Draws,
    ) -> Result<Vec<M::Word>, TrainError> {
        self.m().lanes_rounded(f, op, a, b, draws)
    }

    fn name(&self) -> String {
        self.m().name()
    }

    fn threads(&self) -> usize {
        self.m().threads()
    }
}
