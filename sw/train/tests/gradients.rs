//! The backward passes of every layer kind against the derivative of the loss: a central
//! difference of the forward pass (in f32) for weights of a convolution, a dense layer and
//! maxout, through max pooling and ReLU; and the optimizers reduce the loss of such networks
//! in every format family.

use lpgen_golden::{Format, F32};
use lpgen_train::arch::{Arch, Layer};
use lpgen_train::config::{Activation, Config, KahanPlaces, Optimizer, Stages};
use lpgen_train::machine::{Golden, Mat, Word};
use lpgen_train::model::Model;
use lpgen_train::net::Net;

/// A 1×6×6 input: conv 2@3×3 pad 1, max pool 2, ReLU, dense 18→6, maxout 3×2, dense 3→3.
fn small_cnn() -> Arch {
    Arch {
        name: "test CNN".into(),
        gpt: None,
        input: (1, 6, 6),
        layers: vec![
            Layer::Conv {
                channels: 1,
                height: 6,
                width: 6,
                filters: 2,
                kernel: 3,
                pad: 1,
            },
            Layer::MaxPool {
                channels: 2,
                height: 6,
                width: 6,
                size: 2,
            },
            Layer::Activation(Activation::Relu),
            Layer::Dense {
                inputs: 18,
                outputs: 6,
            },
            Layer::Maxout {
                units: 3,
                pieces: 2,
            },
            Layer::Dense {
                inputs: 3,
                outputs: 3,
            },
        ],
    }
}

fn config(f: &str, arch: Arch, optimizer: Optimizer) -> Config {
    Config {
        quire: f.starts_with("posit"),
        kahan: if f.starts_with("lns") {
            KahanPlaces::all()
        } else {
            KahanPlaces::default()
        },
        optimizer,
        batch: 3,
        lr: 0.05,
        seed: 3,
        ..Config::new(arch, Stages::all(f.parse().unwrap()))
    }
}

/// A deterministic pseudo-random value in [−1, 1) for index `i`.
fn wiggle(i: usize) -> f64 {
    let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11;
    x as f64 / (1u64 << 52) as f64 - 1.0
}

fn batch(f: Format) -> (Mat<u64>, Vec<u8>) {
    let x = Mat {
        rows: 3,
        cols: 36,
        data: (0..108).map(|i| u64::constant(f, wiggle(i))).collect(),
    };
    (x, vec![0, 2, 1])
}

/// The summed cross-entropy of the batch (on the host, in f64).
fn loss(net: &mut Net<'_, Golden>, model: &Model, x: &Mat<u64>, labels: &[u8]) -> f64 {
    let f = net.cfg.stages.l;
    let fw = net.forward(model, x.clone()).unwrap();
    (0..labels.len())
        .map(|r| -fw.probs.at(r, labels[r] as usize).value(f).ln())
        .sum()
}

#[test]
fn backward_passes_match_the_derivative_of_the_loss() {
    let cfg = config("f32", small_cnn(), Optimizer::Sgd);
    let f = Format::F32(F32);
    let mut model: Model = Model::init(&cfg);
    // The last layer starts at zero, which would hide every earlier gradient.
    let last = model.layers.len() - 1;
    for (i, w) in model.layers[last].w.data.iter_mut().enumerate() {
        *w = u64::constant(f, 0.5 * wiggle(1000 + i));
    }
    let (x, labels) = batch(f);
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &cfg);
    // One SGD step without momentum: w' = w − (lr / batch)·∂L/∂w, so the gradient is read
    // back from the change.
    let mut stepped = model.clone();
    let mut noise = cfg.stream(&[0]);
    net.step(&mut stepped, x.clone(), &labels, cfg.lr, 0.0, &mut noise)
        .unwrap();
    let mut checked = 0;
    for layer in 0..model.layers.len() {
        let n = model.layers[layer].w.data.len();
        for i in (0..n).step_by(n.div_ceil(12)) {
            let w = model.layers[layer].w.data[i].value(f);
            let after = stepped.layers[layer].w.data[i].value(f);
            let backprop = (w - after) * cfg.batch as f64 / cfg.lr;
            let h = 1e-3;
            let mut at = |v: f64| {
                let mut m = model.clone();
                m.layers[layer].w.data[i] = u64::constant(f, v);
                loss(&mut net, &m, &x, &labels)
            };
            let numeric = (at(w + h) - at(w - h)) / (2.0 * h);
            let scale = numeric.abs().max(backprop.abs()).max(1e-2);
            assert!(
                (numeric - backprop).abs() / scale < 0.05,
                "layer {layer} weight {i}: backprop {backprop}, central difference {numeric}"
            );
            checked += (numeric.abs() > 1e-3) as usize;
        }
    }
    // Most checked weights have a visible gradient (a test of zeros would prove nothing).
    assert!(checked >= 20, "only {checked} nonzero gradients");
}

#[test]
fn every_optimizer_reduces_the_loss_in_every_family() {
    for optimizer in [
        Optimizer::Sgd,
        Optimizer::AdaGrad {
            eps: 1e-8,
            at: lpgen_train::config::AdaGradAt::Aggregate,
        },
        Optimizer::RmsProp {
            decay: 0.9,
            eps: 1e-8,
        },
    ] {
        for f in ["f32", "lns:5:6", "posit:16:1", "fix:7:8"] {
            let mut cfg = config(f, small_cnn(), optimizer);
            cfg.lr = match optimizer {
                Optimizer::Sgd => 0.5,
                _ => 0.02,
            };
            let fmt = cfg.stages.f;
            let mut model: Model = Model::init(&cfg);
            let (x, labels) = batch(fmt);
            let mut g = Golden::default();
            let mut net = Net::new(&mut g, &cfg);
            let before = loss(&mut net, &model, &x, &labels);
            let mut noise = cfg.stream(&[0]);
            for _ in 0..40 {
                net.step(&mut model, x.clone(), &labels, cfg.lr, 0.0, &mut noise)
                    .unwrap();
            }
            let after = loss(&mut net, &model, &x, &labels);
            assert!(
                after < 0.5 * before,
                "{optimizer:?} in {f}: loss {before} -> {after}"
            );
        }
    }
}

#[test]
fn dropout_is_seeded_and_off_at_test_time() {
    let mut arch = Arch::mlp((1, 6, 6), &[8], Activation::Relu, 3);
    let plain = config("f32", arch.clone(), Optimizer::Sgd);
    arch.layers.insert(2, Layer::Dropout { p: 0.5 });
    let dropped = config("f32", arch, Optimizer::Sgd);
    let (x, labels) = batch(Format::F32(F32));
    let model: Model = Model::init(&plain);
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &plain);
    let want = net.forward(&model, x.clone()).unwrap().probs;
    let mut net = Net::new(&mut g, &dropped);
    assert_eq!(net.forward(&model, x.clone()).unwrap().probs, want);
    let run = |net: &mut Net<'_, Golden>, seed: u64| {
        let mut m = model.clone();
        net.step(
            &mut m,
            x.clone(),
            &labels,
            0.5,
            0.0,
            &mut dropped.stream(&[seed]),
        )
        .unwrap();
        m
    };
    let (a, b, c) = (run(&mut net, 1), run(&mut net, 1), run(&mut net, 2));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut net = Net::new(&mut g, &plain);
    assert_ne!(a, run(&mut net, 1), "dropout changed nothing");
}

#[test]
fn compressed_gradients_and_activations_change_the_step_and_still_train() {
    use lpgen_golden::Q8Type;
    let arch = Arch::mlp((1, 6, 6), &[8, 8], Activation::Relu, 3);
    let plain = config("f32", arch, Optimizer::Sgd);
    let (x, labels) = batch(Format::F32(F32));
    let start: Model = Model::init(&plain);
    let train = |cfg: &Config| {
        let mut g = Golden::default();
        let mut net = Net::new(&mut g, cfg);
        let mut m = start.clone();
        let before = loss(&mut net, &m, &x, &labels);
        for step in 0..40 {
            net.step(
                &mut m,
                x.clone(),
                &labels,
                0.5,
                0.0,
                &mut cfg.stream(&[step]),
            )
            .unwrap();
        }
        (m.clone(), before, loss(&mut net, &m, &x, &labels))
    };
    let (reference, _, _) = train(&plain);
    for codec in Q8Type::ALL {
        for grad in [true, false] {
            let mut cfg = plain.clone();
            if grad {
                cfg.compression.grad = Some(codec);
            } else {
                cfg.compression.act = Some(codec);
            }
            let (m, before, after) = train(&cfg);
            assert_ne!(m, reference, "{codec} (gradients: {grad}) changed nothing");
            assert!(
                after < 0.5 * before,
                "{codec} (gradients: {grad}): {before} -> {after}"
            );
        }
    }
}
