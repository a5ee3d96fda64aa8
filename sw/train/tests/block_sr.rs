//! The FP4 recipes' stochastic rounding of the gradients (`--scaling …,G=nvfp4+rht16+sr`) and
//! MXFP8 (E5M2 block products) through the trainer: a run of four steps equals, word for word,
//! one of two steps resumed from its checkpoint for two more (the rounding stream comes from
//! `--seed`, the epoch and the step); two runs are identical; `+sr` changes the words.

use std::path::{Path, PathBuf};

use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, Schedule, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::machine::Golden;
use lpgen_train::model::Model;
use lpgen_train::scaling::Scaling;
use lpgen_train::trainer::{self, Plan};

mod common;
use common::write_dataset;

fn config(scaling: &str) -> Config {
    Config {
        batch: 5,
        lr: 0.5,
        momentum: 0.5,
        schedule: Schedule::Halving {
            hold: 1,
            threshold: 0.0,
        },
        seed: 3,
        scaling: Scaling::parse(scaling).unwrap(),
        ..Config::new(
            Arch::mlp((1, 4, 4), &[8], Activation::Sigmoid, 10),
            Stages::all("bf16".parse().unwrap()),
        )
    }
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-block-sr-{}-{name}", std::process::id()))
}

/// `epochs` epochs of two steps each into `out` (resuming from its checkpoint if asked).
fn run(
    cfg: &Config,
    (train, test): (&Dataset, &Dataset),
    out: &Path,
    epochs: u32,
    resume: bool,
) -> Model<u64> {
    let plan = Plan {
        epochs,
        max_steps: Some(2),
        out: out.to_path_buf(),
        resume,
        progress: false,
    };
    trainer::run(&mut Golden::default(), cfg, train, test, &plan, &mut |_| {
        Ok(())
    })
    .unwrap()
    .model
}

#[test]
fn stochastic_gradients_and_mxfp8_resume_word_for_word() {
    let ds = tmp("ds");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    let mut words = vec![];
    for scaling in [
        "FB=nvfp4,G=nvfp4+rht16+sr",
        "FB=mxfp4,G=mxfp4+sr",
        "F=scaled/fp8:e4m3/b32/e8m0,BG=scaled/fp8:e5m2/b32/e8m0",
    ] {
        let cfg = config(scaling);
        let (a, b) = (tmp("a"), tmp("b"));
        let whole = run(&cfg, data, &a, 2, false);
        assert_eq!(whole.updates, 4, "{scaling}");
        run(&cfg, data, &b, 1, false);
        let resumed = run(&cfg, data, &b, 2, true);
        assert_eq!(whole, resumed, "{scaling}: resumed words differ");
        let again = run(&cfg, data, &a, 2, false);
        assert_eq!(whole, again, "{scaling}: a second run differs");
        words.push(whole);
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }
    // The same recipes without +sr train other words.
    for (i, scaling) in ["FB=nvfp4,G=nvfp4+rht16", "FB=mxfp4,G=mxfp4"]
        .iter()
        .enumerate()
    {
        let a = tmp("n");
        let nearest = run(&config(scaling), data, &a, 2, false);
        assert_ne!(nearest, words[i], "{scaling}");
        let _ = std::fs::remove_dir_all(&a);
    }
    let _ = std::fs::remove_dir_all(&ds);
}
