use super::*;
use crate::family::Format;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// The whole product on operands decoded once (`dots_in_format`, what training's
/// products run) is `dot_in_format` element by element: random words (NaN, ∞, subnormals
/// and zeros among them), lengths that are and are not multiples of L and of the
/// promotion interval, every preset's fp8 and 16-bit chunkings, tf32 reading and RNE f16.
#[test]
fn the_whole_product_is_the_dot_product_of_each_row_and_column() {
    let mut rng = Pcg64::seed_from_u64(49);
    for (mode, fmt) in [
        ("fdpa:hopper", "fp8:e4m3"),
        ("fdpa:hopper:promote64", "fp8:e5m2"),
        ("fdpa:ampere", "float:8:23"),
        ("fdpa:blackwell", "bf16"),
        ("fdpa:4:10:rne-f16", "f16"),
    ] {
        let Ok(Format::Float(f)) = fmt.parse::<Format>() else {
            panic!("{fmt} is a float format")
        };
        let plan = Fdpa::parse(mode).unwrap().plan(&f).unwrap();
        for len in [1, 5, 32, 70] {
            let word = |rng: &mut Pcg64| rng.gen::<u64>() & ((1 << f.width()) - 1);
            let mat = |rng: &mut Pcg64, n: usize| -> Vec<Vec<Bits>> {
                (0..n)
                    .map(|_| (0..len).map(|_| word(rng)).collect())
                    .collect()
            };
            let (rows, cols) = (mat(&mut rng, 4), mat(&mut rng, 3));
            let r: Vec<&[Bits]> = rows.iter().map(|v| v.as_slice()).collect();
            let c: Vec<&[Bits]> = cols.iter().map(|v| v.as_slice()).collect();
            let got = plan.dots_in_format(&r, &c);
            for (e, g) in got.iter().enumerate() {
                let want = plan.dot_in_format(r[e / 3], c[e % 3]);
                assert_eq!(*g, want, "{mode} {fmt} len {len} element {e}");
            }
        }
    }
}
