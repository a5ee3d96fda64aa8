//! Causal multi-head self-attention, forward and backward, as machine operations: the q, k, v
//! projection and the output projection are the network's dense layers; each head's QKᵀ,
//! P·V and their backward products run through the machine's matrix product (the `forward`
//! and `backward` places); the scores are divided by √d_head (the square root a lane
//! operation); the causal softmax takes row i over keys 0..=i only (`softmax_rows`, its sums
//! at the `attention` place), and the masked probabilities are zero words.

use lpgen_golden::{AluOp, Format};
use rand_pcg::Pcg64;

use crate::config::Place;
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::model::Model;
use crate::net::{Cache, Delta, Net};
use crate::net_softmax::per_row;
use crate::TrainError;

use super::Pass;

use super::norm::mat;
use super::Gpt;

/// What attention's backward pass needs (all in F).
pub struct AttnCache<W> {
    /// The q, k, v projection's cache (its input).
    qkv_in: Cache<W>,
    /// Its output: rows of q (dim), k (dim), v (dim), head h in columns h·d_head.. of each.
    qkv: Mat<W>,
    /// The probabilities of every (sequence, head, query i) row, i + 1 keys each.
    probs: Vec<W>,
    /// The output projection's cache.
    proj_in: Cache<W>,
}

/// Rows of sequence `s` (of `t`), columns `col..col + width` of `m`.
fn block<W: Word>(m: &Mat<W>, (s, t): (usize, usize), col: usize, width: usize) -> Mat<W> {
    let data = (s * t..(s + 1) * t)
        .flat_map(|r| m.row(r)[col..col + width].to_vec())
        .collect();
    mat(t, width, data)
}

/// Writes `x` (t rows) into `m` at rows of sequence `s`, columns from `col`.
fn put<W: Word>(m: &mut Mat<W>, s: usize, col: usize, x: &Mat<W>) {
    for i in 0..x.rows {
        let at = (s * x.rows + i) * m.cols + col;
        m.data[at..at + x.cols].copy_from_slice(x.row(i));
    }
}

/// One head's t × t matrix from its rows of the ragged `rows` (row i has `g.keys(i)`
/// words), from `*at` on; zeros past each row's keys (above the diagonal when causal).
fn causal<W: Word>(g: &Gpt, rows: &[W], at: &mut usize, zero: W) -> Mat<W> {
    let t = g.context;
    let mut m = Mat::filled(t, t, zero);
    for i in 0..t {
        let n = g.keys(i);
        m.data[i * t..i * t + n].copy_from_slice(&rows[*at..*at + n]);
        *at += n;
    }
    m
}

impl Gpt {
    /// The keys query i attends to: 0..=i for a gpt (causal), every patch for a vit.
    fn keys(&self, i: usize) -> usize {
        match self.task {
            super::Task::Text => i + 1,
            super::Task::Image { .. } => self.context,
        }
    }

    /// The score rows' lengths for `seqs` sequences: every head's `keys(i)` for each query.
    fn causal_lens(&self, seqs: usize) -> Vec<usize> {
        (0..seqs * self.heads)
            .flat_map(|_| (0..self.context).map(|i| self.keys(i)))
            .collect()
    }
}

impl<M: Machine> Net<'_, M> {
    /// √d_head in `f`: the lane's square root of the word nearest d_head.
    fn root_head(&mut self, g: &Gpt, f: Format) -> Result<M::Word, TrainError> {
        let dh = self.splat(f, (g.dim / g.heads) as f64, 1);
        Ok(self.m.lanes(f, AluOp::Sqrt, &dh, &[])?[0])
    }

    /// Attention over the rows `x` (in F; `context` rows per sequence) with the q, k, v
    /// projection at parameters `at` and the output projection at `at + 1`.
    pub fn attention_forward(
        &mut self,
        g: &Gpt,
        (model, at): (&Model<M::Word>, usize),
        x: Mat<M::Word>,
        mut noise: Option<&mut Pcg64>,
    ) -> Pass<M::Word, AttnCache<M::Word>> {
        let f = self.cfg.stages.f;
        let acc = self.cfg.accumulation(Place::Forward, f);
        let (d, t) = (g.dim, g.context);
        let dh = d / g.heads;
        let seqs = x.rows / t;
        let qkv_layer = Gpt::dense_layer(d, 3 * d);
        let (qkv, qkv_in) = self.layer_forward(
            &qkv_layer,
            Some((at, &model.layers[at])),
            x,
            noise.as_deref_mut(),
        )?;
        let mut scores = vec![];
        for s in 0..seqs {
            for h in 0..g.heads {
                let q = block(&qkv, (s, t), h * dh, dh);
                let k = block(&qkv, (s, t), d + h * dh, dh);
                let qk = self.m.matmul(f, acc, q.view(), k.t())?;
                for i in 0..t {
                    scores.extend_from_slice(&qk.row(i)[..g.keys(i)]);
                }
            }
        }
        let root = self.root_head(g, f)?;
        let scaled = self
            .m
            .lanes(f, AluOp::Div, &scores, &vec![root; scores.len()])?;
        let lens = g.causal_lens(seqs);
        let probs = self.softmax_rows(f, Place::Attention, &scaled, &lens)?;
        let zero = M::Word::constant(f, 0.0);
        let mut out = Mat::filled(seqs * t, d, zero);
        let mut next = 0;
        for s in 0..seqs {
            for h in 0..g.heads {
                let p = causal(g, &probs, &mut next, zero);
                let v = block(&qkv, (s, t), 2 * d + h * dh, dh);
                let o = self.m.matmul(f, acc, p.view(), v.view())?;
                put(&mut out, s, h * dh, &o);
            }
        }
        let (y, proj_in) = self.layer_forward(
            &Gpt::dense_layer(d, d),
            Some((at + 1, &model.layers[at + 1])),
            out,
            noise,
        )?;
        let cache = AttnCache {
            qkv_in,
            qkv,
            probs,
            proj_in,
        };
        Ok((y, cache))
    }

    /// Attention's backward pass from the error `dy` (in B) at its output: the error at its
    /// input in B, and the gradients of the q, k, v projection and the output projection.
    pub fn attention_backward(
        &mut self,
        g: &Gpt,
        (model, at): (&Model<M::Word>, usize),
        c: &AttnCache<M::Word>,
        dy: Mat<M::Word>,
    ) -> Pass<M::Word, [Grads<M::Word>; 2]> {
        let st = self.cfg.stages;
        let b = st.b;
        let acc = self.cfg.accumulation(Place::Backward, b);
        let (d, t) = (g.dim, g.context);
        let dh = d / g.heads;
        let seqs = dy.rows / t;
        let delta = Delta { b: dy, g: None };
        let proj = (at + 1, &model.layers[at + 1]);
        let (next, gp) =
            self.layer_backward(&Gpt::dense_layer(d, d), Some(proj), &c.proj_in, delta, true)?;
        let dout = next.expect("the projection propagates").b;
        let qkv = self.convert(st.f, b, &c.qkv)?.into_owned();
        let probs = self.convert_words(st.f, b, &c.probs)?.into_owned();
        let zero = M::Word::constant(b, 0.0);
        let (mut dps, mut dvs) = (vec![], vec![]);
        let mut next = 0;
        for s in 0..seqs {
            for h in 0..g.heads {
                let dout_h = block(&dout, (s, t), h * dh, dh);
                let v = block(&qkv, (s, t), 2 * d + h * dh, dh);
                let p = causal(g, &probs, &mut next, zero);
                let dp = self.m.matmul(b, acc, dout_h.view(), v.t())?;
                for i in 0..t {
                    dps.extend_from_slice(&dp.row(i)[..g.keys(i)]);
                }
                dvs.push(self.m.matmul(b, acc, p.t(), dout_h.view())?);
            }
        }
        // The softmax's backward pass: ds = p·(dp − Σ p·dp), then the scale's.
        let lens = g.causal_lens(seqs);
        let pd = self.m.lanes(b, AluOp::Mul, &probs, &dps)?;
        let sums = self.ragged_sums(b, Place::Attention, &pd, &lens)?;
        let diff = self.m.lanes(b, AluOp::Sub, &dps, &per_row(&sums, &lens))?;
        let ds = self.m.lanes(b, AluOp::Mul, &probs, &diff)?;
        let root = self.root_head(g, b)?;
        let ds = self.m.lanes(b, AluOp::Div, &ds, &vec![root; ds.len()])?;
        let mut dqkv = Mat::filled(seqs * t, 3 * d, zero);
        let mut next = 0;
        let mut dvs = dvs.into_iter();
        for s in 0..seqs {
            for h in 0..g.heads {
                let dsh = causal(g, &ds, &mut next, zero);
                let q = block(&qkv, (s, t), h * dh, dh);
                let k = block(&qkv, (s, t), d + h * dh, dh);
                let dq = self.m.matmul(b, acc, dsh.view(), k.view())?;
                let dk = self.m.matmul(b, acc, dsh.t(), q.view())?;
                put(&mut dqkv, s, h * dh, &dq);
                put(&mut dqkv, s, d + h * dh, &dk);
                let dv = dvs.next().expect("one dv per head");
                put(&mut dqkv, s, 2 * d + h * dh, &dv);
            }
        }
        let delta = Delta { b: dqkv, g: None };
        let (next, gq) = self.layer_backward(
            &Gpt::dense_layer(d, 3 * d),
            Some((at, &model.layers[at])),
            &c.qkv_in,
            delta,
            true,
        )?;
        let grads = [
            gq.expect("a dense layer has gradients"),
            gp.expect("a dense layer has gradients"),
        ];
        Ok((next.expect("the projection propagates").b, grads))
    }
}
