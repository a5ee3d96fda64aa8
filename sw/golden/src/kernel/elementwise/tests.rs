//! The elementwise kernels against the golden per-element operations (`to_f64`, `from_f64`,
//! `add`, `sub`, `mul`): every word, every pair of 8-bit words, every word's neighbours and
//! the midpoints between neighbouring words (the ties), and random and special values.

use super::*;
use crate::{test_words, Format};

/// The formats the kernels serve that the tests cover: the four named ones and a corner of
/// each suffix.
const FORMATS: &[&str] = &[
    "bf16",
    "f16",
    "fp8:e4m3",
    "fp8:e5m2",
    "bf16:sat",
    "f16:fn",
    "fp8:e4m3:sat",
    "fp8:e5m2:sat",
    "float:3:2:nonan",
    "float:2:1:nonan",
    "float:2:1",
    "float:6:9",
    "float:4:11",
    "float:7:8",
];

fn float(spec: &str) -> FloatFormat {
    match spec.parse::<Format>() {
        Ok(Format::Float(f)) => f,
        other => panic!("{spec}: {other:?}"),
    }
}

fn kernel(spec: &str) -> &'static FloatKernel {
    FloatKernel::of(float(spec)).unwrap_or_else(|| panic!("{spec} has kernels"))
}

/// Whether two f64s are the same number (NaN equals NaN; +0 and −0 differ).
fn same(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// Runs `check` with the format's words as the kernel's word type.
fn words_of(f: FloatFormat) -> Vec<u64> {
    (0..1u64 << f.width()).collect()
}

/// Fails at the first word where the vector loop (`w`) and the portable loop (`p`) differ.
fn first_difference<T: PartialEq + std::fmt::Debug>(w: &[T], p: &[T], spec: &str, xs: &[f64]) {
    if let Some(i) = (0..w.len()).find(|&i| w[i] != p[i]) {
        panic!(
            "{spec}: encode({:e} = {:#x}) gives {:?} in the vector loop, {:?} in the portable one",
            xs[i],
            xs[i].to_bits(),
            w[i],
            p[i]
        );
    }
}

/// `xs` encoded and quantized by the kernels (through the slice loops, as callers use them),
/// each compared with the golden `from_f64`.
fn check_encode(spec: &str, xs: &[f64]) {
    let k = kernel(spec);
    let f = k.format();
    let mut q = vec![0.0; xs.len()];
    k.quantize(xs, &mut q);
    let mut q_portable = vec![0.0; xs.len()];
    k.quantize_lanes(xs, &mut q_portable);
    let got: Vec<u64> = if f.width() <= 8 {
        let (mut w, mut p) = (vec![0u8; xs.len()], vec![0u8; xs.len()]);
        k.encode(xs, &mut w);
        k.encode_lanes(xs, &mut p);
        first_difference(&w, &p, spec, xs);
        w.into_iter().map(u64::from).collect()
    } else {
        let (mut w, mut p) = (vec![0u16; xs.len()], vec![0u16; xs.len()]);
        k.encode(xs, &mut w);
        k.encode_lanes(xs, &mut p);
        first_difference(&w, &p, spec, xs);
        w.into_iter().map(u64::from).collect()
    };
    assert!(
        q.iter().zip(&q_portable).all(|(&x, &y)| same(x, y)),
        "{spec}: portable quantize"
    );
    for (i, &x) in xs.iter().enumerate() {
        let want = f.from_f64(x);
        assert_eq!(
            got[i],
            want,
            "{spec}: encode({x:e} = {:#x}) gives {:#x}, golden {want:#x}",
            x.to_bits(),
            got[i]
        );
        let v = if f.is_nan(want) {
            f64::NAN
        } else {
            f.to_f64(want)
        };
        assert!(
            same(q[i], v),
            "{spec}: quantize({x:e}) gives {}, golden {v}",
            q[i]
        );
        assert_eq!(k.word(x), want, "{spec}: word({x:e})");
    }
}

/// Every word's value, the f64s next to it, the midpoints between neighbouring values and
/// the f64s next to them, both signs; past the largest finite value, the overflow threshold
/// and its neighbours; special and random values.
fn encode_inputs(f: FloatFormat, seed: u64) -> Vec<f64> {
    let mut finite: Vec<f64> = words_of(f)
        .into_iter()
        .filter(|&w| !f.is_nan(w))
        .map(|w| f.to_f64(w))
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    finite.sort_by(f64::total_cmp);
    finite.dedup();
    let mut xs = vec![];
    let mut near = |v: f64| {
        xs.extend([v, v.next_up(), v.next_down()]);
    };
    for w in finite.windows(2) {
        near(w[0]);
        near((w[0] + w[1]) / 2.0);
    }
    let max = *finite.last().expect("a finite value");
    let ulp = max - finite[finite.len() - 2];
    near(max);
    near(max + ulp / 2.0);
    near(max + ulp);
    near(max * 4.0);
    // Below half the smallest subnormal, f64 subnormals, and f64's extremes.
    let tiny = finite[1];
    near(tiny / 2.0);
    near(tiny / 4.0);
    near(tiny * 0.75);
    xs.extend([
        0.0,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0x7ff8_0000_dead_beef),
    ]);
    // Random bit patterns (every exponent) and random values in and around the range.
    let mut r = test_words(seed);
    for _ in 0..20_000 {
        xs.push(f64::from_bits(r()));
        let e = (r() % 80) as i32 - 40;
        let m = (r() >> 11) as f64 / (1u64 << 53) as f64 + 0.5;
        xs.push(m * 2f64.powi(e) * max.sqrt().max(1.0) / 4.0);
    }
    let negated: Vec<f64> = xs.iter().map(|x| -x).collect();
    xs.extend(negated);
    xs
}

#[test]
fn every_word_decodes_as_the_golden_decoder() {
    for spec in FORMATS {
        let k = kernel(spec);
        let f = k.format();
        let words = words_of(f);
        let mut got = vec![0.0; words.len()];
        let mut portable = vec![0.0; words.len()];
        if f.width() <= 8 {
            let w: Vec<u8> = words.iter().map(|&w| w as u8).collect();
            k.decode(&w, &mut got);
            k.decode_lanes(&w, &mut portable);
        } else {
            let w: Vec<u16> = words.iter().map(|&w| w as u16).collect();
            k.decode(&w, &mut got);
            k.decode_lanes(&w, &mut portable);
        }
        assert!(
            got.iter().zip(&portable).all(|(&x, &y)| same(x, y)),
            "{spec}: portable"
        );
        for &w in &words {
            let want = if f.is_nan(w) { f64::NAN } else { f.to_f64(w) };
            assert!(same(got[w as usize], want), "{spec}: decode({w:#x})");
        }
    }
}

#[test]
fn encoding_is_the_golden_from_f64_at_every_tie_and_boundary() {
    for (i, spec) in FORMATS.iter().enumerate() {
        check_encode(spec, &encode_inputs(float(spec), 0x9e37_79b9 + i as u64));
    }
}

/// Corner words: zeros, the smallest and largest subnormals, the smallest normal, 1 and its
/// neighbours, the largest finite, ∞ and NaN codes, with both signs.
fn corners(f: FloatFormat) -> Vec<u64> {
    let m = f.frac_bits;
    let mut c = vec![
        0,
        1,
        2,
        3,
        (1 << m) - 1,
        1 << m,
        (1 << m) + 1,
        f.one(),
        f.one() + 1,
        f.one() - 1,
        f.one() + (1 << m),
        f.max_finite(false),
        f.max_finite(false) - 1,
        f.max_finite(false) >> 1,
        f.mask() >> 1,
        f.nan(),
        f.infinite(false),
        (f.mask() >> 1) - (1 << m) + 1,
    ];
    let neg: Vec<u64> = c.iter().map(|w| w | 1 << (f.width() - 1)).collect();
    c.extend(neg);
    c.sort_unstable();
    c.dedup();
    c
}

/// Pairs of words for `f`: every pair of 8-bit words; for 16 bits, every pair of corners,
/// random pairs, random pairs near one another (ties and cancellation) and pairs of very
/// different magnitudes (sums rounded by f64).
fn pairs(f: FloatFormat, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let (mut a, mut b) = (vec![], vec![]);
    let mask = f.mask();
    if f.width() <= 8 {
        for x in 0..=mask {
            for y in 0..=mask {
                a.push(x);
                b.push(y);
            }
        }
        return (a, b);
    }
    let c = corners(f);
    for &x in &c {
        for &y in &c {
            a.push(x);
            b.push(y);
        }
    }
    let mut r = test_words(seed);
    let sign = 1u64 << (f.width() - 1);
    for _ in 0..100_000 {
        let x = r() & mask;
        a.push(x);
        b.push(r() & mask);
        // Near x, either sign: cancellation, and sums whose exponents meet.
        a.push(x);
        b.push((x ^ (r() & sign)).wrapping_add(r() % 64).wrapping_sub(32) & mask);
        // Far apart: a large and a small word (f64 rounds their sum once).
        let big = (r() & (mask >> 2)) | ((mask >> 2) + 1);
        a.push((big | (r() & sign)) & mask);
        b.push((r() & (mask >> 3)) | (r() & sign));
    }
    (a, b)
}

fn check_binop<W: Word>(spec: &str, k: &FloatKernel, a: &[u64], b: &[u64]) {
    let f = k.format();
    let (wa, wb): (Vec<W>, Vec<W>) = (
        a.iter().map(|&w| W::of(w)).collect(),
        b.iter().map(|&w| W::of(w)).collect(),
    );
    for op in [ElemOp::Add, ElemOp::Sub, ElemOp::Mul, ElemOp::Div] {
        let mut out = vec![W::default(); a.len()];
        k.binop(op, &wa, &wb, &mut out);
        let mut portable = vec![W::default(); a.len()];
        k.binop_lanes(op, &wa, &wb, &mut portable);
        assert!(
            out.iter().zip(&portable).all(|(x, y)| x.bits() == y.bits()),
            "{spec}: {op:?} on the portable loop"
        );
        for i in 0..a.len() {
            let want = match op {
                ElemOp::Add => f.add(a[i], b[i]),
                ElemOp::Sub => f.sub(a[i], b[i]),
                ElemOp::Mul => f.mul(a[i], b[i]),
                ElemOp::Div => f.div(a[i], b[i]),
            };
            assert_eq!(
                out[i].bits() as u64,
                want,
                "{spec}: {op:?}({:#x}, {:#x})",
                a[i],
                b[i]
            );
        }
    }
}

#[test]
fn sums_differences_and_products_are_the_golden_operations() {
    for (i, spec) in FORMATS.iter().enumerate() {
        let k = kernel(spec);
        let (a, b) = pairs(k.format(), 0x5eed + i as u64);
        if k.format().width() <= 8 {
            check_binop::<u8>(spec, k, &a, &b);
        } else {
            check_binop::<u16>(spec, k, &a, &b);
        }
    }
}

#[test]
fn serves_small_floats_only() {
    for spec in ["bf16:ftz", "float:8:23", "float:10:5", "posit:8:2"] {
        let served = match spec.parse::<Format>() {
            Ok(Format::Float(f)) => FloatKernel::of(f).is_some(),
            _ => false,
        };
        assert!(!served, "{spec}");
    }
}

/// `max_min_words` is `FloatFormat::max` and `min` on every pair of 8-bit words, and on the
/// corners (±0, ±∞, NaN, subnormals, the largest values) and random pairs of the wider ones;
/// and `lane_op` takes it for `max` and `min`.
#[test]
fn maxima_and_minima_are_the_golden_operations() {
    for (i, spec) in FORMATS.iter().enumerate() {
        let k = kernel(spec);
        let f = k.format();
        let (a, b) = pairs(f, 0x3a3a + i as u64);
        let mut out = vec![0; a.len()];
        for larger in [true, false] {
            k.max_min_words(larger, &a, &b, &mut out);
            for ((&x, &y), &got) in a.iter().zip(&b).zip(&out) {
                let want = if larger { f.max(x, y) } else { f.min(x, y) };
                assert_eq!(got, want, "{spec}: max {larger} ({x:#x}, {y:#x})");
            }
        }
        let op = crate::alu::AluOp::Max;
        let mut lanes = vec![0; a.len()];
        crate::kernel::lane_op(&crate::Format::Float(f).calc(), op, &a, &b, &mut lanes);
        k.max_min_words(true, &a, &b, &mut out);
        assert_eq!(lanes, out, "{spec}: lane_op max");
    }
}
