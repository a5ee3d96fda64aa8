//! Throughput of the golden model on one core, side by side with the `softposit` crate (and,
//! for bf16 and f16, with the `half` crate: `cases/float.rs`).
//!
//! ```text
//! cargo bench -p lpgen-golden --bench golden             # 7 rounds of >= 100 ms each
//! cargo bench -p lpgen-golden --bench golden -- --quick  # 3 rounds of >= 20 ms each
//! cargo bench -p lpgen-golden --bench golden -- lns "16:1 add"  # only lines matching
//! ```
//!
//! Every operation runs over the same random operand arrays (4096 pairs of nonzero, non-NaR
//! words from normally distributed reals). Each measurement is repeated; the table gives the
//! median rate and the median of the per-round ratios ours/softposit. Within a round the two
//! sides alternate in short slices, so they see the same machine noise and it cancels in the
//! ratio. The "spread" column is (max - min) / median of those per-round ratios (or of our
//! rate where softposit has no counterpart). Times are the thread's CPU time (on Linux), so
//! that other processes on a shared machine mostly slow the run down rather than skew it.
//!
//! The posit and LNS contexts pass through `black_box` once: the golden model is
//! runtime-parametric, so the compiler must not specialise it for a constant format.
//! softposit's types are fixed at compile time, as that crate is meant to be used.

use std::hint::black_box;
use std::ops::{Add, Div, Mul};
use std::time::Duration;
#[cfg(not(target_os = "linux"))]
use std::time::Instant;

use lpgen_golden::posit::{PositFormat, PositStandard, Quire};
use lpgen_golden::sum::kahan_dot;
use lpgen_golden::Family;
use lpgen_golden::{FloatFormat, Lns, LnsFormat};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use softposit::{Quire as SpQuire, P16E1, P32E2, P8E0, Q16E1, Q32E2, Q8E0};

#[path = "cases/float.rs"]
mod float;

/// Operand pairs per array.
const PAIRS: usize = 4096;
/// Length of one dot product.
const DOT_LEN: usize = 1024;

/// Each round interleaves ours and softposit in this many slices.
const SLICES: u64 = 8;

/// Target: posit add and mul at least this fraction of softposit's throughput.
const POSIT_RATIO_TARGET: f64 = 0.8;
/// Target: lns:5:6 Kahan dot product, in multiply-accumulates per second.
const LNS_KAHAN_TARGET: f64 = 50e6;

/// How long and how often each side is measured.
struct Plan {
    rounds: usize,
    min_time: Duration,
}

/// One side of a measurement: a pass over the operand arrays, returning a checksum of its
/// results, and how many operations (or MACs) one pass performs.
struct Kernel<'a> {
    pass: Box<dyn FnMut() -> u64 + 'a>,
    work: usize,
}

impl<'a> Kernel<'a> {
    /// `op` applied to every pair, results folded into the checksum.
    fn binop(a: &'a [u64], b: &'a [u64], op: impl Fn(u64, u64) -> u64 + 'a) -> Self {
        Kernel {
            pass: Box::new(move || {
                let (a, b) = black_box((a, b));
                a.iter()
                    .zip(b)
                    .fold(0u64, |acc, (&x, &y)| acc.rotate_left(1) ^ op(x, y))
            }),
            work: a.len(),
        }
    }

    /// `dot` applied to consecutive chunks of `DOT_LEN` pairs.
    fn dot(a: &'a [u64], b: &'a [u64], dot: impl Fn(&[u64], &[u64]) -> u64 + 'a) -> Self {
        Kernel {
            pass: Box::new(move || {
                let (a, b) = black_box((a, b));
                a.chunks_exact(DOT_LEN)
                    .zip(b.chunks_exact(DOT_LEN))
                    .fold(0u64, |acc, (x, y)| acc.rotate_left(1) ^ dot(x, y))
            }),
            work: a.len() / DOT_LEN * DOT_LEN,
        }
    }
}

/// One line of the table.
struct Case<'a> {
    format: &'static str,
    op: &'static str,
    unit: &'static str,
    ours: Kernel<'a>,
    softposit: Option<Kernel<'a>>,
}

/// The measured figures of one line.
struct Row {
    format: &'static str,
    op: &'static str,
    unit: &'static str,
    /// Median rate, in millions per second.
    ours: f64,
    softposit: Option<f64>,
    /// Median of the per-round ratios ours/softposit.
    ratio: Option<f64>,
    spread: f64,
    /// Checksums of one pass's results, ours and softposit's.
    check: u64,
    check_sp: Option<u64>,
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn spread(xs: &[f64]) -> f64 {
    let max = xs.iter().copied().fold(f64::MIN, f64::max);
    let min = xs.iter().copied().fold(f64::MAX, f64::min);
    (max - min) / median(xs)
}

/// Passes per sample so that one sample lasts at least `min_time` (also warms up).
fn calibrate(k: &mut Kernel, min_time: Duration) -> u64 {
    let mut passes = 1u64;
    loop {
        let mut dt = Duration::ZERO;
        run(k, passes, &mut dt);
        if dt >= min_time / 4 {
            let per_pass = dt.as_secs_f64() / passes as f64;
            return (min_time.as_secs_f64() / per_pass).ceil().max(1.0) as u64;
        }
        passes *= 2;
    }
}

/// CPU time of this thread: on a shared machine, time while descheduled for another process
/// does not count against whoever happened to be measured.
#[cfg(target_os = "linux")]
fn cpu_time() -> Duration {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec (64-bit Linux layout).
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Elsewhere, wall-clock time since the first call.
#[cfg(not(target_os = "linux"))]
fn cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// Runs `passes` passes, adding the time taken to `time`.
fn run(k: &mut Kernel, passes: u64, time: &mut Duration) {
    let t = cpu_time();
    for _ in 0..passes {
        black_box((k.pass)());
    }
    *time += cpu_time() - t;
}

/// Operations per second, in millions.
fn rate(k: &Kernel, passes: u64, time: Duration) -> f64 {
    (passes as f64 * k.work as f64) / time.as_secs_f64() / 1e6
}

fn measure(mut case: Case, plan: &Plan) -> Row {
    // The results of one pass, for the checksums (also a first warm-up).
    let check = (case.ours.pass)();
    let check_sp = case.softposit.as_mut().map(|k| (k.pass)());
    // Passes per slice: each side runs `SLICES` slices per round, at least `min_time` in all.
    let per_slice = |n: u64| n.div_ceil(SLICES);
    let n_ours = per_slice(calibrate(&mut case.ours, plan.min_time));
    let n_sp = case
        .softposit
        .as_mut()
        .map(|k| per_slice(calibrate(k, plan.min_time)));
    let (mut ours, mut sp, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..plan.rounds {
        let (mut t_ours, mut t_sp) = (Duration::ZERO, Duration::ZERO);
        for slice in 0..SLICES {
            match (case.softposit.as_mut(), n_sp) {
                // Alternate which side goes first, so that both see the same mix of noise.
                (Some(k), Some(n_sp)) if slice % 2 == 0 => {
                    run(&mut case.ours, n_ours, &mut t_ours);
                    run(k, n_sp, &mut t_sp);
                }
                (Some(k), Some(n_sp)) => {
                    run(k, n_sp, &mut t_sp);
                    run(&mut case.ours, n_ours, &mut t_ours);
                }
                _ => run(&mut case.ours, n_ours, &mut t_ours),
            }
        }
        let o = rate(&case.ours, n_ours * SLICES, t_ours);
        ours.push(o);
        if let (Some(k), Some(n_sp)) = (case.softposit.as_ref(), n_sp) {
            let s = rate(k, n_sp * SLICES, t_sp);
            sp.push(s);
            ratios.push(o / s);
        }
    }
    Row {
        format: case.format,
        op: case.op,
        unit: case.unit,
        ours: median(&ours),
        softposit: (!sp.is_empty()).then(|| median(&sp)),
        ratio: (!ratios.is_empty()).then(|| median(&ratios)),
        spread: spread(if ratios.is_empty() { &ours } else { &ratios }),
        check,
        check_sp,
    }
}

fn print_header() {
    println!(
        "{:<11} {:<14} {:<7} {:>10} {:>10} {:>7} {:>7}",
        "format", "op", "unit", "ours", "reference", "ratio", "spread"
    );
    println!("{}", "-".repeat(72));
}

fn print_row(r: &Row) {
    let opt = |x: Option<f64>, prec: usize| match x {
        Some(v) => format!("{v:.prec$}"),
        None => "-".into(),
    };
    println!(
        "{:<11} {:<14} {:<7} {:>10.1} {:>10} {:>7} {:>6.0}%",
        r.format,
        r.op,
        r.unit,
        r.ours,
        opt(r.softposit, 1),
        opt(r.ratio, 2),
        r.spread * 100.0
    );
}

/// Roughly normal(0, 1) reals (Box-Muller), never zero.
fn normals(rng: &mut Pcg64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
            let u2: f64 = rng.gen();
            let x = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            if x == 0.0 {
                1.0
            } else {
                x
            }
        })
        .collect()
}

/// Operand arrays `a`, `b` of a posit format.
fn posit_operands(fmt: PositFormat, rng: &mut Pcg64) -> (Vec<u64>, Vec<u64>) {
    let conv = |xs: Vec<f64>| -> Vec<u64> {
        let v: Vec<u64> = xs.into_iter().map(|x| fmt.from_f64(x)).collect();
        assert!(v.iter().all(|&p| p != 0 && p != fmt.nar()));
        v
    };
    (conv(normals(rng, PAIRS)), conv(normals(rng, PAIRS)))
}

/// A softposit type, as far as this benchmark needs it: conversion from our words, the
/// operators, and its quire.
trait SpPosit: Copy + Add<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    type Quire: SpQuire<Self>;
    fn from_word(w: u64) -> Self;
    fn to_word(self) -> u64;
}

macro_rules! sp_posit {
    ($($P:ty, $Q:ty, $W:ty;)*) => {$(
        impl SpPosit for $P {
            type Quire = $Q;
            #[inline(always)]
            fn from_word(w: u64) -> Self {
                <$P>::from_bits(w as $W)
            }
            #[inline(always)]
            fn to_word(self) -> u64 {
                self.to_bits() as u64
            }
        }
    )*};
}

sp_posit! {
    P8E0, Q8E0, u8;
    P16E1, Q16E1, u16;
    P32E2, Q32E2, u32;
}

/// A line comparing `ours` with softposit's `sp` on the operands; notes in `checks` whether
/// both compute the same words, i.e. measure the same work.
fn posit_binop<'a, P: SpPosit + 'a>(
    format: &'static str,
    op: &'static str,
    ab: (&'a [u64], &'a [u64]),
    ours: impl Fn(u64, u64) -> u64 + Copy + 'a,
    sp: impl Fn(P, P) -> P + Copy + 'a,
    checks: &mut Vec<String>,
) -> Case<'a> {
    let sp = move |x: u64, y: u64| sp(P::from_word(x), P::from_word(y)).to_word();
    word_binop(format, op, ab, ours, sp, checks)
}

/// A line comparing two word-level operations on the same operands.
fn word_binop<'a>(
    format: &'static str,
    op: &'static str,
    (a, b): (&'a [u64], &'a [u64]),
    ours: impl Fn(u64, u64) -> u64 + Copy + 'a,
    sp: impl Fn(u64, u64) -> u64 + Copy + 'a,
    checks: &mut Vec<String>,
) -> Case<'a> {
    let bad = a.iter().zip(b).filter(|&(&x, &y)| ours(x, y) != sp(x, y));
    checks.push(format!(
        "{format} {op}: {} of {} results differ",
        bad.count(),
        a.len()
    ));
    Case {
        format,
        op,
        unit: "Mops/s",
        ours: Kernel::binop(a, b, ours),
        softposit: Some(Kernel::binop(a, b, sp)),
    }
}

/// The add, mul, div and quire-dot lines of one posit format, ours against softposit's `P`.
fn posit_cases<'a, P: SpPosit + 'a>(
    format: &'static str,
    fmt: PositFormat,
    (a, b): (&'a [u64], &'a [u64]),
    checks: &mut Vec<String>,
) -> Vec<Case<'a>> {
    let fmt = black_box(fmt);
    let ab = (a, b);
    let mut cases = vec![
        posit_binop(format, "add", ab, move |x, y| fmt.add(x, y), P::add, checks),
        posit_binop(format, "mul", ab, move |x, y| fmt.mul(x, y), P::mul, checks),
        posit_binop(format, "div", ab, move |x, y| fmt.div(x, y), P::div, checks),
    ];
    let ours_dot = move |x: &[u64], y: &[u64]| {
        let mut q = Quire::new(fmt);
        for (&u, &v) in x.iter().zip(y) {
            q.add_product(u, v);
        }
        q.to_word()
    };
    let sp_dot = |x: &[u64], y: &[u64]| {
        let mut q = P::Quire::init();
        for (&u, &v) in x.iter().zip(y) {
            q.add_product(P::from_word(u), P::from_word(v));
        }
        q.to_posit().to_word()
    };
    let chunks = || a.chunks_exact(DOT_LEN).zip(b.chunks_exact(DOT_LEN));
    let bad = chunks().filter(|(x, y)| ours_dot(x, y) != sp_dot(x, y));
    checks.push(format!(
        "{format} quire dot: {} of {} results differ",
        bad.count(),
        chunks().count()
    ));
    cases.push(Case {
        format,
        op: "quire dot1024",
        unit: "MMAC/s",
        ours: Kernel::dot(a, b, ours_dot),
        softposit: Some(Kernel::dot(a, b, sp_dot)),
    });
    cases
}

/// Each target beside its measured figure.
fn print_targets(rows: &[Row]) {
    println!();
    println!("Targets:");
    let mut all_met = true;
    for r in rows {
        // The target is on softposit's own formats; the :u lines show the generic path.
        let standard = !r.format.ends_with(":u");
        if r.format.starts_with("posit") && standard && (r.op == "add" || r.op == "mul") {
            let ratio = r.ratio.expect("posit rows have a softposit column");
            let met = ratio >= POSIT_RATIO_TARGET;
            all_met &= met;
            println!(
                "  {:<11} {:<3} ours/softposit >= {POSIT_RATIO_TARGET:.2}: {ratio:.3}  {}",
                r.format,
                r.op,
                if met { "met" } else { "NOT MET" }
            );
        }
        if r.format == "lns:5:6" && r.op == "kahan dot1024" {
            let rate = r.ours * 1e6;
            let met = rate >= LNS_KAHAN_TARGET;
            all_met &= met;
            println!(
                "  lns:5:6     kahan dot1024 >= {:.0} M MAC/s: {:.1} M MAC/s  {}",
                LNS_KAHAN_TARGET / 1e6,
                r.ours,
                if met { "met" } else { "NOT MET" }
            );
        }
    }
    println!(
        "{}",
        if all_met {
            "All targets met."
        } else {
            "Some targets NOT met."
        }
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    // Other arguments select lines by substring of "format op" (cargo adds `--bench`).
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let plan = if quick {
        Plan {
            rounds: 3,
            min_time: Duration::from_millis(20),
        }
    } else {
        Plan {
            rounds: 7,
            min_time: Duration::from_millis(100),
        }
    };

    let mut rng = Pcg64::seed_from_u64(0x19e7_601d);
    let p8 = PositFormat::draft(8, 0);
    let p16 = PositFormat::draft(16, 1);
    let p32 = PositFormat::draft(32, 2);
    let (a8, b8) = posit_operands(p8, &mut rng);
    let (a16, b16) = posit_operands(p16, &mut rng);
    let (a32, b32) = posit_operands(p32, &mut rng);
    // The :u variants are not on the golden model's list of specialised formats, so they run
    // its runtime-parametric path; they differ from the standard formats only below minpos,
    // which these operands never reach (the checks below confirm identical results).
    let p16u = PositFormat::new(16, 1, PositStandard::Draft2017, true).unwrap();
    let p32u = PositFormat::new(32, 2, PositStandard::Draft2017, true).unwrap();

    let lns_fmt = LnsFormat::new(5, 6).unwrap();
    let lns: Lns = black_box(lns_fmt.ctx());
    let lns_conv = |xs: Vec<f64>| -> Vec<u64> {
        let v: Vec<u64> = xs.into_iter().map(|x| lns_fmt.from_f64(x)).collect();
        assert!(v.iter().all(|&w| !lns_fmt.is_zero(w) && !lns_fmt.is_nan(w)));
        v
    };
    let la = lns_conv(normals(&mut rng, PAIRS));
    let lb = lns_conv(normals(&mut rng, PAIRS));

    let bf = FloatFormat::new(8, 7, false, false, false).unwrap(); // bf16
    let hf = FloatFormat::new(5, 10, false, false, false).unwrap(); // f16
    let (ba, bb) = float::operands(bf, &mut rng);
    let (ha, hb) = float::operands(hf, &mut rng);

    let mut cases: Vec<Case> = vec![];
    let mut checks: Vec<String> = vec![];
    cases.extend(posit_cases::<P8E0>(
        "posit:8:0",
        p8,
        (&a8, &b8),
        &mut checks,
    ));
    cases.extend(posit_cases::<P16E1>(
        "posit:16:1",
        p16,
        (&a16, &b16),
        &mut checks,
    ));
    cases.extend(posit_cases::<P32E2>(
        "posit:32:2",
        p32,
        (&a32, &b32),
        &mut checks,
    ));
    for (name, fmt, ab) in [
        ("posit:16:1:u", p16u, (&a16[..], &b16[..])),
        ("posit:32:2:u", p32u, (&a32[..], &b32[..])),
    ] {
        let fmt = black_box(fmt);
        let add = move |x, y| fmt.add(x, y);
        let mul = move |x, y| fmt.mul(x, y);
        if name.starts_with("posit:16") {
            cases.push(posit_binop(name, "add", ab, add, P16E1::add, &mut checks));
            cases.push(posit_binop(name, "mul", ab, mul, P16E1::mul, &mut checks));
        } else {
            cases.push(posit_binop(name, "add", ab, add, P32E2::add, &mut checks));
            cases.push(posit_binop(name, "mul", ab, mul, P32E2::mul, &mut checks));
        }
    }
    cases.push(Case {
        format: "lns:5:6",
        op: "add",
        unit: "Mops/s",
        ours: Kernel::binop(&la, &lb, move |x, y| lns.add(x, y)),
        softposit: None,
    });
    cases.push(Case {
        format: "lns:5:6",
        op: "mul",
        unit: "Mops/s",
        ours: Kernel::binop(&la, &lb, move |x, y| lns.mul(x, y)),
        softposit: None,
    });
    cases.push(Case {
        format: "lns:5:6",
        op: "kahan dot1024",
        unit: "MMAC/s",
        ours: Kernel::dot(&la, &lb, move |x, y| kahan_dot(&lns, x, y)),
        softposit: None,
    });

    cases.extend(float::cases::<float::Bf16>(
        "bf16",
        bf,
        (&ba, &bb),
        &mut checks,
    ));
    cases.extend(float::cases::<float::F16>(
        "f16",
        hf,
        (&ha, &hb),
        &mut checks,
    ));

    println!(
        "lpgen-golden throughput, one core: {} rounds of >= {} ms CPU time per side, \
         {PAIRS} operand pairs, median shown",
        plan.rounds,
        plan.min_time.as_millis()
    );
    println!("Same results as softposit (and half) on the benchmark operands:");
    for c in &checks {
        println!("  {c}");
    }
    println!();
    print_header();
    let mut rows = vec![];
    let selected = cases.into_iter().filter(|c| {
        let name = format!("{} {}", c.format, c.op);
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    });
    for case in selected {
        let row = measure(case, &plan);
        print_row(&row);
        rows.push(row);
    }
    // Deterministic for a given selection of lines: an optimisation of the golden code must
    // leave it unchanged.
    let checksum = rows
        .iter()
        .fold(0u64, |acc, r| acc.rotate_left(7) ^ r.check);
    let agree = rows.iter().all(|r| r.check_sp.is_none_or(|c| c == r.check));
    println!(
        "checksum of our results {checksum:016x}; softposit's results {}",
        if agree { "agree" } else { "DIFFER" }
    );

    print_targets(&rows);
}
