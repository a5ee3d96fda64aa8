//! Training throughput per backend, side by side in one run: samples per second of SGD steps
//! of a 784-100-10 sigmoid MLP (batch 20) on MNIST-10k (the bundled data/mnist-300 if the
//! shared datasets are absent).
//!
//!   cargo run --release -p lpgen-train --example throughput [-- STEPS]

use std::path::Path;
use std::time::Instant;

use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, KahanPlaces, Normalize, Stages};
use lpgen_train::data::{self, Split};
use lpgen_train::machine::{Checked, Golden, Machine};
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};

/// Builds a fresh machine for a run.
type MakeMachine = Box<dyn Fn() -> Box<dyn Machine<Word = u64> + Send>>;

fn config(f: &str, quire: bool) -> Config {
    let stages = Stages::all(f.parse().unwrap());
    Config {
        quire,
        kahan: if f.starts_with("lns") {
            KahanPlaces::all()
        } else {
            KahanPlaces::default()
        },
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[100], Activation::Sigmoid, 10),
            stages,
        )
    }
}

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/mnist-10k");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let ds = if shared.is_dir() { shared } else { bundled };
    let train = data::load(&ds, Split::Train).expect("dataset");
    let mut test = data::load(&ds, Split::Test).expect("dataset");
    test.truncate(20);
    println!(
        "{steps} SGD steps of 784-100-10 sigmoid, batch 20, on {} (test pass of 20 samples excluded)",
        ds.display()
    );
    let rtl = || Rtl::new(8, 8, 16).expect("Verilator (scripts/setup.sh)");
    let runs: Vec<(&str, &str, bool, MakeMachine)> = vec![
        (
            "f32",
            "f32",
            false,
            Box::new(|| Box::new(Golden::new("f32", None))),
        ),
        (
            "golden",
            "lns:5:6",
            false,
            Box::new(|| Box::new(Golden::new("golden", None))),
        ),
        (
            "golden",
            "posit:8:2",
            true,
            Box::new(|| Box::new(Golden::new("golden", None))),
        ),
        (
            "golden",
            "fix:7:8",
            false,
            Box::new(|| Box::new(Golden::new("golden", None))),
        ),
        (
            "rtl 8x8/16",
            "lns:5:6",
            false,
            Box::new(move || Box::new(rtl())),
        ),
        (
            "rtl 8x8/16",
            "posit:8:2",
            true,
            Box::new(move || Box::new(rtl())),
        ),
        (
            "rtl+check",
            "lns:5:6",
            false,
            Box::new(move || {
                Box::new(Checked {
                    dut: rtl(),
                    reference: Golden::new("golden", None),
                    ops: 0,
                })
            }),
        ),
    ];
    for (name, f, quire, make) in runs {
        let cfg = config(f, quire);
        let out = std::env::temp_dir().join(format!("lpgen-throughput-{}", std::process::id()));
        let plan = |steps| Plan {
            epochs: 1,
            max_steps: Some(steps),
            out: out.clone(),
            resume: false,
            progress: false,
        };
        // One warm-up step builds (or loads) the designs; then the timed steps.
        let mut m = make();
        let mut sink = |_: &str| Ok(());
        trainer::run(&mut m, &cfg, &train, &test, &plan(1), &mut sink).expect("warm-up");
        let mut m = make();
        let t = Instant::now();
        trainer::run(&mut m, &cfg, &train, &test, &plan(steps), &mut sink).expect("run");
        let secs = t.elapsed().as_secs_f64();
        println!(
            "  {name:<11} {f:<10} {:>9.1} samples/s  ({secs:.2} s)",
            (steps * cfg.batch) as f64 / secs
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}
