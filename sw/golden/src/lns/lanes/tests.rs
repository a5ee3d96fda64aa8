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
