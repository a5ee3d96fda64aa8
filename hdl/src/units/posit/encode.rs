//! Posit encoding in hardware, mirroring the golden `PositFormat::encode`: round to nearest
//! even on the bit string, saturation at maxpos and minpos, and the `:u` variant's rounding
//! to zero at or below the bit-string midpoint minpos / 2^(2^es).

use std::rc::Rc;

use lpgen_golden::PositFormat;

use super::decode::{frac_width, ubits};
use super::TaperedHw;
use crate::ir::{
    cat, konst, mux, signed_bits, signed_konst, Module, Node, StagePlan, SubModule, E,
};

/// Rounds ±(sig + sticky)·2^(scale − (sig.width − 1)) to an N-bit posit word.
///
/// `sig` has its hidden bit (which must be 1) at the MSB and any number of fraction bits;
/// `sticky` says that nonzero bits were lost below it; `scale` is signed. The value must
/// be nonzero: the caller muxes in zero and NaR. Steps:
///
/// 1. k = scale >> es, e = scale mod 2^es; k ≥ N − 2 saturates to maxpos, k < −(N − 2) is
///    below minpos (minpos, or for `:u` zero at or below the midpoint).
/// 2. Fraction bits beyond the FW + 1 that can reach the kept bits or the guard fold into
///    the sticky bit.
/// 3. The string {r, ~r, e, f} (r = k ≥ 0) is shifted right arithmetically by k (k ≥ 0) or
///    −k − 1 = ~k (k < 0): that writes the regime, k + 1 ones and a zero or −k zeros and a
///    one. The top N − 1 bits are kept, the next is the guard, the rest is sticky.
/// 4. Round to nearest even and negate for a negative sign, in one addition.
///
/// With `stage`, a candidate stage boundary sits between the shift (3) and the rounding (4).
///
/// The encoder is an instance `NAME_encode` of a module `lpgen_posit_encode_<format>_…`
/// defined once per design for each distinct set of input widths, with the register of
/// that boundary inside it when the caller's plan cuts it ([`encode_module`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode<F: TaperedHw>(
    m: &mut Module,
    f: F,
    name: &str,
    neg: &E,
    scale: &E,
    sig: &E,
    sticky: &E,
    stage: bool,
) -> E {
    assert_eq!(neg.width, 1, "the encoder's sign is one bit");
    let has_sticky = !matches!(*sticky.node, Node::Const(0));
    let registered = stage && m.next_stage_is_cut();
    let def = encode_module(m, f, scale.width, sig.width, has_sticky, registered);
    let mut inputs = vec![("neg", neg), ("scale", scale), ("sig", sig)];
    if has_sticky {
        inputs.push(("sticky", sticky));
    }
    let outs = m.instance(&def, name, &inputs);
    if stage {
        // The caller's boundary: its cycle moves on with the instance's register.
        m.stage();
    }
    outs.port("word")
}

/// The encoder module for `f` and these input widths: `lpgen_<family>_encode_<format>_e<scale
/// width>_s<sig width>`, `_sticky` with a sticky input (else it is 0), `_r` with the register
/// between the shift and the rounding (then it has `clk`, and its word comes a cycle later).
fn encode_module<F: TaperedHw>(
    m: &Module,
    f: F,
    scale_width: u32,
    sig_width: u32,
    has_sticky: bool,
    registered: bool,
) -> Rc<SubModule> {
    let name = format!(
        "lpgen_{}_encode_{}_e{scale_width}_s{sig_width}{}{}",
        F::FAMILY,
        f.to_string().replace(':', "_"),
        if has_sticky { "_sticky" } else { "" },
        if registered { "_r" } else { "" }
    );
    let plan = if registered {
        StagePlan::at(&[0])
    } else {
        StagePlan::none()
    };
    m.define_ok(&name, plan, |r| {
        r.header.push(format!(
            "Rounds ±(sig + sticky)·2^(scale − {}) to a {f} word (nonzero values; the \
             caller muxes in zero and NaR); golden {}::encode.",
            sig_width - 1,
            F::GOLDEN
        ));
        if registered {
            r.input("clk", 1);
        }
        let neg = r.input("neg", 1);
        let scale = r.input("scale", scale_width);
        let sig = r.input("sig", sig_width);
        let sticky = if has_sticky {
            r.input("sticky", 1)
        } else {
            konst(1, 0)
        };
        let word = f.encode_body(r, &neg, &scale, &sig, &sticky, registered);
        r.output("word", &word);
    })
}

/// The posit encoder's logic ([`encode`]'s steps 1–4), in module `m`: the word, as an
/// expression.
pub(crate) fn posit_encode_body(
    m: &mut Module,
    f: PositFormat,
    neg: &E,
    scale: &E,
    sig: &E,
    sticky: &E,
    stage: bool,
) -> E {
    let n = f.n;
    let es = f.es;
    let nn = n as i64;
    m.comment("regime k and exponent e from the scale; beyond maxpos or below minpos");
    // k must hold −(n−1) and n−2 for the range tests.
    let sw = scale.width.max(es + signed_bits(-(nn - 1), nn - 1));
    let sc = scale.sext(sw);
    let kw = sw - es;
    let k = m.wire("k", &sc.bits(sw - 1, es));
    let e = (es > 0).then(|| sc.low(es));
    let ovf = m.wire("maxpos", &k.sge(&signed_konst(kw, nn - 2)));
    let unf = m.wire("below_minpos", &k.slt(&signed_konst(kw, -(nn - 2))));
    m.comment("fraction: keep FW + 1 bits (every kept bit and the guard); the rest is sticky");
    let kf = frac_width(f) + 1;
    let (fk, lost) = kept_fraction(kf, sig);
    let st_in = match *sticky.node {
        Node::Const(0) => lost,
        _ => sticky.or(&lost),
    };
    let st_in = m.wire("sticky_in", &st_in);
    // :u: strictly above the midpoint 2^(−(n−1)·2^es) when k = −(n−1) and anything is set.
    let under = if f.underflow {
        let mid = k.eq(&signed_konst(kw, -(nn - 1)));
        let mut any = st_in.or(&fk.any());
        if let Some(e) = &e {
            any = any.or(&e.any());
        }
        let above = m.wire("above_midpoint", &mid.and(&any));
        above.zext(n - 1)
    } else {
        konst(n - 1, 1)
    };
    m.comment("the bit string after the sign (regime, exponent, fraction), shifted by the regime");
    let kneg = k.msb();
    let r = kneg.not();
    let mut parts = vec![r.clone(), kneg.clone()];
    parts.extend(e.clone());
    parts.push(fk);
    let vw0 = 2 + es + kf;
    let vw = (vw0 + n - 3).max(n + 1);
    if vw > vw0 {
        parts.push(konst(vw - vw0, 0));
    }
    let v = m.wire("bit_string", &cat(&parts));
    let shw = ubits(nn as u64 - 3);
    let s = m.wire("regime_run", &k.xor(&kneg.sext(kw))).resize(shw);
    let body = m.wire("body", &v.sar(&s));
    if stage {
        m.stage();
    }
    let u = body.bits(vw - 1, vw - n + 1);
    let guard = body.bit(vw - n);
    let st = body.bits(vw - n - 1, 0).any().or(&st_in);
    m.comment("round to nearest even; negate in the same carry chain");
    let up = m.wire("round_up", &guard.and(&st.or(&u.bit(0))));
    // Rounding and negation in one carry chain: with m = {0, base} + inc (inc = the rounding
    // increment where the string is kept), −m = ~{0, base} + (1 − inc), so
    // word = ({0, base} xor neg) + (neg xor inc). (u + inc never carries out of N − 1 bits:
    // below maxpos the kept string is never all ones.)
    let ones = konst(n - 1, (1u128 << (n - 1)) - 1);
    let base = mux(&ovf, &ones, &mux(&unf, &under, &u));
    let base = m.wire("base", &cat(&[konst(1, 0), base]));
    let inc = m.wire("inc", &up.and(&ovf.or(&unf).not()));
    let flip = neg.sext(n);
    base.xor(&flip).add(&neg.xor(&inc).zext(n))
}

/// The top `kf` fraction bits of `sig` (hidden bit at its MSB), zero-padded, and whether any
/// bit below them is set.
pub(crate) fn kept_fraction(kf: u32, sig: &E) -> (E, E) {
    let fin = sig.width - 1;
    if fin >= kf {
        let lost = if fin > kf {
            sig.bits(fin - kf - 1, 0).any()
        } else {
            konst(1, 0)
        };
        (sig.bits(fin - 1, fin - kf), lost)
    } else if fin == 0 {
        (konst(kf, 0), konst(1, 0))
    } else {
        (
            cat(&[sig.bits(fin - 1, 0), konst(kf - fin, 0)]),
            konst(1, 0),
        )
    }
}
