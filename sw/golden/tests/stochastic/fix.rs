//! The fix family's stochastic rounding, on the two's complement value, against a
//! reference in big integers; and exact ratios into both families.

use lpgen_golden::exact::Ratio;
use lpgen_golden::fixed::round_shift;
use lpgen_golden::rounding::{Draw, RoundedOps, Rounder, Rounding};
use lpgen_golden::{BinOp, Family, FixFormat, Format};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::float_ref::{f64_parts, golden, p, signed};
use crate::RefGen;

/// fix:I:F's word of (−1)^neg·num/den by the rule on the two's complement value v·2^F: the
/// floor k and the fraction rem/den of one last place; step iff floor(frac·2^R) + r ≥ 2^R;
/// then saturate.
pub fn fix_round(i: u32, fb: u32, v: (BigInt, BigInt), draw: (u32, u32)) -> u64 {
    let (num, den) = v;
    let scaled = num << fb as usize;
    let (k, rem) = scaled.div_mod_floor(&den);
    let (bits, r) = draw;
    let d: BigInt = (rem << bits as usize) / &den;
    let k = if d + r >= BigInt::one() << bits as usize {
        k + 1
    } else {
        k
    };
    let w = 1 + i + fb;
    let (lo, hi) = (
        -(BigInt::one() << (w - 1) as usize),
        (BigInt::one() << (w - 1) as usize) - 1,
    );
    let k = k.clamp(lo, hi).to_i64().unwrap();
    (k as u64) & ((1 << w) - 1)
}

fn fix_value(i: u32, fb: u32, a: u64) -> BigInt {
    let w = 1 + i + fb;
    let sh = 64 - w;
    BigInt::from(((a << sh) as i64) >> sh)
}

fn fix_format(s: &str) -> FixFormat {
    match s.parse::<Format>().unwrap() {
        Format::Fix(f) => f,
        _ => unreachable!(),
    }
}

/// Every pair of fix:3:4 (mul, div) and of fix:0:7 (mul), random f64 values into fix:7:8
/// and fix:15:16, and every fix:3:4 word into fix:2:1: the golden results equal the rule on
/// the exact value with the reference generator's draws.
#[test]
fn fix_rounds_its_twos_complement_value_by_the_rule() {
    for (spec, i, fb, bits) in [("fix:3:4", 3, 4, 3), ("fix:0:7", 0, 7, 8)] {
        let f = fix_format(spec);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 5);
        let mut gen = RefGen::new(5);
        let mut stepped = 0;
        for a in 0..256u64 {
            for b in 0..256u64 {
                let (x, y) = (fix_value(i, fb, a), fix_value(i, fb, b));
                // a·b: (x·y)/2^(2F) → num/den with den > 0.
                let got = f.mul_with(a, b, &mut rounder);
                let r = gen.draw(bits);
                let want = fix_round(
                    i,
                    fb,
                    (&x * &y, BigInt::one() << (2 * fb) as usize),
                    (bits, r),
                );
                assert_eq!(got, want, "{spec} mul {a:#x} {b:#x}");
                stepped += u32::from(got != f.mul(a, b));
                if spec == "fix:3:4" {
                    let got = f.div_with(a, b, &mut rounder);
                    let r = gen.draw(bits);
                    let want = if y.is_zero() {
                        f.div(a, b) // saturation with x's sign, 0/0 = 0: no rounding
                    } else {
                        let (n, d) = if y.is_negative() {
                            (-&x, -&y)
                        } else {
                            (x.clone(), y.clone())
                        };
                        fix_round(i, fb, (n, d), (bits, r))
                    };
                    assert_eq!(got, want, "{spec} div {a:#x} {b:#x}");
                }
                // add and sub do not round: the same words, no draw.
                assert_eq!(f.binop_with(BinOp::Add, a, b, &mut rounder), f.add(a, b));
            }
        }
        assert!(stepped > 1000, "{spec}: {stepped}");
    }
    let mut rng = Pcg64::seed_from_u64(8);
    for (spec, i, fb, bits) in [
        ("fix:7:8", 7, 8, 12),
        ("fix:15:16", 15, 16, 32),
        ("fix:0:30", 0, 30, 7),
    ] {
        let f = fix_format(spec);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 6);
        let mut gen = RefGen::new(6);
        for _ in 0..20_000 {
            let x = match rng.gen_range(0..4) {
                0 => f64::from_bits(rng.gen()),
                _ => rng.gen_range(-1.0..1.0) * (rng.gen_range(-40..20) as f64).exp2(),
            };
            let got = f.from_f64_with(x, &mut rounder);
            let r = gen.draw(bits);
            let want = if x.is_nan() {
                0
            } else if x.is_infinite() {
                f.from_f64(x)
            } else {
                let (neg, n, e) = f64_parts(x);
                let n = signed(neg, BigInt::from(n));
                let (num, den) = if e >= 0 {
                    (n << e as usize, BigInt::one())
                } else {
                    (n, BigInt::one() << (-e) as usize)
                };
                fix_round(i, fb, (num, den), (bits, r))
            };
            assert_eq!(got, want, "{spec} {x:e}");
        }
    }
    let (from, to) = (fix_format("fix:3:4"), fix_format("fix:2:1"));
    let mut rounder = Rounder::new(Rounding::Stochastic(2), 4);
    let mut gen = RefGen::new(4);
    for a in 0..256u64 {
        let got = from.convert_with(&to, a, &mut rounder);
        let want = fix_round(
            2,
            1,
            (fix_value(3, 4, a), BigInt::from(16)),
            (2, gen.draw(2)),
        );
        assert_eq!(got, want, "fix:3:4 {a:#x} -> fix:2:1");
    }
}

/// fix: exactly d of the 2^R draws step, for positive and negative values (d from the
/// two's complement discarded bits), and the mean of many roundings is unbiased.
#[test]
fn fix_steps_for_exactly_d_draws_and_is_unbiased() {
    let f = fix_format("fix:7:8");
    // Products a·b with 8 discarded bits (R = 3 and 12: longer and shorter than them).
    for (a, b) in [
        (0x0123u64, 0x0045u64),
        (0xfedc, 0x0045),
        (0x0100, 0x0080),
        (0xff01, 0x00ff),
    ] {
        let p = f.to_int(a) as i128 * f.to_int(b) as i128;
        let disc = p.rem_euclid(256) as u32;
        for bits in [3u32, 12] {
            let d = (disc << bits) >> 8;
            let mut ups = 0;
            for r in 0..1u32 << bits {
                let w = f.from_int(round_shift(p, 8, Draw::Stochastic { bits, r }));
                if w != f.from_int(p.div_euclid(256)) {
                    ups += 1;
                    assert!(r >= (1 << bits) - d);
                }
            }
            assert_eq!(ups, d, "{a:#x}·{b:#x} R={bits}");
        }
    }
    // Unbiased: x = −0.3 in fix:7:8 (−76.8 last places): the mean of 10^5 roundings.
    let mut r = Rounder::new(Rounding::Stochastic(16), 12);
    let n = 100_000;
    let mean = (0..n)
        .map(|_| f.to_f64(f.from_f64_with(-0.3, &mut r)))
        .sum::<f64>()
        / n as f64;
    let ulp = 1.0 / 256.0;
    assert!(((mean + 0.3) / ulp).abs() < 0.01, "{mean}");
    assert!((f.to_f64(f.from_f64(-0.3)) + 0.3).abs() / ulp > 0.15);
}

/// Exact ratios (the command line's decimal operands) round by the rule: random p/q into
/// bf16, fp8:e5m2 and fix:7:8, fix:3:4, one stream per format.
#[test]
fn ratios_round_by_the_rule() {
    let mut rng = Pcg64::seed_from_u64(21);
    let ratio = |rng: &mut Pcg64| {
        let (n, d) = (rng.gen_range(1..60), rng.gen_range(1..60));
        Ratio {
            neg: rng.gen(),
            num: BigUint::from(rng.gen_range(0u64..1 << n)),
            den: BigUint::from(rng.gen_range(1u64..1 << d)),
        }
    };
    for (p, bits) in [
        (p("bf16", 8, 7, false, false, false), 13),
        (p("fp8:e5m2", 5, 2, false, false, false), 32),
    ] {
        let f = golden(&p);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 77);
        let mut gen = RefGen::new(77);
        for _ in 0..5000 {
            let x = ratio(&mut rng);
            let got = f.from_ratio_with(&x, &mut rounder);
            let want = p.round(x.neg, &x.num, &x.den, Some((bits, gen.draw(bits))));
            assert_eq!(got, want, "{} {x:?}", p.name);
        }
    }
    for (spec, i, fb, bits) in [("fix:7:8", 7, 8, 9), ("fix:3:4", 3, 4, 32)] {
        let f = fix_format(spec);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 78);
        let mut gen = RefGen::new(78);
        for _ in 0..5000 {
            let x = ratio(&mut rng);
            let got = f.from_ratio_with(&x, &mut rounder);
            let num = signed(x.neg, BigInt::from(x.num.clone()));
            let want = fix_round(
                i,
                fb,
                (num, BigInt::from(x.den.clone())),
                (bits, gen.draw(bits)),
            );
            assert_eq!(got, want, "{spec} {x:?}");
        }
    }
}
