//! `--rounding stochastic:R` in training: the stream positions each step takes are the ones
//! docs/train.md lists (counted here from that list), a resumed run ends word for word as an
//! uninterrupted one (weights, optimizer state and the stream), and the rounding changes the
//! words of a run, by seed.

use std::path::{Path, PathBuf};

use lpgen_golden::Rounding;
use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::machine::Golden;
use lpgen_train::trainer::{self, Plan};

mod common;
use common::write_dataset;

const BATCH: usize = 5;
const SAMPLES: usize = 40;

fn config(f: &str, rounding: Rounding) -> Config {
    Config {
        quire: f.starts_with("bf16") || f.starts_with("fp8"),
        batch: BATCH,
        lr: 0.5,
        momentum: 0.5,
        momentum_from: 2,
        seed: 7,
        rounding,
        ..Config::new(
            Arch::mlp((1, 4, 4), &[8], Activation::Sigmoid, 10),
            Stages::all(f.parse().unwrap()),
        )
    }
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-sr-{}-{name}", std::process::id()))
}

fn plan(out: &Path, epochs: u32, resume: bool) -> Plan {
    Plan {
        epochs,
        max_steps: None,
        out: out.to_path_buf(),
        resume,
        progress: false,
    }
}

fn data() -> (Dataset, Dataset) {
    let ds = tmp("ds");
    write_dataset(&ds, SAMPLES);
    let pair = (
        data::load(&ds, Split::Train).unwrap(),
        data::load(&ds, Split::Test).unwrap(),
    );
    let _ = std::fs::remove_dir_all(ds);
    pair
}

fn run(
    cfg: &Config,
    (train, test): (&Dataset, &Dataset),
    out: &Path,
    epochs: u32,
    resume: bool,
) -> lpgen_train::checkpoint::State {
    let mut sink = |_: &str| Ok(());
    trainer::run(
        &mut Golden::default(),
        cfg,
        train,
        test,
        &plan(out, epochs, resume),
        &mut sink,
    )
    .unwrap()
}

/// The positions of one epoch by docs/train.md's list, for the 16-8-10 MLP with SGD: each
/// step's forward pass (per layer: the product's read-out and the bias addition, batch × units
/// each), backward pass (per layer from the last: the weight gradient, outputs × inputs, and
/// the input error, batch × inputs, except at the first layer) and update (per layer, weights
/// then biases: SGD's four lane operations step, kept, velocity, weight).
fn positions_per_epoch() -> u64 {
    let layers = [(16u64, 8u64), (8, 10)];
    let b = BATCH as u64;
    let forward: u64 = layers.iter().map(|&(_, o)| 2 * b * o).sum();
    let backward: u64 = layers
        .iter()
        .enumerate()
        .map(|(i, &(n, o))| o * n + if i > 0 { b * n } else { 0 })
        .sum();
    let update: u64 = layers.iter().map(|&(n, o)| 4 * (o * n + o)).sum();
    (SAMPLES as u64 / b) * (forward + backward + update)
}

#[test]
fn a_step_takes_the_listed_positions_and_a_resumed_run_goes_on_word_for_word() {
    let (train, test) = data();
    for f in ["bf16", "fp8:e5m2", "fix:7:8"] {
        let cfg = config(f, Rounding::Stochastic(8));
        let (a, b) = (tmp(&format!("a{f}")), tmp(&format!("b{f}")));
        let whole = run(&cfg, (&train, &test), &a, 3, false);
        let stream = whole.stream.expect("a stochastic run keeps its stream");
        assert_eq!(stream.taken, 3 * positions_per_epoch(), "{f}");
        run(&cfg, (&train, &test), &b, 1, false);
        let resumed = run(&cfg, (&train, &test), &b, 3, true);
        assert_eq!(whole.model, resumed.model, "{f}: resumed weights differ");
        assert_eq!(Some(stream), resumed.stream, "{f}: resumed stream differs");
        // Nearest, and another seed, give other words.
        let nearest = run(&config(f, Rounding::Nearest), (&train, &test), &a, 3, false);
        assert!(nearest.stream.is_none());
        assert_ne!(
            nearest.model, whole.model,
            "{f}: stochastic changed nothing"
        );
        let other = Config {
            seed: 8,
            ..cfg.clone()
        };
        // (The seed also shuffles; the stream is what differs within the first step.)
        assert_ne!(
            run(&other, (&train, &test), &a, 1, false).model,
            whole.model
        );
        for d in [a, b] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
