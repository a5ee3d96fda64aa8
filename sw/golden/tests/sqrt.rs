//! Square root in every family against references that do not use the code under test
//! (issue 46, docs/formats.md "Square root").
//!
//! Posit, float, fix and dfix (every format of at most 16 bits, every word; dfix at several
//! scales): the result r of a positive x is checked by exact integer arithmetic on the sorted
//! grid of the format's values: the midpoints m⁻ = (r⁻ + r)/2 and m⁺ = (r + r⁺)/2 with its
//! neighbours r⁻ and r⁺ must enclose √x, i.e. (m⁻)² ≤ x ≤ (m⁺)², equality (a tie) only
//! where r is the even word; without a neighbour above (the largest value) the root
//! saturates. The special operands (zero, negative, NaN, ∞) have their expected words
//! written out here. LNS: every word of every format of at most 16 bits against the nearest
//! of the neighbouring values computed with libm's exp2 (the ties of the log domain are
//! decided by the value, far above f64's error). f32 and f16/bf16: against f64's square
//! root rounded (exact enough: 53 ≥ 2p + 2 bits, so the double rounding is innocuous).

use std::cmp::Ordering;

use half::{bf16, f16};
use lpgen_golden::rounding::Rounder;
use lpgen_golden::{Bits, Calc, DfixCalc, DfixFormat, Format, LnsFormat, Rounding};
use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// An exact nonnegative dyadic m·2^e.
#[derive(Clone, Debug)]
struct Dy {
    m: BigUint,
    e: i64,
}

/// The exact value of a finite f64 x ≥ 0.
fn dy(x: f64) -> Dy {
    assert!(x >= 0.0 && x.is_finite(), "{x}");
    let bits = x.abs().to_bits(); // −0 is 0
    let field = (bits >> 52) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (m, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    Dy {
        m: BigUint::from(m),
        e,
    }
}

/// a and b over a common power of two (their mantissas, aligned).
fn align(a: &Dy, b: &Dy) -> (BigUint, BigUint, i64) {
    let e = a.e.min(b.e);
    (&a.m << (a.e - e) as u64, &b.m << (b.e - e) as u64, e)
}

fn cmp(a: &Dy, b: &Dy) -> Ordering {
    let (x, y, _) = align(a, b);
    x.cmp(&y)
}

fn square(a: &Dy) -> Dy {
    Dy {
        m: &a.m * &a.m,
        e: 2 * a.e,
    }
}

fn midpoint(a: &Dy, b: &Dy) -> Dy {
    let (x, y, e) = align(a, b);
    Dy { m: x + y, e: e - 1 }
}

/// The nonnegative values of a format's words, sorted, each with the word that holds it.
fn grid(c: &Calc, words: impl Iterator<Item = Bits>) -> Vec<(f64, Bits)> {
    let mut g: Vec<(f64, Bits)> = words
        .map(|w| (c.to_f64(w), w))
        .filter(|(v, _)| v.is_finite() && *v >= 0.0)
        .collect();
    g.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    g.dedup_by(|a, b| a.0 == b.0);
    g
}

/// The rounding boundary between grid values j and j + 1 (of a sorted grid of values and
/// their words).
type Boundary = dyn Fn(&[(f64, Bits)], usize) -> Dy;

/// The rounding boundary between grid values j and j + 1: their arithmetic midpoint.
fn midpoint_of(g: &[(f64, Bits)], j: usize) -> Dy {
    midpoint(&dy(g[j].0), &dy(g[j + 1].0))
}

/// Whether r, a word on the grid, is √x correctly rounded (to nearest by `boundary`, ties to
/// the even word; saturated at the largest value); the reason when not.
fn check_root(
    g: &[(f64, Bits)],
    boundary: &Boundary,
    x: f64,
    r: Bits,
    rv: f64,
) -> Result<(), String> {
    let i = g
        .binary_search_by(|p| p.0.total_cmp(&rv))
        .map_err(|_| format!("{rv} is no nonnegative value of the format"))?;
    let xd = dy(x);
    let even = r & 1 == 0;
    if i > 0 {
        let m = square(&boundary(g, i - 1));
        match cmp(&m, &xd) {
            Ordering::Less => {}
            Ordering::Equal if even => {}
            o => return Err(format!("below the lower boundary ({o:?}, even {even})")),
        }
    }
    if i + 1 < g.len() {
        let m = square(&boundary(g, i));
        match cmp(&xd, &m) {
            Ordering::Less => {}
            Ordering::Equal if even => {}
            o => return Err(format!("above the upper boundary ({o:?}, even {even})")),
        }
    }
    Ok(())
}

/// What √ of a nonpositive or non-finite operand must give, by family; `None` for positive
/// finite operands (checked on the grid).
type Special = dyn Fn(Bits, f64) -> Option<Bits>;

/// Every word of a format of width w through `sqrt`: positive operands on the grid (rounding
/// boundaries by `boundary`), the rest by `special`. Returns the number of words checked.
fn exhaustive(
    name: &str,
    c: &Calc,
    boundary: &Boundary,
    sqrt: &dyn Fn(Bits) -> Bits,
    special: &Special,
) -> u64 {
    let w = c.format().width();
    let g = grid(c, 0..1u64 << w);
    for a in 0..1u64 << w {
        let x = c.to_f64(a);
        let r = sqrt(a);
        if let Some(want) = special(a, x) {
            assert_eq!(
                r, want,
                "{name}: sqrt({a:#x} = {x}) = {r:#x}, want {want:#x}"
            );
            continue;
        }
        let rv = c.to_f64(r);
        if let Err(e) = check_root(&g, boundary, x, r, rv) {
            panic!("{name}: sqrt({a:#x} = {x}) = {r:#x} ({rv}): {e}");
        }
    }
    1 << w
}

/// The float formats of at most 16 bits: every E, M with each of the suffix sets that
/// change what a root gives (plain, `:fn`, `:ftz`, `:nonan`).
fn float_formats() -> Vec<String> {
    let mut v = vec![];
    for e in 2..=11u32 {
        for m in 1..=(15 - e) {
            for suffix in ["", ":fn", ":ftz", ":nonan", ":fn:sat:ftz"] {
                let s = format!("float:{e}:{m}{suffix}");
                if s.parse::<Format>().is_ok() {
                    v.push(s);
                }
            }
        }
    }
    v
}

fn float_special(c: &Calc, s: &str) -> impl Fn(Bits, f64) -> Option<Bits> {
    let nan = if s.contains(":nonan") {
        0
    } else {
        c.nan().expect("a NaN")
    };
    let inf = c.from_f64(f64::INFINITY);
    let sign = 1u64 << (c.format().width() - 1);
    move |a, x| {
        if x.is_nan() || x < 0.0 {
            Some(nan)
        } else if x == 0.0 {
            Some(a & sign) // ±0 (a subnormal of :ftz too) gives the zero of its sign
        } else if x == f64::INFINITY {
            Some(inf)
        } else {
            None
        }
    }
}

#[test]
fn float_roots_are_correctly_rounded_for_every_word_of_every_format_of_16_bits() {
    let (mut formats, mut words) = (0, 0);
    for s in float_formats() {
        let c = s.parse::<Format>().unwrap().calc();
        words += exhaustive(&s, &c, &midpoint_of, &|a| c.sqrt(a), &float_special(&c, &s));
        formats += 1;
    }
    eprintln!("float: every word of {formats} formats ({words} words), 0 mismatches");
    assert!(formats > 300);
}

#[test]
fn posit_roots_are_correctly_rounded_for_every_word_of_every_format_of_16_bits() {
    let (mut formats, mut words) = (0, 0);
    let mut names = vec![];
    for n in 3..=16u32 {
        for es in 0..=5 {
            names.push(format!("posit:{n}:{es}"));
        }
        names.push(format!("posit:{n}"));
    }
    names.extend(["posit:8:0:u", "posit:16:1:u"].map(String::from));
    for s in names {
        let Ok(f) = s.parse::<Format>() else { continue };
        let c = f.calc();
        let nar = c.nan().unwrap();
        let special = move |a: Bits, x: f64| {
            if x.is_nan() || x < 0.0 {
                Some(nar)
            } else {
                (x == 0.0).then_some(a)
            }
        };
        // Bit-string rounding: the boundary between words w and w + 1 is the value of the
        // N+1-bit posit 2w + 1 (the standard's rounding; where the regime leaves no room for
        // every exponent bit it is no arithmetic midpoint).
        let wider = match s.split(':').count() {
            2 => format!("posit:{}", n_of(&s) + 1),
            _ => format!("posit:{}:{}", n_of(&s) + 1, s.split(':').nth(2).unwrap()),
        };
        let wider = wider.parse::<Format>().unwrap().calc();
        let boundary = move |g: &[(f64, Bits)], j: usize| dy(wider.to_f64(2 * g[j].1 + 1));
        words += exhaustive(&s, &c, &boundary, &|a| c.sqrt(a), &special);
        formats += 1;
    }
    eprintln!("posit: every word of {formats} formats ({words} words), 0 mismatches");
    assert!(formats > 80);
}

fn n_of(posit: &str) -> u32 {
    posit.split(':').nth(1).unwrap().parse().unwrap()
}

/// A negative fix or dfix operand gives the zero word.
fn zero_below(_: Bits, x: f64) -> Option<Bits> {
    (x <= 0.0).then_some(0)
}

#[test]
fn fix_roots_are_correctly_rounded_for_every_word_of_every_format_of_16_bits() {
    let (mut formats, mut words) = (0, 0);
    for i in 0..=15u32 {
        for f in 0..=(15 - i) {
            let Ok(fmt) = format!("fix:{i}:{f}").parse::<Format>() else {
                continue;
            };
            let c = fmt.calc();
            words += exhaustive(
                &fmt.to_string(),
                &c,
                &midpoint_of,
                &|a| c.sqrt(a),
                &zero_below,
            );
            formats += 1;
        }
    }
    eprintln!("fix: every word of {formats} formats ({words} words), 0 mismatches");
    assert_eq!(formats, 135);
}

#[test]
fn dfix_roots_are_correctly_rounded_and_saturate_at_every_scale() {
    let (mut runs, mut words) = (0, 0);
    for w in 2..=16u32 {
        let f = DfixFormat::new(w).unwrap();
        for scale in [-40, -17, -8, -3, -2, -1, 0, 1, 2, 3, 6, 11] {
            let c = Calc::Dfix(DfixCalc::new(f, scale));
            let name = format!("dfix:{w} at scale {scale}");
            words += exhaustive(&name, &c, &midpoint_of, &|a| c.sqrt(a), &zero_below);
            runs += 1;
            // The flag: set exactly where the root rounds beyond the largest integer, i.e.
            // x ≥ ((max + 1/2)·2^scale)² (a tie goes to max + 1, the even one).
            let bound = square(&Dy {
                m: BigUint::from(2 * f.max_int() as u64 + 1),
                e: i64::from(scale) - 1,
            });
            for a in 0..1u64 << w {
                let x = c.to_f64(a);
                let got = f.sqrt(a, scale, scale);
                assert_eq!(got.word, c.sqrt(a));
                let beyond = x > 0.0 && cmp(&dy(x), &bound) != Ordering::Less;
                assert_eq!(got.overflow, beyond, "{name}: sqrt({a:#x}) overflow");
            }
        }
    }
    eprintln!(
        "dfix: every word of 15 widths at 12 scales ({runs} runs, {words} words), 0 mismatches"
    );
}

/// dfix rounds ties to even: at scale 2, √36 = 6 lies between 4 and 8 (words 1 and 2).
#[test]
fn dfix_ties_go_to_the_even_word() {
    let f = DfixFormat::new(10).unwrap();
    let c = DfixCalc::new(f, 2);
    assert_eq!(f.sqrt(9, 2, 2).word, 2);
    // 100 = 25·4: √100 = 10 = 2.5·4, a tie between 2 and 3: 2.
    assert_eq!(lpgen_golden::Family::sqrt(&c, 25), 2);
}

/// Every LNS word: zero → zero, NaN and negatives → NaN, a positive code c → the code k
/// whose value is nearest √x, where √x = 2^(c/2^(F+1)) and the values 2^(j/2^F) are libm's.
#[test]
fn lns_roots_are_the_nearest_value_for_every_word_of_every_format_of_16_bits() {
    let (mut formats, mut words) = (0, 0);
    for i in 1..=9u32 {
        for fb in 1..=(14 - i) {
            let f = LnsFormat::new(i, fb).unwrap();
            let reserved = -(1i64 << (i + fb));
            let lw = 1 + i + fb;
            let code = |w: u64| ((w << (64 - lw)) as i64) >> (64 - lw);
            let nan = 1u64 << lw | (reserved as u64 & ((1 << lw) - 1));
            let zero = reserved as u64 & ((1 << lw) - 1);
            let val = |j: i64| ((j as f64) / (1u64 << fb) as f64).exp2();
            for a in 0..1u64 << (lw + 1) {
                let r = f.sqrt(a);
                let (neg, c) = (a >> lw & 1 == 1, code(a));
                if c == reserved {
                    assert_eq!(r, if neg { nan } else { zero }, "{f} {a:#x}");
                    continue;
                }
                if neg {
                    assert_eq!(r, nan, "{f} {a:#x}");
                    continue;
                }
                assert_eq!(r >> lw, 0, "{f} {a:#x}: a positive root");
                let k = code(r);
                let s = ((c as f64) / (1u64 << (fb + 1)) as f64).exp2();
                let d = |j: i64| (s - val(j)).abs();
                assert!(k > reserved, "{f} {a:#x}: flushed");
                assert!(
                    d(k) < d(k - 1) && d(k) < d(k + 1),
                    "{f}: sqrt({a:#x}) = code {k} of code {c}, not the nearest value"
                );
                // The log is within half a unit of c/2 (a tie: the lower value).
                assert!((2 * k - c).abs() <= 1 && 2 * k <= c, "{f} {a:#x}");
            }
            words += 1u64 << (lw + 1);
            formats += 1;
        }
    }
    let lns: Format = "lns:5:6".parse().unwrap();
    let (calc, f) = (lns.calc(), LnsFormat::new(5, 6).unwrap());
    for a in 0..1u64 << 13 {
        assert_eq!(calc.sqrt(a), f.sqrt(a));
    }
    eprintln!("lns: every word of {formats} formats ({words} words), 0 mismatches");
    assert_eq!(formats, 81);
}

/// f16 and bf16 (every word) against the `half` crate's rounding of f64's root; f32 (10^6
/// random words and the specials) against f64's root rounded to f32 and on the grid.
#[test]
fn half_and_f32_roots_agree_with_f64s_root_rounded() {
    for name in ["f16", "bf16"] {
        let c = name.parse::<Format>().unwrap().calc();
        for a in 0..1u64 << 16 {
            let x = c.to_f64(a);
            let want = if name == "f16" {
                u64::from(f16::from_f64(x.sqrt()).to_bits())
            } else {
                u64::from(bf16::from_f64(x.sqrt()).to_bits())
            };
            let got = c.sqrt(a);
            if x.is_nan() || x < 0.0 {
                assert!(c.is_nan(got), "{name} {a:#x}");
            } else {
                assert_eq!(got, want, "{name}: sqrt({a:#x} = {x})");
            }
        }
    }
    let c = "f32".parse::<Format>().unwrap().calc();
    let mut rng = Pcg64::seed_from_u64(46);
    let specials = [
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        1,
        0x7f7f_ffff,
        0x3f80_0000,
    ];
    for i in 0..1_000_000 {
        let a = specials
            .get(i)
            .copied()
            .unwrap_or_else(|| rng.gen::<u32>() as u64);
        let x = f32::from_bits(a as u32);
        let got = f32::from_bits(c.sqrt(a) as u32);
        let want = (x as f64).sqrt() as f32;
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "f32: sqrt({x:e}) = {got:e}, want {want:e}"
        );
        if x > 0.0 && x.is_finite() {
            // Neighbours of a positive f32 by its bits, midpoints exact.
            let g: Vec<(f64, Bits)> = [-1i64, 0, 1]
                .iter()
                .map(|d| (f32::from_bits((got.to_bits() as i64 + d) as u32) as f64, 0))
                .collect();
            check_root(&g, &midpoint_of, x as f64, 0, got as f64).unwrap();
        }
    }
}

/// Stochastic rounding of float and fix roots: one draw per root, the result one of the
/// two neighbours of √x (the nearest one's word exactly when the root is exact), and the
/// mean of many roots of one word near √x.
#[test]
fn stochastic_roots_take_one_draw_and_a_neighbour() {
    for s in ["bf16", "float:4:3", "fix:3:4", "fix:2:9", "float:8:52"] {
        let c = s.parse::<Format>().unwrap().calc();
        let rounding = Rounding::Stochastic(8);
        let mut r = Rounder::new(rounding, 7);
        let mut twin = Rounder::new(rounding, 7);
        let a = c.from_f64(2.0);
        let hi = c.to_f64(a).sqrt();
        let mut seen = vec![];
        let mut sum = 0.0;
        let n = 4000;
        for _ in 0..n {
            let y = c.to_f64(c.sqrt_with(a, &mut r).unwrap());
            twin.draw();
            assert_eq!(r.generator(), twin.generator(), "{s}: one draw per root");
            if !seen.contains(&y) {
                seen.push(y);
            }
            sum += y;
        }
        seen.sort_by(f64::total_cmp);
        assert!(
            seen.len() == 2 && seen[0] <= hi && hi <= seen[1],
            "{s}: {seen:?}"
        );
        let mean = sum / n as f64;
        let tolerance = ((seen[1] - seen[0]) / 16.0).max(1e-12);
        assert!((mean - hi).abs() < tolerance, "{s}: mean {mean}, √2 {hi}");
        // An exact root never moves.
        let four = c.from_f64(4.0);
        assert_eq!(c.sqrt_with(four, &mut r).unwrap(), c.from_f64(2.0), "{s}");
    }
    let lns = "lns:5:6".parse::<Format>().unwrap().calc();
    let mut r = Rounder::new(Rounding::Stochastic(8), 1);
    assert!(lns.sqrt_with(lns.one(), &mut r).is_err());
}
