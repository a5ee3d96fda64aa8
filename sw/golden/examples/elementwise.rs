//! Throughput of the elementwise float kernels (`kernel::elementwise`), one thread, 10^6
//! elements: `cargo run --release -p lpgen-golden --example elementwise`.

use std::time::Instant;

use lpgen_golden::kernel::elementwise::{ElemOp, FloatKernel};
use lpgen_golden::Format;

fn median(mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..11)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[5]
}

fn main() {
    let n = 1_000_000;
    let mut s = 0x1234_5678_9abc_def0u64;
    let xs: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 8.0
        })
        .collect();
    for spec in ["bf16", "f16", "fp8:e4m3", "fp8:e5m2"] {
        let Ok(Format::Float(f)) = spec.parse::<Format>() else {
            unreachable!()
        };
        let k = FloatKernel::of(f).expect("a kernel");
        let mut w = vec![0u16; n];
        let mut v = vec![0.0; n];
        let mut o = vec![0u16; n];
        let enc = median(|| k.encode(&xs, &mut w));
        let dec = median(|| k.decode(&w, &mut v));
        let q = median(|| k.quantize(&xs, &mut v));
        let add = median(|| k.binop(ElemOp::Add, &w, &w, &mut o));
        let mul = median(|| k.binop(ElemOp::Mul, &w, &w, &mut o));
        println!("{spec}: ms per 10^6: encode {enc:.2} decode {dec:.2} quantize {q:.2} add {add:.2} mul {mul:.2}");
    }
}
