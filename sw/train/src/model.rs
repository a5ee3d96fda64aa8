//! The parameters of a network: for each layer with weights, W, b, and the optimizer's state
//! for both, all in the optimizer's format O.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::arch::Layer;
use crate::config::{Activation, Config};
use crate::machine::{Mat, Word};

/// The parameters of one layer: W (outputs × inputs; a convolution's filters × channels·k²),
/// b, the optimizer's per-parameter state: the momentum `vw`/`vb` and, for AdaGrad and
/// RMSProp, the accumulated squared gradient `rw`/`rb` (empty for SGD), and the Kahan
/// compensations `cw`/`cb` of the update.
#[derive(Clone, Debug, PartialEq)]
pub struct Params<W = u64> {
    pub w: Mat<W>,
    pub b: Vec<W>,
    pub vw: Vec<W>,
    pub vb: Vec<W>,
    pub rw: Vec<W>,
    pub rb: Vec<W>,
    pub cw: Vec<W>,
    pub cb: Vec<W>,
}

/// The network's parameters, one entry per layer with weights, in order, and how many
/// updates have been applied to them (Adam's step t − 1, the cosine schedule's position).
#[derive(Clone, Debug, PartialEq)]
pub struct Model<W = u64> {
    pub layers: Vec<Params<W>>,
    pub updates: u64,
}

impl<W: Word> Model<W> {
    /// Seed 000 §4.2.1: weights uniform in ±gain·sqrt(6 / (fan_in + fan_out)), gain 4 before a
    /// sigmoid and 1 otherwise (ReLU, maxout), biases 0; the last layer (before the softmax)
    /// all 0. A convolution's fans count its kernel: channels·k² in, filters·k² out. Drawn in
    /// f64 from one stream of `seed` in layer order, rounded into O. A gpt: `Gpt::init`.
    pub fn init(cfg: &Config) -> Model<W> {
        if let Some(g) = &cfg.arch.gpt {
            return g.init(cfg);
        }
        let o = cfg.stages.o.calc();
        let zero = W::from_bits(o.zero());
        let mut rng = Pcg64::seed_from_u64(cfg.seed);
        let adaptive = cfg.optimizer.is_adaptive();
        let layers = &cfg.arch.layers;
        let with_weights: Vec<usize> = (0..layers.len())
            .filter(|&i| layers[i].weights().is_some())
            .collect();
        let params = with_weights
            .iter()
            .map(|&i| {
                let (rows, cols) = layers[i].weights().expect("a layer with weights");
                let (fan_in, fan_out) = match layers[i] {
                    Layer::Conv { kernel, .. } => (cols, rows * kernel * kernel),
                    _ => (cols, rows),
                };
                let last = Some(&i) == with_weights.last();
                // The nonlinearity this layer feeds decides the gain.
                let sigmoid = layers[i + 1..]
                    .iter()
                    .find(|l| matches!(l, Layer::Activation(_) | Layer::Maxout { .. }))
                    .is_some_and(|l| *l == Layer::Activation(Activation::Sigmoid));
                let gain = if sigmoid { 4.0 } else { 1.0 };
                let r = gain * (6.0 / (fan_in + fan_out) as f64).sqrt();
                let data = (0..rows * cols)
                    .map(|_| {
                        if last {
                            zero
                        } else {
                            W::from_bits(o.from_f64(rng.gen_range(-r..r)))
                        }
                    })
                    .collect();
                Params {
                    w: Mat { rows, cols, data },
                    b: vec![zero; rows],
                    vw: vec![zero; rows * cols],
                    vb: vec![zero; rows],
                    rw: vec![zero; if adaptive { rows * cols } else { 0 }],
                    rb: vec![zero; if adaptive { rows } else { 0 }],
                    cw: vec![zero; rows * cols],
                    cb: vec![zero; rows],
                }
            })
            .collect();
        Model {
            layers: params,
            updates: 0,
        }
    }
}
