//! The float family's stochastic rounding against the reference ([`crate::float_ref`]).

use lpgen_golden::float::FloatFormat;
use lpgen_golden::rounding::{Draw, Rounder, Rounding};
use lpgen_golden::Family;
use lpgen_golden::Format;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::float_ref::{golden, p, signed, EIGHT_BIT, P, V};
use crate::RefGen;

/// Every pair of every 8-bit format, add and mul, one rounder per format and op (seed 11):
/// the golden result equals the reference's with the reference generator's draw, pair by
/// pair; and `nearest` is the reference's nearest.
#[test]
fn every_8_bit_pair_adds_and_multiplies_by_the_rule() {
    for (p, bits) in EIGHT_BIT {
        let f = golden(&p);
        for op in ["add", "mul"] {
            let mut rounder = Rounder::new(Rounding::Stochastic(bits), 11);
            let mut gen = RefGen::new(11);
            // Results other than nearest's, and results stepped up from the truncation.
            let (mut ups, mut stepped) = (0u32, 0u32);
            for a in 0..256u64 {
                for b in 0..256u64 {
                    let (got, near) = match op {
                        "add" => (f.add_with(a, b, &mut rounder), f.add(a, b)),
                        _ => (f.mul_with(a, b, &mut rounder), f.mul(a, b)),
                    };
                    let draw = Some((bits, gen.draw(bits)));
                    let (want, want_near) = match op {
                        "add" => (
                            p.add(p.val(a), p.val(b), draw),
                            p.add(p.val(a), p.val(b), None),
                        ),
                        _ => (
                            p.mul(p.val(a), p.val(b), draw),
                            p.mul(p.val(a), p.val(b), None),
                        ),
                    };
                    assert_eq!(got, want, "{} {op} {a:#04x} {b:#04x} R={bits}", p.name);
                    assert_eq!(near, want_near, "{} {op} {a:#04x} {b:#04x}", p.name);
                    ups += u32::from(got != near);
                    stepped += u32::from(got != p.round_exact(op, a, b));
                }
            }
            // The test meets results that round both ways.
            assert!(
                ups > 1000 && stepped > 1000,
                "{} {op}: {ups} {stepped}",
                p.name
            );
        }
    }
}

impl P {
    /// The result truncated (r = 0 never steps): to tell inexact results apart.
    fn round_exact(&self, op: &str, a: u64, b: u64) -> u64 {
        let draw = Some((1, 0));
        match op {
            "add" => self.add(self.val(a), self.val(b), draw),
            _ => self.mul(self.val(a), self.val(b), draw),
        }
    }
}

/// A reference operation awaiting its draw.
type RefOp<'a> = Box<dyn Fn(Option<(u32, u32)>) -> u64 + 'a>;

/// Random words of a wide format, with its corners mixed in.
fn random_word(p: &P, rng: &mut Pcg64) -> u64 {
    let w = 1 + p.e + p.m;
    let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
    match rng.gen_range(0..10) {
        0 => rng.gen::<u64>() & ((1 << p.m) - 1) | (rng.gen::<u64>() & p.sign()), // subnormal
        1 => p.max(rng.gen()) ^ (rng.gen::<u64>() & 3),
        2 => p.nan() ^ (rng.gen::<u64>() & p.sign()),
        _ => rng.gen::<u64>() & mask,
    }
}

/// bf16 and float:11:52 (binary64's shape, so the quotient and the sum must carry R = 32
/// exact bits below 53): random pairs and triples, every rounding operation, one stream.
#[test]
fn random_wide_operands_round_by_the_rule() {
    let wide = [
        (p("bf16", 8, 7, false, false, false), 5, 20_000),
        (p("bf16", 8, 7, false, false, false), 32, 10_000),
        (p("float:11:52", 11, 52, false, false, false), 32, 10_000),
        (p("float:8:23:fn:sat", 8, 23, true, true, false), 17, 5_000),
    ];
    for (p, bits, n) in wide {
        let f = golden(&p);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 2024);
        let mut gen = RefGen::new(2024);
        let mut rng = Pcg64::seed_from_u64(5);
        for i in 0..n {
            let (a, b, c) = (
                random_word(&p, &mut rng),
                random_word(&p, &mut rng),
                random_word(&p, &mut rng),
            );
            let (va, vb, vc) = (p.val(a), p.val(b), p.val(c));
            let checks: [(&str, u64, RefOp); 5] = [
                (
                    "add",
                    f.add_with(a, b, &mut rounder),
                    Box::new(|d| p.add(va.clone(), vb.clone(), d)),
                ),
                (
                    "sub",
                    f.sub_with(a, b, &mut rounder),
                    Box::new(|d| p.add(va.clone(), p.val(b ^ p.sign()), d)),
                ),
                (
                    "mul",
                    f.mul_with(a, b, &mut rounder),
                    Box::new(|d| p.mul(va.clone(), vb.clone(), d)),
                ),
                (
                    "div",
                    f.div_with(a, b, &mut rounder),
                    Box::new(|d| p.div(va.clone(), vb.clone(), d)),
                ),
                (
                    "fma",
                    f.fma_with(a, b, c, &mut rounder),
                    Box::new(|d| p.fma(va.clone(), vb.clone(), vc.clone(), d)),
                ),
            ];
            for (op, got, want) in checks {
                let want = want(Some((bits, gen.draw(bits))));
                assert_eq!(
                    got, want,
                    "{} {op} {a:#x} {b:#x} {c:#x} R={bits} #{i}",
                    p.name
                );
            }
            // A conversion from f64: a random value in (or just past) the format's range.
            let x = f64::from_bits(rng.gen());
            let got = f.from_f64_with(x, &mut rounder);
            assert_eq!(
                got,
                p.round_f64(x, Some((bits, gen.draw(bits)))),
                "{} {x:e}",
                p.name
            );
            let y = rng.gen_range(-1.0..1.0) * (rng.gen_range(-150..130) as f64).exp2();
            let got = f.from_f64_with(y, &mut rounder);
            assert_eq!(
                got,
                p.round_f64(y, Some((bits, gen.draw(bits)))),
                "{} {y:e}",
                p.name
            );
        }
    }
}

/// A conversion among floats takes one draw and rounds by the rule: every f16 word into
/// fp8:e4m3 and fp8:e5m2.
#[test]
fn conversions_among_floats_round_by_the_rule() {
    let from = golden(&p("f16", 5, 10, false, false, false));
    let pf = p("f16", 5, 10, false, false, false);
    for (to_p, bits) in [
        (p("fp8:e4m3", 4, 3, true, false, false), 4),
        (p("fp8:e5m2", 5, 2, false, false, false), 9),
    ] {
        let to = golden(&to_p);
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 3);
        let mut gen = RefGen::new(3);
        for a in 0..1u64 << 16 {
            let got = from.convert_with(&to, a, &mut rounder);
            let draw = Some((bits, gen.draw(bits)));
            let want = match pf.val(a) {
                V::Nan => to_p.nan(),
                V::Inf(neg) => to_p.infinite(neg),
                V::Fin(s, n, x) => to_p.round_dy(&signed(s, n), x, draw, s),
            };
            assert_eq!(got, want, "f16 {a:#06x} -> {}", to_p.name);
        }
    }
}

/// For values whose discarded part has top R bits d (discarded parts shorter than R, longer
/// than R with bits below the top R, subnormal, below the smallest subnormal, at the
/// overflow edge), exactly d of the 2^R draws step away from zero.
#[test]
fn exactly_d_of_the_2_to_the_r_draws_step() {
    let f: FloatFormat = match "fp8:e4m3".parse::<Format>().unwrap() {
        Format::Float(f) => f,
        _ => unreachable!(),
    };
    // (sig, exp): the value sig·2^exp; its last place 2^lsb; d is computed from the bits.
    let cases: [(u128, i64); 7] = [
        (0b1011_0110, -7),       // 1.0110110: s = 4 discarded bits 0110
        (0b1_0011, -4),          // 1.0011: s = 1 discarded bit
        (0b1111_1011_0111, -11), // s = 8: 1011_0111
        (0b101_1011, -16),       // subnormal (emin − M = −9): s = 7
        (0b1011, -14),           // below the smallest subnormal 2^−9: s = 5
        (0b1110_1101, 1),        // 464 = 448 + 16: past max finite, steps to NaN
        (0b1100_0000, -7),       // exact: d = 0
    ];
    for bits in [1u32, 3, 8, 12] {
        for &(sig, exp) in &cases {
            let top = exp + 127 - i64::from(sig.leading_zeros());
            let lsb = (top - 3).max(-9);
            let s = (lsb - exp).max(0) as u32;
            let disc = sig & ((1 << s) - 1);
            // d = floor(disc / 2^s · 2^R), written out.
            let d = ((disc << bits) >> s) as u32;
            let down = f.round_with(false, sig, exp, Draw::Stochastic { bits, r: 0 });
            let mut ups = 0;
            for r in 0..1u32 << bits {
                let w = f.round_with(false, sig, exp, Draw::Stochastic { bits, r });
                if w != down {
                    ups += 1;
                    // Up is the next code (magnitude + 1), or the overflow word.
                    assert!(w == down + 1, "{sig:#b}·2^{exp}: {down:#x} -> {w:#x}");
                    assert!(r >= (1 << bits) - d, "steps only for r >= 2^R - d");
                }
                // Negative values: the same decision, on the magnitude.
                // (The overflow word of fp8:e4m3 is its one NaN, 0x7f, for either sign.)
                let wn = f.round_with(true, sig, exp, Draw::Stochastic { bits, r });
                assert_eq!(wn, if w == 0x7f { w } else { w | 0x80 });
            }
            assert_eq!(ups, d, "{sig:#b}·2^{exp} R={bits}");
        }
    }
}

/// Unbiased: the mean of many stochastic roundings of x is x within a stated tolerance,
/// while nearest's is off by the discarded part; and a long sum of small terms, which
/// nearest cannot grow, reaches its true value.
#[test]
fn stochastic_rounding_is_unbiased_where_nearest_is_not() {
    let f: FloatFormat = match "bf16".parse::<Format>().unwrap() {
        Format::Float(f) => f,
        _ => unreachable!(),
    };
    let ulp = 2f64.powi(-7);
    // x = 1 + ulp/3: nearest gives 1 every time (bias −ulp/3).
    let x = 1.0 + ulp / 3.0;
    let n = 200_000;
    let mut r = Rounder::new(Rounding::Stochastic(16), 99);
    let mean = (0..n)
        .map(|_| f.to_f64(f.from_f64_with(x, &mut r)))
        .sum::<f64>()
        / n as f64;
    // σ of one rounding ≈ ulp·√(p(1−p)) = 0.47 ulp; of the mean 0.47/√n ≈ 0.001 ulp. The
    // tolerance 0.01 ulp is ten σ plus the 2^−16 ulp the R = 16 cut may lose.
    assert!(((mean - x) / ulp).abs() < 0.01, "mean {mean} vs {x}");
    assert!((f.to_f64(f.from_f64(x)) - x).abs() / ulp > 0.3);
    // 1 + 4096 · 2^−9 = 9: nearest stays at 1 (each term is a quarter of 1's last place).
    let term = f.from_f64(2f64.powi(-9));
    let (mut near, mut sto) = (f.one(), f.one());
    let mut r = Rounder::new(Rounding::Stochastic(8), 1);
    for _ in 0..4096 {
        near = f.add(near, term);
        sto = f.add_with(sto, term, &mut r);
    }
    assert_eq!(f.to_f64(near), 1.0);
    // Past 2 the terms are an eighth of the last place (and less past 4, 8): the sum's σ
    // stays under 0.2; 0.5 is more than two last places at 9 (0.0625 each).
    assert!((f.to_f64(sto) - 9.0).abs() < 0.5, "{}", f.to_f64(sto));
}

/// Fix to float through `alu::convert_with` (the `convert` unit's pair): one draw per word and
/// the rule on the two's-complement value v·2^−F, every word of fix:7:8 into fp8:e4m3, bf16 and
/// fp8:e5m2:sat; a nearest rounder converts as `alu::convert`; float to fix and pairs of other
/// families are refused in one line under stochastic rounding.
#[test]
fn fix_to_float_conversions_round_by_the_rule() {
    use lpgen_golden::alu::{convert, convert_with};
    let from: Format = "fix:7:8".parse().unwrap();
    for (to_p, bits) in [
        (p("fp8:e4m3", 4, 3, true, false, false), 5),
        (p("bf16", 8, 7, false, false, false), 13),
        (p("fp8:e5m2:sat", 5, 2, false, true, false), 2),
    ] {
        let to = Format::Float(golden(&to_p));
        let (fc, tc) = (from.calc(), to.calc());
        let mut rounder = Rounder::new(Rounding::Stochastic(bits), 9);
        let mut nearest = Rounder::new(Rounding::Nearest, 0);
        let mut gen = RefGen::new(9);
        for a in 0..1u64 << 16 {
            let got = convert_with(&fc, &tc, a, &mut rounder).unwrap();
            let v = i64::from(a as u16 as i16);
            let draw = Some((bits, gen.draw(bits)));
            let want = to_p.round_dy(&BigInt::from(v), -8, draw, false);
            assert_eq!(got, want, "fix:7:8 {a:#06x} -> {}", to_p.name);
            let near = convert_with(&fc, &tc, a, &mut nearest).unwrap();
            assert_eq!(near, convert(&fc, &tc, a));
        }
    }
    let mut r = Rounder::new(Rounding::Stochastic(8), 1);
    for (f, t) in [
        ("bf16", "fix:7:8"),
        ("posit:16:1", "posit:8:2"),
        ("fix:7:8", "fix:3:4"),
    ] {
        let (f, t): (Format, Format) = (f.parse().unwrap(), t.parse().unwrap());
        let e = convert_with(&f.calc(), &t.calc(), 1, &mut r).unwrap_err().0;
        assert!(e.contains("to float formats") && !e.contains('\n'), "{e}");
    }
}
