//! `float-fma`: y = a·b + c with one rounding.

use lpgen_golden::FloatFormat;

use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::stochastic::random_bits;
use super::{
    align_add_with, decode, float_format, inf_word, is_nan_word, qnan, round_encode_with,
    zero_word, Decoded,
};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode, multiply, normalise
/// the terms, align, add, normalise the sum, round.
pub(crate) const FMA_STAGES: u32 = 7;

/// `float-fma`: y = a·b + c. Golden `FloatFormat::fma`: the exact product (2·(M + 1) bits)
/// and c, both normalised to their leading one in a 2·(M + 1)-bit significand, added as
/// the adder adds (the larger leads, the smaller is shifted right with a sticky bit, three
/// extra low bits), normalised and rounded once.
pub(crate) fn fma(p: &Params) -> Result<Built, GenError> {
    let f = float_format(p.format, "unit 'float-fma'")?;
    if let lpgen_golden::Rounding::Stochastic(r) = p.rounding {
        // The sum: 2·(M + 1) bits, a carry, R + 2 low bits; the datapath's words hold 127.
        let most = 122i64 - 2 * i64::from(f.frac_bits);
        if i64::from(r) > most {
            return Err(GenError(format!(
                "float-fma on {} rounds stochastically with at most {} random bits, not {r} \
                 (its sum of 2·(M + 1) + R + 3 bits must stay under 128)",
                p.format,
                most.max(0)
            )));
        }
    }
    let (mut m, valid) = start(p, FMA_STAGES)?;
    let a = m.input("a", f.width());
    let b = m.input("b", f.width());
    let c = m.input("c", f.width());
    let random = random_bits(&mut m, p, &valid);
    let y = fma_core(&mut m, f, &a, &b, &c, random.as_ref());
    let y = m.wire("fma_word", &y);
    m.output("y", &y);
    m.output("nan", &is_nan_word(f, &y));
    finish(m, &valid, vec![])
}

/// One term of the sum: sign, signed biased exponent of its leading one, significand with
/// that one at the top (2·(M + 1) bits; 0 for a zero), zero.
struct Term {
    sign: E,
    exp: E,
    sig: E,
    zero: E,
}

/// The signed width of every exponent of the datapath (the sum keeps `low` low bits).
fn exp_width(f: FloatFormat, low: u32) -> u32 {
    let (mf, bias) = (i64::from(f.frac_bits), f.bias());
    let pw = 2 * mf + 2;
    let sw = pw + 1 + i64::from(low);
    let lo = 2 - bias - 2 * mf - sw;
    let hi = 2 * ((1i64 << f.exp_bits) - 1) + 2;
    let count_bits = (sw as u32).next_power_of_two().trailing_zeros();
    signed_bits(lo, hi).max(f.exp_bits + 2).max(count_bits + 2)
}

/// NaN (a NaN operand, 0·∞, ∞ − ∞) and ±∞ (`None` with `:fn`): (is_nan, (is_inf, sign)).
fn specials(
    m: &mut Module,
    da: &Decoded,
    db: &Decoded,
    dc: &Decoded,
    neg: &E,
) -> (E, Option<(E, E)>) {
    let mut nan = da.nan.or(&db.nan).or(&dc.nan);
    let inf = match (&da.inf, &db.inf, &dc.inf) {
        (Some(ia), Some(ib), Some(ic)) => {
            let p_inf = ia.or(ib);
            nan = nan.or(&ia.and(&db.zero)).or(&ib.and(&da.zero));
            nan = nan.or(&p_inf.and(ic).and(&neg.xor(&dc.sign)));
            let p_inf = m.wire("product_inf", &p_inf);
            let is_inf = m.wire("is_inf", &p_inf.or(ic));
            let inf_sign = m.wire("inf_sign", &mux(&p_inf, neg, &dc.sign));
            Some((is_inf, inf_sign))
        }
        _ => None,
    };
    (m.wire("is_nan", &nan), inf)
}

/// The datapath: y in the cycle it ends in, rounded stochastically with `random` (R bits)
/// when given; the sum then keeps R + 2 low bits, as the adder's (`add_core_with`). Marks
/// [`FMA_STAGES`] boundaries.
fn fma_core(m: &mut Module, f: FloatFormat, a: &E, b: &E, c: &E, random: Option<&E>) -> E {
    let (mf, bias) = (f.frac_bits, f.bias());
    let low = random.map_or(3, |r| (r.width + 2).max(3));
    let bw = exp_width(f, low);
    m.comment("decode a, b and c (sign, exponent, significand; NaN, infinity, zero)");
    let da = decode(m, f, "a", a);
    let db = decode(m, f, "b", b);
    let dc = decode(m, f, "c", c);
    let neg = m.wire("product_sign", &da.sign.xor(&db.sign));
    let (is_nan, inf) = specials(m, &da, &db, &dc, &neg);
    let p_zero = m.wire("product_zero", &da.zero.or(&db.zero));
    // An exact zero result is −0 only when both terms are negative (then both are zeros).
    let zero_sign = m.wire("zero_sign", &neg.and(&dc.sign));
    m.stage();
    m.comment("multiply the significands exactly; add the exponents beside it");
    let exp_sum = da.exp.zext(bw).add(&db.exp.zext(bw));
    let exp_sum = m.wire("exp_sum", &exp_sum.add(&signed_konst(bw, 1 - bias)));
    let product = m.wire("product", &da.sig.mul_full(&db.sig));
    m.stage();
    m.comment("normalise the product and c: each leading one to the top of its significand");
    let (plz, _) = lzc(m, "product", &product);
    let p = Term {
        sign: neg,
        exp: m.wire("product_exp", &exp_sum.sub(&plz.zext(bw))),
        sig: m.wire("product_sig", &product.shl(&plz)),
        zero: p_zero,
    };
    let (clz, _) = lzc(m, "addend", &dc.sig);
    let c_exp = dc.exp.zext(bw).sub(&clz.zext(bw));
    let c_sig = cat(&[dc.sig.shl(&clz), konst(mf + 1, 0)]);
    let q = Term {
        sign: dc.sign.clone(),
        exp: m.wire("addend_exp", &c_exp),
        sig: m.wire("addend_sig", &c_sig),
        zero: dc.zero.clone(),
    };
    let (sign, be, norm, sum_zero) = add_terms(m, bw, low, &p, &q);
    let word = round_encode_with(m, f, &sign, &be, &norm, random);
    m.comment("specials: NaN, infinity, an exact zero sum");
    let word = mux(&sum_zero, &zero_word(f, &zero_sign), &word);
    let word = match inf {
        Some((is_inf, inf_sign)) => mux(&is_inf, &inf_word(f, &inf_sign), &word),
        None => word,
    };
    mux(&is_nan, &qnan(f), &word)
}

/// p + q of two normalised terms (significands of equal width, `bw`-bit exponents): (sign, biased
/// exponent of the sum's leading one, the sum with it at the top, sum is zero). Marks three
/// boundaries (before align, before add, before normalise).
fn add_terms(m: &mut Module, bw: u32, low: u32, p: &Term, q: &Term) -> (E, E, E, E) {
    m.comment("compare: the larger magnitude leads (a zero never does)");
    let p_less = p
        .exp
        .slt(&q.exp)
        .or(&p.exp.eq(&q.exp).and(&p.sig.lt(&q.sig)));
    let swap = p.zero.or(&q.zero.not().and(&p_less));
    let swap = m.wire("swap", &swap);
    let pick = |x: &E, y: &E| mux(&swap, y, x);
    let big_sign = m.wire("big_sign", &pick(&p.sign, &q.sign));
    let eff_sub = m.wire("eff_sub", &p.sign.xor(&q.sign));
    let big_exp = m.wire("big_exp", &pick(&p.exp, &q.exp));
    let small_exp = m.wire("small_exp", &pick(&q.exp, &p.exp));
    let big_sig = m.wire("big_sig", &pick(&p.sig, &q.sig));
    let small_sig = m.wire("small_sig", &pick(&q.sig, &p.sig));
    m.stage();
    let dw = bw + 1;
    let d = big_exp.sext(dw).sub(&small_exp.sext(dw));
    let sum = align_add_with(m, &d, &big_sig, &small_sig, &eff_sub, low);
    m.stage();
    m.comment("normalise: the sum's leading one to the top; its biased exponent");
    let (lz, sum_zero) = lzc(m, "sum", &sum);
    let norm = m.wire("norm", &sum.shl(&lz));
    let be = big_exp.add(&konst(bw, 1)).sub(&lz.zext(bw));
    let be = m.wire("norm_exp", &be);
    m.stage();
    (big_sign, be, norm, sum_zero)
}
