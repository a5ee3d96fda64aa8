//! A run interrupted after an epoch and resumed from its checkpoint ends with exactly the
//! weights (every word) of an uninterrupted run; damaged inputs are refused in one line.

use std::path::{Path, PathBuf};

use lpgen_train::arch::{Arch, Layer};
use lpgen_train::config::{Activation, Config, KahanPlaces, Optimizer, Schedule, Stages};
use lpgen_train::data::{self, Split};
use lpgen_train::machine::Golden;
use lpgen_train::trainer::{self, EpochMetrics, Plan};

mod common;
use common::write_dataset;

fn config(f: &str) -> Config {
    // An MX format trains f32 stages with MX products.
    let mx = f.parse::<lpgen_golden::mx::MxFormat>().ok();
    Config {
        quire: f.starts_with("posit"),
        kahan: if mx.is_some() {
            KahanPlaces::default()
        } else {
            KahanPlaces::all()
        },
        mx,
        batch: 5,
        lr: 0.5,
        momentum: 0.5,
        momentum_from: 2,
        schedule: Schedule::Halving {
            hold: 1,
            threshold: 0.5,
        },
        seed: 7,
        ..Config::new(
            Arch::mlp((1, 4, 4), &[8], Activation::Sigmoid, 10),
            Stages::all(if mx.is_some() {
                lpgen_golden::Format::F32(lpgen_golden::F32)
            } else {
                f.parse().unwrap()
            }),
        )
    }
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-train-{}-{name}", std::process::id()))
}

#[test]
fn a_resumed_run_ends_bit_identical_to_an_uninterrupted_one() {
    let ds = tmp("ds");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    for (f, adaptive) in [
        ("lns:5:6", false),
        ("posit:16", false),
        ("fix:7:8", true),
        ("mx:fp8:e4m3:b4", true),
    ] {
        let mut cfg = config(f);
        if adaptive {
            // Optimizer state and dropout masks must survive the resume too.
            cfg.optimizer = Optimizer::RmsProp {
                decay: 0.9,
                eps: 1e-8,
            };
            cfg.lr = 0.05;
            cfg.momentum = 0.0;
            cfg.arch.layers.insert(0, Layer::Dropout { p: 0.1 });
            cfg.arch.layers.insert(3, Layer::Dropout { p: 0.2 });
        }
        let plan = |out: &Path, epochs, resume| Plan {
            epochs,
            max_steps: None,
            out: out.to_path_buf(),
            resume,
            progress: false,
        };
        let (a, b) = (tmp("a"), tmp("b"));
        let mut lines = vec![];
        let mut report = |l: &str| {
            lines.push(l.to_string());
            Ok(())
        };
        let whole = trainer::run(
            &mut Golden::default(),
            &cfg,
            &train,
            &test,
            &plan(&a, 3, false),
            &mut report,
        )
        .unwrap();
        let mut sink = |_: &str| Ok(());
        trainer::run(
            &mut Golden::default(),
            &cfg,
            &train,
            &test,
            &plan(&b, 1, false),
            &mut sink,
        )
        .unwrap();
        let resumed = trainer::run(
            &mut Golden::default(),
            &cfg,
            &train,
            &test,
            &plan(&b, 3, true),
            &mut sink,
        )
        .unwrap();
        assert_eq!(whole.model, resumed.model, "{f}");
        assert_eq!(
            (whole.lr, whole.halving),
            (resumed.lr, resumed.halving),
            "{f}"
        );
        // The loss fell and the schedule halved the rate (threshold 0.5 forces it).
        let loss = |l: &str| -> f64 { EpochMetrics::from_json(l).unwrap().train_loss };
        assert!(loss(&lines[2]) < loss(&lines[0]), "{f}: {lines:?}");
        assert!(whole.lr < cfg.lr, "{f}");
        assert!(b.join("plot.png").is_file() && b.join("metrics.jsonl").is_file());
        // Another configuration may not resume this checkpoint.
        let mut other = cfg.clone();
        other.lr = 0.25;
        if other.mx.is_some() {
            // Nor another block format.
            other.lr = cfg.lr;
            other.mx = Some("mx:fp8:e5m2:b4".parse().unwrap());
        }
        let e = trainer::run(
            &mut Golden::default(),
            &other,
            &train,
            &test,
            &plan(&b, 4, true),
            &mut sink,
        )
        .unwrap_err();
        assert!(
            e.0.contains("another configuration") && !e.0.contains('\n'),
            "{e}"
        );
        for d in [a, b] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    // A damaged dataset is refused in one line.
    let img = ds.join("train-images-idx3-ubyte");
    let bytes = std::fs::read(&img).unwrap();
    std::fs::write(&img, &bytes[..bytes.len() - 3]).unwrap();
    let e = data::load(&ds, Split::Train).unwrap_err();
    assert!(e.0.contains("do not match") && !e.0.contains('\n'), "{e}");
    let _ = std::fs::remove_dir_all(&ds);
}
