//! Training through the simulated RTL (Verilator) ends with exactly the weights of the
//! golden model, and `--check` stops at the first differing word.

use std::path::PathBuf;

use lpgen_train::arch::Arch;
use lpgen_train::config::{
    Activation, Config, KahanPlaces, Normalize, Optimizer, Schedule, Stages,
};
use lpgen_train::data::{self, Split};
use lpgen_train::machine::{Checked, Golden};
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-rtl-train-{}-{name}", std::process::id()))
}

#[test]
fn rtl_training_ends_with_the_golden_weights() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(60);
    test.truncate(20);
    let cfg = Config {
        stages: Stages::all("lns:5:6".parse().unwrap()),
        quire: false,
        kahan: KahanPlaces::all(),
        keep_bits: None,
        arch: Arch::mlp((1, 28, 28), &[12], Activation::Sigmoid, 10),
        optimizer: Optimizer::Sgd,
        compression: Default::default(),
        batch: 10,
        lr: 0.1,
        momentum: 0.5,
        momentum_from: 1,
        schedule: Schedule::Fixed,
        normalize: Normalize::PerPixel,
        seed: 3,
    };
    let plan = |name: &str| Plan {
        epochs: 2,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("g"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap(),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan("r"), &mut sink).unwrap();
    assert!(checked.ops > 100, "{} operations compared", checked.ops);
    assert_eq!(rtl.model, golden.model, "weights after 2 epochs");
    // The weights moved (a run that trains nothing would pass the comparison trivially).
    let init = lpgen_train::model::Model::init(&cfg);
    assert_ne!(rtl.model.layers[0].w, init.layers[0].w);
    for d in ["g", "r"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}
