//! Transformers through the simulated RTL (issue 46): a tiny gpt with Adam in lns:5:6 and a
//! tiny vit in fix:7:8 train on `Checked` (every operation of the RTL machine compared with
//! the golden model's) and end with exactly the words of a golden run; the layer norms'
//! 1/√(var + ε), attention's 1/√d and Adam's √v̂ ran on the vector unit's `sqrt` opcode.

use std::path::PathBuf;

use lpgen_train::arch::Arch;
use lpgen_train::config::{Config, Normalize, Optimizer, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::machine::{Checked, Golden};
use lpgen_train::model::Model;
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};
use lpgen_train::transformer::{text, Gpt, Task};

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-rtl-tf-{}-{name}", std::process::id()))
}

fn config(f: &str, g: Gpt, optimizer: Optimizer) -> Config {
    Config {
        optimizer,
        batch: 4,
        lr: 0.01,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        seed: 5,
        ..Config::new(Arch::gpt(g).unwrap(), Stages::all(f.parse().unwrap()))
    }
}

/// Trains `cfg` for `steps` batches on the golden machine and on the checked RTL machine
/// (rows × cols array, 4 lanes); asserts the same model words, that the weights moved, and
/// that the vector unit took square roots.
fn same_words(cfg: &Config, (train, test): (&Dataset, &Dataset), steps: usize, name: &str) {
    let plan = |d: &str| Plan {
        epochs: 1,
        max_steps: Some(steps),
        out: tmp(&format!("{name}-{d}")),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        cfg,
        train,
        test,
        &plan("g"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap(),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, cfg, train, test, &plan("r"), &mut sink).unwrap();
    assert!(
        checked.ops > 100,
        "{name}: {} operations compared",
        checked.ops
    );
    assert!(
        checked.dut.sqrt_words() > 0,
        "{name}: no root on the vector unit"
    );
    assert_eq!(rtl.model, golden.model, "{name}: model words");
    assert_ne!(rtl.model, Model::init(cfg), "{name}: the weights moved");
    for d in ["g", "r"] {
        let _ = std::fs::remove_dir_all(tmp(&format!("{name}-{d}")));
    }
}

#[test]
fn a_gpt_with_adam_in_lns_trains_to_the_golden_words_on_the_rtl() {
    let g = Gpt {
        layers: 1,
        heads: 2,
        dim: 8,
        context: 4,
        vocab: 256,
        task: Task::Text,
    };
    let adam = Optimizer::Adam {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled: false,
    };
    let cfg = config("lns:5:6", g, adam);
    let bytes = "the quick brown fox jumps over the lazy dog. ".repeat(4);
    let (train, test) = text::split(bytes.as_bytes(), g.context).unwrap();
    same_words(&cfg, (&train, &test), 3, "gpt");
}

#[test]
fn a_vit_in_fix_trains_to_the_golden_words_on_the_rtl() {
    let g = Gpt {
        layers: 1,
        heads: 2,
        dim: 8,
        context: 16,
        vocab: 10,
        task: Task::Image { side: 28, patch: 7 },
    };
    let cfg = config("fix:7:8", g, Optimizer::Sgd);
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(8);
    test.truncate(4);
    same_words(&cfg, (&train, &test), 2, "vit");
}
