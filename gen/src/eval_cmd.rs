//! `lpgen eval`: a trained model's test accuracy and loss in another format (seed 004 ch. 5,
//! seed 000 Table 4.3). The work is `lpgen_train::eval`'s; this parses, checks and prints.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::mx::{self, MxFormat};
use lpgen_golden::{Format, F32};
use lpgen_train::config::{
    check_accumulation, kahan_places, parse_precision, AccumulatePlaces, Config, Stages,
};
use lpgen_train::data;
use lpgen_train::eval::{self, Checkpoint, Scores};
use lpgen_train::float::Float;
use lpgen_train::machine::{all_cores, Checked, Golden, Machine};
use lpgen_train::rtl::Rtl;
use lpgen_train::storage::{DfixConfig, FloatConfig, Storage, StorageConfig};

use crate::{emit, CliError, CliResult};

#[derive(Args)]
pub struct EvalArgs {
    /// A run's --out directory (or its checkpoint.lpck), trained in any format
    #[arg(long)]
    checkpoint: PathBuf,
    /// The format to evaluate in, every stage (e.g. posit:6:1, lns:5:6, f32); dfix:P:U is
    /// seed 002's storage (a dfix run of P:U with its own scales, any other model with scales
    /// fitted on 10,000 training images' forward passes); store:P/U its float storage (f32
    /// arithmetic, parameters and stored values rounded to the float formats); `mx:ELEM[:bK]`
    /// every layer product on MX blocks (as lpgen train --format mx:…), f32 elsewhere
    #[arg(long)]
    format: Option<String>,
    /// Stage formats as `lpgen train --precision` takes them (e.g. O16-L12-FBG8q)
    #[arg(long)]
    precision: Option<String>,
    /// f32, golden or rtl (default: f32 for f32 and storage, golden otherwise)
    #[arg(long)]
    backend: Option<String>,
    /// Run the golden model in lockstep and stop at the first differing bit (rtl backend)
    #[arg(long)]
    check: bool,
    /// Directory with the IDX files the run trained on (its training set's moments normalise
    /// the inputs)
    #[arg(long)]
    dataset: PathBuf,
    /// The --train-limit of the run (the moments are those of its training images)
    #[arg(long)]
    train_limit: Option<usize>,
    /// Evaluate on the first N test images only (as `lpgen train --test-limit`; `--limit` is
    /// the old spelling, kept as a hidden alias)
    #[arg(long, alias = "limit")]
    test_limit: Option<usize>,
    /// Accumulate products and sums in quires (posit, float; implied by a precision ending
    /// in q)
    #[arg(long)]
    quire: bool,
    /// Kahan sums: all, none, or a list of matmul,sums,softmax,update (default: all for LNS,
    /// none otherwise)
    #[arg(long)]
    kahan: Option<String>,
    /// Accumulation per place, as `lpgen train --accumulate` takes it (e.g. matmul=pairwise)
    #[arg(long)]
    accumulate: Option<String>,
    /// LNS: keep this many fraction bits after every operation
    #[arg(long)]
    keep_bits: Option<u32>,
    /// Threads of the f32 and golden machines (default: every core)
    #[arg(long)]
    threads: Option<usize>,
    /// rtl backend: rows of the systolic array
    #[arg(long, default_value_t = 8)]
    rows: u32,
    /// rtl backend: columns of the systolic array
    #[arg(long, default_value_t = 8)]
    cols: u32,
    /// rtl backend: lanes of the vector unit
    #[arg(long, default_value_t = 16)]
    lanes: u32,
    /// rtl backend: pipeline stages of the arrays
    #[arg(long, default_value_t = 0)]
    array_stages: u32,
}

fn bad(s: impl Into<String>) -> CliError {
    CliError(s.into())
}

/// The evaluation's stages, quire and storage from `--format` / `--precision` (checked
/// before the checkpoint is read, except a dfix storage's match with the checkpoint's);
/// `true`: seed 002's storage (dfix:P:U or store:P/U).
fn stages(a: &EvalArgs) -> CliResult<(Stages, bool, bool)> {
    match (&a.format, &a.precision) {
        (Some(_), Some(_)) => Err(bad("give --format or --precision, not both")),
        (None, None) => Err(bad(
            "give --format (e.g. posit:6:1) or --precision (e.g. O16-L12-FBG8q)",
        )),
        (None, Some(p)) => {
            let (s, q) = parse_precision(p)?;
            Ok((s, q || a.quire, false))
        }
        (Some(f), None) if f.trim().starts_with("dfix:") || f.trim().starts_with("store:") => {
            Ok((Stages::all(Format::F32(F32)), a.quire, true))
        }
        (Some(f), None) if mx::is_mx(f.trim()) => {
            Ok((Stages::all(Format::F32(F32)), a.quire, false))
        }
        (Some(f), None) => Ok((Stages::all(f.parse::<Format>()?), a.quire, false)),
    }
}

/// `--format dfix:P:U` (or dfix:W): seed 002's storage with f32 products. A dfix run of
/// those widths is evaluated with its own groups' scales (`false`: no fit); any other
/// checkpoint gets new groups whose scales are fitted on forward passes (`true`).
fn dfix_storage(
    (propagation, update): (DfixFormat, DfixFormat),
    ck: &Checkpoint,
) -> CliResult<(Storage, bool)> {
    if let (Some(StorageConfig::Dfix(run)), Some(storage)) =
        (ck.run.cfg.storage, ck.state.storage.clone())
    {
        if (run.propagation, run.update) == (propagation, update) && !run.exact_products {
            return Ok((storage, false));
        }
    }
    let config = StorageConfig::Dfix(DfixConfig {
        propagation,
        update,
        scale_every: 10_000,
        max_overflow: 1e-4,
        radix_point: None,
        exact_products: false,
    });
    Ok((Storage::new(config, ck.state.model.layers.len()), true))
}

/// The storage of `--format dfix:P:U` or `store:P/U` (checked before anything is read), with
/// whether it must be prepared on the checkpoint (`true`: scales fitted, parameters stored).
enum EvalStorage {
    Dfix((DfixFormat, DfixFormat)),
    /// A float has no scales; the parameters are rounded to its formats (`fit`).
    Float(FloatConfig),
}

fn eval_storage(a: &EvalArgs) -> CliResult<EvalStorage> {
    let spec = a.format.as_deref().unwrap_or_default().trim();
    match spec.strip_prefix("store:") {
        Some(s) => Ok(EvalStorage::Float(FloatConfig::parse(s)?)),
        None => Ok(EvalStorage::Dfix(dfix_widths(a)?)),
    }
}

/// The widths of `--format dfix:P:U` (or dfix:W), checked before anything is read.
fn dfix_widths(a: &EvalArgs) -> CliResult<(DfixFormat, DfixFormat)> {
    let spec = a.format.as_deref().unwrap_or_default().trim();
    let widths: Vec<Option<u32>> = spec["dfix:".len()..]
        .split(':')
        .map(|w| w.parse().ok())
        .collect();
    let (p, u) = match widths[..] {
        [Some(w)] => (w, w),
        [Some(p), Some(u)] => (p, u),
        _ => {
            return Err(bad(format!(
                "format {spec:?} is not dfix:P:U with whole widths (e.g. dfix:10:12)"
            )))
        }
    };
    let width = |w: u32| DfixFormat::new(w).map_err(|e| bad(format!("format {spec:?}: {e}")));
    Ok((width(p)?, width(u)?))
}

/// `--format mx:ELEM[:bK]`: the products' MX format (`None` for any other format), with the
/// options that do not go with it refused as `lpgen train` refuses them.
fn mx_blocks(a: &EvalArgs) -> CliResult<Option<MxFormat>> {
    let Some(f) = a.format.as_deref().map(str::trim).filter(|f| mx::is_mx(f)) else {
        return Ok(None);
    };
    let m: MxFormat = f.parse()?;
    let given = [
        ("--quire", a.quire),
        ("--kahan", a.kahan.is_some()),
        ("--accumulate", a.accumulate.is_some()),
        ("--keep-bits", a.keep_bits.is_some()),
    ];
    let stages = (a.backend.as_deref() == Some("rtl")).then_some(a.array_stages);
    crate::train_cmd::mx::check_options(m, &given, stages)?;
    Ok(Some(m))
}

/// The backend: `--backend`, or f32 for f32 stages and golden otherwise; f32 stages run on
/// the f32 machine and every other format on golden or rtl, as in training (`stored`: seed
/// 002's storage or MX products, f32 arithmetic that also runs on golden and rtl).
fn backend(a: &EvalArgs, stages: &Stages, stored: bool) -> CliResult<String> {
    let f32_stages = stages.list().iter().all(|f| *f == Format::F32(F32));
    let b = a
        .backend
        .clone()
        .unwrap_or_else(|| if f32_stages { "f32" } else { "golden" }.into());
    match b.as_str() {
        "f32" | "golden" | "rtl" => {}
        other => {
            return Err(bad(format!(
                "unknown backend {other:?}: expected f32, golden or rtl"
            )))
        }
    }
    if b == "f32" && !f32_stages {
        return Err(bad(format!(
            "--backend f32 computes in f32; {} runs on --backend golden or rtl",
            stages.describe()
        )));
    }
    if b != "f32" && f32_stages && !stored {
        return Err(bad("format f32 runs on --backend f32"));
    }
    if a.check && b != "rtl" {
        return Err(bad(
            "--check compares the rtl backend with the golden model; add --backend rtl",
        ));
    }
    Ok(b)
}

pub fn run(a: &EvalArgs, out: &mut dyn Write) -> CliResult {
    // Every option is checked before the checkpoint and the dataset are read.
    let (stages, quire, stored) = stages(a)?;
    let kahan = kahan_places(a.kahan.as_deref(), &stages)?;
    let wanted = stored.then(|| eval_storage(a)).transpose()?;
    let blocks = mx_blocks(a)?;
    let backend = backend(a, &stages, stored || blocks.is_some())?;
    let accumulate = match &a.accumulate {
        Some(p) if backend == "f32" => {
            return Err(bad(format!(
                "--accumulate {p}: the f32 machine sums as its matrix library does; choose placements on --backend golden or rtl"
            )))
        }
        Some(p) => AccumulatePlaces::parse(p)?,
        None => AccumulatePlaces::default(),
    };
    check_accumulation(&stages, quire, a.keep_bits, &accumulate)?;
    if backend == "rtl" && a.keep_bits.is_some() {
        return Err(bad(
            "--keep-bits runs on --backend golden (the RTL keeps every bit)",
        ));
    }
    if a.threads.is_some_and(|t| !(1..=256).contains(&t)) {
        return Err(bad("--threads is out of range: give 1..=256"));
    }
    if a.test_limit == Some(0) {
        return Err(bad("--test-limit 0: give at least one test image"));
    }
    if backend == "rtl" {
        lpgen_hdl::limits::check_array(a.rows, a.cols)?;
        lpgen_hdl::limits::check_lanes(a.lanes)?;
    }
    let ck = eval::read_checkpoint(&a.checkpoint)?;
    let (mut storage, fit) = match wanted {
        Some(EvalStorage::Dfix(widths)) => {
            let (s, fit) = dfix_storage(widths, &ck)?;
            (Some(s), fit)
        }
        Some(EvalStorage::Float(c)) => {
            let layers = ck.state.model.layers.len();
            (Some(Storage::new(StorageConfig::Float(c), layers)), true)
        }
        None => (None, false),
    };
    let cfg = Config {
        stages,
        quire,
        kahan,
        accumulate,
        keep_bits: a.keep_bits,
        storage: storage.as_ref().map(Storage::config),
        mx: blocks,
        ..ck.run.cfg.clone()
    };
    let text = a
        .dataset
        .to_str()
        .and_then(|d| d.strip_prefix("text:"))
        .map(std::path::PathBuf::from);
    let context = cfg.arch.gpt.map_or(0, |g| g.context);
    let (mut train, mut test) = match (cfg.arch.reads_text(), text) {
        (true, Some(path)) => lpgen_train::transformer::text::load(&path, context)?,
        (false, None) => data::load_pair_limited(&a.dataset, a.train_limit, a.test_limit)?,
        (true, None) => {
            return Err(bad(
                "the checkpoint is a gpt's: give its --dataset text:PATH",
            ))
        }
        (false, Some(_)) => {
            return Err(bad(
                "--dataset text:PATH is for a gpt's checkpoint; this one takes IDX images",
            ))
        }
    };
    if let Some(n) = a.train_limit {
        train.truncate(n);
    }
    if let Some(n) = a.test_limit {
        test.truncate(n);
    }
    let input = (1, train.shape.0, train.shape.1);
    if !cfg.arch.reads_text() && (cfg.arch.input != input || cfg.arch.classes() != train.classes) {
        return Err(bad(format!(
            "the checkpoint's network takes {}x{}x{} images in {} classes; {} holds {}x{} images in {}",
            cfg.arch.input.0, cfg.arch.input.1, cfg.arch.input.2, cfg.arch.classes(),
            a.dataset.display(), input.1, input.2, train.classes
        )));
    }
    eval::check_training_data(&ck.run, &train)?;
    let threads = a.threads.unwrap_or_else(all_cores);
    let golden = || Golden {
        threads,
        ..Golden::new("golden", a.keep_bits)
    };
    let rtl = || -> CliResult<Rtl> {
        Ok(Rtl::new(a.rows, a.cols, a.lanes)?.with_array_stages(a.array_stages))
    };
    let data = (&train, &test);
    let storage = storage.as_mut();
    let (scores, name) = match (backend.as_str(), a.check) {
        ("rtl", true) => {
            let mut m = Checked {
                dut: rtl()?,
                reference: golden(),
                ops: 0,
            };
            let s = eval::evaluate_checkpoint(&mut m, &ck, &cfg, storage, fit, data)?;
            eprintln!("--check: {} operations, 0 differing bits", m.ops);
            (s, m.name())
        }
        ("rtl", false) => measure(&mut rtl()?, &ck, &cfg, (storage, fit), data)?,
        ("f32", _) => measure(&mut Float { threads }, &ck, &cfg, (storage, fit), data)?,
        _ => measure(&mut golden(), &ck, &cfg, (storage, fit), data)?,
    };
    report(out, &ck, &cfg, &name, test.len(), scores)
}

fn measure<M: Machine>(
    m: &mut M,
    ck: &Checkpoint,
    cfg: &Config,
    (storage, fit): (Option<&mut Storage>, bool),
    data: (&data::Dataset, &data::Dataset),
) -> CliResult<(Scores, String)> {
    let s = eval::evaluate_checkpoint(m, ck, cfg, storage, fit, data)?;
    Ok((s, m.name()))
}

/// The formats of `c`: its stages', `dfix:P:U` / `store:P/U` for seed 002's storage, or
/// the MX format of its products.
fn name(c: &Config) -> String {
    match (c.storage, c.mx) {
        (Some(s), _) => s.name(),
        (None, Some(m)) => m.to_string(),
        (None, None) => c.stages.describe(),
    }
}

/// A line for people, then the figures as one JSON line.
fn report(
    out: &mut dyn Write,
    ck: &Checkpoint,
    cfg: &Config,
    backend: &str,
    images: usize,
    s: Scores,
) -> CliResult {
    let trained = &ck.run.cfg;
    let describe = |c: &Config| {
        let storage = c.storage.map_or(String::new(), |s| {
            format!(" with {} storage ({})", s.kind(), s.describe())
        });
        let storage = match c.mx {
            Some(m) => format!("{storage} with {m} products"),
            None => storage,
        };
        let placed = match c.accumulate.describe() {
            d if d.is_empty() => String::new(),
            d => format!(", accumulate={d}"),
        };
        format!(
            "{}{storage} (quire={}, kahan={}{placed})",
            c.stages.describe(),
            c.quire,
            c.kahan.describe()
        )
    };
    emit(
        out,
        &format!(
            "checkpoint after epoch {}, trained in {}; evaluated in {} on {backend}, {images} test images: accuracy {:.2} %, loss {:.4}",
            ck.state.epochs_done,
            describe(trained),
            describe(cfg),
            100.0 * s.accuracy,
            s.loss
        ),
    )?;
    let line = serde_json::json!({
        "epoch": ck.state.epochs_done,
        "trained": name(trained),
        "format": name(cfg),
        "quire": cfg.quire,
        "kahan": cfg.kahan.describe(),
        "accumulate": cfg.accumulate.describe(),
        "backend": backend,
        "test_images": images,
        "test_loss": s.loss,
        "test_acc": s.accuracy,
    });
    emit(out, &line.to_string())
}
