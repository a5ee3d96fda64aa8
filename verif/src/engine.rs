//! The checker: streams cycles through a model in batches (one FFI call per batch), honours
//! the design's latency, and compares `out_valid` in every cycle and every other output bit
//! in every cycle that carries a result.
//!
//! A driver pushes one row of input slots per cycle, with the expected output slots when the
//! cycle is a step that must produce a result `latency` cycles later (`None`: `out_valid` must
//! stay low then). Rows since the driver's last restart point (a cycle from which the stimuli
//! no longer depend on earlier state) are kept, so a failing case can be replayed into a VCD.

use std::path::Path;

use crate::layout::{mask, Layout};
use crate::runtime::Model;
use crate::Result;

/// Cycles per FFI call.
pub const BATCH: usize = 4096;
/// Mismatches kept in full (all are counted).
pub const KEEP: usize = 16;
/// Input slots of history kept for a replay (beyond it the replay starts later and says so).
const HISTORY_CAP: usize = 1 << 22;

/// One failing check.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Cycle of the step (0 = first cycle after reset); its result was due `latency` later.
    pub cycle: u64,
    pub ins: Vec<u64>,
    /// Expected output slots, or `None` when no result was due (a spurious `out_valid`).
    pub want: Option<Vec<u64>>,
    pub got: Vec<u64>,
}

/// The inputs needed to reproduce the first mismatch from a known state.
#[derive(Clone, Debug)]
pub struct Replay {
    /// Input rows from the restart point on.
    pub rows: Vec<u64>,
    /// Cycle of the first row.
    pub start: u64,
    /// Whether `rows` reach back to the restart point (else the state may differ).
    pub complete: bool,
    pub fail: u64,
}

pub struct Checker {
    model: Model,
    lat: usize,
    ins_n: usize,
    outs_n: usize,
    valid_slot: usize,
    masks: Vec<u64>,
    batch: Vec<u64>,
    outs: Vec<u64>,
    pend_ins: Vec<u64>,
    pend_want: Vec<u64>,
    pend_valid: Vec<bool>,
    cycle: u64,
    pub passed: u64,
    pub failed: u64,
    pub mismatches: Vec<Mismatch>,
    /// Input rows from cycle `history_start` on.
    history: Vec<u64>,
    history_start: u64,
    /// Whether `history` begins at reset or at a restart point.
    history_complete: bool,
    /// Restart points within the history, ascending.
    restarts: std::collections::VecDeque<u64>,
    pub replay: Option<Replay>,
    progress: Option<Box<dyn FnMut(u64)>>,
    /// `(rank, parts)`: run only the stretches between restart points whose number is rank
    /// modulo parts (a distributed co-simulation's share).
    share: Option<(u64, u64)>,
    /// The number of the current stretch (0 before the first restart point).
    stretch: u64,
    /// Whether the current stretch is another rank's.
    skipping: bool,
}

impl Checker {
    /// A checker over a fresh model: `rst` is held for two cycles first.
    pub fn new(mut model: Model, layout: &Layout) -> Result<Checker> {
        let (ins_n, outs_n) = (layout.in_slots, layout.out_slots);
        let mut masks = vec![0u64; outs_n];
        for p in layout.outputs() {
            for k in 0..p.slots() {
                let w = (p.width - 64 * k as u32).min(64);
                masks[p.slot + k] = mask(w);
            }
        }
        let valid_slot = layout.slot("out_valid")?;
        masks[valid_slot] = 0;
        let rst = layout.slot("rst")?;
        let mut reset = vec![0u64; 2 * ins_n];
        reset[rst] = 1;
        reset[ins_n + rst] = 1;
        let mut outs = vec![0u64; BATCH.max(2) * outs_n];
        model.run(&reset, &mut outs);
        let lat = layout.latency as usize;
        Ok(Checker {
            model,
            lat,
            ins_n,
            outs_n,
            valid_slot,
            masks,
            batch: Vec::with_capacity(BATCH * ins_n),
            outs,
            pend_ins: vec![0; lat * ins_n],
            pend_want: vec![0; lat * outs_n],
            pend_valid: vec![false; lat],
            cycle: 0,
            passed: 0,
            failed: 0,
            mismatches: vec![],
            history: vec![],
            history_start: 0,
            history_complete: true,
            restarts: Default::default(),
            replay: None,
            progress: None,
            share: None,
            stretch: 0,
            skipping: false,
        })
    }

    /// Called after every batch with the number of cycles run so far.
    pub fn on_progress(&mut self, f: Box<dyn FnMut(u64)>) {
        self.progress = Some(f);
    }

    /// The cycle the next pushed row is applied in.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn in_slots(&self) -> usize {
        self.ins_n
    }

    pub fn out_slots(&self) -> usize {
        self.outs_n
    }

    /// Runs only this rank's share of the stimuli: the stretches between restart points
    /// numbered `rank` modulo `parts` (the first stretch, before any restart point, is rank
    /// 0's). The stretches are independent (see [`Checker::mark_restart`]), so the K shares
    /// together check every step once; a driver that marks no restart point runs on rank 0.
    pub fn share(&mut self, rank: usize, parts: usize) {
        assert!(rank < parts, "rank {rank} of {parts}");
        self.share = Some((rank as u64, parts as u64));
        self.skipping = rank != 0;
    }

    /// The next row starts a stretch of stimuli that does not depend on earlier cycles.
    pub fn mark_restart(&mut self) {
        if let Some((rank, parts)) = self.share {
            self.stretch += 1;
            self.skipping = self.stretch % parts != rank;
            if self.skipping {
                return;
            }
        }
        self.restarts.push_back(self.cycle);
    }

    /// Drops the history before the latest restart point at or before `cycle`.
    fn trim_history(&mut self, cycle: u64) {
        let mut keep = None;
        while self.restarts.front().is_some_and(|&r| r <= cycle) {
            keep = self.restarts.pop_front();
        }
        if let Some(r) = keep {
            self.restarts.push_front(r);
            let drop = ((r - self.history_start) as usize * self.ins_n).min(self.history.len());
            self.history.drain(..drop);
            self.history_start = r;
            self.history_complete = true;
        }
    }

    /// Applies one cycle's inputs; `want` is the result due `latency` cycles later.
    pub fn push(&mut self, ins: &[u64], want: Option<&[u64]>) {
        debug_assert_eq!(ins.len(), self.ins_n);
        if self.skipping {
            return;
        }
        self.batch.extend_from_slice(ins);
        self.pend_ins.extend_from_slice(ins);
        match want {
            Some(w) => self.pend_want.extend_from_slice(w),
            None => self.pend_want.resize(self.pend_want.len() + self.outs_n, 0),
        }
        self.pend_valid.push(want.is_some());
        if self.history.len() + self.ins_n > HISTORY_CAP {
            self.history.clear();
            self.restarts.clear();
            self.history_start = self.cycle;
            self.history_complete = false;
        }
        self.history.extend_from_slice(ins);
        self.cycle += 1;
        if self.batch.len() >= BATCH * self.ins_n {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let n = self.batch.len() / self.ins_n;
        if n == 0 {
            return;
        }
        let (ii, oo) = (self.ins_n, self.outs_n);
        self.model.run(&self.batch, &mut self.outs[..n * oo]);
        let first_cycle = self.cycle - n as u64;
        for i in 0..n {
            let got = &self.outs[i * oo..(i + 1) * oo];
            let want = &self.pend_want[i * oo..(i + 1) * oo];
            let due = self.pend_valid[i];
            let valid = got[self.valid_slot] & 1 == 1;
            let ok = if due {
                valid
                    && got
                        .iter()
                        .zip(want)
                        .zip(&self.masks)
                        .all(|((g, w), m)| (g ^ w) & m == 0)
            } else {
                !valid
            };
            if ok {
                self.passed += due as u64;
                continue;
            }
            self.failed += 1;
            // The step whose result was due in output cycle first_cycle + i.
            let step = (first_cycle + i as u64).saturating_sub(self.lat as u64);
            if self.mismatches.len() < KEEP {
                self.mismatches.push(Mismatch {
                    cycle: step,
                    ins: self.pend_ins[i * ii..(i + 1) * ii].to_vec(),
                    want: due.then(|| want.to_vec()),
                    got: got.to_vec(),
                });
            }
            if self.replay.is_none() && step >= self.history_start {
                // From the latest restart point at or before the failing step.
                let from = self
                    .restarts
                    .iter()
                    .rev()
                    .find(|&&r| r <= step)
                    .copied()
                    .unwrap_or(self.history_start);
                let skip = (from - self.history_start) as usize * self.ins_n;
                self.replay = Some(Replay {
                    rows: self.history[skip..].to_vec(),
                    start: from,
                    complete: self.history_complete || from > self.history_start,
                    fail: step,
                });
            }
        }
        self.pend_ins.drain(..n * ii);
        self.pend_want.drain(..n * oo);
        self.pend_valid.drain(..n);
        self.batch.clear();
        self.trim_history(self.cycle.saturating_sub(self.lat as u64));
        let c = self.cycle;
        if let Some(p) = self.progress.as_mut() {
            p(c);
        }
    }

    /// Drains the pipeline (idle cycles until every due result was checked).
    pub fn finish(&mut self) {
        self.skipping = false;
        let idle = vec![0u64; self.ins_n];
        for _ in 0..self.lat + 1 {
            self.push(&idle, None);
        }
        self.flush();
    }
}

/// Replays the first mismatch of `replay` on a trace build and writes `vcd`: reset, the rows
/// from the restart point (dumped from 16 cycles before the failing step on), then idle
/// cycles past the latency. Returns the outputs of the cycle the failing result was due in.
pub fn replay_vcd(
    model: &mut Model,
    layout: &Layout,
    replay: &Replay,
    _vcd: &Path,
) -> Result<Vec<u64>> {
    let (ii, oo) = (layout.in_slots, layout.out_slots);
    let rst = layout.slot("rst")?;
    let mut reset = vec![0u64; 2 * ii];
    reset[rst] = 1;
    reset[ii + rst] = 1;
    let mut outs = vec![0u64; 2 * oo];
    model.set_dump(true);
    model.run(&reset, &mut outs);
    let fail = replay.fail.saturating_sub(replay.start) as usize;
    let lat = layout.latency as usize;
    let avail = replay.rows.len() / ii;
    if fail >= avail {
        return Err(crate::VerifError(format!(
            "the failing cycle {} is not in the kept history",
            replay.fail
        )));
    }
    let end = (fail + lat + 4).min(avail);
    let quiet = fail.saturating_sub(16);
    let mut rows = replay.rows[..end * ii].to_vec();
    rows.resize((fail + lat + 4) * ii, 0);
    let mut outs = vec![0u64; rows.len() / ii * oo];
    model.set_dump(false);
    model.run(&rows[..quiet * ii], &mut outs[..quiet * oo]);
    model.set_dump(true);
    model.run(&rows[quiet * ii..], &mut outs[quiet * oo..]);
    model.set_dump(false);
    let at = fail + lat;
    Ok(outs[at * oo..(at + 1) * oo].to_vec())
}
