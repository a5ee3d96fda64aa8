//! Seed 001's aggregation over the `local` transport for K = 1..4, against the same steps
//! computed in one process with the golden quantizer, and its traffic against the analytic
//! byte count.

use std::thread;

use lpgen_comm::exchange::{
    all_gather_1bit, all_gather_q8, all_gather_words, my_columns, reduce_scatter_1bit,
    reduce_scatter_q8, reduce_scatter_words,
};
use lpgen_comm::{local, partition, LocalTransport, Transport};
use lpgen_golden::onebit::{self, Quantizer};
use lpgen_golden::q8::{Q8Type, TensorScale};
use lpgen_golden::{Bits, Calc, Format, SumMode, F32};

fn run<T: Send>(k: usize, f: impl Fn(&mut LocalTransport) -> T + Sync) -> Vec<T> {
    thread::scope(|s| {
        let hs: Vec<_> = local(k)
            .into_iter()
            .map(|mut t| {
                let f = &f;
                s.spawn(move || f(&mut t))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Rank r's gradient: deterministic, of both signs.
fn gradient(c: &Calc, r: usize, rows: usize, cols: usize) -> Vec<Bits> {
    (0..rows * cols)
        .map(|e| c.from_f64(((e * 37 + r * 101) % 199) as f64 / 50.0 - 2.0))
        .collect()
}

#[test]
fn one_bit_steps_match_the_golden_model_for_one_to_four_ranks() {
    let (rows, cols) = (37, 10);
    for (f, mode) in [
        ("f32", SumMode::Kahan),
        ("lns:5:6", SumMode::Naive),
        ("posit:16", SumMode::Quire),
    ] {
        let format: Format = f.parse().unwrap();
        let q = Quantizer::new(format, mode).unwrap();
        let c = *q.calc();
        for k in 1..=4 {
            let results = run(k, |t| {
                let g = gradient(&c, t.rank(), rows, cols);
                let mut residual = vec![c.zero(); rows * cols];
                let (mine, sum) =
                    reduce_scatter_1bit(t, &q, &g, rows, cols, Some(&mut residual)).unwrap();
                let sent_rs = t.counters().sent;
                // Post-processing stand-in: halve the aggregated stripe.
                let half = c.from_f64(0.5);
                let stripe: Vec<Bits> = sum.iter().map(|&w| c.mul(w, half)).collect();
                let mut server = vec![c.zero(); stripe.len()];
                let whole = all_gather_1bit(t, &q, &stripe, rows, cols, Some(&mut server)).unwrap();
                (
                    mine,
                    sum,
                    stripe,
                    whole,
                    residual,
                    sent_rs,
                    t.counters().sent,
                )
            });
            // The same in one process.
            let quantized: Vec<_> = (0..k)
                .map(|r| {
                    let mut residual = vec![c.zero(); rows * cols];
                    let qz = q.matrix(
                        &gradient(&c, r, rows, cols),
                        rows,
                        cols,
                        Some(&mut residual),
                    );
                    (qz, residual)
                })
                .collect();
            let mut expect_whole = vec![0; rows * cols];
            for (j, (mine, sum, stripe, _, residual, sent_rs, sent)) in results.iter().enumerate() {
                assert_eq!(*mine, partition(cols, k, j));
                let parts: Vec<_> = quantized
                    .iter()
                    .map(|(qz, _)| qz.columns(mine.clone()))
                    .collect();
                assert_eq!(*sum, q.sum_dequantized(&parts), "{f} K={k} rank {j}");
                assert_eq!(*residual, quantized[j].1);
                let back = q.matrix(
                    stripe,
                    rows,
                    mine.len(),
                    Some(&mut vec![c.zero(); stripe.len()]),
                );
                for (cc, col) in mine.clone().enumerate() {
                    for row in 0..rows {
                        expect_whole[row * cols + col] = back.value(row, cc);
                    }
                }
                // Traffic: the analytic byte counts of the stripes sent to the other ranks.
                let others = (0..k).filter(|&i| i != j);
                let rs: usize = others
                    .map(|i| onebit::message_bytes(format, rows, partition(cols, k, i).len()))
                    .sum();
                let ag = (k - 1) * onebit::message_bytes(format, rows, mine.len());
                assert_eq!((*sent_rs, *sent), (rs as u64, (rs + ag) as u64));
            }
            for (_, _, _, whole, _, _, _) in &results {
                assert_eq!(
                    *whole, expect_whole,
                    "{f} K={k}: every rank holds the same words"
                );
            }
        }
    }
}

#[test]
fn plain_words_are_summed_in_rank_order() {
    let (rows, cols) = (5, 7);
    let format = Format::F32(F32);
    let c = format.calc();
    for k in 1..=4 {
        let results = run(k, |t| {
            let g = gradient(&c, t.rank(), rows, cols);
            let (mine, sum) =
                reduce_scatter_words(t, format, SumMode::Naive, &g, rows, cols).unwrap();
            assert_eq!(mine, my_columns(t, cols));
            let whole = all_gather_words(t, format, &sum, rows, cols).unwrap();
            (sum, whole)
        });
        let grads: Vec<_> = (0..k).map(|r| gradient(&c, r, rows, cols)).collect();
        let expect: Vec<Bits> = (0..rows * cols)
            .map(|e| {
                c.sum(
                    SumMode::Naive,
                    &grads.iter().map(|g| g[e]).collect::<Vec<_>>(),
                )
                .unwrap()
            })
            .collect();
        for (sum, whole) in &results {
            assert_eq!(*whole, expect, "K={k}");
            assert!(!sum.is_empty() || cols < k);
        }
    }
}

/// The 8-bit exchange for K = 1..4 and every codec: each rank's whole gradient compressed with
/// one scale, the owner's sum of the K decoded stripes in rank order, its stripe compressed
/// again with its own scale; traffic is a scale and one byte per word, both ways.
#[test]
fn q8_steps_match_the_codec_applied_in_one_process() {
    let (rows, cols, unit) = (6, 9, 4.0);
    // Words of fix and posit formats travel with a scale word, f32 and LNS with an f32 scale.
    for (format, mode, codec) in [
        ("posit:16:1", SumMode::Quire),
        ("fix:7:8", SumMode::Quire),
        ("f32", SumMode::Kahan),
        ("lns:5:6", SumMode::Naive),
    ]
    .iter()
    .flat_map(|&(f, m)| Q8Type::ALL.map(|c| (f.parse::<Format>().unwrap(), m, c)))
    {
        let c = format.calc();
        for k in 1..=4 {
            let results = run(k, |t| {
                let g = gradient(&c, t.rank(), rows, cols);
                let before = t.counters().sent;
                let (mine, sum) =
                    reduce_scatter_q8(t, codec, format, mode, &g, rows, cols, unit).unwrap();
                let whole = all_gather_q8(t, codec, format, &sum, rows, cols, unit).unwrap();
                (mine, whole, t.counters().sent - before)
            });
            // The reference: every gradient through the codec, summed, each owner's stripe
            // through the codec again.
            let decoded: Vec<Vec<Bits>> = (0..k)
                .map(|r| {
                    let g = gradient(&c, r, rows, cols);
                    codec.through_words(format, &g, unit).unwrap()
                })
                .collect();
            let mut expect = vec![0; rows * cols];
            for j in 0..k {
                let range = partition(cols, k, j);
                let stripe: Vec<Bits> = (0..rows)
                    .flat_map(|row| range.clone().map(move |col| row * cols + col))
                    .map(|e| {
                        let terms: Vec<Bits> = decoded.iter().map(|d| d[e]).collect();
                        c.sum(mode, &terms).unwrap()
                    })
                    .collect();
                let back = codec.through_words(format, &stripe, unit).unwrap();
                for (i, col) in range.clone().enumerate() {
                    for row in 0..rows {
                        expect[row * cols + col] = back[row * range.len() + i];
                    }
                }
            }
            for (r, (mine, whole, sent)) in results.iter().enumerate() {
                assert_eq!(*mine, partition(cols, k, r));
                assert_eq!(*whole, expect, "{codec} K={k} rank {r}");
                // Peers' slices of the reduce-scatter, then the stripe to each peer.
                let peers_cols = cols - mine.len();
                let head = TensorScale::byte_len(format);
                let want =
                    (k - 1) * head + rows * peers_cols + (k - 1) * (head + rows * mine.len());
                assert_eq!(*sent as usize, want, "{codec} K={k} rank {r} bytes");
            }
            assert_ne!(
                results[0].1,
                (0..rows * cols).map(|_| 0).collect::<Vec<Bits>>(),
                "{codec}"
            );
        }
    }
}
