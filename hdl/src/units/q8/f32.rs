//! The codecs on f32 words (golden `Q8Type::encode_word` / `decode_word_flagged` on
//! `Format::F32(_)`): an IEEE input decode in front of the encoder's alignment, divider and
//! search, and the decoder's product rounded once to f32.
//!
//! - Input decode: sign, the 24-bit significand sx (hidden bit 0 for subnormals and zeros),
//!   the exponent ex = max(biased, 1) − 127, so that |x| = sx·2^(ex − 23) for every finite
//!   word; zero, ∞ and NaN tests.
//! - Encoder: as the posit path (FW = 23), with subnormal significands as they are: the
//!   alignment and the divider need no normalised operand (see [`aligned`]). ±∞ x sets the
//!   aligned dividend to all ones (the largest magnitude); a NaN x, and a scale that is NaN,
//!   ±∞, zero or negative, select the smallest magnitude (NaN without a sign, −0 with its
//!   sign).
//! - Decoder: the float ROM's 24-bit significand times the scale's, normalised beside the ROM
//!   read (a leading-zero count: the scale may be subnormal), so that the product needs one
//!   normalising shift at most; E the exponent of its leading one; below 2^−126
//!   the significand shifts right into the subnormal range (at most 26 places, the rest
//!   sticky), then nearest even on the 31-bit magnitude {exponent field, fraction}, whose
//!   carry moves into the exponent (and up to ∞). A NaN scale, or ∞ times a zero value, gives
//!   the canonical NaN 0x7fc00000 and the flag `nan`; ∞ times a nonzero value ±∞; a zero value
//!   or scale ±0 (sign: code's xor scale's).

use lpgen_golden::q8::{FixedTables, Q8Type, F32_NAN};

use super::dec::float_value;
use super::enc::{aligned, Prepared};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};
use crate::units::posit::decode::lzc;

/// Largest |ex − es| of two f32 exponents (−126..=128, 128 for ∞ and NaN).
const EXP_SPAN: i64 = 254;
/// The smallest normal exponent.
const MIN_EXP: i64 = -126;
/// Fraction bits.
const FRAC: u32 = 23;

/// The fields of an f32 word.
struct F32Fields {
    sign: E,
    zero: E,
    inf: E,
    nan: E,
    /// max(biased, 1) − 127, 9-bit signed.
    exp: E,
    /// {hidden bit, fraction}: 24 bits.
    sig: E,
}

fn fields(m: &mut Module, name: &str, x: &E) -> F32Fields {
    let n = |t: &str| format!("{name}_{t}");
    let biased = x.bits(30, FRAC);
    let frac = x.low(FRAC);
    let exp_zero = m.wire(&n("exp_zero"), &biased.any().not());
    let exp_ones = m.wire(&n("exp_ones"), &biased.all());
    let frac_any = m.wire(&n("frac_any"), &frac.any());
    let ew = 9;
    let raised = mux(&exp_zero, &konst(8, 1), &biased).zext(ew);
    F32Fields {
        sign: m.wire(&n("sign"), &x.msb()),
        zero: m.wire(&n("zero"), &exp_zero.and(&frac_any.not())),
        inf: m.wire(&n("inf"), &exp_ones.and(&frac_any.not())),
        nan: m.wire(&n("nan"), &exp_ones.and(&frac_any)),
        exp: m.wire(&n("exp"), &raised.sub(&konst(ew, 127))),
        sig: m.wire(&n("sig"), &cat(&[exp_zero.not(), frac])),
    }
}

/// The encoder's operands on f32 words.
pub(super) fn f32_prepare(
    m: &mut Module,
    t: &FixedTables,
    mid_w: u32,
    x: &E,
    scale: &E,
) -> Prepared {
    let fx = fields(m, "x", x);
    let fs = fields(m, "scale", scale);
    let sign = m.wire("x_neg", &fx.sign.and(&fx.nan.not()));
    let bad = fs.sign.or(&fs.zero).or(&fs.nan).or(&fs.inf).or(&fx.nan);
    let ok = m.wire("scale_ok", &bad.not());
    let right = aligned(m, t, mid_w, EXP_SPAN, &fx.exp, &fx.sig, &fs.exp);
    let all = konst(right.width, 0).not();
    let right = m.wire("right_or_inf", &mux(&fx.inf, &all, &right));
    Prepared {
        sign,
        ok,
        right,
        mult: fs.sig,
    }
}

/// (y, nan: y is NaN).
pub(super) fn f32_dec(m: &mut Module, ty: Q8Type, t: &FixedTables, code: &E, scale: &E) -> (E, E) {
    let v = float_value(m, ty, t, code);
    let s = fields(m, "scale", scale);
    let neg = m.wire("neg", &code.bit(7).xor(&s.sign));
    // A subnormal scale's significand normalised beside the ROM read: the product then needs
    // one normalising shift at most, as the posit path's.
    let (lz, _) = lzc(m, "scale_sig", &s.sig);
    let sig_s = m.wire("scale_sig_norm", &s.sig.shl(&lz));
    // E (below) lies in lo − 126 − 31 ..= hi + 129; −126 − E must fit too.
    let sw = signed_bits(v.lo - 200, v.hi + 200 - v.lo).max(v.exp.width + 1);
    let exp_s = m.wire("scale_exp_norm", &s.exp.sext(sw).sub(&lz.zext(sw)));
    m.stage();
    let esum = m.wire("scale_sum", &v.exp.sext(sw).add(&exp_s));
    let prod = m.wire("product", &v.sig.mul_full(&sig_s));
    m.stage();
    // prod = sig_v·sig_s lies in [2^46, 2^48): value = prod·2^(esum − 46) = norm·2^(E − 47)
    // with norm = prod or prod << 1 in [2^47, 2^48).
    let pw = prod.width;
    let carry = prod.msb();
    let norm = mux(&carry, &prod, &cat(&[prod.low(pw - 1), konst(1, 0)]));
    let norm = m.wire("product_norm", &norm);
    let e = m.wire("product_exp", &esum.add(&carry.zext(sw)));
    // Subnormal: shift right by −126 − E (clamped to 26: beyond 25 only sticky bits remain).
    let subnormal = m.wire("subnormal", &e.slt(&signed_konst(sw, MIN_EXP)));
    let sh = signed_konst(sw, MIN_EXP).sub(&e);
    let sh = mux(&sh.sgt(&signed_konst(sw, 26)), &konst(5, 26), &sh.low(5));
    let sh = m.wire("subnormal_shift", &mux(&subnormal, &sh, &konst(5, 0)));
    let pad = 27;
    let wide = cat(&[norm, konst(pad, 0)]).shr(&sh);
    let top = pw + pad - 1;
    let kept = m.wire("kept", &wide.bits(top, top - FRAC));
    let guard = wide.bit(top - FRAC - 1);
    let sticky = wide.bits(top - FRAC - 2, 0).any();
    let up = m.wire("round_up", &guard.and(&sticky.or(&kept.bit(0))));
    let biased = e.add(&signed_konst(sw, 127)).low(8);
    let field = mux(&subnormal, &konst(8, 0), &biased);
    let mag = cat(&[field, kept.low(FRAC)]).add(&up.zext(31));
    let mag = m.wire("magnitude", &mag);
    let inf_word = konst(31, 0x7f80_0000);
    let overflow = m.wire("overflow", &e.sgt(&signed_konst(sw, 127)));
    let nan = m.wire("nan_out", &s.nan.or(&s.inf.and(&v.zero)));
    let zero = m.wire("zero", &v.zero.or(&s.zero));
    let inf = s.inf.or(&overflow);
    let mag = mux(&zero, &konst(31, 0), &mux(&inf, &inf_word, &mag));
    let y = mux(&nan, &konst(32, F32_NAN as u128), &cat(&[neg, mag]));
    (y, nan)
}
