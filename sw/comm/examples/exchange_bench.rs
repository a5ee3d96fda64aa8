//! Time of each part of seed 001's aggregation of one 512 × 784 f32 gradient (the 784-512
//! layer), one thread, no transport: the 1-bit quantization of the whole matrix with error
//! feedback, its bytes out and back, the owner's sum of two dequantized stripes, and the
//! words path's sum of two. Each the best of REPS.
//!
//!   cargo run --release -p lpgen-comm --example exchange_bench [-- REPS]

use std::time::Instant;

use lpgen_golden::onebit::{Quantized, Quantizer};
use lpgen_golden::{Format, SumMode, F32};

const ROWS: usize = 512;
const COLS: usize = 784;

fn best<T>(reps: u32, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut t_best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f();
        t_best = t_best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (t_best, out.expect("at least one repetition"))
}

fn main() {
    let reps: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let f = Format::F32(F32);
    let c = f.calc();
    let g: Vec<u64> = (0..ROWS * COLS)
        .map(|i| c.from_f64(((i * 37 % 101) as f64 - 50.0) / 1e3))
        .collect();
    let mut r = vec![c.zero(); g.len()];
    let m = (ROWS * COLS) as f64;
    let show = |what: &str, t: f64| {
        println!(
            "  {what:<44} {:>8.2} ms  {:>6.1} ns/word",
            t * 1e3,
            t * 1e9 / m
        )
    };
    println!("{ROWS} x {COLS} f32 gradient, best of {reps}:");
    for mode in [SumMode::Naive, SumMode::Kahan] {
        let q = Quantizer::new(f, mode).expect("f32");
        let (t, quantized) = best(reps, || q.matrix(&g, ROWS, COLS, Some(&mut r)));
        show(&format!("1-bit quantize with feedback ({mode:?})"), t);
        let (t, bytes) = best(reps, || quantized.to_bytes(f));
        show("1-bit to bytes", t);
        let (t, back) = best(reps, || {
            Quantized::from_bytes(f, ROWS, COLS, &bytes).expect("bytes")
        });
        show("1-bit from bytes", t);
        let parts = [back.clone(), back];
        let (t, _) = best(reps, || q.sum_dequantized(&parts));
        show(&format!("sum of 2 dequantized ({mode:?})"), t);
    }
    let (t, _) = best(reps, || {
        g.iter()
            .zip(&g)
            .map(|(&a, &b)| c.sum(SumMode::Naive, &[a, b]).expect("sum"))
            .collect::<Vec<u64>>()
    });
    show("sum of 2 words (Naive)", t);
}
