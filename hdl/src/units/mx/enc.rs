//! `mx-enc`: a block of K f32 words converted to an MX block as the golden
//! `MxFormat::quantize_block` (§6.3 of the MX specification).
//!
//! Ports: `x` (K·32: f32 word i at bits [i·32 +: 32]); out `scale` (8, E8M0) and `codes`
//! (K·w, element i at bits [i·w +: w]). A NaN or ±∞ anywhere: scale 0xFF, every code 0.
//! Otherwise the shared exponent e = ⌊log2 max|x|⌋ − emax clamped to [−127, 127]: as the
//! largest biased exponent field F of the block decides ⌊log2 max|x|⌋ (F − 127 for normals;
//! a block of zeros and subnormals clamps to −127), the scale byte is max(F − emax, 0). A float
//! element is x·2^−e rounded once to nearest even by the float units' rounder, saturating; an
//! INT8 element (emax 0, value k/64) is k = x·2^(6−e) rounded to the nearest integer, ties to
//! even, saturating to ±127 (docs/formats.md, "INT8 range").

use lpgen_golden::mx::{Elem, MxFormat, SCALE_NAN};
use lpgen_golden::FloatFormat;

use super::super::float::{decode, round_encode, zero_word, Decoded};
use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::mx_format;
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries: the maximum tree and scale, the rounder's, the codes.
pub(crate) const ENC_STAGES: u32 = 3;

/// The input words' format: IEEE binary32.
fn f32_format() -> FloatFormat {
    FloatFormat::new(8, 23, false, false, false).expect("binary32")
}

/// The largest of `v` (unsigned), a balanced tree of comparators.
fn max_tree(m: &mut Module, mut v: Vec<E>) -> E {
    let mut level = 0;
    while v.len() > 1 {
        let mut next = vec![];
        for (j, pair) in v.chunks(2).enumerate() {
            let s = match pair {
                [x, y] => mux(&x.gt(y), x, y),
                [x] => x.clone(),
                _ => unreachable!("chunks of two"),
            };
            next.push(m.wire(&format!("max_l{level}_{j}"), &s));
        }
        v = next;
        level += 1;
    }
    v.remove(0)
}

/// `mx-enc` for `--format mx:ELEM[:bK]`, f32 words in.
pub(crate) fn enc(p: &Params) -> Result<Built, GenError> {
    let mx: MxFormat = mx_format(p);
    let s = f32_format();
    let (k, w) = (mx.block as u32, mx.elem_width());
    let (mut m, valid) = start(p, ENC_STAGES)?;
    let x = m.input("x", k * 32);
    let words: Vec<E> = (0..k).map(|i| x.bits(i * 32 + 31, i * 32)).collect();
    m.comment("the block's largest exponent field; a NaN or infinity (field all ones) anywhere");
    let fields: Vec<E> = words.iter().map(|x| x.bits(30, 23)).collect();
    let special = m.wire(
        "special",
        &cat(&fields.iter().map(|f| f.all()).collect::<Vec<_>>()).any(),
    );
    let fmax = max_tree(&mut m, fields);
    m.comment("the scale byte: max(F - emax, 0), or 0xFF (NaN)");
    let biased = match mx.emax_elem() {
        0 => fmax, // INT8: F itself
        e => {
            let emax = named("MX_ELEM_EMAX", 8, e as u128);
            mux(&fmax.ge(&emax), &fmax.sub(&emax), &konst(8, 0))
        }
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
            Elem::Float(d) => float_code(&mut m, d, &name, &dx, &scale),
            Elem::Int8 => int8_code(&mut m, &name, &dx, &scale),
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

/// A float element (format `d`) of the decoded f32 word `dx` under the scale byte: x's
/// leading one to the top of the significand, the element's biased exponent, one rounding
/// (whose candidate boundary is the rounder's).
fn float_code(m: &mut Module, d: FloatFormat, name: &str, dx: &Decoded, scale: &E) -> E {
    // The biased exponent (in the element's format) of x's leading one: field − lz − 127
    // − e + bias_d, with e = scale − 127: field − lz − scale + bias_d.
    let bw = signed_bits(-(1 + 23) - 254, 254 + d.bias()).max(d.exp_bits + 2);
    let (lz, _) = lzc(m, name, &dx.sig);
    let norm = m.wire(&format!("{name}_norm"), &dx.sig.shl(&lz));
    let be = dx
        .exp
        .zext(bw)
        .sub(&lz.zext(bw))
        .sub(&scale.zext(bw))
        .add(&signed_konst(bw, d.bias()));
    let be = m.wire(&format!("{name}_exp"), &be);
    let word = round_encode(m, d, &dx.sign, &be, &norm);
    mux(&dx.zero, &zero_word(d, &dx.sign), &word)
}

/// An INT8 element of the decoded f32 word `dx` under the scale byte S (= F, INT8's emax
/// being 0): x = sig · 2^(exp − 150) and e = S − 127, so k = sig / 2^r with r = S + 17 − exp,
/// at least 16 (S ≥ exp, or S = 0 and a subnormal's exp = 1). Shifts of 26 and more leave 0
/// (sig < 2^24), so r is clamped there; the quotient, a guard bit and a sticky bit, then (at
/// the rounder's candidate boundary) ties to even and saturation at 127 (k ≤ 128: r ≥ 17 for
/// a normal sig < 2^24, r = 16 only for a subnormal sig < 2^23).
fn int8_code(m: &mut Module, name: &str, dx: &Decoded, scale: &E) -> E {
    let r = scale.zext(10).add(&konst(10, 17)).sub(&dx.exp.zext(10));
    let r = m.wire(
        &format!("{name}_shift"),
        &mux(&r.gt(&konst(10, 26)), &konst(10, 26), &r),
    );
    // sig·2 (one guard bit below sig) shifted right by r: the quotient and the guard bit;
    // the bits shifted out beyond the guard make the sticky bit.
    let doubled = cat(&[dx.sig.clone(), konst(1, 0)]);
    let y = m.wire(&format!("{name}_q"), &doubled.shr(&r));
    let sticky = m.wire(&format!("{name}_sticky"), &y.shl(&r).ne(&doubled));
    m.stage();
    let q = y.bits(8, 1);
    let up = y.bit(0).and(&sticky.or(&q.bit(0)));
    let k = m.wire(&format!("{name}_k"), &q.add(&up.zext(8)));
    let k = m.wire(
        &format!("{name}_k_sat"),
        &mux(&k.bit(7), &named("MX_INT8_MAX", 8, 127), &k),
    );
    mux(&dx.sign, &konst(8, 0).sub(&k), &k)
}
