//! The layers' host work: which input the max cache names.

use super::*;
use crate::machine::Golden;

/// Each output is the largest of its pieces (taken in order by the machine), and the cache
/// points at the first piece holding it: ties, within a sample and across samples, go to
/// the first, and the pieces of one output are `source(o, j)` of its sample's row.
#[test]
fn max_of_groups_points_at_the_first_of_equal_maxima() {
    let c = crate::net::tests::cfg("posit:16:1");
    let calc = c.stages.f.calc();
    let mut g = Golden::default();
    let mut net = Net::new(&mut g, &c);
    // Two samples of six inputs; two outputs of three pieces, output o's piece j at
    // input 2j + o (interleaved).
    let values = [
        [1.0, 5.0, 3.0, 5.0, 3.0, -1.0],
        [-2.0, 0.0, -2.0, 0.0, -3.0, 0.0],
    ];
    let a = Mat {
        rows: 2,
        cols: 6,
        data: values.iter().flatten().map(|&v| calc.from_f64(v)).collect(),
    };
    let (y, cache) = net.max_of_groups(&a, 2, 3, |o, j| 2 * j + o).unwrap();
    let got: Vec<f64> = y.data.iter().map(|&w| calc.to_f64(w)).collect();
    assert_eq!(got, [3.0, 5.0, -2.0, 0.0]);
    let Cache::Max { from, inputs } = cache else {
        panic!("a max cache")
    };
    assert_eq!((from, inputs), (vec![2, 1, 0, 1], 6));
}

/// Max pooling of a batch large enough for the threads (maxima, ties and NaR mixed) gives
/// the same outputs and cache on one, two and three threads, and each output is the machine's
/// maximum of its pieces in order, from the first piece equal to it.
#[test]
fn max_of_groups_on_threads_is_its_definition() {
    use rand::{Rng, SeedableRng};
    let c = crate::net::tests::cfg("posit:8:1");
    let calc = c.stages.f.calc();
    let (samples, outputs, pieces) = (1500, 12, 4);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    // Few distinct words, so that pieces tie; NaR (0x80) among them.
    let a = Mat {
        rows: samples,
        cols: outputs * pieces,
        data: (0..samples * outputs * pieces)
            .map(|_| [0x80, 0x00, 0x40, 0x41, 0xc0, 0x20][rng.gen_range(0..6)])
            .collect(),
    };
    let source = |o: usize, j: usize| o * pieces + j;
    let mut got = vec![];
    for threads in [1, 2, 3] {
        let mut g = Golden {
            threads,
            ..Golden::default()
        };
        let mut net = Net::new(&mut g, &c);
        let (y, cache) = net.max_of_groups(&a, outputs, pieces, source).unwrap();
        let Cache::Max { from, .. } = cache else {
            panic!("a max cache")
        };
        got.push((y.data, from));
    }
    assert!(
        got.iter().all(|g| *g == got[0]),
        "the same on 1, 2 and 3 threads"
    );
    let (y, from) = &got[0];
    for (s, o) in (0..samples).flat_map(|s| (0..outputs).map(move |o| (s, o))) {
        let piece = |j: usize| a.at(s, source(o, j));
        let max = (1..pieces).fold(piece(0), |m, j| {
            lpgen_golden::alu::result(&calc, AluOp::Max.code(), m, piece(j), false, || m)
        });
        let first = (0..pieces).find(|&j| piece(j) == max).unwrap_or(0);
        assert_eq!(y[s * outputs + o], max, "sample {s}, output {o}");
        assert_eq!(
            from[s * outputs + o],
            source(o, first),
            "sample {s}, output {o}"
        );
    }
}
