//! Seed 001 §2.1 eq. (4) on this machine: the optimal number of data-parallel nodes
//!
//!   K̂ = (N/2·T_frm + C·T_post) / (T_comm/Z − T_upd)
//!
//! from measured costs of seed 000's 784-512-10 sigmoid MLP in f32 on one thread:
//! - T_frm: forward and backward pass per sample (`Net::gradients` over a batch, averaged);
//! - T_post and T_upd: one component-wise pass over the M parameters (a lane addition; the
//!   paper's post-processing and update are such passes, memory-bound), C = 3 (momentum and
//!   AdaGrad's accumulation and application, as the paper counts);
//! - T_comm/Z: one exchange of the whole gradient between two workers on the local transport
//!   (reduce-scatter and all-gather of every matrix), measured for words (Z = 1) and for the
//!   1-bit exchange itself (its quantization's compute included, so Z is not assumed).
//!
//! Then it trains STEPS minibatches with K = 1 and with K = 2 workers (1-bit exchange) and
//! prints the time per step side by side: the same run, the same load.
//!
//!   cargo run --release -p lpgen-train --example khat [-- STEPS]
//!
//! With `--overlap` it then measures §2.2's point instead: K = 2 workers with double buffering,
//! each half's exchange taken in turn with the computation and overlapped with the next half's,
//! ROUNDS times each alternately (the machine is shared: the ratio of the two, measured side by
//! side, is the figure), beside K = 1 alone; checks that both double-buffered runs end with the
//! same model word for word; and prints eq. (4)'s prediction of each time per step:
//! T(1) = N·T_frm + C·T_post + T_upd, and per half-minibatch at K workers
//! calc = (N/2·T_frm + C·T_post)/K + T_upd and comm = T_comm/Z, in turn calc + comm,
//! overlapped max(calc, comm). Options: `--batch N` (default 20), `--words` (exchange 32-bit
//! words instead of 1-bit codes), `--dataset DIR` (default: mnist-10k), `--link MB/s` (the local transport's simulated wires,
//! `lpgen_comm::local_with_link`; default none: the exchange is the host's own work), `--rounds R`.
//!
//!   cargo run --release -p lpgen-train --example khat -- 40 --overlap --words --batch 256 --link 200

use std::path::Path;
use std::time::Instant;

use lpgen_comm::exchange;
use lpgen_comm::{local, local_with_link, LocalTransport, Transport};
use lpgen_golden::onebit::Quantizer;
use lpgen_golden::{AluOp, Format, SumMode, F32};
use lpgen_train::arch::Arch;
use lpgen_train::checkpoint::State;
use lpgen_train::config::{Activation, Config, Normalize, Stages};
use lpgen_train::data::{self, Dataset, Split};
use lpgen_train::float::Float;
use lpgen_train::machine::{Machine, Mat};
use lpgen_train::model::Model;
use lpgen_train::net::Net;
use lpgen_train::parallel::{Exchange, Sharing, Worker};
use lpgen_train::trainer::{self, Plan};

/// Post-processing passes per step (momentum, AdaGrad's accumulation and its application).
const POST_PASSES: f64 = 3.0;

fn config(batch: usize) -> Config {
    Config {
        batch,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[512], Activation::Sigmoid, 10),
            Stages::all(Format::F32(F32)),
        )
    }
}

/// The best of `reps` timings of `f`, in seconds (the least disturbed by other load).
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Two local endpoints, over simulated wires of `link` MB/s if given.
fn ends(k: usize, link: Option<f64>) -> Vec<LocalTransport> {
    match link {
        Some(mb) => local_with_link(k, mb * 1e6),
        None => local(k),
    }
}

/// Seconds of one exchange of every matrix of `shapes` between two workers.
fn exchange_seconds(
    shapes: &[(usize, usize)],
    one_bit: bool,
    reps: usize,
    link: Option<f64>,
) -> f64 {
    let quantizer = Quantizer::new(Format::F32(F32), SumMode::Naive).expect("f32");
    let c = Format::F32(F32).calc();
    let times: Vec<f64> = std::thread::scope(|scope| {
        let handles: Vec<_> = ends(2, link)
            .into_iter()
            .map(|mut t| {
                let quantizer = &quantizer;
                let c = &c;
                scope.spawn(move || {
                    let grads: Vec<Vec<u64>> = shapes
                        .iter()
                        .map(|&(r, k)| {
                            (0..r * k)
                                .map(|i| c.from_f64(((i * 37 % 101) as f64 - 50.0) / 1e3))
                                .collect()
                        })
                        .collect();
                    let mut residuals: Vec<Vec<u64>> =
                        grads.iter().map(|g| vec![c.zero(); g.len()]).collect();
                    let mut owner: Vec<Vec<u64>> = shapes
                        .iter()
                        .map(|&(r, k)| vec![c.zero(); r * exchange::my_columns(&t, k).len()])
                        .collect();
                    best(reps, || {
                        t.barrier().expect("barrier");
                        for (i, &(rows, cols)) in shapes.iter().enumerate() {
                            if one_bit {
                                let (_, s) = exchange::reduce_scatter_1bit(
                                    &mut t,
                                    quantizer,
                                    &grads[i],
                                    rows,
                                    cols,
                                    Some(&mut residuals[i]),
                                )
                                .expect("exchange");
                                exchange::all_gather_1bit(
                                    &mut t,
                                    quantizer,
                                    &s,
                                    rows,
                                    cols,
                                    Some(&mut owner[i]),
                                )
                                .expect("exchange");
                            } else {
                                let (_, s) = exchange::reduce_scatter_words(
                                    &mut t,
                                    Format::F32(F32),
                                    SumMode::Naive,
                                    &grads[i],
                                    rows,
                                    cols,
                                )
                                .expect("exchange");
                                exchange::all_gather_words(
                                    &mut t,
                                    Format::F32(F32),
                                    &s,
                                    rows,
                                    cols,
                                )
                                .expect("exchange");
                            }
                        }
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    times.into_iter().fold(0.0, f64::max)
}

/// Measured seconds per step over `steps` steps, K = 1 and K = 2 (1-bit exchange), the same
/// minibatches.
fn measured_step_times(train: &Dataset, test: &Dataset, steps: usize) -> (f64, f64) {
    let cfg = config(20);
    let out = std::env::temp_dir().join(format!("lpgen-khat-{}", std::process::id()));
    let plan = Plan {
        epochs: 1,
        max_steps: Some(steps),
        out: out.clone(),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let t = Instant::now();
    trainer::run(
        &mut Float { threads: 1 },
        &cfg,
        train,
        test,
        &plan,
        &mut sink,
    )
    .expect("K = 1");
    let one = t.elapsed().as_secs_f64() / steps as f64;
    let t = Instant::now();
    std::thread::scope(|scope| {
        let mut ends = local(2);
        let mut second = ends.pop().expect("two ends");
        let (cfg, train, test, plan) = (&cfg, &train, &test, &plan);
        let other = scope.spawn(move || {
            let mut w = Worker::new(&mut second, Exchange::OneBit { feedback: true });
            let mut quiet = |_: &str| Ok(());
            trainer::run_worker(
                &mut Float { threads: 1 },
                cfg,
                train,
                test,
                plan,
                Some(&mut w),
                &mut quiet,
            )
            .expect("K = 2");
        });
        let mut w = Worker::new(&mut ends[0], Exchange::OneBit { feedback: true });
        trainer::run_worker(
            &mut Float { threads: 1 },
            cfg,
            train,
            test,
            plan,
            Some(&mut w),
            &mut sink,
        )
        .expect("K = 2");
        other.join().expect("worker");
    });
    let two = t.elapsed().as_secs_f64() / steps as f64;
    let _ = std::fs::remove_dir_all(&out);
    (one, two)
}

/// The command line: STEPS, then options (see the module's documentation).
struct Options {
    steps: usize,
    overlap: bool,
    batch: usize,
    words: bool,
    link: Option<f64>,
    rounds: usize,
    dataset: Option<std::path::PathBuf>,
}

fn options() -> Options {
    let mut o = Options {
        steps: 50,
        overlap: false,
        batch: 20,
        words: false,
        link: None,
        rounds: 3,
        dataset: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| -> f64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{a} takes {what}"))
        };
        match a.as_str() {
            "--overlap" => o.overlap = true,
            "--words" => o.words = true,
            "--batch" => o.batch = value("a minibatch size") as usize,
            "--link" => o.link = Some(value("MB/s")),
            "--rounds" => o.rounds = value("a count") as usize,
            "--dataset" => o.dataset = args.next().map(Into::into),
            steps => {
                o.steps = steps
                    .parse()
                    .expect("STEPS, --overlap, --batch N, --words, --link MB/s or --rounds R")
            }
        }
    }
    o
}

/// Seconds per step of a run's training passes (its first epoch's samples over its rate: the
/// test pass, the checkpoint and the plot excluded).
fn step_seconds(state: &State<f32>, plan: &Plan, batch: usize) -> f64 {
    let m = &state.history[0];
    let steps = plan.max_steps.expect("a shortened epoch").min(m.steps);
    (steps * batch) as f64 / m.samples_per_s / steps as f64
}

/// Trains `plan` with `k` workers on the local transport (over wires of `link` MB/s if
/// given); returns the seconds per step and rank 0's model.
fn train_k(
    cfg: &Config,
    (train, test): (&Dataset, &Dataset),
    plan: &Plan,
    k: usize,
    sharing: Sharing,
    link: Option<f64>,
) -> (f64, Model<f32>) {
    let states: Vec<State<f32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ends(k, link)
            .into_iter()
            .map(|mut end| {
                scope.spawn(move || {
                    let mut w = Worker::new(&mut end, sharing);
                    trainer::run_worker(
                        &mut Float { threads: 1 },
                        cfg,
                        train,
                        test,
                        plan,
                        Some(&mut w),
                        &mut |_| Ok(()),
                    )
                    .expect("a worker")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    let first = states.into_iter().next().expect("rank 0");
    (step_seconds(&first, plan, cfg.batch), first.model)
}

/// §2.2 measured: K = 1 alone, and K = 2 double-buffered in turn and overlapped, alternately,
/// beside eq. (4)'s predictions from the measured costs.
fn overlap_report(o: &Options, data: (&Dataset, &Dataset), costs: (f64, f64, f64)) {
    let (t_frm, t_pass, t_comm) = costs;
    let cfg = config(o.batch);
    let out = std::env::temp_dir().join(format!("lpgen-khat-overlap-{}", std::process::id()));
    let plan = Plan {
        epochs: 1,
        max_steps: Some(o.steps),
        out: out.clone(),
        resume: false,
        progress: false,
    };
    let exchange = if o.words {
        Exchange::Words
    } else {
        Exchange::OneBit { feedback: true }
    };
    let turns = Sharing {
        exchange,
        double_buffer: true,
        overlap: false,
    };
    let overlapped = Sharing {
        overlap: true,
        ..turns
    };
    let (mut alone, mut a, mut b) = (vec![], vec![], vec![]);
    let mut models = None;
    for _ in 0..o.rounds {
        let state = trainer::run(
            &mut Float { threads: 1 },
            &cfg,
            data.0,
            data.1,
            &plan,
            &mut |_| Ok(()),
        )
        .expect("K = 1");
        alone.push(step_seconds(&state, &plan, cfg.batch));
        let (ta, ma) = train_k(&cfg, data, &plan, 2, turns, o.link);
        let (tb, mb) = train_k(&cfg, data, &plan, 2, overlapped, o.link);
        assert!(
            ma == mb,
            "the overlapped model differs from the turn-taking one"
        );
        models = Some(ma);
        a.push(ta);
        b.push(tb);
    }
    let _ = std::fs::remove_dir_all(&out);
    let per_step = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t1, ta, tb) = (per_step(&alone), per_step(&a), per_step(&b));
    let n = o.batch as f64;
    let calc = (n / 2.0 * t_frm + POST_PASSES * t_pass) / 2.0 + t_pass;
    let p1 = n * t_frm + POST_PASSES * t_pass + t_pass;
    let (pa, pb) = (2.0 * (calc + t_comm), 2.0 * calc.max(t_comm));
    let link = o
        .link
        .map_or("none (host work only)".into(), |l| format!("{l} MB/s"));
    let words = models.map_or(0, |m| {
        m.layers
            .iter()
            .map(|l| l.w.data.len() + l.b.len())
            .sum::<usize>()
    });
    println!(
        "double buffering, N = {}, {} exchange, link {link}, {} steps, median of {} rounds \
         (both double-buffered runs ended with the same {words} parameter words):",
        o.batch,
        if o.words { "32-bit words" } else { "1-bit" },
        o.steps,
        o.rounds
    );
    println!("                              measured    eq. (4) model   speed-up over K = 1 (measured, model)");
    println!(
        "  K = 1 alone               {:>8.2} ms   {:>8.2} ms",
        t1 * 1e3,
        p1 * 1e3
    );
    for (what, t, p) in [("K = 2, in turn", ta, pa), ("K = 2, overlapped", tb, pb)] {
        println!(
            "  {what:<24}  {:>8.2} ms   {:>8.2} ms     {:.2}  {:.2}",
            t * 1e3,
            p * 1e3,
            t1 / t,
            p1 / p
        );
    }
    println!(
        "  the exchange's share of the in-turn step: {:.0} % (two measured T_comm over the measured step), {:.0} % (model); overlapped / in turn: {:.2} measured, {:.2} model",
        100.0 * 2.0 * t_comm / ta,
        100.0 * t_comm / (calc + t_comm),
        tb / ta,
        pb / pa
    );
}

fn main() {
    let o = options();
    let steps = o.steps;
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/mnist-10k");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let ds = match &o.dataset {
        Some(d) => d.clone(),
        None if shared.is_dir() => shared,
        None => bundled,
    };
    let train = data::load(&ds, Split::Train).expect("dataset");
    let mut test = data::load(&ds, Split::Test).expect("dataset");
    test.truncate(20);

    // T_frm: forward and backward passes of a batch of 256 on one thread, per sample.
    let cfg = config(256);
    let model: Model<f32> = Model::init(&cfg);
    let pixels = |i: usize| {
        train
            .image(i % train.len())
            .iter()
            .map(|&p| p as f32 / 255.0)
    };
    let x = Mat {
        rows: cfg.batch,
        cols: train.dim,
        data: (0..cfg.batch).flat_map(pixels).collect(),
    };
    let labels: Vec<u8> = (0..cfg.batch)
        .map(|i| train.labels[i % train.len()])
        .collect();
    let mut machine = Float { threads: 1 };
    let mut net = Net::new(&mut machine, &cfg);
    let mut noise = cfg.stream(&[0]);
    let t_frm = best(5, || {
        net.gradients(&model, x.clone(), &labels, &mut noise)
            .expect("gradients");
    }) / cfg.batch as f64;
    // T_post = T_upd: one lane addition over every parameter.
    let shapes: Vec<(usize, usize)> = model
        .layers
        .iter()
        .flat_map(|l| [(l.w.rows, l.w.cols), (l.b.len(), 1)])
        .collect();
    let m: usize = shapes.iter().map(|(r, c)| r * c).sum();
    let a = vec![0.5f32; m];
    let t_pass = best(20, || {
        Float { threads: 1 }
            .lanes(Format::F32(F32), AluOp::Add, &a, &a)
            .expect("lanes");
    });
    let t_words = exchange_seconds(&shapes, false, 20, o.link);
    let t_one_bit = exchange_seconds(&shapes, true, 20, o.link);

    println!(
        "seed 001 eq. (4) for 784-512-10 sigmoid, f32, M = {m} parameters, one thread per node"
    );
    println!(
        "  T_frm  (forward + backward, per sample)  {:>9.1} µs",
        t_frm * 1e6
    );
    println!(
        "  T_post = T_upd (one pass over M)          {:>9.1} µs",
        t_pass * 1e6
    );
    if let Some(l) = o.link {
        println!("  (the local transport over simulated wires of {l} MB/s)");
    }
    println!(
        "  T_comm, words (Z = 1), K = 2, local       {:>9.1} µs",
        t_words * 1e6
    );
    println!(
        "  T_comm, 1-bit, K = 2, local               {:>9.1} µs",
        t_one_bit * 1e6
    );
    println!("  K̂ = (N/2·T_frm + C·T_post) / (T_comm/Z − T_upd), C = {POST_PASSES}:");
    let mut sizes = vec![20usize, 256, 1024];
    if !sizes.contains(&o.batch) {
        sizes.push(o.batch);
    }
    for n in sizes {
        let num = n as f64 / 2.0 * t_frm + POST_PASSES * t_pass;
        let k = |t_comm: f64| {
            let den = t_comm - t_pass;
            if den <= 0.0 {
                "unbounded (exchange cheaper than the update, §2.3)".to_string()
            } else {
                format!("{:.1}", num / den)
            }
        };
        println!(
            "    N = {n:>4}: words {:>10}   1-bit {:>10}",
            k(t_words),
            k(t_one_bit)
        );
    }

    if o.overlap {
        let t_comm = if o.words { t_words } else { t_one_bit };
        overlap_report(&o, (&train, &test), (t_frm, t_pass, t_comm));
        return;
    }
    let (one, two) = measured_step_times(&train, &test, steps);
    println!("  time per step, N = 20, {steps} steps: K = 1 {:.2} ms, K = 2 (1-bit) {:.2} ms, ratio {:.2}",
        one * 1e3, two * 1e3, one / two);
}
