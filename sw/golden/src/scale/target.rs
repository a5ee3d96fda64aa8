//! The value a scale maps a group's amax to: the top of the element format's band of most
//! precision (docs/formats.md, "Scaled formats").
//!
//! A float's normal binades all hold the same number of fraction bits, so that band reaches
//! its largest finite value, and the scale maps amax to the maximum, as TransformerEngine and
//! OCP MX do. Fixed point and LNS are the same (fix's precision grows to its top binade; LNS
//! has one relative spacing). A posit's (and a takum's) fraction tapers away from 1: mapping
//! amax to maxpos would leave the tensor in binades of no fraction bits, so the scale maps it
//! to the top of the binades around 1 that hold the most fraction bits (posit(8, 2): 15).
//!
//! Written once, from the format's own rounding (`from_f64`/`to_f64`), for every family.

use crate::family::{Calc, Format};

/// The number of fraction bits of the binade [2^e, 2^(e+1)): the largest f ≤ 52 with
/// 2^e·(1 + 2^−f) a value of the format (0 for LNS, whose values are not binary
/// fractions); `None` when 2^e itself is not a value.
fn frac_bits(calc: &Calc, e: i32) -> Option<u32> {
    let is_value = |x: f64| calc.to_f64(calc.from_f64(x)) == x;
    let v = 2f64.powi(e);
    if !v.is_normal() || !is_value(v) {
        return None;
    }
    Some(
        (1..=52)
            .take_while(|&f| is_value(v * (1.0 + 2f64.powi(-f))))
            .count() as u32,
    )
}

/// The scale's target for an element format whose largest finite value is `max` (finite
/// and positive): `max` when the format's most precise binade is its top one, else the largest value
/// 2^e·(2 − 2^−f) of the highest binade e of the most fraction bits f.
pub(crate) fn precision_top(elem: &Format, max: f64) -> f64 {
    let calc = elem.calc();
    // ⌊log2 max⌋ of a normal f64; every binade below it (a posit's top binades are not all
    // values: posit(8, 2) has 2^24 and 2^20, not 2^23).
    let top = ((max.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let mut best: Option<(u32, i32)> = None;
    for e in (-1022..=top).rev() {
        if let Some(f) = frac_bits(&calc, e) {
            if best.is_none_or(|(b, _)| f > b) {
                best = Some((f, e));
            }
        }
    }
    match best {
        Some((f, e)) if e < top => 2f64.powi(e) * (2.0 - 2f64.powi(-(f as i32))),
        _ => max,
    }
}
