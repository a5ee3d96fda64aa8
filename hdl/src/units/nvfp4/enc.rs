//! `nvfp4-enc`: a block of K f32 words and the f32 tensor scale s_enc converted to an NVFP4
//! block as the golden `ScaledFormat::group_scale` and `elem_code` (docs/formats.md, "`nvfp4`
//! and scaled formats"): S = sf(amax · s_enc / 6) and q_i = e2m1(x_i · s_enc / S), each the
//! exact value rounded once to nearest even, saturating (sf: UE4M3, or UE5M3).
//!
//! s_enc is an input, not the tensor amax: it is computed once per tensor (the golden
//! `tensor_scale_for`: s_enc = f32(6 · scale_max / A), 1 for A = 0) and shared by every block.
//!
//! Ports: `x` (K·32: word i at bits [i·32 +: 32]), `s_enc` (32, f32 bits); out `scale` (8: the
//! scale word without its sign bit) and `codes` (K·4, element i at bits [i·4 +: 4]). The golden
//! model refuses a NaN or ±∞ element and a tensor scale that is not a finite f32 > 0; the unit
//! then gives the scale format's NaN code (`NVFP4_SCALE_NAN`) and every code 0.
//!
//! The arithmetic: each operand's significand is normalised (its leading one at the top, f32
//! subnormals shifted up), so the exact product of two has its leading one at bit 47 or 46; its
//! top `HEAD_BITS` (10) bits and a sticky bit (the OR of the rest) hold every bit the
//! roundings need. The scale divides the amax product by the odd part of 6 (3; the power of two
//! goes to the exponent), an element's product by S's significand (1..15): restoring division
//! of the head, the remainder joining the sticky bit. Each quotient has at least
//! `HEAD_BITS` − 4 significant bits, more than the 4 + guard a UE4M3 word or the 2 +
//! guard an E2M1 word needs, so one rounding by the float units' rounder is exact.

use lpgen_golden::family_trait::Family;
use lpgen_golden::FloatFormat;

use super::super::float::{round_encode, zero_word};
use super::super::mx::max_tree;
use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::{design, Nvfp4Design};
use crate::ir::{cat, konst, mux, named, signed_konst, Module, E};

/// Candidate stage boundaries: after the products and the amax tree; the scale's rounder;
/// after the scale; each element's rounder; the outputs.
pub(crate) const ENC_STAGES: u32 = 5;

/// Bits of a product's head that the divisions read (the rest is a sticky bit).
const HEAD_BITS: u32 = 10;

/// Width of the signed exponents (products of f32s: leading-one exponents −298..255).
const EXP_BITS: u32 = 12;

/// f32's biased exponent field, fraction and bias.
const F32_EXP: u32 = 8;
const F32_FRAC: u32 = 23;
const F32_BIAS: i64 = 127;

/// An f32 operand, normalised: value = sig · 2^(exp − 150), `sig` (24 bits) with its leading
/// one at the top unless `zero`.
struct Norm {
    sig: E,
    exp: E,
    zero: E,
}

/// The magnitude bits (31: field and fraction) of an f32, normalised.
fn normalise(m: &mut Module, name: &str, mag: &E) -> Norm {
    let field = mag.bits(F32_EXP + F32_FRAC - 1, F32_FRAC);
    let field_zero = field.any().not();
    let sig = cat(&[field.any(), mag.low(F32_FRAC)]);
    let exp = mux(&field_zero, &konst(F32_EXP, 1), &field);
    let (lz, zero) = lzc(m, name, &sig);
    let sig = m.wire(&format!("{name}_sig"), &sig.shl(&lz));
    let exp = m.wire(
        &format!("{name}_exp"),
        &exp.zext(EXP_BITS).sub(&lz.zext(EXP_BITS)),
    );
    Norm { sig, exp, zero }
}

/// The exact product of two normalised operands as its top `HEAD_BITS` bits (leading one at
/// the top), a sticky bit (the rest is nonzero) and the exponent of that leading one.
struct Head {
    head: E,
    sticky: E,
    exp: E,
}

fn product_head(m: &mut Module, name: &str, a: &Norm, b: &Norm) -> Head {
    let w = 2 * (F32_FRAC + 1);
    let p = m.wire(&format!("{name}_prod"), &a.sig.mul_full(&b.sig));
    let top = p.msb();
    let head = mux(
        &top,
        &p.bits(w - 1, w - HEAD_BITS),
        &p.bits(w - 2, w - 1 - HEAD_BITS),
    );
    let sticky = mux(
        &top,
        &p.low(w - HEAD_BITS).any(),
        &p.low(w - 1 - HEAD_BITS).any(),
    );
    // (ea − 150) + (eb − 150) + 46 + top: the exponent of the product's leading one.
    let off = 2 * (F32_BIAS + i64::from(F32_FRAC)) - i64::from(w - 2);
    let exp = a
        .exp
        .add(&b.exp)
        .add(&top.zext(EXP_BITS))
        .sub(&signed_konst(EXP_BITS, off));
    Head {
        head: m.wire(&format!("{name}_head"), &head),
        sticky: m.wire(&format!("{name}_sticky"), &sticky),
        exp: m.wire(&format!("{name}_lead_exp"), &exp),
    }
}

/// head / d (d > 0, at most `d.width` bits) by restoring division, one quotient bit per head
/// bit: the quotient's significand with its leading one at the top and the sticky bit below
/// (`HEAD_BITS` + 1 bits, for the rounder), and the quotient's leading zeros lz (its leading
/// one is at bit `HEAD_BITS` − 1 − lz).
fn divide(m: &mut Module, name: &str, h: &Head, d: &E) -> (E, E) {
    let dw = d.width;
    let mut rem = konst(dw, 0);
    let mut q = vec![];
    for i in (0..HEAD_BITS).rev() {
        let r = cat(&[rem.clone(), h.head.bit(i)]);
        let diff = r.zext(dw + 2).sub(&d.zext(dw + 2));
        let bit = m.wire(&format!("{name}_q{i}"), &diff.msb().not());
        rem = m.wire(
            &format!("{name}_rem{i}"),
            &mux(&bit, &diff.low(dw), &r.low(dw)),
        );
        q.push(bit);
    }
    let q = m.wire(&format!("{name}_quot"), &cat(&q));
    let sticky = h.sticky.or(&rem.any());
    let (lz, _) = lzc(m, &format!("{name}_quot"), &q);
    let norm = cat(&[q.shl(&lz), sticky]);
    (m.wire(&format!("{name}_norm"), &norm), lz)
}

/// `nvfp4-enc` for `--format nvfp4` (or `scaled/fp4:e2m1/bK/ue4m3|ue5m3/t`).
pub(crate) fn enc(p: &Params) -> Result<Built, GenError> {
    let d = design(p);
    let (k, ew) = (d.block, d.elem.width());
    let (mut m, valid) = start(p, ENC_STAGES)?;
    let x = m.input("x", k * 32);
    let s_enc = m.input("s_enc", 32);
    let words: Vec<E> = (0..k).map(|i| x.bits(i * 32 + 31, i * 32)).collect();

    m.comment(
        "the refused inputs (the golden model's): a NaN or infinity among the words, a tensor \
         scale that is not a finite f32 > 0",
    );
    let ones = |w: &E| w.bits(30, 23).all();
    let mut bad: Vec<E> = words.iter().map(ones).collect();
    bad.push(ones(&s_enc));
    bad.push(s_enc.msb());
    bad.push(s_enc.low(31).any().not());
    let invalid = m.wire("invalid", &cat(&bad).any());

    m.comment("the tensor scale s_enc and each word, normalised (subnormals shifted up)");
    let s = normalise(&mut m, "s_enc", &s_enc.low(31));
    let xs: Vec<Norm> = words
        .iter()
        .enumerate()
        .map(|(i, w)| normalise(&mut m, &format!("x{i}"), &w.low(31)))
        .collect();

    m.comment(
        "the amax tree: the largest magnitude of the block (f32 magnitudes order as integers)",
    );
    let amax = max_tree(&mut m, words.iter().map(|w| w.low(31)).collect());
    let amax = m.wire("amax", &amax);
    let a = normalise(&mut m, "amax", &amax);

    m.comment(&format!(
        "the exact products amax * s_enc and x_i * s_enc: their top {HEAD_BITS} bits, a sticky bit"
    ));
    let ha = product_head(&mut m, "amax_s", &a, &s);
    let hx: Vec<Head> = xs
        .iter()
        .enumerate()
        .map(|(i, xn)| product_head(&mut m, &format!("x{i}_s"), xn, &s))
        .collect();
    m.stage();

    let scale_word = block_scale(&mut m, &d, &ha, &a.zero);
    m.stage();

    let (scale_sig, scale_exp, scale_zero) = scale_parts(&mut m, d.scale, &scale_word);
    m.comment("each element: x_i * s_enc / S, the quotient by S's significand, rounded once");
    let mut fork = m.fork();
    let mut codes = vec![];
    for (i, (h, xn)) in hx.iter().zip(&xs).enumerate() {
        let name = format!("x{i}");
        let sign = words[i].msb();
        let (norm, lz) = divide(&mut m, &format!("{name}_div"), h, &scale_sig);
        // The quotient's leading one: exp_P − e_S − lz (+ the element's bias).
        let be = h
            .exp
            .sub(&scale_exp)
            .sub(&lz.zext(EXP_BITS))
            .add(&signed_konst(EXP_BITS, d.elem.bias()));
        let be = m.wire(&format!("{name}_be"), &be);
        let word = round_encode(&mut m, d.elem, &sign, &be, &norm);
        let word = mux(&xn.zero, &zero_word(d.elem, &sign), &word);
        let word = mux(&scale_zero, &konst(ew, 0), &word);
        codes.push(m.wire(&format!("code{i}"), &word));
        m.next_branch(&mut fork);
    }
    m.join(fork);
    let all = cat(&codes.iter().rev().cloned().collect::<Vec<_>>());
    let all = mux(&invalid, &konst(k * ew, 0), &all);
    let nan = named(
        "NVFP4_SCALE_NAN",
        d.scale_bits,
        u128::from(d.scale.nan()) & ((1 << d.scale_bits) - 1),
    );
    let scale = mux(&invalid, &nan, &scale_word.low(d.scale_bits));
    m.stage();
    m.output("scale", &scale);
    m.output("codes", &all);
    finish(m, &valid, vec![])
}

/// The block scale's word (the scale format's, sign 0): sf(amax · s_enc / elem_max), 0 for a
/// block of zeros. elem_max = odd · 2^e2 (E2M1: 3 · 2^1): the head divided by the odd part,
/// the power of two subtracted from the exponent. Marks the rounder's boundary.
fn block_scale(m: &mut Module, d: &Nvfp4Design, ha: &Head, amax_zero: &E) -> E {
    let (odd, e2) = odd_parts(d.elem);
    m.comment(&format!(
        "the block scale S = sf(amax * s_enc / {}), rounded once, saturating; 0 for amax 0",
        odd << e2
    ));
    let odd_bits = 64 - odd.leading_zeros();
    assert!(
        HEAD_BITS - odd_bits >= d.scale.frac_bits + 2,
        "the quotient keeps every scale bit and a guard bit"
    );
    let divisor = named("NVFP4_ELEM_MAX_ODD", odd_bits, u128::from(odd));
    let (norm, lz) = divide(m, "scale_div", ha, &divisor);
    let be = ha
        .exp
        .sub(&signed_konst(EXP_BITS, e2))
        .sub(&lz.zext(EXP_BITS))
        .add(&signed_konst(EXP_BITS, d.scale.bias()));
    let be = m.wire("scale_be", &be);
    let word = round_encode(m, d.scale, &konst(1, 0), &be, &norm);
    m.wire(
        "scale_word",
        &mux(amax_zero, &konst(d.scale.width(), 0), &word),
    )
}

/// The largest element value as odd · 2^e2.
fn odd_parts(f: FloatFormat) -> (u64, i64) {
    let max = f.to_f64(f.max_finite(false));
    let (mut sig, mut exp) = (max as u64, 0i64);
    assert!(sig as f64 == max && sig > 0, "an integer largest element");
    while sig % 2 == 0 {
        sig /= 2;
        exp += 1;
    }
    (sig, exp)
}

/// The scale word's significand (M + 1 bits, 0 for a zero scale), the exponent of its last
/// place (signed) and whether it is zero: S = sig · 2^exp.
fn scale_parts(m: &mut Module, f: FloatFormat, word: &E) -> (E, E, E) {
    m.comment("the scale's significand and the exponent of its last place");
    let mf = f.frac_bits;
    let field = word.bits(f.exp_bits + mf - 1, mf);
    let field_zero = field.any().not();
    let sig = m.wire("scale_sig", &cat(&[field.any(), word.low(mf)]));
    let e = mux(&field_zero, &konst(f.exp_bits, 1), &field);
    let exp = e
        .zext(EXP_BITS)
        .sub(&signed_konst(EXP_BITS, f.bias() + i64::from(mf)));
    let exp = m.wire("scale_exp", &exp);
    let zero = m.wire("scale_zero", &sig.any().not());
    (sig, exp, zero)
}
