//! `mx-enc`: a block of K f32 words converted to an MX block as the golden
//! `MxFormat::quantize_block` (§6.3 of the MX specification).
//!
//! Ports: `x` (K·32: f32 word i at bits [i·32 +: 32]); out `scale` (8, E8M0) and `codes`
//! (K·w, element i at bits [i·w +: w]). A NaN or ±∞ anywhere: scale 0xFF, every code 0.
//! Otherwise the shared exponent e = ⌊log2 max|x|⌋ − emax clamped to [−127, 127]: as the
//! largest biased exponent field F of the block decides ⌊log2 max|x|⌋ (F − 127 for normals;
//! a block of zeros and subnormals clamps to −127), the scale byte is max(F − emax, 0); each
//! element is x·2^−e rounded once to nearest even by the float units' rounder, saturating.
//! Float elements only: INT8 is refused in one line.

use lpgen_golden::mx::{Elem, MxFormat, SCALE_NAN};
use lpgen_golden::FloatFormat;

use super::super::float::{decode, round_encode, zero_word};
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

/// `mx-enc` for `--format mx:ELEM[:bK]` (float elements), f32 words in.
pub(crate) fn enc(p: &Params) -> Result<Built, GenError> {
    let mx: MxFormat = mx_format(p);
    let Elem::Float(d) = mx.elem else {
        return Err(GenError(format!(
            "unit 'mx-enc' on {mx}: INT8 elements have no RTL encoder yet (float elements: \
             fp8:e4m3, fp8:e5m2, fp6:e3m2, fp6:e2m3, fp4:e2m1)"
        )));
    };
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
    let emax = named("MX_ELEM_EMAX", 8, mx.emax_elem() as u128);
    let biased = mux(&fmax.ge(&emax), &fmax.sub(&emax), &konst(8, 0));
    let scale_nan = named("MX_SCALE_NAN", 8, u128::from(SCALE_NAN));
    let scale = m.wire("scale_byte", &mux(&special, &scale_nan, &biased));
    m.stage();
    m.comment("each element: x / 2^e, its leading one to the top, rounded once");
    // The biased exponent (in the element's format) of x's leading one: field − lz − 127
    // − e + bias_d, with e = scale − 127: field − lz − scale + bias_d.
    let bw = signed_bits(-(1 + 23) - 254, 254 + d.bias()).max(d.exp_bits + 2);
    let mut fork = m.fork();
    let mut codes = vec![];
    for (i, xw) in words.iter().enumerate() {
        let name = format!("x{i}");
        let dx = decode(&mut m, s, &name, xw);
        let (lz, _) = lzc(&mut m, &name, &dx.sig);
        let norm = m.wire(&format!("{name}_norm"), &dx.sig.shl(&lz));
        let be = dx
            .exp
            .zext(bw)
            .sub(&lz.zext(bw))
            .sub(&scale.zext(bw))
            .add(&signed_konst(bw, d.bias()));
        let be = m.wire(&format!("{name}_exp"), &be);
        let word = round_encode(&mut m, d, &dx.sign, &be, &norm);
        let word = mux(&dx.zero, &zero_word(d, &dx.sign), &word);
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
