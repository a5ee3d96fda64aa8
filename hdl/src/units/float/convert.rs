//! Float conversions, each rounded once to nearest even as the golden model rounds them: among
//! float formats (golden `FloatFormat::convert`, the lanes' `t_in`/`t_out` and the `convert`
//! unit) and between float and fix (golden `FloatFormat::to_fix` / `from_fix`, the `convert`
//! unit's cross-family pairs). Each marks [`CONVERT_STAGES`] candidate boundary. The `convert`
//! unit's float results may instead be rounded stochastically ([`convert_stochastic`]).

use lpgen_golden::{FixFormat, FloatFormat, Format};

use super::super::fix::saturate;
use super::super::posit::decode::lzc;
use super::div::infinite_word;
use super::lane::same_format;
use super::{decode, qnan, round_encode_with, zero_word};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};

/// Candidate boundaries of each conversion: the rounder's (float results), between the
/// shift and the rounding (fix results).
pub(crate) const CONVERT_STAGES: u32 = 1;

/// `sig` padded with zeros below to at least `w` bits.
pub(crate) fn pad_to(sig: &E, w: u32) -> E {
    if sig.width >= w {
        sig.clone()
    } else {
        cat(&[sig.clone(), konst(w - sig.width, 0)])
    }
}

/// `x` of float format `s` as a word of float format `d`: decoded, its significand's leading
/// one brought to the top (subnormals of `s`), rounded once in `d`; NaN → `d`'s NaN, ±∞ →
/// `d`'s infinite result, ±0 (and `:ftz` subnormals of `s`) → ±0.
pub(crate) fn float_to_float(m: &mut Module, s: FloatFormat, d: FloatFormat, x: &E) -> E {
    float_to_float_with(m, s, d, x, None)
}

/// [`float_to_float`], rounded stochastically with `random` (this conversion's R bits) when
/// given: the significand is exact, so the R bits below the last place are too.
fn float_to_float_with(
    m: &mut Module,
    s: FloatFormat,
    d: FloatFormat,
    x: &E,
    random: Option<&E>,
) -> E {
    m.comment(&format!("decode x ({s})"));
    let dx = decode(m, s, "x", x);
    m.comment("normalise: the significand's leading one to the top (subnormals)");
    let (lz, _) = lzc(m, "x", &dx.sig);
    let norm = m.wire("norm", &pad_to(&dx.sig.shl(&lz), d.frac_bits + 3));
    // The biased exponent (in d) of the leading one: exp − lz − bias_s + bias_d.
    let shift = d.bias() - s.bias();
    let top = (1i64 << s.exp_bits) - 1;
    let bw = signed_bits(1 - i64::from(s.frac_bits) + shift, top + shift)
        .max(d.exp_bits + 2)
        .max(lz.width + 1);
    let be = dx
        .exp
        .zext(bw)
        .sub(&lz.zext(bw))
        .add(&signed_konst(bw, shift));
    let be = m.wire("norm_exp", &be);
    let word = round_encode_with(m, d, &dx.sign, &be, &norm, random);
    m.comment("specials: NaN, infinity, zero");
    let word = mux(&dx.zero, &zero_word(d, &dx.sign), &word);
    let word = match &dx.inf {
        Some(inf) => mux(inf, &infinite_word(d, &dx.sign), &word),
        None => word,
    };
    mux(&dx.nan, &qnan(d), &word)
}

/// `x` of fix format `s` as a word of float format `d`: the magnitude of the two's-complement
/// integer, its leading one to the top, rounded once in `d` (value v·2^−F); zero → +0.
pub(crate) fn fix_to_float(m: &mut Module, s: FixFormat, d: FloatFormat, x: &E) -> E {
    fix_to_float_with(m, s, d, x, None)
}

/// [`fix_to_float`], rounded stochastically with `random` when given (the magnitude is exact).
fn fix_to_float_with(m: &mut Module, s: FixFormat, d: FloatFormat, x: &E, random: Option<&E>) -> E {
    let w = s.width();
    m.comment(&format!("magnitude and sign of x ({s})"));
    let neg = m.wire("x_neg", &x.msb());
    let mag = m.wire("x_mag", &mux(&neg, &konst(w, 0).sub(x), x));
    m.comment("normalise: the magnitude's leading one to the top");
    let (lz, is_zero) = lzc(m, "x", &mag);
    let norm = m.wire("norm", &pad_to(&mag.shl(&lz), d.frac_bits + 3));
    // The leading one is at bit w − 1 − lz: value exponent w − 1 − lz − F.
    let e0 = i64::from(w) - 1 - i64::from(s.frac_bits) + d.bias();
    let bw = signed_bits(e0 - (i64::from(w) - 1), e0)
        .max(d.exp_bits + 2)
        .max(lz.width + 1);
    let be = m.wire("norm_exp", &signed_konst(bw, e0).sub(&lz.zext(bw)));
    let word = round_encode_with(m, d, &neg, &be, &norm, random);
    m.comment("specials: zero");
    mux(&is_zero, &konst(d.width(), 0), &word)
}

/// The `convert` unit's conversion of `x` from `f` to `t` rounded stochastically with
/// `random` (golden `alu::convert_with`): float to float (a word of the same format passes
/// unchanged: exact, it never moves) and fix to float; `None` for the pairs golden
/// `alu::convert_rounding` refuses (checked before the design is built).
pub(crate) fn convert_stochastic(
    m: &mut Module,
    (f, t): (Format, Format),
    x: &E,
    random: &E,
) -> Option<E> {
    match (f, t) {
        (Format::Float(s), Format::Float(d)) if s == d => Some(same_format(d, x)),
        (Format::Float(s), Format::Float(d)) => Some(float_to_float_with(m, s, d, x, Some(random))),
        (Format::Fix(s), Format::Float(d)) => Some(fix_to_float_with(m, s, d, x, Some(random))),
        _ => None,
    }
}

/// `x` of float format `s` as a word of fix format `d`: the value times 2^F rounded to the
/// nearest integer (ties to even) and saturated; NaN → 0, ±∞ → the ends of the range.
pub(crate) fn float_to_fix(m: &mut Module, s: FloatFormat, d: FixFormat, x: &E) -> E {
    let (ms, w) = (s.frac_bits, d.width());
    m.comment(&format!("decode x ({s})"));
    let dx = decode(m, s, "x", x);
    // value·2^F = sig·2^sh, sh = exp − bias − M + F; sh >= w saturates any nonzero sig.
    let off = i64::from(d.frac_bits) - s.bias() - i64::from(ms);
    let top = (1i64 << s.exp_bits) - 1;
    let (lo, hi) = (1 + off, top + off);
    let bw = signed_bits(lo.min(-hi), hi.max(-lo)).max(signed_bits(0, i64::from(w + ms + 3)));
    let sh = m.wire("scale_shift", &dx.exp.zext(bw).add(&signed_konst(bw, off)));
    let left = sh.msb().not();
    let sat_big = m.wire(
        "too_large",
        &left.and(&sh.sge(&signed_konst(bw, i64::from(w)))),
    );
    m.comment("scale: shift left (exact) or right to the integer with guard and sticky bits");
    let lw = ms + 1 + w;
    let amount_bits = signed_bits(0, i64::from(w)) - 1;
    let lsh = mux(&sat_big, &konst(amount_bits, 0), &sh.low(amount_bits));
    let shifted_left = m.wire("shifted_left", &dx.sig.zext(lw).shl(&lsh));
    let ew = ms + 3;
    let ext = cat(&[dx.sig.clone(), konst(2, 0)]);
    let r_bits = signed_bits(0, i64::from(ew)) - 1;
    let neg_sh = konst(bw, 0).sub(&sh);
    let far = neg_sh.sgt(&signed_konst(bw, i64::from(ew)));
    let rsh = mux(&far, &konst(r_bits, u128::from(ew)), &neg_sh.low(r_bits));
    let rsh = m.wire("right_shift", &rsh);
    let ones = konst(ew, (1u128 << ew) - 1);
    let lost = m.wire("right_sticky", &ext.and(&ones.shl(&rsh).not()).any());
    let shifted_right = m.wire("shifted_right", &ext.shr(&rsh));
    m.stage();
    m.comment("round: nearest, ties to even; sign; saturate to the fix range");
    let int_r = shifted_right.bits(ew - 1, 2);
    let guard = shifted_right.bit(1);
    let sticky = shifted_right.bit(0).or(&lost);
    let up = m.wire("round_up", &guard.and(&sticky.or(&int_r.bit(0))));
    let rounded = int_r.zext(lw).add(&up.zext(lw));
    // Past the range (sh >= w, or ±∞): 2^w, beyond either end.
    let big = konst(lw, 1u128 << w);
    let mag = mux(&left, &shifted_left, &rounded);
    let beyond = match &dx.inf {
        Some(inf) => sat_big.or(inf),
        None => sat_big,
    };
    let mag = m.wire("magnitude", &mux(&beyond, &big, &mag));
    let signed = mux(
        &dx.sign,
        &konst(lw + 1, 0).sub(&mag.zext(lw + 1)),
        &mag.zext(lw + 1),
    );
    let signed = m.wire("signed_value", &signed);
    let (word, _) = saturate(m, "fix_", &signed, w);
    m.comment("specials: NaN");
    mux(&dx.nan, &konst(w, 0), &word)
}
