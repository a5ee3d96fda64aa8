//! Unit tests of the float family's rules; tests/float_reference.rs checks the arithmetic
//! against references written apart from this module.

use super::*;
use crate::family_trait::Family;
use crate::{Format, SumMode};

fn fmt(s: &str) -> FloatFormat {
    match s.parse::<Format>() {
        Ok(Format::Float(f)) => f,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn names_parse_to_the_same_format_and_print_as_the_name() {
    for (name, long) in [
        ("bf16", "float:8:7"),
        ("f16", "float:5:10"),
        ("fp8:e4m3", "float:4:3:fn"),
        ("fp8:e5m2", "float:5:2"),
        ("bf16:sat:ftz", "float:8:7:ftz:sat"),
        ("fp8:e4m3:sat", "float:4:3:sat:fn"),
    ] {
        assert_eq!(fmt(name), fmt(long), "{name}");
        assert_eq!(fmt(long).to_string(), name);
    }
    for s in [
        "float:8:23",
        "float:3:4",
        "float:4:3",
        "float:5:2:fn",
        "float:2:5:ftz",
    ] {
        assert_eq!(fmt(s).to_string(), s);
    }
    assert_eq!(fmt("float:8:23").width(), 32);
    assert_eq!(fmt("float:11:52").width(), 64);
}

#[test]
fn refusals_are_one_line() {
    for s in [
        "float:0:3",
        "float:1:3",
        "float:12:60",
        "float:12:3",
        "float:8:0",
        "float:8:53",
        "float:11:53",
        "float:11:52:fn",
        "fp8:e3m5",
        "fp8",
        "bf16:u",
        "float:8:7:u",
        "float:8:7:xyz",
        "float:8:7:sat:sat",
        "fp8:e4m3:fn",
        "float:8",
        "float:a:7",
        "float",
    ] {
        let e = s.parse::<Format>().unwrap_err().0;
        assert!(!e.contains('\n') && !e.is_empty(), "{s}: {e}");
    }
    let e = "bf16:u".parse::<Format>().unwrap_err().0;
    assert!(e.contains("posits only"), "{e}");
}

#[test]
fn encodings_of_the_named_formats() {
    let bf = fmt("bf16");
    assert_eq!(bf.from_f64(1.0), 0x3f80);
    assert_eq!(bf.nan(), 0x7fc0);
    assert_eq!(bf.from_f64(f64::INFINITY), 0x7f80);
    assert_eq!(bf.max_finite(true), 0xff7f);
    let h = fmt("f16");
    assert_eq!(h.from_f64(65504.0), 0x7bff);
    assert_eq!(h.from_f64(65520.0), 0x7c00); // the tie above max rounds to ∞
    assert_eq!(h.from_f64(65519.99), 0x7bff);
    assert_eq!(h.from_f64(2f64.powi(-24)), 1);
    assert_eq!(h.from_f64(2f64.powi(-25)), 0); // tie to even: 0
    assert_eq!(h.from_f64(-2f64.powi(-25) * 1.5), 0x8001);
    let e4 = fmt("fp8:e4m3");
    assert_eq!(e4.from_f64(448.0), 0x7e);
    assert_eq!(e4.from_f64(464.0), 0x7e); // tie between 448 (even) and the NaN code
    assert_eq!(e4.from_f64(465.0), 0x7f); // overflow: NaN
    assert_eq!(e4.from_f64(-1e9), 0x7f);
    assert_eq!(e4.from_f64(f64::NEG_INFINITY), 0x7f);
    assert!(e4.is_nan(0xff) && e4.is_nan(0x7f) && !e4.is_nan(0x7e) && !e4.is_nan(0x78));
    assert_eq!(e4.to_f64(0x78), 256.0);
    assert_eq!(e4.to_f64(0x01), 2f64.powi(-9));
    let e4s = fmt("fp8:e4m3:sat");
    assert_eq!(e4s.from_f64(1e9), 0x7e);
    assert_eq!(e4s.from_f64(f64::NEG_INFINITY), 0xfe);
    assert_eq!(e4s.div(e4s.one(), 0), 0x7e);
    let e5 = fmt("fp8:e5m2");
    assert_eq!(e5.from_f64(57344.0), 0x7b);
    assert_eq!(e5.from_f64(1e6), 0x7c);
    assert_eq!(e5.nan(), 0x7e);
}

#[test]
fn ftz_flushes_operands_and_results() {
    let f = fmt("float:5:10:ftz");
    let min_normal = f.from_f64(2f64.powi(-14));
    assert_eq!(min_normal, 0x0400);
    assert_eq!(f.to_f64(0x8001), 0.0);
    assert!(f.to_f64(0x8001).is_sign_negative());
    assert_eq!(f.add(0x0001, 0x0001), 0);
    assert_eq!(f.add(0x8001, 0x8000), 0x8000);
    assert_eq!(f.mul(min_normal, f.from_f64(0.5)), 0);
    // Below 2^−14 but rounding to it at 11 bits: kept.
    assert_eq!(f.from_f64(2f64.powi(-14) * (1.0 - 2f64.powi(-12))), 0x0400);
    assert_eq!(f.from_f64(2f64.powi(-14) * (1.0 - 2f64.powi(-11))), 0);
    assert_eq!(f.max(0x0001, 0x8400), 0);
}

#[test]
fn special_cases() {
    let f = fmt("bf16");
    let (inf, ninf, one, z, nz) = (0x7f80, 0xff80, f.one(), 0, 0x8000);
    assert_eq!(f.add(inf, ninf), f.nan());
    assert_eq!(f.mul(z, inf), f.nan());
    assert_eq!(f.div(z, z), f.nan());
    assert_eq!(f.div(inf, inf), f.nan());
    assert_eq!(f.div(one, nz), ninf);
    assert_eq!(f.add(nz, nz), nz);
    assert_eq!(f.add(nz, z), z);
    assert_eq!(f.sub(one, one), z);
    assert_eq!(f.neg(f.nan()), f.nan() | 0x8000);
    assert_eq!(Family::ln(&f, z), ninf);
    assert_eq!(Family::ln(&f, f.neg(one)), f.nan());
    assert_eq!(Family::exp(&f, ninf), 0);
    assert_eq!(Family::exp(&f, z), one);
    assert_eq!(f.cmp(z, nz), Some(std::cmp::Ordering::Equal));
    assert_eq!(f.cmp(f.nan(), z), None);
    assert_eq!(f.max(z, nz), z);
    assert_eq!(f.max(nz, z), nz);
    assert_eq!(f.fma(z, inf, one), f.nan());
    assert_eq!(f.fma(nz, one, nz), nz);
    assert_eq!(f.fma(one, one, f.neg(one)), z);
}

#[test]
fn fma_rounds_once() {
    // (1 + 3·2^−7)² − 1 = 6·2^−7 + 9·2^−14: the product rounded first loses 9·2^−14.
    let f = fmt("bf16");
    let a = f.from_f64(1.0 + 3.0 * 2f64.powi(-7));
    let exact = 6.0 * 2f64.powi(-7) + 9.0 * 2f64.powi(-14);
    assert_eq!(f.fma(a, a, f.neg(f.one())), f.from_f64(exact));
    assert_ne!(f.sub(f.mul(a, a), f.one()), f.from_f64(exact));
}

#[test]
fn exact_accumulator_rounds_once() {
    let f = fmt("bf16");
    let big = f.from_f64(2f64.powi(100));
    let xs = [big, f.one(), f.neg(big)];
    assert_eq!(f.sum_exact(&xs), f.one());
    assert_eq!(f.sum(SumMode::Naive, &xs).unwrap(), 0);
    assert_eq!(f.sum_exact(&[f.nan(), f.one()]), f.nan());
    assert_eq!(f.sum_exact(&[0x7f80, 0xff80]), f.nan());
    assert_eq!(f.sum_exact(&[0x7f80, big]), 0x7f80);
    assert_eq!(f.sum_exact(&[0x8000, 0x8000]), 0);
    assert_eq!(f.sum_exact(&[]), 0);
    let tiny = 1; // the smallest subnormal: its square is the accumulator's last bit
    assert_eq!(
        f.dot_exact(&[tiny, big, f.neg(big)], &[tiny, big, big]),
        0,
        "2^−266 rounds to +0"
    );
    let neg = f.dot_exact(&[f.neg(f.one()), tiny], &[f.one(), tiny]);
    assert_eq!(neg, f.neg(f.one()));
    // Sums of many: 2^20 terms of max finite overflow to ∞ only at the read-out.
    let m = f.max_finite(false);
    assert_eq!(f.dot_exact(&[m, m, f.neg(m)], &[m, m, m]), 0x7f80);
    assert_eq!(f.sum_exact(&[m, m, f.neg(m)]), m);
    let wide = fmt("float:11:52");
    let x = wide.from_f64(f64::MAX);
    assert_eq!(wide.dot_exact(&[x, x, 1], &[x, wide.neg(x), 1]), 0);
    assert_eq!(wide.dot_exact(&[x, 1], &[wide.one(), 1]), x);
}

#[test]
fn binary64_is_f64() {
    let f = fmt("float:11:52");
    let mut next = crate::test_words(0x1234_5678);
    for _ in 0..20_000 {
        let (a, b) = (next(), next());
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        for (got, want) in [
            (f.add(a, b), x + y),
            (f.sub(a, b), x - y),
            (f.mul(a, b), x * y),
            (f.div(a, b), x / y),
            (f.from_f64(x), x),
        ] {
            if want.is_nan() {
                assert!(f.is_nan(got));
            } else {
                assert_eq!(got, want.to_bits(), "{x:e} {y:e}");
            }
        }
        assert_eq!(
            f.to_f64(a).to_bits(),
            if x.is_nan() { f64::NAN.to_bits() } else { a }
        );
    }
}

#[test]
fn exact_accumulator_widths_are_the_documented_ones() {
    for (s, bits) in [
        ("fp8:e4m3", 101),
        ("fp8:e5m2", 129),
        ("f16", 145),
        ("bf16", 587),
        ("float:8:23", 619),
    ] {
        assert_eq!(ExactAcc::bits(&fmt(s)), bits, "{s}");
    }
}

#[test]
fn decimal_operands_round_once() {
    let c = Format::Float(fmt("fp8:e4m3")).calc();
    // 1.0625 is the tie between 1 and 1.125: even; a hair above rounds up.
    assert_eq!(c.parse("1.0625").unwrap(), 0x38);
    assert_eq!(c.parse("1.0625000000000000000000001").unwrap(), 0x39);
    assert_eq!(c.parse("-0").unwrap(), 0x80);
    assert_eq!(c.parse("1e100000").unwrap(), 0x7f);
    assert_eq!(c.parse("-1e-100000").unwrap(), 0x80);
    assert_eq!(c.parse("nan").unwrap(), 0x7f);
}

/// `:nonan` (OCP FP6/FP4): every code finite, S.1…1.1…1 the largest, overflow and ∞ to ±max,
/// a NaN result +0. The values are the OCP MX v1.0 element tables, written out.
#[test]
fn nonan_formats_are_ocps_fp6_and_fp4() {
    let e2m1 = fmt("float:2:1:nonan");
    let want = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    for (w, v) in want.iter().enumerate() {
        assert_eq!(e2m1.to_f64(w as u64), *v, "code {w:#x}");
        assert_eq!(e2m1.to_f64(w as u64 | 8), -v, "code {:#x}", w | 8);
        assert!(!e2m1.is_nan(w as u64) && !e2m1.is_nan(w as u64 | 8));
        assert_eq!(e2m1.from_f64(*v), w as u64);
    }
    assert_eq!(fmt("float:3:2:nonan").to_f64(0x1f), 28.0);
    assert_eq!(fmt("float:2:3:nonan").to_f64(0x1f), 7.5);
    assert_eq!(fmt("float:3:2:nonan").to_f64(0x01), 0.0625);
    assert_eq!(fmt("float:2:3:nonan").to_f64(0x01), 0.125);
    // Saturation: past max, at the tie above max, ∞; a NaN input or result is +0.
    for x in [7.0, 6.5, 1e300, f64::INFINITY] {
        assert_eq!(e2m1.from_f64(x), 0x7);
        assert_eq!(e2m1.from_f64(-x), 0xf);
    }
    assert_eq!(e2m1.from_f64(5.0), 0x6); // tie between 4 and 6: even (4)
    assert_eq!(e2m1.from_f64(f64::NAN), 0);
    assert_eq!(e2m1.div(0, 0), 0);
    assert_eq!(e2m1.div(0x2, 0), 0x7);
    assert_eq!(e2m1.mul(0x7, 0x7), 0x7);
    assert_eq!(e2m1.add(0x6, 0x2), 0x6); // 4 + 1 = 5: the tie between 4 and 6, to even (4)
    assert_eq!(e2m1.add(0x7, 0x7), 0x7); // 12: saturates
    assert_eq!(Family::nan(&e2m1), None);
    assert_eq!(Family::nan(&fmt("fp8:e4m3")), Some(0x7f));
}

#[test]
fn nonan_prints_and_refuses() {
    for s in ["float:2:1:nonan", "float:3:2:nonan:ftz", "float:4:3:nonan"] {
        assert_eq!(fmt(s).to_string(), s);
    }
    for s in [
        "float:2:1:nonan:fn",
        "float:2:1:sat:nonan",
        "fp8:e4m3:nonan",
        "float:2:1:nonan:nonan",
        "float:11:3:nonan",
    ] {
        let e = s.parse::<Format>().expect_err(s);
        assert!(!e.0.contains('\n'), "{s}: {e}");
    }
}

/// Formats of at most 8 bits add and multiply by table: on every pair of words of every
/// variant the table holds the computed operation (`add_d`/`mul_d` rounding to nearest), and
/// sub and a naive dot product through it equal the computed ones.
#[test]
fn tables_hold_the_computed_operations_for_every_pair() {
    use crate::rounding::Draw;
    for s in [
        "fp8:e4m3",
        "fp8:e5m2",
        "float:4:3",
        "float:3:4:sat",
        "float:2:5:ftz",
        "fp8:e4m3:sat",
        "float:2:1:nonan",
        "float:3:2:nonan",
    ] {
        let f = fmt(s);
        assert!(ops::tables(f).is_some(), "{s}");
        let words = 1u64 << f.width();
        for a in 0..words {
            for b in 0..words {
                assert_eq!(
                    f.add(a, b),
                    f.add_d(a, b, Draw::Nearest),
                    "{s} {a:#x}+{b:#x}"
                );
                assert_eq!(
                    f.mul(a, b),
                    f.mul_d(a, b, Draw::Nearest),
                    "{s} {a:#x}*{b:#x}"
                );
                assert_eq!(
                    f.sub(a, b),
                    f.add_d(a, f.neg(b), Draw::Nearest),
                    "{s} {a:#x}-{b:#x}"
                );
            }
        }
        let mut next = crate::test_words(0x5eed_f10a);
        for len in [0usize, 1, 7, 100] {
            let a: Vec<u64> = (0..len).map(|_| next() % words).collect();
            let b: Vec<u64> = (0..len).map(|_| next() % words).collect();
            let computed = a.iter().zip(&b).fold(0, |s, (&x, &y)| {
                f.add_d(s, f.mul_d(x, y, Draw::Nearest), Draw::Nearest)
            });
            let dot = Family::dot(&f, SumMode::Naive, &a, &b).unwrap();
            assert_eq!(dot, computed, "{s}: naive dot of {len} terms");
        }
    }
    assert!(ops::tables(fmt("float:5:3")).is_none(), "9 bits: no table");
}

/// The exact kernel's read-out of a float sum is the accumulator's rounding of it, word for
/// word: sums of up to 2^53 − 1 units (the fast path) and beyond (the definition), at units
/// from far below the subnormals to past the overflow, in the formats the fast path serves
/// and in `:ftz` (which it does not), every tie of a small sum included.
#[test]
fn read_exact_is_the_rounding_of_the_sum() {
    use crate::kernel::ExactDot;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for spec in [
        "bf16",
        "f16",
        "fp8:e4m3",
        "fp8:e5m2",
        "float:2:1",
        "float:5:10:ftz",
        "float:8:23",
    ] {
        let f = fmt(spec);
        let mut cases: Vec<(i128, i32)> = vec![(0, 0), (0, -300), (1, -400), (-1, 200)];
        for v in -40i128..=40 {
            for scale in (-300..=300).step_by(7) {
                cases.push((v, scale));
            }
        }
        // Just above a tie of an M-bit significand past 2^53, where an f64 of the sum would
        // round onto the tie first.
        for m in 1..=23 {
            let v = (1i128 << 53) + (1 << (52 - m)) + 1;
            cases.extend([(v, -60), (-v, -60), (v, -120)]);
        }
        for _ in 0..200_000 {
            let bits = 1 + next() % 64;
            let v = ((next() >> (64 - bits)) as i128) << (next() % 8);
            let v = if next() & 1 == 1 { -v } else { v };
            let scale = (next() % 1100) as i32 - 550;
            cases.push((v, scale));
            cases.push(((1i128 << 53) - 1 - (next() % 4) as i128, scale));
            cases.push((1i128 << 53, scale));
        }
        for (v, scale) in cases {
            let want = f.read_exact_reference(v, scale);
            assert_eq!(f.read_exact(v, scale), want, "{spec}: {v}·2^{scale}");
        }
    }
}
