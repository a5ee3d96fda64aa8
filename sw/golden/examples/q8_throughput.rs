//! Throughput of the seed 003 codecs (`lpgen_golden::q8`) on one core, in values per second:
//! absmax, encode and decode of a 2^20-value N(0,1) f32 tensor, best of several rounds.
//!
//! `cargo run --release -p lpgen-golden --example q8_throughput [-- ROUNDS]`

use std::hint::black_box;
use std::time::Instant;

use lpgen_golden::q8::{self, Q8Type};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const N: usize = 1 << 20;

/// Best time of `rounds` runs of `f`, in values per second.
fn rate(rounds: usize, mut f: impl FnMut()) -> f64 {
    let best = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    N as f64 / best
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("ROUNDS: a whole number"))
        .unwrap_or(10);
    let mut rng = Pcg64::seed_from_u64(1);
    // Box–Muller, as `lpgen quant` draws N(0,1)
    let xs: Vec<f32> = (0..N)
        .map(|_| {
            let r = (-2.0 * (1.0 - rng.gen::<f64>()).ln()).sqrt();
            (r * (std::f64::consts::TAU * rng.gen::<f64>()).cos()) as f32
        })
        .collect();
    let mut codes = vec![0u8; N];
    let mut back = vec![0f32; N];
    println!("{N} N(0,1) values, best of {rounds} rounds, one core; values/s");
    println!("type             absmax     encode_slice  encode(x)  decode_slice");
    for t in Q8Type::ALL {
        let book = t.codebook();
        let scale = q8::absmax(&xs);
        let absmax = rate(rounds, || {
            black_box(q8::absmax(black_box(&xs)));
        });
        let enc = rate(rounds, || {
            book.encode_slice(black_box(&xs), scale, &mut codes)
        });
        let enc1 = rate(rounds, || {
            for (x, c) in xs.iter().zip(codes.iter_mut()) {
                *c = t.encode(black_box(*x), scale);
            }
        });
        let dec = rate(rounds, || {
            book.decode_slice(black_box(&codes), scale, &mut back)
        });
        black_box(&back);
        println!(
            "{:<16} {:<10.3e} {:<13.3e} {:<10.3e} {:.3e}",
            t.to_string(),
            absmax,
            enc,
            enc1,
            dec
        );
    }
}
