//! Time of the `local` transport's all_to_all for the stripes of a 1024 × 784 f32 gradient,
//! quantized to 1 bit and plain, K threads (`docs/decisions.md`):
//!
//! ```text
//! cargo run --release -p lpgen-comm --example local_bench -- 200
//! ```

use std::time::Instant;

use lpgen_comm::{local, partition, Transport};
use lpgen_golden::{onebit, Format, F32};

const ROWS: usize = 1024;
const COLS: usize = 784;

fn main() {
    let reps: u32 = std::env::args()
        .nth(1)
        .map_or(Ok(200), |a| a.parse())
        .unwrap_or_else(|_| {
            eprintln!("local_bench: error: the argument is the number of repetitions");
            std::process::exit(2)
        });
    for k in [2, 4] {
        let onebit =
            |j: usize| onebit::message_bytes(Format::F32(F32), ROWS, partition(COLS, k, j).len());
        let plain = |j: usize| 4 * ROWS * partition(COLS, k, j).len();
        let sizes: [(&str, &(dyn Fn(usize) -> usize + Sync)); 2] =
            [("1-bit", &onebit), ("f32", &plain)];
        for (name, bytes) in sizes {
            let times: Vec<f64> = std::thread::scope(|s| {
                let hs: Vec<_> = local(k)
                    .into_iter()
                    .map(|mut t| {
                        s.spawn(move || {
                            let start = Instant::now();
                            for _ in 0..reps {
                                let slices =
                                    (0..k).map(|j| vec![t.rank() as u8; bytes(j)]).collect();
                                t.all_to_all(slices).expect("local all_to_all");
                            }
                            start.elapsed().as_secs_f64() / reps as f64
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let worst = times.iter().cloned().fold(0.0, f64::max);
            let sent: usize = (0..k).filter(|&j| j != 0).map(bytes).sum();
            println!(
                "local K={k} {name}: {:.0} us per all_to_all ({sent} bytes sent by rank 0, {:.0} MB/s)",
                worst * 1e6,
                sent as f64 / worst / 1e6
            );
        }
    }
}
