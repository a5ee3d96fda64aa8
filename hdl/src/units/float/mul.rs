//! `float-mul`: y = a·b.

use lpgen_golden::FloatFormat;

use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::stochastic::random_bits;
use super::{decode, float_format, inf_word, is_nan_word, qnan, round_encode_with, zero_word};
use crate::ir::{mux, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode, multiply, normalise,
/// round.
pub(crate) const MUL_STAGES: u32 = 4;

/// `float-mul`: y = a·b. Golden `FloatFormat::mul`: the exact product of the significands
/// (2·(M + 1) bits; subnormal operands give leading zeros), exponents added, normalised by
/// a leading-zero count and rounded once.
pub(crate) fn mul(p: &Params) -> Result<Built, GenError> {
    let f = float_format(p.format, "unit 'float-mul'")?;
    let (mut m, valid) = start(p, MUL_STAGES)?;
    let a = m.input("a", f.width());
    let b = m.input("b", f.width());
    let random = random_bits(&mut m, p, &valid);
    let y = mul_core_with(&mut m, f, &a, &b, random.as_ref());
    let y = m.wire("product_word", &y);
    m.output("y", &y);
    m.output("nan", &is_nan_word(f, &y));
    finish(m, &valid, vec![])
}

/// The multiplier's datapath: y in the cycle it ends in. Marks [`MUL_STAGES`] boundaries.
/// Rounded to nearest (`random` = `None`), or stochastically with `random` (R bits) (the
/// product is exact, so its discarded bits are).
pub(crate) fn mul_core_with(m: &mut Module, f: FloatFormat, a: &E, b: &E, random: Option<&E>) -> E {
    let mf = i64::from(f.frac_bits);
    m.comment("decode a and b (sign, exponent, significand; NaN, infinity, zero)");
    let da = decode(m, f, "a", a);
    let db = decode(m, f, "b", b);
    let neg = m.wire("neg", &da.sign.xor(&db.sign));
    // NaN: a NaN operand, or 0·∞.
    let mut nan = da.nan.or(&db.nan);
    let is_inf = match (&da.inf, &db.inf) {
        (Some(ia), Some(ib)) => {
            nan = nan.or(&ia.and(&db.zero)).or(&ib.and(&da.zero));
            Some(m.wire("is_inf", &ia.or(ib)))
        }
        _ => None,
    };
    let is_nan = m.wire("is_nan", &nan);
    let is_zero = m.wire("is_zero", &da.zero.or(&db.zero));
    m.stage();
    m.comment("multiply the significands exactly; add the exponents beside it");
    let bias = f.bias();
    let emax = (1i64 << f.exp_bits) - 1;
    // The biased exponent of the product's top bit: ea + eb − bias + 1 − (leading zeros).
    let lo = 2 - bias + 1 - (2 * mf + 1);
    let count_bits = (2 * f.frac_bits + 2).next_power_of_two().trailing_zeros();
    let bw = signed_bits(lo, 2 * emax - bias + 1)
        .max(f.exp_bits + 2)
        .max(count_bits + 1);
    let exp_sum = da.exp.zext(bw).add(&db.exp.zext(bw));
    let exp_sum = m.wire("exp_sum", &exp_sum.add(&signed_konst(bw, 1 - bias)));
    let product = m.wire("product", &da.sig.mul_full(&db.sig));
    m.stage();
    m.comment("normalise: the product's leading one to the top (subnormal operands)");
    let (lz, _) = lzc(m, "product", &product);
    let norm = m.wire("norm", &product.shl(&lz));
    let be = m.wire("norm_exp", &exp_sum.sub(&lz.zext(bw)));
    m.stage();
    let word = round_encode_with(m, f, &neg, &be, &norm, random);
    m.comment("specials: NaN, infinity, a zero operand");
    let word = mux(&is_zero, &zero_word(f, &neg), &word);
    let word = match is_inf {
        Some(i) => mux(&i, &inf_word(f, &neg), &word),
        None => word,
    };
    mux(&is_nan, &qnan(f), &word)
}
