//! Conversions: `from_f64`, `from_ratio` and `to_f64_exact` against the reference.

use super::*;

/// Random f64s: a quarter arbitrary bit patterns (NaN, ±∞, subnormals, huge), the rest with
/// |log2| spread a little beyond the format's range, both signs.
fn random_f64s(fmt: Fmt, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let reach = (1i32 << fmt.i) + 3;
    (0..n)
        .map(|_| {
            if rng.gen_bool(0.25) {
                f64::from_bits(rng.gen())
            } else {
                let e = rng.gen_range(-reach..=reach);
                let m = 1.0 + (rng.gen::<u64>() >> 12) as f64 / (1u64 << 52) as f64;
                let x = m * 2f64.powi(e);
                if rng.gen() {
                    -x
                } else {
                    x
                }
            }
        })
        .collect()
}

/// The f64s around every rounding boundary (including the flush and saturation boundaries).
fn near_boundary_f64s(r: &Reference) -> Vec<f64> {
    let mut xs = Vec::new();
    for &b in &r.boundary_below {
        for k in -2i64..=3 {
            let x = f64::from_bits((b.to_bits() as i64 + k) as u64);
            xs.push(x);
            xs.push(-x);
        }
    }
    xs
}

fn from_f64_checks(fmt: Fmt, seed: u64) {
    let r = Reference::get(fmt);
    let g = fmt.golden();
    let mut xs = random_f64s(fmt, 1_000_000, seed);
    xs.extend(near_boundary_f64s(r));
    // Exact powers of two and a few landmarks.
    for e in -40..=40 {
        xs.push(2f64.powi(e));
        xs.push(-(2f64.powi(e)));
    }
    xs.extend([
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
    ]);
    xs.extend([f64::MAX, f64::MIN, 5e-324, -5e-324, 1.0, -1.0]);
    let chunk = xs.len().div_ceil(4);
    let m = par_rows(4, |part, m| {
        let lo = part as usize * chunk;
        for &x in &xs[lo..(lo + chunk).min(xs.len())] {
            let (got, want) = (g.from_f64(x), r.convert_f64(x));
            if got != want {
                m.push(|| {
                    format!(
                        "  from_f64({x:e} = {:#018x}): golden {} reference {}",
                        x.to_bits(),
                        fmt.describe(got),
                        fmt.describe(want)
                    )
                });
            }
        }
    });
    m.assert_none(&format!(
        "from_f64 on {} values, lns:{}:{}",
        xs.len(),
        fmt.i,
        fmt.f
    ));
}

#[test]
fn from_f64_random_and_near_boundaries_lns_5_6() {
    from_f64_checks(LNS_5_6, 56);
}

#[test]
fn from_f64_random_and_near_boundaries_lns_4_4() {
    from_f64_checks(LNS_4_4, 44);
}

/// Minimal reproducer: values that round to code_max + 1 (just above the largest code) must
/// saturate to ±code_max, not land on the reserved code (zero / NaN).
#[test]
fn from_f64_saturates_just_above_the_largest_code() {
    for fmt in [LNS_5_6, LNS_4_4] {
        let g = fmt.golden();
        let top = (1i32 << fmt.i) as f64; // 2^(code_max+1)/2^F = 2^(2^I)
        let x = 2f64.powf(top);
        let max = fmt.encode(Word::Num {
            neg: false,
            code: fmt.code_max(),
        });
        let neg_max = fmt.encode(Word::Num {
            neg: true,
            code: fmt.code_max(),
        });
        assert_eq!(
            (g.from_f64(x), g.from_f64(-x)),
            (max, neg_max),
            "lns:{}:{} from_f64(±2^{top}) gave ({}, {}), want ±code_max ({}, {})",
            fmt.i,
            fmt.f,
            fmt.describe(g.from_f64(x)),
            fmt.describe(g.from_f64(-x)),
            fmt.describe(max),
            fmt.describe(neg_max)
        );
    }
}

#[test]
fn from_ratio_small_ratios_and_powers() {
    let mut cc = consts();
    for fmt in [LNS_5_6, LNS_4_4] {
        let g = fmt.golden();
        let sf = BigFloat::from_u64(1 << fmt.f, PREC);
        let mut ratios: Vec<(BigUint, BigUint)> = Vec::new();
        for n in 1u32..=48 {
            for d in 1u32..=48 {
                ratios.push((n.into(), d.into()));
            }
        }
        for k in 0..=40u32 {
            let p = BigUint::one() << k;
            for (n, d) in [
                (p.clone(), BigUint::one()),
                (BigUint::one(), p.clone()),
                (&p + 1u32, BigUint::one()),
                (BigUint::one(), &p + 1u32),
                (&p * 3u32, BigUint::from(2u32)),
                // Around the cheap range cut-off on bit lengths.
                (BigUint::from(3u32), p.clone()),
                ((&p - 1u32).max(BigUint::one()), BigUint::one()),
                (BigUint::one(), (&p - 1u32).max(BigUint::one())),
                (&p + 1u32, BigUint::from(3u32)),
                (BigUint::from(5u32), &p * 3u32),
            ] {
                ratios.push((n, d));
            }
        }
        let mut m = Mismatches::default();
        for (n, d) in &ratios {
            for neg in [false, true] {
                let q = BigFloat::from_u64(n.to_u64().unwrap(), PREC).div(
                    &BigFloat::from_u64(d.to_u64().unwrap(), PREC),
                    PREC,
                    RM,
                );
                let t = q.log2(PREC, RM, &mut cc).mul(&sf, PREC, RM);
                let c = nearest(&t, &|| format!("log2({n}/{d})"));
                let want = fmt.finish(neg, c as i128);
                let got = g.from_ratio(neg, n, d);
                if got != want {
                    m.push(|| {
                        format!(
                            "  from_ratio({}{n}/{d}): golden {} reference {}",
                            if neg { "-" } else { "" },
                            fmt.describe(got),
                            fmt.describe(want)
                        )
                    });
                }
            }
        }
        m.assert_none(&format!("from_ratio, lns:{}:{}", fmt.i, fmt.f));
    }
}

#[test]
fn to_f64_exact_every_word_lns_5_6() {
    let fmt = LNS_5_6;
    let g = fmt.golden();
    let pow = Pow2::new(fmt.f, &mut consts());
    let mut m = Mismatches::default();
    for w in 0..fmt.words() {
        let want = value(fmt, w, &pow);
        let got = g.to_f64_exact(w);
        if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
            m.push(|| {
                format!(
                    "  {}: golden {got:e} ({:#018x}) reference {want:e} ({:#018x})",
                    fmt.describe(w),
                    got.to_bits(),
                    want.to_bits()
                )
            });
        }
    }
    m.assert_none("to_f64_exact over every word of lns:5:6");
}
