//! What differs between the gpt and the vit (`--model vit`): the input (a gpt's token and
//! position embeddings; a vit's patches through a dense patch embedding plus a position
//! embedding) and the head's input (a gpt's every position; a vit's mean of each image's
//! rows after the final norm).

use lpgen_golden::AluOp;
use rand_pcg::Pcg64;

use crate::config::Place;
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::model::Model;
use crate::net::{Cache, Delta, Net};
use crate::TrainError;

use super::norm::{mat, tile};
use super::{tokens, Gpt, Pass, Task};

/// What the input's backward pass needs.
pub enum InputCache<W> {
    /// A gpt's tokens.
    Tokens(Vec<usize>),
    /// A vit's patch embedding's cache (its input: the patches).
    Patches(Cache<W>),
}

/// The patches of a batch of `side` × `side` images (one row each): one row per image and
/// patch (image-major, then patch row, then patch column), its `patch`² pixels row by row.
pub fn patches<W: Word>(x: &Mat<W>, side: usize, patch: usize) -> Mat<W> {
    let per = side / patch;
    let mut data = Vec::with_capacity(x.data.len());
    for s in 0..x.rows {
        let image = x.row(s);
        for py in 0..per {
            for px in 0..per {
                for y in 0..patch {
                    let at = (py * patch + y) * side + px * patch;
                    data.extend_from_slice(&image[at..at + patch]);
                }
            }
        }
    }
    mat(x.rows * per * per, patch * patch, data)
}

impl<M: Machine> Net<'_, M> {
    /// The residual stream's start: a gpt's embeddings of the tokens of `x`, a vit's patch
    /// embeddings of the images of `x` plus each patch's position embedding (in F).
    pub(super) fn input_forward(
        &mut self,
        g: &Gpt,
        model: &Model<M::Word>,
        x: &Mat<M::Word>,
        noise: Option<&mut Pcg64>,
    ) -> Pass<M::Word, InputCache<M::Word>> {
        let st = self.cfg.stages;
        let p = &model.layers;
        match g.task {
            Task::Text => {
                let t = tokens(x);
                let h = self.embed_forward((&p[0], &p[1]), &t, g.context)?;
                Ok((h, InputCache::Tokens(t)))
            }
            Task::Image { side, patch } => {
                let layer = Gpt::dense_layer(patch * patch, g.dim);
                let (e, cache) =
                    self.layer_forward(&layer, Some((0, &p[0])), patches(x, side, patch), noise)?;
                let pe = self.convert(st.o, st.f, &p[1].w)?.into_owned();
                let pos = tile(&pe.data, e.rows / g.context);
                let h = self.m.lanes(st.f, AluOp::Add, &e.data, &pos)?;
                Ok((mat(e.rows, g.dim, h), InputCache::Patches(cache)))
            }
        }
    }

    /// The input's gradients in G from the error `d` (in B) at the residual stream's start:
    /// [input embedding, position embedding].
    pub(super) fn input_backward(
        &mut self,
        g: &Gpt,
        model: &Model<M::Word>,
        c: &InputCache<M::Word>,
        d: &Mat<M::Word>,
    ) -> Result<[Grads<M::Word>; 2], TrainError> {
        match (g.task, c) {
            (Task::Text, InputCache::Tokens(t)) => self.embed_backward(t, (g.vocab, g.context), d),
            (Task::Image { patch, .. }, InputCache::Patches(cache)) => {
                let st = self.cfg.stages;
                let sums = self.cfg.accumulation(Place::Sums, st.g);
                let dg = self.convert(st.b, st.g, d)?.into_owned();
                let seqs = mat(dg.rows / g.context, g.context * g.dim, dg.data);
                let dpos = self.row_sums(st.g, sums, seqs.t())?;
                let layer = Gpt::dense_layer(patch * patch, g.dim);
                let delta = Delta {
                    b: d.clone(),
                    g: None,
                };
                let p = &model.layers;
                let (_, gr) = self.layer_backward(&layer, Some((0, &p[0])), cache, delta, false)?;
                let gr = gr.expect("a dense layer has gradients");
                Ok([gr, (mat(g.context, g.dim, dpos), vec![])])
            }
            (Task::Text, InputCache::Patches(_)) | (Task::Image { .. }, InputCache::Tokens(_)) => {
                unreachable!("an input's cache comes from its own forward pass")
            }
        }
    }

    /// The head's input from the final norm's rows `h` (in F): a gpt's every row; a vit's
    /// mean of each image's rows (sums at the `sums` place, divided by the patches).
    pub(super) fn pool_forward(
        &mut self,
        g: &Gpt,
        h: Mat<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        match g.task {
            Task::Text => Ok(h),
            Task::Image { .. } => {
                let f = self.cfg.stages.f;
                let acc = self.cfg.accumulation(Place::Sums, f);
                let images = h.rows / g.context;
                let mut sums = Vec::with_capacity(images * g.dim);
                for s in 0..images {
                    let rows = h.data[s * g.context * g.dim..(s + 1) * g.context * g.dim].to_vec();
                    let m = mat(g.context, g.dim, rows);
                    sums.extend(self.row_sums(f, acc, m.t())?);
                }
                let n = self.splat(f, g.context as f64, sums.len());
                let mean = self.m.lanes(f, AluOp::Div, &sums, &n)?;
                Ok(mat(images, g.dim, mean))
            }
        }
    }

    /// The error at the final norm's rows from the error `d` (in B) at the head's input: a
    /// gpt's itself; a vit's image error divided by the patches, for each of its rows.
    pub(super) fn pool_backward(
        &mut self,
        g: &Gpt,
        d: Mat<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        match g.task {
            Task::Text => Ok(d),
            Task::Image { .. } => {
                let b = self.cfg.stages.b;
                let n = self.splat(b, g.context as f64, d.data.len());
                let dd = self.m.lanes(b, AluOp::Div, &d.data, &n)?;
                let data = (0..d.rows)
                    .flat_map(|s| tile(&dd[s * g.dim..(s + 1) * g.dim], g.context))
                    .collect();
                Ok(mat(d.rows * g.context, g.dim, data))
            }
        }
    }
}
