//! Exact rationals for conversions: decimal strings and f64 values as num/den big integers.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::format::{err, FormatError};

/// A nonnegative exact ratio with a sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ratio {
    pub neg: bool,
    pub num: BigUint,
    pub den: BigUint,
}

/// The exact value of a finite f64's magnitude as num/den (den a power of two).
pub fn f64_ratio(x: f64) -> (BigUint, BigUint) {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let mant = BigUint::from(mant);
    if e >= 0 {
        (mant << e as u64, BigUint::one())
    } else {
        (mant, BigUint::one() << (-e) as u64)
    }
}

/// The longest decimal operand: the exact expansion of the smallest f64 subnormal, written
/// out without an exponent, has 1,076 characters; 4,096 leaves room and keeps every parse
/// (and the big-integer arithmetic after it) well under a millisecond.
pub const MAX_DECIMAL_CHARS: usize = 4096;

/// Parses a decimal real (`-12.5`, `3e-7`, `.5`, `1E+3`) exactly. `inf`/`nan` are refused here;
/// the caller decides what they mean.
pub fn parse_decimal(s: &str) -> Result<Ratio, FormatError> {
    if s.len() > MAX_DECIMAL_CHARS {
        return err(format!(
            "a decimal operand of {} characters is over the limit of {MAX_DECIMAL_CHARS} (enough \
             for the exact expansion of any f64; give longer values as 0x bit patterns)",
            s.len()
        ));
    }
    let bad = || {
        err(format!(
            "{s:?} is not a decimal number or a 0x bit pattern (e.g. 2.5, -1e-3, 0x40)"
        ))
    };
    let t = s.trim();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, "0"),
    };
    let exp: i64 = match exp.parse() {
        Ok(e) if (-100_000..=100_000).contains(&e) => e,
        _ => return bad(),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return bad();
    }
    let digits = format!("{int}{frac}");
    let mut num = BigUint::parse_bytes(digits.as_bytes(), 10).unwrap_or_default();
    let mut den = BigUint::one();
    let e = exp - frac.len() as i64;
    let ten = BigUint::from(10u32);
    if e >= 0 {
        num *= ten.pow(e as u32);
    } else {
        den = ten.pow((-e) as u32);
    }
    if num.is_zero() {
        den = BigUint::one();
    }
    Ok(Ratio { neg, num, den })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_over_the_length_limit_are_refused_quickly() {
        let ok = format!("0.{}1", "0".repeat(MAX_DECIMAL_CHARS - 3));
        assert!(parse_decimal(&ok).is_ok());
        let long = "1".repeat(4_000_000);
        let t = std::time::Instant::now();
        let e = parse_decimal(&long).unwrap_err().0;
        assert!(
            e.contains("4000000 characters is over the limit of 4096"),
            "{e}"
        );
        assert!(t.elapsed().as_millis() < 100);
    }

    #[test]
    fn decimals_parse_exactly() {
        let r = parse_decimal("-12.50e-1").unwrap();
        assert!(r.neg);
        assert_eq!(r.num * BigUint::from(4u32), r.den * BigUint::from(5u32));
        let r = parse_decimal(".5").unwrap();
        assert_eq!(r.num * BigUint::from(2u32), r.den);
        for bad in ["", "-", "1.2.3", "abc", "1e", "0x", "1e999999", "--1"] {
            assert!(parse_decimal(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn f64_ratios_are_exact() {
        let (n, d) = f64_ratio(0.375);
        assert_eq!(n * BigUint::from(8u32), d * BigUint::from(3u32));
        let (n, d) = f64_ratio(5e-324);
        assert_eq!(n, BigUint::one());
        assert_eq!(d, BigUint::one() << 1074u32);
    }
}
