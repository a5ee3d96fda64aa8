//! `q8-dec`: y = the code's table value times the scale word, rounded once to the format
//! (golden `Q8Type::decode_word`). The 128 magnitudes are a ROM (the golden
//! `Codebook::fixed` values); the sign is bit 7 of the code, applied with the scale's sign.
//!
//! - fix: the ROM holds V = value·2^T (T = `frac_bits`); y = ±round(V·|S| / 2^T) in units of
//!   the word (nearest, ties to even, on the magnitude: the fix rule is symmetric), saturated.
//! - posit: the ROM holds the value as a 24-bit significand and an exponent; their product
//!   with the scale's significand needs one normalising shift, then the posit encoder rounds.
//!   A NaR scale gives NaR; a zero value or scale gives 0.
//!
//! Flags: `overflow` (fix: y saturated) or `nar` (posit: y is NaR).
//! Boundaries: after the ROM read and the scale's decode; after the product.

use lpgen_golden::q8::{FixedTables, Q8Type};
use lpgen_golden::{FixFormat, Format, PositFormat};

use super::f32::f32_dec;
use super::{bits_of, check_format, read, rom_module, type_tag, DEC_STAGES};
use crate::ir::{cat, konst, mux, signed_bits, Module, E};
use crate::units::fix::{rne_shr, saturate};
use crate::units::posit::decode::{decode, max_scale};
use crate::units::posit::encode::encode;
use crate::units::posit::nar_word;
use crate::units::{finish, start, Built, GenError, Params};

/// Bits of the posit decoder's significand ROM entries (an f32's).
const SIG_BITS: u32 = 24;

pub(crate) fn dec(p: &Params) -> Result<Built, GenError> {
    check_format(p)?;
    let t = p.q8.codebook().fixed();
    let (mut m, valid) = start(p, DEC_STAGES)?;
    let w = p.format.width();
    let code = m.input("code", 8);
    let scale = m.input("scale", w);
    let (y, flag, flag_name) = match p.format {
        Format::Fix(f) => {
            let (y, over) = fix_dec(&mut m, p.q8, &t, f, &code, &scale);
            (y, over, "overflow")
        }
        Format::Posit(f) => {
            let (y, nar) = posit_dec(&mut m, p.q8, &t, f, &code, &scale);
            (y, nar, "nar")
        }
        Format::F32(_) => {
            let (y, nan) = f32_dec(&mut m, p.q8, &t, &code, &scale);
            (y, nan, "nan")
        }
        _ => unreachable!("check_format refused it"),
    };
    m.output("y", &y);
    m.output(flag_name, &flag);
    finish(m, &valid, vec![("q8 values+midpoints".into(), t.digest())])
}

/// (y, overflow: the rounded product did not fit and y saturated).
fn fix_dec(
    m: &mut Module,
    ty: Q8Type,
    t: &FixedTables,
    f: FixFormat,
    code: &E,
    scale: &E,
) -> (E, E) {
    let w = f.width();
    let vw = bits_of(*t.values.iter().max().expect("128 values"));
    let contents = t.values.iter().map(|&v| v as u128).collect();
    let comment = format!(
        "{ty} magnitudes by 7-bit field as value·2^{} (golden Codebook::fixed; {}).",
        t.frac_bits,
        t.digest()
    );
    let rom = rom_module(
        m,
        &format!("lpgen_{}_values", type_tag(ty)),
        &comment,
        vw,
        contents,
    );
    m.comment("the code's value (ROM) and |scale|");
    let value = read(m, &rom, "value", &code.low(7));
    let s_neg = m.wire("scale_neg", &scale.msb());
    // |S| as an unsigned W-bit number (the most negative word gives 2^(W−1)).
    let s_abs = m.wire("scale_abs", &mux(&s_neg, &konst(w, 0).sub(scale), scale));
    let neg = m.wire("neg", &code.bit(7).xor(&s_neg));
    m.stage();
    m.comment("product value * |scale|, exact");
    let prod = m.wire("product", &value.mul_full(&s_abs));
    m.stage();
    m.comment("round to the word's fraction bits (nearest even), sign, saturate");
    // rne_shr takes two's complement: one zero bit on top keeps the product nonnegative.
    let r = rne_shr(m, "", &prod.zext(prod.width + 1), t.frac_bits);
    let signed = m.wire("y_signed", &mux(&neg, &konst(r.width, 0).sub(&r), &r));
    saturate(m, "", &signed, w)
}

/// The magnitudes as (significand, exponent): value = sig·2^(exp − 23), sig in [2^23, 2^24)
/// (0 for a zero value). Exact: every value is an f32.
fn float_entries(t: &FixedTables) -> Vec<(u64, i64)> {
    t.values
        .iter()
        .map(|&v| {
            if v == 0 {
                return (0, 0);
            }
            let len = bits_of(v);
            let sig = if len <= SIG_BITS {
                v << (SIG_BITS - len)
            } else {
                assert_eq!(v % (1 << (len - SIG_BITS)), 0, "an f32 has 24 bits");
                v >> (len - SIG_BITS)
            };
            (sig, len as i64 - 1 - t.frac_bits as i64)
        })
        .collect()
}

/// A magnitude read from the float ROM: value = sig·2^(exp − 23), `zero` when it is 0;
/// `lo..=hi` the exponents of the table.
pub(super) struct FloatValue {
    pub sig: E,
    pub exp: E,
    pub zero: E,
    pub lo: i64,
    pub hi: i64,
}

/// The type's magnitudes as a ROM of {significand (24 bits), exponent}, read at `code`'s field.
pub(super) fn float_value(m: &mut Module, ty: Q8Type, t: &FixedTables, code: &E) -> FloatValue {
    let entries = float_entries(t);
    let (lo, hi) = entries
        .iter()
        .fold((0i64, 0i64), |(l, h), &(_, e)| (l.min(e), h.max(e)));
    let ew = signed_bits(lo, hi);
    let contents = entries
        .iter()
        .map(|&(s, e)| ((s as u128) << ew) | ((e as u64 & ((1u64 << ew) - 1)) as u128))
        .collect();
    let comment = format!(
        "{ty} magnitudes by 7-bit field as {{significand (24 bits), exponent ({ew} bits)}}: \
         value = significand·2^(exponent − 23) (golden Codebook::fixed; {}).",
        t.digest()
    );
    let rom = rom_module(
        m,
        &format!("lpgen_{}_values_float", type_tag(ty)),
        &comment,
        SIG_BITS + ew,
        contents,
    );
    let entry = read(m, &rom, "value", &code.low(7));
    let sig = m.wire("value_sig", &entry.bits(ew + SIG_BITS - 1, ew));
    let exp = m.wire("value_exp", &entry.low(ew));
    let zero = m.wire("value_zero", &sig.msb().not());
    FloatValue {
        sig,
        exp,
        zero,
        lo,
        hi,
    }
}

/// (y, nar: y is NaR, because the scale is).
fn posit_dec(
    m: &mut Module,
    ty: Q8Type,
    t: &FixedTables,
    f: PositFormat,
    code: &E,
    scale: &E,
) -> (E, E) {
    let FloatValue {
        sig: sig_v,
        exp: exp_v,
        zero: v_zero,
        lo,
        hi,
    } = float_value(m, ty, t, code);
    let ew = exp_v.width;
    m.comment("the code's value (ROM); decode the posit scale");
    let s = decode(m, f, "scale", scale);
    let neg = m.wire("neg", &code.bit(7).xor(&s.sign));
    m.stage();
    m.comment("product of the significands, exact; scales added");
    let ms = max_scale(f);
    let sw = signed_bits(lo - ms, hi + ms + 1).max(ew).max(s.scale.width);
    let esum = m.wire("scale_sum", &exp_v.sext(sw).add(&s.scale.sext(sw)));
    let prod = m.wire("product", &sig_v.mul_full(&s.sig));
    m.stage();
    m.comment("normalise, then round and encode as a posit");
    // prod = sig_v·sig_s lies in [2^(pw−2), 2^pw): at most one normalising shift.
    let pw = prod.width;
    let carry = prod.msb();
    let sig = mux(&carry, &prod, &cat(&[prod.low(pw - 1), konst(1, 0)]));
    let sig = m.wire("product_sig", &sig);
    // value = prod·2^(exp_v + scale_s − 23 − FW) = sig·2^(scale − (pw − 1)).
    let sc = m.wire("product_scale", &esum.add(&carry.zext(sw)));
    let word = encode(m, f, "y_encode", &neg, &sc, &sig, &konst(1, 0), false);
    let zero = m.wire("zero", &v_zero.or(&s.zero));
    let y = mux(&s.nar, &nar_word(f), &mux(&zero, &konst(f.n, 0), &word));
    (y, s.nar)
}
