//! The network's passes and one training step, written as [`Machine`] operations only: the
//! host decides what to compute, in which format, and moves words (im2col, pooling routes,
//! dropout masks); every arithmetic result comes from the machine.
//!
//! Stage formats (seed 004 ch. 4): forward in F, softmax and output error in L, error
//! propagation in B, gradients in G, the optimizer and master weights in O; words cross a
//! stage boundary by the machine's conversion (the identity when the formats agree). The
//! layers themselves are in `layers.rs`, the update rules in `optim.rs`.

use std::borrow::Cow;

use lpgen_golden::{AluOp, Format, F32};
use rand_pcg::Pcg64;

use crate::arch::Layer;
use crate::config::{Activation, Config};
use crate::family::train_family;
use crate::layers::Grads;
use crate::machine::{Accumulate, Machine, Mat, View, Word};
use crate::model::Model;
use crate::rounding::Stream;
use crate::storage::Storage;
use crate::TrainError;

/// ⌈log2 |x|⌉ of a nonzero finite f64, exactly.
fn ceil_log2(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        // Subnormal: value = mant·2^−1074.
        let top = 63 - mant.leading_zeros() as i32;
        let pow2 = mant & (mant - 1) == 0;
        return top - 1074 + if pow2 { 0 } else { 1 };
    }
    exp - 1023 + if mant == 0 { 0 } else { 1 }
}

/// The largest k for which the format holds 2^−k exactly (LNS: 2^I − 1, posit: the largest
/// scale, fix: F): the family's `TrainFamily::pow2_reach`.
fn pow2_reach(f: Format) -> i32 {
    train_family(&f).pow2_reach()
}

/// The operations of one run: a machine and the run's configuration.
pub struct Net<'a, M: Machine> {
    pub m: &'a mut M,
    pub cfg: &'a Config,
    /// Seed 002's storage groups (`--format dfix:P:U`); `None` otherwise.
    pub storage: Option<&'a mut Storage>,
    /// `--rounding stochastic:R`: the run's rounding stream (training passes only).
    pub stream: Option<&'a mut Stream>,
    /// `--scaling` with a delayed rule: the run's amax histories (training and evaluation
    /// passes alike; only training records).
    pub scales: Option<&'a mut crate::scaling::Scales>,
}

/// What a layer's forward pass keeps for its backward pass.
pub enum Cache<W> {
    /// The input, in F.
    Dense { input: Mat<W> },
    /// The input as im2col rows (one per sample and output position), in F.
    Conv { cols: Mat<W> },
    /// For each output of a max (pooling or maxout), the input it came from (an index within
    /// its sample); `inputs` per sample.
    Max { from: Vec<usize>, inputs: usize },
    /// The sigmoid's output, in F (its derivative is y·(1 − y)).
    Sigmoid { output: Mat<W> },
    /// The ReLU's input, in F (its derivative is 1 where the input is positive).
    Relu { input: Mat<W> },
    /// Which inputs dropout kept (empty: not in training).
    Dropout { keep: Vec<bool> },
}

/// What a forward pass keeps: each layer's cache and the output probabilities in L.
pub struct Forward<W = u64> {
    pub caches: Vec<Cache<W>>,
    pub probs: Mat<W>,
}

/// A batch's forward pass and the gradients of every layer with weights.
pub type Backward<W> = (Forward<W>, Vec<Grads<W>>);

/// The error flowing backward, in B; and in G as well where it was converted straight from
/// the output error in L, so that the last layer's gradient is not rounded through B first.
pub struct Delta<W> {
    pub b: Mat<W>,
    pub g: Option<Mat<W>>,
}

impl<'a, M: Machine> Net<'a, M> {
    /// A network pass on machine `m` under `cfg` with none of the run's state beside it
    /// (storage groups, rounding stream, amax histories): what a pass that needs none of
    /// them, and every test of a single step, starts from.
    pub fn new(m: &'a mut M, cfg: &'a Config) -> Self {
        Net {
            m,
            cfg,
            storage: None,
            stream: None,
            scales: None,
        }
    }
}

impl<M: Machine> Net<'_, M> {
    /// `a` in `to`: the machine's conversion, or `a` itself when the formats agree.
    pub(crate) fn convert<'m>(
        &mut self,
        from: Format,
        to: Format,
        a: &'m Mat<M::Word>,
    ) -> Result<Cow<'m, Mat<M::Word>>, TrainError> {
        if from == to {
            return Ok(Cow::Borrowed(a));
        }
        Ok(Cow::Owned(Mat {
            rows: a.rows,
            cols: a.cols,
            data: self.m.convert(from, to, &a.data)?,
        }))
    }

    /// Words of `a` in `to` (see [`Net::convert`]).
    pub(crate) fn convert_words<'m>(
        &mut self,
        from: Format,
        to: Format,
        a: &'m [M::Word],
    ) -> Result<Cow<'m, [M::Word]>, TrainError> {
        if from == to {
            return Ok(Cow::Borrowed(a));
        }
        Ok(Cow::Owned(self.m.convert(from, to, a)?))
    }

    pub(crate) fn splat(&self, f: Format, x: f64, n: usize) -> Vec<M::Word> {
        vec![M::Word::constant(f, x); n]
    }

    /// e^x elementwise. f32: libm. Other formats: seed 000 eq. 2.6 as lane operations (the
    /// golden `Lns::exp_taylor` op for op): y = x·2^−k with k = max(0, ⌈log2|x|⌉ + 1),
    /// p = 1 + y + y²/2 + y³/6 + y⁴/24 (t ← t·y / j), then p squared k times (a lane whose k
    /// is used up multiplies by one, which is exact).
    pub fn exp(&mut self, f: Format, x: &[M::Word]) -> Result<Vec<M::Word>, TrainError> {
        if f == Format::F32(F32) {
            let c = f.calc();
            return Ok(x
                .iter()
                .map(|&v| M::Word::from_bits(c.exp(v.to_bits())))
                .collect());
        }
        let ks: Vec<i32> = x
            .iter()
            .map(|&v| {
                let r = v.value(f);
                if r == 0.0 || !r.is_finite() {
                    0
                } else {
                    (ceil_log2(r) + 1).max(0)
                }
            })
            .collect();
        // y = x·2^−k in steps of at most 2^−kmax, the smallest power of two the format holds
        // exactly (the intermediate values lie between x and y, so none saturates).
        let kmax = pow2_reach(f);
        let ks: Vec<i32> = ks.iter().map(|&k| if kmax == 0 { 0 } else { k }).collect();
        let one = self.splat(f, 1.0, x.len());
        let mut y = x.to_vec();
        let mut left = ks.clone();
        while left.iter().any(|&k| k > 0) {
            let scale: Vec<M::Word> = left
                .iter_mut()
                .map(|k| {
                    let s = (*k).min(kmax);
                    *k -= s;
                    M::Word::constant(f, (-s as f64).exp2())
                })
                .collect();
            y = self.m.lanes(f, AluOp::Mul, &y, &scale)?;
        }
        let mut p = self.m.lanes(f, AluOp::Add, &one, &y)?;
        let mut t = y.clone();
        for j in [2.0, 3.0, 4.0] {
            t = self.m.lanes(f, AluOp::Mul, &t, &y)?;
            t = self
                .m
                .lanes(f, AluOp::Div, &t, &self.splat(f, j, x.len()))?;
            p = self.m.lanes(f, AluOp::Add, &p, &t)?;
        }
        let rounds = ks.iter().copied().max().unwrap_or(0);
        for r in 1..=rounds {
            let b: Vec<M::Word> = p
                .iter()
                .zip(&ks)
                .map(|(&pv, &k)| if k >= r { pv } else { one[0] })
                .collect();
            p = self.m.lanes(f, AluOp::Mul, &p, &b)?;
        }
        Ok(p)
    }

    /// An activation, elementwise in F.
    pub(crate) fn activate(
        &mut self,
        activation: Activation,
        z: &Mat<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        let f = self.cfg.stages.f;
        let n = z.data.len();
        let data = match activation {
            Activation::Relu => self
                .m
                .lanes(f, AluOp::Max, &z.data, &self.splat(f, 0.0, n))?,
            Activation::Sigmoid => {
                // 1 / (1 + e^−z)
                let nz = self.m.lanes(f, AluOp::Neg, &z.data, &[])?;
                let e = self.exp(f, &nz)?;
                let one = self.splat(f, 1.0, n);
                let d = self.m.lanes(f, AluOp::Add, &one, &e)?;
                self.m.lanes(f, AluOp::Div, &one, &d)?
            }
        };
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data,
        })
    }

    /// Adds the bias row to every row of `z` (a stored weighted sum when `training`).
    pub(crate) fn add_bias(
        &mut self,
        f: Format,
        z: &Mat<M::Word>,
        b: &[M::Word],
        training: bool,
    ) -> Result<Mat<M::Word>, TrainError> {
        let bb: Vec<M::Word> = (0..z.rows).flat_map(|_| b.iter().copied()).collect();
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data: self.lanes_stored(f, AluOp::Add, (&z.data, &bb), training)?,
        })
    }

    /// Row sums of `x` (a product with a column of ones, accumulated as `acc`).
    pub(crate) fn row_sums(
        &mut self,
        f: Format,
        acc: Accumulate,
        x: View<'_, M::Word>,
    ) -> Result<Vec<M::Word>, TrainError> {
        let ones = Mat::filled(x.cols(), 1, M::Word::constant(f, 1.0));
        Ok(self.m.matmul(f, acc, x, ones.view())?.data)
    }

    /// The forward pass of a batch `x` (rows = samples, in F) at test time (no dropout).
    pub fn forward(
        &mut self,
        model: &Model<M::Word>,
        x: Mat<M::Word>,
    ) -> Result<Forward<M::Word>, TrainError> {
        self.forward_with(model, x, None)
    }

    /// The forward pass; in training, `noise` draws the dropout masks.
    pub(crate) fn forward_with(
        &mut self,
        model: &Model<M::Word>,
        x: Mat<M::Word>,
        mut noise: Option<&mut Pcg64>,
    ) -> Result<Forward<M::Word>, TrainError> {
        if let Some(g) = self.cfg.arch.gpt {
            let (probs, _) = self.gpt_forward(&g, model, &x, noise)?;
            return Ok(Forward {
                caches: vec![],
                probs,
            });
        }
        let mut a = x;
        let mut caches = vec![];
        let mut params = model.layers.iter();
        let cfg = self.cfg;
        for layer in &cfg.arch.layers {
            let p = if layer.weights().is_some() {
                params
                    .next()
                    .map(|p| (model.layers.len() - params.len() - 1, p))
            } else {
                None
            };
            // Model parallelism (seed 003): a hidden activation reaches the next layer with
            // weights through the 8-bit codec.
            let hidden = p.is_some() && params.len() + 1 < model.layers.len();
            if let (Some(codec), true) = (cfg.compression.act, hidden) {
                a.data = self.m.through_q8(codec, cfg.stages.f, &a.data, 1.0)?;
            }
            let (out, cache) = self.layer_forward(layer, p, a, noise.as_deref_mut())?;
            a = out;
            caches.push(cache);
        }
        let logits = self.convert(self.cfg.stages.f, self.cfg.stages.l, &a)?;
        let probs = self.softmax(&logits)?;
        Ok(Forward { caches, probs })
    }

    /// One training step on a batch: [`Net::gradients`], then [`Net::apply`]. Returns the
    /// forward pass (for metrics). `lr` and `momentum` are this step's; `noise` draws the
    /// dropout masks.
    pub fn step(
        &mut self,
        model: &mut Model<M::Word>,
        x: Mat<M::Word>,
        labels: &[u8],
        lr: f64,
        momentum: f64,
        noise: &mut Pcg64,
    ) -> Result<Forward<M::Word>, TrainError> {
        let (fw, grads) = self.gradients(model, x, labels, noise)?;
        self.apply(model, grads, lr, labels.len(), momentum, false)?;
        Ok(fw)
    }

    /// The output error p − onehot(labels) of the probabilities `probs` (one row per
    /// label), in L.
    pub(crate) fn output_error(
        &mut self,
        probs: &Mat<M::Word>,
        labels: &[u8],
    ) -> Result<Mat<M::Word>, TrainError> {
        let l = self.cfg.stages.l;
        let (batch, classes) = (labels.len(), probs.cols);
        let (one, zero) = (M::Word::constant(l, 1.0), M::Word::constant(l, 0.0));
        let onehot: Vec<M::Word> = (0..batch)
            .flat_map(|r| (0..classes).map(move |c| (r, c)))
            .map(|(r, c)| if labels[r] as usize == c { one } else { zero })
            .collect();
        Ok(Mat {
            rows: batch,
            cols: classes,
            data: self.m.lanes(l, AluOp::Sub, &probs.data, &onehot)?,
        })
    }

    /// The output error of `probs` against `labels` (in L) as the backward pass starts from
    /// it: in B, and in G for the last layer's gradient.
    pub(crate) fn output_delta(
        &mut self,
        probs: &Mat<M::Word>,
        labels: &[u8],
    ) -> Result<Delta<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let delta_l = self.output_error(probs, labels)?;
        Ok(Delta {
            b: self.convert(st.l, st.b, &delta_l)?.into_owned(),
            g: Some(self.convert(st.l, st.g, &delta_l)?.into_owned()),
        })
    }

    /// The first layer with weights (the layers' count if none): below it no error is needed.
    pub(crate) fn first_weighted(&self) -> usize {
        let layers = &self.cfg.arch.layers;
        layers
            .iter()
            .position(|l| l.weights().is_some())
            .unwrap_or(layers.len())
    }

    /// Forward and backward passes of a batch: the forward pass and, for each layer with
    /// weights in order, the gradients of its weights and biases summed over the batch, in G.
    /// A gpt's batch is its token windows, and `labels` the next token of every position.
    /// Where the machine forks and nothing couples the samples, the batch runs in shares on
    /// its threads (`net_shares`, the same words); the forward pass then keeps the
    /// probabilities only, not the layers' caches.
    pub fn gradients(
        &mut self,
        model: &Model<M::Word>,
        x: Mat<M::Word>,
        labels: &[u8],
        noise: &mut Pcg64,
    ) -> Result<Backward<M::Word>, TrainError> {
        if let Some(g) = self.cfg.arch.gpt {
            return self.gpt_gradients(&g, model, &x, labels, noise);
        }
        let forks = self.share_machines(labels.len());
        if !forks.is_empty() {
            return self.gradients_in_shares(model, &x, labels, noise, forks);
        }
        let mut fw = self.forward_with(model, x, Some(noise))?;
        self.begin_rounding(noise);
        let mut delta = self.output_delta(&fw.probs, labels)?;
        let cfg = self.cfg;
        let layers = &cfg.arch.layers;
        let first = self.first_weighted();
        let mut grads = vec![];
        let mut p = model.layers.len();
        let caches = std::mem::take(&mut fw.caches);
        for (i, cache) in caches
            .iter()
            .enumerate()
            .rev()
            .take_while(|(i, _)| *i >= first)
        {
            let layer: &Layer = &layers[i];
            let params = if layer.weights().is_some() {
                p -= 1;
                Some((p, &model.layers[p]))
            } else {
                None
            };
            let (next, grad) = self.layer_backward(layer, params, cache, delta, i > first)?;
            grads.extend(grad);
            match next {
                Some(d) => delta = d,
                None => break,
            }
        }
        fw.caches = caches;
        grads.reverse();
        Ok((fw, grads))
    }

    /// The optimizer's update of every layer from its gradients (in G, summed over a batch of
    /// `batch` samples), in place; `normalized`: AdaGrad already normalized them in the
    /// data-parallel exchange ([`crate::parallel::Worker::normalizes`]).
    pub fn apply(
        &mut self,
        model: &mut Model<M::Word>,
        grads: Vec<Grads<M::Word>>,
        lr: f64,
        batch: usize,
        momentum: f64,
        normalized: bool,
    ) -> Result<(), TrainError> {
        let cfg = self.cfg;
        let st = cfg.stages;
        // The schedule's rate for this update, and Adam's step t (1 at the first update).
        let lr = cfg.schedule.rate(lr, model.updates);
        let step = model.updates + 1;
        for (at, (params, (mut gw, mut gb))) in model.layers.iter_mut().zip(grads).enumerate() {
            // Data parallelism (seed 003): the gradients as a peer would receive them.
            if let Some(codec) = cfg.compression.grad {
                gw.data = self.m.through_q8(codec, st.g, &gw.data, batch as f64)?;
                gb = self.m.through_q8(codec, st.g, &gb, batch as f64)?;
            }
            let gw = self.convert_words(st.g, st.o, &gw.data)?;
            let gb = self.convert_words(st.g, st.o, &gb)?;
            self.update(
                at,
                params,
                (&gw, &gb),
                (lr, step),
                batch,
                momentum,
                normalized,
            )?;
        }
        model.updates = step;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::arch::{Arch, ArchOptions, ModelKind};
    use crate::config::{Activation, KahanPlaces, Normalize, Stages};
    use crate::machine::Golden;

    /// A 4-3-2 sigmoid MLP in `f` with every Kahan place, quires and SGD.
    pub(crate) fn cfg(f: &str) -> Config {
        let options = ArchOptions {
            kind: ModelKind::Mlp,
            hidden: vec![3],
            activation: Activation::Sigmoid,
            maxout_pieces: 2,
            dropout: vec![],
        };
        Config {
            quire: true,
            kahan: KahanPlaces::all(),
            batch: 2,
            momentum: 0.5,
            normalize: Normalize::PerPixel,
            ..Config::new(
                Arch::build(&options, (1, 2, 2), 2).unwrap(),
                Stages::all(f.parse().unwrap()),
            )
        }
    }

    /// The lane sequence of `exp` is the golden `Lns::exp_taylor`, for every lns:5:6 word.
    #[test]
    fn exp_by_lanes_is_the_golden_taylor_series() {
        let c = cfg("lns:5:6");
        let mut g = Golden::default();
        let mut net = Net::new(&mut g, &c);
        let f: Format = "lns:5:6".parse().unwrap();
        let words: Vec<u64> = (0..1u64 << f.width()).collect();
        let got = net.exp(f, &words).unwrap();
        let l = match f {
            Format::Lns(l) => l.ctx(),
            _ => unreachable!(),
        };
        for (&w, &e) in words.iter().zip(&got) {
            assert_eq!(e, l.exp_taylor(w), "exp of {w:#x}");
        }
    }

    /// A few steps on a tiny problem reduce the loss in every family.
    #[test]
    fn steps_reduce_the_loss() {
        for f in ["f32", "lns:5:6", "posit:16", "fix:7:8"] {
            let c = cfg(f);
            let fmt = c.stages.f;
            let mut model = Model::init(&c);
            let mut g = Golden::default();
            let mut net = Net::new(&mut g, &c);
            let calc = fmt.calc();
            let x = Mat {
                rows: 2,
                cols: 4,
                data: [1.0, -1.0, 0.5, 0.0, -1.0, 1.0, 0.0, 0.5]
                    .iter()
                    .map(|&v| calc.from_f64(v))
                    .collect(),
            };
            let labels = [0u8, 1];
            let loss = |fw: &Forward| -> f64 {
                (0..2)
                    .map(|r| {
                        -calc
                            .to_f64(fw.probs.at(r, labels[r] as usize))
                            .max(1e-9)
                            .ln()
                    })
                    .sum()
            };
            let mut noise = c.stream(&[0]);
            let first = loss(
                &net.step(&mut model, x.clone(), &labels, 0.5, 0.5, &mut noise)
                    .unwrap(),
            );
            for _ in 0..30 {
                net.step(&mut model, x.clone(), &labels, 0.5, 0.5, &mut noise)
                    .unwrap();
            }
            let last = loss(&net.forward(&model, x.clone()).unwrap());
            assert!(last < 0.5 * first, "{f}: loss {first} -> {last}");
        }
    }

    #[test]
    fn ceil_log2_is_exact() {
        for (x, k) in [
            (1.0, 0),
            (2.0, 1),
            (3.0, 2),
            (0.5, -1),
            (0.75, 0),
            (1.0000001, 1),
        ] {
            assert_eq!(ceil_log2(x), k, "{x}");
            assert_eq!(ceil_log2(-x), k, "{x}");
        }
        assert_eq!(ceil_log2(f64::from_bits(1)), -1074);
        assert_eq!(ceil_log2(f64::from_bits(3)), -1072);
    }
}
