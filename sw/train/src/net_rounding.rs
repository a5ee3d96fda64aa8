//! Where `--rounding stochastic:R` rounds (docs/train.md "Stochastic rounding"): the
//! operations whose results a training step stores, each tensor taking the next positions of
//! the run's stream (`rounding.rs`). Without a stream, and in test passes, they are the
//! machine's own (nearest) operations. With seed 002's storage the arithmetic is f32's, to
//! nearest: the stream rounds the stored values (`net_storage.rs`), not these results.

use lpgen_golden::kernel::Cut;
use lpgen_golden::{AluOp, Format};

use crate::machine::{Accumulate, Machine, Mat, View};
use crate::net::Net;
use crate::rounding::Stream;
use crate::TrainError;

impl<M: Machine> Net<'_, M> {
    /// The stream that rounds the format's operations: the run's, unless storage rounds the
    /// stored values instead (its arithmetic is f32's).
    pub(crate) fn arithmetic_stream(&mut self) -> Option<&mut Stream> {
        match self.storage {
            Some(_) => None,
            None => self.stream.as_deref_mut(),
        }
    }

    /// y = op(a, b) stored (`training`): with a stream, each of add, sub, mul and div rounded
    /// with the next a.len() positions; other operations do not round.
    pub(crate) fn lanes_stored(
        &mut self,
        f: Format,
        op: AluOp,
        (a, b): (&[M::Word], &[M::Word]),
        training: bool,
    ) -> Result<Vec<M::Word>, TrainError> {
        let rounds = matches!(op, AluOp::Add | AluOp::Sub | AluOp::Mul | AluOp::Div);
        match self.arithmetic_stream() {
            Some(s) if training && rounds => {
                let draws = s.take(a.len());
                self.m.lanes_rounded(f, op, a, b, &draws)
            }
            _ => self.m.lanes(f, op, a, b),
        }
    }

    /// An optimizer's lane operation: the update stores every result it computes (state and
    /// parameters alike).
    pub(crate) fn update_lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[M::Word],
        b: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        self.lanes_stored(f, op, (a, b), true)
    }

    /// C = A·B stored (`training`): with a stream and exact accumulation, each element read
    /// out once with the next rows·cols positions (row-major); the other accumulations round
    /// at every step, to nearest. With `--format mx:…` (training and test passes alike) the
    /// machine's MX product: both operands in blocks along the reduction dimension, whichever
    /// product this is (forward X·Wᵀ, dW = δᵀ·X, dX = δ·W, a convolution's im2col rows).
    pub(crate) fn matmul_stored(
        &mut self,
        f: Format,
        acc: Accumulate,
        (a, b): (View<'_, M::Word>, View<'_, M::Word>),
        training: bool,
    ) -> Result<Mat<M::Word>, TrainError> {
        if let Some(mx) = self.cfg.mx {
            return self.m.mx_matmul(mx, a, b);
        }
        match self.arithmetic_stream() {
            Some(s) if training && acc == Accumulate::Exact => {
                let draws = s.take(a.rows() * b.cols());
                self.m.matmul_rounded(f, a, b, &draws)
            }
            _ => self.m.matmul(f, acc, a, b),
        }
    }

    /// Where [`Net::matmul_stored`]'s product of an m×n result is best cut into `parts`
    /// parts computed apart: as the machine cuts its own, and an MX product (`mx_product`)
    /// on its longer side.
    pub(crate) fn product_cut(
        &self,
        f: Format,
        acc: Accumulate,
        (m, n): (usize, usize),
        parts: usize,
    ) -> Cut {
        match self.cfg.mx {
            Some(_) => Cut::longer(m, n),
            None => self.m.cut(f, acc, m, n, parts),
        }
    }
}
