//! The word rule on f32 words against the f32 path ([`Codebook::encode`], [`Codebook::decode`])
//! and the exhaustive nearest-value search, and its specials.

use super::tests::nearest;
use super::*;
use crate::test_words;

const F32: Format = Format::F32(crate::F32);

/// Finite non-negative scales: zeros, subnormals, the normal extremes, ones and a few others.
fn edge_scales() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        f32::from_bits(1),
        f32::from_bits(0x7f_ffff),
        f32::MIN_POSITIVE,
        1.0,
        0.75,
        3.0,
        1e-30,
        12345.678,
        f32::MAX,
        f32::from_bits(0x7f7f_fffe),
    ]
}

/// Random f32 patterns of every kind: any bits, and values near `scale`.
fn random_x(next: &mut impl FnMut() -> u64, scale: f32) -> f32 {
    let r = next();
    match r % 4 {
        0 => f32::from_bits(r as u32 >> 1 ^ (r >> 32) as u32),
        1 => f32::from_bits((r >> 8) as u32),
        _ => {
            let t = ((r >> 16) % 1_000_001) as f32 / 1e6;
            let neg = if r & 0x100 != 0 { -1.0 } else { 1.0 };
            neg * t * scale
        }
    }
}

fn scales(next: &mut impl FnMut() -> u64) -> Vec<f32> {
    let mut v = edge_scales();
    while v.len() < 40 {
        let s = f32::from_bits((next() >> 33) as u32);
        if s.is_finite() && s >= 0.0 {
            v.push(s);
        }
    }
    v
}

#[test]
fn f32_encode_word_is_the_f32_encode() {
    let mut next = test_words(0x9e37_79b9_7f4a_7c15);
    let specials = [
        0.0f32,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
    ];
    for ty in Q8Type::ALL {
        for s in scales(&mut next) {
            let sw = s.to_bits() as u64;
            let xs: Vec<f32> = specials
                .iter()
                .copied()
                .chain((0..400).map(|_| random_x(&mut next, s)))
                .collect();
            for x in xs {
                let got = ty.encode_word(F32, x.to_bits() as u64, sw).unwrap();
                assert_eq!(got, ty.encode(x, s), "{ty} {x:e} {s:e}");
                if x.is_finite() && s > 0.0 {
                    assert_eq!(
                        got,
                        nearest(ty, F32, x.to_bits() as u64, sw),
                        "{ty} {x:e} {s:e}"
                    );
                }
            }
        }
    }
}

/// x exactly at midpoint·scale (where that is an f32) goes up; one ulp either side goes to the
/// nearer magnitude, as the f32 path and the search say.
#[test]
fn f32_encode_word_ties_and_their_neighbours() {
    let mut next = test_words(0x2545_f491_4f6c_dd1d);
    for ty in Q8Type::ALL {
        let book = ty.codebook();
        let mut ties = 0;
        for s in scales(&mut next) {
            if s <= 0.0 {
                continue;
            }
            let sw = s.to_bits() as u64;
            for (j, &m) in book.midpoints.iter().enumerate() {
                let exact = m * s as f64;
                let x = exact as f32;
                if x as f64 != exact || x == 0.0 {
                    continue;
                }
                ties += 1;
                let up = book.magnitude_fields[j + 1];
                for x in [x, -x] {
                    let w = x.to_bits() as u64;
                    let want = up | if x < 0.0 { SIGN_BIT } else { 0 };
                    assert_eq!(ty.encode_word(F32, w, sw).unwrap(), want, "{ty} {x:e}");
                    for n in [w - 1, w + 1] {
                        let got = ty.encode_word(F32, n, sw).unwrap();
                        assert_eq!(got, ty.encode(f32::from_bits(n as u32), s), "{ty}");
                        assert_eq!(got, nearest(ty, F32, n, sw), "{ty} {n:#x}");
                    }
                    // One ulp below the tie (towards zero) is a smaller magnitude.
                    let below = ty.encode_word(F32, w - 1, sw).unwrap() & !SIGN_BIT;
                    assert!(book.values[below as usize] < book.values[up as usize]);
                }
            }
        }
        assert!(ties >= 50, "{ty}: only {ties} ties");
    }
}

#[test]
fn f32_encode_word_specials() {
    let w = |x: f32| x.to_bits() as u64;
    for ty in Q8Type::ALL {
        let book = ty.codebook();
        let (small, large) = (
            book.magnitude_fields[0],
            *book.magnitude_fields.last().unwrap(),
        );
        let one = w(1.0);
        assert_eq!(ty.encode_word(F32, w(f32::NAN), one).unwrap(), small);
        assert_eq!(ty.encode_word(F32, w(-f32::NAN), one).unwrap(), small);
        assert_eq!(ty.encode_word(F32, w(f32::INFINITY), one).unwrap(), large);
        assert_eq!(
            ty.encode_word(F32, w(f32::NEG_INFINITY), one).unwrap(),
            large | SIGN_BIT
        );
        assert_eq!(ty.encode_word(F32, w(-0.0), one).unwrap(), small | SIGN_BIT);
        // Bad scales act as 0: ±(smallest), even for ±∞ x.
        for s in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -1.0, -0.0, 0.0] {
            assert_eq!(ty.encode_word(F32, w(0.5), w(s)).unwrap(), small, "{s}");
            assert_eq!(
                ty.encode_word(F32, w(f32::NEG_INFINITY), w(s)).unwrap(),
                small | SIGN_BIT,
                "{s}"
            );
            assert_eq!(ty.encode_word(F32, w(f32::NAN), w(s)).unwrap(), small);
        }
        assert!(ty.encode_word(F32, 1 << 32, one).is_err());
        assert!(ty.encode_word(F32, one, 1 << 32).is_err());
    }
}

#[test]
fn f32_decode_word_is_the_f32_decode() {
    let mut next = test_words(0x1234_5678_9abc_def1);
    for ty in Q8Type::ALL {
        for s in scales(&mut next) {
            for code in 0..=255u8 {
                let (y, nan) = ty
                    .decode_word_flagged(F32, code, s.to_bits() as u64)
                    .unwrap();
                assert_eq!(y, ty.decode(code, s).to_bits() as u64, "{ty} {code} {s:e}");
                assert!(!nan);
            }
        }
    }
}

#[test]
fn f32_decode_word_specials() {
    let w = |x: f32| x.to_bits() as u64;
    for ty in Q8Type::ALL {
        // The largest magnitude is positive; code 0 is +0 in every type but the static tree.
        let zero = ty.value(0) == 0.0;
        let top = *ty.codebook().magnitude_fields.last().unwrap();
        let d = |code: u8, s: f32| ty.decode_word_flagged(F32, code, w(s)).unwrap();
        assert_eq!(d(top, f32::NAN), (F32_NAN, true));
        assert_eq!(d(top, -f32::NAN), (F32_NAN, true));
        if zero {
            assert_eq!(d(0, f32::INFINITY), (F32_NAN, true));
            assert_eq!(d(0, -1.0), (w(-0.0), false));
            assert_eq!(d(SIGN_BIT, -1.0), (w(0.0), false));
        }
        assert_eq!(d(top, f32::INFINITY), (w(f32::INFINITY), false));
        assert_eq!(
            d(top | SIGN_BIT, f32::INFINITY),
            (w(f32::NEG_INFINITY), false)
        );
        assert_eq!(d(top, -2.0), (w(-2.0 * ty.value(top)), false));
        // A subnormal result rounds once: the smallest subnormal times a value below 1/2
        // is 0, above it the smallest subnormal.
        let tiny = f32::from_bits(1);
        let y = d(top, tiny).0;
        assert_eq!(y, w(ty.decode(top, tiny)));
        assert!(ty.decode_word(F32, 0, 1 << 32).is_err());
    }
}
