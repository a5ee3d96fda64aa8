//! Seed 002's low-precision storage in training (`--format dfix:P:U`): the parameters a run
//! ends with lie on their groups' grids, the scales move and are reported, a resumed run ends
//! word for word like an uninterrupted one (the scales are in the checkpoint), and the
//! max-norm constraint holds. Float storage (`--format store:f16`): the values it keeps are
//! binary16's, rounded as the `half` crate rounds.

use std::path::{Path, PathBuf};

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::Family;
use lpgen_golden::{Format, F32};
use lpgen_train::arch::{Arch, Layer};
use lpgen_train::config::{Activation, Config, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::float::Float;
use lpgen_train::storage::{DfixConfig, FloatConfig, Role, Storage, StorageConfig};
use lpgen_train::trainer::{self, EpochMetrics, Plan};

mod common;
use common::write_dataset;

fn config(storage: Option<StorageConfig>) -> Config {
    let mut arch = Arch::mlp((1, 4, 4), &[8], Activation::Relu, 10);
    arch.layers.insert(0, Layer::Dropout { p: 0.1 });
    Config {
        storage,
        batch: 5,
        lr: 0.2,
        momentum: 0.5,
        seed: 3,
        ..Config::new(arch, Stages::all(Format::F32(F32)))
    }
}

fn dfix(p: u32, u: u32, radix_point: Option<u32>) -> StorageConfig {
    StorageConfig::Dfix(DfixConfig {
        propagation: DfixFormat::new(p).unwrap(),
        update: DfixFormat::new(u).unwrap(),
        scale_every: 20,
        max_overflow: 0.01,
        radix_point,
        exact_products: false,
    })
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

fn float(spec: &str) -> StorageConfig {
    StorageConfig::Float(FloatConfig::parse(spec).unwrap())
}

/// binary16's nearest value of `x` by the `half` crate (an implementation of IEEE 754's
/// conversion independent of lpgen's golden model).
fn half_rounded(x: f32) -> f32 {
    half::f16::from_f32(x).to_f32()
}

/// `--format store:f16` (seed 002's half precision row): every parameter and velocity a run
/// ends with is a binary16 value, by the `half` crate; the run reports no scales; resumed
/// after an epoch it ends word for word as the uninterrupted run (the checkpoint's storage
/// line round-trips), and the rounding changed training.
#[test]
fn half_precision_storage_keeps_binary16_values_and_resumes_exactly() {
    let (train, test) = data("half");
    let cfg = config(Some(float("f16")));
    let (a, b) = (tmp("half-a"), tmp("half-b"));
    let mut lines = vec![];
    let mut report = |l: &str| {
        lines.push(l.to_string());
        Ok(())
    };
    let run = |plan: &Plan, sink: &mut dyn FnMut(&str) -> Result<(), _>| {
        trainer::run(&mut Float { threads: 1 }, &cfg, &train, &test, plan, sink).unwrap()
    };
    let whole = run(&plan(&a, 3, false), &mut report);
    let mut stored = 0;
    for p in &whole.model.layers {
        for words in [&p.w.data, &p.b, &p.vw, &p.vb] {
            for &w in words {
                assert_eq!(w.to_bits(), half_rounded(w).to_bits(), "{w} is not an f16");
                stored += usize::from(w != 0.0);
            }
        }
    }
    assert!(stored > 100, "{stored} nonzero stored values");
    for l in &lines {
        let m = EpochMetrics::from_json(l).unwrap();
        assert_eq!(m.scales, None, "a float has no scales");
        assert_eq!(m.overflow_rate, Some(0.0));
    }
    let mut sink = |_: &str| Ok(());
    run(&plan(&b, 1, false), &mut sink);
    let resumed = run(&plan(&b, 3, true), &mut sink);
    assert_eq!(whole.model, resumed.model);
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

/// The rounding of f16 storage against the `half` crate and the golden model's binary16
/// (`lpgen_golden` `FloatFormat` of `f16`), on the values an unrounded tiny run stores (its
/// weights, biases and velocities) and on 2^16 random f32 words spread over binary16's range
/// and beyond (subnormals, ties, overflow), bit for bit.
#[test]
fn f16_storage_rounds_as_the_half_crate_and_golden_binary16() {
    let (train, test) = data("half-values");
    let out = tmp("half-values");
    let plain = trainer::run(
        &mut Float { threads: 1 },
        &config(None),
        &train,
        &test,
        &plan(&out, 2, false),
        &mut |_| Ok(()),
    )
    .unwrap();
    let mut values: Vec<f32> = plain
        .model
        .layers
        .iter()
        .flat_map(|p| {
            [&p.w.data, &p.b, &p.vw, &p.vb]
                .into_iter()
                .flatten()
                .copied()
        })
        .collect();
    let run_values = values.len();
    // From 2^−30 to 2^17 (below the smallest subnormal to beyond 65504); every fourth word
    // ends in a tie at binary16's fraction width.
    values.extend(random_f32s(0x9e37_79b9_7f4a_7c15, 1 << 16, (-30, 48), true));
    let golden: lpgen_golden::float::FloatFormat = match "f16".parse::<Format>().unwrap() {
        Format::Float(f) => f,
        other => panic!("f16 is {other:?}"),
    };
    let stored = stored_f16(&values, None);
    for (&x, &y) in values.iter().zip(&stored) {
        assert_eq!(
            y.to_bits(),
            half_rounded(x).to_bits(),
            "{x:e}: stored {y:e}"
        );
        let g = golden.to_f64(golden.from_f64(x as f64)) as f32;
        assert_eq!(y.to_bits(), g.to_bits(), "{x:e}: golden {g:e}");
    }
    assert!(run_values > 100 && stored.iter().any(|y| y.is_infinite()));
    assert!(
        stored.iter().any(|&y| y != 0.0 && y.abs() < 2f32.powi(-14)),
        "subnormals"
    );
    let _ = std::fs::remove_dir_all(out);
}

/// `n` f32 words from an LCG seeded `seed`: random signs and fractions, binary exponents
/// from `lo` to `lo + span − 1`; with `ties`, every fourth word ends in a tie at binary16's
/// fraction width.
fn random_f32s(seed: u64, n: usize, (lo, span): (i32, u32), ties: bool) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (state >> 32) as u32;
            let exp = (127 + lo) as u32 + (r >> 8) % span;
            let mut frac = (state >> 8) as u32 & 0x7f_ffff;
            if ties && r & 3 == 0 {
                frac = (frac & !0x1fff) | 0x1000;
            }
            f32::from_bits((r & 1) << 31 | exp << 23 | frac)
        })
        .collect()
}

/// `values` stored as weighted sums in `store:f16` storage (a training pass), rounded with
/// `draws` when given.
fn stored_f16(values: &[f32], draws: Option<&lpgen_train::rounding::Draws>) -> Vec<f32> {
    let mut stored = values.to_vec();
    let mut s = Storage::new(float("f16"), 1);
    s.store(
        Format::F32(F32),
        (0, Role::WeightedSum),
        &mut stored,
        (true, draws),
    )
    .unwrap();
    stored
}

/// The golden stream's draw at `state`: one xorshift32 step (13, 17, 5; Marsaglia 2003), the
/// top `r` bits of the new state (docs/formats.md, "Stochastic rounding").
fn draw(state: u32, r: u32) -> u64 {
    let mut x = state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    u64::from(x >> (32 - r))
}

/// `--format store:f16 --rounding stochastic:8`: each stored value is one of its two binary16
/// neighbours, the one farther from zero exactly when d + r ≥ 2^8 (d: the top 8 bits of the
/// distance past the nearer-to-zero neighbour in units of the step between them; r: the
/// stream's draw). The neighbours come from the `half` crate and the bit pattern, the rule from
/// the documentation's words: not from the golden model.
#[test]
fn stochastic_f16_storage_steps_by_the_stream() {
    const R: u32 = 8;
    // From below binary16's smallest subnormal (2^−24) to below its largest value.
    let mut values = random_f32s(0x2545_f491_4f6c_dd1d, 1 << 14, (-28, 43), false);
    values.extend([1.0, -0.5, 0.0, 1.0 + 2f32.powi(-11), 3.0 * 2f32.powi(-26)]);
    let mut stream = lpgen_train::rounding::Stream::new(lpgen_golden::Rounding::Stochastic(R), 11);
    let draws = stream.take(values.len());
    let stored = stored_f16(&values, Some(&draws));
    let (mut ups, mut inexact) = (0, 0);
    for (i, (&x, &y)) in values.iter().zip(&stored).enumerate() {
        let near = half::f16::from_f32(x);
        // The neighbour toward zero and the one away from it (magnitudes as bit patterns).
        let lo = if near.to_f32().abs() <= x.abs() {
            near
        } else {
            half::f16::from_bits(near.to_bits() - 1)
        };
        let hi = half::f16::from_bits(lo.to_bits() + 1);
        let (a, b) = (f64::from(lo.to_f32().abs()), f64::from(hi.to_f32().abs()));
        let past = (f64::from(x.abs()) - a) / (b - a);
        assert!((0.0..1.0).contains(&past), "{x:e}: {a:e} {b:e}");
        let d = (past * f64::from(1u32 << R)).floor() as u64;
        let up = d + draw(draws.states[i], R) >= 1 << R;
        let want = if up { hi } else { lo }.to_f32();
        assert_eq!(y.to_bits(), want.to_bits(), "{x:e}: stored {y:e}, d {d}");
        inexact += usize::from(past > 0.0);
        ups += usize::from(up);
    }
    // Both ways are taken, and about as often as the distances say (not always the nearer).
    assert!(
        inexact > 15_000 && ups > 4_000 && ups < inexact - 4_000,
        "{ups} of {inexact}"
    );
}

/// A run with stochastic float storage keeps binary16 values, resumes word for word (the
/// stream is in the checkpoint), and differs from the run that rounds to nearest; dfix storage
/// refuses the stream.
#[test]
fn stochastic_half_storage_trains_resumes_and_differs_from_nearest() {
    let (train, test) = data("half-sr");
    let mut cfg = config(Some(float("f16")));
    cfg.rounding = lpgen_golden::Rounding::Stochastic(8);
    let (a, b) = (tmp("half-sr-a"), tmp("half-sr-b"));
    let mut sink = |_: &str| Ok(());
    let run = |cfg: &Config, plan: &Plan, sink: &mut dyn FnMut(&str) -> Result<(), _>| {
        trainer::run(&mut Float { threads: 1 }, cfg, &train, &test, plan, sink)
    };
    let whole = run(&cfg, &plan(&a, 3, false), &mut sink).unwrap();
    for p in &whole.model.layers {
        for &w in p.w.data.iter().chain(&p.b).chain(&p.vw).chain(&p.vb) {
            assert_eq!(w.to_bits(), half_rounded(w).to_bits(), "{w} is not an f16");
        }
    }
    run(&cfg, &plan(&b, 1, false), &mut sink).unwrap();
    let resumed = run(&cfg, &plan(&b, 3, true), &mut sink).unwrap();
    assert_eq!(whole.model, resumed.model);
    let nearest = run(&config(Some(float("f16"))), &plan(&b, 3, false), &mut sink).unwrap();
    assert_ne!(nearest.model, whole.model);
    let mut dfix_sr = config(Some(dfix(8, 8, None)));
    dfix_sr.rounding = lpgen_golden::Rounding::Stochastic(8);
    let e = run(&dfix_sr, &plan(&b, 1, false), &mut sink).unwrap_err().0;
    assert!(e.contains("no stochastic rounding"), "{e}");
    for d in [a, b] {
        let _ = std::fs::remove_dir_all(d);
    }
}
