//! The kernels against the reference (`Calc::dot` element by element) on random and corner
//! matrices of every format with an exact kernel.

use super::*;
use crate::{test_words, Format};

mod lockstep;
mod readout;

/// Formats whose quire products the exact kernel computes (and one per corner of each family).
const EXACT: &[&str] = &[
    "posit:8:0",
    "posit:8:2",
    "posit:8:2:u",
    "posit:16:1",
    "posit:32:2",
    "takum:8",
    "takum:16",
    "fix:7:8",
    "fix:3:4",
    "fix:0:8",
    "fix:15:16",
    "bf16",
    "f16",
    "fp8:e4m3",
    "fp8:e5m2",
    "float:3:4:fn:sat:ftz",
    "float:2:1",
    "float:8:23",
];

/// Words for one test matrix: `kind` 0 every bit pattern (specials included), 1 values near
/// ±1 (cancellation, ties), 2 a mix of tiny and huge values (many slices, wide rows), 3
/// mostly zeros, 4 the extremes (maxpos, minpos, saturation, subnormals), 5 small values and
/// zeros with a special word (+∞, −∞, NaN or NaR) here and there.
fn words(f: Format, kind: u32, len: usize, seed: u64) -> Vec<Bits> {
    let c = f.calc();
    let mut r = test_words(seed);
    let mask = if f.width() >= 64 {
        u64::MAX
    } else {
        (1u64 << f.width()) - 1
    };
    (0..len)
        .map(|_| {
            let x = r();
            match kind {
                0 => x & mask,
                1 => c.from_f64(
                    (1.0 + (x % 64) as f64 / 64.0) * if x & 64 != 0 { -1.0 } else { 1.0 },
                ),
                2 => {
                    let e = (x % 80) as i32 - 40;
                    c.from_f64(
                        ((x >> 8) % 7 + 1) as f64
                            * (e as f64).exp2()
                            * if x & 1 != 0 { -1.0 } else { 1.0 },
                    )
                }
                3 => {
                    if x.is_multiple_of(5) {
                        c.from_f64(((x >> 3) % 9) as f64 - 4.0)
                    } else {
                        c.zero()
                    }
                }
                5 => match x % 23 {
                    0 => c.from_f64(f64::INFINITY),
                    1 => c.from_f64(f64::NEG_INFINITY),
                    2 => c.from_f64(f64::NAN),
                    3..=8 => c.zero(),
                    _ => c.from_f64(((x >> 5) % 7) as f64 - 3.0),
                },
                _ => {
                    let big = c.from_f64(1e300);
                    let tiny = c.from_f64(1e-300);
                    [
                        big,
                        tiny,
                        c.neg(big),
                        c.neg(tiny),
                        c.one(),
                        c.neg(c.one()),
                        c.zero(),
                        x & mask,
                    ][(x % 8) as usize]
                }
            }
        })
        .collect()
}

fn check(f: Format, m: usize, k: usize, n: usize, kinds: (u32, u32), seed: u64) {
    check_stored(f, (m, k, n), kinds, seed, (false, false));
}

/// `check` with A stored by columns (`transposed.0`) and B by rows (`transposed.1`) as
/// asked: B by columns and A by rows are how the training machines hold them most often.
fn check_stored(
    f: Format,
    (m, k, n): (usize, usize, usize),
    kinds: (u32, u32),
    seed: u64,
    transposed: (bool, bool),
) {
    let c = f.calc();
    let a = words(f, kinds.0, m * k, seed);
    let bt = words(f, kinds.1, n * k, seed ^ 0x9e37_79b9);
    let (a, b) = (
        match transposed.0 {
            false => Operand::row_major(&a, m, k),
            true => Operand::row_major(&a, k, m).t(),
        },
        match transposed.1 {
            false => Operand::row_major(&bt, n, k).t(),
            true => Operand::row_major(&bt, k, n),
        },
    );
    let want = reference(&c, SumMode::Quire, a, b).unwrap();
    let got = matmul(&c, SumMode::Quire, a, b).unwrap();
    for (e, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{f} {m}x{k}x{n} kinds {kinds:?} seed {seed}: element ({}, {}) {:#x} want {:#x}",
            e / n,
            e % n,
            g,
            w
        );
    }
}

#[test]
fn exact_kernel_equals_the_reference_on_random_and_corner_matrices() {
    let mut seed = 1;
    for s in EXACT {
        let f: Format = s.parse().unwrap();
        assert!(f.calc().exact_dot().is_some(), "{f} has an exact kernel");
        for (m, k, n) in [
            (1, 1, 1),
            (3, 2, 5),
            (4, 7, 3),
            (5, 33, 6),
            (2, 300, 3),
            (3, 1000, 2),
        ] {
            for kinds in [
                (0, 0),
                (1, 1),
                (2, 2),
                (3, 1),
                (1, 3),
                (4, 4),
                (2, 1),
                (0, 1),
                (5, 5),
                (5, 1),
            ] {
                seed += 1;
                check(f, m, k, n, kinds, seed);
            }
        }
    }
}

/// Operands stored either way (a transposed operand's lines are decoded interleaved), with
/// blocks of rows and columns cut out of them as the training machines cut them.
#[test]
fn exact_kernel_takes_every_layout() {
    let mut seed = 7000;
    for s in ["posit:8:2", "fix:7:8", "bf16", "posit:16:1", "fp8:e4m3"] {
        let f: Format = s.parse().unwrap();
        for (m, k, n) in [(1, 5, 1), (3, 2, 5), (6, 33, 4), (17, 40, 2), (2, 300, 9)] {
            for kinds in [(0, 0), (1, 2), (2, 2), (3, 3), (4, 1)] {
                for transposed in [(true, false), (false, true), (true, true)] {
                    seed += 1;
                    check_stored(f, (m, k, n), kinds, seed, transposed);
                }
            }
        }
        // Blocks of a transposed operand: the lines start inside its slice.
        let c = f.calc();
        let (a, b) = (words(f, 2, 9 * 20, seed), words(f, 1, 20 * 11, seed + 1));
        let (a, b) = (
            Operand::row_major(&a, 20, 9).t(),
            Operand::row_major(&b, 20, 11),
        );
        for (a, b) in [
            (a.rows_range(2, 7), b),
            (a, b.cols_range(3, 10)),
            (a.rows_range(8, 9), b.cols_range(10, 11)),
        ] {
            let want = reference(&c, SumMode::Quire, a, b).unwrap();
            assert_eq!(matmul(&c, SumMode::Quire, a, b).unwrap(), want, "{f} block");
        }
    }
}

/// Without specials and within the slice limit, every element is the kernel's own (the
/// reference is never asked), so the test above exercises the kernel, not its fallback;
/// floats' sums too wide for an i128 included.
#[test]
fn exact_kernel_computes_ordinary_matrices_itself() {
    for s in ["posit:8:2", "fix:7:8", "bf16", "fp8:e4m3", "posit:16:1"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let x = c.exact_dot().unwrap();
        let (m, k, n) = (6, 257, 5);
        let a = words(f, 1, m * k, 7);
        let bt = words(f, 3, n * k, 8);
        let (a, b) = (
            Operand::row_major(&a, m, k),
            Operand::row_major(&bt, n, k).t(),
        );
        let got = exact::matmul(
            x,
            |w| x.exact_f64(w).unwrap(),
            a,
            b,
            |i, j| panic!("{f}: element ({i}, {j}) went to the reference"),
        );
        assert_eq!(got, reference(&c, SumMode::Quire, a, b).unwrap(), "{f}");
    }
    // Sums too wide for an i128 (lines of three slices spanning some 60 bits each: the bound
    // past 2^127 units) are the kernel's too where the family reads them from a sticky bit.
    for s in ["bf16", "float:8:23"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let x = c.exact_dot().unwrap();
        let (m, k, n) = (5, 33, 4);
        let spread = |i: usize, j: usize| {
            let e = [-30, 28, -2, 12][(i + j) % 4] + (i as i32 % 3);
            let v = (1.0 + (j % 5) as f64 / 8.0) * f64::from(e).exp2();
            c.from_f64(if (i + 2 * j).is_multiple_of(3) { -v } else { v })
        };
        let a: Vec<Bits> = (0..m * k).map(|e| spread(e / k, e % k)).collect();
        let bt: Vec<Bits> = (0..n * k).map(|e| spread(e / k + 7, e % k)).collect();
        let (a, b) = (
            Operand::row_major(&a, m, k),
            Operand::row_major(&bt, n, k).t(),
        );
        let got = exact::matmul(
            x,
            |w| x.exact_f64(w).unwrap(),
            a,
            b,
            |i, j| panic!("{f}: element ({i}, {j}), a wide sum, went to the reference"),
        );
        assert_eq!(
            got,
            reference(&c, SumMode::Quire, a, b).unwrap(),
            "{f}, wide"
        );
    }
}

/// Products of more rows than one block of the kernel holds: blocks whose rows need one
/// slice beside blocks that need several or hold specials (the buffers of one block reused
/// by the next), and the last block short; blocks of many rows (short sums) and of the
/// fewest (long sums).
#[test]
fn exact_kernel_blocks_of_rows_are_independent() {
    for (s, (k, n)) in ["posit:8:2", "fix:7:8", "bf16"]
        .into_iter()
        .flat_map(|s| [(s, (3, 130)), (s, (3000, 2))])
    {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let rb = exact::block_rows(k, n);
        let m = 3 * rb + 7;
        for (order, kinds) in [[1, 2, 0, 1], [2, 1, 1, 0], [0, 1, 2, 2]]
            .iter()
            .enumerate()
        {
            // Block b of A's rows in kind kinds[b]; B one slice (kind 1) or many (kind 2).
            let a: Vec<Bits> = (0..m)
                .flat_map(|i| words(f, kinds[(i / rb).min(3)], k, (i + 100 * order) as u64))
                .collect();
            let bt = words(f, 1 + (order as u32 % 2), n * k, 5 + order as u64);
            let b = Operand::row_major(&bt, n, k).t();
            // A by rows, and A by columns (its rows interleaved in memory).
            let at: Vec<Bits> = (0..k)
                .flat_map(|j| (0..m).map(|i| a[i * k + j]).collect::<Vec<_>>())
                .collect();
            for a in [
                Operand::row_major(&a, m, k),
                Operand::row_major(&at, k, m).t(),
            ] {
                let want = reference(&c, SumMode::Quire, a, b).unwrap();
                let got = matmul(&c, SumMode::Quire, a, b).unwrap();
                let bad = got.iter().zip(&want).position(|(g, w)| g != w);
                assert_eq!(
                    bad, None,
                    "{f} kinds {kinds:?} A strides {}, {}: first element differing",
                    a.rs, a.cs
                );
            }
        }
    }
}

/// Long sums: K large enough that the slices narrow (W = 18 at K = 2^17), values whose
/// products fill every slice bit, and sums that cancel to a few units.
#[test]
fn exact_kernel_is_exact_at_large_k_and_under_cancellation() {
    for s in ["posit:8:2", "fix:15:16", "bf16", "f16"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let k = 1 << 17;
        let mut r = test_words(99);
        let a: Vec<Bits> = (0..k)
            .map(|i| {
                let v = (1.0 + (r() % 256) as f64 / 256.0) * ((i % 11) as f64 - 5.0).exp2();
                c.from_f64(if i % 2 == 0 { v } else { -v })
            })
            .collect();
        // b = 1 on the first half, and the second half cancels the first by symmetry but
        // for one unit of the last place.
        let mut b: Vec<Bits> = vec![c.one(); k];
        b[k - 1] = c.from_f64(1.0 + 2f64.powi(-7));
        let (am, bm) = (Operand::row_major(&a, 1, k), Operand::row_major(&b, k, 1));
        assert_eq!(
            matmul(&c, SumMode::Quire, am, bm).unwrap(),
            reference(&c, SumMode::Quire, am, bm).unwrap(),
            "{f}"
        );
    }
}

/// Modes without a kernel are the reference itself; blocks of rows and columns are views.
#[test]
fn other_modes_and_blocks_are_the_reference() {
    let f: Format = "posit:8:2".parse().unwrap();
    let c = f.calc();
    let (m, k, n) = (4, 9, 5);
    let a = words(f, 1, m * k, 3);
    let b = words(f, 1, k * n, 4);
    let (a, b) = (Operand::row_major(&a, m, k), Operand::row_major(&b, k, n));
    for mode in [SumMode::Naive, SumMode::Kahan, SumMode::Pairwise] {
        assert_eq!(
            matmul(&c, mode, a, b).unwrap(),
            reference(&c, mode, a, b).unwrap()
        );
    }
    let whole = matmul(&c, SumMode::Quire, a, b).unwrap();
    let rows = matmul(&c, SumMode::Quire, a.rows_range(1, 3), b).unwrap();
    assert_eq!(rows, whole[n..3 * n]);
    let cols = matmul(&c, SumMode::Quire, a, b.cols_range(2, 4)).unwrap();
    let want: Vec<Bits> = (0..m)
        .flat_map(|i| whole[i * n + 2..i * n + 4].to_vec())
        .collect();
    assert_eq!(cols, want);
    assert!(matmul(&c, SumMode::Quire, a, a).is_err(), "4x9 by 4x9");
    // Empty products: no rows, no columns, K = 0 (each element the zero word), on the
    // posit tables and the binary32 path alike.
    for (c, mode) in [
        (c, SumMode::Quire),
        (c, SumMode::Naive),
        ("bf16".parse::<Format>().unwrap().calc(), SumMode::Naive),
        ("bf16".parse::<Format>().unwrap().calc(), SumMode::Kahan),
    ] {
        assert_eq!(matmul(&c, mode, a.rows_range(2, 2), b).unwrap(), vec![]);
        assert_eq!(matmul(&c, mode, a, b.cols_range(1, 1)).unwrap(), vec![]);
        let (e0, e1): (Vec<Bits>, Vec<Bits>) = (vec![], vec![]);
        let (ea, eb) = (Operand::row_major(&e0, 2, 0), Operand::row_major(&e1, 0, 3));
        assert_eq!(matmul(&c, mode, ea, eb).unwrap(), vec![c.zero(); 6]);
    }
}

/// Sums that fill the slices: K = 2^17 (W = 18), 2^16 − 1 products of about 4 and as many
/// of about −4 cancel around one product of 2^−18 · 2^−18 met while the running sum is near
/// 2^54 of its units. Within the slice rule it is kept; one bit more per slice (W = 19)
/// puts 2^−18 in the first slice, and f64 loses it.
#[test]
fn exact_kernel_keeps_the_last_unit_under_large_sums() {
    for s in ["bf16", "posit:16:1"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let k = 1 << 17;
        let big = c.from_f64(2.0 - 1.0 / 128.0);
        let mut a = vec![big; k];
        a[k / 2..].fill(c.neg(big));
        let mut b = vec![big; k];
        let tiny = c.from_f64((-18f64).exp2());
        (a[k / 4], b[k / 4]) = (tiny, tiny);
        a[3 * k / 4] = c.zero();
        let (am, bm) = (Operand::row_major(&a, 1, k), Operand::row_major(&b, k, 1));
        let want = reference(&c, SumMode::Quire, am, bm).unwrap();
        assert_ne!(want[0], c.zero(), "{f}: the sum is 2^-36");
        assert_eq!(matmul(&c, SumMode::Quire, am, bm).unwrap(), want, "{f}");
    }
}

/// The accumulators wrap as the registers do: posit:8:2's 104-bit quire (7 carry bits)
/// past 2^7 products of maxpos², and fix:7:8's 48-bit accumulator past 2^18 of 2^30.
#[test]
fn exact_kernel_wraps_as_the_accumulators_do() {
    for (s, k, x) in [("posit:8:2", 200, 1e30), ("fix:7:8", 1 << 18, -128.0)] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let a = vec![c.from_f64(x); k];
        let (am, bm) = (Operand::row_major(&a, 1, k), Operand::row_major(&a, k, 1));
        let want = reference(&c, SumMode::Quire, am, bm).unwrap();
        let naive_sum = c.from_f64(x * x * k as f64);
        assert_ne!(want[0], naive_sum, "{f}: the sum must wrap");
        assert_eq!(matmul(&c, SumMode::Quire, am, bm).unwrap(), want, "{f}");
    }
}

/// `lane_op` is `alu::result` word for word: every pair of words of 8-bit formats of each
/// family (the lane tables) and random pairs of 16-bit formats (the float kernels, and the ALU itself for the others).
#[test]
fn lane_op_is_the_alu() {
    use crate::AluOp;
    // + − · ÷ max min lt: the opcodes' first seven.
    let ops = &AluOp::ALL[..7];
    for s in [
        "posit:8:2",
        "posit:8:0",
        "takum:8",
        "fix:3:4",
        "lns:3:4",
        "fp8:e4m3",
        "float:2:1",
        "bf16",
        "f16",
        "posit:16:1",
        "posit:16:2",
        "posit:12:1",
        "posit:10:0",
        "fix:7:8",
        "lns:5:6",
        "takum:16",
    ] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let w = f.width();
        let (a, b): (Vec<Bits>, Vec<Bits>) = if w <= 8 {
            (0..1u64 << (2 * w))
                .map(|xy| (xy >> w, xy & ((1 << w) - 1)))
                .unzip()
        } else {
            // Random pairs, and the corners (zero, the extremes, ±1, the sign boundary) with
            // each other and with random words (the float kernels take words of the format).
            let mask = (1u64 << w) - 1;
            let (half, quarter) = (1u64 << (w - 1), 1u64 << (w - 2));
            let corners = [
                0,
                1,
                2,
                half - 2,
                half - 1,
                half,
                half + 1,
                half + 2,
                mask - 1,
                mask,
                quarter - 1,
                quarter,
                quarter + 1,
                mask - quarter,
                mask - quarter + 1,
            ];
            let mut r = test_words(w as u64);
            let mut pairs: Vec<(Bits, Bits)> =
                (0..200_000).map(|_| (r() & mask, r() & mask)).collect();
            for &x in &corners {
                pairs.extend(corners.iter().map(|&y| (x, y)));
                pairs.extend((0..500).flat_map(|_| {
                    let y = r() & mask;
                    [(x, y), (y, x)]
                }));
            }
            pairs.into_iter().unzip()
        };
        for &op in ops {
            let mut got = vec![0; a.len()];
            lane_op(&c, op, &a, &b, &mut got);
            for (i, &g) in got.iter().enumerate() {
                let want = crate::alu::result(&c, op.code(), a[i], b[i], false, || a[i]);
                assert_eq!(g, want, "{f} {op:?} {:#x} {:#x}", a[i], b[i]);
            }
        }
    }
}

#[test]
fn a_product_is_cut_where_the_parts_share_the_work() {
    let (lns, posit) = (
        "lns:5:6".parse::<Format>().unwrap().calc(),
        "posit:8:2".parse::<Format>().unwrap().calc(),
    );
    // The exact kernel: the longer side, whatever the shape.
    for (m, n, want) in [(6, 25, Cut::Cols), (25, 6, Cut::Rows), (3920, 6, Cut::Rows)] {
        assert_eq!(cut(&posit, SumMode::Quire, m, n, 2), want, "{m}x{n}");
    }
    // The lanes: the shorter side where the longer is a block or two of lanes per part and
    // the shorter has a line for each part; the longer elsewhere.
    for (m, n, parts, want) in [
        (6, 25, 2, Cut::Rows),
        (25, 6, 2, Cut::Cols),
        (6, 128, 2, Cut::Rows),
        (6, 129, 2, Cut::Cols),
        (3920, 6, 2, Cut::Rows),
        (1, 25, 2, Cut::Cols),
        (2, 25, 3, Cut::Cols),
    ] {
        assert_eq!(
            cut(&lns, SumMode::Kahan, m, n, parts),
            want,
            "{m}x{n}/{parts}"
        );
    }
}

/// `sums_exactly` is "every word has an exact value" (`exact_f64` is `Some`) for each word
/// alone, of formats read by the table and of wider ones, and false without an exact
/// accumulator.
#[test]
fn sums_exactly_is_every_word_exact() {
    for spec in [
        "bf16",
        "fp8:e4m3",
        "posit:8:2",
        "posit:16:1",
        "f32",
        "lns:5:6",
    ] {
        let c = spec.parse::<Format>().unwrap().calc();
        let Some(x) = c.exact_dot() else {
            assert!(!sums_exactly(&c, &[0]), "{spec}: no exact accumulator");
            continue;
        };
        let width = c.format().width().min(12);
        let mut words: Vec<Bits> = (0..1u64 << width).collect();
        let mut r = test_words(45);
        words.extend((0..1000).map(|_| r() & ((1 << c.format().width()) - 1)));
        for &w in &words {
            assert_eq!(
                sums_exactly(&c, &[0, w]),
                x.exact_f64(w).is_some(),
                "{spec} {w:#x}"
            );
        }
        assert!(sums_exactly(&c, &[]), "{spec}: no words");
    }
}
