//! The MPI transport's smoke test and latency probe (`docs/dist.md`):
//!
//! ```text
//! cargo build -p lpgen-comm --features mpi --example mpi_smoke
//! mpirun -np 2 target/debug/examples/mpi_smoke                 # collectives, checked
//! mpirun -np 2 target/debug/examples/mpi_smoke --bench 200     # time of a 1-bit exchange
//! mpirun -np 2 target/debug/examples/mpi_smoke --fingerprint lr=0.$OMPI_COMM_WORLD_RANK  # refused
//! mpirun -np 2 target/debug/examples/mpi_smoke --stall-rank 1 --timeout-ms 500        # timeout
//! mpirun -np 2 target/debug/examples/mpi_smoke --die-rank 1                           # a crash
//! ```
//!
//! Exit status 0 when every check passed, 2 with one line on stderr otherwise.

use std::time::{Duration, Instant};

use lpgen_comm::{partition, CommError, Transport};
use lpgen_golden::{onebit, Format, F32};

/// The first layer of a 784-1024 MLP: W is 1024 × 784, so 784 columns of 1024 rows.
const ROWS: usize = 1024;
const COLS: usize = 784;

struct Options {
    bench: usize,
    fingerprint: String,
    timeout: Duration,
    stall_rank: Option<usize>,
    die_rank: Option<usize>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        bench: 0,
        fingerprint: String::new(),
        timeout: lpgen_comm::DEFAULT_TIMEOUT,
        stall_rank: None,
        die_rank: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        let number = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{a} {v:?}: not a number"))
        };
        match a.as_str() {
            "--bench" => o.bench = number(value()?)? as usize,
            "--fingerprint" => o.fingerprint = value()?,
            "--timeout-ms" => o.timeout = Duration::from_millis(number(value()?)?),
            "--stall-rank" => o.stall_rank = Some(number(value()?)? as usize),
            "--die-rank" => o.die_rank = Some(number(value()?)? as usize),
            _ => return Err(format!("unknown option {a:?} (see the example's header)")),
        }
    }
    Ok(o)
}

/// Slice j of rank i: (i + 1)·(j + 1) bytes, byte k = i·31 + j·7 + k (mod 256).
fn slice(i: usize, j: usize) -> Vec<u8> {
    (0..(i + 1) * (j + 1))
        .map(|k| (i * 31 + j * 7 + k) as u8)
        .collect()
}

fn check(what: &str, ok: bool) -> Result<(), CommError> {
    if ok {
        Ok(())
    } else {
        Err(CommError(format!("{what} returned wrong contents")))
    }
}

fn smoke(t: &mut lpgen_comm::mpi::MpiTransport, o: &Options) -> Result<String, CommError> {
    let (me, k) = (t.rank(), t.size());
    t.agree(&format!("smoke=1 {}", o.fingerprint))?;
    if o.die_rank == Some(me) {
        std::process::abort(); // a crash: no MPI_Finalize, killed by SIGABRT
    }
    if o.stall_rank == Some(me) {
        std::thread::sleep(o.timeout * 3);
        return Ok("stalled".into());
    }
    let got = t.all_to_all((0..k).map(|j| slice(me, j)).collect())?;
    check("all_to_all", (0..k).all(|i| got[i] == slice(i, me)))?;
    let all = t.all_gather(slice(me, me))?;
    check("all_gather", (0..k).all(|i| all[i] == slice(i, i)))?;
    let b = t.broadcast(k - 1, slice(k - 1, 0))?;
    check("broadcast", b == slice(k - 1, 0))?;
    t.barrier()?;
    if o.bench == 0 {
        let c = t.counters();
        let digest = aggregation_digest(t)?;
        return Ok(format!(
            "rank {me} of {k} ok (sent {} bytes, received {}), 1-bit aggregation {digest:#018x}",
            c.sent, c.received
        ));
    }
    // Each rank's whole gradient, stripe j to rank j as in training: quantized to 1 bit, and
    // as plain f32 for comparison.
    let onebit =
        |j: usize| onebit::message_bytes(Format::F32(F32), ROWS, partition(COLS, k, j).len());
    let plain = |j: usize| 4 * ROWS * partition(COLS, k, j).len();
    let mut lines = Vec::new();
    let one_byte = |_: usize| 1;
    let sizes: [(&str, &dyn Fn(usize) -> usize); 3] =
        [("1 byte", &one_byte), ("1-bit", &onebit), ("f32", &plain)];
    for (name, bytes) in sizes {
        let before = t.counters();
        let start = Instant::now();
        let mut got = Vec::new();
        for _ in 0..o.bench {
            got = t.all_to_all((0..k).map(|j| vec![me as u8; bytes(j)]).collect())?;
        }
        let each = start.elapsed() / o.bench as u32;
        // Checked outside the timing (an unoptimised loop over the bytes would dominate it).
        let whole =
            |(i, d): (usize, &Vec<u8>)| d.len() == bytes(me) && d.iter().all(|&b| b == i as u8);
        check("all_to_all", got.iter().enumerate().all(whole))?;
        let sent = (t.counters().sent - before.sent) / o.bench as u64;
        lines.push(format!(
            "{name} {:.0} us ({sent} bytes sent)",
            each.as_secs_f64() * 1e6
        ));
    }
    if k == 2 {
        // The floor: MPI's own blocking MPI_Sendrecv of the same 1-bit stripe (no deadline).
        use lpgen_comm::mpi::rsmpi::point_to_point::send_receive_into;
        use lpgen_comm::mpi::rsmpi::topology::Communicator;
        let peer = t.world().process_at_rank(1 - me as i32);
        let (out, mut back) = (vec![me as u8; onebit(1 - me)], vec![0u8; onebit(me)]);
        let start = Instant::now();
        for _ in 0..o.bench {
            send_receive_into(&out[..], &peer, &mut back[..], &peer);
        }
        let each = start.elapsed() / o.bench as u32;
        lines.push(format!(
            "1-bit by blocking MPI_Sendrecv {:.0} us",
            each.as_secs_f64() * 1e6
        ));
    }
    Ok(format!(
        "rank {me} of {k}: all_to_all of the stripes of a {ROWS} x {COLS} f32 gradient, mean of \
         {}: {}",
        o.bench,
        lines.join(", ")
    ))
}

/// Seed 001's two steps (`lpgen_comm::exchange`) on a deterministic f32 gradient per rank, with
/// error feedback; the FNV-1a digest of the resulting words. `tests/mpi.rs` computes the same
/// with the local transport: the two transports must agree to the bit.
pub fn aggregation_digest(t: &mut impl Transport) -> Result<u64, CommError> {
    use lpgen_comm::exchange::{all_gather_1bit, reduce_scatter_1bit};
    use lpgen_golden::onebit::Quantizer;
    use lpgen_golden::SumMode;
    let (rows, cols) = (37, 10);
    let q = Quantizer::new(Format::F32(F32), SumMode::Kahan).expect("f32 sums by Kahan");
    let c = *q.calc();
    let g: Vec<u64> = (0..rows * cols)
        .map(|e| c.from_f64(((e * 37 + t.rank() * 101) % 199) as f64 / 50.0 - 2.0))
        .collect();
    let mut residual = vec![c.zero(); g.len()];
    let (_, sum) = reduce_scatter_1bit(t, &q, &g, rows, cols, Some(&mut residual))?;
    let mut server = vec![c.zero(); sum.len()];
    let whole = all_gather_1bit(t, &q, &sum, rows, cols, Some(&mut server))?;
    Ok(whole
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf29ce484222325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        }))
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mpi_smoke: error: {e}");
            std::process::exit(2);
        }
    };
    let mut t = match lpgen_comm::mpi::init_with_timeout(o.timeout) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mpi_smoke: error: {e}");
            std::process::exit(2);
        }
    };
    match smoke(&mut t, &o) {
        Ok(line) => {
            println!("mpi_smoke: {line}");
            drop(t);
        }
        Err(e) => {
            eprintln!("mpi_smoke: error: rank {}: {e}", t.rank());
            drop(t); // after a failed collective this aborts the job (MPI_Abort, status 2)
            std::process::exit(2);
        }
    }
}
