//! Deterministic high-precision evaluation of exp2 and ln on big integers.
//!
//! Every function here returns a fixed-point approximation `m` of a real `v` at `w` fraction
//! bits (`v ≈ m / 2^w`) with `|v - m/2^w| <= ERR_ULPS / 2^w`. Callers round such an enclosure
//! to their target grid and, when the enclosure straddles a rounding boundary, ask again with
//! more bits ([`round_enclosure`]). No floating point is involved, so the results are the same
//! on every machine; libm is used elsewhere only as a fast path whose answer is accepted when it
//! is far from a boundary.
//!
//! Error budget: each routine works internally with `GUARD` extra bits. Its truncation errors
//! add up to at most a few thousand internal ulps (series of < 400 terms, each step off by at
//! most one ulp, factors below 1), which is below 2^-20 of an output ulp; the final truncation
//! adds one more ulp. `ERR_ULPS = 2` therefore holds with a wide margin.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// Bound on the error of every result, in units of `2^-w`.
pub const ERR_ULPS: i64 = 2;

/// Internal guard bits added on top of the requested precision.
const GUARD: u32 = 40;

fn one(w: u32) -> BigInt {
    BigInt::one() << w
}

/// ln 2 at `w` fraction bits: sum over k >= 1 of 1 / (k 2^k).
pub fn ln2(w: u32) -> BigInt {
    let wi = w + GUARD;
    let mut sum = BigInt::zero();
    let mut k: u32 = 1;
    loop {
        if k > wi {
            break;
        }
        let term = one(wi - k) / BigInt::from(k);
        if term.is_zero() {
            break;
        }
        sum += term;
        k += 1;
    }
    sum >> GUARD
}

/// e^y for 0 <= y < 1, fixed point at `wi` bits in and out (Taylor series).
fn exp_unit(y: &BigInt, wi: u32) -> BigInt {
    let mut term = one(wi);
    let mut sum = term.clone();
    let mut k: u32 = 1;
    loop {
        term = ((term * y) >> wi) / BigInt::from(k);
        if term.is_zero() {
            break;
        }
        sum += &term;
        k += 1;
    }
    sum
}

/// 2^t where t = `t_num` / 2^`t_frac` (an exact dyadic), at `w` fraction bits.
pub fn exp2(t_num: &BigInt, t_frac: u32, w: u32) -> BigInt {
    // t = n + f with n = floor(t), 0 <= f < 1; 2^t = 2^n e^(f ln 2).
    let n = t_num.div_floor(&(BigInt::one() << t_frac));
    let f_num = t_num - (&n << t_frac);
    let n: i64 = (&n).try_into().expect("exp2 argument out of range");
    let wi = w + GUARD + n.max(0) as u32;
    let f = if wi >= t_frac {
        f_num << (wi - t_frac)
    } else {
        f_num >> (t_frac - wi)
    };
    let y = (f * ln2(wi)) >> wi;
    let e = exp_unit(&y, wi);
    // value = e 2^n / 2^wi; we want it at w bits.
    let shift = wi as i64 - w as i64 - n;
    if shift >= 0 {
        e >> shift as u64
    } else {
        e << (-shift) as u64
    }
}

/// ln(num / den) for num, den > 0, at `w` fraction bits.
pub fn ln_ratio(num: &BigUint, den: &BigUint, w: u32) -> BigInt {
    assert!(
        !num.is_zero() && !den.is_zero(),
        "ln of a non-positive number"
    );
    let wi = w + GUARD;
    // s = floor(log2(num/den)), so z = (num/den) / 2^s lies in [1, 2).
    let mut s = num.bits() as i64 - den.bits() as i64;
    let scaled = |s: i64| -> BigUint {
        // floor(num 2^(wi - s) / den)
        let sh = wi as i64 - s;
        if sh >= 0 {
            (num << sh as u64) / den
        } else {
            num / (den << (-sh) as u64)
        }
    };
    let mut z = scaled(s);
    if z < (BigUint::one() << wi) {
        s -= 1;
        z = scaled(s);
    }
    let z = BigInt::from_biguint(Sign::Plus, z);
    // ln z = 2 atanh(u), u = (z - 1)/(z + 1) in [0, 1/3).
    let u = ((&z - one(wi)) << wi) / (&z + one(wi));
    let u2 = (&u * &u) >> wi;
    let mut power = u.clone();
    let mut sum = u;
    let mut k: u32 = 1;
    loop {
        power = (power * &u2) >> wi;
        let term = &power / BigInt::from(2 * k + 1);
        if term.is_zero() {
            break;
        }
        sum += term;
        k += 1;
    }
    let ln = (sum << 1) + BigInt::from(s) * ln2(wi);
    ln >> GUARD
}

/// log2(num / den) at `w` fraction bits.
pub fn log2_ratio(num: &BigUint, den: &BigUint, w: u32) -> BigInt {
    let wi = w + GUARD;
    ((ln_ratio(num, den, wi) << wi) / ln2(wi)) >> GUARD
}

/// Rounds the real that `approx(w)` encloses (see the module comment) to the nearest multiple
/// of 2^-`frac_bits`, returned as an integer. Asks for more bits while the enclosure straddles
/// a rounding boundary; the callers only round values that are never exactly on a boundary
/// (irrational by construction), so this terminates.
pub fn round_enclosure(frac_bits: u32, mut approx: impl FnMut(u32) -> BigInt) -> BigInt {
    let mut w = frac_bits + 64;
    loop {
        let m = approx(w);
        let lo = round_half_up(&(&m - ERR_ULPS), w - frac_bits);
        let hi = round_half_up(&(&m + ERR_ULPS), w - frac_bits);
        if lo == hi {
            return lo;
        }
        assert!(
            w < 1 << 16,
            "round_enclosure: value is on a rounding boundary (please report this as a bug)"
        );
        w *= 2;
    }
}

/// floor(x / 2^sh + 1/2)
fn round_half_up(x: &BigInt, sh: u32) -> BigInt {
    if sh == 0 {
        return x.clone();
    }
    (x + (BigInt::one() << (sh - 1))) >> sh
}

/// Converts a fixed-point value at `w` bits to the nearest f64 (for tests and reporting).
pub fn to_f64(m: &BigInt, w: u32) -> f64 {
    let bits = m.bits();
    let (top, sh) = if bits > 60 {
        (m.abs() >> (bits - 60), bits as i32 - 60)
    } else {
        (m.abs(), 0)
    };
    let t: u64 = (&top).try_into().unwrap();
    let v = t as f64 * (2f64).powi(sh - w as i32);
    if m.is_negative() {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(m: &BigInt, w: u32, want: f64) {
        let got = to_f64(m, w);
        assert!(
            (got - want).abs() <= 1e-15 * want.abs().max(1.0),
            "{got} vs {want}"
        );
    }

    #[test]
    fn constants_and_functions_match_f64_to_its_precision() {
        close(&ln2(100), 100, std::f64::consts::LN_2);
        close(&exp2(&BigInt::from(-3), 1, 120), 120, 2f64.powf(-1.5));
        close(&exp2(&BigInt::from(77), 3, 120), 120, 2f64.powf(77.0 / 8.0));
        close(
            &ln_ratio(&BigUint::from(10u32), &BigUint::from(3u32), 120),
            120,
            (10.0f64 / 3.0).ln(),
        );
        close(
            &log2_ratio(&BigUint::from(1u32), &BigUint::from(1000u32), 120),
            120,
            (0.001f64).log2(),
        );
    }

    #[test]
    fn ln2_agrees_with_itself_at_two_precisions() {
        // The 100-bit value must be the 200-bit one truncated, up to the error bound.
        let a = ln2(100);
        let b: BigInt = ln2(200) >> 100;
        assert!((a - b).abs() <= BigInt::from(ERR_ULPS));
    }

    #[test]
    fn rounding_escalates_near_a_boundary() {
        // log2(3) * 2^3 = 12.67...: rounds to 13 however it is approached.
        let r = round_enclosure(3, |w| {
            log2_ratio(&BigUint::from(3u32), &BigUint::from(1u32), w)
        });
        assert_eq!(r, BigInt::from(13));
    }
}
