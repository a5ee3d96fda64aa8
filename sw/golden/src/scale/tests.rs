use super::*;
use crate::mx::{MxFormat, ELEMS};

#[test]
fn strings_parse_print_and_refuse_in_one_line() {
    for s in [
        "nvfp4",
        "scaled/fp8:e4m3/tensor/f32",
        "scaled/fp4:e2m1/b32/e8m0",
        "scaled/fp6:e2m3/b16/ue5m3/t",
        "scaled/posit:8/row/bf16",
        "scaled/fix:3:4/col/e8m0/t",
    ] {
        assert_eq!(s.parse::<ScaledFormat>().unwrap().to_string(), s);
    }
    assert_eq!(
        "scaled/fp4:e2m1/b16/ue4m3/t"
            .parse::<ScaledFormat>()
            .unwrap(),
        NVFP4
    );
    for s in [
        "scaled",
        "scaled/fp4:e2m1/b16",
        "scaled/fp4:e2m1/b0/e8m0",
        "scaled/fp4:e2m1/bx/e8m0",
        "scaled/fp4:e2m1/b16/f32",
        "scaled/fp4:e2m1/b16/posit:32",
        "scaled/fp4:e2m1/b16/ue4m3/x",
        "scaled/int8/b16/e8m0",
        "scaled/dfix:8/tensor/f32",
        "scaled/fp8:e4m3/tensor/dfix:8",
        "scaled/fp4:e2m1/block/e8m0",
        "nvfp4:b32",
    ] {
        let e = s.parse::<ScaledFormat>().expect_err(s);
        assert!(!e.0.contains('\n') && !e.0.is_empty(), "{s}: {e}");
    }
    // A registry format's name is kept once, however often it is parsed.
    let a: ScaledFormat = "scaled/posit:8/row/bf16".parse().unwrap();
    let b: ScaledFormat = "scaled/posit:8/row/bf16".parse().unwrap();
    assert!(std::ptr::eq(a.elem_name, b.elem_name));
    let wide = "scaled/fp4:e2m1/b16/f32"
        .parse::<ScaledFormat>()
        .unwrap_err();
    assert!(wide.0.contains("at most 16 bits"), "{wide}");
    assert!(is_scaled("nvfp4") && is_scaled("scaled/x") && !is_scaled("mx:int8"));
}

#[test]
fn rules_parse_and_refuse_history_0() {
    assert_eq!("current".parse::<Rule>().unwrap(), Rule::Current);
    assert_eq!(
        "delayed".parse::<Rule>().unwrap(),
        Rule::Delayed {
            history: 1024,
            margin: 0
        }
    );
    assert_eq!(
        "delayed:16:-2".parse::<Rule>().unwrap(),
        Rule::Delayed {
            history: 16,
            margin: -2
        }
    );
    for s in [
        "delayed:0",
        "delayed:x",
        "delayed:4:65",
        "delayed:4:0:1",
        "current:1",
        "overflow",
        "",
    ] {
        let e = s.parse::<Rule>().expect_err(s);
        assert!(!e.0.contains('\n'), "{s}: {e}");
    }
    assert!("delayed:0"
        .parse::<Rule>()
        .unwrap_err()
        .0
        .contains("history of 0"));
    let blocks = "scaled/fp4:e2m1/b16/ue4m3".parse::<ScaledFormat>().unwrap();
    assert!(blocks.check_rule("delayed".parse().unwrap()).is_err());
    assert!(NVFP4.check_rule("delayed".parse().unwrap()).is_ok());
}

#[test]
fn named_scales_and_emax() {
    let sc = |s: &str| s.parse::<Scale>().unwrap();
    assert_eq!(sc("ue4m3").code_bits(), 8);
    assert_eq!(sc("ue5m3").code_bits(), 8);
    assert_eq!(sc("f32").code_bits(), 32);
    assert_eq!(sc("e8m0").code_bits(), 8);
    assert_eq!(sc("ue4m3").max_value(), 448.0);
    assert_eq!(sc("ue5m3").max_value(), 114688.0);
    assert_eq!(sc("e8m0").value(0), 2f64.powi(-127));
    for (name, emax) in [("fp8:e4m3", 8), ("fp8:e5m2", 15), ("fp4:e2m1", 2)] {
        let f = ScaledFormat::new(name, Granularity::Tensor, Scale::E8m0, false).unwrap();
        assert_eq!(f.emax_elem(), emax, "{name}");
    }
    for (x, want) in [
        (1.0, 0),
        (1.5, 0),
        (2.0, 1),
        (0.75, -1),
        (1e-310, -1030),
        (5e-324, -1074),
        (f64::MAX, 1023),
        (3.0 * 2f64.powi(-1030), -1029),
        (2f64.powi(-1022) * (2.0 - 2f64.powi(-52)), -1022),
    ] {
        assert_eq!(quant::Q::floor_log2_of(x), want, "{x:e}");
    }
    for (n, d, want) in [
        (1, 3, -2),
        (2, 3, -1),
        (4, 3, 0),
        (5, 7, -1),
        (7, 5, 0),
        (1, 6, -3),
    ] {
        assert_eq!(quant::Q::floor_log2_ratio(n, d), want, "{n}/{d}");
    }
}

/// Values for the MX comparison: random magnitudes over f64's range and corners (zeros,
/// subnormals, ties, saturation, clamped exponents).
fn mx_inputs(seed: u64, k: usize, n: usize) -> Vec<Vec<f64>> {
    let mut r = crate::test_words(seed);
    let mut out: Vec<Vec<f64>> = vec![
        vec![0.0; k],
        vec![-0.0; k],
        vec![f64::MAX; k],
        vec![-f64::MIN_POSITIVE / 8.0; k],
        vec![5e-324; k],
        (0..k).map(|i| (i as f64 - 8.0) * 0.25).collect(),
        (0..k).map(|i| 2f64.powi(i as i32 * 7 - 60)).collect(),
        (0..k)
            .map(|i| if i == 0 { 1e200 } else { 1e-200 })
            .collect(),
        (0..k).map(|i| 448.0 + i as f64).collect(),
    ];
    for _ in 0..n {
        let span = 1 + (r() % 60) as i64;
        let base = (r() % 2000) as i64 - 1000;
        out.push(
            (0..k)
                .map(|_| {
                    let w = r();
                    let mant = 1.0 + (w >> 12) as f64 / 2f64.powi(52);
                    let e = base + (w % span as u64) as i64;
                    let v = mant * 2f64.powi(e.clamp(-1074, 1023) as i32);
                    match w >> 61 {
                        0 => 0.0,
                        1 => -v,
                        2 if v < 1e300 => (v * 4.0).round() / 4.0,
                        _ => v,
                    }
                })
                .collect(),
        );
    }
    out
}

#[test]
fn mx_is_an_instance_word_for_word() {
    for &(name, spec) in ELEMS {
        if matches!(spec, crate::mx::ElemSpec::Int8) {
            // INT8 saturates to ±127 (MX's symmetric choice); no registry format does.
            continue;
        }
        for k in [1, 16, 32] {
            let mx = MxFormat::new(name, k).unwrap();
            let sf = ScaledFormat::new(name, Granularity::Block(k), Scale::E8m0, false).unwrap();
            for xs in mx_inputs(k as u64 * 77 + 1, k, 300) {
                let want = mx.quantize_block(&xs).unwrap();
                let got = sf.quantize(&xs, 1, k, None).unwrap();
                assert_eq!(got.scales, vec![u64::from(want.scale)], "{name} {xs:?}");
                let codes: Vec<u64> = want.codes.iter().map(|&c| u64::from(c)).collect();
                assert_eq!(got.codes, codes, "{name} {xs:?}");
                assert_eq!(got.tensor_scale, quant::ONE_F32);
                let values = sf.dequantize(&got).unwrap();
                let mx_values = mx.dequantize_block(&want).unwrap();
                let same = values
                    .iter()
                    .zip(&mx_values)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{name}: {values:?} != {mx_values:?}");
            }
        }
    }
}

#[test]
fn mx_is_an_instance_over_many_blocks_and_rows() {
    let mx = MxFormat::new("fp8:e4m3", 8).unwrap();
    let sf = "scaled/fp8:e4m3/b8/e8m0".parse::<ScaledFormat>().unwrap();
    let xs: Vec<f64> = mx_inputs(5, 8, 12).concat();
    let rows = xs.len() / 24;
    let xs = &xs[..rows * 24];
    let got = sf.quantize(xs, rows, 24, None).unwrap();
    let want = mx.quantize(xs);
    let scales: Vec<u64> = want.iter().map(|b| u64::from(b.scale)).collect();
    let codes: Vec<u64> = want
        .iter()
        .flat_map(|b| b.codes.iter().map(|&c| u64::from(c)))
        .collect();
    assert_eq!((got.scales, got.codes), (scales, codes));
}

#[test]
fn nvfp4_small_examples() {
    // A = 6 · 448: s_enc = 1; a block of amax 6 gets S = 1 and codes are e2m1(x).
    let mut xs = vec![0.0; 16];
    xs[..8].copy_from_slice(&[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    xs[8] = -0.25; // a tie between 0 and 0.5: to the even, −0
    xs[9] = -0.75; // between 0.5 and 1: to 1.0 (even code)
    xs[10] = 5.0; // between 4 and 6: ties to the even code, 4
    let q = NVFP4.quantize(&xs, 1, 16, Some(2688.0)).unwrap();
    assert_eq!(q.tensor_scale, 1f32.to_bits());
    assert_eq!(q.scales, vec![0x38]);
    assert_eq!(&q.codes[..11], &[0, 1, 2, 3, 4, 5, 6, 7, 0x8, 0xa, 0x6]);
    // Tensor amax 0: s_enc = 1, every block scale 0, every element 0.
    let z = NVFP4.quantize(&[0.0; 32], 1, 32, None).unwrap();
    assert_eq!(
        (z.tensor_scale, z.scales.clone()),
        (1f32.to_bits(), vec![0, 0])
    );
    assert!(z.codes.iter().all(|&c| c == 0));
    assert!(NVFP4.quantize(&[1.0; 15], 1, 15, None).is_err());
    assert!(NVFP4.quantize(&[f64::NAN; 16], 1, 16, None).is_err());
    assert!(NVFP4.quantize(&[1.0; 16], 1, 16, Some(-1.0)).is_err());
}

/// Every combination of element family, scale format, granularity and tensor scale quantizes
/// and dequantizes extreme tensors without a panic (a refusal is an `Err`), and its codes are
/// words of the element format.
#[test]
fn every_combination_quantizes_without_a_panic() {
    let elems = [
        "fp4:e2m1",
        "fp8:e5m2",
        "bf16",
        "posit:8",
        "posit:16:1",
        "fix:3:4",
        "lns:5:6",
    ];
    let scales = [
        "e8m0", "ue4m3", "ue5m3", "f32", "posit:16", "bf16", "fix:7:8",
    ];
    let grans = ["tensor", "row", "col", "b4"];
    let (mut done, mut refused) = (0, 0);
    let mut r = crate::test_words(99);
    let tensors: Vec<Vec<f64>> = vec![
        vec![0.0; 8],
        vec![1e300, -1e-300, 5e-324, 0.0, -0.0, 1.0, f64::MAX, -f64::MAX],
        (0..8).map(|i| (i as f64 - 3.5) * 0.1).collect(),
        (0..8)
            .map(|_| {
                f64::from_bits(r() & 0x7fef_ffff_ffff_ffff) * if r() & 1 == 0 { 1.0 } else { -1.0 }
            })
            .collect(),
    ];
    for e in elems {
        for sc in scales {
            for g in grans {
                for t in ["", "/t"] {
                    let s = format!("scaled/{e}/{g}/{sc}{t}");
                    let f: ScaledFormat = match s.parse() {
                        Ok(f) => f,
                        // f32 is the one block scale over 16 bits here.
                        Err(_) if g == "b4" && sc == "f32" => continue,
                        Err(x) => panic!("{s}: {x}"),
                    };
                    for x in &tensors {
                        for amax in [None, Some(0.0), Some(1e-310), Some(1e308)] {
                            let q = match f.quantize(x, 2, 4, amax) {
                                Ok(q) => q,
                                Err(e) => {
                                    // Only a scale that overflowed to ∞ or NaN is refused.
                                    assert!(e.0.contains("scale overflowed"), "{s}: {e}");
                                    refused += 1;
                                    continue;
                                }
                            };
                            done += 1;
                            assert!(q.codes.iter().all(|&w| w >> f.elem.width() == 0), "{s}");
                            let v = f.dequantize(&q).unwrap();
                            assert_eq!(v.len(), 8, "{s}");
                        }
                    }
                }
            }
        }
    }
    assert!(done > 5 * refused, "{done} quantized, {refused} refused");
    assert!(done > 5000, "{done} quantized");
}

/// The integer quotient (`quant::product_quotient`) rounds as the big-integer ratio does, for
/// every float width the layer uses (E2M1 to binary64), on random f64s of any magnitude.
#[test]
fn the_integer_quotient_rounds_as_the_ratio() {
    use crate::exact::f64_ratio;
    use crate::float::FloatFormat;
    let formats = [
        FloatFormat::new_no_nan(2, 1, false).unwrap(),
        FloatFormat::new(4, 3, true, true, false).unwrap(),
        FloatFormat::new(8, 7, false, false, false).unwrap(),
        FloatFormat::new(8, 23, false, true, false).unwrap(),
        FloatFormat::new(11, 52, false, false, false).unwrap(),
    ];
    let mut r = crate::test_words(5);
    let mut any = || {
        let w = r();
        let x = f64::from_bits(w & 0x7fef_ffff_ffff_ffff | (w & 1) << 63);
        // Now and then a short significand (exact quotients, ties).
        if w & 6 == 0 && x.abs() < 1e300 {
            (x * 8.0).round() / 8.0 + 1.0
        } else {
            x
        }
    };
    // (1 + 2^−52)² = 1 + 2^−51 + 2^−104: a tie of float:11:50 plus 2^−104, below the
    // quotient's kept bits (only the sticky bit knows it): it rounds up, to 1 + 2^−50.
    let e = 1.0 + f64::EPSILON;
    let (neg, sig, exp) = quant::product_quotient(e, e, 1.0);
    let m50 = FloatFormat::new(11, 50, false, false, false).unwrap();
    assert_eq!(
        m50.to_f64(m50.round(neg, sig, exp)),
        1.0 + 4.0 * f64::EPSILON
    );
    for _ in 0..20_000 {
        let (a, b, c) = (any(), any().abs(), any().abs());
        assert!(a.is_finite() && b.is_finite() && c.is_finite());
        if c == 0.0 {
            continue;
        }
        let (na, da) = f64_ratio(a);
        let (nb, db) = f64_ratio(b);
        let (nc, dc) = f64_ratio(c);
        let ratio = crate::exact::Ratio {
            neg: a.is_sign_negative(),
            num: na * nb * dc,
            den: da * db * nc,
        };
        let (neg, sig, exp) = quant::product_quotient(a, b, c);
        for f in formats {
            assert_eq!(
                f.round(neg, sig, exp),
                f.from_ratio(&ratio),
                "{a:e}·{b:e}/{c:e} in {f}"
            );
        }
    }
}

/// The scale's target by the definition's own words, from every word of the format: the
/// fraction bits of binade 2^e are log2(2^e / (the next value above 2^e − 2^e)) at each
/// power of two that is a value; the target is the largest value below 2^(e+1) for the
/// highest e of the most bits.
fn target_by_enumeration(elem: &Format) -> f64 {
    let calc = elem.calc();
    let mut v: Vec<f64> = (0..1u64 << elem.width())
        .map(|w| calc.to_f64(w))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let mut best = (f64::NEG_INFINITY, 0f64);
    for pair in v.windows(2) {
        let (p, next) = (pair[0], pair[1]);
        if p.log2().fract() == 0.0 {
            let bits = (p / (next - p)).log2();
            if bits >= best.0 {
                best = (bits, p);
            }
        }
    }
    let below = 2.0 * best.1;
    *v.iter().rfind(|&&x| x < below).unwrap()
}

#[test]
fn a_scale_maps_amax_to_the_top_of_the_elements_most_precise_binades() {
    let target = |s: &str| {
        ScaledFormat::new(s, Granularity::Tensor, "f32".parse().unwrap(), false)
            .unwrap()
            .elem_target()
    };
    // Floats, fix and LNS: the largest value, TE's and OCP MX's rule unchanged.
    for s in [
        "fp8:e4m3",
        "fp8:e5m2",
        "fp6:e2m3",
        "fp6:e3m2",
        "fp4:e2m1",
        "f16",
        "bf16",
        "float:4:3",
        "float:5:2",
        "float:3:4",
        "fix:3:4",
        "fix:7:8",
        "lns:5:6",
        "lns:3:4",
    ] {
        let f = ScaledFormat::new(s, Granularity::Tensor, "f32".parse().unwrap(), false).unwrap();
        assert_eq!(f.elem_target(), f.elem_max(), "{s}");
        assert_eq!(f.elem_target(), target_by_enumeration(&f.elem), "{s}");
    }
    // Posits and takums: the top of the binades around 1.
    assert_eq!(target("posit:8:2"), 15.0);
    assert_eq!(target("posit:8:0"), 2.0 - 1.0 / 32.0);
    assert_eq!(target("posit:16:1"), 2.0 * (2.0 - 2f64.powi(-12)));
    for s in [
        "posit:6:0",
        "posit:8:0",
        "posit:8:1",
        "posit:8:2",
        "posit:8:3",
        "posit:10:1",
        "posit:12:2",
        "posit:16:1",
        "posit:16:2",
        "takum:8",
        "takum:12",
        "takum:16",
    ] {
        let f = ScaledFormat::new(s, Granularity::Tensor, "f32".parse().unwrap(), false).unwrap();
        assert_eq!(f.elem_target(), target_by_enumeration(&f.elem), "{s}");
        assert!(f.elem_target() < f.elem_max(), "{s}");
    }
    // The constant NVFP4 holds the target its string finds.
    assert_eq!(NVFP4.elem_target(), 6.0);
    // E8M0 scales: ⌊log2 target⌋ (a posit(8, 2) block's amax lands in [8, 16)).
    let p = ScaledFormat::new("posit:8:2", Granularity::Block(32), Scale::E8m0, false).unwrap();
    assert_eq!(p.emax_elem(), 3);
    // A per-tensor scale: S = f32(amax / target), so amax lands on 15, not on maxpos 2^24.
    let t = ScaledFormat::per_tensor("posit:8:2".parse().unwrap()).unwrap();
    let s = t.group_scale(3.0, f32::to_bits(1.0), 0) as u32;
    assert_eq!(f32::from_bits(s), (3.0f64 / 15.0) as f32);
}

/// A random positive normal f32's bits.
fn normal_f32(rng: &mut crate::rng::Rng) -> u32 {
    (1 + rng.below(254) as u32) << 23 | (rng.next_u64() as u32 & 0x7f_ffff)
}

/// Posit elements round the scaled value from its integer parts ([`Family::round_parts`]),
/// held to the exact ratio (the reference path, `from_ratio`) on random values, scales and
/// tensor scales over 1,200 binades, zeros, saturation, exact ties, and a value above a tie
/// by less than the 63 bits kept (only the sticky bit tells).
#[test]
fn posit_elements_round_from_parts_as_from_the_exact_ratio() {
    let mut rng = crate::rng::Rng(0x5ca1e);
    let by_ratio = |f: &ScaledFormat, x: f64, s: u32, sc: Bits| {
        let q = quant::Q::of(x)
            .mul(&quant::Q::of(f32::from_bits(s).into()))
            .div(&quant::Q::of(f.scale.value(sc)));
        f.elem_calc().from_ratio(&q.signed(x.is_sign_negative()))
    };
    for elem in [
        "posit:8:0",
        "posit:8:2",
        "posit:8:2:u",
        "posit:16:1",
        "posit:32:2",
        "posit:6:1",
    ] {
        let f =
            ScaledFormat::new(elem, Granularity::Tensor, "f32".parse().unwrap(), false).unwrap();
        let calc = f.elem_calc();
        // Every word's value and every midpoint between neighbours (8 bits and fewer).
        let mut xs: Vec<f64> = vec![0.0, -0.0, 1e300, -1e-300, f64::MIN_POSITIVE, 5e-324];
        if f.elem.width() <= 8 {
            let mut v: Vec<f64> = (0..1u64 << f.elem.width())
                .map(|w| calc.to_f64(w))
                .filter(|x| x.is_finite())
                .collect();
            v.sort_by(f64::total_cmp);
            xs.extend(v.windows(2).map(|p| (p[0] + p[1]) / 2.0));
            xs.extend(v);
        }
        for _ in 0..20_000 {
            let m = f64::from_bits(rng.next_u64() >> 12 | 0x3ff0_0000_0000_0000);
            let e = rng.below(1200) as i32 - 600;
            xs.push(if rng.coin() { -m } else { m } * 2f64.powi(e));
        }
        for (i, &x) in xs.iter().enumerate() {
            let (s, sc) = match i % 3 {
                0 => (f32::to_bits(1.0), f32::to_bits(1.0) as Bits),
                1 => (normal_f32(&mut rng), f32::to_bits(1.0) as Bits),
                _ => (f32::to_bits(1.0), normal_f32(&mut rng) as Bits),
            };
            if f.scale.value(sc) == 0.0 {
                continue;
            }
            let want = by_ratio(&f, x, s, sc);
            assert_eq!(
                f.elem_code(x, s, sc).unwrap(),
                want,
                "{elem}: x {x:e}, s {s:#x}, S {sc:#x}"
            );
        }
    }
    // mid·(1 + 2^−69), mid = 1 + 2^−6 the tie between posit(8, 0)'s 1 (even) and 1 + 2^−5:
    // x = mid·(1 − 2^−23 + 2^−46) times the tensor scale 1 + 2^−23; only the sticky bit
    // says it is above the tie, so it rounds up.
    let f = ScaledFormat::new(
        "posit:8:0",
        Granularity::Tensor,
        "f32".parse().unwrap(),
        false,
    )
    .unwrap();
    let x = (1.0 + 2f64.powi(-6)) * (1.0 - 2f64.powi(-23) + 2f64.powi(-46));
    let s = f32::to_bits(1.0 + 2f32.powi(-23));
    let one = f32::to_bits(1.0) as Bits;
    assert_eq!(by_ratio(&f, x, s, one), 0x41);
    assert_eq!(f.elem_code(x, s, one).unwrap(), 0x41);
}

/// A per-tensor element saturates: a float takes its `:sat` words, posits, takums, fix and
/// LNS their own; dfix and binary32 are refused in one line.
#[test]
fn per_tensor_elements_saturate_or_are_refused() {
    let pt = |s: &str| ScaledFormat::per_tensor(s.parse().unwrap());
    assert_eq!(
        pt("fp8:e4m3").unwrap().elem,
        "float:4:3:fn:sat".parse().unwrap()
    );
    for s in ["posit:8:2", "takum:8", "fix:3:4", "lns:5:6"] {
        assert_eq!(pt(s).unwrap().elem, s.parse().unwrap(), "{s}");
    }
    for s in ["dfix:8", "f32"] {
        let e = pt(s).unwrap_err();
        assert!(!e.0.contains('\n') && e.0.contains(s), "{s}: {e}");
    }
}
