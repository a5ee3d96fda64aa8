//! The lockstep frames' own tests (the kernels' are in `kernel/tests/lockstep.rs`).

use super::*;

/// The runs of at least two zeros, found bit by bit: the definition [`Zeros::runs_with`]
/// keeps.
fn runs_bit_by_bit(a: &Zeros, b: &Zeros, k: usize) -> Vec<Range<usize>> {
    let zero = |i: usize| (a.0[i / 64] | b.0[i / 64]) >> (i % 64) & 1 == 1;
    let mut runs = vec![];
    let mut start = None;
    for i in 0..=k {
        match (i < k && zero(i), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s >= 2 {
                    runs.push(s..i);
                }
                start = None;
            }
            _ => {}
        }
    }
    runs
}

/// Lanes of integer sums in f64 (exact, so any order gives them) that leave
/// [`Lanes::run_sparse`] to the trait's default: the word w is the value w, `NAN` the NaN
/// word.
struct Integers;
const NAN: Bits = Bits::MAX;

impl Lanes<f64, 4> for Integers {
    fn value(&self, w: Bits) -> Option<f64> {
        (w != NAN).then_some(w as f64)
    }
    fn special(&self) -> Bits {
        NAN
    }
    fn encode(&self, v: f64) -> Bits {
        v as Bits
    }
    fn run(&self, xs: &[&[f64]], y: &[[f64; 4]], out: &mut [[f64; 4]]) {
        for (x, out) in xs.iter().zip(out) {
            *out = std::array::from_fn(|l| x.iter().zip(y).map(|(a, b)| a * b[l]).sum());
        }
    }
    fn zero_products_leave_sums(&self) -> bool {
        true
    }
}

/// [`Integers`] that step lines as their runs ([`Lanes::steps_runs`]), and check that
/// each line the frame gives them is its steps: it starts at k 0, a zero value heads a
/// run (the next step is further on, or there is none), a gap in k follows only a zero,
/// and a line that ends before K ends in a zero. Counts the lines it is given.
struct IntegerRuns(std::cell::Cell<usize>);

impl Lanes<f64, 4> for IntegerRuns {
    fn value(&self, w: Bits) -> Option<f64> {
        Integers.value(w)
    }
    fn special(&self) -> Bits {
        NAN
    }
    fn encode(&self, v: f64) -> Bits {
        Integers.encode(v)
    }
    fn run(&self, xs: &[&[f64]], y: &[[f64; 4]], out: &mut [[f64; 4]]) {
        Integers.run(xs, y, out)
    }
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn steps_runs(&self) -> bool {
        true
    }
    fn run_runs(&self, xs: &[(&[u32], &[f64])], y: &[[f64; 4]], out: &mut [[f64; 4]]) {
        let k = y.len() as u32;
        self.0.set(self.0.get() + xs.len());
        for &(ks, vs) in xs {
            assert_eq!(ks.len(), vs.len());
            if k > 0 {
                assert_eq!(ks.first(), Some(&0), "a line starts at k 0");
            }
            let next = ks.iter().skip(1).copied().chain([k]);
            for ((&at, &v), next) in ks.iter().zip(vs).zip(next) {
                assert!(next > at, "steps in k order");
                assert!(v == 0.0 || next == at + 1, "a gap follows only a zero");
            }
            for w in vs.windows(2).zip(ks.windows(2)) {
                assert!(w.0 != [0.0, 0.0] || w.1[1] > w.1[0] + 1, "one zero a run");
            }
        }
        let dense = spread(xs, y.len());
        let xs: Vec<&[f64]> = dense.iter().map(Vec::as_slice).collect();
        self.run(&xs, y, out)
    }
}

/// The sparse frame, through the default [`Lanes::run_sparse`] and through lines as their
/// runs ([`IntegerRuns`]), gives every dot product of random sparse sides (either may be
/// the lines), a NaN word in one row and one column.
#[test]
fn sparse_frame_gives_every_dot_product() {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for (m, k, n) in [(1, 1, 1), (7, 9, 3), (3, 40, 17), (20, 64, 2), (5, 0, 6)] {
        for zeros in [0, 2, 3] {
            // Words 1..=9, each zero with probability zeros/4.
            let mut word = || {
                if next() % 4 < zeros {
                    0
                } else {
                    1 + next() % 9
                }
            };
            let mut a: Vec<Vec<Bits>> = (0..m).map(|_| (0..k).map(|_| word()).collect()).collect();
            let mut b: Vec<Vec<Bits>> = (0..n).map(|_| (0..k).map(|_| word()).collect()).collect();
            if k > 0 && m > 1 && n > 1 {
                (a[1][k - 1], b[n - 1][0]) = (NAN, NAN);
            }
            let rows: Vec<&[Bits]> = a.iter().map(Vec::as_slice).collect();
            let cols: Vec<&[Bits]> = b.iter().map(Vec::as_slice).collect();
            let got = sparse(&Integers, &rows, &cols);
            let lanes = IntegerRuns(Default::default());
            let runs = sparse(&lanes, &rows, &cols);
            if zeros == 3 && k >= 40 {
                // Mostly zeros: fewer steps as runs than dense.
                assert!(lanes.0.get() > 0, "{m}x{k}x{n}: lines as their runs");
            }
            for (i, j) in (0..m).flat_map(|i| (0..n).map(move |j| (i, j))) {
                let want = match rows[i].contains(&NAN) || cols[j].contains(&NAN) {
                    true => NAN,
                    false => rows[i].iter().zip(cols[j]).map(|(x, y)| x * y).sum(),
                };
                let at = format!("{m}x{k}x{n} zeros {zeros}/4 ({i}, {j})");
                assert_eq!(got[i * n + j], want, "{at}");
                assert_eq!(runs[i * n + j], want, "{at}, lines as their runs");
            }
        }
    }
}

/// Random lines of zeros (sparse, dense and in runs) at lengths around the word's 64.
#[test]
fn runs_by_words_are_the_runs_bit_by_bit() {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for k in [1, 2, 3, 63, 64, 65, 127, 128, 129, 200] {
        for density in [0, 1, 4, 8, 15, 16] {
            for _ in 0..20 {
                // A run of zeros continues with probability density/16.
                let mut line = vec![1u8; k];
                let mut zero = false;
                for v in &mut line {
                    if next() % 16 < density || (zero && next() % 4 != 0 && density > 0) {
                        *v = 0;
                    }
                    zero = *v == 0;
                }
                let other: Vec<u8> = (0..k).map(|_| u8::from(next() % 8 != 0)).collect();
                let (a, b) = (Zeros::of(&line), Zeros::of(&other));
                assert_eq!(a.runs_with(&b, k), runs_bit_by_bit(&a, &b, k), "k {k}");
                let all = Zeros::all(k);
                assert_eq!(a.runs_with(&all, k), runs_bit_by_bit(&a, &all, k));
            }
        }
    }
}
