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
