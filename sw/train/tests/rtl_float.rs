//! Training in float formats through the simulated RTL: every matrix product on the `float`
//! array PE (exact accumulation, `--quire`), lanes and conversions on the float `vector`
//! unit, checked word for word against the golden machine.

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
    std::env::temp_dir().join(format!("lpgen-rtl-float-{}-{name}", std::process::id()))
}

#[test]
fn float_training_on_the_float_array_gives_the_golden_words() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(40);
    test.truncate(10);
    for f in ["bf16", "fp8:e5m2"] {
        let cfg = Config {
            stages: Stages::all(f.parse().unwrap()),
            quire: true,
            kahan: KahanPlaces::default(),
            accumulate: Default::default(),
            keep_bits: None,
            arch: Arch::mlp((1, 28, 28), &[8], Activation::Sigmoid, 10),
            optimizer: Optimizer::Sgd,
            compression: Default::default(),
            storage: None,
            mx: None,
            max_norm: None,
            batch: 10,
            lr: 0.1,
            momentum: 0.5,
            momentum_from: 1,
            schedule: Schedule::Fixed,
            normalize: Normalize::PerPixel,
            seed: 3,
            rounding: lpgen_golden::Rounding::Nearest,
        };
        let plan = Plan {
            epochs: 1,
            max_steps: None,
            out: tmp(f),
            resume: false,
            progress: false,
        };
        let mut sink = |_: &str| Ok(());
        let mut checked = Checked {
            dut: Rtl::new(2, 2, 4).unwrap().with_array_stages(2),
            reference: Golden::default(),
            ops: 0,
        };
        let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan, &mut sink).unwrap();
        assert!(
            checked.ops > 100,
            "{f}: {} operations compared",
            checked.ops
        );
        let init = lpgen_train::model::Model::init(&cfg);
        assert_ne!(
            rtl.model.layers[0].w, init.layers[0].w,
            "{f}: nothing trained"
        );
        let _ = std::fs::remove_dir_all(tmp(f));
    }
}
