//! `mx-enc`: a block of K words converted to an MX block as the golden
//! `MxFormat::quantize_words` (§6.3 of the MX specification on the words' exact values). The
//! words are f32 (the default), an IEEE-style float no wider than binary32 (`--input bf16`,
//! `f16`, `float:E:M`: here) or fix:I:F (`enc_fix.rs`); the golden `MxInput` says which.
//!
//! Ports: `x` (K·N: word i at bits [i·N +: N], N the input's width); out `scale` (8, E8M0)
//! and `codes` (K·w, element i at bits [i·w +: w]). A NaN or ±∞ anywhere: scale 0xFF, every
//! code 0. Otherwise the shared exponent e = ⌊log2 max|x|⌋ − emax clamped to [−127, 127]: as
//! the largest biased exponent field F of the block decides ⌊log2 max|x|⌋ (F − bias for
//! normals), the scale byte is F − bias + 127 − emax. With 8 exponent bits (f32, bf16) that
//! is max(F − emax, 0): a block of zeros and subnormals clamps to −127. With fewer (f16, …)
//! it never clamps, and a block of subnormals takes ⌊log2 max|x|⌋ from the leading one of
//! the OR of its fractions. A float element is x·2^−e rounded once to nearest even by the
//! float units' rounder, saturating; an INT8 element (emax 0, value k/64) is k = x·2^(6−e)
//! rounded to the nearest integer, ties to even, saturating to ±127 (docs/formats.md, "INT8
//! range").

use lpgen_golden::mx::{Elem, MxFormat, MxInput, SCALE_BIAS, SCALE_NAN};
use lpgen_golden::FloatFormat;

use super::super::float::{decode, pad_to, round_encode, zero_word, Decoded};
use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::{enc_fix, input_of, mx_format};
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries: the maximum tree and scale, the rounder's, the codes.
pub(crate) const ENC_STAGES: u32 = 3;

/// The input words' format: IEEE binary32.
fn f32_format() -> FloatFormat {
    FloatFormat::new(8, 23, false, false, false).expect("binary32")
}

/// The largest of `v` (unsigned), a balanced tree of comparators.
pub(crate) fn max_tree(m: &mut Module, v: Vec<E>) -> E {
    m.tree("max", v, |x, y| mux(&x.gt(y), x, y))
}

/// `mx-enc` for `--format mx:ELEM[:bK]` on the words of `--input` (f32 by default).
pub(crate) fn enc(p: &Params) -> Result<Built, GenError> {
    let mx: MxFormat = mx_format(p);
    match input_of(p) {
        MxInput::F32 => enc_float(p, mx, f32_format()),
        MxInput::Float(s) => enc_float(p, mx, s),
        MxInput::Fix(s) => enc_fix::enc_fix(p, mx, s),
    }
}

/// `mx-enc` on words of the IEEE-style float format `s` (E <= 8, M <= 23).
fn enc_float(p: &Params, mx: MxFormat, s: FloatFormat) -> Result<Built, GenError> {
    let (k, w, n) = (mx.block as u32, mx.elem_width(), s.width());
    let (mf, bias) = (s.frac_bits, s.bias());
    let (mut m, valid) = start(p, ENC_STAGES)?;
    let x = m.input("x", k * n);
    let words: Vec<E> = (0..k).map(|i| x.bits(i * n + n - 1, i * n)).collect();
    m.comment("the block's largest exponent field; a NaN or infinity (field all ones) anywhere");
    let fields: Vec<E> = words.iter().map(|x| x.bits(n - 2, mf)).collect();
    let special = m.wire(
        "special",
        &cat(&fields.iter().map(|f| f.all()).collect::<Vec<_>>()).any(),
    );
    let fmax = max_tree(&mut m, fields);
    // The scale byte F − bias + 127 − emax = F + offset.
    let offset = i64::from(SCALE_BIAS) - bias - i64::from(mx.emax_elem());
    let biased = if offset <= 0 {
        // 8 exponent bits (bias 127): F − emax, clamped at 0 (zeros and subnormals).
        m.comment("the scale byte: max(F - emax, 0), or 0xFF (NaN)");
        match mx.emax_elem() {
            0 => fmax, // INT8: F itself
            e => {
                let emax = named("MX_ELEM_EMAX", 8, e as u128);
                mux(&fmax.ge(&emax), &fmax.sub(&emax), &konst(8, 0))
            }
        }
    } else {
        // Fewer exponent bits: no clamp (offset >= 49 > M − 1, 2^(E−1) + 126 < 255).
        m.comment(
            "a block of subnormals: its largest value's leading one is that of the OR of the \
             fractions",
        );
        let ors = words
            .iter()
            .map(|x| x.low(mf))
            .reduce(|a, b| a.or(&b))
            .expect("a block of at least one word");
        let frac_or = m.wire("frac_or", &ors);
        let (lz, none) = lzc(&mut m, "frac_or", &frac_or);
        m.comment(
            "the scale byte: F + MX_SCALE_OFFSET (F - bias = floor(log2 max|x|)), for \
             subnormals MX_SCALE_OFFSET - lz, for zeros 0; or 0xFF (NaN)",
        );
        let off = named("MX_SCALE_OFFSET", 8, offset as u128);
        let sub = mux(&none, &konst(8, 0), &off.sub(&lz.zext(8)));
        mux(&fmax.any(), &fmax.zext(8).add(&off), &sub)
    };
    let scale_nan = named("MX_SCALE_NAN", 8, u128::from(SCALE_NAN));
    let scale = m.wire("scale_byte", &mux(&special, &scale_nan, &biased));
    m.stage();
    match mx.elem {
        Elem::Float(_) => {
            m.comment("each element: x / 2^e, its leading one to the top, rounded once")
        }
        Elem::Int8 => m.comment("each element: k = x * 2^(6 - e), rounded to an integer once"),
    }
    let mut fork = m.fork();
    let mut codes = vec![];
    for (i, xw) in words.iter().enumerate() {
        let name = format!("x{i}");
        let dx = decode(&mut m, s, &name, xw);
        let word = match mx.elem {
            Elem::Float(d) => float_code(&mut m, s, d, &name, &dx, &scale),
            Elem::Int8 => int8_code(&mut m, s, &name, &dx, &scale),
        };
        codes.push(m.wire(&format!("code{i}"), &word));
        m.next_branch(&mut fork);
    }
    m.join(fork);
    let all = cat(&codes.iter().rev().cloned().collect::<Vec<_>>());
    let all = mux(&special, &konst(k * w, 0), &all);
    m.stage();
    m.output("scale", &scale);
    m.output("codes", &all);
    finish(m, &valid, vec![])
}

/// A float element (format `d`) of the decoded word `dx` (format `s`) under the scale byte:
/// x's leading one to the top of the significand, the element's biased exponent, one
/// rounding (whose candidate boundary is the rounder's).
fn float_code(
    m: &mut Module,
    s: FloatFormat,
    d: FloatFormat,
    name: &str,
    dx: &Decoded,
    scale: &E,
) -> E {
    // The biased exponent (in the element's format) of x's leading one: field − lz − bias_s
    // − e + bias_d, with e = scale − 127: field − lz − scale + (127 − bias_s + bias_d).
    let shift = i64::from(SCALE_BIAS) - s.bias() + d.bias();
    let top = (1i64 << s.exp_bits) - 2;
    let bw = signed_bits(-(1 + i64::from(s.frac_bits)) - 254, top + shift).max(d.exp_bits + 2);
    let (lz, _) = lzc(m, name, &dx.sig);
    let norm = m.wire(
        &format!("{name}_norm"),
        &pad_to(&dx.sig.shl(&lz), d.frac_bits + 3),
    );
    let be = dx
        .exp
        .zext(bw)
        .sub(&lz.zext(bw))
        .sub(&scale.zext(bw))
        .add(&signed_konst(bw, shift));
    let be = m.wire(&format!("{name}_exp"), &be);
    let word = round_encode(m, d, &dx.sign, &be, &norm);
    mux(&dx.zero, &zero_word(d, &dx.sign), &word)
}

/// Zero bits appended below an INT8 element's significand (format `s`) so that its right
/// shift r (below) is never negative. With 8 exponent bits r >= M − 7 (an all-subnormal block
/// is clamped to the scale byte 0; a normal block's largest element has r = M − 6); with
/// fewer r >= −6 (a block whose largest value is the smallest subnormal: k = 64 = 1 · 2^6).
fn int8_pad(s: FloatFormat) -> u32 {
    if s.exp_bits == 8 {
        7u32.saturating_sub(s.frac_bits)
    } else {
        6
    }
}

/// An INT8 element of the decoded word `dx` (format `s`, significand padded by P =
/// [`int8_pad`] zeros) under the scale byte S: x = sig · 2^(exp − bias − M − P) and
/// e = S − 127, so k = sig / 2^r with r = S − exp + (M + P + bias − 133), at least 0 (f32:
/// r = S + 17 − exp >= 16). Shifts of M + P + 3 and more leave 0, so r is clamped there; the
/// quotient (below 2^7 but for a rounding to 128), a guard bit and a sticky bit, then ties to
/// even and saturation at 127 ([`int8_round`]).
fn int8_code(m: &mut Module, s: FloatFormat, name: &str, dx: &Decoded, scale: &E) -> E {
    let pad = int8_pad(s);
    let width = s.frac_bits + pad;
    let c = i64::from(width) + s.bias() - 133;
    let r = scale.zext(10);
    let r = if c >= 0 {
        r.add(&konst(10, c as u128))
    } else {
        r.sub(&konst(10, (-c) as u128))
    };
    let r = r.sub(&dx.exp.zext(10));
    let most = u128::from(width + 3);
    let r = m.wire(
        &format!("{name}_shift"),
        &mux(&r.gt(&konst(10, most)), &konst(10, most), &r),
    );
    // sig·2^(P+1) (P padding zeros, one guard bit below sig) shifted right by r.
    let doubled = cat(&[dx.sig.clone(), konst(1 + pad, 0)]);
    int8_round(m, name, &doubled, &r, &dx.sign)
}

/// The INT8 code of (−1)^neg · `doubled` / 2^(r+1) (`doubled` has one guard bit at the bottom;
/// the quotient is below 2^8): the quotient and the guard bit, the bits shifted out beyond the
/// guard making the sticky bit, then (at the rounder's candidate boundary) ties to even and
/// saturation at 127.
pub(super) fn int8_round(m: &mut Module, name: &str, doubled: &E, r: &E, neg: &E) -> E {
    let y = m.wire(&format!("{name}_q"), &doubled.shr(r));
    let sticky = m.wire(&format!("{name}_sticky"), &y.shl(r).ne(doubled));
    m.stage();
    let q = y.bits(8, 1);
    let up = y.bit(0).and(&sticky.or(&q.bit(0)));
    let k = m.wire(&format!("{name}_k"), &q.add(&up.zext(8)));
    let k = m.wire(
        &format!("{name}_k_sat"),
        &mux(&k.bit(7), &named("MX_INT8_MAX", 8, 127), &k),
    );
    mux(neg, &konst(8, 0).sub(&k), &k)
}
