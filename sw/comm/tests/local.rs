//! The `local` transport: collectives for K = 1..4 with deterministic contents ordered by source
//! rank, byte counters, broadcast, and the one-line failures: options that differ across ranks,
//! a rank that never arrives (timeout), a rank that stops, and mismatched collectives; the
//! simulated wires of `local_with_link` take the bytes' time.

use std::thread;
use std::time::{Duration, Instant};

use lpgen_comm::{
    local, local_with_link, local_with_timeout, CommError, LocalTransport, Transport,
};

/// Runs `f` on every endpoint in its own thread; results by rank.
fn run<T: Send>(ends: Vec<LocalTransport>, f: impl Fn(&mut LocalTransport) -> T + Sync) -> Vec<T> {
    thread::scope(|s| {
        let handles: Vec<_> = ends
            .into_iter()
            .map(|mut t| {
                let f = &f;
                s.spawn(move || f(&mut t))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Slice j of rank i: (i + 1)·(j + 2) bytes with a pattern of both.
fn slice(i: usize, j: usize) -> Vec<u8> {
    (0..(i + 1) * (j + 2))
        .map(|k| (i * 31 + j * 7 + k) as u8)
        .collect()
}

#[test]
fn collectives_for_one_to_four_ranks() {
    for k in 1..=4 {
        let results = run(local(k), |t| {
            let me = t.rank();
            assert_eq!(t.size(), k);
            let mut received = Vec::new();
            for _round in 0..3 {
                received.push(
                    t.all_to_all((0..k).map(|j| slice(me, j)).collect())
                        .unwrap(),
                );
            }
            let gathered = t.all_gather(slice(me, me)).unwrap();
            let bcast = t.broadcast(k - 1, slice(me, 0)).unwrap();
            t.barrier().unwrap();
            t.agree("format=f32 compress=1bit").unwrap();
            (received, gathered, bcast, t.counters())
        });
        for (me, (received, gathered, bcast, counters)) in results.into_iter().enumerate() {
            for r in &received {
                assert_eq!(
                    *r,
                    (0..k).map(|i| slice(i, me)).collect::<Vec<_>>(),
                    "K={k}"
                );
            }
            assert_eq!(gathered, (0..k).map(|i| slice(i, i)).collect::<Vec<_>>());
            assert_eq!(bcast, slice(k - 1, 0));
            // Payload to and from the other ranks only: 3 all_to_all, the all_gather, the
            // broadcast (only the root's buffer is sent), the fingerprint of the agreement.
            let others = (0..k).filter(|&j| j != me);
            let fp = "format=f32 compress=1bit".len() as u64;
            let root = if me == k - 1 {
                slice(me, 0).len() as u64
            } else {
                0
            };
            let sent: u64 = others
                .clone()
                .map(|j| 3 * slice(me, j).len() as u64 + slice(me, me).len() as u64 + root + fp)
                .sum();
            let got: u64 = others
                .map(|i| {
                    let from_root = if i == k - 1 {
                        slice(i, 0).len() as u64
                    } else {
                        0
                    };
                    3 * slice(i, me).len() as u64 + slice(i, i).len() as u64 + from_root + fp
                })
                .sum();
            assert_eq!(
                (counters.sent, counters.received),
                (sent, got),
                "K={k} rank {me}"
            );
        }
    }
}

#[test]
fn differing_options_fail_on_every_rank_naming_the_option() {
    let results = run(local(3), |t| {
        let lr = if t.rank() == 2 { "0.2" } else { "0.1" };
        t.agree(&format!("format=lns:5:6 lr={lr} workers=3"))
    });
    for r in results {
        let e = r.unwrap_err();
        assert_eq!(
            e.0,
            "ranks disagree on their options: rank 0 has `lr=0.1` where rank 2 has `lr=0.2` \
             (start every rank with the same options)"
        );
    }
}

#[test]
fn a_rank_that_never_arrives_times_out() {
    let timeout = Duration::from_millis(200);
    let results = run(local_with_timeout(2, timeout), |t| {
        if t.rank() == 1 {
            thread::sleep(timeout * 3); // alive, but never calls the collective
            return Ok(Duration::ZERO);
        }
        let start = Instant::now();
        let e = t.all_gather(vec![1, 2, 3]).unwrap_err();
        // The endpoint stays failed.
        assert_eq!(t.barrier().unwrap_err(), e);
        Err((e, start.elapsed()))
    });
    let (e, waited) = results[0].clone().unwrap_err();
    assert!(
        e.0.starts_with("local all_gather #1: no message from rank 1 within 200ms"),
        "{e}"
    );
    assert!(!e.0.contains('\n'));
    assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(5));
}

#[test]
fn a_stopped_rank_and_mismatched_collectives_fail_at_once() {
    let results: Vec<Result<(), CommError>> = run(local(2), |t| {
        if t.rank() == 1 {
            return Ok(()); // returns, and its endpoint is dropped
        }
        thread::sleep(Duration::from_millis(50));
        t.all_to_all(vec![vec![0], vec![1]]).map(|_| ())
    });
    let e = results[0].clone().unwrap_err();
    assert!(e.0.contains("rank 1 has stopped"), "{e}");

    let results = run(local(2), |t| {
        if t.rank() == 0 {
            t.all_to_all(vec![vec![0], vec![1]]).map(|_| ())
        } else {
            t.all_gather(vec![9]).map(|_| ())
        }
    });
    assert_eq!(
        results[0].clone().unwrap_err().0,
        "local all_to_all #1: rank 1 called all_gather #1 instead (ranks must call the same \
         collectives in the same order)"
    );
    assert!(results[1]
        .clone()
        .unwrap_err()
        .0
        .contains("rank 0 called all_to_all #1"));
}

#[test]
fn wrong_slice_count_is_refused() {
    let mut ends = local(1);
    let e = ends[0].all_to_all(vec![vec![], vec![]]).unwrap_err();
    assert_eq!(e.0, "all_to_all #1: 2 slices for 1 ranks");
}

/// Over wires of 1 MB/s, two all_to_alls of 40,000-byte slices (K = 3) take at least
/// 2 × 40 ms (each rank waits for its peers' slices, and the second collective's cannot leave
/// before the first's), deliver the same slices as without wires, and count the same bytes.
#[test]
fn simulated_wires_take_the_bytes_time() {
    let big = |i: usize, j: usize| vec![(i * 3 + j) as u8; 40_000];
    let go = |t: &mut LocalTransport| {
        let start = Instant::now();
        let me = t.rank();
        let mut got = vec![];
        for _ in 0..2 {
            got.push(t.all_to_all((0..3).map(|j| big(me, j)).collect()).unwrap());
        }
        (start.elapsed(), got, t.counters())
    };
    let wired = run(local_with_link(3, 1e6), go);
    let plain = run(local(3), go);
    for ((time, got, counters), (_, want, want_counters)) in wired.iter().zip(&plain) {
        assert!(*time >= Duration::from_millis(80), "{time:?}");
        assert_eq!((got, counters), (want, want_counters));
    }
}
