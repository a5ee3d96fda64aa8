//! One epoch of a run: its steps (each minibatch, both halves with double buffering, the
//! overlapped ones in `overlap.rs`), its metrics, the learning-rate schedule and the files
//! written after it.

use super::*;

/// What stays fixed over the epochs of a run.
pub(super) struct RunContext<'r> {
    pub(super) cfg: &'r Config,
    pub(super) train: &'r Dataset,
    pub(super) test: &'r Dataset,
    pub(super) plan: &'r Plan,
    /// This worker's rank (0 alone).
    pub(super) rank: usize,
    /// The checkpoint's path.
    pub(super) ck: PathBuf,
    /// The run's fingerprint (checkpoints of another run are refused).
    pub(super) fp: String,
    /// The training set's moments, by which inputs are normalised.
    pub(super) mean: Vec<f64>,
    pub(super) sd: Vec<f64>,
    /// The forward format's arithmetic (input words are rounded into it).
    pub(super) fcalc: Calc,
    /// The machine's name, for the metrics and the plot.
    pub(super) backend: String,
    /// Whether to print a progress bar.
    pub(super) show: bool,
}

/// One epoch in progress: its settings, and what its steps have added up.
pub(super) struct Epoch<W> {
    pub(super) number: u32,
    pub(super) start: Instant,
    /// The batches it trains on.
    pub(super) steps: usize,
    pub(super) lr: f64,
    pub(super) momentum: f64,
    pub(super) double_buffer: bool,
    /// Whether the exchange delivers gradients AdaGrad already normalized.
    pub(super) normalized: bool,
    /// The worker's transport counters as the epoch began: bytes sent, and as plain words.
    pub(super) sent_before: Option<u64>,
    pub(super) words_before: Option<u64>,
    /// Double buffering: the aggregated gradient of the previous half-minibatch, applied
    /// after the next half's gradients are computed (on a model one half late).
    pub(super) pending: Option<(Vec<Grads<W>>, usize)>,
    pub(super) loss: f64,
    pub(super) correct: usize,
    pub(super) seen: usize,
}

/// Trains epoch `epoch`: its shuffled batches, one [`train_step`] each, then the test pass;
/// returns the epoch's metrics.
pub(super) fn train_epoch<M: Machine + Send>(
    machine: &mut M,
    run: &RunContext<'_>,
    state: &mut State<M::Word>,
    mut worker: Option<&mut Worker<'_>>,
    epoch: u32,
) -> Result<EpochMetrics, TrainError> {
    let cfg = run.cfg;
    let start = Instant::now();
    // The order of epoch e depends only on (seed, e): a resumed run sees the same batches.
    let mut rng = cfg.stream(&[epoch as u64]);
    let mut order: Vec<usize> = (0..run.train.len()).collect();
    order.shuffle(&mut rng);
    let batches: Vec<&[usize]> = order.chunks(cfg.batch).collect();
    let steps = run
        .plan
        .max_steps
        .map_or(batches.len(), |m| m.min(batches.len()));
    let momentum = if epoch >= cfg.momentum_from {
        cfg.momentum
    } else {
        0.0
    };
    if let Some(s) = &mut state.storage {
        s.epoch = EpochCounts::default();
    }
    let mut ep = Epoch {
        number: epoch,
        start,
        steps,
        lr: state.lr,
        momentum,
        sent_before: worker.as_ref().map(|w| w.transport.counters().sent),
        words_before: worker.as_ref().map(|w| w.word_bytes),
        double_buffer: worker.as_ref().is_some_and(|w| w.sharing.double_buffer),
        normalized: worker.is_some() && Worker::normalizes(cfg),
        pending: None,
        loss: 0.0,
        correct: 0,
        seen: 0,
    };
    // The overlapped exchange runs without the rounding stream (its draws would be taken in
    // another order): a run with one takes turns.
    let overlap = worker
        .as_ref()
        .is_some_and(|w| w.sharing.double_buffer && w.sharing.overlap)
        && state.stream.is_none();
    match worker.as_deref_mut() {
        Some(w) if overlap => {
            overlap::train_steps(machine, run, state, w, &mut ep, &batches[..steps])?
        }
        _ => {
            let mut net = Net {
                m: &mut *machine,
                cfg,
                storage: state.storage.as_mut(),
                stream: state.stream.as_mut(),
                scales: state.scales.as_mut(),
            };
            for (s, &chunk) in batches[..steps].iter().enumerate() {
                let model = &mut state.model;
                train_step(
                    &mut net,
                    model,
                    worker.as_deref_mut(),
                    run,
                    &mut ep,
                    (s, chunk),
                )?;
                progress_line(run, &ep, s);
            }
            // The epoch ends with every gradient applied (so a checkpoint holds no pending one).
            if let Some((grads, n)) = ep.pending.take() {
                net.apply(
                    &mut state.model,
                    grads,
                    ep.lr,
                    n,
                    ep.momentum,
                    ep.normalized,
                )?;
            }
        }
    }
    let train_secs = start.elapsed().as_secs_f64();
    if run.show {
        eprintln!();
    }
    let mut net = Net {
        m: machine,
        cfg,
        storage: state.storage.as_mut(),
        stream: state.stream.as_mut(),
        scales: state.scales.as_mut(),
    };
    epoch_metrics(&mut net, &state.model, run, worker, ep, train_secs)
}

/// The progress bar after step `s` of epoch `ep` (every tenth step and the last).
pub(super) fn progress_line<W>(run: &RunContext<'_>, ep: &Epoch<W>, s: usize) {
    if run.show && (s.is_multiple_of(10) || s + 1 == ep.steps) {
        progress(
            ep.number,
            run.plan.epochs,
            s + 1,
            ep.steps,
            ep.seen as f64 / ep.start.elapsed().as_secs_f64(),
        );
    }
}

/// Step `s` of an epoch, on minibatch `chunk` (in two halves when double buffering): this
/// worker's share through the forward and backward passes, the gradients aggregated among the
/// workers and applied (one half late when double buffering), the scores added up.
pub(super) fn train_step<M: Machine>(
    net: &mut Net<'_, M>,
    model: &mut Model<M::Word>,
    mut worker: Option<&mut Worker<'_>>,
    run: &RunContext<'_>,
    ep: &mut Epoch<M::Word>,
    (s, chunk): (usize, &[usize]),
) -> Result<(), TrainError> {
    let (cfg, epoch) = (run.cfg, ep.number);
    // A worker trains on its share of the minibatch, with its own dropout masks; without
    // workers the masks come from a stream of (epoch, step), so a resumed run draws the same.
    let mut noise = match &worker {
        Some(_) => cfg.stream(&[epoch as u64, s as u64, run.rank as u64]),
        None => cfg.stream(&[epoch as u64, s as u64]),
    };
    for part in halves(chunk, ep.double_buffer) {
        let mine = match &worker {
            Some(w) => &part[w.share(part.len())],
            None => part,
        };
        let (x, labels) = half_input(run, mine);
        let (fw, grads) = net.gradients(model, x, &labels, &mut noise)?;
        let grads = match worker.as_deref_mut() {
            Some(w) => w.aggregate(net, grads, chunk.len())?,
            None => grads,
        };
        // Each half's gradient is divided by the whole minibatch's size, so that the two half
        // updates make one minibatch's step.
        let ready = if ep.double_buffer {
            ep.pending.replace((grads, chunk.len()))
        } else {
            Some((grads, chunk.len()))
        };
        if let Some((grads, n)) = ready {
            net.apply(model, grads, ep.lr, n, ep.momentum, ep.normalized)?;
        }
        tally(net, ep, &fw, &labels);
    }
    Ok(())
}

/// The parts of minibatch `chunk` that are computed in turn: its two halves when double
/// buffering (the first one sample longer when the size is odd; an empty half is skipped),
/// else the whole.
pub(super) fn halves(chunk: &[usize], double_buffer: bool) -> Vec<&[usize]> {
    if double_buffer {
        let (first, second) = chunk.split_at(chunk.len().div_ceil(2));
        [first, second]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect()
    } else {
        vec![chunk]
    }
}

/// The input words and labels of the samples `mine` (a gpt's: its windows' tokens).
pub(super) fn half_input<W: Word>(run: &RunContext<'_>, mine: &[usize]) -> (Mat<W>, Vec<u8>) {
    if run.cfg.arch.reads_text() {
        return text::batch(run.train, mine);
    }
    let x = batch_input(run.train, mine, &run.mean, &run.sd, &run.fcalc);
    let labels = mine.iter().map(|&i| run.train.labels[i]).collect();
    (x, labels)
}

/// Adds a computed part's samples to the storage's count and its scores to the epoch's.
pub(super) fn tally<M: Machine>(
    net: &mut Net<'_, M>,
    ep: &mut Epoch<M::Word>,
    fw: &Forward<M::Word>,
    labels: &[u8],
) {
    if let Some(s) = net.storage.as_deref_mut() {
        s.examples(labels.len() as u64);
    }
    let (l, c) = score(fw, labels, net.cfg.stages.l);
    ep.loss += l;
    ep.correct += c;
    ep.seen += labels.len();
}

/// The metrics of a trained epoch: the training figures (summed over the workers), the test
/// pass, and the storage's scales and overflow rate.
pub(super) fn epoch_metrics<M: Machine>(
    net: &mut Net<'_, M>,
    model: &Model<M::Word>,
    run: &RunContext<'_>,
    worker: Option<&mut Worker<'_>>,
    ep: Epoch<M::Word>,
    train_secs: f64,
) -> Result<EpochMetrics, TrainError> {
    let (mut loss, mut correct, mut seen) = (ep.loss, ep.correct, ep.seen);
    let (mut bytes_sent_per_step, mut compression_ratio) = (None, None);
    if let Some(w) = worker {
        let sent = (w.transport.counters().sent - ep.sent_before.unwrap_or(0)) as f64;
        let as_words = (w.word_bytes - ep.words_before.unwrap_or(0)) as f64;
        let totals = w.totals(&[loss, correct as f64, seen as f64, sent, as_words])?;
        (loss, correct, seen) = (totals[0], totals[1] as usize, totals[2] as usize);
        // Mean over the workers of the bytes each sent per step.
        bytes_sent_per_step = Some(totals[3] / (w.transport.size() * ep.steps.max(1)) as f64);
        compression_ratio = (totals[3] > 0.0).then(|| totals[4] / totals[3]);
    }
    // Every worker holds the same model, so every worker's test pass gives the same figures.
    let (test_loss, test_acc) = evaluate(net, model, run.test, (&run.mean, &run.sd))?;
    // The scales as the epoch leaves them, and the rate of stored values that saturated.
    let scales = net.storage.as_deref().and_then(Storage::scales);
    let overflow_rate = net
        .storage
        .as_deref()
        .map(|s| s.epoch.overflows as f64 / s.epoch.stored.max(1) as f64);
    Ok(EpochMetrics {
        epoch: ep.number,
        backend: run.backend.clone(),
        // A per-update schedule (cosine): the rate of the epoch's last update.
        lr: run
            .cfg
            .schedule
            .rate(ep.lr, model.updates.saturating_sub(1)),
        steps: ep.steps,
        train_loss: loss / seen.max(1) as f64,
        train_acc: correct as f64 / seen.max(1) as f64,
        test_loss,
        test_acc,
        seconds: ep.start.elapsed().as_secs_f64(),
        samples_per_s: seen as f64 / train_secs,
        bytes_sent_per_step,
        compression_ratio,
        overflow_rate,
        scales,
        test_bpc: run
            .cfg
            .arch
            .reads_text()
            .then(|| test_loss / std::f64::consts::LN_2),
    })
}

/// The learning rate schedule after epoch `epoch`, whose test cross-entropy was `test_loss`.
pub(super) fn schedule_next_epoch<W>(
    cfg: &Config,
    state: &mut State<W>,
    epoch: u32,
    test_loss: f64,
) {
    if let Schedule::Halving { hold, threshold } = cfg.schedule {
        if let Some(prev) = state.prev_ce {
            if epoch >= hold && (prev - test_loss) / prev < threshold {
                state.halving = true;
            }
        }
        if state.halving {
            state.lr /= 2.0;
        }
    }
    if let Schedule::Step { every } = cfg.schedule {
        if epoch.is_multiple_of(every) {
            state.lr /= 2.0;
        }
    }
}

/// Writes what epoch `epoch` leaves: every worker's own state, then (rank 0) the checkpoint,
/// metrics.jsonl and the plots, and the epoch's metrics `line` to `report`; then the workers'
/// states of the epoch before are deleted.
pub(super) fn save_epoch<W: Word>(
    run: &RunContext<'_>,
    state: &State<W>,
    mut worker: Option<&mut Worker<'_>>,
    epoch: u32,
    line: &str,
    report: &mut dyn FnMut(&str) -> Result<(), TrainError>,
) -> Result<(), TrainError> {
    let (out, rank) = (&run.plan.out, run.rank);
    // Every worker's state is on disk before the checkpoint that needs it, and the previous
    // epoch's is deleted only after it: a crash leaves a consistent pair.
    if let Some(w) = worker.as_deref_mut() {
        checkpoint::save_worker(
            &worker_file(out, rank, epoch),
            &run.fp,
            epoch,
            rank,
            &w.state(),
        )?;
        w.transport
            .barrier()
            .map_err(|e| TrainError(e.to_string()))?;
    }
    if rank == 0 {
        checkpoint::save(&run.ck, &run.fp, state)?;
        write_results(run.plan, &plot_title(run.cfg, &run.backend), &state.history)?;
        report(line)?;
    }
    if let Some(w) = worker {
        w.transport
            .barrier()
            .map_err(|e| TrainError(e.to_string()))?;
        let _ = std::fs::remove_file(worker_file(out, rank, epoch - 1));
    }
    Ok(())
}
