//! A convolution whose output is one point (LeNet-5's C5) propagates its error as δ·W where
//! the sums are exact, leaving out the zero rows of the full form's padded im2col. The
//! gradients of a network with such a layer equal, word for word, those of the same machine
//! made to take the full form, in every family with exact sums; with a special weight word
//! (which the full form spreads to other sums through 0·NaR) the full form is taken.

use lpgen_golden::{AluOp, Format};
use lpgen_train::arch::{Arch, Layer};
use lpgen_train::config::{Activation, Config, Stages};
use lpgen_train::machine::{Accumulate, Golden, Machine, Mat, View, Word};
use lpgen_train::model::Model;
use lpgen_train::net::Net;
use lpgen_train::TrainError;

/// A 1×6×6 input: conv 4@3×3, ReLU, conv 5@4×4 (its output one point), dense 5→3.
fn arch() -> Arch {
    Arch {
        name: "point conv".into(),
        gpt: None,
        input: (1, 6, 6),
        layers: vec![
            Layer::Conv {
                channels: 1,
                height: 6,
                width: 6,
                filters: 4,
                kernel: 3,
                pad: 0,
            },
            Layer::Activation(Activation::Relu),
            Layer::Conv {
                channels: 4,
                height: 4,
                width: 4,
                filters: 5,
                kernel: 4,
                pad: 0,
            },
            Layer::Dense {
                inputs: 5,
                outputs: 3,
            },
        ],
    }
}

fn config(f: &str) -> Config {
    Config {
        quire: true,
        batch: 3,
        lr: 0.05,
        seed: 3,
        ..Config::new(arch(), Stages::all(f.parse().unwrap()))
    }
}

/// The golden machine, recording the shape (m, k, n) of every product it computes; unless
/// `exact`, it never says its sums are exact, so every convolution takes the full form.
struct Recorded {
    golden: Golden,
    exact: bool,
    shapes: Vec<(usize, usize, usize)>,
}

impl Recorded {
    fn new(exact: bool) -> Recorded {
        Recorded {
            golden: Golden::default(),
            exact,
            shapes: Vec::new(),
        }
    }
}

impl Machine for Recorded {
    type Word = u64;

    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat<u64>, TrainError> {
        self.shapes.push((a.rows(), a.cols(), b.cols()));
        self.golden.matmul(f, acc, a, b)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        self.golden.lanes(f, op, a, b)
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        self.golden.convert(from, to, a)
    }

    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[u64]) -> bool {
        self.exact && self.golden.sums_exactly(f, acc, words)
    }

    fn name(&self) -> String {
        "golden, products recorded".into()
    }
}

/// The point layer's input error as δ·W: 3 samples × 5 filters by 5 × 4·4·4.
const POINT: (usize, usize, usize) = (3, 5, 64);
/// ... and in the full form: 3·16 positions × 5·4·4 by 80 × 4 channels.
const FULL: (usize, usize, usize) = (48, 80, 4);

/// A deterministic pseudo-random value in [−1, 1) for index `i`.
fn wiggle(i: usize) -> f64 {
    let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11;
    x as f64 / (1u64 << 52) as f64 - 1.0
}

/// Every gradient word of one step on machine `m` (the weights and biases after an SGD
/// step without momentum).
fn step<M: Machine<Word = u64>>(m: &mut M, cfg: &Config, model: &Model) -> Vec<u64> {
    let f = cfg.stages.f;
    let x = Mat {
        rows: 3,
        cols: 36,
        data: (0..108).map(|i| u64::constant(f, wiggle(i))).collect(),
    };
    let mut net = Net {
        m,
        cfg,
        storage: None,
        stream: None,
        scales: None,
    };
    let mut stepped = model.clone();
    let mut noise = cfg.stream(&[0]);
    net.step(&mut stepped, x, &[0, 2, 1], cfg.lr, 0.0, &mut noise)
        .unwrap();
    stepped
        .layers
        .iter()
        .flat_map(|l| l.w.data.iter().chain(&l.b).copied())
        .collect()
}

/// The model with every weight wiggled (so that no gradient is zero by construction).
fn model(cfg: &Config) -> Model {
    let f = cfg.stages.o;
    let mut model: Model = Model::init(cfg);
    for (l, layer) in model.layers.iter_mut().enumerate() {
        for (i, w) in layer.w.data.iter_mut().enumerate() {
            *w = u64::constant(f, 0.7 * wiggle(1000 * l + i));
        }
    }
    model
}

#[test]
fn conv_point_input_error_is_the_full_form() {
    for f in [
        "posit:8:2",
        "posit:16:1",
        "bf16",
        "fp8:e4m3",
        "fix:7:8",
        "takum:8",
    ] {
        let cfg = config(f);
        let model = model(&cfg);
        let mut seen = Recorded::new(true);
        let fast = step(&mut seen, &cfg, &model);
        let mut full_form = Recorded::new(false);
        let full = step(&mut full_form, &cfg, &model);
        assert_eq!(fast, full, "{f}");
        let (shapes, full_shapes) = (&seen.shapes, &full_form.shapes);
        assert!(
            shapes.contains(&POINT) && !shapes.contains(&FULL),
            "{f}: {shapes:?}"
        );
        assert!(full_shapes.contains(&FULL), "{f}: {full_shapes:?}");
        // The first layer's weights moved: the point layer's error reached it.
        assert_ne!(model.layers[0].w.data, fast[..36].to_vec(), "{f}");
    }
}

/// A NaR or NaN weight in the point layer: the full form spreads it through 0·NaR to every
/// input error of its channel, so the fast form must not be taken.
#[test]
fn a_special_weight_takes_the_full_form() {
    for (f, special) in [
        ("posit:8:2", 0x80),
        ("bf16", 0xff80),
        ("bf16", 0x7fc0),
        ("fp8:e4m3", 0x7f),
    ] {
        let cfg = config(f);
        let mut model = model(&cfg);
        model.layers[1].w.data[7] = special;
        let mut seen = Recorded::new(true);
        let fast = step(&mut seen, &cfg, &model);
        let full = step(&mut Recorded::new(false), &cfg, &model);
        assert_eq!(fast, full, "{f}");
        assert!(seen.shapes.contains(&FULL), "{f}: {:?}", seen.shapes);
    }
}
