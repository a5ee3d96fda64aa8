//! Throughput of the MX product kernel (`mx::matmul_f32`) beside the per-element definition
//! (`MxVector::dot_f32` of each row and column), and of MX quantization, one thread, on the
//! shapes of LeNet-5's products and a square one. Every kernel result is compared with the
//! definition.
//!
//!   cargo run --release -p lpgen-golden --example mx_kernels

use std::time::Instant;

use lpgen_golden::mx::{matmul_dense, matmul_f32, Along, MxFormat, MxVector, Operand};
use lpgen_golden::Format;

/// Pseudo-random values in (−2, 2), a quarter of them zero (ReLU outputs), from an LCG.
fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((s >> 11) as f64) / (1u64 << 53) as f64;
            if u < 0.25 {
                0.0
            } else {
                4.0 * u - 2.0
            }
        })
        .collect()
}

/// Seconds per call of `run`, repeated for at least 0.3 s.
fn time<T>(mut run: impl FnMut() -> T) -> (f64, T) {
    let start = Instant::now();
    let mut reps = 0u32;
    let mut out = run();
    while start.elapsed().as_secs_f64() < 0.3 {
        out = run();
        reps += 1;
    }
    (start.elapsed().as_secs_f64() / f64::from(reps + 1), out)
}

fn main() {
    // Element rounding, fast path and definition, and whole vectors, on 2^20 values.
    for (name, elem) in [
        ("fp8:e4m3", "float:4:3:fn:sat"),
        ("fp4:e2m1", "float:2:1:nonan"),
    ] {
        let f = MxFormat::new(name, 32).unwrap();
        let Ok(Format::Float(ef)) = elem.parse::<Format>() else {
            unreachable!("{elem} is a float format")
        };
        let x = values(1 << 20, 3);
        let r = ef.scaled_rounder();
        let (tf, fast) = time(|| x.iter().map(|&v| r.round(v, -3)).collect::<Vec<_>>());
        let (tr, slow) = time(|| {
            x.iter()
                .map(|&v| ef.round_scaled_reference(v, -3))
                .collect::<Vec<_>>()
        });
        assert_eq!(fast, slow, "{name}: the fast rounding differs");
        let q = f.quantizer();
        let (tq, _) = time(|| q.quantize_vector(&x));
        let per_s = |t: f64| x.len() as f64 / t / 1e6;
        println!(
            "{name}: element rounding {:.1} M/s (definition {:.1} M/s); quantize_vector {:.1} M/s",
            per_s(tf),
            per_s(tr),
            per_s(tq)
        );
    }
    println!(
        "| format | m×k×n | quantize M elem/s | dot_f32 G MAC/s | kernel G MAC/s | kernel / dot_f32 | dense quantize M elem/s | dense G MAC/s | dense / dot_f32 |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for name in ["fp8:e4m3", "fp4:e2m1", "fp8:e5m2"] {
        let f = MxFormat::new(name, 32).unwrap();
        let q = f.quantizer();
        for (m, k, n) in [
            (15680, 25, 6),
            (6, 15680, 25),
            (500, 3000, 16),
            (3920, 400, 6),
            (16, 2000, 150),
            (2000, 150, 16),
            (256, 256, 256),
        ] {
            let (xa, xb) = (values(m * k, 1), values(n * k, 2));
            let (tq, (a, b)) = time(|| {
                let a: Vec<MxVector> = xa.chunks(k).map(|r| q.quantize_vector(r)).collect();
                let b: Vec<MxVector> = xb.chunks(k).map(|c| q.quantize_vector(c)).collect();
                (a, b)
            });
            let (td, want) = time(|| {
                a.iter()
                    .flat_map(|r| b.iter().map(move |c| r.dot_f32(c)))
                    .collect::<Vec<f32>>()
            });
            let (tk, got) = time(|| matmul_f32(&a, &b));
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "{name} {m}x{k}x{n}: the kernel differs from dot_f32"
            );
            // The dense path: A stored m × k, B stored by columns (n × k), both f32.
            let (fa, fb): (Vec<f32>, Vec<f32>) = (
                xa.iter().map(|&x| x as f32).collect(),
                xb.iter().map(|&x| x as f32).collect(),
            );
            let (tdq, (da, db)) = time(|| {
                (
                    f.quantize_dense(&fa, m, k, Along::Rows),
                    f.quantize_dense(&fb, n, k, Along::Rows),
                )
            });
            let dense = f.dense_product_is_exact().then(|| {
                let (a_op, b_op) = (
                    Operand::stored(&da, m, k, false),
                    Operand::stored(&db, n, k, true),
                );
                time(|| matmul_dense(&f, a_op, b_op))
            });
            let macs = (m * k * n) as f64;
            let dense = match dense {
                Some((tm, got)) => {
                    // The values are those of f32 inputs: the definition of the same f32s.
                    let want = f32_definition(&q, (&fa, &fb), k);
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(g, w)| g.to_bits() == w.to_bits()),
                        "{name} {m}x{k}x{n}: the dense product differs from dot_f32"
                    );
                    format!("{:.3} | {:.1}", macs / tm / 1e9, td / tm)
                }
                None => "— (E5M2: `matmul_f32`) | —".into(),
            };
            println!(
                "| {name} | {m}×{k}×{n} | {:.1} | {:.3} | {:.3} | {:.1} | {:.1} | {dense} |",
                ((m + n) * k) as f64 / tq / 1e6,
                macs / td / 1e9,
                macs / tk / 1e9,
                td / tk,
                ((m + n) * k) as f64 / tdq / 1e6,
            );
        }
    }
}

/// `dot_f32` of every row of `a` and row of `b` (B by columns), each quantized from the f32s.
fn f32_definition(
    q: &lpgen_golden::mx::MxQuantizer,
    (a, b): (&[f32], &[f32]),
    k: usize,
) -> Vec<f32> {
    let vectors = |x: &[f32]| -> Vec<MxVector> {
        x.chunks(k)
            .map(|r| q.quantize_vector(&r.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()))
            .collect()
    };
    let (va, vb) = (vectors(a), vectors(b));
    va.iter()
        .flat_map(|r| vb.iter().map(move |c| r.dot_f32(c)))
        .collect()
}
