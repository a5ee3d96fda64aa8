//! Data-parallel training (seed 001 §2.1, §3.1): K workers, each with its own machine and a
//! copy of the model, split every minibatch into K contiguous shares (`lpgen_comm::partition`);
//! each computes the gradients of its share, and the gradients are aggregated through a
//! [`Transport`]: each worker owns a 1/K stripe of every weight matrix's columns, receives the
//! peers' (1-bit quantized, with error feedback) slices of its stripe, sums them in source-rank
//! order in G with the run's sum accumulation, quantizes the sum again with its own residual
//! and all-gathers the stripes (`lpgen_comm::exchange`). Every worker then applies the same
//! aggregated gradient, so the copies stay identical word for word; the result depends on K
//! but not on the transport or on thread timing.
//!
//! The exchange sends words, 1-bit codes (with or without error feedback) or seed 003's 8-bit
//! codes ([`Exchange`]). AdaGrad may normalize on the worker before the exchange or on the
//! owner between its two steps (`--adagrad-at`, §4); the state that this leaves on a worker
//! (residuals, AdaGrad's squares) is [`Worker::state`], checkpointed beside the model. Double
//! buffering (§2.2) is the trainer's: it delays each half-minibatch's update by one half, and
//! (unless [`Sharing::overlap`] is off) runs each half's exchange on a communication thread
//! while the next half is computed (`trainer/overlap.rs`).

use lpgen_comm::exchange;
use lpgen_comm::{partition, Transport};
use lpgen_golden::onebit::{self, Quantizer};
use lpgen_golden::q8::Q8Type;

use crate::config::{AdaGradAt, Config, Optimizer, Place};
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::net::Net;
use crate::TrainError;

/// How the workers exchange gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// The words themselves.
    Words,
    /// Seed 001's 1-bit quantization; `feedback`: carry each quantization error into the
    /// next minibatch (`--no-error-feedback` turns it off).
    OneBit { feedback: bool },
    /// Seed 003's 8-bit codes (§3.4), without error feedback as that paper.
    Q8(Q8Type),
}

impl Exchange {
    /// `none`, `1bit` (with error feedback unless `feedback` is false) or `q8:TYPE`.
    pub fn parse(s: &str, feedback: bool) -> Result<Exchange, TrainError> {
        let exchange = match s {
            "none" => Exchange::Words,
            "1bit" => return Ok(Exchange::OneBit { feedback }),
            _ if s.starts_with("q8:") => Exchange::Q8(
                s.parse()
                    .map_err(|e: lpgen_golden::FormatError| TrainError(e.0))?,
            ),
            _ => {
                return Err(TrainError(format!(
                    "unknown gradient exchange {s:?}: expected none, 1bit or q8:TYPE"
                )))
            }
        };
        if !feedback {
            return Err(TrainError(format!(
                "--no-error-feedback applies to --compress 1bit, not {s:?}"
            )));
        }
        Ok(exchange)
    }
}

impl std::fmt::Display for Exchange {
    /// As `--compress` names it (`1bit` without error feedback as `1bit-no-feedback`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exchange::Words => f.write_str("none"),
            Exchange::OneBit { feedback: true } => f.write_str("1bit"),
            Exchange::OneBit { feedback: false } => f.write_str("1bit-no-feedback"),
            Exchange::Q8(t) => write!(f, "{t}"),
        }
    }
}

/// How the data-parallel workers cooperate: the gradient exchange, and whether each minibatch
/// is split in two halves whose updates land one half late (`--double-buffer`, seed 001 §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharing {
    pub exchange: Exchange,
    pub double_buffer: bool,
    /// With `double_buffer`: each half's exchange runs on a communication thread while the
    /// next half is computed (the paper's point); off (`--no-overlap`), the two take turns on
    /// the worker's thread. Both give the same model word for word.
    pub overlap: bool,
}

impl From<Exchange> for Sharing {
    fn from(exchange: Exchange) -> Sharing {
        Sharing {
            exchange,
            double_buffer: false,
            overlap: false,
        }
    }
}

/// One worker's part of the aggregation: its rank's transport and, per exchanged matrix, the
/// state that lives on a worker rather than in the model.
pub struct Worker<'t> {
    /// `Send`, so that an overlapped exchange can run on a communication thread.
    pub transport: &'t mut (dyn Transport + Send),
    pub sharing: Sharing,
    slots: Vec<Slot>,
    /// Bytes this worker's exchanges would have sent as plain words (the compression ratio's
    /// numerator; the transport counts what was sent).
    pub word_bytes: u64,
}

/// A worker's state for one exchanged matrix (a weight matrix, or a bias as one column).
struct Slot {
    /// Error feedback of the first quantization: this worker's whole gradient, in G.
    worker_residual: Vec<u64>,
    /// Error feedback of the second quantization: the stripe this worker owns, in G.
    owner_residual: Vec<u64>,
    /// AdaGrad's accumulated squares in O: of this worker's whole sub-gradient
    /// (`--adagrad-at local`) or of the owned stripe of the sum (`aggregate`); empty otherwise.
    adagrad: Vec<u64>,
}

impl<'t> Worker<'t> {
    pub fn new(
        transport: &'t mut (dyn Transport + Send),
        sharing: impl Into<Sharing>,
    ) -> Worker<'t> {
        Worker {
            transport,
            sharing: sharing.into(),
            slots: vec![],
            word_bytes: 0,
        }
    }

    /// Whether the aggregate this worker delivers is already normalized by AdaGrad (placed
    /// `local` or `aggregate`), so that the update applies only momentum and the rate.
    pub fn normalizes(cfg: &Config) -> bool {
        matches!(
            cfg.optimizer,
            Optimizer::AdaGrad {
                at: AdaGradAt::Local | AdaGradAt::Aggregate,
                ..
            }
        )
    }

    /// The state this worker holds beyond the model (three arrays per exchanged matrix: the
    /// worker's and the owner's residuals and the AdaGrad squares), for its checkpoint.
    pub fn state(&self) -> Vec<Vec<u64>> {
        self.slots
            .iter()
            .flat_map(|s| {
                [
                    s.worker_residual.clone(),
                    s.owner_residual.clone(),
                    s.adagrad.clone(),
                ]
            })
            .collect()
    }

    /// Restores what [`Worker::state`] returned (checked against the model's shapes at the
    /// first exchange).
    pub fn restore(&mut self, arrays: Vec<Vec<u64>>) -> Result<(), TrainError> {
        if !arrays.len().is_multiple_of(3) {
            return Err(TrainError(format!(
                "a worker state of {} arrays: expected three per exchanged matrix",
                arrays.len()
            )));
        }
        let mut it = arrays.into_iter();
        self.slots.clear();
        while let (Some(worker_residual), Some(owner_residual), Some(adagrad)) =
            (it.next(), it.next(), it.next())
        {
            self.slots.push(Slot {
                worker_residual,
                owner_residual,
                adagrad,
            });
        }
        Ok(())
    }

    /// This worker's share of a minibatch of `n` samples.
    pub fn share(&self, n: usize) -> std::ops::Range<usize> {
        partition(n, self.transport.size(), self.transport.rank())
    }

    /// The sum over all workers of every layer's gradients (each worker passes its own), as
    /// the exchange delivers it; identical on every worker. `batch`: the minibatch's size
    /// (the 8-bit codecs see mean gradients, as in the paper).
    pub fn aggregate<M: Machine>(
        &mut self,
        net: &mut Net<'_, M>,
        grads: Vec<Grads<M::Word>>,
        batch: usize,
    ) -> Result<Vec<Grads<M::Word>>, TrainError> {
        let cfg: &Config = net.cfg;
        let g = cfg.stages.g;
        let mode = cfg.accumulation(Place::Sums, g).mode();
        let quantizer = Quantizer::new(g, mode).map_err(|e| TrainError(e.to_string()))?;
        let zero = g.calc().zero();
        let at = match cfg.optimizer {
            Optimizer::AdaGrad { at, .. } => Some(at),
            _ => None,
        };
        let workers = self.transport.size();
        // The 8-bit codecs see mean gradients, or normalized ones (of order one) as they are.
        let unit = if Worker::normalizes(cfg) {
            1.0
        } else {
            batch as f64
        };
        let comm = |e: lpgen_comm::CommError| TrainError(e.to_string());
        let mut out = vec![];
        let mut slot = 0;
        for (gw, gb) in grads {
            let mut parts = vec![];
            // The weight matrix (columns = inputs) and the bias as one column.
            for (rows, cols, words) in [(gw.rows, gw.cols, gw.data), (gb.len(), 1, gb)] {
                let stripe_cols = exchange::my_columns(&*self.transport, cols).len();
                if self.slots.len() == slot {
                    self.slots.push(Slot {
                        worker_residual: vec![zero; rows * cols],
                        owner_residual: vec![zero; rows * stripe_cols],
                        adagrad: vec![],
                    });
                }
                let state = &mut self.slots[slot];
                slot += 1;
                // A restored state must fit the model (AdaGrad's squares start empty).
                let n = rows * cols;
                if state.worker_residual.len() != n
                    || state.owner_residual.len() != rows * stripe_cols
                    || ![0, n, rows * stripe_cols].contains(&state.adagrad.len())
                {
                    return Err(TrainError(format!(
                        "the worker state of exchanged matrix {slot} does not fit a {rows} x {cols} gradient"
                    )));
                }
                // As words: to each peer its stripe, then this worker's stripe to each peer.
                let value_bytes = onebit::value_bytes(g) as u64;
                self.word_bytes += value_bytes
                    * rows as u64
                    * ((cols - stripe_cols) + stripe_cols * (workers - 1)) as u64;
                let mut bits: Vec<u64> = words.iter().map(|w| w.to_bits()).collect();
                if at == Some(AdaGradAt::Local) {
                    // The mean of the K normalized sub-gradients reaches the update.
                    bits = normalized(net, &mut state.adagrad, &bits, batch, workers)?;
                }
                let (_, mut stripe) = match self.sharing.exchange {
                    Exchange::Words => {
                        exchange::reduce_scatter_words(self.transport, g, mode, &bits, rows, cols)
                    }
                    // The machine quantizes (the RTL `quant1` unit where it has one).
                    Exchange::OneBit { feedback } => {
                        let whole = net.m.quantize_1bit(
                            g,
                            mode,
                            &bits,
                            (rows, cols),
                            feedback.then_some(&mut state.worker_residual[..]),
                        )?;
                        exchange::reduce_scatter_quantized(self.transport, &quantizer, &whole)
                    }
                    Exchange::Q8(codec) => exchange::reduce_scatter_q8(
                        self.transport,
                        codec,
                        g,
                        mode,
                        &bits,
                        rows,
                        cols,
                        unit,
                    ),
                }
                .map_err(comm)?;
                if at == Some(AdaGradAt::Aggregate) {
                    stripe = normalized(net, &mut state.adagrad, &stripe, batch, 1)?;
                }
                let sum = match self.sharing.exchange {
                    Exchange::Words => {
                        exchange::all_gather_words(self.transport, g, &stripe, rows, cols)
                    }
                    Exchange::OneBit { feedback } => {
                        let mine = net.m.quantize_1bit(
                            g,
                            mode,
                            &stripe,
                            (rows, stripe_cols),
                            feedback.then_some(&mut state.owner_residual[..]),
                        )?;
                        exchange::all_gather_quantized(self.transport, g, &mine, cols)
                    }
                    Exchange::Q8(codec) => {
                        exchange::all_gather_q8(self.transport, codec, g, &stripe, rows, cols, unit)
                    }
                }
                .map_err(comm)?;
                parts.push((rows, cols, sum));
            }
            let (rows, cols, w) = parts.remove(0);
            let (_, _, b) = parts.remove(0);
            out.push((
                Mat {
                    rows,
                    cols,
                    data: w.into_iter().map(M::Word::from_bits).collect(),
                },
                b.into_iter().map(M::Word::from_bits).collect(),
            ));
        }
        Ok(out)
    }

    /// Sums of per-worker figures (e.g. loss, correct, seen), in rank order.
    pub fn totals(&mut self, figures: &[f64]) -> Result<Vec<f64>, TrainError> {
        let bytes: Vec<u8> = figures.iter().flat_map(|f| f.to_le_bytes()).collect();
        let all = self
            .transport
            .all_gather(bytes)
            .map_err(|e| TrainError(e.to_string()))?;
        let mut sums = vec![0.0; figures.len()];
        for part in all {
            for (s, chunk) in sums.iter_mut().zip(part.chunks_exact(8)) {
                *s += f64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            }
        }
        Ok(sums)
    }
}

/// AdaGrad's normalization of summed gradient words of G on the worker (in O, with the
/// worker's state `r` of the same length, zero at first), divided by `parts`, back in G.
fn normalized<M: Machine>(
    net: &mut Net<'_, M>,
    r: &mut Vec<u64>,
    bits: &[u64],
    batch: usize,
    parts: usize,
) -> Result<Vec<u64>, TrainError> {
    let (g, o) = (net.cfg.stages.g, net.cfg.stages.o);
    let words: Vec<M::Word> = bits.iter().map(|&b| M::Word::from_bits(b)).collect();
    let words = net.convert_words(g, o, &words)?.into_owned();
    if r.is_empty() {
        r.resize(words.len(), o.calc().zero());
    }
    let mut state: Vec<M::Word> = r.iter().map(|&b| M::Word::from_bits(b)).collect();
    let mean = net.mean(&words, batch)?;
    let mut ratio = net.normalize(&mut state, &mean)?;
    if parts > 1 {
        ratio = net.mean(&ratio, parts)?;
    }
    *r = state.iter().map(|w| w.to_bits()).collect();
    Ok(net
        .convert_words(o, g, &ratio)?
        .iter()
        .map(|w| w.to_bits())
        .collect())
}
