//! Transformers (issue 46): `--model gpt`, a decoder-only character-level language model.
//! Tokens are bytes (vocabulary 256). The network: token and learned position embeddings;
//! `layers` pre-norm blocks, each x + attention(norm(x)), then x + fc2(gelu(fc1(norm(x))))
//! with fc1 of 4·dim units; a final layer norm and a linear head; the softmax of the output
//! in L. Every operation runs on the [`Machine`] in its stage's format (`norm.rs`,
//! `attention.rs`); the dense layers are the network's own (`layers.rs`).
//!
//! The parameters are a [`Model`]'s list, in this order: token embedding (vocab × dim, no
//! bias), position embedding (context × dim, no bias), per block: norm 1 (γ as dim × 1, β),
//! q k v (3·dim × dim), projection (dim × dim), norm 2, fc1 (4·dim × dim), fc2 (dim × 4·dim);
//! then the final norm and the head (vocab × dim).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::config::Config;
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::model::{Model, Params};
use crate::net::{Delta, Forward, Net};
use crate::TrainError;

mod attention;
mod norm;
pub mod text;
mod vit;

pub use attention::AttnCache;
pub use norm::{GeluCache, NormCache, GELU_SLOPE, NORM_EPS};

use lpgen_golden::AluOp;
use norm::mat;

/// A pass's result: the output (or the error at the input) and what goes with it.
pub type Pass<W, C> = Result<(Mat<W>, C), TrainError>;

/// What a transformer reads and predicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// `--model gpt`: bytes; the next byte at every position, attention causal.
    Text,
    /// `--model vit`: single-channel images of `side` × `side` pixels cut into `patch` ×
    /// `patch` patches (the tokens, `context` of them), one class per image: attention over
    /// every patch, the head on the mean of the final norm's rows (`vit.rs`).
    Image { side: usize, patch: usize },
}

/// The shape of a transformer: a gpt (`Task::Text`) or a vit (`Task::Image`, whose
/// `context` is its patches and `vocab` its classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpt {
    pub layers: usize,
    pub heads: usize,
    pub dim: usize,
    pub context: usize,
    pub vocab: usize,
    pub task: Task,
}

/// Parameters per block: norm 1, q k v, projection, norm 2, fc1, fc2.
const PER_BLOCK: usize = 6;

impl Gpt {
    /// Refuses shapes that cannot be built, in one line.
    pub fn check(&self) -> Result<(), TrainError> {
        let bad = |why: String| Err(TrainError(why));
        if self.layers < 1 || self.heads < 1 || self.dim < 1 {
            return bad(format!(
                "--layers {}, --heads {}, --dim {}: each must be at least 1",
                self.layers, self.heads, self.dim
            ));
        }
        if self.context < 1 {
            return bad(format!("--context {} must be at least 1", self.context));
        }
        if let Task::Image { side, patch } = self.task {
            if patch < 1 || side % patch != 0 || self.context != (side / patch).pow(2) {
                return bad(format!(
                    "--patch {patch} does not tile the {side}x{side} image: give a divisor of {side}"
                ));
            }
        }
        if !self.dim.is_multiple_of(self.heads) {
            return bad(format!(
                "--heads {} does not divide --dim {}: every head takes dim/heads columns",
                self.heads, self.dim
            ));
        }
        Ok(())
    }

    /// A stable description (a checkpoint's fingerprint names the network by it).
    pub fn describe(&self) -> String {
        if let Task::Image { side, patch } = self.task {
            return format!(
                "vit layers {} heads {} dim {} patch {patch} image {side} classes {}",
                self.layers, self.heads, self.dim, self.vocab
            );
        }
        format!(
            "gpt layers {} heads {} dim {} context {} vocab {}",
            self.layers, self.heads, self.dim, self.context, self.vocab
        )
    }

    /// A name for titles.
    pub fn name(&self) -> String {
        if let Task::Image { patch, .. } = self.task {
            return format!(
                "vit {}x{} ({} heads, patch {patch})",
                self.layers, self.dim, self.heads
            );
        }
        format!(
            "gpt {}x{} ({} heads, context {})",
            self.layers, self.dim, self.heads, self.context
        )
    }

    /// The index of block `l`'s first parameters (its norm 1).
    pub fn block(&self, l: usize) -> usize {
        2 + PER_BLOCK * l
    }

    /// The index of the final norm (the head follows it).
    pub fn final_norm(&self) -> usize {
        self.block(self.layers)
    }

    /// Every parameter's (rows, cols, biases), in order.
    pub fn shapes(&self) -> Vec<(usize, usize, usize)> {
        let (d, v) = (self.dim, self.vocab);
        let norm = (d, 1, d);
        let input = match self.task {
            Task::Text => (v, d, 0),
            Task::Image { patch, .. } => (d, patch * patch, d),
        };
        let mut s = vec![input, (self.context, d, 0)];
        for _ in 0..self.layers {
            s.extend([norm, (3 * d, d, 3 * d), (d, d, d), norm, (4 * d, d, 4 * d)]);
            s.push((d, 4 * d, d));
        }
        s.extend([norm, (v, d, v)]);
        s
    }

    /// The initial parameters in O: dense weights (a vit's patch embedding too) uniform in
    /// ±√(6 / (fan_in + fan_out)), token embeddings in ±1, position embeddings in ±0.1, drawn in f64 from one stream of
    /// the seed in order; norms' γ = 1 and β = 0; biases 0; the head all 0 (as every
    /// network's last layer).
    pub fn init<W: Word>(&self, cfg: &Config) -> Model<W> {
        let o = cfg.stages.o.calc();
        let zero = W::from_bits(o.zero());
        let one = W::from_bits(o.from_f64(1.0));
        let mut rng = Pcg64::seed_from_u64(cfg.seed);
        let adaptive = cfg.optimizer.is_adaptive();
        let shapes = self.shapes();
        let head = shapes.len() - 1;
        let layers = shapes
            .iter()
            .enumerate()
            .map(|(i, &(rows, cols, biases))| {
                let norm = cols == 1 && i >= 2;
                let r = if i == 1 {
                    0.1
                } else if i == 0 && self.task == Task::Text {
                    1.0
                } else {
                    (6.0 / (rows + cols) as f64).sqrt()
                };
                let data = (0..rows * cols)
                    .map(|_| match (norm, i == head) {
                        (true, _) => one,
                        (false, true) => zero,
                        (false, false) => W::from_bits(o.from_f64(rng.gen_range(-r..r))),
                    })
                    .collect();
                let n = rows * cols;
                Params {
                    w: Mat { rows, cols, data },
                    b: vec![zero; biases],
                    vw: vec![zero; n],
                    vb: vec![zero; biases],
                    rw: vec![zero; if adaptive { n } else { 0 }],
                    rb: vec![zero; if adaptive { biases } else { 0 }],
                    cw: vec![zero; n],
                    cb: vec![zero; biases],
                }
            })
            .collect();
        Model { layers, updates: 0 }
    }
}

/// What one block's backward pass needs.
struct BlockCache<W> {
    norm1: NormCache<W>,
    attn: AttnCache<W>,
    norm2: NormCache<W>,
    fc1: crate::net::Cache<W>,
    gelu: GeluCache<W>,
    fc2: crate::net::Cache<W>,
}

/// What the model's backward pass needs.
pub struct GptCache<W> {
    input: vit::InputCache<W>,
    blocks: Vec<BlockCache<W>>,
    norm: NormCache<W>,
    head: crate::net::Cache<W>,
}

/// The token ids of a batch: each word of `x` carries a byte in its bit pattern (the trainer
/// moves tokens, it does not compute with them).
pub fn tokens<W: Word>(x: &Mat<W>) -> Vec<usize> {
    x.data.iter().map(|w| w.to_bits() as usize).collect()
}

impl<M: Machine> Net<'_, M> {
    /// One block's forward pass on the residual stream `x` (in F).
    fn block_forward(
        &mut self,
        g: &Gpt,
        (model, l): (&Model<M::Word>, usize),
        x: Mat<M::Word>,
        mut noise: Option<&mut rand_pcg::Pcg64>,
    ) -> Pass<M::Word, BlockCache<M::Word>> {
        let f = self.cfg.stages.f;
        let at = g.block(l);
        let p = &model.layers;
        let (h, norm1) = self.norm_forward(&p[at], &x)?;
        let (a, attn) = self.attention_forward(g, (model, at + 1), h, noise.as_deref_mut())?;
        let x1 = mat(
            x.rows,
            x.cols,
            self.m.lanes(f, AluOp::Add, &x.data, &a.data)?,
        );
        let (h2, norm2) = self.norm_forward(&p[at + 3], &x1)?;
        let fc1 = Gpt::dense_layer(g.dim, 4 * g.dim);
        let (u, fc1_in) =
            self.layer_forward(&fc1, Some((at + 4, &p[at + 4])), h2, noise.as_deref_mut())?;
        let (gl, gelu) = self.gelu_forward(u)?;
        let fc2 = Gpt::dense_layer(4 * g.dim, g.dim);
        let (v, fc2_in) = self.layer_forward(&fc2, Some((at + 5, &p[at + 5])), gl, noise)?;
        let x2 = mat(
            x.rows,
            x.cols,
            self.m.lanes(f, AluOp::Add, &x1.data, &v.data)?,
        );
        let cache = BlockCache {
            norm1,
            attn,
            norm2,
            fc1: fc1_in,
            gelu,
            fc2: fc2_in,
        };
        Ok((x2, cache))
    }

    /// One block's backward pass from the error `dx2` (in B) at its output: the error at its
    /// input, and its gradients into `grads` (by parameter index).
    fn block_backward(
        &mut self,
        g: &Gpt,
        (model, l): (&Model<M::Word>, usize),
        c: &BlockCache<M::Word>,
        dx2: Mat<M::Word>,
        grads: &mut [Option<Grads<M::Word>>],
    ) -> Result<Mat<M::Word>, TrainError> {
        let b = self.cfg.stages.b;
        let at = g.block(l);
        let p = &model.layers;
        let dense = |s: &mut Self, (i, inputs, outputs), cache, d: Mat<M::Word>| {
            let layer = Gpt::dense_layer(inputs, outputs);
            let delta = Delta { b: d, g: None };
            let (next, gr) = s.layer_backward(&layer, Some((i, &p[i])), cache, delta, true)?;
            Ok::<_, TrainError>((next.expect("dense layers propagate").b, gr))
        };
        let (dg, g5) = dense(self, (at + 5, 4 * g.dim, g.dim), &c.fc2, dx2.clone())?;
        let du = self.gelu_backward(&c.gelu, &dg)?;
        let (dh2, g4) = dense(self, (at + 4, g.dim, 4 * g.dim), &c.fc1, du)?;
        let (dx1b, g3) = self.norm_backward(&p[at + 3], &c.norm2, &dh2)?;
        let dx1 = mat(
            dx2.rows,
            dx2.cols,
            self.m.lanes(b, AluOp::Add, &dx2.data, &dx1b.data)?,
        );
        let (dh1, [g1, g2]) = self.attention_backward(g, (model, at + 1), &c.attn, dx1.clone())?;
        let (dxb, g0) = self.norm_backward(&p[at], &c.norm1, &dh1)?;
        let dx = mat(
            dx1.rows,
            dx1.cols,
            self.m.lanes(b, AluOp::Add, &dx1.data, &dxb.data)?,
        );
        for (i, gr) in [
            (0, Some(g0)),
            (1, Some(g1)),
            (2, Some(g2)),
            (3, Some(g3)),
            (4, g4),
            (5, g5),
        ] {
            grads[at + i] = gr;
        }
        Ok(dx)
    }

    /// The forward pass of a batch `x`: a gpt's token windows (one row per window of
    /// `context` tokens; [`tokens`]), a vit's images (one row each, in F); the output
    /// probabilities in L of every position (gpt) or image (vit), and what the backward pass
    /// needs.
    pub fn gpt_forward(
        &mut self,
        g: &Gpt,
        model: &Model<M::Word>,
        x: &Mat<M::Word>,
        mut noise: Option<&mut rand_pcg::Pcg64>,
    ) -> Pass<M::Word, GptCache<M::Word>> {
        let st = self.cfg.stages;
        let p = &model.layers;
        let (mut h, input) = self.input_forward(g, model, x, noise.as_deref_mut())?;
        let mut blocks = vec![];
        for l in 0..g.layers {
            let (next, c) = self.block_forward(g, (model, l), h, noise.as_deref_mut())?;
            h = next;
            blocks.push(c);
        }
        let at = g.final_norm();
        let (hn, norm) = self.norm_forward(&p[at], &h)?;
        let hn = self.pool_forward(g, hn)?;
        let head = Gpt::dense_layer(g.dim, g.vocab);
        let (z, head_in) = self.layer_forward(&head, Some((at + 1, &p[at + 1])), hn, noise)?;
        let logits = self.convert(st.f, st.l, &z)?;
        let probs = self.softmax(&logits)?;
        let cache = GptCache {
            input,
            blocks,
            norm,
            head: head_in,
        };
        Ok((probs, cache))
    }

    /// Forward and backward passes of a batch: the output probabilities, and every
    /// parameter's gradients (summed over the batch's windows and positions) in G. `labels`
    /// holds the next token of every position.
    pub fn gpt_gradients(
        &mut self,
        g: &Gpt,
        model: &Model<M::Word>,
        x: &Mat<M::Word>,
        labels: &[u8],
        noise: &mut rand_pcg::Pcg64,
    ) -> Result<crate::net::Backward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let (probs, c) = self.gpt_forward(g, model, x, Some(noise))?;
        self.begin_rounding(noise);
        let delta_l = self.output_error(&probs, labels)?;
        let delta = Delta {
            b: self.convert(st.l, st.b, &delta_l)?.into_owned(),
            g: Some(self.convert(st.l, st.g, &delta_l)?.into_owned()),
        };
        let p = &model.layers;
        let mut grads: Vec<Option<Grads<M::Word>>> = vec![None; p.len()];
        let at = g.final_norm();
        let head = Gpt::dense_layer(g.dim, g.vocab);
        let (next, gh) =
            self.layer_backward(&head, Some((at + 1, &p[at + 1])), &c.head, delta, true)?;
        grads[at + 1] = gh;
        let d = self.pool_backward(g, next.expect("the head propagates").b)?;
        let (mut d, gn) = self.norm_backward(&p[at], &c.norm, &d)?;
        grads[at] = Some(gn);
        for l in (0..g.layers).rev() {
            d = self.block_backward(g, (model, l), &c.blocks[l], d, &mut grads)?;
        }
        let [gt, gp] = self.input_backward(g, model, &c.input, &d)?;
        grads[0] = Some(gt);
        grads[1] = Some(gp);
        let grads = grads
            .into_iter()
            .map(|gr| gr.expect("every parameter has gradients"))
            .collect();
        Ok((
            Forward {
                caches: vec![],
                probs,
            },
            grads,
        ))
    }
}

impl Gpt {
    fn dense_layer(inputs: usize, outputs: usize) -> crate::arch::Layer {
        crate::arch::Layer::Dense { inputs, outputs }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod scaled_tests;
