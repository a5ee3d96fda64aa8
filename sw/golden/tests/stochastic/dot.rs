//! The exact accumulator's read-out under stochastic rounding (`Calc::dot_exact_with`, the
//! training's products): the exact Σ a_k·b_k summed here in big integers, rounded once by
//! the rule with the reference generator's draw, one draw per dot product.

use lpgen_golden::rounding::{Rounder, Rounding};
use lpgen_golden::{Format, SumMode};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::float_ref::{p, signed, V};
use crate::RefGen;

/// Random finite words of fp8:e4m3 and bf16, dots of 1 to 40 terms (products of every
/// binade, cancellations): the golden read-out equals the rule applied to the exact sum;
/// with nearest it is the family's exact dot; and some read-outs differ from nearest's.
#[test]
fn float_exact_dots_round_once_by_the_rule() {
    for (fp, bits) in [
        (p("fp8:e4m3", 4, 3, true, false, false), 3),
        (p("bf16", 8, 7, false, false, false), 16),
    ] {
        let f: Format = fp.name.parse().unwrap();
        let c = f.calc();
        let mut rng = Pcg64::seed_from_u64(21);
        let mut gen = RefGen::new(9);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 9);
        let mut moved = 0;
        for _ in 0..3000 {
            let k = rng.gen_range(1..=40);
            let mut word = || loop {
                let w = rng.gen::<u64>() & ((1 << (1 + fp.e + fp.m)) - 1);
                if matches!(fp.val(w), V::Fin(..)) {
                    return w;
                }
            };
            let a: Vec<u64> = (0..k).map(|_| word()).collect();
            let b: Vec<u64> = (0..k).map(|_| word()).collect();
            // Σ at the exponent of the smallest product's last place: 2·(emin − M).
            let x0 = 2 * (fp.emin() - i64::from(fp.m));
            let mut sum = BigInt::from(0);
            for (&u, &v) in a.iter().zip(&b) {
                if let V::Fin(s, n, x) = fp.product(fp.val(u), fp.val(v)) {
                    sum += signed(s, n) << (x - x0) as usize;
                }
            }
            let want = fp.round_dy(&sum, x0, Some((bits, gen.draw(bits))), false);
            let got = c.dot_exact_with(&a, &b, &mut rounder).unwrap();
            assert_eq!(got, want, "{} a={a:x?} b={b:x?}", fp.name);
            let nearest = c.dot(SumMode::Quire, &a, &b).unwrap();
            assert_eq!(fp.round_dy(&sum, x0, None, false), nearest, "{}", fp.name);
            moved += usize::from(got != nearest);
        }
        assert!(
            moved > 50,
            "{}: only {moved} read-outs left nearest",
            fp.name
        );
    }
}

/// fix:3:4 and fix:7:8: the wide accumulator's sum read out by the rule on its two's
/// complement value (floor, plus one last place iff d + r ≥ 2^R), saturating.
#[test]
fn fix_exact_dots_round_once_by_the_rule() {
    for (i, fb, bits) in [(3u32, 4u32, 4u32), (7, 8, 12)] {
        let f: Format = format!("fix:{i}:{fb}").parse().unwrap();
        let c = f.calc();
        let w = 1 + i + fb;
        let mut rng = Pcg64::seed_from_u64(5);
        let mut gen = RefGen::new(3);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 3);
        let mut moved = 0;
        for _ in 0..3000 {
            let k = rng.gen_range(1..=30);
            // Words within ±2 (and any word one time in eight), so that most sums fit.
            let mut word = || {
                let x = if rng.gen_range(0..8) == 0 {
                    rng.gen::<i64>()
                } else {
                    rng.gen_range(-(2i64 << fb)..(2i64 << fb))
                };
                x as u64 & ((1 << w) - 1)
            };
            let a: Vec<u64> = (0..k).map(|_| word()).collect();
            let b: Vec<u64> = (0..k).map(|_| word()).collect();
            let value = |x: u64| BigInt::from(((x << (64 - w)) as i64) >> (64 - w));
            let sum: BigInt = a.iter().zip(&b).map(|(&x, &y)| value(x) * value(y)).sum();
            // sum / 2^(2F) as a ratio; fix_round takes value·2^F's numerator and denominator.
            let den = BigInt::from(1) << (2 * fb) as usize;
            let want =
                crate::fix::fix_round(i, fb, (sum.clone(), den.clone()), (bits, gen.draw(bits)));
            let got = c.dot_exact_with(&a, &b, &mut rounder).unwrap();
            assert_eq!(got, want, "fix:{i}:{fb} a={a:x?} b={b:x?}");
            moved += usize::from(got != c.dot(SumMode::Quire, &a, &b).unwrap());
        }
        assert!(moved > 50, "fix:{i}:{fb}: only {moved} moved");
    }
}

/// Formats without stochastic rounding refuse the read-out in one line.
#[test]
fn families_without_stochastic_rounding_refuse_the_read_out() {
    for s in ["posit:8", "lns:5:6"] {
        let c = s.parse::<Format>().unwrap().calc();
        let e = c
            .dot_exact_with(&[0], &[0], &mut Rounder::new(Rounding::Stochastic(4), 1))
            .unwrap_err()
            .0;
        assert!(!e.contains('\n') && e.contains("stochastic"), "{s}: {e}");
    }
}
