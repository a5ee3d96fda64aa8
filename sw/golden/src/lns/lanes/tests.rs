//! The lanes against the split operations, the vector lanes against the portable ones.

use super::*;
use crate::Format;

fn lns(s: &str) -> Lns {
    match s.parse::<Format>().unwrap().calc() {
        crate::Calc::Lns(l) => l,
        _ => unreachable!(),
    }
}

/// Every sum, difference and product of two words of lns:3:3 and lns:4:4, random pairs
/// of lns:5:6, in the lanes' form equal `add_split` and `mul_split` (NaN aside).
#[test]
fn lane_operations_equal_the_split_operations() {
    let mut r = crate::test_words(5);
    for s in ["lns:3:3", "lns:4:4", "lns:5:6", "lns:2:8"] {
        let l = lns(s);
        let x = l.lanes();
        let mask = (1u64 << l.fmt.width()) - 1;
        let pairs: Vec<(Bits, Bits)> = if l.fmt.width() <= 10 {
            (0..=mask)
                .flat_map(|a| (0..=mask).map(move |b| (a, b)))
                .collect()
        } else {
            (0..300_000).map(|_| (r() & mask, r() & mask)).collect()
        };
        for (a, b) in pairs {
            if l.fmt.is_nan(a) || l.fmt.is_nan(b) {
                continue;
            }
            let (p, q) = (x.load(a), x.load(b));
            assert_eq!(
                x.store(x.add(p, q)),
                crate::family_trait::Family::add(&l, a, b),
                "{s} {a:#x}+{b:#x}"
            );
            assert_eq!(
                x.store(x.sub(p, q)),
                crate::family_trait::Family::sub(&l, a, b),
                "{s} {a:#x}-{b:#x}"
            );
            assert_eq!(
                x.store(x.mul(p, q)),
                crate::family_trait::Family::mul(&l, a, b),
                "{s} {a:#x}·{b:#x}"
            );
        }
    }
}

/// Whole lanes of +, − and · (`LnsLanes::binop_words`, where the machine has AVX-512 or AVX2) equal
/// the family's operations word by word: every pair of words of lns:3:3 and lns:4:4 (NaN
/// included), random ones of lns:5:6 and lns:2:8, over lengths that end a block and a vector
/// short; `Max` is left to the caller.
#[test]
fn lanes_of_words_equal_the_family_operations() {
    use crate::family_trait::Family;
    let mut r = crate::test_words(11);
    for s in ["lns:3:3", "lns:4:4", "lns:5:6", "lns:2:8"] {
        let l = lns(s);
        let mask = (1u64 << l.fmt.width()) - 1;
        let (a, b): (Vec<Bits>, Vec<Bits>) = if l.fmt.width() <= 9 {
            (0..=mask)
                .flat_map(|a| (0..=mask).map(move |b| (a, b)))
                .unzip()
        } else {
            (0..2_500).map(|_| (r() & mask, r() & mask)).unzip()
        };
        assert!(!l
            .lanes()
            .binop_words(AluOp::Max, &a, &b, &mut vec![0; a.len()]));
        // With two fraction bits kept (`--keep-bits 2`): each result cleared as
        // `Lns::clear_low_bits` clears it.
        let mut kept = vec![0; a.len()];
        if l.lanes_keeping(2)
            .binop_words(AluOp::Add, &a, &b, &mut kept)
        {
            for i in 0..a.len() {
                let want = l.clear_low_bits(<Lns as Family>::add(&l, a[i], b[i]), 2);
                assert_eq!(kept[i], want, "{s} keeping 2: {:#x}+{:#x}", a[i], b[i]);
            }
        }
        // The AVX2 form on working values (what `binop_words` takes without AVX-512), with
        // every bit kept and two fraction bits kept, against the lanes' scalar operations.
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            for lanes in [l.lanes(), l.lanes_keeping(2)] {
                let value = |w: Bits| if l.fmt.is_nan(w) { 0 } else { lanes.load(w) };
                let x: Vec<i32> = a.iter().map(|&w| value(w)).collect();
                let y: Vec<i32> = b.iter().map(|&w| value(w)).collect();
                for op in [AluOp::Add, AluOp::Sub, AluOp::Mul] {
                    let mut got = vec![0; x.len()];
                    // SAFETY: the CPU has AVX2.
                    unsafe { avx2::binop(&lanes, op, &x, &y, &mut got) };
                    for i in 0..x.len() / 8 * 8 {
                        let want = match op {
                            AluOp::Add => lanes.add(x[i], y[i]),
                            AluOp::Sub => lanes.sub(x[i], y[i]),
                            _ => lanes.mul(x[i], y[i]),
                        };
                        assert_eq!(got[i], want, "{s} AVX2 {op:?} {} {}", x[i], y[i]);
                    }
                }
            }
        }
        for (op, f) in [
            (
                AluOp::Add,
                <Lns as Family>::add as fn(&Lns, Bits, Bits) -> Bits,
            ),
            (AluOp::Sub, <Lns as Family>::sub),
            (AluOp::Mul, <Lns as Family>::mul),
        ] {
            for len in [a.len(), a.len() - 17, 15, 0] {
                let mut out = vec![0; len];
                if !l.lanes().binop_words(op, &a[..len], &b[..len], &mut out) {
                    return; // No AVX-512 nor AVX2: the family's own operations serve.
                }
                for i in 0..len {
                    assert_eq!(
                        out[i],
                        f(&l, a[i], b[i]),
                        "{s} {op:?} {:#x} {:#x}",
                        a[i],
                        b[i]
                    );
                }
            }
        }
    }
}

/// The vector lanes (where the machine has AVX2 and AVX-512) equal the portable ones on
/// random blocks of one to five lines, naive and Kahan.
#[test]
fn vector_lanes_equal_the_portable_lanes() {
    let mut r = crate::test_words(9);
    for s in ["lns:5:6", "lns:4:4"] {
        let l = lns(s).lanes();
        let mask = (1u64 << l.lns.fmt.width()) - 1;
        let mut word = || loop {
            let w = r() & mask;
            if !l.lns.fmt.is_nan(w) {
                break l.load(w);
            }
        };
        for k in [0, 1, 7, 100] {
            let x: Vec<i32> = (0..k).map(|_| word()).collect();
            let y: Vec<[i32; L]> = (0..k).map(|_| std::array::from_fn(|_| word())).collect();
            for kahan in [false, true] {
                let want = l.run_portable(kahan, &x, &y);
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    for rows in 1..=5 {
                        let xs = vec![x.as_slice(); rows];
                        let mut got = vec![[0; L]; rows];
                        // SAFETY: the CPU has AVX2.
                        unsafe { avx2::run(&l, kahan, &xs, &y, &[], &mut got) };
                        assert!(got.iter().all(|g| *g == want), "{s} K = {k} AVX2");
                    }
                }
            }
            // The wide lanes: two blocks of L side by side.
            let y2: Vec<[i32; L512]> = (0..k).map(|_| std::array::from_fn(|_| word())).collect();
            for kahan in [false, true] {
                let want = l.run_portable(kahan, &x, &y2);
                #[cfg(target_arch = "x86_64")]
                if avx512() {
                    for rows in 1..=5 {
                        let xs = vec![x.as_slice(); rows];
                        let mut got = vec![[0; L512]; rows];
                        // SAFETY: the CPU has AVX-512 F and DQ.
                        unsafe { avx512::run(&l, kahan, &xs, &y2, &[], &mut got) };
                        assert!(got.iter().all(|g| *g == want), "{s} K = {k} AVX-512");
                    }
                }
            }
        }
    }
}

/// The vector Kahan step ([`kahan::KahanSteps`] where it holds in every lane, the formula
/// where not), of sixteen lanes on AVX-512 and of eight on AVX2, equals `kahan_formula` lane
/// by lane, on vectors of sums, compensations and products that mix zeros, values near both
/// ends of the range (where the table does not hold) and values across the middle; more
/// than 30 % of the vectors of sixteen take the table, and more of eight.
#[test]
fn vector_kahan_steps_are_the_formulas_steps() {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        let mut r = crate::test_words(13);
        for f in ["lns:5:6", "lns:4:4", "lns:3:3"] {
            let l = lns(f).lanes();
            let steps = l.steps.expect("a table of Kahan steps");
            let mut value = || {
                let (pick, v) = (r() % 16, (r() % l.cmax as u64) as i32 + 1);
                let v = match pick {
                    0 | 1 => 0,
                    2 => v % 64 + 1,
                    3 => l.cmax - v % 64,
                    _ => l.cmax / 4 + v / 2,
                };
                if r() & 1 == 0 {
                    v
                } else {
                    -v
                }
            };
            let (mut table, mut halves) = (0, 0);
            for _ in 0..20_000 {
                let s: [i32; 16] = std::array::from_fn(|_| value());
                let c: [i32; 16] = std::array::from_fn(|_| value());
                let x: [i32; 16] = std::array::from_fn(|_| value());
                let want: Vec<(i32, i32)> = (0..16)
                    .map(|i| {
                        let (add, sub) = (|a, b| l.add(a, b), |a, b| l.sub(a, b));
                        crate::sum::kahan_formula(s[i], c[i], x[i], add, sub)
                    })
                    .collect();
                let say = |i: usize| format!("{f}: s {}, c {}, x {}", s[i], c[i], x[i]);
                if avx512() {
                    // SAFETY: the CPU has AVX-512 F and DQ.
                    let got = unsafe { avx512::kahan_step_16(&l, s, c, x) };
                    for (i, &w) in want.iter().enumerate() {
                        assert_eq!((got.0[i], got.1[i]), w, "{} (AVX-512)", say(i));
                    }
                }
                for h in [0, 8] {
                    let half = |v: [i32; 16]| std::array::from_fn(|i| v[h + i]);
                    // SAFETY: the CPU has AVX2.
                    let got = unsafe { avx2::kahan_step_8(&l, half(s), half(c), half(x)) };
                    for i in 0..8 {
                        assert_eq!((got.0[i], got.1[i]), want[h + i], "{} (AVX2)", say(h + i));
                    }
                    let held =
                        (h..h + 8).all(|i| steps.step(&l, s[i], l.add(c[i], x[i])).is_some());
                    halves += usize::from(held);
                }
                let held = (0..16).all(|i| steps.step(&l, s[i], l.add(c[i], x[i])).is_some());
                table += usize::from(held);
            }
            assert!(
                table > 6_000,
                "{f}: the table held in {table} vectors of 16"
            );
            assert!(
                halves > 2 * table,
                "{f}: the table held in {halves} vectors of 8"
            );
        }
    }
}

/// Lanes told where every product is zero (`run_skipping`) give the sums of every step:
/// lines with runs of zeros (one to 40 long, at the start, inside and at the end) among
/// values over the whole range, so that Kahan's compensation is not zero when a run
/// begins. A zero step then changes the state at about 1 % of runs' starts, and at about
/// 0.25 % the state alternates between two; 50 lines of 32 lanes and six runs of odd and
/// even lengths meet both (mutants caught: a run left after one step, a run skipped
/// whole, the parity of an alternating run's end read the wrong way).
#[test]
fn skipped_zero_runs_are_the_steps() {
    let mut r = crate::test_words(11);
    let l = lns("lns:5:6").lanes();
    let mask = (1u64 << l.lns.fmt.width()) - 1;
    let mut word = || loop {
        let w = r() & mask;
        if !l.lns.fmt.is_nan(w) && l.load(w) != 0 {
            break l.load(w);
        }
    };
    let runs = [0..3, 7..8, 10..50, 51..53, 60..99, 120..128];
    let k = 128;
    for _ in 0..50 {
        let mut x: Vec<i32> = (0..k).map(|_| word()).collect();
        for r in runs.iter().cloned() {
            x[r].fill(0);
        }
        let skip: Vec<Range<usize>> = runs.iter().filter(|r| r.len() >= 2).cloned().collect();
        let y2: Vec<[i32; L512]> = (0..k).map(|_| std::array::from_fn(|_| word())).collect();
        let y: Vec<[i32; L]> = y2.iter().map(|v| std::array::from_fn(|i| v[i])).collect();
        for kahan in [false, true] {
            let (want, want2) = (
                l.run_portable(kahan, &x, &y),
                l.run_portable(kahan, &x, &y2),
            );
            for rows in 1..=4 {
                let xs = vec![x.as_slice(); rows];
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let mut got = vec![[0; L]; rows];
                    // SAFETY: the CPU has AVX2.
                    unsafe { avx2::run(&l, kahan, &xs, &y, &skip, &mut got) };
                    assert!(got.iter().all(|g| *g == want), "AVX2 kahan {kahan}");
                }
                #[cfg(target_arch = "x86_64")]
                if avx512() {
                    let mut got = vec![[0; L512]; rows];
                    // SAFETY: the CPU has AVX-512 F and DQ.
                    unsafe { avx512::run(&l, kahan, &xs, &y2, &skip, &mut got) };
                    assert!(got.iter().all(|g| *g == want2), "AVX-512 kahan {kahan}");
                }
            }
        }
    }
}

/// `--keep-bits` on the lanes ([`Lns::dots_keeping`]) is [`Lns::dot_keeping`] of every row
/// and column, at every kept width, naive and Kahan, on every implementation this machine
/// runs: random words with zeros, NaN words, the largest codes and the smallest (where
/// clearing flushes to zero), K from 0 to past a vector's width.
#[test]
fn kept_bits_on_the_lanes_are_the_definition() {
    let mut r = crate::test_words(13);
    for s in ["lns:5:6", "lns:4:4", "lns:3:3"] {
        let l = lns(s);
        let f = l.fmt;
        let mask = (1u64 << f.width()) - 1;
        let extremes = [f.zero(), f.nan(), 1, mask, mask >> 1, (mask >> 1) + 2];
        let mut word = || match r() % 10 {
            0 => f.zero(),
            1 => extremes[(r() % 6) as usize],
            _ => r() & mask,
        };
        for (m, n, k) in [(1, 1, 0), (3, 5, 1), (5, 40, 9), (2, 33, 70)] {
            let a: Vec<Vec<Bits>> = (0..m).map(|_| (0..k).map(|_| word()).collect()).collect();
            let b: Vec<Vec<Bits>> = (0..n).map(|_| (0..k).map(|_| word()).collect()).collect();
            let (rows, cols): (Vec<&[Bits]>, Vec<&[Bits]>) = (
                a.iter().map(Vec::as_slice).collect(),
                b.iter().map(Vec::as_slice).collect(),
            );
            for bits in 0..=f.frac_bits {
                for kahan in [false, true] {
                    let got = l.dots_keeping(bits, kahan, &rows, &cols);
                    let want: Vec<Bits> = (rows.iter())
                        .flat_map(|x| cols.iter().map(|y| l.dot_keeping(bits, kahan, x, y)))
                        .collect();
                    assert_eq!(got, want, "{s} keep {bits} kahan {kahan} {m}×{k}×{n}");
                    // The 16-lane frame too (AVX2 where the machine has it, else portable).
                    let x = l.lanes_keeping(bits);
                    let run = Run { l: x, kahan };
                    assert_eq!(lockstep(&run, &rows, &cols), want, "{s} 16 lanes");
                    // And the portable lanes, one lane a row and column without NaN.
                    let values = |v: &[Bits]| -> Option<Vec<i32>> {
                        v.iter()
                            .map(|&w| (!f.is_nan(w)).then(|| x.load(w)))
                            .collect()
                    };
                    for (i, row) in rows.iter().enumerate() {
                        for (j, col) in cols.iter().enumerate() {
                            let (Some(p), Some(q)) = (values(row), values(col)) else {
                                continue;
                            };
                            let q: Vec<[i32; 1]> = q.into_iter().map(|v| [v]).collect();
                            let got = x.store(x.run_portable(kahan, &p, &q)[0]);
                            assert_eq!(got, want[i * n + j], "{s} portable");
                        }
                    }
                }
            }
        }
    }
}

/// A dense line as its steps (`Lanes::run_runs`): every nonzero value with its k, and a
/// zero at the first k of each run of zeros.
fn steps_of(x: &[i32]) -> (Vec<u32>, Vec<i32>) {
    (0..x.len())
        .filter(|&i| x[i] != 0 || i == 0 || x[i - 1] != 0)
        .map(|i| (i as u32, x[i]))
        .unzip()
}

/// Lines given as their steps (`run_runs`, one vector a line and two, on AVX-512 and AVX2) give
/// the Kahan sums of every step of their dense lines: one to nine lines a call, each with
/// its own runs of zeros (one to 40 long, at the start, inside and at the end; so the lines
/// differ in length), values over the whole range (so that the compensation is not zero
/// when a run begins, and a zero step then changes the state now and then, or makes it
/// alternate), zeros among the lanes' values too, with every result bit and with low bits
/// cleared (`--keep-bits`). Mutants caught: a run left after its first step, a run's length
/// one too long or too short, a line past its last step stepped on. And naive sums of the
/// same lines as their nonzero values, padded with zeros (`run_sparse`).
#[test]
fn lines_as_their_runs_are_the_dense_lines() {
    let (mut r, mut q) = (crate::test_words(17), crate::test_words(19));
    for (s, bits) in [
        ("lns:5:6", 6),
        ("lns:5:6", 3),
        ("lns:4:4", 4),
        ("lns:3:3", 1),
    ] {
        let l = lns(s).lanes_keeping(bits);
        let mask = (1u64 << l.lns.fmt.width()) - 1;
        let mut word = |zeros: u64| loop {
            let w = r() & mask;
            if r() % 100 < zeros {
                break 0;
            }
            if !l.lns.fmt.is_nan(w) {
                break l.load(w);
            }
        };
        let k = 150;
        // Lines enough that some runs' states alternate (about 0.25 % of lanes' runs), and
        // up to 17 (two lines a vector: one group of eight vectors and one more).
        for lines in (1..=9).chain([15, 16, 17]).cycle().take(300) {
            let y2: Vec<[i32; L512]> = (0..k).map(|_| std::array::from_fn(|_| word(10))).collect();
            let y: Vec<[i32; L]> = y2.iter().map(|v| std::array::from_fn(|i| v[i])).collect();
            let x: Vec<Vec<i32>> = (0..lines)
                .map(|line| {
                    let mut x: Vec<i32> = (0..k).map(|_| word(0)).collect();
                    // Runs of zeros: more of them, and longer, in later lines.
                    let mut at = (line * 7) % 5;
                    while at < k {
                        let run = 1 + (q() as usize) % (1 + 6 * line);
                        x[at..(at + run).min(k)].fill(0);
                        at += run + 1 + (q() as usize) % 9;
                    }
                    x
                })
                .collect();
            let steps: Vec<(Vec<u32>, Vec<i32>)> = x.iter().map(|x| steps_of(x)).collect();
            let xs: Vec<(&[u32], &[i32])> = steps.iter().map(|(k, v)| (&k[..], &v[..])).collect();
            let want: Vec<[i32; L]> = x.iter().map(|x| l.run_portable(true, x, &y)).collect();
            let want2: Vec<[i32; L512]> = x.iter().map(|x| l.run_portable(true, x, &y2)).collect();
            let what = format!("{s} keeping {bits}, {lines} lines");
            // Naive sums of the lines as their nonzero values, padded with zeros at k 0 to
            // the longest (`run_sparse`).
            let nonzeros: Vec<(Vec<u32>, Vec<i32>)> = (steps.iter())
                .map(|(ks, vs)| ks.iter().zip(vs).filter(|(_, &v)| v != 0).unzip())
                .collect();
            let longest = nonzeros.iter().map(|n| n.0.len()).max().unwrap_or(0);
            let padded: Vec<(Vec<u32>, Vec<i32>)> = (nonzeros.into_iter())
                .map(|(mut ks, mut vs)| {
                    ks.resize(longest, 0);
                    vs.resize(longest, 0);
                    (ks, vs)
                })
                .collect();
            let sparse: Vec<(&[u32], &[i32])> =
                padded.iter().map(|(k, v)| (&k[..], &v[..])).collect();
            let naive: Vec<[i32; L]> = x.iter().map(|x| l.run_portable(false, x, &y)).collect();
            let naive2: Vec<[i32; L512]> =
                x.iter().map(|x| l.run_portable(false, x, &y2)).collect();
            #[cfg(target_arch = "x86_64")]
            if avx512() {
                let mut got = vec![[0; L]; lines];
                // SAFETY: the CPU has AVX-512 F and DQ.
                unsafe { avx512::run_steps(&l, false, &sparse, &y, &mut got) };
                assert_eq!(got, naive, "{what}: naive, one vector a line");
                let mut got = vec![[0; L512]; lines];
                // SAFETY: as above.
                unsafe { avx512::run_steps(&l, false, &sparse, &y2, &mut got) };
                assert_eq!(got, naive2, "{what}: naive, two vectors a line");
            }
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                let y8: Vec<[i32; 8]> = y.iter().map(|v| std::array::from_fn(|i| v[i])).collect();
                for (kahan, lines_in) in [(false, &sparse), (true, &xs)] {
                    let want8: Vec<[i32; 8]> =
                        x.iter().map(|x| l.run_portable(kahan, x, &y8)).collect();
                    let mut got = vec![[7; 8]; lines];
                    // SAFETY: the CPU has AVX2.
                    unsafe { avx2::run_steps(&l, kahan, lines_in, &y8, &mut got) };
                    assert_eq!(got, want8, "{what}: AVX2 kahan {kahan}, one vector a line");
                    let mut got = vec![[7; L]; lines];
                    // SAFETY: as above.
                    unsafe { avx2::run_steps(&l, kahan, lines_in, &y, &mut got) };
                    let want = if kahan { &want } else { &naive };
                    assert_eq!(&got, want, "{what}: AVX2 kahan {kahan}, two vectors a line");
                }
            }
            // The trait's default: each line spread back to its dense values.
            let mut got = vec![[0; L]; lines];
            Run { l, kahan: true }.run_runs(&xs, &y, &mut got);
            assert_eq!(got, want, "{what}: spread back");
            #[cfg(target_arch = "x86_64")]
            if avx512() {
                let mut got = vec![[0; L]; lines];
                // SAFETY: the CPU has AVX-512 F and DQ.
                unsafe { avx512::run_steps(&l, true, &xs, &y, &mut got) };
                assert_eq!(got, want, "{what}: one vector a line");
                let mut got = vec![[0; L512]; lines];
                // SAFETY: as above.
                unsafe { avx512::run_steps(&l, true, &xs, &y2, &mut got) };
                assert_eq!(got, want2, "{what}: two vectors a line");
                // Against a side of at most eight lanes, two lines a vector (`pairs`), and
                // of nine, one line a vector: the lanes past the side's width zero.
                let width = [1, 6, 8, 9][lines % 4];
                let narrow: Vec<[i32; L]> = (y.iter())
                    .map(|v| std::array::from_fn(|i| if i < width { v[i] } else { 0 }))
                    .collect();
                for kahan in [true, false] {
                    let lines_in = if kahan { &xs } else { &sparse };
                    let want: Vec<[i32; L]> = x
                        .iter()
                        .map(|x| l.run_portable(kahan, x, &narrow))
                        .collect();
                    let mut got = vec![[7; L]; lines];
                    // SAFETY: as above.
                    unsafe { avx512::run_steps16(&l, kahan, lines_in, &narrow, &mut got) };
                    assert_eq!(
                        got, want,
                        "{what}: kahan {kahan}, two lines a vector of {width}"
                    );
                }
            }
        }
    }
}

/// The frame's decoding of a line (`Run::decode`, vectorized) is `Run::value` of each word,
/// NaN as zero and flagged: every word of lns:3:3 to lns:5:6 and lns:2:8, with and without
/// bits set above the format's width, in lines of one word to past a vector's width.
#[test]
fn decoding_is_every_words_value() {
    for s in ["lns:3:3", "lns:4:4", "lns:5:6", "lns:2:8"] {
        let run = Run {
            l: lns(s).lanes(),
            kahan: true,
        };
        let width = run.l.lns.fmt.width();
        let words: Vec<Bits> = (0..1u64 << width)
            .flat_map(|w| [w, w | 0xdead << width])
            .collect();
        for len in [1, 7, 16, 17, 33] {
            for line in words.chunks(len) {
                let mut got = vec![5];
                let nan = run.decode(line, &mut got);
                let want: Vec<Option<i32>> = line.iter().map(|&w| run.value(w)).collect();
                assert_eq!(nan, want.contains(&None), "{s}: the NaN flag of {line:x?}");
                let want: Vec<i32> = [5]
                    .into_iter()
                    .chain(want.iter().map(|v| v.unwrap_or(0)))
                    .collect();
                assert_eq!(got, want, "{s}: {line:x?}");
            }
        }
    }
}

/// A Kahan step with a zero product leaves (s, c) as they are wherever
/// `LnsLanes::zero_step_keeps` says so, and the test misses no such state with c ≠ 0 and
/// |s| > |c| (below where s ⊕ c saturates): every pair of values of lns:3:3 and lns:4:4, and a million random pairs of
/// lns:5:6 (with c near s's half unit, where the step changes the state now and then).
/// The vector tests (`avx512::zero_step_keeps`, `avx2::zero_step_keeps`) equal it lane by lane. With bits cleared
/// (`--keep-bits`) it never says so.
#[test]
fn a_zero_step_keeps_the_state_where_the_test_says() {
    let check = |l: &LnsLanes, f: &str, s: i32, c: i32| {
        let step = crate::sum::kahan_formula(s, c, 0, |a, b| l.add(a, b), |a, b| l.sub(a, b));
        let keeps = l.zero_step_keeps(s, c);
        if keeps {
            assert_eq!(step, (s, c), "{f}: s {s}, c {c}");
        } else if c != 0 && s.abs() > c.abs() && s.abs() + (1 << l.lns.fmt.frac_bits) <= l.cmax {
            // (Near the top, t = s ⊕ c saturates to s where G is not 0: kept, not tested.)
            assert_ne!(
                step,
                (s, c),
                "{f}: s {s}, c {c} is kept but the test misses it"
            );
        }
        keeps
    };
    let mut r = crate::test_words(23);
    for f in ["lns:3:3", "lns:4:4", "lns:5:6"] {
        let l = lns(f).lanes();
        assert!(l.still.is_some(), "{f}: G ends in zeros");
        let values: Vec<i32> = (-l.cmax..=l.cmax).collect();
        let mut pairs: Vec<(i32, i32)> = vec![];
        if l.cmax < 1000 {
            for &s in &values {
                pairs.extend(values.iter().map(|&c| (s, c)));
            }
        } else {
            let n = values.len() as u64;
            for _ in 0..1_000_000 {
                let (s, a, b, o) = (values[(r() % n) as usize], r(), r(), r());
                // c from s's magnitude down by 7 to 8 octaves (d of 448 to 512 at six
                // fraction bits), where the test's bound lies, or anywhere.
                let c = match a % 2 {
                    0 => {
                        let m = s.abs() - 448 - (b % 64) as i32;
                        if o & 1 == 0 {
                            m
                        } else {
                            -m
                        }
                    }
                    _ => values[(b % n) as usize],
                };
                pairs.push((s, c.clamp(-l.cmax, l.cmax)));
            }
        }
        let kept = pairs.iter().filter(|&&(s, c)| check(&l, f, s, c)).count();
        assert!(
            kept * 4 > pairs.len(),
            "{f}: {kept} of {} pairs kept",
            pairs.len()
        );
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            for chunk in pairs.chunks_exact(16) {
                let s: [i32; 16] = std::array::from_fn(|i| chunk[i].0);
                let c: [i32; 16] = std::array::from_fn(|i| chunk[i].1);
                // SAFETY: the CPU has AVX-512 F and DQ.
                let got = unsafe { avx512::zero_step_keeps_16(&l, s, c) };
                for i in 0..16 {
                    assert_eq!(
                        got >> i & 1 == 1,
                        l.zero_step_keeps(s[i], c[i]),
                        "{f}: s {}, c {}",
                        s[i],
                        c[i]
                    );
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            for chunk in pairs.chunks_exact(8) {
                let s: [i32; 8] = std::array::from_fn(|i| chunk[i].0);
                let c: [i32; 8] = std::array::from_fn(|i| chunk[i].1);
                // SAFETY: the CPU has AVX2.
                let got = unsafe { avx2::zero_step_keeps_8(&l, s, c) };
                for i in 0..8 {
                    assert_eq!(
                        got >> i & 1 == 1,
                        l.zero_step_keeps(s[i], c[i]),
                        "{f}: AVX2, s {}, c {}",
                        s[i],
                        c[i]
                    );
                }
            }
        }
        let cleared = lns(f).lanes_keeping(1);
        assert!(
            pairs.iter().all(|&(s, c)| !cleared.zero_step_keeps(s, c)),
            "{f}: bits cleared"
        );
    }
}

mod throughput;

/// The AVX2 lanes through the sparse frame (`Steps2` and `Half2`, what `LnsLanes::dots` takes
/// on a machine with AVX2 and no AVX-512, as on AVX-512 machines it takes `Run512`) against
/// `Lns::dot_keeping` element by element: a convolution's shapes (six or sixteen lines on
/// one side, so that one vector of eight lanes or two serve), rows in runs of zeros (an
/// im2col of a padded error) and scattered zeros (a ReLU's), few zeros (the dense frame), a
/// NaN word in one row, K = 1; naive and Kahan, every bit kept and low bits cleared. Mutants
/// caught: noted in docs/perf.md (thirty-eighth session).
#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_frames_give_every_dot_product() {
    if !std::is_x86_feature_detected!("avx2") {
        return;
    }
    let (mut r, mut q) = (crate::test_words(29), crate::test_words(31));
    for (s, bits) in [("lns:5:6", 6), ("lns:5:6", 3), ("lns:4:4", 4)] {
        let l = lns(s);
        let mask = (1u64 << l.fmt.width()) - 1;
        for (m, k, n, zeros) in [
            (6, 200, 40, 85),
            (40, 150, 6, 50),
            (16, 300, 25, 90),
            (25, 120, 16, 10),
            (3, 1, 9, 30),
            (20, 37, 17, 98),
        ] {
            let mut word = |zero: bool| loop {
                let w = r() & mask;
                if zero {
                    break l.fmt.zero();
                }
                if !l.fmt.is_nan(w) {
                    break w;
                }
            };
            let mut rows: Vec<Vec<Bits>> = (0..m)
                .map(|i| {
                    // Row i's values lie in a window of k (runs of zeros around it) for
                    // half of the rows; the others' zeros are scattered.
                    let window = (i * 7) % k.max(1)..(i * 7 + k / 2 + 1).min(k);
                    (0..k)
                        .map(|t| {
                            let z =
                                (i % 2 == 0 && !window.contains(&t)) || q() % 100 < zeros as u64;
                            word(z)
                        })
                        .collect()
                })
                .collect();
            let cols: Vec<Vec<Bits>> = (0..n)
                .map(|_| (0..k).map(|_| word(q() % 100 < zeros as u64)).collect())
                .collect();
            if m > 3 {
                rows[1][k / 2] = l.fmt.nan();
            }
            let (rs, cs): (Vec<&[Bits]>, Vec<&[Bits]>) = (
                rows.iter().map(Vec::as_slice).collect(),
                cols.iter().map(Vec::as_slice).collect(),
            );
            for kahan in [false, true] {
                let run = Run {
                    l: l.lanes_keeping(bits),
                    kahan,
                };
                let got = sparse_either(&Steps2(run), &Half2(run), &rs, &cs);
                for (e, &g) in got.iter().enumerate() {
                    let (i, j) = (e / n, e % n);
                    let want = l.dot_keeping(bits, kahan, &rows[i], &cols[j]);
                    assert_eq!(
                        g, want,
                        "{s} keeping {bits}, {m}×{k}×{n}, kahan {kahan}: ({i}, {j})"
                    );
                }
            }
        }
    }
}
