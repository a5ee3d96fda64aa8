//! A training run: epochs of shuffled batches through a [`Machine`], per-epoch metrics as
//! JSON lines, a plot, and a checkpoint after every epoch from which `--resume` continues
//! bit-identically.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use lpgen_golden::{Calc, Format};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::chart::{self, Line, Panel};
use crate::checkpoint::{self, State};
use crate::config::{Config, Normalize, Optimizer, Schedule};
use crate::data::{self, Dataset};
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::model::Model;
use crate::net::{Forward, Net};
use crate::parallel::Worker;
use crate::plot;
use crate::rounding::Stream;
use crate::scaling::Scales;
use crate::storage::{EpochCounts, Storage};
use crate::transformer::text;
use crate::TrainError;
use lpgen_golden::Rounding;

mod epoch;
mod overlap;
mod results;

use epoch::{save_epoch, schedule_next_epoch, train_epoch, RunContext};
use results::{plot_title, write_results};

/// How long to train and where to put the results.
pub struct Plan {
    pub epochs: u32,
    /// At most this many batches per epoch (a shortened epoch; `None`: all).
    pub max_steps: Option<usize>,
    /// Results directory: metrics.jsonl, plot.png, checkpoint.lpck.
    pub out: PathBuf,
    /// Continue from `out/checkpoint.lpck`.
    pub resume: bool,
    /// Print a progress bar on stderr (when it is a terminal).
    pub progress: bool,
}

/// Per-epoch results: one line of metrics.jsonl (docs/train.md lists the fields). A
/// non-finite figure is written as `null` and read back as NaN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    pub epoch: u32,
    pub backend: String,
    pub lr: f64,
    pub steps: usize,
    #[serde(deserialize_with = "nullable")]
    pub train_loss: f64,
    #[serde(deserialize_with = "nullable")]
    pub train_acc: f64,
    #[serde(deserialize_with = "nullable")]
    pub test_loss: f64,
    #[serde(deserialize_with = "nullable")]
    pub test_acc: f64,
    #[serde(deserialize_with = "nullable")]
    pub seconds: f64,
    #[serde(deserialize_with = "nullable")]
    pub samples_per_s: f64,
    /// Data-parallel runs: gradient bytes each worker sent per step (mean over workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent_per_step: Option<f64>,
    /// Data-parallel runs of more than one worker: the bytes the words would have taken over
    /// the bytes sent (1 for `--compress none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_ratio: Option<f64>,
    /// `--format dfix:P:U`: of the values stored in training this epoch, the fraction that
    /// saturated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_rate: Option<f64>,
    /// `--format dfix:P:U`: every group's scale exponent at the epoch's end (`L1.weights`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scales: Option<BTreeMap<String, i32>>,
    /// `--model gpt`: the test split's bits per character (test_loss / ln 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_bpc: Option<f64>,
}

/// serde_json writes a non-finite f64 as `null`; read it back as NaN.
fn nullable<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl EpochMetrics {
    /// The metrics.jsonl line (no newline).
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("metrics serialize")
    }

    /// Reads a line of metrics.jsonl.
    pub fn from_json(line: &str) -> Result<EpochMetrics, TrainError> {
        serde_json::from_str(line)
            .map_err(|e| TrainError(format!("unreadable metrics line {:?}: {e}", truncate(line))))
    }
}

/// At most 80 characters of `s`, for quoting in an error.
fn truncate(s: &str) -> &str {
    s.char_indices().nth(80).map_or(s, |(i, _)| &s[..i])
}

/// The input words of a batch: pixels normalised per feature (dataset moments, in f64 on
/// the host: this is the data as loaded, not training arithmetic), rounded into `f`.
pub(crate) fn batch_input<W: Word>(
    d: &Dataset,
    idx: &[usize],
    mean: &[f64],
    sd: &[f64],
    f: &Calc,
) -> Mat<W> {
    let mut data = Vec::with_capacity(idx.len() * d.dim);
    for &i in idx {
        for (j, &p) in d.image(i).iter().enumerate() {
            data.push(W::from_bits(
                f.from_f64((p as f64 / 255.0 - mean[j]) / sd[j]),
            ));
        }
    }
    Mat {
        rows: idx.len(),
        cols: d.dim,
        data,
    }
}

/// Cross-entropy (natural log) and correct count of a batch's probabilities, on the host in
/// f64 (reporting only).
fn score<W: Word>(fw: &Forward<W>, labels: &[u8], l: Format) -> (f64, usize) {
    let mut loss = 0.0;
    let mut correct = 0;
    for (r, &label) in labels.iter().enumerate() {
        let p: Vec<f64> = fw.probs.row(r).iter().map(|&w| w.value(l)).collect();
        let pl = p[label as usize];
        loss -= if pl > 1e-30 { pl.ln() } else { (1e-30f64).ln() };
        let best = (0..p.len())
            .max_by(|&a, &b| p[a].partial_cmp(&p[b]).unwrap_or(std::cmp::Ordering::Less))
            .unwrap_or(0);
        correct += (best == label as usize) as usize;
    }
    (loss, correct)
}

fn progress(epoch: u32, epochs: u32, done: usize, total: usize, rate: f64) {
    let width = 30;
    let filled = done * width / total.max(1);
    eprint!(
        "\repoch {epoch}/{epochs} [{}{}] {done}/{total} batches, {rate:.1} samples/s ",
        "#".repeat(filled),
        ".".repeat(width - filled)
    );
    let _ = std::io::stderr().flush();
}

/// Evaluates `model` on `test` (forward passes in batches of the training batch size): the
/// mean cross-entropy and accuracy per label (a gpt's: per predicted token).
pub fn evaluate<M: Machine>(
    net: &mut Net<'_, M>,
    model: &Model<M::Word>,
    test: &Dataset,
    moments: (&[f64], &[f64]),
) -> Result<(f64, f64), TrainError> {
    let f = net.cfg.stages.f.calc();
    let l = net.cfg.stages.l;
    let idx: Vec<usize> = (0..test.len()).collect();
    let (mut loss, mut correct, mut count) = (0.0, 0, 0);
    for chunk in idx.chunks(net.cfg.batch) {
        let (x, labels) = match net.cfg.arch.reads_text() {
            true => text::batch(test, chunk),
            false => (
                batch_input(test, chunk, moments.0, moments.1, &f),
                chunk.iter().map(|&i| test.labels[i]).collect(),
            ),
        };
        let fw = net.forward(model, x)?;
        let (s, c) = score(&fw, &labels, l);
        loss += s;
        correct += c;
        count += labels.len();
    }
    // Per label: a sample's, or a gpt's predicted token.
    Ok((loss / count as f64, correct as f64 / count as f64))
}

/// Runs the training of `plan` with `cfg` on `train` / `test` through `machine`; calls
/// `report` with each epoch's JSON line.
pub fn run<M: Machine + Send>(
    machine: &mut M,
    cfg: &Config,
    train: &Dataset,
    test: &Dataset,
    plan: &Plan,
    report: &mut dyn FnMut(&str) -> Result<(), TrainError>,
) -> Result<State<M::Word>, TrainError> {
    run_worker(machine, cfg, train, test, plan, None, report)
}

/// [`run`] as one of the data-parallel workers of `worker` (`None`: alone). Every worker
/// trains on its share of each minibatch and applies the aggregated gradients; only rank 0
/// writes the results and reports.
pub fn run_worker<M: Machine + Send>(
    machine: &mut M,
    cfg: &Config,
    train: &Dataset,
    test: &Dataset,
    plan: &Plan,
    mut worker: Option<&mut Worker<'_>>,
    report: &mut dyn FnMut(&str) -> Result<(), TrainError>,
) -> Result<State<M::Word>, TrainError> {
    let rank = worker.as_ref().map_or(0, |w| w.transport.rank());
    std::fs::create_dir_all(&plan.out).map_err(|e| {
        TrainError(format!(
            "cannot create output directory {}: {e}",
            plan.out.display()
        ))
    })?;
    let ck = plan.out.join("checkpoint.lpck");
    let fp = run_fingerprint(cfg, train, test, plan, worker.as_deref_mut())?;
    let mut state = initial_state(cfg, plan, (&ck, &fp), rank, worker.as_deref_mut())?;
    let (mean, sd) = match cfg.normalize {
        Normalize::PerPixel => data::moments(train),
        Normalize::Global => data::global_moments(train),
    };
    let fcalc = cfg.stages.f.calc();
    if state.epochs_done == 0 && state.storage.as_ref().is_some_and(Storage::needs_fit) {
        fit_scales(machine, cfg, train, &mut state, (&mean, &sd))?;
    }

    let run = RunContext {
        cfg,
        train,
        test,
        plan,
        rank,
        ck,
        fp,
        mean,
        sd,
        fcalc,
        backend: machine.name(),
        show: plan.progress && std::io::stderr().is_terminal(),
    };
    while state.epochs_done < plan.epochs {
        let epoch = state.epochs_done + 1;
        let m = train_epoch(machine, &run, &mut state, worker.as_deref_mut(), epoch)?;
        let line = m.json();
        schedule_next_epoch(cfg, &mut state, epoch, m.test_loss);
        state.prev_ce = Some(m.test_loss);
        state.history.push(m);
        state.epochs_done = epoch;
        save_epoch(&run, &state, worker.as_deref_mut(), epoch, &line, report)?;
    }
    Ok(state)
}

/// The run's fingerprint, which a checkpoint must match to be resumed: the configuration,
/// the data and, in a data-parallel run, the exchange (every worker must agree on it).
fn run_fingerprint(
    cfg: &Config,
    train: &Dataset,
    test: &Dataset,
    plan: &Plan,
    worker: Option<&mut Worker<'_>>,
) -> Result<String, TrainError> {
    // The data is part of the run: a resume with another dataset or --train-limit is refused.
    let mut fp = format!(
        "{} train={:016x} test={:016x}",
        cfg.fingerprint(),
        train.digest(),
        test.digest()
    );
    if let Some(w) = worker {
        fp += &format!(
            " workers={} exchange={} double_buffer={}",
            w.transport.size(),
            w.sharing.exchange,
            w.sharing.double_buffer
        );
        // Every worker must run the same configuration on the same data (an MPI rank started
        // with other options fails here, on every rank, in one line).
        let run = format!("{fp} epochs={} max_steps={:?}", plan.epochs, plan.max_steps);
        w.transport
            .agree(&run)
            .map_err(|e| TrainError(e.to_string()))?;
    }
    Ok(fp)
}

/// A worker's own state (residuals, AdaGrad squares) after epoch `epoch`, one file per rank.
fn worker_file(out: &Path, rank: usize, epoch: u32) -> PathBuf {
    out.join(format!("worker-{rank}-e{epoch}.lpck"))
}

/// The state training starts from: the checkpoint `ck` of the run `fp` (and the worker's own
/// state beside it) when the plan resumes, else the initial model.
fn initial_state<W: Word>(
    cfg: &Config,
    plan: &Plan,
    (ck, fp): (&Path, &str),
    rank: usize,
    worker: Option<&mut Worker<'_>>,
) -> Result<State<W>, TrainError> {
    if plan.resume {
        let template = Model::init(cfg);
        let storage = cfg.storage.map(|c| Storage::new(c, template.layers.len()));
        let scaling = (!cfg.scaling.is_none()).then_some((cfg.scaling, cfg.stages));
        let state = checkpoint::load(ck, fp, &template, storage, (stream(cfg), scaling))?;
        if let Some(w) = worker {
            let largest = template
                .layers
                .iter()
                .map(|l| l.w.data.len())
                .max()
                .unwrap_or(0);
            let path = worker_file(&plan.out, rank, state.epochs_done);
            w.restore(checkpoint::load_worker(
                &path,
                fp,
                state.epochs_done,
                rank,
                largest,
            )?)?;
        }
        Ok(state)
    } else {
        let model = Model::init(cfg);
        Ok(State {
            epochs_done: 0,
            lr: cfg.lr,
            halving: false,
            prev_ce: None,
            history: vec![],
            storage: cfg.storage.map(|c| Storage::new(c, model.layers.len())),
            stream: stream(cfg),
            scales: (!cfg.scaling.is_none()).then(Scales::default),
            model,
        })
    }
}

/// The run's stochastic-rounding stream at its start (`None` for nearest).
fn stream(cfg: &Config) -> Option<Stream> {
    match cfg.rounding {
        Rounding::Nearest => None,
        r => Some(Stream::new(r, cfg.seed)),
    }
}

/// Seed 002 §9.3: the initial scales from a higher-precision run. `scale_every` examples
/// (at least one batch) of f32 training on a copy of the model, every value counted where it
/// would be stored; then each group's scale is set where the update rule would settle for
/// those values, and training starts from the initial parameters ("we reinitialize the
/// model parameters"). The batches come from stream 0, which no epoch uses.
fn fit_scales<M: Machine>(
    machine: &mut M,
    cfg: &Config,
    train: &Dataset,
    state: &mut State<M::Word>,
    (mean, sd): (&[f64], &[f64]),
) -> Result<(), TrainError> {
    let Some(storage) = state.storage.as_mut() else {
        return Ok(());
    };
    storage.begin_fit();
    let examples = storage.fit_examples().max(1) as usize;
    let mut model = state.model.clone();
    let mut net = Net {
        m: machine,
        cfg,
        storage: Some(storage),
        stream: None,
        scales: None,
    };
    let fcalc = cfg.stages.f.calc();
    let mut order: Vec<usize> = (0..train.len()).collect();
    order.shuffle(&mut cfg.stream(&[0]));
    let momentum = if cfg.momentum_from <= 1 {
        cfg.momentum
    } else {
        0.0
    };
    let mut seen = 0;
    for (s, chunk) in order.chunks(cfg.batch).enumerate() {
        if seen >= examples {
            break;
        }
        let x = batch_input(train, chunk, mean, sd, &fcalc);
        let labels: Vec<u8> = chunk.iter().map(|&i| train.labels[i]).collect();
        let mut noise = cfg.stream(&[0, s as u64]);
        let (_, grads) = net.gradients(&model, x, &labels, &mut noise)?;
        net.apply(&mut model, grads, cfg.lr, chunk.len(), momentum, false)?;
        seen += chunk.len();
    }
    if let Some(s) = net.storage {
        s.end_fit();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_are_json_with_null_for_non_finite_figures() {
        let m = EpochMetrics {
            epoch: 2,
            backend: "golden".into(),
            lr: 0.05,
            steps: 10,
            train_loss: 1.5,
            train_acc: 0.5,
            test_loss: f64::NAN,
            test_acc: 0.25,
            seconds: f64::INFINITY,
            samples_per_s: 3.0,
            bytes_sent_per_step: None,
            compression_ratio: None,
            overflow_rate: None,
            scales: None,
            test_bpc: None,
        };
        let line = m.json();
        assert!(
            line.contains(r#""test_loss":null"#) && !line.contains("NaN"),
            "{line}"
        );
        let back = EpochMetrics::from_json(&line).unwrap();
        assert!(back.test_loss.is_nan() && back.seconds.is_nan());
        assert_eq!(
            (back.epoch, back.train_acc, &back.backend[..]),
            (2, 0.5, "golden")
        );
        let e = EpochMetrics::from_json("{\"epoch\": 1}\nx").unwrap_err().0;
        assert!(
            e.starts_with("unreadable metrics line") && !e.contains('\n'),
            "{e}"
        );
    }
}
