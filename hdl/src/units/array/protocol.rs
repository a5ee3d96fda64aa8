//! The array's host protocol, described once (docs/rtl.md, `array`): what a host presents
//! in each cycle and what comes back. The generator takes its skew from here; verif's array
//! drivers, the rtl training machine (`sw/train/src/machine/rtl/tiles.rs`) and the cocotb
//! bench (its constants rendered into the model, `gen/src/cocotb.rs`) drive by it.
//!
//! - **Steps.** The host presents one step k per cycle, unskewed: word r of `a_in` is
//!   `A[i0 + r][k]`, word c of `b_in` is `B[k][j0 + c]` (the format's zero, or the PE kind's
//!   zero operand, beyond the matrix), `clear` with k = 0, `last` where the PEs snapshot
//!   (k = K − 1, or a partial sum). A cycle without `in_valid` is a bubble: its operands and
//!   controls are ignored.
//! - **Skew.** The array delays row r (A and the controls) by [`row_skew`] registers and
//!   column c (B) by [`col_skew`] at its edges; a step reaches PE (r, c) r + c cycles later.
//! - **Accumulations.** Cycle t (every cycle since reset, bubbles included) belongs to
//!   accumulation t mod P ([`Protocol::accumulation`]; P = `array_accumulations`, 1 unless
//!   the PEs interleave).
//! - **`last` timing.** Two `last` steps, of any accumulations, are at least
//!   [`Protocol::last_spacing`] = R + C − 1 cycles apart (the skew of the corner PE, plus
//!   one); a `last` that would come sooner waits, its cycle a bubble ([`Host`]).
//! - **Read-out.** Each `last` at cycle t gives one `out_valid`, at t + latency, with every
//!   PE's word on `c_out`: PE (r, c) at word [`Protocol::pe_index`] = r·C + c (row-major);
//!   flags one bus each, PE (r, c) at that bit. Results come in the order of the `last`
//!   steps.
//! - **Stochastic row states** (`--pe float --rounding stochastic:R`). With each `last`,
//!   `sr_row_state` carries row r's xorshift32 state at bits [`Protocol::row_state_bit`]
//!   ([`ROW_STATE_BITS`] a row); PE (r, c) rounds with that state after [`pe_draws`] = c
//!   draws. Element (i, j) of an m×n product is at position [`stream_position`] = i·n + j of
//!   the product's stream, so row r of a tile at (i0, j0) takes element (i0 + r, j0)'s state
//!   ([`Protocol::row_state_position`]); a row past the matrix reads out padding with any
//!   nonzero state ([`PADDING_ROW_STATE`]). States on cycles without `last` are ignored.

use std::collections::VecDeque;

use super::array_accumulations;
use crate::Params;

/// Bits of one row's state on `sr_row_state`.
pub const ROW_STATE_BITS: u32 = 32;

/// The state a host gives a row past the matrix (it reads out padding; any nonzero state).
pub const PADDING_ROW_STATE: u32 = 1;

/// Registers row `r`'s operand and controls pass at the array's left edge.
pub fn row_skew(r: u32) -> u32 {
    r
}

/// Registers column `c`'s operand passes at the array's top edge.
pub fn col_skew(c: u32) -> u32 {
    c
}

/// Whether step `k` of an accumulation carries `clear`.
pub fn clears(k: usize) -> bool {
    k == 0
}

/// Draws PE (r, c) makes from its row's state before it rounds (`Rounder` draws: the state
/// stepped c + 1 times).
pub fn pe_draws(c: usize) -> usize {
    c
}

/// The position of element (i, j) of a product with `n` columns on its rounding stream.
pub fn stream_position(i: usize, j: usize, n: usize) -> usize {
    i * n + j
}

/// The protocol of one array design: its shape and interleaved accumulations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub rows: usize,
    pub cols: usize,
    /// P: accumulations the PEs interleave, cycle by cycle.
    pub accumulations: usize,
}

impl Protocol {
    pub fn new(rows: usize, cols: usize, accumulations: usize) -> Protocol {
        Protocol {
            rows,
            cols,
            accumulations,
        }
    }

    /// The protocol of the array `p` describes.
    pub fn of(p: &Params) -> Protocol {
        Protocol {
            rows: p.rows as usize,
            cols: p.cols as usize,
            accumulations: array_accumulations(p) as usize,
        }
    }

    /// The fewest cycles from one `last` step to the next: R + C − 1.
    pub fn last_spacing(&self) -> u64 {
        u64::from(row_skew(self.rows as u32 - 1) + col_skew(self.cols as u32 - 1)) + 1
    }

    /// The accumulation cycle `t` belongs to.
    pub fn accumulation(&self, t: u64) -> usize {
        (t % self.accumulations as u64) as usize
    }

    /// The index of PE (r, c)'s word on `c_out` (and its bit on each flag bus).
    pub fn pe_index(&self, r: usize, c: usize) -> usize {
        r * self.cols + c
    }

    /// The PEs (r, c) in the order of their words on `c_out` (and bits on the flag buses).
    pub fn read_out_order(&self) -> Vec<(usize, usize)> {
        let mut pes: Vec<(usize, usize)> = (0..self.rows)
            .flat_map(|r| (0..self.cols).map(move |c| (r, c)))
            .collect();
        pes.sort_by_key(|&(r, c)| self.pe_index(r, c));
        pes
    }

    /// The protocol as a Python literal, for the generated cocotb model (`gen/src/cocotb.rs`):
    /// the shape, P, the `last` spacing, the step that clears and the read-out order.
    pub fn python(&self) -> String {
        let order: Vec<String> = self
            .read_out_order()
            .iter()
            .map(|(r, c)| format!("({r}, {c})"))
            .collect();
        let clear_step = (0..).find(|&k| clears(k)).expect("a step clears");
        format!(
            "{{\"rows\": {}, \"cols\": {}, \"accumulations\": {}, \"last_spacing\": {}, \
             \"clear_step\": {clear_step}, \"read_out_order\": [{}]}}",
            self.rows,
            self.cols,
            self.accumulations,
            self.last_spacing(),
            order.join(", ")
        )
    }

    /// The first bit of row `r`'s state on `sr_row_state`.
    pub fn row_state_bit(r: usize) -> usize {
        r * ROW_STATE_BITS as usize
    }

    /// The stream position whose state row `r` of the tile at `(i0, j0)` of an m×n product
    /// is given with its `last` step; `None` for a row past the matrix
    /// ([`PADDING_ROW_STATE`]).
    pub fn row_state_position(
        &self,
        (i0, j0): (usize, usize),
        r: usize,
        (m, n): (usize, usize),
    ) -> Option<usize> {
        (i0 + r < m).then(|| stream_position(i0 + r, j0, n))
    }

    /// The output tiles of an m×n product, in the order a host streams them: row-major
    /// corners (i0, j0); tile i goes to accumulation i mod P.
    pub fn tiles(&self, m: usize, n: usize) -> Vec<(usize, usize)> {
        let (rows, cols) = (self.rows, self.cols);
        (0..m.div_ceil(rows))
            .flat_map(|ti| (0..n.div_ceil(cols)).map(move |tj| (ti * rows, tj * cols)))
            .collect()
    }
}

/// What a host puts on the array in one cycle.
#[derive(Clone, Debug)]
pub enum Beat<S> {
    /// A step (with `in_valid`).
    Step(S),
    /// No step: operands and controls are ignored.
    Bubble,
}

/// A step that may carry `last`.
pub trait Last {
    fn last(&self) -> bool;
}

/// The host's side of the protocol: one queue of beats per accumulation, and the `last`
/// spacing. Cycle t takes the front of accumulation t mod P's queue, unless that is a
/// `last` step too soon after the previous `last`: then the cycle is a bubble and the step
/// waits.
pub struct Host<S> {
    protocol: Protocol,
    queues: Vec<VecDeque<Beat<S>>>,
    last_at: Option<u64>,
}

impl<S: Last> Host<S> {
    pub fn new(protocol: Protocol) -> Host<S> {
        Host {
            protocol,
            queues: (0..protocol.accumulations)
                .map(|_| VecDeque::new())
                .collect(),
            last_at: None,
        }
    }

    /// Cycle `t`'s beat. An empty queue is first handed to `refill(accumulation, queue)`;
    /// `None` when it stays empty (that accumulation has nothing more to stream).
    pub fn next(
        &mut self,
        t: u64,
        refill: impl FnOnce(usize, &mut VecDeque<Beat<S>>),
    ) -> Option<Beat<S>> {
        let slot = self.protocol.accumulation(t);
        let queue = &mut self.queues[slot];
        if queue.is_empty() {
            refill(slot, queue);
        }
        let early = match queue.front()? {
            Beat::Step(s) if s.last() => self
                .last_at
                .is_some_and(|prev| t - prev < self.protocol.last_spacing()),
            _ => false,
        };
        if early {
            return Some(Beat::Bubble);
        }
        let beat = queue.pop_front().expect("a front");
        if matches!(&beat, Beat::Step(s) if s.last()) {
            self.last_at = Some(t);
        }
        Some(beat)
    }

    /// Queues `beats` for `accumulation` (ahead of what `next` refills).
    pub fn extend(&mut self, accumulation: usize, beats: impl IntoIterator<Item = Beat<S>>) {
        self.queues[accumulation].extend(beats);
    }

    /// Whether any accumulation still has beats queued.
    pub fn pending(&self) -> bool {
        self.queues.iter().any(|q| !q.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct S(u32, bool);

    impl Last for S {
        fn last(&self) -> bool {
            self.1
        }
    }

    /// The Python literal names every value of the protocol; PEs read out row-major.
    #[test]
    fn the_python_literal_gives_the_protocol() {
        let proto = Protocol {
            rows: 2,
            cols: 3,
            accumulations: 1,
        };
        assert_eq!(
            proto.python(),
            "{\"rows\": 2, \"cols\": 3, \"accumulations\": 1, \"last_spacing\": 4, \
             \"clear_step\": 0, \"read_out_order\": [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]}"
        );
    }

    /// A `last` waits until R + C − 1 cycles after the previous one of any accumulation, its
    /// cycle a bubble; other steps do not wait.
    #[test]
    fn a_last_step_waits_for_the_spacing_of_any_accumulation() {
        let proto = Protocol {
            rows: 2,
            cols: 3,
            accumulations: 2,
        };
        assert_eq!(proto.last_spacing(), 4);
        let mut host = Host::new(proto);
        let mut fed = [false; 2];
        let mut got = vec![];
        for t in 0..12 {
            let beat = host.next(t, |slot, q| {
                if !fed[slot] {
                    fed[slot] = true;
                    let id = slot as u32 * 10;
                    q.extend([S(id, true), S(id + 1, false), S(id + 2, true)].map(Beat::Step));
                }
            });
            got.push(match beat {
                Some(Beat::Step(S(id, last))) => Some((id, last)),
                Some(Beat::Bubble) | None => None,
            });
        }
        // t0: slot 0's last; t1: slot 1's last waits (bubble) until t4 (slot 0's cycles
        // 2 and 4 go on: 1 at t2; its last at t4 follows t0 by 4).
        assert_eq!(
            got,
            [
                Some((0, true)),
                None,
                Some((1, false)),
                None,
                Some((2, true)),
                None,
                None,
                None,
                None,
                Some((10, true)),
                None,
                Some((11, false)),
            ]
        );
    }
}
