//! The 8-bit approximation codecs of seed 003 (`lpgen_golden::q8`) against the rules of
//! `docs/formats.md`: table sizes and hand-computed values, exact rounding of the table entries,
//! encode∘decode, and encode against an exact linear scan over all 128 magnitudes.

use lpgen_golden::q8::{self, Q8Type, Scaling, SIGN_BIT};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn f(s: &str) -> f32 {
    s.parse().unwrap() // Rust's parse rounds correctly: an independent reference
}

#[test]
fn tables_have_256_codes_sorted_and_the_rules_sizes() {
    // distinct magnitudes (zero included): dynamic = 0, 1 and 2+4+…+64 tree values; static =
    // 8 decades × 16; linear = 0..=127; mantissa = 128 fields − 7 extra zeros (M = 0, E > 0)
    // − 7 duplicates (10·10^-(E+1) = 1·10^-E for E > 0).
    for (t, distinct, smallest, largest) in [
        (Q8Type::DynamicTree, 128, 0.0, 1.0),
        (Q8Type::StaticTree, 128, f("0.121875e-7"), f("0.965625")),
        (Q8Type::Linear, 128, 0.0, 1.0),
        (Q8Type::Mantissa, 114, 0.0, 1.5),
    ] {
        let table = t.table();
        assert_eq!(table.len(), 256, "{t}");
        assert!(
            table.windows(2).all(|w| w[0].0.total_cmp(&w[1].0).is_le()),
            "{t}"
        );
        let mut codes: Vec<u8> = table.iter().map(|e| e.1).collect();
        codes.sort();
        assert_eq!(
            codes,
            (0..=255).collect::<Vec<u8>>(),
            "{t}: every code once"
        );
        let book = t.codebook();
        assert_eq!(book.magnitudes.len(), distinct, "{t}");
        assert_eq!(book.magnitudes[0], smallest, "{t}");
        assert_eq!(*book.magnitudes.last().unwrap(), largest, "{t}");
        for c in 0..128u8 {
            assert_eq!(
                t.value(c | SIGN_BIT).to_bits(),
                (-t.value(c)).to_bits(),
                "{t} {c}"
            );
        }
    }
}

#[test]
fn hand_computed_values() {
    let d = Q8Type::DynamicTree;
    assert_eq!(d.value(0), 0.0);
    assert_eq!(d.value(0x80).to_bits(), (-0.0f32).to_bits());
    assert_eq!(d.value(1), 1.0); // clusterNet: the absmax itself
                                 // 0b0000010: 5 zeros (10^-5), flag, tree bit 0: middle of (0.1, 0.45) = 0.275
    assert_eq!(d.value(2), f("2.75e-6"));
    assert_eq!(d.value(3), f("7.25e-6")); // tree bit 1: middle of (0.45, 1) = 0.725
    assert_eq!(d.value(4), f("1.875e-5")); // (0.1, 0.275) -> 0.1875, decade 10^-4
                                           // 0b1000000: no zeros, flag, tree 000000: 0.1 + 0.35/64 = 0.10546875
    assert_eq!(d.value(64), 0.10546875);
    assert_eq!(d.value(95), f("0.44453125")); // last of the lower half: 0.1 + 0.35·63/64
    assert_eq!(d.value(96), f("0.45859375")); // first of the upper: 0.45 + 0.55/64
    assert_eq!(d.value(127), f("0.99140625"));
    let s = Q8Type::StaticTree; // [s][E:3][tree:4], value tree·10^-E
    assert_eq!(s.value(0), f("0.121875")); // 0.1 + 0.35/16
    assert_eq!(s.value(8), f("0.484375")); // 0.45 + 0.55/16
    assert_eq!(s.value(0x17), f("0.0428125")); // E = 1, last of the lower half: 0.1 + 0.35·15/16
    assert_eq!(s.value(0x18), f("0.0484375")); // E = 1, first of the upper half
    assert_eq!(s.value(0x70), f("0.121875e-7"));
    let l = Q8Type::Linear;
    assert_eq!(l.value(127), 1.0);
    assert_eq!(l.value(0xff), -1.0);
    assert_eq!(l.value(1), q8::ratio_to_f32(1, 127));
    let m = Q8Type::Mantissa; // [s][E:3][M:4], value M·10^-(E+1)
    assert_eq!(m.value(0x0f), 1.5);
    assert_eq!(m.value(0x01), f("0.1"));
    assert_eq!(m.value(0x1a), f("0.1")); // a duplicate: 10·10^-2
    assert_eq!(m.value(0x71), f("1e-8"));
}

#[test]
fn the_papers_worked_examples() {
    // §3.1: "0.2345678 approximated as 0.236719 instead of 0.23125 or 0.2" and
    // "0.0000234 approximated as 0.000019" (dynamic tree; clusterNet's table gives both).
    let d = Q8Type::DynamicTree;
    assert_eq!(d.value(d.encode(0.2345678, 1.0)), f("0.23671875"));
    assert_eq!(d.value(d.encode(0.0000234, 1.0)), f("1.875e-5"));
    // The mantissa type (offset 10^1): 0.2 = 2·10^-1.
    // Decoding multiplies the f32 table entry f32(0.02) by 10 and rounds once: that product
    // is exactly halfway between two f32 and goes to the even one, 0.2 less one ulp.
    let m = Q8Type::Mantissa;
    let c = m.encode(0.2345678, 10.0);
    assert_eq!(m.value(c), f("0.02"));
    assert_eq!(m.decode(c, 10.0), 0.2f32.next_down());
    // Our static tree has 4 tree bits (3 exponent bits, 10^-7 reachable): 0.253125, not the
    // paper's 3-bit 0.23125 (docs/formats.md says why).
    let s = Q8Type::StaticTree;
    assert_eq!(s.decode(s.encode(0.2345678, 10.0), 10.0), f("0.253125"));
}

#[test]
fn table_entries_are_the_exact_rationals_rounded_to_nearest_f32() {
    for t in Q8Type::ALL {
        for c in 0..128u8 {
            let (num, den) = t.magnitude_ratio(c);
            let v = t.value(c);
            if num == 0 {
                assert_eq!(v, 0.0);
                continue;
            }
            // (v + v⁻)/2 <= num/den <= (v + v⁺)/2, compared exactly as integers
            let lo = (v as f64 + v.next_down() as f64) / 2.0;
            let hi = (v as f64 + v.next_up() as f64) / 2.0;
            let exact = BigInt::from(num) << 1100usize;
            assert!(
                fixed(lo) * den <= exact && exact <= fixed(hi) * den,
                "{t} {c}"
            );
            // the finite decimals also read back through Rust's (correctly rounding) parser
            if t != Q8Type::Linear {
                let dec = exact_decimal(num, den);
                assert_eq!(v, f(&dec), "{t} {c} {dec}");
            }
        }
    }
}

/// num/den as an exact decimal string (den = 2^a·5^b).
fn exact_decimal(num: u64, den: u64) -> String {
    let (mut n, d) = (num as u128, den as u128);
    let mut scale = 0u32;
    while n % d != 0 {
        n *= 10;
        scale += 1;
        assert!(scale < 30, "{num}/{den} is not a finite decimal");
    }
    format!("{}e-{scale}", n / d)
}

/// x·2^1100 as an integer: every f64 (and every product of two f32) is an integer multiple of
/// 2^-1074, so this is exact, and comparisons of these integers are exact comparisons.
fn fixed(x: f64) -> BigInt {
    assert!(x.is_finite() && x >= 0.0);
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, exp - 1075)
    };
    BigInt::from(mant) << (e + 1100) as usize
}

/// The reference encoder: the exact distance of |x| to scale·v for all 128 magnitudes; the
/// least distance, then the larger magnitude, then the lower field.
fn encode_by_scan(t: Q8Type, x: f32, scale: f32) -> u8 {
    let (a, sign) = if x.is_nan() {
        (0.0, 0)
    } else {
        (
            x.abs() as f64,
            if x.is_sign_negative() { SIGN_BIT } else { 0 },
        )
    };
    if scale == 0.0 {
        return t.codebook().magnitude_fields[0] | sign;
    }
    let mut best: Option<(BigInt, f32, u8)> = None;
    for m in 0..128u8 {
        let v = t.value(m);
        let p = v as f64 * scale as f64; // exact: 24 × 24 bits
        let dist = if a.is_infinite() {
            // every magnitude is at infinite distance: the largest is nearest in the limit
            -fixed(p)
        } else {
            (fixed(a) - fixed(p)).magnitude().clone().into()
        };
        let better = match &best {
            None => true,
            Some((bd, bv, bm)) => dist < *bd || (dist == *bd && (v > *bv || (v == *bv && m < *bm))),
        };
        if better {
            best = Some((dist, v, m));
        }
    }
    best.unwrap().2 | sign
}

/// Scales to test with: the paper's, extremes, and random ones. With `normal_results`, only
/// scales for which scale × every table value is a normal f32 (2^-98 .. 2^126).
fn scales(rng: &mut Pcg64, normal_results: bool) -> Vec<f32> {
    let mut s = vec![1.0, 4.0, 10.0, 100.0, 0.04, 3.0e-29, 7.0e30];
    let bits = if normal_results {
        0x0e80_0000..0x7e80_0000u32
    } else {
        0x0000_0001..0x7f80_0000u32
    };
    for _ in 0..6 {
        s.push(f32::from_bits(rng.gen_range(bits.clone())));
    }
    s
}

#[test]
fn encode_picks_the_nearest_code() {
    let mut rng = Pcg64::seed_from_u64(3);
    for t in Q8Type::ALL {
        let book = t.codebook();
        let mut ties = 0;
        for scale in scales(&mut rng, false) {
            let mut xs = vec![
                0.0,
                -0.0,
                scale,
                -scale,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                -f32::NAN,
                f32::MAX,
                f32::MIN_POSITIVE,
                1.0e-45,
                -1.0e-45,
                scale * 2.0,
                scale * 1.0e-9,
            ];
            for (i, &m) in book.midpoints.iter().enumerate() {
                let p = m * scale as f64;
                let x = p as f32;
                if x as f64 == p {
                    ties += 1; // an exact tie: must go to the larger magnitude
                    assert_eq!(
                        t.encode(x, scale),
                        book.magnitude_fields[i + 1],
                        "{t} tie {x} {scale}"
                    );
                }
                xs.extend([x, x.next_up(), x.next_down(), -x]);
                let v = (book.magnitudes[i] as f64 * scale as f64) as f32;
                xs.extend([v, v.next_up(), v.next_down()]);
            }
            for _ in 0..300 {
                xs.push(scale * rng.gen_range(-1.2f32..1.2));
                xs.push(f32::from_bits(rng.gen::<u32>()));
            }
            let mut out = vec![0u8; xs.len()];
            book.encode_slice(&xs, scale, &mut out);
            for (x, o) in xs.iter().zip(&out) {
                let want = encode_by_scan(t, *x, scale);
                assert_eq!(t.encode(*x, scale), want, "{t} x={x:e} scale={scale:e}");
                assert_eq!(*o, want, "{t} slice x={x:e} scale={scale:e}");
            }
        }
        assert!(ties > 0, "{t}: no exact tie was tried");
        // scale 0: everything goes to the smallest magnitude with its sign
        assert_eq!(t.encode(-3.0, 0.0), book.magnitude_fields[0] | SIGN_BIT);
    }
}

#[test]
fn encode_after_decode_is_the_identity_on_canonical_codes() {
    let mut rng = Pcg64::seed_from_u64(19);
    for t in Q8Type::ALL {
        let book = t.codebook();
        let mut canonical = 0;
        for scale in scales(&mut rng, true) {
            for c in 0..=255u8 {
                let x = t.decode(c, scale);
                let back = t.encode(x, scale);
                // a duplicate value (mantissa) comes back as its lowest field, same sign
                let field = book.magnitude_fields[book
                    .magnitudes
                    .iter()
                    .position(|&v| v == t.value(c & !SIGN_BIT))
                    .unwrap()];
                assert_eq!(
                    back,
                    field | (c & SIGN_BIT),
                    "{t} code {c:#04x} scale {scale:e}"
                );
                assert_eq!(t.decode(back, scale).to_bits(), x.to_bits(), "{t} {c:#04x}");
                canonical += (back == c) as usize;
            }
        }
        let per_scale = canonical / scales(&mut rng, true).len();
        assert_eq!(per_scale, 2 * book.magnitudes.len(), "{t}");
    }
}

#[test]
fn decode_is_the_product_rounded_once() {
    let mut rng = Pcg64::seed_from_u64(7);
    let mut out = vec![0f32; 256];
    let codes: Vec<u8> = (0..=255).collect();
    for t in Q8Type::ALL {
        for scale in scales(&mut rng, false) {
            t.codebook().decode_slice(&codes, scale, &mut out);
            for c in 0..=255u8 {
                let v = t.value(c);
                let p = v as f64 * scale as f64;
                assert_eq!(
                    fixed(p.abs()),
                    (fixed(v.abs() as f64) * fixed(scale as f64)) >> 1100usize
                );
                assert_eq!(out[c as usize].to_bits(), (p as f32).to_bits(), "{t} {c}");
            }
        }
    }
}

#[test]
fn compress_then_decode_slice() {
    let xs = [0.5f32, -2.0, 0.0, 1.0e-9, f32::NAN];
    let (scale, codes) = Q8Type::DynamicTree.compress(&xs, Scaling::Absmax).unwrap();
    assert_eq!(scale, 2.0);
    assert_eq!(codes[1], 0x81); // −absmax: the code of −1
    assert_eq!(codes[3], 0x00); // 5e-10 of the absmax is below half of 2.75e-6: zero
    assert_eq!(codes[4], 0x00); // NaN: +0
    let mut back = [0f32; 5];
    Q8Type::DynamicTree.decode_slice(&codes, scale, &mut back);
    assert_eq!(back[..3], [f("0.4953125"), -2.0, 0.0]); // 0.25 -> 0.1 + 0.35·27/64
    let (scale, _) = Q8Type::Mantissa.compress(&xs, Scaling::Offset(2)).unwrap();
    assert_eq!(scale, 100.0);
    assert!(Q8Type::Mantissa
        .compress(&xs, Scaling::Offset(-11))
        .is_err());
}

#[test]
fn scaling_and_absmax() {
    assert_eq!(
        q8::absmax(&[1.0, -3.0, f32::NAN, f32::NEG_INFINITY, 2.0]),
        3.0
    );
    assert_eq!(q8::absmax(&[f32::NAN]), 0.0);
    assert_eq!(q8::offset_scale(2).unwrap(), 100.0);
    assert_eq!(q8::offset_scale(-1).unwrap(), f("0.1"));
    assert_eq!(q8::offset_scale(10).unwrap(), 1e10);
    assert!(q8::offset_scale(11).is_err());
    assert_eq!(
        Q8Type::scale_of(&[-5.0, 1.0], Scaling::Absmax).unwrap(),
        5.0
    );
    assert_eq!(Q8Type::Mantissa.default_scaling(), Scaling::Offset(1));
    assert!(Q8Type::Linear.is_normalised() && !Q8Type::StaticTree.is_normalised());
}

#[test]
fn type_strings_parse_and_refuse_with_one_line() {
    for t in Q8Type::ALL {
        assert_eq!(t.to_string().parse::<Q8Type>().unwrap(), t);
        assert_eq!(t.name().parse::<Q8Type>().unwrap(), t);
    }
    for bad in [
        "",
        "q8:",
        "q8:tree",
        "dynamic",
        "q8:linear:2",
        "q8:dynamic-tree\nx",
        "Q8:LINEAR",
    ] {
        let e = bad.parse::<Q8Type>().unwrap_err().to_string();
        assert!(
            !e.contains('\n') && e.contains("q8:dynamic-tree"),
            "{bad:?}: {e}"
        );
    }
}

/// The vectorised absmax equals the plain fold over finite values, with NaN and ±∞ in the
/// 16-wide body and in the tail, and on all-non-finite input.
#[test]
fn absmax_skips_non_finite_values_anywhere() {
    let plain = |xs: &[f32]| {
        xs.iter()
            .filter(|x| x.is_finite())
            .fold(0.0f32, |m, x| m.max(x.abs()))
    };
    for len in [0usize, 1, 15, 16, 17, 40, 1000] {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut xs: Vec<f32> = (0..len)
                .map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.5)
                .collect();
            for i in (0..len).step_by(7) {
                xs[i] = bad;
            }
            assert_eq!(
                q8::absmax(&xs).to_bits(),
                plain(&xs).to_bits(),
                "{len} {bad}"
            );
        }
    }
    assert_eq!(q8::absmax(&[f32::NAN; 40]), 0.0);
    assert_eq!(q8::absmax(&[-0.0, -2.5, 1.0]), 2.5);
}
