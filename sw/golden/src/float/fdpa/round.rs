//! The rounding of a chunk's truncated sum by RHO into its output word ([`round`]), and the
//! truncation both the steps and the lanes use.

use super::{Rho, NAN_F16, NAN_F32};
use crate::arith::Bits;

/// trunc(sig·2^s), toward zero.
pub(super) fn shift_trunc(sig: u128, s: i64) -> u128 {
    if s >= 0 {
        sig << s
    } else if s <= -128 {
        0
    } else {
        sig >> -s
    }
}

/// The NaN result word of RHO's output format.
pub(super) fn nan_of(rho: Rho) -> Bits {
    match rho {
        Rho::RzF32 | Rho::RzE8m13 => NAN_F32,
        Rho::RneF16 => NAN_F16,
    }
}

/// v·2^q rounded by RHO into its output word; a zero (or −0) result is +0.
pub(super) fn round(rho: Rho, v: i128, q: i64) -> Bits {
    let (neg, mut mag) = (v < 0, v.unsigned_abs());
    if mag == 0 {
        return 0;
    }
    let out = rho.output();
    let Some(m) = rho.rz_bits() else {
        // Nearest even binary16 (overflow: ±∞); −0 becomes +0.
        let w = out.round(neg, mag, q);
        return if w == out.zero_of(true) { 0 } else { w };
    };
    let top = q + 127 - i64::from(mag.leading_zeros());
    if top > out.emax() {
        // Toward zero, an overflow is the largest value with m fraction bits.
        return out.round(neg, (1u128 << (m + 1)) - 1, out.emax() - m);
    }
    let lsb = (top - m).max(out.emin() - m);
    if lsb > q {
        mag = shift_trunc(mag, q - lsb);
    }
    if mag == 0 {
        return 0;
    }
    // At most m + 1 bits from the last place lsb: exact in binary32.
    exact_f32(neg, mag, lsb.max(q))
}

/// The binary32 word of ±mag·2^e, a value binary32 holds exactly (nothing is left to
/// round): f64 holds it exactly too (mag below 2^53, 2^e a normal f64), and its conversion
/// to f32 is then exact. What `binary32().round` gives for such a value, without the general
/// rounding's work (once a chunk).
fn exact_f32(neg: bool, mag: u128, e: i64) -> Bits {
    debug_assert!(mag < 1 << 53 && (-1022..=1023).contains(&e));
    let unit = f64::from_bits(((e + 1023) as u64) << 52);
    let v = (mag as u64 as f64 * unit) as f32;
    Bits::from(if neg { -v } else { v }.to_bits())
}
