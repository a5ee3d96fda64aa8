//! The `local` transport: K endpoints for K threads of one process. Each ordered pair of ranks
//! has its own unbounded channel, so sends never block and a receive names its source; a
//! message carries its collective and sequence number, checked on receipt.
//!
//! [`local_with_link`] adds a simulated wire of a given bandwidth between every ordered pair
//! of ranks: a message is delivered once its last byte would have crossed (messages on one
//! wire one after another), and the receiver waits for that asleep, using no core, as a rank
//! waits for a network card. It stands in for a network on a machine of few cores, where the
//! host's own work would otherwise be all there is to the exchange (docs/perf.md).

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::{CommError, Counters, Op, Progress, Transport, DEFAULT_TIMEOUT};

struct Msg {
    op: Op,
    seq: u64,
    data: Vec<u8>,
    /// When its last byte has crossed the simulated wire (now, without one).
    ready: Instant,
}

/// The simulated wires of [`local_with_link`]: bytes per second, and when the wire to each
/// rank is free again.
struct Link {
    bytes_per_second: f64,
    free_at: Vec<Instant>,
}

/// One rank's endpoint; move it into that rank's thread.
pub struct LocalTransport {
    rank: usize,
    /// `to[j]`: the channel to rank j (None for this rank).
    to: Vec<Option<Sender<Msg>>>,
    /// `from[j]`: the channel from rank j (None for this rank).
    from: Vec<Option<Receiver<Msg>>>,
    progress: Progress,
    timeout: Duration,
    counters: Counters,
    link: Option<Link>,
}

/// K connected endpoints, index = rank, with [`DEFAULT_TIMEOUT`].
pub fn local(k: usize) -> Vec<LocalTransport> {
    local_with_timeout(k, DEFAULT_TIMEOUT)
}

/// K connected endpoints whose collectives fail after waiting `timeout` for a peer.
pub fn local_with_timeout(k: usize, timeout: Duration) -> Vec<LocalTransport> {
    assert!(k >= 1, "a transport needs at least one rank");
    let mut ends: Vec<LocalTransport> = (0..k)
        .map(|rank| LocalTransport {
            rank,
            to: (0..k).map(|_| None).collect(),
            from: (0..k).map(|_| None).collect(),
            progress: Progress::default(),
            timeout,
            counters: Counters::default(),
            link: None,
        })
        .collect();
    for i in 0..k {
        for j in (0..k).filter(|&j| j != i) {
            let (tx, rx) = channel();
            ends[i].to[j] = Some(tx);
            ends[j].from[i] = Some(rx);
        }
    }
    ends
}

/// K connected endpoints (with [`DEFAULT_TIMEOUT`]) whose messages cross simulated wires of
/// `bytes_per_second` each, one per ordered pair of ranks: a message of n bytes sent at t is
/// received no earlier than max(t, the wire's previous message done) + n / bytes_per_second.
pub fn local_with_link(k: usize, bytes_per_second: f64) -> Vec<LocalTransport> {
    assert!(
        bytes_per_second > 0.0 && bytes_per_second.is_finite(),
        "a link of {bytes_per_second} bytes/s"
    );
    let mut ends = local_with_timeout(k, DEFAULT_TIMEOUT);
    let now = Instant::now();
    for e in &mut ends {
        e.link = Some(Link {
            bytes_per_second,
            free_at: vec![now; k],
        });
    }
    ends
}

impl LocalTransport {
    fn send(&mut self, op: Op, seq: u64, to: usize, data: Vec<u8>) -> Result<(), CommError> {
        let len = data.len() as u64;
        let now = Instant::now();
        let ready = match &mut self.link {
            Some(link) => {
                let start = link.free_at[to].max(now);
                link.free_at[to] =
                    start + Duration::from_secs_f64(len as f64 / link.bytes_per_second);
                link.free_at[to]
            }
            None => now,
        };
        let sender = self.to[to].as_ref().expect("a peer");
        if sender
            .send(Msg {
                op,
                seq,
                data,
                ready,
            })
            .is_err()
        {
            return Err(self.progress.fail(format!(
                "local {} #{seq}: rank {to} has stopped (its thread ended or failed)",
                op.name()
            )));
        }
        self.counters.sent += len;
        Ok(())
    }

    /// Receives this collective's message from every other rank, in rank order.
    fn receive_all(&mut self, op: Op, seq: u64, own: Vec<u8>) -> Result<Vec<Vec<u8>>, CommError> {
        let deadline = Instant::now() + self.timeout;
        let mut own = Some(own);
        let mut out = Vec::with_capacity(self.size());
        for j in 0..self.size() {
            if j == self.rank {
                out.push(own.take().expect("own slice once"));
                continue;
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            let got = self.from[j].as_ref().expect("a peer").recv_timeout(wait);
            let m = match got {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.progress.fail(format!(
                    "local {} #{seq}: no message from rank {j} within {:?} (a worker is stuck or \
                         runs a different step)",
                    op.name(),
                    self.timeout
                )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.progress.fail(format!(
                        "local {} #{seq}: rank {j} has stopped (its thread ended or failed)",
                        op.name()
                    )))
                }
            };
            if (m.op, m.seq) != (op, seq) {
                return Err(self.progress.fail(format!(
                    "local {} #{seq}: rank {j} called {} #{} instead (ranks must call the same \
                     collectives in the same order)",
                    op.name(),
                    m.op.name(),
                    m.seq
                )));
            }
            // The simulated wire: the message is here once its last byte has crossed.
            let wire = m.ready.saturating_duration_since(Instant::now());
            if !wire.is_zero() {
                std::thread::sleep(wire);
            }
            self.counters.received += m.data.len() as u64;
            out.push(m.data);
        }
        Ok(out)
    }
}

impl Transport for LocalTransport {
    fn name(&self) -> &'static str {
        "local"
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn all_to_all(&mut self, slices: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, CommError> {
        let seq = self.progress.start()?;
        if slices.len() != self.size() {
            return Err(self.progress.fail(format!(
                "all_to_all #{seq}: {} slices for {} ranks",
                slices.len(),
                self.size()
            )));
        }
        let mut own = Vec::new();
        for (j, slice) in slices.into_iter().enumerate() {
            if j == self.rank {
                own = slice;
            } else {
                self.send(Op::AllToAll, seq, j, slice)?;
            }
        }
        self.receive_all(Op::AllToAll, seq, own)
    }

    fn all_gather(&mut self, data: Vec<u8>) -> Result<Vec<Vec<u8>>, CommError> {
        let seq = self.progress.start()?;
        let me = self.rank;
        for j in (0..self.size()).filter(|&j| j != me) {
            self.send(Op::AllGather, seq, j, data.clone())?;
        }
        self.receive_all(Op::AllGather, seq, data)
    }

    fn counters(&self) -> Counters {
        self.counters
    }
}
