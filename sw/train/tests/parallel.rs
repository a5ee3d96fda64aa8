//! Data-parallel training on the local transport (seed 001): deterministic for a given K
//! whatever the threads' timing, one worker exchanging words is the plain run word for word,
//! error feedback changes the result, and the bytes sent are the analytic count; AdaGrad's
//! three places (seed 001 §4) agree where they must and differ where they must.

use std::path::{Path, PathBuf};

use lpgen_comm::partition;
use lpgen_golden::onebit::message_bytes;
use lpgen_golden::q8::TensorScale;
use lpgen_train::arch::Arch;
use lpgen_train::checkpoint::State;
use lpgen_train::config::{Activation, AdaGradAt, Config, Optimizer, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::machine::Golden;
use lpgen_train::model::Model;
use lpgen_train::parallel::{Exchange, Sharing, Worker};
use lpgen_train::trainer::{self, EpochMetrics, Plan};
use lpgen_train::TrainError;

mod common;
use common::write_dataset;

fn config(f: &str) -> Config {
    Config {
        quire: f.starts_with("posit"),
        batch: 10,
        lr: 0.5,
        momentum: 0.5,
        seed: 3,
        ..Config::new(
            Arch::mlp((1, 4, 4), &[8], Activation::Sigmoid, 10),
            Stages::all(f.parse().unwrap()),
        )
    }
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-parallel-{}-{name}", std::process::id()))
}

fn plan(out: &Path) -> Plan {
    Plan {
        epochs: 2,
        max_steps: None,
        out: out.to_path_buf(),
        resume: false,
        progress: false,
    }
}

/// Trains with `k` workers on threads; returns rank 0's model and metrics lines.
fn train_k(
    cfg: &Config,
    data: (&Dataset, &Dataset),
    k: usize,
    exchange: impl Into<Sharing>,
    out: &Path,
) -> (Model, Vec<EpochMetrics>) {
    train_plan(cfg, data, k, exchange.into(), &plan(out))
}

/// [`train_k`] with a plan.
fn train_plan(
    cfg: &Config,
    data: (&Dataset, &Dataset),
    k: usize,
    exchange: Sharing,
    plan: &Plan,
) -> (Model, Vec<EpochMetrics>) {
    let mut states = try_train(cfg, data, k, exchange, plan)
        .into_iter()
        .map(|r| r.unwrap());
    let first = states.next().unwrap();
    for other in states {
        assert_eq!(other.model, first.model, "a worker's model differs");
    }
    (first.model, first.history)
}

/// Every worker's outcome, in rank order.
fn try_train(
    cfg: &Config,
    data: (&Dataset, &Dataset),
    k: usize,
    exchange: Sharing,
    plan: &Plan,
) -> Vec<Result<State, TrainError>> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = lpgen_comm::local(k)
            .into_iter()
            .map(|mut t| {
                scope.spawn(move || {
                    let mut w = Worker::new(&mut t, exchange);
                    trainer::run_worker(
                        &mut Golden::default(),
                        cfg,
                        data.0,
                        data.1,
                        plan,
                        Some(&mut w),
                        &mut |_| Ok(()),
                    )
                })
            })
            .collect();
        workers.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn data_parallel_training_is_deterministic_and_exchanges_the_analytic_bytes() {
    let ds = tmp("ds");
    write_dataset(&ds, 60);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    for f in ["f32", "lns:5:6", "posit:16:1"] {
        let cfg = config(f);
        let out = tmp(&format!("out-{}", f.replace(':', "_")));
        let one_bit = Exchange::OneBit { feedback: true };
        // K = 2 twice: the same words, whatever the threads' timing.
        let (a, history) = train_k(&cfg, data, 2, one_bit, &out);
        let (b, _) = train_k(&cfg, data, 2, one_bit, &out);
        assert_eq!(a, b, "{f}: two K = 2 runs differ");
        // Without error feedback the result differs.
        let (nf, _) = train_k(&cfg, data, 2, Exchange::OneBit { feedback: false }, &out);
        assert_ne!(a, nf, "{f}: error feedback changed nothing");
        // One worker exchanging words is the plain run.
        let (single, _) = train_k(&cfg, data, 1, Exchange::Words, &out);
        let plain = trainer::run(
            &mut Golden::default(),
            &cfg,
            &train,
            &test,
            &plan(&out),
            &mut |_| Ok(()),
        )
        .unwrap()
        .model;
        assert_eq!(single, plain, "{f}: one worker differs from the plain run");
        // Bytes per worker and step: to the peer its stripe of each quantized matrix in the
        // reduce-scatter, and its own stripe in the all-gather (the bias is one column).
        let format = cfg.stages.g;
        let mut sent = 0;
        for rank in 0..2 {
            for (rows, cols) in [(8, 16), (8, 1), (10, 8), (10, 1)] {
                let peer = partition(cols, 2, 1 - rank).len();
                let own = partition(cols, 2, rank).len();
                sent += message_bytes(format, rows, peer) + message_bytes(format, rows, own);
            }
        }
        let measured = history[0].bytes_sent_per_step.unwrap();
        assert_eq!(measured, sent as f64 / 2.0, "{f}");
        // The compression ratio: what the words would have taken over what was sent; the
        // words themselves are 1 (so the ratio's numerator is the words' measured traffic).
        // As words, each of the two workers sends the whole matrix once (the peer's stripe,
        // then its own).
        let vb = lpgen_golden::onebit::value_bytes(format);
        let words: usize = [(8, 16), (8, 1), (10, 8), (10, 1)]
            .iter()
            .map(|&(rows, cols)| 2 * vb * rows * cols)
            .sum();
        let ratio = history[0].compression_ratio.unwrap();
        assert!(
            (ratio - words as f64 / sent as f64).abs() < 1e-12,
            "{f}: {ratio}"
        );
        let (_, words_history) = train_k(&cfg, data, 2, Exchange::Words, &out);
        assert_eq!(words_history[0].compression_ratio, Some(1.0), "{f}");
        assert_eq!(
            words_history[0].bytes_sent_per_step,
            Some(words as f64 / 2.0),
            "{f}"
        );
        // The 8-bit exchange: deterministic, not the words' result, and a scale (a word of
        // fix and posit formats, an f32 otherwise) and one byte per word in each message.
        let q8 = Exchange::Q8("q8:dynamic-tree".parse().unwrap());
        let (q, q_history) = train_k(&cfg, data, 2, q8, &out);
        assert_eq!(
            q,
            train_k(&cfg, data, 2, q8, &out).0,
            "{f}: two q8 runs differ"
        );
        assert_ne!(
            q,
            train_k(&cfg, data, 2, Exchange::Words, &out).0,
            "{f}: q8"
        );
        let mut sent = 0;
        for rank in 0..2 {
            for (rows, cols) in [(8, 16), (8, 1), (10, 8), (10, 1)] {
                let peer = partition(cols, 2, 1 - rank).len();
                let own = partition(cols, 2, rank).len();
                let head = TensorScale::byte_len(cfg.stages.g);
                sent += (head + rows * peer) + (head + rows * own);
            }
        }
        assert_eq!(
            q_history[0].bytes_sent_per_step.unwrap(),
            sent as f64 / 2.0,
            "{f}"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&ds);
}

/// `--adagrad-at`: with one worker, normalizing locally or at the aggregate is the plain
/// AdaGrad run word for word (in f32 and posit:16:1, where G and O agree); with two workers
/// the three places give three different, reproducible results; after momentum with μ = 0 is
/// the plain run too.
#[test]
fn adagrad_places_agree_where_they_must() {
    let ds = tmp("ds-adagrad");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    for f in ["f32", "posit:16:1"] {
        let out = tmp(&format!("adagrad-{}", f.replace(':', "_")));
        let with = |at, momentum| {
            let mut cfg = config(f);
            cfg.optimizer = Optimizer::AdaGrad { eps: 1e-8, at };
            cfg.lr = 0.05;
            cfg.momentum = momentum;
            cfg
        };
        let plain = |cfg: &Config| {
            trainer::run(
                &mut Golden::default(),
                cfg,
                &train,
                &test,
                &plan(&out),
                &mut |_| Ok(()),
            )
            .unwrap()
            .model
        };
        let reference = plain(&with(AdaGradAt::Aggregate, 0.9));
        assert_ne!(reference, Model::init(&with(AdaGradAt::Aggregate, 0.9)));
        // With workers the AdaGrad state lives on the worker, not in the model.
        let without_state = |mut m: Model| {
            for l in &mut m.layers {
                (l.rw, l.rb) = (vec![], vec![]);
            }
            m
        };
        for at in [AdaGradAt::Local, AdaGradAt::Aggregate] {
            let (one, _) = train_k(&with(at, 0.9), data, 1, Exchange::Words, &out);
            assert!(
                without_state(one) == without_state(reference.clone()),
                "{f}: {at:?} with one worker differs from the plain run"
            );
        }
        // (the smoothed gradient is kept in the momentum state, so compare W and b).
        let weights = |m: Model| -> Vec<_> { m.layers.into_iter().map(|l| (l.w, l.b)).collect() };
        assert!(
            weights(plain(&with(AdaGradAt::Momentum, 0.0)))
                == weights(plain(&with(AdaGradAt::Aggregate, 0.0))),
            "{f}: after momentum with μ = 0 differs from the plain run"
        );
        let one_bit = Exchange::OneBit { feedback: true };
        let runs: Vec<Model> = [AdaGradAt::Local, AdaGradAt::Aggregate, AdaGradAt::Momentum]
            .into_iter()
            .map(|at| {
                let (a, _) = train_k(&with(at, 0.9), data, 2, one_bit, &out);
                let (b, _) = train_k(&with(at, 0.9), data, 2, one_bit, &out);
                assert!(a == b, "{f}: {at:?} twice");
                a
            })
            .collect();
        assert!(
            runs[0] != runs[1] && runs[1] != runs[2] && runs[0] != runs[2],
            "{f}: two places gave the same weights"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&ds);
}

/// `--double-buffer`: reproducible for K = 2; over one minibatch with μ = 0 the two half
/// updates are the one update of the whole minibatch up to f32 rounding (the halves'
/// gradients are both taken on the same model, the second applied at the epoch's end), but
/// not word for word; over whole epochs the delayed updates give other weights.
#[test]
fn double_buffering_applies_each_half_one_half_late() {
    let ds = tmp("ds-db");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    let out = tmp("db");
    let mut cfg = config("f32");
    cfg.momentum = 0.0;
    let words = Sharing::from(Exchange::Words);
    let halves = Sharing {
        double_buffer: true,
        ..words
    };
    let one_step = Plan {
        epochs: 1,
        max_steps: Some(1),
        ..plan(&out)
    };
    let (whole, _) = train_plan(&cfg, data, 1, words, &one_step);
    let (split, _) = train_plan(&cfg, data, 1, halves, &one_step);
    assert!(whole != split, "the halves changed nothing");
    for (a, b) in whole.layers.iter().zip(&split.layers) {
        for (&x, &y) in a.w.data.iter().zip(&b.w.data).chain(a.b.iter().zip(&b.b)) {
            let (x, y) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
            assert!((x - y).abs() <= 1e-5 * x.abs().max(1.0), "{x} vs {y}");
        }
    }
    cfg.momentum = 0.5;
    let (a, _) = train_k(&cfg, data, 2, halves, &out);
    let (b, _) = train_k(&cfg, data, 2, halves, &out);
    assert!(a == b, "two double-buffered K = 2 runs differ");
    assert!(a != train_k(&cfg, data, 2, words, &out).0, "no delay");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&ds);
}

/// Overlapped double buffering (each half's exchange on a communication thread while the next
/// half is computed) gives the turn-taking rule's model word for word and the same training
/// figures, over every exchange, with AdaGrad normalizing on the workers (machine operations in
/// the exchange) and without, for K = 1..3, odd minibatches and uneven shares included.
#[test]
fn overlapped_double_buffering_gives_the_turn_taking_models_word_for_word() {
    let ds = tmp("ds-overlap");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    let out = tmp("overlap");
    let adagrad = |at| Optimizer::AdaGrad { eps: 1e-8, at };
    let q8 = Exchange::Q8("q8:dynamic-tree".parse().unwrap());
    let cases = [
        ("f32", Exchange::Words, 2, Optimizer::Sgd, 10),
        (
            "f32",
            Exchange::OneBit { feedback: true },
            2,
            adagrad(AdaGradAt::Local),
            9,
        ),
        (
            "posit:16:1",
            Exchange::OneBit { feedback: true },
            3,
            adagrad(AdaGradAt::Aggregate),
            10,
        ),
        ("lns:5:6", q8, 1, Optimizer::Sgd, 7),
        (
            "fix:7:8",
            Exchange::Words,
            3,
            adagrad(AdaGradAt::Momentum),
            11,
        ),
    ];
    for (f, exchange, k, optimizer, batch) in cases {
        let mut cfg = config(f);
        cfg.optimizer = optimizer;
        cfg.batch = batch;
        if optimizer != Optimizer::Sgd {
            cfg.lr = 0.05;
        }
        let turns = Sharing {
            exchange,
            double_buffer: true,
            overlap: false,
        };
        let overlapped = Sharing {
            overlap: true,
            ..turns
        };
        let (a, ha) = train_k(&cfg, data, k, turns, &out);
        let (b, hb) = train_k(&cfg, data, k, overlapped, &out);
        let what = format!("{f}, {exchange}, K = {k}, {optimizer:?}, batch {batch}");
        assert!(a == b, "{what}: the overlapped model differs");
        let figures = |h: &[EpochMetrics]| -> Vec<[u64; 4]> {
            h.iter()
                .map(|m| [m.train_loss, m.train_acc, m.test_loss, m.test_acc].map(f64::to_bits))
                .collect()
        };
        assert_eq!(figures(&ha), figures(&hb), "{what}: figures");
        assert_eq!(
            ha.iter().map(|m| m.bytes_sent_per_step).collect::<Vec<_>>(),
            hb.iter().map(|m| m.bytes_sent_per_step).collect::<Vec<_>>(),
            "{what}: bytes"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&ds);
}

/// `--resume` with workers: each worker's residuals and AdaGrad squares are written beside the
/// checkpoint every epoch, so a run stopped after epoch 1 and resumed ends word for word as
/// the uninterrupted run (K = 2, 1-bit exchange with error feedback, AdaGrad at the
/// aggregate, whose squares live on the workers); a missing worker state is refused in one line.
#[test]
fn a_resumed_data_parallel_run_ends_as_the_uninterrupted_one() {
    let ds = tmp("ds-resume");
    write_dataset(&ds, 40);
    let train = data::load(&ds, Split::Train).unwrap();
    let test = data::load(&ds, Split::Test).unwrap();
    let data = (&train, &test);
    let mut cfg = config("posit:16:1");
    cfg.optimizer = Optimizer::AdaGrad {
        eps: 1e-8,
        at: AdaGradAt::Aggregate,
    };
    cfg.lr = 0.05;
    let sharing = Sharing::from(Exchange::OneBit { feedback: true });
    let (a, b) = (tmp("resume-a"), tmp("resume-b"));
    let run = |out: &Path, epochs, resume| {
        let plan = Plan {
            epochs,
            resume,
            ..plan(out)
        };
        train_plan(&cfg, data, 2, sharing, &plan)
    };
    let (whole, _) = run(&a, 3, false);
    run(&b, 1, false);
    let (resumed, history) = run(&b, 3, true);
    assert!(whole == resumed, "the resumed run differs");
    assert_eq!(history.len(), 3);
    // Only the last epoch's worker states remain.
    let mut names: Vec<String> = std::fs::read_dir(&b)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("worker-"))
        .collect();
    names.sort();
    assert_eq!(names, ["worker-0-e3.lpck", "worker-1-e3.lpck"]);
    // A checkpoint whose worker state is gone is refused, in one line, by that worker; the
    // other stops when its peer does (no hang).
    std::fs::remove_file(b.join("worker-1-e3.lpck")).unwrap();
    let plan4 = Plan {
        epochs: 4,
        resume: true,
        ..plan(&b)
    };
    let results = try_train(&cfg, data, 2, sharing, &plan4);
    let e = results[1].as_ref().unwrap_err().0.clone();
    assert!(e.contains("worker-1-e3.lpck") && !e.contains('\n'), "{e}");
    assert!(results[0].is_err(), "rank 0 went on without its peer");
    for d in [&a, &b, &ds] {
        let _ = std::fs::remove_dir_all(d);
    }
}
