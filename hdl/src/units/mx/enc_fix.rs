//! `mx-enc` on fix:I:F words (`--input fix:I:F`): two's complement k, value k · 2^−F, W =
//! 1 + I + F <= 32 bits (the golden `FixFormat`).
//!
//! The "largest exponent" of a fix block is the leading one of its largest magnitude, and that
//! is the leading one of the OR of all magnitudes: at bit p = W − 1 − lz, ⌊log2 max|x|⌋ =
//! p − F, so the shared exponent is e = p − F − emax and the scale byte W − 1 − F − emax + 127
//! − lz (`MX_SCALE_TOP` − lz; between 81 and 158: never clamped, as |p − F| <= 31). A block of
//! zeros has the scale byte 0 (e = −127, log2 0 = −∞ clamped) and every code 0; fix words have
//! no NaN or ∞. Element i, its own leading one at W − 1 − lz_i, has the value's exponent
//! emax − (lz_i − lz) after the division by 2^e: a float element is the magnitude's leading
//! one brought to the top with that exponent, rounded once by the float units' rounder; an
//! INT8 element is k = |x| · 2^(6 − p), a right shift by p of |x| · 2^6, rounded to the
//! nearest integer, ties to even, saturating to ±127 (the same rounding tail as on float
//! words).

use lpgen_golden::mx::{Elem, MxFormat, SCALE_BIAS};
use lpgen_golden::{FixFormat, FloatFormat};

use super::super::float::{pad_to, round_encode};
use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params};
use super::enc::{int8_round, ENC_STAGES};
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// One word's sign and magnitude (W bits: the most negative word's is 2^(W−1)).
struct SignMag {
    neg: E,
    mag: E,
}

/// `mx-enc` for `--format mx:ELEM[:bK]` on words of `s`.
pub(super) fn enc_fix(p: &Params, mx: MxFormat, s: FixFormat) -> Result<Built, GenError> {
    let (k, n) = (mx.block as u32, s.width());
    let (mut m, valid) = start(p, ENC_STAGES)?;
    let x = m.input("x", k * n);
    m.comment("each word's sign and magnitude |k| (the most negative word's: 2^(W-1), W bits)");
    let words: Vec<SignMag> = (0..k)
        .map(|i| {
            let word = x.bits(i * n + n - 1, i * n);
            let neg = m.wire(&format!("x{i}_neg"), &word.msb());
            let mag = m.wire(
                &format!("x{i}_mag"),
                &mux(&neg, &konst(n, 0).sub(&word), &word),
            );
            SignMag { neg, mag }
        })
        .collect();
    m.comment("the leading one of the largest magnitude: that of the OR of all magnitudes");
    let ors = words
        .iter()
        .map(|x| x.mag.clone())
        .reduce(|a, b| a.or(&b))
        .expect("a block of at least one word");
    let mag_or = m.wire("mag_or", &ors);
    let (lz_max, zero) = lzc(&mut m, "mag_or", &mag_or);
    m.comment(
        "the scale byte: MX_SCALE_TOP - lz (floor(log2 max|x|) = W - 1 - lz - F), 0 for a \
         block of zeros",
    );
    let top = i64::from(n) - 1 - i64::from(s.frac_bits) - i64::from(mx.emax_elem())
        + i64::from(SCALE_BIAS);
    let scale_top = named("MX_SCALE_TOP", 8, top as u128);
    let scale = m.wire(
        "scale_byte",
        &mux(&zero, &konst(8, 0), &scale_top.sub(&lz_max.zext(8))),
    );
    // INT8: the position p = W − 1 − lz of the block's leading one, each element's shift.
    let rw = lz_max.width + 1;
    let lead = (mx.elem == Elem::Int8).then(|| {
        m.wire(
            "lead_pos",
            &konst(rw, u128::from(n - 1)).sub(&lz_max.zext(rw)),
        )
    });
    m.stage();
    match mx.elem {
        Elem::Float(_) => m.comment(
            "each element: |x|'s leading one to the top, exponent emax - (lz_i - lz), rounded once",
        ),
        Elem::Int8 => m.comment("each element: k = |x| * 2^(6 - p), rounded to an integer once"),
    }
    let mut fork = m.fork();
    let mut codes = vec![];
    for (i, x) in words.iter().enumerate() {
        let name = format!("x{i}");
        let word = match mx.elem {
            Elem::Float(d) => float_code(&mut m, mx, d, &name, x, &lz_max),
            Elem::Int8 => int8_code(&mut m, &name, x, lead.as_ref().expect("INT8")),
        };
        codes.push(m.wire(&format!("code{i}"), &word));
        m.next_branch(&mut fork);
    }
    m.join(fork);
    let all = cat(&codes.iter().rev().cloned().collect::<Vec<_>>());
    m.stage();
    m.output("scale", &scale);
    m.output("codes", &all);
    finish(m, &valid, vec![])
}

/// A float element (format `d`) of the word `x`: its biased exponent emax + bias_d − (lz_i −
/// lz) (lz of the block's largest magnitude), its significand the magnitude's leading one at
/// the top; zero gives +0.
fn float_code(
    m: &mut Module,
    mx: MxFormat,
    d: FloatFormat,
    name: &str,
    x: &SignMag,
    lz_max: &E,
) -> E {
    let (lz, zero) = lzc(m, name, &x.mag);
    let norm = m.wire(
        &format!("{name}_norm"),
        &pad_to(&x.mag.shl(&lz), d.frac_bits + 3),
    );
    let at_max = i64::from(mx.emax_elem()) + d.bias();
    let most = (1i64 << lz.width) - 1;
    let bw = signed_bits(at_max - most, at_max + most).max(d.exp_bits + 2);
    let be = signed_konst(bw, at_max)
        .add(&lz_max.zext(bw))
        .sub(&lz.zext(bw));
    let be = m.wire(&format!("{name}_exp"), &be);
    let word = round_encode(m, d, &x.neg, &be, &norm);
    mux(&zero, &konst(d.width(), 0), &word)
}

/// An INT8 element of the word `x`: k = |x| · 2^6 / 2^p, p the position of the block's
/// leading one (the largest element's k is in [64, 128)).
fn int8_code(m: &mut Module, name: &str, x: &SignMag, lead: &E) -> E {
    // |x|·2^7: six bits of 2^6 and one guard bit below the magnitude.
    let doubled = cat(&[x.mag.clone(), konst(7, 0)]);
    int8_round(m, name, &doubled, lead, &x.neg)
}
