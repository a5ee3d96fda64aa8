//! The `mpi` transport (cargo feature `mpi`): one endpoint per MPI rank, over the `mpi` crate
//! (rsmpi) and the system's MPI (Debian's OpenMPI). `docs/dist.md` says how to start it.
//!
//! **Bounded waits.** Collectives are built from nonblocking point-to-point messages, so no call
//! blocks inside MPI: to each peer a header (the payload's length, 8 bytes) and the payload go
//! out by `MPI_Isend`; from each peer the header is taken once `MPI_Improbe` sees it has arrived
//! (`MPI_Mrecv`), then the payload is received by `MPI_Irecv` into a buffer of that length, and
//! every request is polled with `MPI_Test`. (Taking large payloads by probe and `MPI_Mrecv`
//! instead measured 500 times slower than a posted receive with OpenMPI 4.1.) A collective that
//! has not completed within the timeout fails with a one-line [`CommError`] naming the missing
//! rank. Its buffers are then leaked on purpose (MPI may still use them), the endpoint refuses
//! further calls, and dropping it calls `MPI_Abort`, so that the other ranks end too instead of
//! waiting for their own timeouts. Limits: a rank that dies is usually noticed by `mpirun` first, which
//! then kills the whole job with its own (multi-line) report; and MPI itself may abort the job
//! on a transport failure. Either way no rank hangs.
//!
//! **Threads.** MPI is initialized at the level `MPI_THREAD_SERIALIZED`, and the endpoint is
//! `Send`: any one thread at a time may run its collectives. The trainer's overlapped double
//! buffering (`--double-buffer`) runs each exchange on a communication thread while the
//! worker's own thread computes the next half-minibatch and makes no MPI call (the endpoint is
//! moved to that thread and back, so two threads never call MPI at once); an MPI library that
//! cannot give this level is refused in one line.
//!
//! **Tags.** A header's tag is (sequence number mod 8192)·2 + collective, its payload's that plus
//! 16384 (below the 32767 that MPI guarantees). MPI keeps messages of one sender in order, so
//! the next header from a rank belongs to the collective in progress; anything else fails as a
//! mismatch.

use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use mpi::environment::{Threading, Universe};
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::{CommError, Counters, Op, Progress, Transport, DEFAULT_TIMEOUT};

/// The `mpi` crate, for callers of [`MpiTransport::world`].
pub use ::mpi as rsmpi;

/// Environment variables that a launcher sets for its ranks (OpenMPI, PMIx, Hydra/PMI).
const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"];

/// MPI moves a large message on only while a rank is inside an MPI call, so a collective polls
/// without pausing for this long after its last progress (as MPI's blocking calls spin; a
/// yield instead gives the core away for a whole time slice on a loaded machine)...
const SPIN: Duration = Duration::from_millis(2);

/// ...and then sleeps between polls, at most this long: bounds the added latency, and keeps a
/// waiting rank from taking a core that a computing rank on the same machine needs.
const MAX_POLL_PAUSE: Duration = Duration::from_micros(500);

/// This process's endpoint among the ranks of `MPI_COMM_WORLD`.
pub struct MpiTransport {
    universe: ManuallyDrop<Universe>,
    world: SimpleCommunicator,
    progress: Progress,
    timeout: Duration,
    counters: Counters,
}

/// Initializes MPI with [`DEFAULT_TIMEOUT`]; fails (one line) if the process was not started by
/// a launcher such as `mpirun`, or if MPI was already initialized.
pub fn init() -> Result<MpiTransport, CommError> {
    init_with_timeout(DEFAULT_TIMEOUT)
}

/// [`init`] with collectives that fail after waiting `timeout` for a peer.
pub fn init_with_timeout(timeout: Duration) -> Result<MpiTransport, CommError> {
    // Without a launcher OpenMPI would try a singleton start (and its messages are many lines).
    if !LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        return Err(CommError(format!(
            "the mpi transport needs a process started by mpirun (none of {} is set): run \
             `mpirun -np K ...` (docs/dist.md)",
            LAUNCHER_VARS.join(", ")
        )));
    }
    let (universe, level) = mpi::initialize_with_threading(Threading::Serialized)
        .ok_or_else(|| CommError("MPI is already initialized in this process".into()))?;
    if !matches!(level, Threading::Serialized | Threading::Multiple) {
        drop(universe);
        return Err(CommError(format!(
            "this MPI library gives the thread level {level:?}, and the mpi transport needs \
             Serialized (a collective may run on a thread other than main)"
        )));
    }
    let world = universe.world();
    Ok(MpiTransport {
        universe: ManuallyDrop::new(universe),
        world,
        progress: Progress::default(),
        timeout,
        counters: Counters::default(),
    })
}

// SAFETY: MPI was initialized at MPI_THREAD_SERIALIZED (checked in `init_with_timeout`), which
// lets any thread call MPI as long as no two do at once. Every MPI call of this endpoint goes
// through `&mut self` or `Drop`, so moving the endpoint to another thread (what `Send` allows)
// never makes two calls concurrent; `MpiTransport` is not `Sync`.
unsafe impl Send for MpiTransport {}

/// Added to a header's tag for its payload.
const PAYLOAD_TAG: i32 = 1 << 14;

fn tag(op: Op, seq: u64) -> i32 {
    ((seq % 8192) as i32) << 1 | op as i32
}

/// A send or receive in flight: its request and the buffer MPI reads or fills, owned here until
/// the request completes.
struct InFlight {
    peer: usize,
    request: Request<'static, [u8], StaticScope>,
    buffer: *mut [u8],
}

impl InFlight {
    fn send(world: &SimpleCommunicator, to: usize, data: Vec<u8>, tag: i32) -> InFlight {
        let buffer = Box::into_raw(data.into_boxed_slice());
        // SAFETY: the box is freed only after the request completed (`test`), or never.
        let slice: &'static [u8] = unsafe { &*buffer };
        let request =
            world
                .process_at_rank(to as i32)
                .immediate_send_with_tag(StaticScope, slice, tag);
        InFlight {
            peer: to,
            request,
            buffer,
        }
    }

    fn receive(world: &SimpleCommunicator, from: usize, len: usize, tag: i32) -> InFlight {
        let buffer = Box::into_raw(vec![0u8; len].into_boxed_slice());
        // SAFETY: as in `send`; nothing else refers to the buffer while MPI fills it.
        let slice: &'static mut [u8] = unsafe { &mut *buffer };
        let request = world
            .process_at_rank(from as i32)
            .immediate_receive_into_with_tag(StaticScope, slice, tag);
        InFlight {
            peer: from,
            request,
            buffer,
        }
    }

    /// The peer and the buffer once the request has completed, else the request itself.
    fn test(self) -> Result<(usize, Vec<u8>), InFlight> {
        let InFlight {
            peer,
            request,
            buffer,
        } = self;
        match request.test() {
            // SAFETY: MPI is done with the buffer; it came from Box::into_raw above.
            Ok(_) => Ok((peer, unsafe { Box::from_raw(buffer) }.into_vec())),
            Err(request) => Err(InFlight {
                peer,
                request,
                buffer,
            }),
        }
    }
}

/// Tests every request; returns the completed ones and keeps the others.
fn completed(list: &mut Vec<InFlight>) -> Vec<(usize, Vec<u8>)> {
    let mut done = Vec::new();
    for f in std::mem::take(list) {
        match f.test() {
            Ok(d) => done.push(d),
            Err(f) => list.push(f),
        }
    }
    done
}

impl MpiTransport {
    /// `MPI_COMM_WORLD`, for measurements and for collectives this crate does not have.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Sends `outgoing` (destination, bytes) and receives one payload from every other rank,
    /// polling until all is done or the timeout passes.
    fn exchange(
        &mut self,
        op: Op,
        seq: u64,
        outgoing: Vec<(usize, Vec<u8>)>,
        own: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>, CommError> {
        let (me, size, head) = (self.rank(), self.size(), tag(op, seq));
        let deadline = Instant::now() + self.timeout;
        let mut sends = Vec::with_capacity(2 * outgoing.len());
        for (to, data) in outgoing {
            self.counters.sent += data.len() as u64;
            let len = (data.len() as u64).to_le_bytes().to_vec();
            sends.push(InFlight::send(&self.world, to, len, head));
            sends.push(InFlight::send(&self.world, to, data, head + PAYLOAD_TAG));
        }
        let mut got: Vec<Option<Vec<u8>>> = (0..size).map(|_| None).collect();
        got[me] = Some(own);
        let mut heard: Vec<bool> = (0..size).map(|j| j == me).collect();
        let mut receives = Vec::with_capacity(size);
        let mut pause = Duration::from_micros(1);
        let mut last_progress = Instant::now();
        loop {
            let mut progress = false;
            for (j, heard_j) in heard.iter_mut().enumerate() {
                if *heard_j {
                    continue;
                }
                let Some(probed) = self
                    .world
                    .process_at_rank(j as i32)
                    .immediate_matched_probe()
                else {
                    continue;
                };
                let other = probed.1.tag();
                let (header, _) = probed.matched_receive_vec::<u8>();
                let len = <[u8; 8]>::try_from(header.as_slice()).map(u64::from_le_bytes);
                let problem = match len {
                    _ if other != head => {
                        let what = Op::from_code((other & 1) as u8).map_or("?", Op::name);
                        Some(format!(
                            "rank {j} called {what} #{} (mod 8192) instead (ranks must call the \
                             same collectives in the same order)",
                            other >> 1
                        ))
                    }
                    Err(_) => Some(format!("rank {j} sent a malformed header")),
                    Ok(_) => None,
                };
                if let Some(p) = problem {
                    // MPI may still use these buffers: leak them rather than free them.
                    sends.into_iter().chain(receives).for_each(std::mem::forget);
                    return Err(self.progress.fail(format!("mpi {} #{seq}: {p}", op.name())));
                }
                let len = len.expect("checked") as usize;
                receives.push(InFlight::receive(&self.world, j, len, head + PAYLOAD_TAG));
                *heard_j = true;
                progress = true;
            }
            for (j, data) in completed(&mut receives) {
                self.counters.received += data.len() as u64;
                got[j] = Some(data);
                progress = true;
            }
            progress |= !completed(&mut sends).is_empty();
            if sends.is_empty() && got.iter().all(Option::is_some) {
                return Ok(got.into_iter().map(|d| d.expect("all received")).collect());
            }
            if Instant::now() >= deadline {
                let silent: Vec<String> = (0..size)
                    .filter(|&j| got[j].is_none())
                    .map(|j| j.to_string())
                    .collect();
                let who = if silent.is_empty() {
                    let unread: Vec<String> = sends.iter().map(|s| s.peer.to_string()).collect();
                    format!("rank {} did not take its message", unread.join(", "))
                } else {
                    format!("no message from rank {}", silent.join(", "))
                };
                sends.into_iter().chain(receives).for_each(std::mem::forget);
                return Err(self.progress.fail(format!(
                    "mpi {} #{seq}: {who} within {:?} (a rank died, is stuck, or runs a \
                     different step)",
                    op.name(),
                    self.timeout
                )));
            }
            if progress {
                pause = Duration::from_micros(1);
                last_progress = Instant::now();
            } else if last_progress.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_POLL_PAUSE);
            }
        }
    }
}

impl Transport for MpiTransport {
    fn name(&self) -> &'static str {
        "mpi"
    }

    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
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
        let me = self.rank();
        let mut own = Vec::new();
        let mut outgoing = Vec::with_capacity(slices.len());
        for (j, slice) in slices.into_iter().enumerate() {
            if j == me {
                own = slice;
            } else {
                outgoing.push((j, slice));
            }
        }
        self.exchange(Op::AllToAll, seq, outgoing, own)
    }

    fn all_gather(&mut self, data: Vec<u8>) -> Result<Vec<Vec<u8>>, CommError> {
        let seq = self.progress.start()?;
        let me = self.rank();
        let outgoing = (0..self.size())
            .filter(|&j| j != me)
            .map(|j| (j, data.clone()))
            .collect();
        self.exchange(Op::AllGather, seq, outgoing, data)
    }

    fn counters(&self) -> Counters {
        self.counters
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        if self.progress.failed.is_some() {
            // Outstanding requests make MPI_Finalize unsafe, and peers may be waiting: end the
            // job (mpirun reports the abort; the caller has printed the cause already).
            self.world.abort(2);
        }
        // SAFETY: dropped once, here; without a failure every request has completed.
        unsafe { ManuallyDrop::drop(&mut self.universe) };
    }
}
