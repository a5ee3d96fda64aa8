//! The network's side of seed 002's storage (`storage.rs`): the [`Net`] methods through which
//! its passes meet the storage groups. Storing a tensor in a group, reading parameters at the
//! propagation width, and the dense products on stored words (`--dfix-products exact`).
//! Without storage (`--format dfix:P:U` or `store:P/U`) each is the identity (or `None`, for the caller's own product).

use std::borrow::Cow;

use crate::machine::{Machine, Mat, View, Word};
use crate::net::Net;
use crate::storage::{Role, Storage};
use crate::TrainError;

impl<M: Machine> Net<'_, M> {
    /// Stores `words` in group `role` of weighted layer `layer` (seed 002's storage; nothing
    /// without it). `training`: the epoch counts them (dfix: towards the scale updates). With
    /// `--rounding stochastic:R` (a stream: training passes only) the tensor takes the next
    /// words.len() positions of the stream and is stored rounded stochastically.
    pub(crate) fn store(
        &mut self,
        layer: usize,
        role: Role,
        words: &mut [M::Word],
        training: bool,
    ) -> Result<(), TrainError> {
        let f = self.cfg.stages.f;
        let Some(s) = self.storage.as_deref_mut() else {
            return Ok(());
        };
        let draws = self.stream.as_deref_mut().map(|st| st.take(words.len()));
        s.store(f, (layer, role), words, (training, draws.as_ref()))
    }

    /// Whether products run on the stored dfix words (`--dfix-products exact`).
    pub(crate) fn exact_products(&self) -> bool {
        self.storage.as_deref().is_some_and(Storage::exact_products)
    }

    /// Seed 002 with `--dfix-products exact`: A·B of stored values as dfix words, A of group
    /// `a_role` and B of group `b_role` of weighted layer `layer`, accumulated exactly and read
    /// out once into group `out` on the machine's dfix product; the read-outs' overflows count
    /// in `out` when `training`. `None` where products are f32 (no storage, f32 products, or
    /// the initial fit), for the caller's f32 product.
    pub(crate) fn dfix_product(
        &mut self,
        layer: usize,
        (a, a_role): (View<'_, M::Word>, Role),
        (b, b_role): (View<'_, M::Word>, Role),
        out: Role,
        training: bool,
    ) -> Result<Option<Mat<M::Word>>, TrainError> {
        if !self.exact_products() {
            return Ok(None);
        }
        let f = self.cfg.stages.f;
        let s = self
            .storage
            .as_deref()
            .and_then(Storage::dfix)
            .expect("exact products need dfix storage");
        let ((fa, ea), (fb, eb), (fo, eo)) = (
            s.operand(layer, a_role),
            s.operand(layer, b_role),
            s.operand(layer, out),
        );
        assert!(
            fa == fo && fb == fo,
            "exact products take P-bit words (P <= U)"
        );
        // Stored values lie on their grids, so each converts to its word exactly.
        let words = |v: View<'_, M::Word>, e: i32| {
            let m = v.to_mat();
            Mat {
                rows: m.rows,
                cols: m.cols,
                data: m
                    .data
                    .iter()
                    .map(|w| fo.from_f64(w.value(f), e).word)
                    .collect(),
            }
        };
        let (am, bm) = (words(a, ea), words(b, eb));
        let p = self.m.dfix_matmul(fo, (&am, ea), (&bm, eb), eo)?;
        let s = self
            .storage
            .as_deref_mut()
            .expect("exact products need storage");
        s.count(
            (layer, out),
            (p.c.data.len() as u64, p.overflows, p.overflows_at_half),
            training,
        );
        Ok(Some(Mat {
            rows: p.c.rows,
            cols: p.c.cols,
            data: p
                .c
                .data
                .iter()
                .map(|&w| M::Word::constant(f, fo.to_f64(w, eo)))
                .collect(),
        }))
    }

    /// A layer's weights as propagations read them (seed 002 §6: at the propagation width).
    pub(crate) fn read_weights<'m>(
        &self,
        layer: usize,
        w: Cow<'m, Mat<M::Word>>,
    ) -> Cow<'m, Mat<M::Word>> {
        match self.storage.as_deref() {
            Some(s) => Cow::Owned(Mat {
                rows: w.rows,
                cols: w.cols,
                data: s.read(self.cfg.stages.f, layer, Role::Weights, &w.data),
            }),
            None => w,
        }
    }

    /// A layer's biases as propagations read them.
    pub(crate) fn read_biases<'m>(
        &self,
        layer: usize,
        b: Cow<'m, [M::Word]>,
    ) -> Cow<'m, [M::Word]> {
        match self.storage.as_deref() {
            Some(s) => Cow::Owned(s.read(self.cfg.stages.f, layer, Role::Biases, &b)),
            None => b,
        }
    }
}
