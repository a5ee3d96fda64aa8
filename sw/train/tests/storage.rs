//! Seed 002's low-precision storage in training (`--format dfix:P:U`): the parameters a run
//! ends with lie on their groups' grids, the scales move and are reported, a resumed run ends
//! word for word like an uninterrupted one (the scales are in the checkpoint), and the
//! max-norm constraint holds.

use std::path::{Path, PathBuf};

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::{Format, F32};
use lpgen_train::arch::{Arch, Layer};
use lpgen_train::config::{
    Activation, Config, KahanPlaces, Normalize, Optimizer, Schedule, Stages,
};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::float::Float;
use lpgen_train::storage::StorageConfig;
use lpgen_train::trainer::{self, EpochMetrics, Plan};

mod common;
use common::write_dataset;

fn config(storage: Option<StorageConfig>) -> Config {
    let mut arch = Arch::mlp((1, 4, 4), &[8], Activation::Relu, 10);
    arch.layers.insert(0, Layer::Dropout { p: 0.1 });
    Config {
        stages: Stages::all(Format::F32(F32)),
        quire: false,
        kahan: KahanPlaces::default(),
        accumulate: Default::default(),
        keep_bits: None,
        arch,
        optimizer: Optimizer::Sgd,
        compression: Default::default(),
        storage,
        mx: None,
        max_norm: None,
        batch: 5,
        lr: 0.2,
        momentum: 0.5,
        momentum_from: 1,
        schedule: Schedule::Fixed,
        normalize: Normalize::Global,
        seed: 3,
        rounding: lpgen_golden::Rounding::Nearest,
    }
}

fn dfix(p: u32, u: u32, radix_point: Option<u32>) -> StorageConfig {
    StorageConfig {
        propagation: DfixFormat::new(p).unwrap(),
        update: DfixFormat::new(u).unwrap(),
        scale_every: 20,
        max_overflow: 0.01,
        radix_point,
        exact_products: false,
    }
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-storage-{}-{name}", std::process::id()))
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

fn data(name: &str) -> (Dataset, Dataset) {
    let ds = tmp(&format!("ds-{name}"));
    write_dataset(&ds, 60);
    let pair = (
        data::load(&ds, Split::Train).unwrap(),
        data::load(&ds, Split::Test).unwrap(),
    );
    let _ = std::fs::remove_dir_all(ds);
    pair
}

#[test]
fn parameters_end_on_their_grids_and_resume_is_exact() {
    let (train, test) = data("grids");
    let cfg = config(Some(dfix(6, 8, None)));
    let (a, b) = (tmp("a"), tmp("b"));
    let mut lines = vec![];
    let mut report = |l: &str| {
        lines.push(l.to_string());
        Ok(())
    };
    let whole = trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        &train,
        &test,
        &plan(&a, 3, false),
        &mut report,
    )
    .unwrap();
    let metrics: Vec<EpochMetrics> = lines
        .iter()
        .map(|l| EpochMetrics::from_json(l).unwrap())
        .collect();
    let scales = metrics[2]
        .scales
        .clone()
        .expect("dfix runs report their scales");
    assert_eq!(scales.len(), 2 * 10, "ten groups per layer with weights");
    assert!(metrics
        .iter()
        .all(|m| m.overflow_rate.is_some_and(|r| (0.0..=1.0).contains(&r))));
    // Every stored weight and bias is an 8-bit integer times 2^scale of its group.
    for (l, params) in whole.model.layers.iter().enumerate() {
        for (role, words) in [("weights", &params.w.data), ("biases", &params.b)] {
            let e = scales[&format!("L{}.{role}", l + 1)];
            for &w in words {
                let k = w as f64 * (-e as f64).exp2();
                assert!(
                    k == k.round() && (-128.0..=127.0).contains(&k),
                    "L{} {role}: {w} at 2^{e}",
                    l + 1
                );
            }
        }
    }
    assert!(a.join("scales.png").is_file());
    // The scales moved during training (five updates an epoch here).
    assert_ne!(metrics[0].scales, metrics[2].scales);
    // Resumed after one epoch: the same words and the same scales.
    let mut sink = |_: &str| Ok(());
    trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        &train,
        &test,
        &plan(&b, 1, false),
        &mut sink,
    )
    .unwrap();
    let resumed = trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        &train,
        &test,
        &plan(&b, 3, true),
        &mut sink,
    )
    .unwrap();
    assert_eq!(whole.model, resumed.model);
    assert_eq!(whole.storage, resumed.storage);
    // Storage changes training: f32 and 32-bit fixed point with room differ from 6/8 bits.
    let plain = trainer::run(
        &mut Float { threads: 1 },
        &config(None),
        &train,
        &test,
        &plan(&b, 3, false),
        &mut sink,
    )
    .unwrap();
    assert_ne!(plain.model, whole.model);
    for d in [a, b] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn fixed_point_keeps_its_radix_point_and_max_norm_holds() {
    let (train, test) = data("fixed");
    let mut cfg = config(Some(dfix(12, 16, Some(3))));
    cfg.max_norm = Some(0.5);
    let out = tmp("fixed");
    let mut lines = vec![];
    let mut report = |l: &str| {
        lines.push(l.to_string());
        Ok(())
    };
    let state = trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        &train,
        &test,
        &plan(&out, 2, false),
        &mut report,
    )
    .unwrap();
    for l in &lines {
        let scales = EpochMetrics::from_json(l).unwrap().scales.unwrap();
        // 3 integer bits: scale 3 − 11 at 12 bits, 3 − 15 at 16 bits, never moved.
        assert_eq!(scales["L1.sum"], -8);
        assert_eq!(scales["L2.weights"], -12);
    }
    for p in &state.model.layers {
        for row in p.w.data.chunks(p.w.cols) {
            let length = row.iter().map(|&w| (w as f64).powi(2)).sum::<f64>().sqrt();
            // Rounding onto the 2^−12 grid after the scaling may add half a step per weight.
            assert!(
                length <= 0.5 + row.len() as f64 * 2f64.powi(-13),
                "row length {length}"
            );
        }
    }
    // Without the constraint some row is longer (the constraint did something).
    cfg.max_norm = None;
    let free = trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        &train,
        &test,
        &plan(&out, 2, false),
        &mut |_| Ok(()),
    )
    .unwrap();
    let longest = free
        .model
        .layers
        .iter()
        .flat_map(|p| {
            p.w.data
                .chunks(p.w.cols)
                .map(|r| r.iter().map(|&w| (w as f64).powi(2)).sum::<f64>().sqrt())
        })
        .fold(0.0, f64::max);
    assert!(longest > 0.5, "{longest}");
    let _ = std::fs::remove_dir_all(out);
}
