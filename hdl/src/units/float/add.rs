//! `float-add`: y = a + b, or a − b when `sub`.

use lpgen_golden::FloatFormat;

use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::stochastic::random_bits;
use super::{
    align_add_with, decode, float_format, inf_word, is_nan_word, qnan, round_encode_with,
    zero_word, Decoded,
};
use crate::ir::{cat, konst, mux, signed_bits, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode/compare, align, add,
/// normalise, round.
pub(crate) const ADD_STAGES: u32 = 5;

/// `float-add`: y = a + b, or a − b when `sub`. Golden `FloatFormat::add` / `sub`: the
/// larger magnitude leads, the smaller significand is shifted right by the exponent
/// difference with a sticky bit, added or subtracted with three extra low bits (guard,
/// round, sticky), normalised by a leading-zero count, and rounded once.
pub(crate) fn add(p: &Params) -> Result<Built, GenError> {
    let f = float_format(p.format, "unit 'float-add'")?;
    let (mut m, valid) = start(p, ADD_STAGES)?;
    let a = m.input("a", f.width());
    let b = m.input("b", f.width());
    let sub = m.input("sub", 1);
    let random = random_bits(&mut m, p, &valid);
    let y = add_core_with(&mut m, f, &a, &b, &sub, random.as_ref());
    let y = m.wire("sum_word", &y);
    m.output("y", &y);
    m.output("nan", &is_nan_word(f, &y));
    finish(m, &valid, vec![])
}

/// The adder's datapath: y in the cycle it ends in. Marks [`ADD_STAGES`] boundaries.
/// Rounded to nearest (`random` = `None`), or stochastically with `random` (R bits): the
/// sum then keeps R + 2 low bits (at least 3): after a one-place normalisation the top R discarded
/// bits are exact and the sticky bit lies below them (a cancellation of more places comes
/// from an exponent difference ≤ 1, which loses no bits).
pub(crate) fn add_core_with(
    m: &mut Module,
    f: FloatFormat,
    a: &E,
    b: &E,
    sub: &E,
    random: Option<&E>,
) -> E {
    m.comment("decode a and b (sign, exponent, significand; NaN, infinity, zero)");
    let da = decode(m, f, "a", a);
    let db = decode(m, f, "b", b);
    add_decoded(m, f, &da, &db, sub, random)
}

/// The adder from decoded operands (of `f`'s decoder, or made like them: the same widths,
/// significands normalised unless the exponent is 1): y in the cycle it ends in. Marks
/// [`ADD_STAGES`] boundaries. Also the accumulation of the float PE with `--acc` (`pe.rs`).
/// Rounded stochastically with `random` when given, as [`add_core_with`].
pub(crate) fn add_decoded(
    m: &mut Module,
    f: FloatFormat,
    da: &Decoded,
    db: &Decoded,
    sub: &E,
    random: Option<&E>,
) -> E {
    let sb = m.wire("b_sign_eff", &db.sign.xor(sub));
    // NaN: a NaN operand, or ∞ − ∞.
    let mut nan = da.nan.or(&db.nan);
    let inf = match (&da.inf, &db.inf) {
        (Some(ia), Some(ib)) => {
            nan = nan.or(&ia.and(ib).and(&da.sign.xor(&sb)));
            let is_inf = m.wire("is_inf", &ia.or(ib));
            let inf_sign = m.wire("inf_sign", &mux(ia, &da.sign, &sb));
            Some((is_inf, inf_sign))
        }
        _ => None,
    };
    let is_nan = m.wire("is_nan", &nan);
    // An exact zero sum is −0 only when both terms are negative (then both are zeros).
    let zero_sign = m.wire("zero_sign", &da.sign.and(&sb));
    m.comment("compare: the larger magnitude leads ((exponent, significand) orders them)");
    let ka = cat(&[da.exp.clone(), da.sig.clone()]);
    let kb = cat(&[db.exp.clone(), db.sig.clone()]);
    let swap = m.wire("swap", &ka.lt(&kb));
    let pick = |x: &E, y: &E| mux(&swap, y, x);
    let big_sign = m.wire("big_sign", &pick(&da.sign, &sb));
    let eff_sub = m.wire("eff_sub", &big_sign.xor(&pick(&sb, &da.sign)));
    let big_exp = m.wire("big_exp", &pick(&da.exp, &db.exp));
    let small_exp = m.wire("small_exp", &pick(&db.exp, &da.exp));
    let big_sig = m.wire("big_sig", &pick(&da.sig, &db.sig));
    let small_sig = m.wire("small_sig", &pick(&db.sig, &da.sig));
    m.stage();
    let low = random.map_or(3, |r| (r.width + 2).max(3));
    let sum = align_add_with(
        m,
        &big_exp.sub(&small_exp),
        &big_sig,
        &small_sig,
        &eff_sub,
        low,
    );
    let aw = sum.width;
    m.stage();
    m.comment("normalise: the sum's leading one to the top; its biased exponent");
    let (lz, sum_zero) = lzc(m, "sum", &sum);
    let norm = m.wire("norm", &sum.shl(&lz));
    let top = 1i64 << f.exp_bits;
    let bw = signed_bits(-(aw as i64), top).max(lz.width + 1);
    let be = big_exp.zext(bw).add(&konst(bw, 1)).sub(&lz.zext(bw));
    let be = m.wire("norm_exp", &be);
    m.stage();
    let word = round_encode_with(m, f, &big_sign, &be, &norm, random);
    m.comment("specials: NaN, infinity, an exact zero sum");
    let word = mux(&sum_zero, &zero_word(f, &zero_sign), &word);
    let word = match inf {
        Some((is_inf, inf_sign)) => mux(&is_inf, &inf_word(f, &inf_sign), &word),
        None => word,
    };
    mux(&is_nan, &qnan(f), &word)
}
