//! Throughput of the golden matrix-product kernels (`lpgen_golden::kernel::matmul`) beside
//! the per-element reference (`kernel::reference`), one thread, in G MAC/s.
//!
//!   cargo run --release -p lpgen-golden --example kernels             # 64, 256, 512
//!   cargo run --release -p lpgen-golden --example kernels -- 256      # one size
//!   cargo run --release -p lpgen-golden --example kernels -- 256 lns  # cases naming `lns`
//!   cargo run --release -p lpgen-golden --example kernels -- shapes   # LeNet-5's gradients
//!   cargo run --release -p lpgen-golden --example kernels -- threads 2 # 128³ on 2 threads
//!
//! Operands are words nearest to N(0, 1) draws (training's range), B held by columns as the
//! training machines hold it; in the `+relu` rows A's negative draws are zero. The reference runs at 64 only (it is slow); its ratio column is
//! kernel / reference at 64. Every kernel result is compared with the reference at 64.

use std::time::Instant;

use lpgen_golden::kernel::{self, Operand};
use lpgen_golden::{Format, SumMode};

/// (format, mode, relu) measured; with `relu`, A's negative draws are zero, as a ReLU's
/// outputs are (half of A zero, scattered: the sparse frame of naive posit sums skips them).
const CASES: &[(&str, SumMode, bool)] = &[
    ("posit:8:2", SumMode::Quire, false),
    ("posit:8:0", SumMode::Quire, false),
    ("posit:16:1", SumMode::Quire, false),
    ("fix:7:8", SumMode::Quire, false),
    ("fp8:e4m3", SumMode::Quire, false),
    ("fp8:e5m2", SumMode::Quire, false),
    ("bf16", SumMode::Quire, false),
    ("f16", SumMode::Quire, false),
    ("posit:8:2", SumMode::Naive, false),
    ("fp8:e4m3", SumMode::Naive, false),
    ("bf16", SumMode::Naive, false),
    ("f16", SumMode::Naive, false),
    ("posit:8:2", SumMode::Kahan, false),
    ("posit:16:1", SumMode::Naive, false),
    ("posit:16:1", SumMode::Kahan, false),
    ("bf16", SumMode::Kahan, false),
    ("fix:7:8", SumMode::Naive, false),
    ("lns:5:6", SumMode::Naive, false),
    ("lns:5:6", SumMode::Kahan, false),
    ("posit:8:2", SumMode::Naive, true),
    ("fp8:e4m3", SumMode::Naive, true),
    ("posit:16:1", SumMode::Naive, true),
    ("posit:16:1", SumMode::Kahan, true),
    ("bf16", SumMode::Naive, true),
    ("lns:5:6", SumMode::Kahan, true),
];

/// Box–Muller normal draws from a 64-bit LCG (reproducible, no dependency).
fn normals(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..len)
        .map(|_| (-2.0 * next().ln()).sqrt() * (2.0 * std::f64::consts::PI * next()).cos())
        .collect()
}

/// G MAC/s of `run` on an n×n×n product, repeated for at least 0.3 s.
fn rate(n: usize, mut run: impl FnMut() -> Vec<u64>) -> (f64, Vec<u64>) {
    let start = Instant::now();
    let mut reps = 0;
    let mut out = Vec::new();
    while reps == 0 || start.elapsed().as_secs_f64() < 0.3 {
        out = run();
        reps += 1;
    }
    let s = start.elapsed().as_secs_f64();
    ((reps * n * n * n) as f64 / s / 1e9, out)
}

/// LeNet-5's weight gradients of a batch of 20 as training computes them, dW = δᵀ·X: m×k×n
/// with A the transpose of the k×m sum errors and B the k×n im2col rows (or inputs).
const SHAPES: &[(&str, usize, usize, usize)] = &[
    ("C1", 6, 15_680, 25),
    ("C3", 16, 2_000, 150),
    ("long-25", 64, 15_680, 25),
    ("long-150", 64, 15_680, 150),
];

/// `kernels -- shapes [filter]`: G MAC/s of the exact kernels at [`SHAPES`].
fn shapes(only: &str) {
    for &(s, mode, relu) in CASES {
        if mode != SumMode::Quire || relu || !s.contains(only) {
            continue;
        }
        let c = s.parse::<Format>().unwrap().calc();
        for &(layer, m, k, n) in SHAPES {
            let words = |len: usize, seed: u64| -> Vec<u64> {
                normals(len, seed).iter().map(|&x| c.from_f64(x)).collect()
            };
            let (dg, x) = (words(k * m, 5), words(k * n, 6));
            let (a, b) = (
                Operand::row_major(&dg, k, m).t(),
                Operand::row_major(&x, k, n),
            );
            let start = Instant::now();
            let mut reps = 0;
            while reps == 0 || start.elapsed().as_secs_f64() < 0.3 {
                kernel::matmul(&c, mode, a, b).unwrap();
                reps += 1;
            }
            let g = (reps * m * n * k) as f64 / start.elapsed().as_secs_f64() / 1e9;
            println!("{s:<12} {:<10} {layer} {m}×{k}×{n} {g:>9.3}", mode.name());
        }
    }
}

/// `kernels -- threads T [filter]`: G MAC/s of each thread of T in one process, each running
/// a 128 × 128 × 128 product on its own copy of the operands ([`rate`]) (so that two threads of one process
/// can be compared with one alone, and with two processes of one thread side by side).
fn threads(t: usize, only: &str) {
    let n = 128;
    for &(s, mode, relu) in CASES {
        let name = format!("{s} {}", mode.name());
        if relu || !name.contains(only) {
            continue;
        }
        let c = s.parse::<Format>().unwrap().calc();
        let words = |seed: u64| -> Vec<u64> {
            normals(n * n, seed)
                .iter()
                .map(|&x| c.from_f64(x))
                .collect()
        };
        let (a, bt) = (words(7), words(8));
        let rates: Vec<f64> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..t)
                .map(|_| {
                    let (a, bt, c) = (a.clone(), bt.clone(), &c);
                    scope.spawn(move || {
                        let (ao, bo) = (
                            Operand::row_major(&a, n, n),
                            Operand::row_major(&bt, n, n).t(),
                        );
                        rate(n, || kernel::matmul(c, mode, ao, bo).unwrap()).0
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let rates: Vec<String> = rates.iter().map(|g| format!("{g:.3}")).collect();
        println!("{name:<22} {}", rates.join(" "));
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("shapes") => return shapes(&std::env::args().nth(2).unwrap_or_default()),
        Some("threads") => {
            let t = std::env::args()
                .nth(2)
                .map_or(2, |t| t.parse().expect("a thread count"));
            return threads(t, &std::env::args().nth(3).unwrap_or_default());
        }
        _ => {}
    }
    let sizes: Vec<usize> = match std::env::args().nth(1) {
        Some(s) => vec![s.parse().expect("a size")],
        None => vec![64, 256, 512],
    };
    print!("{:<12} {:<10} {:>10}", "format", "mode", "ref@64");
    for n in &sizes {
        print!(" {:>9}", format!("k@{n}"));
    }
    println!(" {:>8}", "k/ref@64");
    let only = std::env::args().nth(2).unwrap_or_default();
    for &(s, mode, relu) in CASES {
        let name = format!("{}{}", mode.name(), if relu { "+relu" } else { "" });
        if !format!("{s} {name}").contains(&only) {
            continue;
        }
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let words = |n: usize, seed: u64, relu: bool| -> Vec<u64> {
            normals(n * n, seed)
                .iter()
                .map(|&x| c.from_f64(if relu { x.max(0.0) } else { x }))
                .collect()
        };
        // The reference at 64, and the kernel's words checked against it.
        let (a, bt) = (words(64, 1, relu), words(64, 2, false));
        let (ao, bo) = (
            Operand::row_major(&a, 64, 64),
            Operand::row_major(&bt, 64, 64).t(),
        );
        let (r64, want) = rate(64, || kernel::reference(&c, mode, ao, bo).unwrap());
        let got = kernel::matmul(&c, mode, ao, bo).unwrap();
        assert_eq!(got, want, "{f} {}: the kernel differs", mode.name());
        print!("{:<12} {:<10} {:>10.4}", s, name, r64);
        let mut k64 = None;
        for &n in &sizes {
            let (a, bt) = (words(n, 3, relu), words(n, 4, false));
            let (ao, bo) = (
                Operand::row_major(&a, n, n),
                Operand::row_major(&bt, n, n).t(),
            );
            let (g, _) = rate(n, || kernel::matmul(&c, mode, ao, bo).unwrap());
            if n == 64 {
                k64 = Some(g);
            }
            print!(" {g:>9.3}");
        }
        match k64 {
            Some(g) => println!(" {:>8.1}", g / r64),
            None => println!(),
        }
    }
}
