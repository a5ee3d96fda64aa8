//! Communication for lpgen's data-parallel training (issue 20, seed 001 §3.1): collectives over
//! byte buffers, with two transports behind one trait.
//!
//! - [`fn@local`]: K endpoints for K threads of one process (std channels), nothing to install
//!   ([`local_with_link`]: the same over simulated wires of a given bandwidth);
//! - `mpi` (cargo feature `mpi`): one endpoint per MPI rank over the system's OpenMPI, started
//!   by `mpirun -np K` (`docs/dist.md`).
//!
//! The collectives are the two steps of seed 001's O(1) aggregation: [`Transport::all_to_all`]
//! (the reduce-scatter exchange: slice j goes to rank j, each rank receives the slices meant for
//! it, indexed by source rank) and [`Transport::all_gather`] (every rank's buffer to every rank).
//! Every rank must call the same collectives in the same order; a rank that calls a different
//! one, or none within the timeout, makes the others fail with a one-line [`CommError`] naming
//! the operation, its sequence number and the rank (never a hang). After an error the endpoint
//! is unusable: the caller prints the line and exits (status 2).
//!
//! [`exchange`] builds seed 001's aggregation of a weight matrix on these collectives (1-bit with
//! error feedback, or plain words): the reference for the training driver.
//!
//! Buffers are opaque bytes: the caller encodes (e.g. `lpgen_golden::onebit::Quantized::to_bytes`)
//! and decodes. Determinism: results depend only on the buffers and the ranks, never on arrival
//! order. Counters count payload bytes that crossed to another rank (a rank's own slice does
//! not), so they can be checked against the analytic message size.
//!
//! ```
//! use lpgen_comm::Transport;
//! let ends = lpgen_comm::local(3);
//! let out: Vec<_> = std::thread::scope(|s| {
//!     let hs: Vec<_> = ends
//!         .into_iter()
//!         .map(|mut t| s.spawn(move || {
//!             let me = t.rank() as u8;
//!             // Slice j of rank i is [i, j]: rank j receives [i, j] from each i, in order.
//!             t.all_to_all((0..t.size() as u8).map(|j| vec![me, j]).collect()).unwrap()
//!         }))
//!         .collect();
//!     hs.into_iter().map(|h| h.join().unwrap()).collect()
//! });
//! assert_eq!(out[2], [vec![0, 2], vec![1, 2], vec![2, 2]]);
//! ```

use std::fmt;
use std::ops::Range;
use std::time::Duration;

pub mod exchange;
mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

pub use local::{local, local_with_link, local_with_timeout, LocalTransport};

/// How long a collective waits for a peer before it fails: long enough for the slowest rank's
/// step (an RTL-simulated minibatch can take minutes), short enough that a stuck job ends.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether this build has the MPI transport (`--features mpi`).
pub const MPI_BUILT: bool = cfg!(feature = "mpi");

/// Why a collective failed; `Display` is one line naming the cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommError(pub String);

impl fmt::Display for CommError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CommError {}

/// What every transport keeps between collectives: their sequence number (each message
/// carries it), and the error that made the endpoint unusable.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    seq: u64,
    pub(crate) failed: Option<CommError>,
}

impl Progress {
    /// Marks the endpoint failed with `msg` and returns the error.
    pub(crate) fn fail(&mut self, msg: String) -> CommError {
        let e = CommError(msg);
        self.failed = Some(e.clone());
        e
    }

    /// The next collective's sequence number, or the error of an earlier failure.
    pub(crate) fn start(&mut self) -> Result<u64, CommError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.seq += 1;
        Ok(self.seq)
    }
}

/// Payload bytes this endpoint sent to and received from other ranks since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub sent: u64,
    pub received: u64,
}

/// Which collective a message belongs to (checked on receipt, so mismatched calls fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    AllToAll = 0,
    AllGather = 1,
}

impl Op {
    #[cfg(feature = "mpi")]
    pub(crate) fn from_code(c: u8) -> Option<Op> {
        match c {
            0 => Some(Op::AllToAll),
            1 => Some(Op::AllGather),
            _ => None,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::AllToAll => "all_to_all",
            Op::AllGather => "all_gather",
        }
    }
}

/// Collectives over byte buffers among `size()` ranks.
pub trait Transport {
    /// "local" or "mpi".
    fn name(&self) -> &'static str;
    fn rank(&self) -> usize;
    fn size(&self) -> usize;

    /// Sends `slices[j]` to rank j (exactly `size()` slices; this rank's own is kept) and
    /// returns the slices meant for this rank, indexed by source rank.
    fn all_to_all(&mut self, slices: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, CommError>;

    /// Every rank's `data`, indexed by rank (this rank's own included).
    fn all_gather(&mut self, data: Vec<u8>) -> Result<Vec<Vec<u8>>, CommError>;

    fn counters(&self) -> Counters;

    /// Waits until every rank has arrived.
    fn barrier(&mut self) -> Result<(), CommError> {
        self.all_gather(Vec::new()).map(|_| ())
    }

    /// Rank `root`'s `data` on every rank (others' `data` is ignored and not sent).
    fn broadcast(&mut self, root: usize, data: Vec<u8>) -> Result<Vec<u8>, CommError> {
        let mine = if self.rank() == root {
            data
        } else {
            Vec::new()
        };
        let mut all = self.all_gather(mine)?;
        Ok(std::mem::take(&mut all[root]))
    }

    /// Checks that every rank was started with the same configuration: `fingerprint` is a
    /// readable string of the options that must agree (`key=value` tokens separated by
    /// spaces). A mismatch fails on every rank with one line naming the first differing token.
    fn agree(&mut self, fingerprint: &str) -> Result<(), CommError> {
        let all = self.all_gather(fingerprint.as_bytes().to_vec())?;
        let first = String::from_utf8_lossy(&all[0]);
        for (rank, other) in all.iter().enumerate().skip(1) {
            let other = String::from_utf8_lossy(other);
            if other != first {
                return Err(CommError(format!(
                    "ranks disagree on their options: {} (start every rank with the same options)",
                    first_difference(&first, &other, rank)
                )));
            }
        }
        Ok(())
    }
}

/// "rank 0 has `lr=0.1` where rank 2 has `lr=0.2`" for the first differing token.
fn first_difference(a: &str, b: &str, rank: usize) -> String {
    let short = |t: Option<&str>| match t {
        None => "nothing".to_string(),
        Some(t) if t.chars().count() > 60 => {
            format!("`{}…`", t.chars().take(60).collect::<String>())
        }
        Some(t) => format!("`{t}`"),
    };
    let (mut ta, mut tb) = (a.split_whitespace(), b.split_whitespace());
    loop {
        match (ta.next(), tb.next()) {
            (x, y) if x != y => {
                return format!("rank 0 has {} where rank {rank} has {}", short(x), short(y))
            }
            (None, None) => return format!("rank 0 and rank {rank} differ in spacing"),
            _ => {}
        }
    }
}

/// The contiguous part `index` of 0..n cut into `parts` (the first n % parts get one more):
/// the columns rank `index` owns when K = `parts` ranks aggregate n columns.
pub fn partition(n: usize, parts: usize, index: usize) -> Range<usize> {
    assert!(index < parts, "part {index} of {parts}");
    let (base, extra) = (n / parts, n % parts);
    let start = index * base + index.min(extra);
    start..start + base + (index < extra) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_covers_in_order() {
        for n in 0..20 {
            for parts in 1..6 {
                let mut next = 0;
                for i in 0..parts {
                    let r = partition(n, parts, i);
                    assert_eq!(r.start, next);
                    assert!(r.len() == n / parts || r.len() == n / parts + 1);
                    next = r.end;
                }
                assert_eq!(next, n);
            }
        }
        assert_eq!(partition(784, 3, 0), 0..262);
        assert_eq!(partition(784, 3, 2), 523..784);
    }

    #[test]
    fn first_difference_names_the_token() {
        assert_eq!(
            first_difference("fmt=f32 lr=0.1", "fmt=f32 lr=0.2", 3),
            "rank 0 has `lr=0.1` where rank 3 has `lr=0.2`"
        );
        assert_eq!(
            first_difference("a=1", "a=1 b=2", 1),
            "rank 0 has nothing where rank 1 has `b=2`"
        );
    }
}
