//! `--rounding stochastic:R` on the RTL machine (issue 32): float lanes run on the `vector
//! --rounding stochastic:R` unit, placed on the stream by `sr_load`, and give for element i
//! the golden operation rounded by a `Rounder` at the draws' state i (docs/train.md: a result
//! at position p is rounded by the generator after p steps, which steps once); the float
//! array's exact products are read out by `array --pe float --rounding stochastic:R`, element
//! (i, j) at state i·n + j; other families' lanes and products refuse in one line.

use lpgen_golden::arith::BinOp;
use lpgen_golden::rounding::{Rounder, Rounding, Xorshift32};
use lpgen_golden::{AluOp, Format};
use lpgen_train::machine::{Machine, Mat};
use lpgen_train::rounding::{Draws, Stream};
use lpgen_train::rtl::Rtl;

/// Words of `f` spread over its codes (NaN, ∞, subnormals and zeros among them).
fn words(f: Format, n: usize, salt: u64) -> Vec<u64> {
    let mask = (1u64 << f.width()) - 1;
    (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt).rotate_left(17) & mask)
        .collect()
}

/// The contract written out: element i is `op` rounded by the golden rounder at state i.
fn expected(f: Format, op: BinOp, a: &[u64], b: &[u64], d: &Draws) -> Vec<u64> {
    let c = f.calc();
    (0..a.len())
        .map(|i| {
            let gen = Xorshift32::at(d.states[i]).unwrap();
            let mut r = Rounder::with_generator(d.rounding, gen);
            c.binop_with(op, a[i], b[i], &mut r).unwrap()
        })
        .collect()
}

/// Every rounding opcode on bf16 and fp8:e5m2 lanes: tensors that fill the last beat only in
/// part (37 words on 4 lanes), one after another with gaps between them (positions other
/// tensors took: each tensor's stream is placed by a load); draws out of order refused.
#[test]
fn stochastic_lanes_give_the_contract_words() {
    let mut rtl = Rtl::new(2, 2, 4).unwrap();
    let ops = [
        (AluOp::Add, BinOp::Add),
        (AluOp::Sub, BinOp::Sub),
        (AluOp::Mul, BinOp::Mul),
        (AluOp::Div, BinOp::Div),
    ];
    for (f, r) in [("bf16", 8), ("fp8:e5m2", 3)] {
        let f: Format = f.parse().unwrap();
        let mut stream = Stream::new(Rounding::Stochastic(r), 11);
        for (k, (op, bin)) in ops.into_iter().enumerate() {
            let (a, b) = (words(f, 37, k as u64), words(f, 37, 99 + k as u64));
            let d = stream.take(37);
            let got = rtl.lanes_rounded(f, op, &a, &b, &d).unwrap();
            assert_eq!(got, expected(f, bin, &a, &b, &d), "{f} {op:?}");
            // A gap: positions another tensor took.
            stream.take(5 + k);
            // Draws out of order are a trainer bug (the unit chains each beat's states).
            let mut d = stream.take(37);
            d.states.swap(5, 6);
            let e = rtl.lanes_rounded(f, op, &a, &b, &d).unwrap_err().0;
            assert!(
                e.contains("draw 5 of 37 does not follow on from draw 4"),
                "{e}"
            );
        }
    }
    // Stochastic rounding moves some results off nearest (the draws are used).
    let f: Format = "fp8:e5m2".parse().unwrap();
    let (a, b) = (words(f, 200, 1), words(f, 200, 2));
    let d = Stream::new(Rounding::Stochastic(3), 5).take(200);
    let sr = rtl.lanes_rounded(f, AluOp::Mul, &a, &b, &d).unwrap();
    let near = rtl.lanes(f, AluOp::Mul, &a, &b).unwrap();
    assert!(sr.iter().zip(&near).filter(|(x, y)| x != y).count() > 10);
}

#[test]
fn the_rtl_machine_refuses_what_it_cannot_round_stochastically() {
    let mut rtl = Rtl::new(2, 2, 4).unwrap();
    let d = Stream::new(Rounding::Stochastic(8), 1).take(4);
    let fix: Format = "fix:7:8".parse().unwrap();
    let e = rtl
        .lanes_rounded(fix, AluOp::Mul, &[1; 4], &[2; 4], &d)
        .unwrap_err()
        .0;
    assert!(
        e.contains("fix:7:8 lanes round to nearest on the RTL"),
        "{e}"
    );
    let m = Mat {
        rows: 2,
        cols: 2,
        data: vec![0x100; 4],
    };
    let e = rtl
        .matmul_rounded(fix, m.view(), m.view(), &d)
        .unwrap_err()
        .0;
    assert!(e.contains("read-out") && !e.contains('\n'), "{e}");
}

/// Products on `array --pe float --rounding stochastic:R`: element (i, j) of A·B is the
/// exact dot product of row i and column j rounded once by a `Rounder` at the draws' state
/// i·n + j (written out here with the golden `dot_exact_with`), for shapes that leave partial
/// tiles on both sides (5×7 times 7×4 on a 2×3 array) and two products one after another.
#[test]
fn stochastic_products_give_the_contract_words() {
    let mut rtl = Rtl::new(2, 3, 4).unwrap();
    let f: Format = "fp8:e5m2".parse().unwrap();
    let c = f.calc();
    let mut stream = Stream::new(Rounding::Stochastic(3), 21);
    let (m, k, n) = (5, 7, 4);
    let mut moved = 0;
    for salt in [0u64, 7] {
        let a = Mat {
            rows: m,
            cols: k,
            // Finite words (the top exponent bit clear), so that sums round.
            data: words(f, m * k, 1 + salt).iter().map(|w| w & 0xbf).collect(),
        };
        let b = Mat {
            rows: k,
            cols: n,
            data: words(f, k * n, 2 + salt).iter().map(|w| w & 0xbf).collect(),
        };
        let d = stream.take(m * n);
        let got = rtl.matmul_rounded(f, a.view(), b.view(), &d).unwrap();
        let near = rtl
            .matmul(
                f,
                lpgen_train::machine::Accumulate::Exact,
                a.view(),
                b.view(),
            )
            .unwrap();
        for i in 0..m {
            for j in 0..n {
                let x: Vec<u64> = (0..k).map(|kk| a.data[i * k + kk]).collect();
                let y: Vec<u64> = (0..k).map(|kk| b.data[kk * n + j]).collect();
                let gen = Xorshift32::at(d.states[i * n + j]).unwrap();
                let mut r = Rounder::with_generator(d.rounding, gen);
                let want = c.dot_exact_with(&x, &y, &mut r).unwrap();
                assert_eq!(got.data[i * n + j], want, "({i}, {j})");
                moved += usize::from(want != near.data[i * n + j]);
            }
        }
        stream.take(3);
    }
    // The draws are used: some products differ from nearest.
    assert!(moved > 3, "{moved}");
}
