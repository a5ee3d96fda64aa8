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
        storage: None,
        max_norm: None,
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

/// The rtl machine quantizes 1-bit columns on the generated `quant1` unit: the same bits,
/// means and new residuals as the golden quantizer, with and without error feedback, for fix
/// words and for posits summed in quires (13-row columns on the 16-row design; both passes).
#[test]
fn the_quant1_unit_quantizes_as_the_golden_model() {
    use lpgen_golden::onebit::Quantizer;
    use lpgen_golden::{Format, SumMode};
    use lpgen_train::machine::Machine;
    let mut rtl = Rtl::new(2, 2, 4).unwrap();
    let (rows, cols) = (13, 5);
    for f in ["fix:7:8", "posit:8:2"] {
        let f: Format = f.parse().unwrap();
        let c = f.calc();
        let g: Vec<u64> = (0..rows * cols)
            .map(|i| c.from_f64(((i * 37 % 29) as f64 - 14.0) / 8.0))
            .collect();
        let r0: Vec<u64> = (0..rows * cols)
            .map(|i| c.from_f64(((i * 11 % 7) as f64 - 3.0) / 64.0))
            .collect();
        let q = Quantizer::new(f, SumMode::Quire).unwrap();
        let mut want_r = r0.clone();
        let want = q.matrix(&g, rows, cols, Some(&mut want_r));
        let mut got_r = r0.clone();
        let got = rtl
            .quantize_1bit(f, SumMode::Quire, &g, (rows, cols), Some(&mut got_r))
            .unwrap();
        assert_eq!(got, want, "{f}: bits and means");
        assert_eq!(got_r, want_r, "{f}: residuals");
        assert_ne!(want_r, r0, "{f}: the residuals changed");
        let plain = rtl
            .quantize_1bit(f, SumMode::Quire, &g, (rows, cols), None)
            .unwrap();
        assert_eq!(plain, q.matrix(&g, rows, cols, None), "{f}: no feedback");
    }
    // Both ran on hardware (one 16-row design each), not on the host's fallback.
    assert_eq!(rtl.quant1_designs(), 2);
    // LNS has no quant1 unit: the host quantizes.
    let lns: Format = "lns:5:6".parse().unwrap();
    let g: Vec<u64> = (0..26)
        .map(|i| lns.calc().from_f64(i as f64 - 12.0))
        .collect();
    let host = rtl
        .quantize_1bit(lns, SumMode::Naive, &g, (13, 2), None)
        .unwrap();
    assert_eq!(
        host,
        Quantizer::new(lns, SumMode::Naive)
            .unwrap()
            .matrix(&g, 13, 2, None)
    );
    assert_eq!(rtl.quant1_designs(), 2);
}
