//! Conversions: `from_f64` and `from_ratio` against the exact reference.

use super::*;
use lpgen_golden::Family;

/// Random f64s over (and beyond) the format's range, its midpoints and their f64 neighbours,
/// and the f64 special values.
fn check_from_f64(fmt: PositFormat, count: usize) {
    let r = Reference::new(&fmt);
    let mut rng = Pcg64::seed_from_u64(seed() ^ 0xf640 ^ u64::from(fmt.n << 8 | fmt.es));
    let max_scale = ((fmt.n - 1) << fmt.es) as i32 + 4;
    let mut xs = vec![
        0.0,
        -0.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        1.0,
        -1.0,
    ];
    for _ in 0..count {
        let x = match rng.gen_range(0..4) {
            0 => f64::from_bits(rng.gen()),
            1 => {
                // A midpoint, exactly or one f64 ulp away.
                let i = rng.gen_range(-r.maxi()..r.maxi());
                let m = r.midpoint(i);
                let x = m.m.to_string().parse::<f64>().unwrap() * (2f64).powi(m.e as i32);
                assert_eq!(Dyadic::from_f64(x), *m, "midpoints are f64s");
                let b = x.to_bits();
                [x, f64::from_bits(b + 1), f64::from_bits(b.wrapping_sub(1))]
                    [rng.gen_range(0..3usize)]
            }
            _ => {
                let m = 1.0 + rng.gen::<f64>();
                let e = rng.gen_range(-max_scale..=max_scale);
                let s = if rng.gen() { 1.0 } else { -1.0 };
                s * m * (2f64).powi(e)
            }
        };
        xs.push(x);
    }
    let mut checked = 0;
    for x in xs {
        let want = if x.is_finite() {
            r.round(&Exact::Dyadic(Dyadic::from_f64(x)))
        } else {
            fmt.nar()
        };
        let got = fmt.from_f64(x);
        assert_eq!(
            got,
            want,
            "{fmt}: from_f64({x:e} = {:#x}) = {}, reference {} (seed {:#x})",
            x.to_bits(),
            hex(&fmt, got),
            hex(&fmt, want),
            seed()
        );
        checked += 1;
    }
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(fmt.from_f64(x), fmt.nar(), "{fmt}: from_f64({x})");
    }
    assert!(checked > count);
}

#[test]
fn from_f64_matches_the_reference() {
    for fmt in [
        draft(8, 0),
        draft(8, 5),
        draft_u(8, 2),
        draft(10, 3),
        draft(16, 1),
        std2022(16, false),
        std2022(32, false),
        draft(32, 2),
        draft(32, 5),
        draft_u(32, 5),
        draft_u(24, 4),
        draft(5, 1),
    ] {
        check_from_f64(fmt, 30_000);
    }
}

/// num/den from a decimal string like "-6.02214076e23".
fn decimal(s: &str) -> (bool, BigUint, BigUint) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let (mant, exp) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap()),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits: BigUint = format!("{int}{frac}").parse().unwrap();
    let exp = exp - frac.len() as i32;
    let ten = BigUint::from(10u32);
    if exp >= 0 {
        (neg, digits * ten.pow(exp as u32), BigUint::one())
    } else {
        (neg, digits, ten.pow(-exp as u32))
    }
}

fn ratio_exact(neg: bool, num: &BigUint, den: &BigUint) -> Exact {
    let sign = if neg { Sign::Minus } else { Sign::Plus };
    let num = Dyadic::new(BigInt::from_biguint(sign, num.clone()), 0);
    Exact::ratio(num, Dyadic::new(BigInt::from(den.clone()), 0))
}

#[test]
fn from_ratio_matches_the_reference_on_decimals() {
    let decimals = [
        "0.1",
        "-0.1",
        "1",
        "3.14159265358979323846",
        "-2.5",
        "2.75",
        "0.0078125",
        "1e-30",
        "-1e-40",
        "6.02214076e23",
        "1.7976931348623157e308",
        "123456789",
        "0.333333333333333333333333333333",
        "65535.5",
        "1e-200",
        "0",
    ];
    for fmt in [
        draft(8, 0),
        draft_u(8, 2),
        draft(16, 1),
        std2022(16, false),
        std2022(32, false),
        draft(32, 5),
        draft_u(12, 1),
    ] {
        let r = Reference::new(&fmt);
        for s in decimals {
            let (neg, num, den) = decimal(s);
            let want = r.round(&ratio_exact(neg, &num, &den));
            let got = fmt.from_ratio(neg, &num, &den);
            assert_eq!(
                got,
                want,
                "{fmt}: from_ratio({s}) = {}, reference {}",
                hex(&fmt, got),
                hex(&fmt, want)
            );
        }
    }
    assert_eq!(decimal("-6.25e-1"), (true, 625u32.into(), 1000u32.into()));
}

#[test]
fn from_ratio_at_and_next_to_every_midpoint() {
    // Each midpoint exactly (a tie), and a third of 2^-400 above and below it.
    for fmt in [
        draft(8, 0),
        draft(6, 2),
        draft_u(7, 1),
        std2022(8, true),
        draft(10, 3),
    ] {
        let r = Reference::new(&fmt);
        let t = 400;
        let mut checked = 0;
        let beyond = [
            r.value(r.maxi()).mul(&Dyadic::int(3)),
            r.value(1).mul(&Dyadic::pow2(-3)),
        ];
        let points = (-r.maxi()..r.maxi())
            .map(|i| r.midpoint(i).into_owned())
            .chain(beyond.iter().flat_map(|x| [x.clone(), x.neg()]));
        for m in points {
            assert!(m.e > -t);
            let scaled = &m.m << (m.e + t) as u64; // m·2^t, an integer
            let den3 = BigUint::from(3u32) << t as u64;
            for (num, den) in [
                (scaled.clone(), BigUint::one() << t as u64),
                (&scaled * 3 + 1, den3.clone()),
                (&scaled * 3 - 1, den3.clone()),
            ] {
                let neg = num.sign() == Sign::Minus;
                let mag = num.magnitude().clone();
                let want = r.round(&ratio_exact(neg, &mag, &den));
                let got = fmt.from_ratio(neg, &mag, &den);
                assert_eq!(got, want, "{fmt}: from_ratio({num}/{den})");
                checked += 1;
            }
        }
        assert!(checked > 3 * r.maxi());
    }
}
