//! The float lane's divider: y = a / b, golden `FloatFormat::div`.

use lpgen_golden::FloatFormat;

use super::super::posit::decode::lzc;
use super::{decode, inf_word, qnan, round_encode_with, signed_word, zero_word, Decoded};
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries: after decoding and normalising the operands, halfway through
/// the division, after it, and the rounder's.
pub(crate) const DIV_STAGES: u32 = 4;

/// The word of an exact infinite result (x/0, ∞/x), golden `FloatFormat::infinite`: ±∞, or
/// with `:fn` ±max (`:sat`) or NaN.
pub(crate) fn infinite_word(f: FloatFormat, sign: &E) -> E {
    if !f.finite {
        inf_word(f, sign)
    } else if f.sat {
        let max = u128::from(f.max_finite(false));
        signed_word(sign, &named("FLOAT_MAX", f.width() - 1, max))
    } else {
        qnan(f)
    }
}

/// A decoded operand's significand with its leading one at the top (subnormals shifted up)
/// and the biased exponent of that one (`bw` bits, signed).
pub(super) fn normalised(m: &mut Module, name: &str, d: &Decoded, bw: u32) -> (E, E) {
    let (lz, _) = lzc(m, name, &d.sig);
    let sig = m.wire(&format!("{name}_sig"), &d.sig.shl(&lz));
    let exp = d.exp.zext(bw).sub(&lz.zext(bw));
    (sig, m.wire(&format!("{name}_exp"), &exp))
}

/// a / b rounded once. The normalised significands sa, sb (M + 1 bits, leading one at the
/// top) give q = ⌊sa·2^Q / sb⌋ with Q = M + 2 by restoring division, so q has its leading
/// one at bit Q or Q − 1 and M + 2 bits or more below it: every kept bit and the guard; the
/// remainder is the sticky bit. Specials: a NaN operand, 0/0 and ∞/∞ give NaN; x/0 and ∞/x
/// the infinite result of sign a⊕b; x/∞ and 0/x zero of that sign. Marks [`DIV_STAGES`].
pub(crate) fn div_core_with(m: &mut Module, f: FloatFormat, a: &E, b: &E, random: Option<&E>) -> E {
    let mf = f.frac_bits;
    let (bias, top) = (f.bias(), (1i64 << f.exp_bits) - 1);
    // The quotient's biased exponent: ea − eb + bias (− 1), ea, eb in [1 − M, 2^E − 1].
    let lo = (1 - i64::from(mf)) - top + bias - 1;
    let hi = top - (1 - i64::from(mf)) + bias;
    let bw = signed_bits(lo, hi).max(f.exp_bits + 2);
    m.comment("decode a and b (sign, exponent, significand; NaN, infinity, zero)");
    let da = decode(m, f, "a", a);
    let db = decode(m, f, "b", b);
    let neg = m.wire("neg", &da.sign.xor(&db.sign));
    // NaN: a NaN operand, 0/0, ∞/∞; infinite: x/0 (x nonzero), ∞/x; zero: 0/x, x/∞.
    let mut nan = da.nan.or(&db.nan).or(&da.zero.and(&db.zero));
    let mut infinite = db.zero.and(&da.zero.not());
    let mut zero = da.zero.and(&db.zero.not());
    if let (Some(ia), Some(ib)) = (&da.inf, &db.inf) {
        nan = nan.or(&ia.and(ib));
        infinite = infinite.or(ia);
        zero = zero.or(ib);
    }
    let is_nan = m.wire("is_nan", &nan);
    let is_infinite = m.wire("is_infinite", &infinite);
    let is_zero = m.wire("is_zero", &zero);
    m.comment("normalise: each significand's leading one to the top (subnormal operands)");
    let (sa, ea) = normalised(m, "dividend", &da, bw);
    let (sb, eb) = normalised(m, "divisor", &db, bw);
    let exp_diff = ea.sub(&eb).add(&signed_konst(bw, bias));
    let exp_diff = m.wire("exp_diff", &exp_diff);
    m.stage();
    m.comment("divide: restoring division, one quotient bit per step");
    let q_bits = mf + 1 + random.map_or(1, |r| r.width);
    let dw = mf + 2; // the partial remainder is below 2·divisor
    let divisor = sb.zext(dw + 1);
    let mut rem = sa.zext(dw);
    let mut qbits = vec![];
    for step in 0..=q_bits {
        if step == q_bits.div_ceil(2) {
            m.stage();
        }
        let r = if step == 0 {
            rem.clone()
        } else {
            cat(&[rem.low(dw - 1), konst(1, 0)])
        };
        let diff = r.zext(dw + 1).sub(&divisor);
        let i = q_bits - step;
        let bit = m.wire(&format!("q{i}"), &diff.msb().not());
        rem = m.wire(&format!("rem{i}"), &mux(&bit, &diff.low(dw), &r));
        qbits.push(bit);
    }
    let q = m.wire("quotient", &cat(&qbits));
    let sticky = m.wire("sticky", &rem.any());
    m.stage();
    m.comment("normalise the quotient: its leading one at bit Q or Q - 1; the sticky bit below");
    let q_top = q.msb();
    let sig = mux(&q_top, &q, &cat(&[q.low(q_bits), konst(1, 0)]));
    let norm = m.wire("quotient_sig", &cat(&[sig, sticky]));
    let be = m.wire("quotient_exp", &exp_diff.sub(&q_top.not().zext(bw)));
    let word = round_encode_with(m, f, &neg, &be, &norm, random);
    m.comment("specials: NaN, an infinite result, a zero result");
    let word = mux(&is_zero, &zero_word(f, &neg), &word);
    let word = mux(&is_infinite, &infinite_word(f, &neg), &word);
    mux(&is_nan, &qnan(f), &word)
}
