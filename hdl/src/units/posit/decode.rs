//! Posit decoding in hardware: the leading-zero counter (a log-depth tree of muxes) and the
//! decoder that mirrors the golden `PositFormat::unpack`.
//!
//! A decoded nonzero, non-NaR posit is (sign, scale, sig) with value ±sig·2^(scale − FW),
//! where `sig` = 1.f holds the hidden bit at its MSB and the FW = max(0, N − 3 − es) fraction
//! bits below it (the golden keeps the same fields with the hidden bit at bit 62). Missing
//! exponent and fraction bits read as zero.

use std::rc::Rc;

use lpgen_golden::PositFormat;

use super::TaperedHw;
use crate::ir::{cat, konst, mux, signed_bits, Module, StagePlan, SubModule, E};

/// Bits that hold `0..=v` (at least 1).
pub(crate) fn ubits(v: u64) -> u32 {
    (64 - v.leading_zeros()).max(1)
}

/// Fraction bits of the widest significand of the format (posits: N − 3 − es, at least 0).
pub(crate) fn frac_width<F: TaperedHw>(f: F) -> u32 {
    f.frac_bits()
}

/// A bound on decoded scales: they lie in −max..=max (posits: maxpos's, (N − 2)·2^es).
pub(crate) fn max_scale<F: TaperedHw>(f: F) -> i64 {
    f.scale_bound()
}

/// Leading zeros of `x`: (count, all_zero). `x` is padded with zeros on the right to a power
/// of two P ≥ 2; the count has log2(P) bits and is only meaningful when `all_zero` is 0.
/// The counter is the module `lpgen_lzc_P` (one definition per width, [`lzc_module`]),
/// instantiated as `NAME_lzc` (outputs `NAME_lzc_count`, `NAME_lzc_zero`).
pub(crate) fn lzc(m: &mut Module, name: &str, x: &E) -> (E, E) {
    let p = x.width.next_power_of_two().max(2);
    let x = if p > x.width {
        cat(&[x.clone(), konst(p - x.width, 0)])
    } else {
        x.clone()
    };
    let def = lzc_module(m, p);
    let outs = m.instance(&def, &format!("{name}_lzc"), &[("x", &x)]);
    (outs.port("count"), outs.port("zero"))
}

/// The leading-zero counter of `p` bits (a power of two ≥ 2), defined once per design: a
/// log-depth tree over groups. A level holds, per group of 2^j bits, a zero flag and a j-bit
/// count; two neighbours combine as `z = zh & zl`, `c = {zh, zh ? cl : ch}`. Each level is
/// one pair of wires (`zJ`, `cJ`), so the Verilog stays linear in size.
fn lzc_module(m: &Module, p: u32) -> Rc<SubModule> {
    m.define_ok(&format!("lpgen_lzc_{p}"), StagePlan::none(), |r| {
        r.header.push(format!(
            "Leading zeros of x ({p} bits): count, and zero when x is all zeros."
        ));
        let x = r.input("x", p);
        let (count, zero) = lzc_tree(r, p, &x);
        r.output("count", &count);
        r.output("zero", &zero);
    })
}

fn lzc_tree(m: &mut Module, p: u32, x: &E) -> (E, E) {
    // Level 1: pairs of bits.
    let groups = p / 2;
    let mut zs = vec![];
    let mut cs = vec![];
    for g in (0..groups).rev() {
        let (hi, lo) = (x.bit(2 * g + 1), x.bit(2 * g));
        zs.push(hi.or(&lo).not());
        cs.push(hi.not());
    }
    let mut z = m.wire("z1", &cat(&zs));
    let mut c = m.wire("c1", &cat(&cs));
    let mut j = 1;
    let mut groups = groups;
    while groups > 1 {
        groups /= 2;
        let mut zs = vec![];
        let mut cs = vec![];
        for g in (0..groups).rev() {
            let (zh, zl) = (z.bit(2 * g + 1), z.bit(2 * g));
            let ch = c.bits((2 * g + 1) * j + j - 1, (2 * g + 1) * j);
            let cl = c.bits(2 * g * j + j - 1, 2 * g * j);
            zs.push(zh.and(&zl));
            cs.push(cat(&[zh.clone(), mux(&zh, &cl, &ch)]));
        }
        j += 1;
        z = m.wire(&format!("z{j}"), &cat(&zs));
        c = m.wire(&format!("c{j}"), &cat(&cs));
    }
    (c, z)
}

/// The fields of a decoded word (of a posit, or of a family that shares the posit datapath:
/// [`TaperedHw`]).
pub(crate) struct Decoded {
    pub sign: E,
    /// |word| as an N-bit pattern (two's-complement negation); orders like the magnitude.
    pub mag: E,
    pub zero: E,
    pub nar: E,
    /// Signed scale k·2^es + e.
    pub scale: E,
    /// 1.f: the hidden bit at the MSB, `frac_width` fraction bits below.
    pub sig: E,
}

/// The first half of decoding: sign, two's-complement magnitude, zero and NaR tests.
pub(crate) struct Magnitude {
    pub sign: E,
    pub mag: E,
    pub zero: E,
    pub nar: E,
}

/// Decodes the N-bit word `p` through an instance `NAME_decode` of the format's decoder
/// module `lpgen_<family>_decode_<format>` ([`magnitude`], then the family's fields; defined
/// once per design); its outputs are the wires `NAME_decode_sign`, `NAME_decode_mag`, ….
pub(crate) fn decode<F: TaperedHw>(m: &mut Module, f: F, name: &str, p: &E) -> Decoded {
    let def = decode_module(m, f);
    let outs = m.instance(&def, &format!("{name}_decode"), &[("word", p)]);
    let port = |port: &str| outs.port(port);
    Decoded {
        sign: port("sign"),
        mag: port("mag"),
        zero: port("zero"),
        nar: port("nar"),
        scale: port("scale"),
        sig: port("sig"),
    }
}

fn decode_module<F: TaperedHw>(m: &Module, f: F) -> Rc<SubModule> {
    let name = format!(
        "lpgen_{}_decode_{}",
        F::FAMILY,
        f.to_string().replace(':', "_")
    );
    m.define_ok(&name, StagePlan::none(), |r| {
        r.header.push(format!(
            "Decodes a {f} word: sign, |word|, zero, NaR, scale and significand 1.f \
             (hidden bit at the MSB); golden {}::unpack.",
            F::GOLDEN
        ));
        let word = r.input("word", f.n());
        let mg = magnitude(r, f, "word", &word);
        let d = f.fields(r, "word", &mg);
        for (port, e) in [
            ("sign", &d.sign),
            ("mag", &d.mag),
            ("zero", &d.zero),
            ("nar", &d.nar),
            ("scale", &d.scale),
            ("sig", &d.sig),
        ] {
            r.output(port, e);
        }
    })
}

/// Sign, two's-complement magnitude and the zero / NaR tests of the word `p`.
pub(crate) fn magnitude<F: TaperedHw>(m: &mut Module, f: F, name: &str, p: &E) -> Magnitude {
    let n = f.n();
    let w = |s: &str| format!("{name}_{s}");
    let sign = m.wire(&w("sign"), &p.msb());
    let rest_zero = p.bits(n - 2, 0).any().not();
    let zero = m.wire(&w("zero"), &sign.not().and(&rest_zero));
    let nar = m.wire(&w("nar"), &sign.and(&rest_zero));
    let mag = m.wire(&w("mag"), &mux(&sign, &konst(n, 0).sub(p), p));
    Magnitude {
        sign,
        mag,
        zero,
        nar,
    }
}

/// Scale and significand from a magnitude: regime run by a leading-zero count of the
/// (inverted if it starts with ones) bits after the sign, then exponent and fraction from
/// the bits after the regime's terminator.
pub(crate) fn posit_fields(m: &mut Module, f: PositFormat, name: &str, mg: &Magnitude) -> Decoded {
    let n = f.n;
    let es = f.es;
    let fw = frac_width(f);
    let w = |s: &str| format!("{name}_{s}");
    let mag = &mg.mag;
    // The n−1 bits after the sign; the regime starts at the top.
    let x = mag.low(n - 1);
    let r0 = m.wire(&w("regime_ones"), &mag.bit(n - 2));
    let xi = mux(&r0, &x.not(), &x);
    // A 1 after the last bit caps the run at n−1 (the regime fills the word).
    let (run, _) = lzc(m, &w("regime"), &cat(&[xi, konst(1, 1)]));
    let run = m.wire(&w("run"), &run);
    // k = run − 1 for a run of ones, −run = ~(run − 1) for a run of zeros.
    let kw = signed_bits(-(n as i64 - 1), n as i64 - 1);
    let km1 = run.zext(kw.max(run.width)).low(kw).sub(&konst(kw, 1));
    let k = km1.xor(&r0.not().sext(kw));
    // The terminator lands at bit n−2; exponent and fraction follow, bit 0 is always 0.
    let y = m.wire(&w("after_regime"), &x.shl(&run));
    let avail = n - 3; // bits after sign, shortest regime
    let e = if es == 0 {
        None
    } else {
        let take = es.min(avail);
        Some(if take == 0 {
            konst(es, 0)
        } else if take == es {
            y.bits(n - 3, n - 2 - es)
        } else {
            cat(&[y.bits(n - 3, n - 2 - take), konst(es - take, 0)])
        })
    };
    let scale = match e {
        Some(e) => cat(&[k, e]),
        None => k,
    };
    let scale = m.wire(&w("scale"), &scale);
    let sig = if fw == 0 {
        konst(1, 1)
    } else {
        cat(&[konst(1, 1), y.bits(fw, 1)])
    };
    let sig = m.wire(&w("sig"), &sig);
    Decoded {
        sign: mg.sign.clone(),
        mag: mg.mag.clone(),
        zero: mg.zero.clone(),
        nar: mg.nar.clone(),
        scale,
        sig,
    }
}
