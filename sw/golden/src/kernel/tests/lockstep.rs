//! The lockstep lanes' products (the sequential modes) against the reference.

use super::*;

/// The lockstep dot products (`Calc::dots`, the products of the sequential modes) against
/// `Calc::dot` column by column: every family and mode, tables (≤ 8 bits), the binary32 path
/// (bf16, f16) and the slow paths, 0 to 17 columns (whole blocks of eight and remainders),
/// K = 0, 1, 5 and 33, every bit pattern among the words.
#[test]
fn lockstep_dots_equal_dot_column_by_column() {
    let mut seed = 1000;
    for s in [
        "posit:8:2",
        "posit:16:1",
        "takum:8",
        "takum:16",
        "fix:7:8",
        "lns:5:6",
        "lns:4:4",
        "dfix:10",
        "f32",
        "bf16",
        "f16",
        "fp8:e4m3",
        "float:8:10",
        "float:3:4:fn:sat:ftz",
    ] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        for &mode in f.entry().modes {
            for k in [0, 1, 5, 33] {
                for n in [0, 1, 7, 8, 9, 17] {
                    seed += 1;
                    let a = words(f, (seed % 3) as u32, k, seed);
                    let cols: Vec<Vec<Bits>> = (0..n)
                        .map(|j| words(f, ((seed + j as u64) % 3) as u32, k, seed * 31 + j as u64))
                        .collect();
                    let refs: Vec<&[Bits]> = cols.iter().map(Vec::as_slice).collect();
                    let want: Vec<Bits> =
                        cols.iter().map(|b| c.dot(mode, &a, b).unwrap()).collect();
                    assert_eq!(
                        c.dots(mode, &[&a], &refs).unwrap(),
                        want,
                        "{f} {} K = {k}, {n} columns",
                        mode.name()
                    );
                }
            }
        }
    }
}

/// Products of the sequential modes through `matmul` (rows of outputs by `dots`) equal the
/// reference, with more columns than one lockstep block.
#[test]
fn sequential_products_equal_the_reference() {
    for s in ["posit:8:2", "bf16", "lns:5:6", "fix:7:8", "f16"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let (m, k, n) = (3, 40, 19);
        let a = words(f, 1, m * k, 5);
        let bt = words(f, 2, n * k, 6);
        let (a, b) = (
            Operand::row_major(&a, m, k),
            Operand::row_major(&bt, n, k).t(),
        );
        for &mode in f.entry().modes {
            assert_eq!(
                matmul(&c, mode, a, b).unwrap(),
                reference(&c, mode, a, b).unwrap(),
                "{f} {}",
                mode.name()
            );
        }
    }
}

/// The lockstep lanes (posits of up to 16 bits on binary64, LNS on its G tables, floats on
/// the binary32 path) against
/// the reference in every sequential mode: more rows than columns and the reverse (the lanes
/// run over the longer side), sides that are not multiples of the lanes or of the lines run
/// at once, K = 1 to a long K, every kind of words (all bit patterns with NaR/NaN, values
/// near ±1 that cancel, tiny and huge values outside the fast rounding, zeros, the extremes).
#[test]
fn lockstep_lanes_equal_the_reference() {
    let mut seed = 5000;
    for s in [
        "posit:16:1",
        "posit:16",
        "posit:16:1:u",
        "posit:12:1",
        "posit:9:0",
        "posit:10:3",
        "posit:8:2",
        "lns:5:6",
        "lns:4:4",
        "lns:2:8",
        "bf16",
        "f16",
        "float:8:5",
        "float:4:6",
    ] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        for (m, k, n) in [(1, 1, 1), (3, 1, 40), (37, 5, 3), (9, 33, 19), (18, 200, 5)] {
            for kinds in [(0, 0), (1, 1), (2, 2), (3, 1), (4, 4), (1, 4), (2, 3)] {
                seed += 1;
                let a = words(f, kinds.0, m * k, seed);
                let bt = words(f, kinds.1, n * k, seed ^ 0x5555);
                let (a, b) = (
                    Operand::row_major(&a, m, k),
                    Operand::row_major(&bt, n, k).t(),
                );
                for &mode in f.entry().modes {
                    if mode == SumMode::Quire {
                        continue;
                    }
                    assert_eq!(
                        matmul(&c, mode, a, b).unwrap(),
                        reference(&c, mode, a, b).unwrap(),
                        "{f} {} {m}x{k}x{n} kinds {kinds:?} seed {seed}",
                        mode.name()
                    );
                }
            }
        }
    }
}

/// Long sums in the lanes: K = 3000 of values near ±1 (runs that cancel and grow, the
/// Kahan compensation at work) and of values spread over the whole range, beside the
/// reference, with a NaR/NaN in one row and one column only.
#[test]
fn lockstep_lanes_equal_the_reference_on_long_sums() {
    for s in ["posit:16:1", "lns:5:6", "bf16", "f16"] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let (m, k, n) = (3, 3000, 21);
        for (kind, seed) in [(1, 1), (2, 2)] {
            let mut a = words(f, kind, m * k, seed);
            let mut bt = words(f, kind, n * k, seed + 10);
            let nan = c.nan().unwrap();
            (a[k + 7], bt[5 * k + 2999]) = (nan, nan);
            let (a, b) = (
                Operand::row_major(&a, m, k),
                Operand::row_major(&bt, n, k).t(),
            );
            for mode in [SumMode::Naive, SumMode::Kahan] {
                let want = reference(&c, mode, a, b).unwrap();
                assert_eq!(want[n + 4], nan, "{f}: row 1 holds a NaN");
                assert_eq!(want[5], nan, "{f}: column 5 holds a NaN");
                assert_eq!(matmul(&c, mode, a, b).unwrap(), want, "{f} {}", mode.name());
            }
        }
    }
}

/// A product of a padded convolution's shape through the lockstep frame where zero products
/// are one value (LNS, posits): rows whose zeros fall in one of seven patterns (runs of k, as an
/// im2col of a padded error has), in the lanes (more rows than columns: the frame sorts them
/// by pattern, and a block's shared zeros are skipped) and as the lines (the reverse), a
/// NaN in one row, and the columns three in four zeros at random; naive and Kahan, beside
/// the reference element by element.
#[test]
fn lockstep_skips_zero_products_of_padded_rows() {
    for s in [
        "lns:5:6",
        "lns:4:4",
        "posit:16:1",
        "posit:8:2",
        "posit:12:0",
    ] {
        let f: Format = s.parse().unwrap();
        let c = f.calc();
        let (m, k, n) = (75, 300, 9);
        for kind in [1, 2] {
            let mut a = words(f, kind, m * k, 77 + kind as u64);
            for i in 0..m {
                // Pattern i % 7: the row's values lie in 40 + 10·p..(80 + 25·p) only.
                let p = i % 7;
                let keep = 40 + 10 * p..80 + 25 * p;
                for t in (0..k).filter(|t| !keep.contains(t)) {
                    a[i * k + t] = c.zero();
                }
            }
            a[13 * k + 50] = c.nan().unwrap();
            let mut bt = words(f, kind, n * k, 99 + kind as u64);
            // Three in four of B's values zero at random (a ReLU's and max pooling's): the
            // sparse frame (naive posits) takes B as the lines and skips each one's zeros.
            let mut r = crate::test_words(kind as u64);
            bt.iter_mut()
                .filter(|_| !r().is_multiple_of(4))
                .for_each(|w| *w = c.zero());
            let (a, b) = (
                Operand::row_major(&a, m, k),
                Operand::row_major(&bt, n, k).t(),
            );
            for mode in [SumMode::Naive, SumMode::Kahan] {
                let what = format!("{f} kind {kind} {}", mode.name());
                let want = reference(&c, mode, a, b).unwrap();
                assert_eq!(
                    matmul(&c, mode, a, b).unwrap(),
                    want,
                    "{what}: rows in lanes"
                );
                // The transposed product: the padded rows become the lines.
                let want_t = reference(&c, mode, b.t(), a.t()).unwrap();
                assert_eq!(
                    matmul(&c, mode, b.t(), a.t()).unwrap(),
                    want_t,
                    "{what}: rows as lines"
                );
            }
        }
    }
}
