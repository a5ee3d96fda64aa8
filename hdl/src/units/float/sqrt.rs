//! The float lane's square root: y = √a, golden `FloatFormat::sqrt` (`--sqrt`).

use lpgen_golden::FloatFormat;

use super::div::normalised;
use super::{decode, inf_word, qnan, round_encode, zero_word};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};
use crate::units::root::restoring_root;

/// Candidate stage boundaries: after decoding and normalising the operand, halfway through
/// the root, after it, and the rounder's.
pub(crate) const SQRT_STAGES: u32 = 4;

/// √a rounded once to nearest. The normalised significand s (M + 1 bits, leading one at the
/// top, value 1.f) and the unbiased exponent e give the radicand x = s·2^(e mod 2) ∈ [1, 4)
/// and the result's biased exponent ⌊e/2⌋ + bias; q = ⌊√(x·2^(2(M+2)))⌋ by the restoring
/// digit recurrence (one root bit per step, M + 3 steps) has its leading one at bit M + 2 and
/// a guard bit below the kept ones; the remainder is the sticky bit (golden `sqrt_sig`).
/// Specials: NaN and a negative nonzero a (−∞ too) give NaN, ±0 itself (a `:ftz` subnormal
/// the zero of its sign), +∞ itself. Marks [`SQRT_STAGES`].
pub(crate) fn sqrt_core(m: &mut Module, f: FloatFormat, a: &E) -> E {
    let mf = f.frac_bits;
    let (bias, top) = (f.bias(), (1i64 << f.exp_bits) - 1);
    // The normalised biased exponent lies in [1 − M, 2^E − 1]; the result's below.
    let bw = signed_bits(1 - i64::from(mf) - 1, top + bias + 1).max(f.exp_bits + 2);
    m.comment("decode a (sign, exponent, significand; NaN, infinity, zero)");
    let d = decode(m, f, "a", a);
    let neg_nonzero = d.sign.and(&d.zero.not());
    let is_nan = m.wire("is_nan", &d.nan.or(&neg_nonzero));
    let is_inf = d.inf.clone().map(|i| m.wire("is_inf", &i));
    let is_zero = m.wire("is_zero", &d.zero);
    m.comment("normalise; an odd exponent doubles the radicand; the exponent halves");
    let (s, be) = normalised(m, "radicand", &d, bw);
    // e = be − bias is odd iff be is even (the bias 2^(E−1) − 1 is odd).
    let odd = m.wire("odd", &be.bit(0).not());
    let x = mux(
        &odd,
        &cat(&[s.clone(), konst(1, 0)]),
        &cat(&[konst(1, 0), s]),
    );
    // (be + bias − odd) / 2, exact: the numerator is even.
    let twice = be
        .sext(bw + 1)
        .add(&signed_konst(bw + 1, bias))
        .sub(&odd.zext(bw + 1));
    let root_exp = m.wire("root_exp", &twice.bits(bw, 1));
    m.stage();
    m.comment("root: restoring digit recurrence, one bit per step, two radicand bits each");
    let steps = mf + 3;
    // The radicand x·2^(M+4): 2(M + 3) bits, read two at a time from the top.
    let rad = cat(&[x, konst(mf + 4, 0)]);
    let (root, rem) = restoring_root(m, "", &rad, steps);
    let sticky = m.wire("sticky", &rem.any());
    m.stage();
    let norm = m.wire("root_sig", &cat(&[root, sticky]));
    let word = round_encode(m, f, &konst(1, 0), &root_exp, &norm);
    m.comment("specials: NaN (a NaN or a negative operand), a zero, +infinity");
    let word = mux(&is_zero, &zero_word(f, &d.sign), &word);
    let word = match is_inf {
        Some(i) => mux(&i, &inf_word(f, &konst(1, 0)), &word),
        None => word,
    };
    mux(&is_nan, &qnan(f), &word)
}
