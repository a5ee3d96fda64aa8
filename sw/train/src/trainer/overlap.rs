//! Overlapped double buffering (seed 001 §2.2): "exchange sub-gradients of one half-minibatch
//! while computing the sub-gradients of the next half-minibatch". Each half's gradients go to
//! a communication thread, which runs the whole exchange ([`Worker::aggregate`]: the transport's
//! collectives and the host's sums, and the machine operations it needs) while this thread
//! computes the next half; once that half's gradients exist, the exchange is joined and its
//! aggregate applied, and the next exchange starts. The rule is the one of the turn-taking
//! path (`epoch.rs`), operation for operation: half h's gradients are taken on the model with
//! every update up to half h − 2, half h − 1's update lands after them, and the epoch's last
//! half is applied at its end; so the models are the same word for word.
//!
//! The two threads share the worker's one machine through [`Shared`] (each operation under a
//! lock), and the worker's transport moves to the communication thread and back with the
//! [`Worker`]: at most one thread uses it at a time (the MPI transport is initialized for that).

use std::panic::resume_unwind;
use std::sync::Mutex;
use std::thread::{scope, ScopedJoinHandle};

use super::epoch::{half_input, halves, progress_line, tally, Epoch, RunContext};
use super::*;
use crate::machine::Shared;

/// An exchange in flight: the worker it holds, its aggregate and the minibatch size by which
/// that is divided.
type InFlight<'s, 'w, 't, W> = ScopedJoinHandle<'s, (&'w mut Worker<'t>, AggregateResult<W>)>;
type AggregateResult<W> = Result<(Vec<Grads<W>>, usize), TrainError>;

/// Trains the minibatches `batches` of epoch `ep` with double buffering, each half's exchange
/// overlapping the next half's computation (`worker.sharing.double_buffer` and `overlap`; a
/// run without a rounding stream). Leaves no update pending.
pub(super) fn train_steps<M: Machine + Send>(
    machine: &mut M,
    run: &RunContext<'_>,
    state: &mut State<M::Word>,
    worker: &mut Worker<'_>,
    ep: &mut Epoch<M::Word>,
    batches: &[&[usize]],
) -> Result<(), TrainError> {
    let cfg = run.cfg;
    let (rank, size) = (worker.transport.rank(), worker.transport.size());
    let lock = Mutex::new(machine);
    let mut mine = Shared(&lock);
    let mut net = Net {
        m: &mut mine,
        cfg,
        storage: state.storage.as_mut(),
        stream: None,
        scales: None,
    };
    let model = &mut state.model;
    scope(|s| {
        let mut idle = Some(worker);
        let mut flight: Option<InFlight<'_, '_, '_, M::Word>> = None;
        // On an error the exchange in flight still ends (the scope joins it: its peers are in
        // the same collective), and the error is returned after it.
        for (step, &chunk) in batches.iter().enumerate() {
            // Each worker's dropout masks for this step (as `train_step` draws them).
            let mut noise = cfg.stream(&[ep.number as u64, step as u64, rank as u64]);
            for part in halves(chunk, true) {
                let share = &part[lpgen_comm::partition(part.len(), size, rank)];
                let (x, labels) = half_input(run, share);
                // Meanwhile the previous half's exchange runs on its thread.
                let (fw, grads) = net.gradients(model, x, &labels, &mut noise)?;
                let w = match flight.take() {
                    Some(h) => land(&mut net, model, ep, h)?,
                    None => idle
                        .take()
                        .expect("the worker is here when nothing is in flight"),
                };
                let n = chunk.len();
                let lock = &lock;
                flight = Some(s.spawn(move || {
                    let mut theirs = Shared(lock);
                    let mut comm = Net::new(&mut theirs, cfg);
                    let sum = w.aggregate(&mut comm, grads, n).map(|g| (g, n));
                    (w, sum)
                }));
                tally(&mut net, ep, &fw, &labels);
            }
            progress_line(run, ep, step);
        }
        // The epoch ends with every gradient applied (so a checkpoint holds no pending one).
        if let Some(h) = flight.take() {
            land(&mut net, model, ep, h)?;
        }
        Ok(())
    })
}

/// Joins the exchange `h` and applies its aggregate; returns the worker it held.
fn land<'w, 't, M: Machine>(
    net: &mut Net<'_, M>,
    model: &mut Model<M::Word>,
    ep: &Epoch<M::Word>,
    h: InFlight<'_, 'w, 't, M::Word>,
) -> Result<&'w mut Worker<'t>, TrainError> {
    let (w, sum) = h.join().unwrap_or_else(|panic| resume_unwind(panic));
    let (grads, n) = sum?;
    net.apply(model, grads, ep.lr, n, ep.momentum, ep.normalized)?;
    Ok(w)
}
