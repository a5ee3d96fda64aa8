//! `lpgen train` (SPEC.md §6): training of an MLP, LeNet-5 or maxout network by SGD, AdaGrad,
//! RMSProp, Adam or AdamW through the f32, golden or RTL backend.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use lpgen_golden::{Format, F32};
use lpgen_train::compress::Compression;
use lpgen_train::config::{
    check_accumulation, kahan_places, parse_precision, AccumulatePlaces, AdaGradAt, Config,
    Normalize, Optimizer, Schedule, Stages,
};
use lpgen_train::data;
use lpgen_train::float::Float;
use lpgen_train::machine::{all_cores, Checked, Golden, Machine};
use lpgen_train::parallel::{Exchange, Sharing, Worker};
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};

use crate::{emit, CliError, CliResult};

mod arch;
mod checks;
mod dfix;
mod gpt;
pub(crate) mod mx;
mod optim;

#[derive(Args)]
pub struct TrainArgs {
    /// Number format of every stage, e.g. lns:5:6, posit:8:2, fix:7:8 (f32 with --backend f32);
    /// or dfix:P:U, seed 002's low-precision storage: f32 arithmetic, values stored in dynamic
    /// fixed point of P bits (propagations) and U bits (parameter updates), signs included;
    /// or store:P/U (store:F for P = U = F), the same storage in float formats rounded to
    /// nearest even (store:f16 is seed 002's half precision; P, U: f16, bf16, fp8:e4m3,
    /// float:E:M…, f32); or `mx:ELEM[:bK]` (OCP MX: every layer product on blocks of K along
    /// its reduction dimension, f32 elsewhere; --backend golden, f32, or rtl: the products on
    /// the array's mx PE)
    #[arg(long)]
    format: Option<String>,
    /// dfix: training examples between scale updates [default: 10000]
    #[arg(long)]
    scale_every: Option<u64>,
    /// dfix: the overflow rate the scale updates keep under [default: 0.0001]
    #[arg(long)]
    max_overflow: Option<f64>,
    /// dfix: seed 002's fixed point instead: every group with this many integer bits (sign
    /// excluded; the paper's best is 5), never rescaled
    #[arg(long)]
    radix_point: Option<u32>,
    /// dfix: f32 (the paper's: f32 products, rounded as stored) or exact (the dense layers'
    /// products on the stored words, read out once into the result's group: the dfix array
    /// PE's arithmetic; required on --backend rtl) [default: f32]
    #[arg(long)]
    dfix_products: Option<String>,
    /// Mixed precision per stage (seed 004): e.g. O16-L12-FBG8q (posit widths, q = quires)
    #[arg(long)]
    precision: Option<String>,
    /// f32, golden or rtl
    #[arg(long, default_value = "golden")]
    backend: String,
    /// Run the golden model in lockstep and stop at the first differing bit (rtl backend)
    #[arg(long)]
    check: bool,
    /// Directory with IDX files (train-images-idx3-ubyte.gz, ...); for --model gpt
    /// text:PATH, a file whose bytes are the tokens (its last 10 % the test split)
    #[arg(long)]
    dataset: PathBuf,
    #[arg(long, default_value_t = 15)]
    epochs: u32,
    /// mlp, lenet5 (seed 004: LeNet-5 on 28x28 images), maxout (seed 002), gpt (a
    /// character-level transformer language model on --dataset text:PATH) or vit (a vision
    /// transformer on the IDX images, --patch)
    #[arg(long, default_value = "mlp")]
    model: String,
    /// gpt: transformer blocks
    #[arg(long, default_value_t = 2)]
    layers: usize,
    /// gpt: attention heads (must divide --dim)
    #[arg(long, default_value_t = 4)]
    heads: usize,
    /// gpt: width of the residual stream
    #[arg(long, default_value_t = 128)]
    dim: usize,
    /// gpt: tokens per window
    #[arg(long, default_value_t = 64)]
    context: usize,
    /// vit: side of the square patches the images are cut into (must divide the image's)
    #[arg(long, default_value_t = 7)]
    patch: usize,
    /// Hidden layer widths, comma separated (mlp; maxout: units per layer)
    #[arg(long, default_value = "512")]
    hidden: String,
    /// sigmoid or relu (mlp)
    #[arg(long, default_value = "sigmoid")]
    activation: String,
    /// Pieces per maxout unit
    #[arg(long, default_value_t = 5)]
    maxout_k: usize,
    /// Dropout probabilities, comma separated: the input's, then after each hidden layer
    /// (e.g. 0.2,0.5,0.5); off at test time
    #[arg(long)]
    dropout: Option<String>,
    /// Pass every gradient through an 8-bit codec before it is applied (seed 003, data
    /// parallelism): q8:dynamic-tree, q8:static-tree, q8:linear or q8:mantissa
    #[arg(long)]
    compress_grad: Option<String>,
    /// Pass every hidden activation through an 8-bit codec before the next layer reads it
    /// (seed 003, model parallelism)
    #[arg(long)]
    compress_act: Option<String>,
    /// sgd, adagrad or rmsprop (each with --momentum), adam or adamw (--beta1, --beta2,
    /// --eps, --weight-decay)
    #[arg(long, default_value = "sgd")]
    optimizer: String,
    #[command(flatten)]
    optim: optim::OptimArgs,
    /// Where AdaGrad normalizes (seed 001 §4): local (each worker's sub-gradient), aggregate
    /// (the summed gradient, between the exchanges) or momentum (after momentum smoothing)
    #[arg(long)]
    adagrad_at: Option<String>,
    #[arg(long, default_value_t = 20)]
    batch: usize,
    #[arg(long, default_value_t = 0.1)]
    lr: f64,
    /// Seed 002 §8: after each update, scale every weight vector (a row of W) longer than
    /// this back to this length (Goodfellow et al.'s maxout MNIST: 1.9365)
    #[arg(long)]
    max_norm: Option<f64>,
    /// Momentum (default: 0.5 for sgd, 0 for adagrad and rmsprop)
    #[arg(long)]
    momentum: Option<f64>,
    /// First epoch with momentum (seed 000: "0.5 after epoch 1")
    #[arg(long, default_value_t = 2)]
    momentum_from: u32,
    /// fixed; halving (seed 000: fixed 8 epochs, then halve once the test cross-entropy
    /// improves by less than 0.1%); step:N (seed 004: halve every N epochs) [default: halving;
    /// with --lr-schedule cosine, fixed]
    #[arg(long)]
    schedule: Option<String>,
    /// Input normalization: pixel (each pixel to zero mean, unit variance; seed 000) or
    /// global (one mean and deviation; seed 004)
    #[arg(long, default_value = "pixel")]
    normalize: String,
    /// Kahan sums: all, none, or a list of matmul,sums,softmax,update (default: all for
    /// LNS, none otherwise)
    #[arg(long)]
    kahan: Option<String>,
    /// Accumulation per place (seed 000 Table 4.5), overriding --kahan and --quire there: a
    /// comma list of PLACE=MODE, places matmul (or one pass of it: forward, backward,
    /// gradient), sums, softmax, update or all, modes naive, kahan, pairwise or exact (the
    /// format's exact accumulator: quires for posits), and for matmul of float formats
    /// `fdpa:PRESET[:promoteN]` (a GPU's fused dot-product arithmetic, e.g. fdpa:hopper); the
    /// update takes naive or kahan
    #[arg(long)]
    accumulate: Option<String>,
    /// Accumulate products and sums in quires (posit; implied by a precision ending in q)
    #[arg(long)]
    quire: bool,
    /// LNS: keep this many fraction bits after every operation (seed 000 §4.5)
    #[arg(long)]
    keep_bits: Option<u32>,
    /// At most this many batches per epoch
    #[arg(long)]
    max_steps: Option<usize>,
    /// Use only the first N training samples
    #[arg(long)]
    train_limit: Option<usize>,
    /// Use only the first N test samples
    #[arg(long)]
    test_limit: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// nearest, or stochastic:R (R random bits, 1..=32; float and fix formats, --backend
    /// golden): what training stores (the optimizer's update, weighted sums, exact products'
    /// read-outs) is rounded stochastically with the golden rounding stream of --seed
    #[arg(long, default_value = "nearest")]
    rounding: String,
    /// Scaled products (issue 50): none, or STAGES=RULE groups separated by commas, STAGES
    /// from F B G (or all), RULE current or `delayed[:H[:MARGIN]]` (per tensor, TE's FP8 recipe),
    /// or nvfp4, mxfp4, scaled/ELEM/bK/SCALE[/t] (blocks; G: +rht16, the Hadamard transform,
    /// +sr, stochastic rounding), e.g. all=delayed, FB=nvfp4,G=nvfp4+rht16+sr (docs/train.md,
    /// "Scaled products")
    #[arg(long, default_value = "none")]
    scaling: String,
    /// Results directory (metrics.jsonl, plot.png, checkpoint.lpck)
    #[arg(long, default_value = "train-out")]
    out: PathBuf,
    /// Continue from the checkpoint in --out
    #[arg(long)]
    resume: bool,
    /// rtl backend: rows of the systolic array
    #[arg(long, default_value_t = 8)]
    rows: u32,
    /// rtl backend: columns of the systolic array
    #[arg(long, default_value_t = 8)]
    cols: u32,
    /// rtl backend: lanes of the vector unit
    #[arg(long, default_value_t = 16)]
    lanes: u32,
    /// rtl backend: pipeline stages of the arrays (fix PEs up to 6, LNS PEs up to 5, where
    /// beyond 2 they interleave accumulations and the run streams that many tiles at once,
    /// posit-quire and takum-quire PEs up to 8, dfix PEs up to 2, mx PEs up to 6)
    #[arg(long, default_value_t = 0)]
    array_stages: u32,
    /// Threads of the f32 and golden machines (default: every core); results do not depend
    /// on it
    #[arg(long)]
    threads: Option<usize>,
    /// Data-parallel workers as threads of this process (seed 001): each trains on 1/K of
    /// every minibatch; results depend on K, not on timing
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// How workers exchange gradients: none (the words), 1bit (seed 001, with error
    /// feedback) or q8:TYPE (seed 003's 8-bit codes: dynamic-tree, static-tree, linear,
    /// mantissa)
    #[arg(long, default_value = "none")]
    compress: String,
    /// 1bit without carrying the quantization error into the next minibatch
    #[arg(long)]
    no_error_feedback: bool,
    /// Seed 001 §2.2: split each minibatch in two halves; a half's aggregated gradient is
    /// applied after the next half's gradients are computed (a delayed update), its exchange
    /// running on a communication thread while that next half is computed
    #[arg(long)]
    double_buffer: bool,
    /// With --double-buffer: exchange and compute in turn on the worker's thread, without the
    /// overlap (the same model word for word; for measuring what the overlap hides)
    #[arg(long)]
    no_overlap: bool,
    /// Where the workers run: local (--workers threads) or mpi (one worker per rank of
    /// `mpirun -np K lpgen train --dist mpi ...`; an lpgen built with --features mpi)
    #[arg(long, default_value = "local")]
    dist: String,
}

fn bad(s: String) -> CliError {
    CliError(s)
}

/// More threads than this only contend: the machines split work into at most this many parts.
const MAX_THREADS: usize = 256;

/// The run's configuration from the arguments, for images of `input` (channels, rows,
/// columns) in `classes` classes, and `train` training samples (`None` before the dataset
/// is read).
fn config(
    a: &TrainArgs,
    input: (usize, usize, usize),
    classes: usize,
    train: Option<usize>,
) -> CliResult<Config> {
    let storage = dfix::storage(a)?;
    let blocks = mx::blocks(a)?;
    let (stages, quire) = match (&a.format, &a.precision, a.backend.as_str()) {
        (Some(_), None, _) if storage.is_some() => (Stages::all(Format::F32(F32)), a.quire),
        (Some(_), None, _) if blocks.is_some() => (Stages::all(Format::F32(F32)), false),
        (Some(_), Some(_), _) => {
            return Err(bad("give --format or --precision, not both".into()));
        }
        (None, Some(p), _) => {
            let (s, q) = parse_precision(p)?;
            (s, q || a.quire)
        }
        (f, None, "f32") => {
            if f.as_deref().is_some_and(|f| f != "f32") {
                return Err(bad(
                    "--backend f32 trains in f32; drop --format or use --backend golden".into(),
                ));
            }
            (Stages::all(Format::F32(F32)), false)
        }
        (Some(f), None, _) => {
            let f: Format = f.parse()?;
            if f == Format::F32(F32) {
                return Err(bad("format f32 runs on --backend f32".into()));
            }
            (Stages::all(f), a.quire)
        }
        (None, None, _) => {
            return Err(bad(
                "give --format (e.g. lns:5:6) or --precision (e.g. O16-L12-FBG8q)".into(),
            ));
        }
    };
    if storage.is_some() && a.kahan.is_some() {
        return Err(bad(
            "--kahan applies to arithmetic formats; storage (dfix:P:U, store:F) computes in f32 and rounds as it stores"
                .into(),
        ));
    }
    let kahan = kahan_places(a.kahan.as_deref(), &stages)?;
    let accumulate = match &a.accumulate {
        Some(p) if a.backend == "f32" || storage.is_some() => {
            return Err(bad(format!(
                "--accumulate {p}: the f32 machine sums as its matrix library does; choose placements on --backend golden or rtl with an arithmetic --format"
            )))
        }
        Some(p) => AccumulatePlaces::parse(p)?,
        None => AccumulatePlaces::default(),
    };
    check_accumulation(&stages, quire, a.keep_bits, &accumulate)?;
    let rounding = checks::rounding(a)?;
    if storage.is_none() {
        // With storage the stream rounds the stored values (float storage; dfix refused in
        // `checks`), and the stages compute in f32 to nearest.
        lpgen_train::rounding::check(rounding, &stages.list())?;
    }
    checks::rtl_rounding(a, rounding, &stages.list())?;
    let scaling = checks::scaling(a, &stages, storage.is_some() || blocks.is_some(), rounding)?;
    let arch = match gpt::is_transformer(a) {
        true => gpt::arch(a, input, classes)?,
        false => arch::arch(a, input, classes)?,
    };
    let schedule = match a.schedule.as_deref().unwrap_or("halving") {
        "fixed" => Schedule::Fixed,
        "halving" => Schedule::Halving {
            hold: 8,
            threshold: 0.001,
        },
        other => match other.strip_prefix("step:").and_then(|n| n.parse().ok()) {
            Some(every) if every > 0 => Schedule::Step { every },
            _ => {
                return Err(bad(format!(
                    "unknown schedule {other:?}: expected fixed, halving or step:N"
                )))
            }
        },
    };
    let normalize = match a.normalize.as_str() {
        "pixel" => Normalize::PerPixel,
        "global" => Normalize::Global,
        other => {
            return Err(bad(format!(
                "unknown normalization {other:?}: expected pixel or global"
            )))
        }
    };
    if a.batch == 0 || a.epochs == 0 {
        return Err(bad("--batch and --epochs must be at least 1".into()));
    }
    let schedule = optim::schedule(a, schedule, train.map(|n| optim::total_updates(a, n)))?;
    let mut optimizer = optim::optimizer(a)?;
    match (&mut optimizer, &a.adagrad_at) {
        (Optimizer::AdaGrad { at, .. }, Some(place)) => *at = AdaGradAt::parse(place)?,
        (_, Some(_)) => {
            return Err(bad(format!(
                "--adagrad-at applies to --optimizer adagrad, not {:?}",
                a.optimizer
            )))
        }
        _ => {}
    }
    let momentum = match optimizer {
        Optimizer::Sgd => a.momentum.unwrap_or(0.5),
        _ => a.momentum.unwrap_or(0.0),
    };
    if !(a.lr.is_finite() && a.lr > 0.0 && (0.0..1.0).contains(&momentum)) {
        return Err(bad("--lr must be positive and --momentum in [0, 1)".into()));
    }
    if a.max_norm.is_some_and(|c| !(c.is_finite() && c > 0.0)) {
        return Err(bad(format!(
            "--max-norm {}: give a positive length (e.g. 1.9365)",
            a.max_norm.unwrap_or_default()
        )));
    }
    let compression = Compression {
        grad: a.compress_grad.as_deref().map(str::parse).transpose()?,
        act: a.compress_act.as_deref().map(str::parse).transpose()?,
    };
    Ok(Config {
        stages,
        quire,
        kahan,
        accumulate,
        keep_bits: a.keep_bits,
        arch,
        optimizer,
        compression,
        storage,
        mx: blocks,
        max_norm: a.max_norm,
        batch: a.batch,
        lr: a.lr,
        momentum,
        momentum_from: a.momentum_from,
        schedule,
        normalize,
        seed: a.seed,
        rounding,
        scaling,
    })
}

/// How this run's workers cooperate (`--compress`, `--no-error-feedback`, `--double-buffer`,
/// `--no-overlap`).
fn sharing(a: &TrainArgs) -> CliResult<Sharing> {
    Ok(Sharing {
        exchange: Exchange::parse(&a.compress, !a.no_error_feedback)?,
        double_buffer: a.double_buffer,
        overlap: !a.no_overlap,
    })
}

/// Trains with `workers` data-parallel workers on the local transport: rank 0 on this thread
/// (it reports), the others on their own threads; the first error of any worker is returned.
fn data_parallel<M: Machine + Send>(
    workers: usize,
    sharing: Sharing,
    make: impl Fn() -> Result<M, lpgen_train::TrainError> + Sync,
    cfg: &Config,
    (train, test): (&data::Dataset, &data::Dataset),
    plan: &Plan,
    report: &mut dyn FnMut(&str) -> Result<(), lpgen_train::TrainError>,
) -> CliResult<Vec<M>> {
    let mut endpoints = lpgen_comm::local(workers);
    let mut first = endpoints.remove(0);
    std::thread::scope(|scope| {
        let others: Vec<_> = endpoints
            .into_iter()
            .map(|mut t| {
                let make = &make;
                scope.spawn(move || {
                    let mut worker = Worker::new(&mut t, sharing);
                    let mut m = make()?;
                    let mut quiet = |_: &str| Ok(());
                    trainer::run_worker(
                        &mut m,
                        cfg,
                        train,
                        test,
                        plan,
                        Some(&mut worker),
                        &mut quiet,
                    )?;
                    Ok(m)
                })
            })
            .collect();
        let mut worker = Worker::new(&mut first, sharing);
        let mine = make().and_then(|mut m| {
            trainer::run_worker(&mut m, cfg, train, test, plan, Some(&mut worker), report)?;
            Ok(m)
        });
        let mut results = vec![mine];
        results.extend(
            others
                .into_iter()
                .map(|h| h.join().expect("a training worker panicked")),
        );
        // The first failure in rank order (the same options fail the same way on every rank).
        results
            .into_iter()
            .collect::<Result<Vec<M>, lpgen_train::TrainError>>()
            .map_err(CliError::from)
    })
}

pub fn run(a: &TrainArgs, out: &mut dyn Write) -> CliResult {
    let mpi = checks::before_data(a)?;
    let transport = if mpi {
        Some(crate::dist::mpi_transport()?)
    } else {
        None
    };
    // Every option is checked before the dataset is read (with a stand-in input width; the
    // weight limit is checked again with the real one).
    config(a, (1, 28, 28), 10, None)?;
    let (mut train, mut test) = match gpt::text_path(a)? {
        Some(path) => gpt::load(a, &path)?,
        None => data::load_pair_limited(&a.dataset, a.train_limit, a.test_limit)?,
    };
    if let Some(n) = a.train_limit {
        train.truncate(n);
    }
    if let Some(n) = a.test_limit {
        test.truncate(n);
    }
    let cfg = config(
        a,
        (1, train.shape.0, train.shape.1),
        train.classes,
        Some(train.len()),
    )?;
    optim::check_eps(&cfg)?;
    if let Some(rate) = lpgen_train::optim::vanishing_rate(&cfg) {
        eprintln!(
            "lpgen: warning: the optimizer's rate {rate} (sgd: --lr / --batch) is 0 in {} \
             (stage O): a full batch changes no weight; raise --lr, lower --batch or keep O in a \
             wider format (--precision)",
            cfg.stages.o
        );
    }
    let plan = Plan {
        epochs: a.epochs,
        max_steps: a.max_steps,
        out: a.out.clone(),
        resume: a.resume,
        progress: true,
    };
    let mut report = |line: &str| emit(out, line).map_err(|e| lpgen_train::TrainError(e.0));
    let parallel = transport.is_some() || a.workers > 1 || a.compress != "none" || a.double_buffer;
    // Data-parallel workers share the cores: one machine thread each unless asked.
    let threads = match (a.threads, parallel) {
        (Some(t), _) => t,
        (None, true) => 1,
        (None, false) => all_cores(),
    };
    let golden = |label: &str, keep_bits| Golden {
        threads,
        ..Golden::new(label, keep_bits)
    };
    if a.backend == "rtl" && cfg.keep_bits.is_some() {
        return Err(bad(
            "--keep-bits runs on --backend golden (the RTL keeps every bit)".into(),
        ));
    }
    let run = Run {
        a,
        cfg: &cfg,
        data: (&train, &test),
        plan: &plan,
        transport,
    };
    match (a.backend.as_str(), a.check) {
        ("rtl", true) => {
            let machines = run.train(
                || {
                    Ok(Checked {
                        dut: Rtl::new(a.rows, a.cols, a.lanes)?.with_array_stages(a.array_stages),
                        reference: golden("golden", None),
                        ops: 0,
                    })
                },
                &mut report,
            )?;
            let ops: u64 = machines.iter().map(|m| m.ops).sum();
            let of_mx = mx::products(machines.iter().map(|m| m.dut.mx_products()).sum());
            eprintln!("--check: {ops} operations{of_mx}, 0 differing bits");
        }
        ("rtl", false) => {
            run.train(
                || Ok(Rtl::new(a.rows, a.cols, a.lanes)?.with_array_stages(a.array_stages)),
                &mut report,
            )?;
        }
        ("f32", _) => {
            run.train(|| Ok(Float { threads }), &mut report)?;
        }
        _ => {
            run.train(|| Ok(golden(&a.backend, cfg.keep_bits)), &mut report)?;
        }
    }
    Ok(())
}

/// A training run as this process takes part in it: alone, as K worker threads, or as one
/// rank of `mpirun`.
struct Run<'a> {
    a: &'a TrainArgs,
    cfg: &'a Config,
    data: (&'a data::Dataset, &'a data::Dataset),
    plan: &'a Plan,
    /// This process's rank of an `mpirun` job.
    transport: Option<Box<dyn lpgen_comm::Transport + Send>>,
}

impl Run<'_> {
    /// Trains on machines from `make` (one per worker of this process); returns them, in
    /// rank order, for their counters.
    fn train<M: Machine + Send>(
        mut self,
        make: impl Fn() -> Result<M, lpgen_train::TrainError> + Sync,
        report: &mut dyn FnMut(&str) -> Result<(), lpgen_train::TrainError>,
    ) -> CliResult<Vec<M>> {
        let (a, cfg, (train, test), plan) = (self.a, self.cfg, self.data, self.plan);
        if let Some(t) = self.transport.as_deref_mut() {
            let mut worker = Worker::new(t, sharing(a)?);
            let mut m = make()?;
            trainer::run_worker(&mut m, cfg, train, test, plan, Some(&mut worker), report)?;
            return Ok(vec![m]);
        }
        if a.workers > 1 || a.compress != "none" || a.double_buffer {
            return data_parallel(
                a.workers,
                sharing(a)?,
                make,
                cfg,
                (train, test),
                plan,
                report,
            );
        }
        let mut m = make()?;
        trainer::run(&mut m, cfg, train, test, plan, report)?;
        Ok(vec![m])
    }
}
