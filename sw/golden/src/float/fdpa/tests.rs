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

/// The output formats written as constants are `FloatFormat::new`'s.
#[test]
fn the_output_formats_are_binary32_and_binary16() {
    assert_eq!(
        BINARY32,
        FloatFormat::new(8, 23, false, false, false).unwrap()
    );
    assert_eq!(
        BINARY16,
        FloatFormat::new(5, 10, false, false, false).unwrap()
    );
}

/// A word of `f` that is finite: zero, subnormal or normal in about equal parts, its
/// exponent field from `band` (a few binades, so that terms align and cancel) or anywhere.
fn finite_word(rng: &mut Pcg64, f: &FloatFormat, band: Option<u64>) -> Bits {
    let (e_bits, m) = (u64::from(f.exp_bits), u64::from(f.frac_bits));
    loop {
        let field = match rng.gen_range(0..8) {
            0 => 0,
            1 => rng.gen_range(0..(1 << e_bits)),
            _ => match band {
                Some(b) => b + rng.gen_range(0..3),
                None => rng.gen_range(1..(1 << e_bits)),
            },
        };
        let frac = match field {
            0 if rng.gen_bool(0.5) => 0,
            _ => rng.gen::<u64>() & ((1 << m) - 1),
        };
        let w = (u64::from(rng.gen_bool(0.5)) << (e_bits + m)) | (field << m) | frac;
        if matches!(f.decode(w), Val::Fin(_)) {
            return w;
        }
    }
}

/// The i64 lanes that every preset takes (`dots_on_lanes`) give `dot`'s output words:
/// finite operands of every kind (zeros, subnormals, products of all exponents and of a
/// few binades, which cancel to zero and leave e_zero the largest), columns that are rows
/// negated, lengths about L and the promotion interval, and lines with a NaN or ∞ among
/// finite ones (the steps' own path).
#[test]
fn the_lanes_are_the_steps() {
    let mut rng = Pcg64::seed_from_u64(0x4945);
    for (mode, fmt) in [
        ("fdpa:hopper", "fp8:e4m3"),
        ("fdpa:hopper:promote64", "fp8:e5m2"),
        ("fdpa:ada", "fp8:e4m3"),
        ("fdpa:blackwell", "fp8:e5m2"),
        ("fdpa:ampere", "bf16"),
        ("fdpa:hopper:promote32", "bf16"),
        ("fdpa:volta", "f16"),
        ("fdpa:ampere", "float:8:23"),
        ("fdpa:4:10:rne-f16", "f16"),
        ("fdpa:3:2:rz-f32", "bf16"),
        ("fdpa:8:30:rz-e8m13", "f16"),
    ] {
        let Ok(Format::Float(f)) = fmt.parse::<Format>() else {
            panic!("{fmt} is a float format")
        };
        let plan = Fdpa::parse(mode).unwrap().plan(&f).unwrap();
        assert!(plan.fits_i64(), "{mode} on {fmt} takes the lanes");
        let top = (1 << f.exp_bits) - 4;
        for len in [1, 3, 31, 32, 33, 65, 130] {
            for round in 0..12 {
                let band = match round % 3 {
                    0 => None,
                    1 => Some(rng.gen_range(1..top)),
                    _ => Some(1),
                };
                let mut mat = |n: usize| -> Vec<Vec<Bits>> {
                    (0..n)
                        .map(|_| (0..len).map(|_| finite_word(&mut rng, &f, band)).collect())
                        .collect()
                };
                let (rows, mut cols) = (mat(3), mat(3));
                let sign = 1 << (f.width() - 1);
                cols[0] = rows[0].iter().rev().map(|w| w ^ sign).collect();
                cols[1] = rows[1].iter().map(|w| w ^ sign).collect();
                if round == 11 {
                    let special = [f.nan(), f.infinite(false), f.infinite(true)][len % 3];
                    cols[2][len / 2] = special;
                }
                let r: Vec<&[Bits]> = rows.iter().map(|v| v.as_slice()).collect();
                let c: Vec<&[Bits]> = cols.iter().map(|v| v.as_slice()).collect();
                let got = plan.dots(&r, &c);
                for (e, g) in got.iter().enumerate() {
                    let want = plan.dot(r[e / 3], c[e % 3], 0);
                    assert_eq!(*g, want, "{mode} {fmt} len {len} round {round} element {e}");
                }
            }
        }
    }
    // Chunkings whose sums outgrow an i64 keep the steps.
    let f = FloatFormat::new(8, 23, false, false, false).unwrap();
    let wide = Fdpa::parse("fdpa:4:64:rz-f32").unwrap().plan(&f).unwrap();
    assert!(!wide.fits_i64());
}
