//! LNS units simulated with Icarus against the golden model.

mod common;

use lpgen_golden::LnsFormat;
use lpgen_hdl::{generate, Params, Unit};

#[test]
fn lns_mul_and_div_match_the_golden_model() {
    let f = LnsFormat::new(4, 4).unwrap();
    let l = f.ctx();
    // Every word against a spread of words, both operations.
    let words: Vec<u64> = (0..1u64 << f.width()).collect();
    let bs: Vec<u64> = words.iter().copied().step_by(7).collect();
    let mut vectors = vec![];
    for &a in &words {
        for &b in &bs {
            vectors.push(vec![a, b, (a ^ b) & 1]);
        }
    }
    for stages in [0, 1] {
        let d = generate(&Params::new(Unit::LnsMul, "lns:4:4".parse().unwrap()).stages(stages))
            .unwrap();
        let out = common::simulate(&d, &["a", "b", "div"], &["y"], &vectors);
        assert_eq!(out.len(), vectors.len(), "stages {stages}");
        for (v, o) in vectors.iter().zip(&out) {
            let want = if v[2] == 1 {
                l.div(v[0], v[1])
            } else {
                l.mul(v[0], v[1])
            };
            assert_eq!(
                o[0], want,
                "stages {stages}: a={:#x} b={:#x} div={}",
                v[0], v[1], v[2]
            );
        }
    }
}
