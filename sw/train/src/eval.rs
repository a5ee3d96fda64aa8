//! Evaluation of a trained model in another format (`lpgen eval`; seed 004 ch. 5, seed 000
//! Table 4.3): a checkpoint's parameters converted into the formats of an evaluation, and its
//! test pass run through a [`Machine`] exactly as training's own test pass runs.
//!
//! The conversion: every weight and bias word of the checkpoint (in its optimizer format O)
//! is decoded to an f64 by the golden model of the family it was trained in (exact for every
//! family but LNS, whose values 2^(k/2^F) are decoded to the nearest f64), and that f64 is
//! encoded into the evaluation's O by its golden `from_f64`, the family's round to nearest.
//! The forward pass then reads them as training's does (converted from O to F by the
//! machine).

use std::path::Path;

use lpgen_golden::Format;

use crate::checkpoint::{self, State};
use crate::config::{Config, Normalize};
use crate::data::{self, Dataset};
use crate::machine::{Machine, Mat, Word};
use crate::model::{Model, Params};
use crate::net::Net;
use crate::storage::Role;
use crate::storage::Storage;
use crate::trainer::{batch_input, evaluate};
use crate::TrainError;

mod fingerprint;

pub use fingerprint::{parse as parse_fingerprint, RunConfig};

/// A checkpoint as evaluation reads it: the run's configuration and its state.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub run: RunConfig,
    /// The words as stored (f32 runs: the IEEE bits).
    pub state: State<u64>,
}

/// Whether the file at `path` begins as a checkpoint does (its first bytes only are read).
fn begins_as_checkpoint(path: &Path) -> Result<bool, TrainError> {
    use std::io::Read;
    let magic = b"lpgen-checkpoint ";
    let mut head = Vec::with_capacity(magic.len());
    std::fs::File::open(path)
        .and_then(|f| f.take(magic.len() as u64).read_to_end(&mut head))
        .map_err(|e| TrainError(format!("cannot read checkpoint {}: {e}", path.display())))?;
    Ok(head == magic)
}

/// The words a checkpoint of `cfg`'s model holds (every array `checkpoint::save` writes per
/// layer with weights: the weights, momenta and compensations, the adaptive optimizers'
/// squares, and as many of each for the biases), or `None` past `u128`.
fn stored_words(cfg: &Config) -> Option<u128> {
    let arrays: u128 = if cfg.optimizer.is_adaptive() { 4 } else { 3 };
    cfg.arch
        .weight_shapes()
        .iter()
        .try_fold(0u128, |sum, &(rows, cols)| {
            let (rows, cols) = (rows as u128, cols as u128);
            sum.checked_add(arrays * rows * (cols + 1))
        })
}

/// Reads the checkpoint at `path` (a file, or a run directory holding `checkpoint.lpck`):
/// its digest first (as `--resume` does), then its configuration from its fingerprint,
/// whose network must fit the file (every stored word takes at least two characters) before
/// anything of its size is allocated, then its state, checked as `--resume` checks it.
pub fn read_checkpoint(path: &Path) -> Result<Checkpoint, TrainError> {
    let file = if path.is_dir() {
        path.join("checkpoint.lpck")
    } else {
        path.to_path_buf()
    };
    if !file.is_file() {
        return Err(TrainError(format!(
            "no checkpoint at {} (give a run's --out directory or its checkpoint.lpck)",
            file.display()
        )));
    }
    let bad = |why: String| TrainError(format!("checkpoint {} is unusable: {why}", file.display()));
    if !begins_as_checkpoint(&file)? {
        return Err(bad("not an lpgen checkpoint".into()));
    }
    let text = checkpoint::verified(&file)?;
    let fp = text.lines().nth(1).ok_or_else(|| bad("truncated".into()))?;
    let run = fingerprint::parse(fp).map_err(|e| bad(e.0))?;
    let words = stored_words(&run.cfg);
    if words.is_none_or(|w| w.saturating_mul(2) > text.len() as u128) {
        return Err(bad(format!(
            "its network ({}) has more parameters than its {} bytes can hold",
            run.cfg.arch.describe(),
            text.len()
        )));
    }
    let template: Model<u64> = Model::init(&run.cfg);
    let storage = run
        .cfg
        .storage
        .map(|c| Storage::new(c, template.layers.len()));
    // A stochastically rounded run's stream line is read (and not used: evaluation rounds
    // to nearest).
    let stream = match run.cfg.rounding {
        lpgen_golden::Rounding::Nearest => None,
        r => Some(crate::rounding::Stream::new(r, run.cfg.seed)),
    };
    let state = checkpoint::parse(&file, &text, fp, &template, (storage, stream, None))?;
    // A word wider than its format (a file edited and re-digested) is refused, not decoded.
    let o = run.cfg.stages.o;
    let wide = |w: &u64| o.width() < 64 && *w >> o.width() != 0;
    if state
        .model
        .layers
        .iter()
        .any(|l| l.w.data.iter().chain(&l.b).any(wide))
    {
        return Err(bad(format!("a parameter word is wider than {o}")));
    }
    Ok(Checkpoint { run, state })
}

/// The weights and biases of `model` (words of `from`) as words of `to`: each decoded to f64
/// by `from`'s golden model and encoded by `to`'s (round to nearest). The optimizer's state
/// (momenta, squares, compensations) is not carried: evaluation does not read it.
pub fn convert_params(model: &Model<u64>, from: Format, to: Format) -> Model<u64> {
    let (src, dst) = (from.calc(), to.calc());
    let words =
        |w: &[u64]| -> Vec<u64> { w.iter().map(|&x| dst.from_f64(src.to_f64(x))).collect() };
    Model {
        layers: model
            .layers
            .iter()
            .map(|l| Params {
                w: Mat {
                    rows: l.w.rows,
                    cols: l.w.cols,
                    data: words(&l.w.data),
                },
                b: words(&l.b),
                vw: vec![],
                vb: vec![],
                rw: vec![],
                rb: vec![],
                cw: vec![],
                cb: vec![],
            })
            .collect(),
        updates: model.updates,
    }
}

/// What an evaluation measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Mean cross-entropy (natural log) over the test images.
    pub loss: f64,
    /// The fraction classified correctly.
    pub accuracy: f64,
}

/// The training set whose moments normalise the inputs must be the run's own: its digest is
/// in the checkpoint.
pub fn check_training_data(run: &RunConfig, train: &Dataset) -> Result<(), TrainError> {
    if train.digest() != run.train_digest {
        return Err(TrainError(format!(
            "the checkpoint was trained on other training data ({} images here): the inputs are normalised by the training set's moments, so give the --dataset and --train-limit of its run",
            train.len()
        )));
    }
    Ok(())
}

/// Seed 002 §9.3's initial scales for a model that was not trained in dfix storage: every
/// weight and bias counted in its group, then the forward passes of the first
/// `scale_every` training images (inputs normalised by `moments`) counted in theirs; each
/// group's scale is set where the update rule would settle (`Storage::end_fit`), and the
/// parameters are stored onto their groups' grids as a dfix run stores them. A float storage
/// fits nothing: the parameters are rounded to its format. `model` is in the run's F (f32).
pub fn fit_storage<M: Machine>(
    machine: &mut M,
    cfg: &Config,
    model: &mut Model<M::Word>,
    storage: &mut Storage,
    (train, moments): (&Dataset, (&[f64], &[f64])),
) -> Result<(), TrainError> {
    let f = cfg.stages.f;
    let store_params = |storage: &mut Storage, model: &mut Model<M::Word>| {
        for (i, l) in model.layers.iter_mut().enumerate() {
            storage.store(f, (i, Role::Weights), &mut l.w.data, (false, None))?;
            storage.store(f, (i, Role::Biases), &mut l.b, (false, None))?;
        }
        Ok::<(), TrainError>(())
    };
    if storage.needs_fit() {
        storage.begin_fit();
        // While fitting, stores only count: the parameters stay as they are.
        store_params(storage, model)?;
        let n = (storage.fit_examples() as usize).clamp(1, train.len());
        let fcalc = f.calc();
        let idx: Vec<usize> = (0..n).collect();
        let mut net = Net {
            m: machine,
            cfg,
            storage: Some(&mut *storage),
            stream: None,
            scales: None,
        };
        for chunk in idx.chunks(cfg.batch) {
            let x = batch_input(train, chunk, moments.0, moments.1, &fcalc);
            net.forward(model, x)?;
        }
        storage.end_fit();
    }
    store_params(storage, model)
}

/// Evaluates checkpoint `ck` with configuration `cfg` (the run's network with the
/// evaluation's stage formats and accumulations) on `test` through `machine`, inputs
/// normalised by the moments of `train` (the run's). `storage`: seed 002's groups the pass
/// stores into: the checkpoint's own for a dfix run evaluated at its widths (`fit: false`),
/// otherwise new groups whose scales [`fit_storage`] sets first (`fit: true`).
pub fn evaluate_checkpoint<M: Machine>(
    machine: &mut M,
    ck: &Checkpoint,
    cfg: &Config,
    mut storage: Option<&mut Storage>,
    fit: bool,
    (train, test): (&Dataset, &Dataset),
) -> Result<Scores, TrainError> {
    if test.is_empty() {
        return Err(TrainError("no test images to evaluate on".into()));
    }
    let (mean, sd) = match cfg.normalize {
        Normalize::PerPixel => data::moments(train),
        Normalize::Global => data::global_moments(train),
    };
    let bits = convert_params(&ck.state.model, ck.run.cfg.stages.o, cfg.stages.o);
    let mut model = Model {
        layers: bits
            .layers
            .into_iter()
            .map(|l| Params {
                w: Mat {
                    rows: l.w.rows,
                    cols: l.w.cols,
                    data: l.w.data.into_iter().map(M::Word::from_bits).collect(),
                },
                b: l.b.into_iter().map(M::Word::from_bits).collect(),
                vw: vec![],
                vb: vec![],
                rw: vec![],
                rb: vec![],
                cw: vec![],
                cb: vec![],
            })
            .collect(),
        updates: bits.updates,
    };
    if let (Some(s), true) = (storage.as_deref_mut(), fit) {
        fit_storage(machine, cfg, &mut model, s, (train, (&mean, &sd)))?;
    }
    let mut net = Net {
        m: machine,
        cfg,
        storage,
        stream: None,
        scales: None,
    };
    let (loss, accuracy) = evaluate(&mut net, &model, test, (&mean, &sd))?;
    Ok(Scores { loss, accuracy })
}

#[cfg(test)]
mod tests;
