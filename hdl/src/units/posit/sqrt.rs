//! The square root of a lane on the posit datapath (posits and takums, `--sqrt`): golden
//! `tapered::sqrt`, rounded once by the family's encoder.

use super::decode::{decode, frac_width};
use super::encode::encode;
use super::{nar_word, TaperedHw};
use crate::ir::{cat, konst, mux, Module, E};
use crate::units::root::restoring_root;

/// √a rounded once; NaR for NaR and for a negative a, zero for zero. The decoded 1.f (FW + 1
/// bits) and scale s give the radicand x = 1.f·2^(s mod 2) ∈ [1, 4) and the root's scale
/// ⌊s/2⌋; q = ⌊√(x·2^(2(FW+1)))⌋ by the restoring recurrence (FW + 2 steps) has its leading
/// one at bit FW + 1, every fraction bit the format can keep and a guard below them; the
/// remainder is the sticky bit (the golden root has more bits, and the same rounding).
/// Candidate boundaries: after the decode, halfway through the root, after it, inside the
/// encoder.
pub(crate) fn sqrt_core<F: TaperedHw>(m: &mut Module, f: F, px: &str, a: &E) -> E {
    let w = |s: &str| format!("{px}{s}");
    m.comment("decode a (sign, scale, significand; NaR, zero)");
    let d = decode(m, f, &w("a"), a);
    // NaR's sign bit is set too: one test for NaR and a negative operand.
    let is_nar = m.wire(&w("is_nar"), &d.sign);
    let is_zero = m.wire(&w("is_zero"), &d.zero);
    m.comment("an odd scale doubles the radicand; the scale halves (arithmetic shift)");
    let odd = m.wire(&w("odd"), &d.scale.bit(0));
    let x = mux(
        &odd,
        &cat(&[d.sig.clone(), konst(1, 0)]),
        &cat(&[konst(1, 0), d.sig.clone()]),
    );
    let sw = d.scale.width;
    let root_scale = m.wire(&w("root_scale"), &d.scale.bits(sw - 1, 1).sext(sw));
    m.stage();
    m.comment("root: restoring digit recurrence, one bit per step, two radicand bits each");
    let fw = frac_width(f);
    let steps = fw + 2;
    // The radicand x·2^(FW+2): 2(FW + 2) bits.
    let rad = cat(&[x, konst(fw + 2, 0)]);
    let (root, rem) = restoring_root(m, px, &rad, steps);
    let sticky = m.wire(&w("sticky"), &rem.any());
    m.stage();
    m.comment("round once and encode (the encoder module); NaR and zero");
    let word = encode(
        m,
        f,
        &w("encode"),
        &konst(1, 0),
        &root_scale,
        &root,
        &sticky,
        true,
    );
    mux(
        &is_nar,
        &nar_word(f),
        &mux(&is_zero, &konst(f.n(), 0), &word),
    )
}
