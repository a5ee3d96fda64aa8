//! The exact kernel on sums wider than an i128: bf16 products with quires whose operands
//! spread over 2^−30 … 2^30 (a row's values span some 67 bits, a sum's bound some 140), against
//! the per-element reference, the words compared.
//!
//!   cargo run --release -p lpgen-golden --example exact_wide

use std::time::Instant;

use lpgen_golden::kernel::{self, Operand};
use lpgen_golden::{Format, SumMode};

fn main() {
    let f: Format = "bf16".parse().expect("bf16");
    let c = f.calc();
    let n = 128;
    let mut s = 12345u64;
    let mut words = |len: usize| -> Vec<u64> {
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let e = ((s >> 20) % 60) as i32 - 30;
                let v = (1.0 + ((s >> 8) % 128) as f64 / 128.0) * f64::from(e).exp2();
                c.from_f64(if s & 1 == 1 { -v } else { v })
            })
            .collect()
    };
    let (a, bt) = (words(n * n), words(n * n));
    let (a, b) = (
        Operand::row_major(&a, n, n),
        Operand::row_major(&bt, n, n).t(),
    );
    let start = Instant::now();
    let want = kernel::reference(&c, SumMode::Quire, a, b).expect("a product");
    let reference = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let got = kernel::matmul(&c, SumMode::Quire, a, b).expect("a product");
    let fast = start.elapsed().as_secs_f64();
    assert_eq!(got, want, "the kernel differs from the reference");
    println!(
        "bf16 quire {n}×{n}×{n}, values 2^-30 … 2^30: reference {reference:.4} s, kernel {fast:.4} s ({:.1}×)",
        reference / fast
    );
}
