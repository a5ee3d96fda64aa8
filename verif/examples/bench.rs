//! Co-simulation throughput (docs/perf.md): operations per second through Verilator for each
//! unit and MACs per second for 4×4 and 8×8 arrays of each PE kind, beside the golden
//! model's rate for the same work, and the rate of a full checked run (stimuli, RTL, golden,
//! comparison) of the 8×8 lns-kahan array.
//!
//! `cargo run --release -p lpgen-verif --example bench [-- --quick]`
//! Models are built on first use (about a minute for an 8×8 LNS array) and cached.

use std::hint::black_box;
use std::time::Instant;

use lpgen_golden::Family;
use lpgen_golden::{FixAcc, Format, Kahan, Quire};
use lpgen_hdl::{generate, Params, PeKind, Unit};
use lpgen_verif::drivers::{run_design, Pes};
use lpgen_verif::layout::{put_bits, Layout};
use lpgen_verif::rng::Rng;
use lpgen_verif::{Mode, Model, RunOptions, Toolchain};

/// CPU time of the calling thread in seconds (Linux `/proc/thread-self/schedstat`), so that
/// figures do not depend on what else the shared machine runs.
fn cpu_time() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(f64::NAN, |ns| ns as f64 / 1e9)
}

/// Runs `f` (which does `work` operations) repeatedly for at least `secs` of CPU time;
/// operations per CPU-second.
fn rate(secs: f64, work: u64, mut f: impl FnMut()) -> f64 {
    f();
    let start = cpu_time();
    let mut n = 0u64;
    while cpu_time() - start < secs {
        f();
        n += work;
    }
    n as f64 / (cpu_time() - start)
}

fn mega(x: f64) -> String {
    format!("{:8.2} M", x / 1e6)
}

/// Random rows for a unit: every input port random within its width, in_valid high.
fn random_rows(l: &Layout, n: usize, r: &mut Rng) -> Vec<u64> {
    let mut rows = vec![0u64; n * l.in_slots];
    for row in rows.chunks_mut(l.in_slots) {
        for p in l.ports.iter().filter(|p| p.input && p.name != "rst") {
            for k in 0..p.slots() {
                let w = (p.width - 64 * k as u32).min(64);
                row[p.slot + k] = r.next_u64() & lpgen_verif::layout::mask(w);
            }
        }
        row[l.slot("in_valid").unwrap()] = 1;
    }
    rows
}

fn unit_bench(tc: &Toolchain, secs: f64, unit: Unit, fmt: &str) {
    if !selected(unit.name()) {
        return;
    }
    let f: Format = fmt.parse().unwrap();
    let p = Params::new(unit, f);
    let d = generate(&p).unwrap();
    let l = Layout::from_manifest(&d.manifest).unwrap();
    let mut m = tc.model(&d.verilog, &l, false).unwrap();
    let n = 1 << 16;
    let mut r = Rng(1);
    let rows = random_rows(&l, n, &mut r);
    let mut outs = vec![0u64; n * l.out_slots];
    let rtl = rate(secs, n as u64, || m.run(&rows, &mut outs));
    let (a, b) = (l.slot("a").unwrap(), l.slot("b").unwrap());
    let ops: Vec<(u64, u64, u64)> = rows
        .chunks(l.in_slots)
        .map(|row| (row[a], row[b], row.get(2 + 2).copied().unwrap_or(0) & 3))
        .collect();
    let golden = match f {
        Format::Lns(lf) => {
            let g = lf.ctx();
            match unit {
                Unit::LnsMul => rate(secs, n as u64, || {
                    for &(x, y, _) in &ops {
                        black_box(g.mul(x, y));
                    }
                }),
                Unit::LnsAdd => rate(secs, n as u64, || {
                    for &(x, y, _) in &ops {
                        black_box(g.add(x, y));
                    }
                }),
                _ => rate(secs, n as u64, || {
                    let mut k = Kahan::new(&g);
                    for &(x, y, _) in &ops {
                        k.add(&g, g.mul(x, y));
                    }
                    black_box(k.sum);
                }),
            }
        }
        Format::Posit(pf) => match unit {
            Unit::PositAdd => rate(secs, n as u64, || {
                for &(x, y, _) in &ops {
                    black_box(pf.add(x, y));
                }
            }),
            Unit::PositMul => rate(secs, n as u64, || {
                for &(x, y, _) in &ops {
                    black_box(pf.mul(x, y));
                }
            }),
            _ => rate(secs, n as u64, || {
                // The MAC reads the quire out after every step, as the unit does.
                let mut q = Quire::new(pf);
                for &(x, y, _) in &ops {
                    q.fma(x, y, false);
                    black_box(q.to_word());
                }
            }),
        },
        Format::Fix(xf) => rate(secs, n as u64, || {
            let mut acc = FixAcc::new(xf);
            for &(x, y, _) in &ops {
                acc.add_product(x, y);
                black_box(acc.to_word());
            }
        }),
        Format::F32(_) | Format::Dfix(_) | Format::Float(_) | Format::Takum(_) => {
            unreachable!("the bench runs lns, posit and fix units")
        }
    };
    println!(
        "| {:<9} | {:<10} | {} ops/s | {} ops/s |",
        unit.name(),
        fmt,
        mega(rtl),
        mega(golden)
    );
}

fn array_bench(tc: &Toolchain, secs: f64, fmt: &str, pe: PeKind, n: u32) {
    if !selected(&format!("{n}x{n}-{}", pe.name())) {
        return;
    }
    let mut p = Params::new(Unit::Array, fmt.parse().unwrap());
    (p.rows, p.cols, p.pe) = (n, n, pe);
    let t0 = Instant::now();
    let d = generate(&p).unwrap();
    let l = Layout::from_manifest(&d.manifest).unwrap();
    let mut m = tc.model(&d.verilog, &l, false).unwrap();
    let built = t0.elapsed().as_secs_f64();
    // One tile of K = 256 steps per FFI call, back to back (clear on k = 0, last on K−1).
    let k = 256usize;
    let w = p.format.width();
    let mut r = Rng(2);
    let calc = p.format.calc();
    let word = |r: &mut Rng| calc.from_f64((r.below(2000) as f64 - 1000.0) / 700.0);
    let a: Vec<Vec<u64>> = (0..k)
        .map(|_| (0..n).map(|_| word(&mut r)).collect())
        .collect();
    let b: Vec<Vec<u64>> = (0..k)
        .map(|_| (0..n).map(|_| word(&mut r)).collect())
        .collect();
    let mut rows = vec![0u64; k * l.in_slots];
    let (sa, sb) = (l.slot("a_in").unwrap(), l.slot("b_in").unwrap());
    let (sv, sc, sl) = (
        l.slot("in_valid").unwrap(),
        l.slot("clear").unwrap(),
        l.slot("last").unwrap(),
    );
    for (kk, row) in rows.chunks_mut(l.in_slots).enumerate() {
        for i in 0..n as usize {
            put_bits(&mut row[sa..], i * w as usize, w, a[kk][i]);
            put_bits(&mut row[sb..], i * w as usize, w, b[kk][i]);
        }
        row[sv] = 1;
        row[sc] = (kk == 0) as u64;
        row[sl] = (kk + 1 == k) as u64;
    }
    let mut outs = vec![0u64; k * l.out_slots];
    let macs = (k as u64) * u64::from(n * n);
    let rtl = rate(secs, macs, || m.run(&rows, &mut outs));
    let mut pes = Pes::new(&p).unwrap();
    let golden = rate(secs, macs, || {
        for kk in 0..k {
            pes.step(&a[kk], &b[kk], kk == 0);
        }
        black_box(pes.word(0));
    });
    // Both cores: an instance per thread, each streaming its own tiles (wall-clock rate).
    let so = tc.shared_object(&d.verilog, &l, false).unwrap();
    let wall = Instant::now();
    let done: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (so, l, rows) = (&so, &l, &rows);
                s.spawn(move || {
                    let mut m = Model::load(so, l, None).unwrap();
                    let mut outs = vec![0u64; k * l.out_slots];
                    let mut n = 0;
                    while wall.elapsed().as_secs_f64() < secs {
                        m.run(rows, &mut outs);
                        n += macs;
                    }
                    n
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let two = done as f64 / wall.elapsed().as_secs_f64();
    println!(
        "| {n}×{n} {:<11} | {:<10} | {} MAC/s | {} MAC/s | {} MAC/s | {built:.0} s |",
        pe.name(),
        fmt,
        mega(rtl),
        mega(two),
        mega(golden)
    );
}

/// `--only SUBSTR`: only the benchmarks whose name (unit, or `8x8-lns-kahan`) contains it.
fn selected(name: &str) -> bool {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--only") {
        Some(i) => args.get(i + 1).is_some_and(|s| name.contains(s.as_str())),
        None => true,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let secs = if quick { 0.3 } else { 2.0 };
    let tc = match Toolchain::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "{}, models compiled by {} (stages 0; build time includes a cache hit when cached)\n",
        tc.version, tc.cxx_version
    );
    println!(
        "| unit | format | Verilator (CPU time) | golden (CPU time) |\n| --- | --- | ---: | ---: |"
    );
    for (u, f) in [
        (Unit::LnsMul, "lns:5:6"),
        (Unit::LnsAdd, "lns:5:6"),
        (Unit::LnsKahan, "lns:5:6"),
        (Unit::PositAdd, "posit:16:1"),
        (Unit::PositMul, "posit:16:1"),
        (Unit::PositMac, "posit:16:1"),
        (Unit::FixMac, "fix:7:8"),
    ] {
        unit_bench(&tc, secs, u, f);
    }
    println!(
        "\n| array | format | Verilator, 1 thread (CPU time) | Verilator, 2 threads (wall) | golden | build |\n\
         | --- | --- | ---: | ---: | ---: | ---: |"
    );
    for n in [4, 8] {
        for (f, pe) in [
            ("lns:5:6", PeKind::LnsKahan),
            ("lns:5:6", PeKind::LnsPlain),
            ("posit:16:1", PeKind::PositQuire),
            ("fix:7:8", PeKind::Fix),
        ] {
            array_bench(&tc, secs, f, pe, n);
        }
    }
    // A full checked run: stimuli, RTL, golden model and comparison of every word.
    if !selected("checked") {
        return;
    }
    let mut p = Params::new(Unit::Array, "lns:5:6".parse().unwrap());
    (p.rows, p.cols, p.pe) = (8, 8, PeKind::LnsKahan);
    let d = generate(&p).unwrap();
    let cycles = if quick { 50_000 } else { 400_000 };
    let (t, c) = (Instant::now(), cpu_time());
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(cycles), 3)).unwrap();
    let (s, cs) = (t.elapsed().as_secs_f64(), cpu_time() - c);
    println!(
        "\nchecked cosim, 8×8 lns-kahan lns:5:6 (random tiles, bubbles): {} cycles in {s:.2} s wall, {cs:.2} s CPU \
         = {} cycles/s, {} MAC/s (CPU time); {} passed, {} failed",
        r.cycles,
        mega(r.cycles as f64 / cs),
        mega(r.cycles as f64 * 64.0 / cs),
        r.passed,
        r.failed
    );
}
