//! Splitting a machine operation among threads that are kept between operations.
//!
//! A training step of the golden machine runs dozens of products and lane operations of a few
//! hundred microseconds each. Starting threads for each one, or waking threads that sleep,
//! cost a fifth of a two-thread fix:7:8 step (docs/perf.md). So every thread that splits work
//! keeps its own workers: after a block a worker spins for [`SPIN`] waiting for the next one,
//! and only then sleeps. The partition never depends on who computes a block, so results are
//! the same for every thread count.

use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

/// How long a waiting thread spins before it sleeps: longer than the host's work between two
/// operations of a step (tens of microseconds), short enough that an idle run gives the core
/// back at once.
const SPIN: Duration = Duration::from_micros(500);

/// A block of work lent to a worker, its lifetime erased (see [`Workers::run`]).
type Job = Box<dyn FnOnce() + Send + 'static>;

/// What a worker and the thread that lends it work share.
struct Slot {
    /// The sequence number of the last job posted, and of the last one finished.
    posted: AtomicU64,
    finished: AtomicU64,
    job: Mutex<Option<Job>>,
    panicked: AtomicBool,
    stop: AtomicBool,
    /// The lending thread, woken when a job is finished.
    lender: Thread,
}

struct Worker {
    slot: Arc<Slot>,
    thread: JoinHandle<()>,
}

/// One lending thread's workers.
#[derive(Default)]
struct Workers {
    workers: Vec<Worker>,
    sequence: u64,
}

thread_local! {
    static WORKERS: RefCell<Workers> = RefCell::new(Workers::default());
}

/// Spins on `done` for [`SPIN`] (yielding the core after the first tenth, in case a thread
/// that would make `done` true waits for it), then sleeps until woken (every waker sets
/// `done` first).
fn wait_for(done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        let waited = start.elapsed();
        if waited < SPIN / 10 {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        } else if waited < SPIN {
            thread::yield_now();
        } else {
            thread::park();
        }
    }
}

/// The cores of this machine: more threads than these would only wait for each other's
/// spinning, so blocks never outnumber them.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A job's panic is caught before the slot is locked again, so no lock is ever poisoned
    // with its value half-written.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Workers {
    fn grow(&mut self, n: usize) {
        while self.workers.len() < n {
            let slot = Arc::new(Slot {
                posted: AtomicU64::new(self.sequence),
                finished: AtomicU64::new(self.sequence),
                job: Mutex::new(None),
                panicked: AtomicBool::new(false),
                stop: AtomicBool::new(false),
                lender: thread::current(),
            });
            let (theirs, seen) = (Arc::clone(&slot), self.sequence);
            let thread = thread::Builder::new()
                .name("lpgen-machine".into())
                .spawn(move || work(&theirs, seen))
                .expect("cannot start a machine worker thread");
            self.workers.push(Worker { slot, thread });
        }
    }

    /// Runs every job of `jobs` on a worker and `here` on this thread; returns when all have
    /// finished, and panics (after all have finished) if any did.
    fn run<'a>(&mut self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>, here: impl FnOnce()) {
        let n = jobs.len();
        self.grow(n);
        self.sequence += 1;
        for (w, job) in self.workers.iter().zip(jobs) {
            // SAFETY: the job may borrow from the caller's frame for 'a. It is erased to
            // 'static only to pass it through the slot: this function neither returns nor
            // unwinds before every worker has marked its job finished (below), which it does
            // after the job has run and been dropped, so no borrow outlives its use.
            let job: Job =
                unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
            *lock(&w.slot.job) = Some(job);
            w.slot.posted.store(self.sequence, Ordering::Release);
            w.thread.thread().unpark();
        }
        let here = catch_unwind(AssertUnwindSafe(here));
        let mut worker_panicked = false;
        for w in &self.workers[..n] {
            wait_for(|| w.slot.finished.load(Ordering::Acquire) >= self.sequence);
            worker_panicked |= w.slot.panicked.swap(false, Ordering::Relaxed);
        }
        if let Err(p) = here {
            resume_unwind(p);
        }
        assert!(!worker_panicked, "a machine worker panicked");
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for w in &self.workers {
            w.slot.stop.store(true, Ordering::Release);
            w.thread.thread().unpark();
        }
        for w in self.workers.drain(..) {
            let _ = w.thread.join();
        }
    }
}

/// A worker's loop: wait for a job after the `seen`th, run it, say so. (`seen` is given, not
/// read: the first job may be posted before the thread starts.)
fn work(slot: &Slot, mut seen: u64) {
    loop {
        wait_for(|| {
            slot.posted.load(Ordering::Acquire) != seen || slot.stop.load(Ordering::Acquire)
        });
        if slot.stop.load(Ordering::Acquire) {
            return;
        }
        seen = slot.posted.load(Ordering::Acquire);
        if let Some(job) = lock(&slot.job).take() {
            if catch_unwind(AssertUnwindSafe(job)).is_err() {
                slot.panicked.store(true, Ordering::Relaxed);
            }
        }
        slot.finished.store(seen, Ordering::Release);
        slot.lender.unpark();
    }
}

/// Splits `out` into up to `threads` contiguous blocks (no more than the machine's cores)
/// and runs `fill(start, block)` for each, the calling thread taking the first; returns the
/// blocks' results in order. Each block is written in place, so no thread copies another's
/// results afterwards.
pub fn fill_in_parallel<T: Send, R: Send>(
    threads: usize,
    out: &mut [T],
    fill: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(cores()).clamp(1, out.len().max(1));
    if threads == 1 {
        return vec![fill(0, out)];
    }
    let per = out.len().div_ceil(threads);
    let mut results: Vec<Option<R>> = (0..out.len().div_ceil(per)).map(|_| None).collect();
    {
        let fill = &fill;
        let mut blocks = out.chunks_mut(per).zip(results.iter_mut()).enumerate();
        let (_, (first, first_result)) = blocks.next().expect("at least one block");
        let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = blocks
            .map(|(p, (block, result))| {
                Box::new(move || *result = Some(fill(p * per, block)))
                    as Box<dyn FnOnce() + Send + '_>
            })
            .collect();
        let mut here = || *first_result = Some(fill(0, first));
        WORKERS.with(|w| match w.try_borrow_mut() {
            Ok(mut workers) => workers.run(jobs, here),
            // Called from inside a block on this thread: no workers to spare, run in order.
            Err(_) => {
                here();
                jobs.into_iter().for_each(|job| job());
            }
        });
    }
    results
        .into_iter()
        .map(|r| r.expect("every block ran"))
        .collect()
}

/// Runs `work(part)` for `parts` parts of a job on up to `threads` threads and returns the
/// results in part order: the partition decides only who computes what, never how, so the
/// result is the same for every thread count.
pub fn in_parallel<T: Send>(
    threads: usize,
    parts: usize,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut out: Vec<Option<T>> = (0..parts).map(|_| None).collect();
    fill_in_parallel(threads, &mut out, |start, block| {
        for (part, slot) in (start..).zip(block.iter_mut()) {
            *slot = Some(work(part));
        }
    });
    out.into_iter()
        .map(|r| r.expect("every part ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_parallel_returns_parts_in_order_whichever_thread_computed_them() {
        // Parts slow enough that the threads overlap: the results still come in part order.
        let run = |threads: usize| {
            in_parallel(threads, 64, |part| {
                std::thread::sleep(Duration::from_millis(1));
                (part, thread::current().id())
            })
        };
        for threads in [1, 2, 3] {
            let got = run(threads);
            let parts: Vec<usize> = got.iter().map(|r| r.0).collect();
            assert_eq!(parts, (0..64).collect::<Vec<_>>(), "{threads} threads");
            let mut ids: Vec<_> = got.iter().map(|r| r.1).collect();
            ids.sort_by_key(|id| format!("{id:?}"));
            ids.dedup();
            assert_eq!(
                ids.len(),
                threads.min(cores()),
                "every thread computed parts"
            );
        }
    }

    #[test]
    fn blocks_are_written_in_place_and_workers_are_kept() {
        let threads = cores().min(3);
        let mut out = vec![0usize; 1000];
        let mut workers_seen = Vec::new();
        for round in 0..50 {
            let ids = fill_in_parallel(3, &mut out, |start, block| {
                for (i, w) in (start..).zip(block.iter_mut()) {
                    *w = i * round;
                }
                thread::current().id()
            });
            assert_eq!(ids.len(), threads, "never more blocks than cores");
            assert_eq!(
                ids[0],
                thread::current().id(),
                "the caller takes the first block"
            );
            workers_seen.extend_from_slice(&ids[1..]);
            assert!(out.iter().enumerate().all(|(i, &w)| w == i * round));
        }
        workers_seen.sort_by_key(|id| format!("{id:?}"));
        workers_seen.dedup();
        assert_eq!(
            workers_seen.len(),
            threads - 1,
            "the same workers served every round"
        );
    }

    #[test]
    fn a_panic_in_any_block_reaches_the_caller_after_every_block_finished() {
        let threads = cores().min(3);
        let per = 30usize.div_ceil(threads);
        for bad in 0..threads {
            let mut out = vec![0u32; 30];
            let got = catch_unwind(AssertUnwindSafe(|| {
                fill_in_parallel(3, &mut out, |start, block| {
                    if start / per == bad {
                        panic!("block {bad}");
                    }
                    std::thread::sleep(Duration::from_millis(5));
                    block.fill(7);
                })
            }));
            assert!(got.is_err(), "block {bad}'s panic was not reported");
            // The other blocks ran to the end before the panic was passed on.
            for (b, chunk) in out.chunks(per).enumerate() {
                let want = if b == bad { 0 } else { 7 };
                assert!(chunk.iter().all(|&w| w == want), "block {b} after {bad}");
            }
        }
        // The workers still serve after a panic.
        let mut out = vec![0u8; 8];
        fill_in_parallel(2, &mut out, |_, block| block.fill(1));
        assert_eq!(out, vec![1; 8]);
    }

    #[test]
    fn nested_calls_give_the_same_words() {
        let mut out = vec![0usize; 8];
        fill_in_parallel(2, &mut out, |start, block| {
            let mut inner = vec![0usize; 4];
            fill_in_parallel(2, &mut inner, |s, b| {
                for (i, w) in (s..).zip(b.iter_mut()) {
                    *w = i;
                }
            });
            for (i, w) in (start..).zip(block.iter_mut()) {
                *w = i + inner.iter().sum::<usize>();
            }
        });
        assert_eq!(out, (6..14).collect::<Vec<_>>());
    }
}
