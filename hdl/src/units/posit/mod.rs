//! Posit units: adder, multiplier, and the fused MAC into a quire (both standards), built
//! from a shared decoder ([`mod@decode`]) and encoder ([`mod@encode`]) that mirror the golden
//! `PositFormat::unpack` / `encode` (docs/formats.md, "posit" and "Quire").
//!
//! Every generator is runtime-parametric in (N, es, standard, `:u`) read from
//! `lpgen_golden::PositFormat`. Ports and timing (t = the cycle of `in_valid`):
//!
//! | unit | inputs | outputs | candidate boundaries | latency |
//! | --- | --- | --- | --- | --- |
//! | `posit-add` | `a`, `b` (N), `sub` (1: a − b) | `y` (N), `nar` | 4: decode, align/add, normalise, encoder shift | stages |
//! | `posit-mul` | `a`, `b` (N) | `y` (N), `nar` | 4: magnitudes, decode, multiply, encoder shift | stages |
//! | `posit-mac` | `a`, `b` (N), `op` (2) | `y` (N), `nar` | 8 (see [`quire`]) | stages |
//!
//! `nar` is high when `y` is NaR. All units accept one operation per cycle.

pub(crate) mod decode;
pub(crate) mod encode;
mod lane;
mod quire;
mod sqrt;

use lpgen_golden::tapered::Tapered;
use lpgen_golden::{Format, PositFormat};

use super::{finish, start, Built, GenError, Params, PeKind, Unit};
use crate::ir::{cat, konst, mux, named, signed_bits, Module, E};
use decode::{decode, lzc, magnitude, max_scale, Decoded, Magnitude};
use encode::encode;

/// A family on the posit datapath (golden `tapered`: two's-complement words, NaR, words
/// ordered like values, unpacked to sign, scale and 1.f): its decoder's fields and its
/// encoder. The adder, multiplier, divider, lanes and conversions here are written once
/// over it; posits and takums (`units/takum`) implement it.
pub(crate) trait TaperedHw: Tapered + PartialEq + std::fmt::Display + 'static {
    /// The family in module names (`lpgen_posit_decode_…`).
    const FAMILY: &'static str;
    /// The golden type whose `unpack` and `encode` the decoder and encoder mirror.
    const GOLDEN: &'static str;
    /// The format of this family that `f` is, if it is one.
    fn of(f: Format) -> Option<Self>;
    /// Fraction bits of the widest significand.
    fn frac_bits(self) -> u32;
    /// Decoded scales lie in −bound..=bound.
    fn scale_bound(self) -> i64;
    /// Scale and significand 1.f (hidden bit at the MSB, `frac_bits` below) of a magnitude.
    fn fields(self, m: &mut Module, name: &str, mg: &Magnitude) -> Decoded;
    /// Rounds ±(sig + sticky)·2^(scale − (sig.width − 1)), nonzero, to a word; with `stage`,
    /// a candidate boundary before the rounding ([`encode::encode`]).
    fn encode_body(self, m: &mut Module, neg: &E, scale: &E, sig: &E, sticky: &E, stage: bool)
        -> E;
}

impl TaperedHw for PositFormat {
    const FAMILY: &'static str = "posit";
    const GOLDEN: &'static str = "PositFormat";
    fn of(f: Format) -> Option<Self> {
        if let Format::Posit(p) = f {
            Some(p)
        } else {
            None
        }
    }
    fn frac_bits(self) -> u32 {
        (self.n as i64 - 3 - self.es as i64).max(0) as u32
    }
    fn scale_bound(self) -> i64 {
        self.max_scale() as i64
    }
    fn fields(self, m: &mut Module, name: &str, mg: &Magnitude) -> Decoded {
        decode::posit_fields(m, self, name, mg)
    }
    fn encode_body(
        self,
        m: &mut Module,
        neg: &E,
        scale: &E,
        sig: &E,
        sticky: &E,
        stage: bool,
    ) -> E {
        encode::posit_encode_body(m, self, neg, scale, sig, sticky, stage)
    }
}

#[allow(unused_imports)] // quire_pe: used by the array generator
pub(crate) use quire::{mac, quire_pe, QuirePe, QUIRE_PE};

/// Candidate stage boundaries of each unit (the most `--stages` accepts).
pub(crate) const ADD_STAGES: u32 = 4;
pub(crate) const MUL_STAGES: u32 = 4;
pub(crate) const MAC_STAGES: u32 = quire::CANDIDATES;

pub(crate) fn posit_format(f: Format, what: &str) -> Result<PositFormat, GenError> {
    match f {
        Format::Posit(p) => Ok(p),
        other => Err(GenError(format!(
            "{what} needs a posit format (e.g. posit:16:1), not {other}"
        ))),
    }
}

/// NaR (1 followed by zeros), as the named constant `NAR`.
pub(crate) fn nar_word<F: TaperedHw>(f: F) -> E {
    named("NAR", f.n(), f.nar_word() as u128)
}

/// `posit-add`: y = a + b, or a − b when `sub`. Golden `PositFormat::add` / `sub`: the
/// larger magnitude leads, the smaller significand is shifted right by the scale difference
/// with a sticky bit, added or subtracted with three extra low bits (guard, round, sticky:
/// enough for one correct rounding, as the result keeps at most FW fraction bits),
/// normalised by a leading-zero count, and encoded once.
pub(crate) fn add(p: &Params) -> Result<Built, GenError> {
    let f = posit_format(p.format, "unit 'posit-add'")?;
    let (mut m, valid) = start(p, ADD_STAGES)?;
    let a = m.input("a", f.n);
    let b = m.input("b", f.n);
    let sub = m.input("sub", 1);
    let (y, nar) = add_core(&mut m, f, "", &a, &b, &sub);
    m.output("y", &y);
    m.output("nar", &nar);
    finish(m, &valid, vec![])
}

/// The adder's datapath (wires named `PX…`): (y, nar) in the cycle it ends in. Marks
/// [`ADD_STAGES`] candidate boundaries.
pub(crate) fn add_core<F: TaperedHw>(
    m: &mut Module,
    f: F,
    px: &str,
    a: &E,
    b: &E,
    sub: &E,
) -> (E, E) {
    let w = |s: &str| format!("{px}{s}");
    let n = f.n();
    m.comment("decode a and b (sign, scale, significand; NaR, zero)");
    let da = decode(m, f, &w("a"), a);
    let db = decode(m, f, &w("b"), b);
    let is_nar = m.wire(&w("is_nar"), &da.nar.or(&db.nar));
    let sb = m.wire(&w("b_sign_eff"), &db.sign.xor(sub));
    // A zero operand needs no path of its own: with its hidden bit cleared it adds nothing
    // (it never leads, as its magnitude is the smallest), and the sum of two zeros is zero.
    let sig_of = |d: &Decoded| {
        let hidden = d.zero.not();
        if d.sig.width == 1 {
            hidden
        } else {
            cat(&[hidden, d.sig.low(d.sig.width - 1)])
        }
    };
    let (sig_a, sig_b) = (sig_of(&da), sig_of(&db));
    m.comment("compare: the larger magnitude leads (patterns order like magnitudes)");
    let swap = m.wire(&w("swap"), &da.mag.lt(&db.mag));
    let pick = |x: &E, y: &E| mux(&swap, y, x);
    let big_sign = m.wire(&w("big_sign"), &pick(&da.sign, &sb));
    let eff_sub = m.wire(&w("eff_sub"), &big_sign.xor(&pick(&sb, &da.sign)));
    let big_scale = m.wire(&w("big_scale"), &pick(&da.scale, &db.scale));
    let small_scale = m.wire(&w("small_scale"), &pick(&db.scale, &da.scale));
    let big_sig = m.wire(&w("big_sig"), &pick(&sig_a, &sig_b));
    let small_sig = m.wire(&w("small_sig"), &pick(&sig_b, &sig_a));
    m.stage();
    m.comment("align: shift the smaller significand right by the scale difference; sticky");
    let dw = big_scale.width + 1;
    let d = m.wire(
        &w("align_shift"),
        &big_scale.sext(dw).sub(&small_scale.sext(dw)),
    );
    let aw = big_sig.width + 4;
    let zero1 = konst(1, 0);
    let av = cat(&[zero1.clone(), big_sig, konst(3, 0)]);
    let bv = cat(&[zero1.clone(), small_sig, konst(3, 0)]);
    let ones = konst(aw, (1u128 << aw) - 1);
    let lost = m.wire(&w("align_sticky"), &bv.and(&ones.shl(&d).not()).any());
    let bs = m.wire(&w("aligned"), &bv.shr(&d).or(&lost.zext(aw)));
    // One adder for both: av + (bs xor eff_sub) + eff_sub, the carry-in as an extra low bit
    // ({av, 1} + {bs', eff_sub} carries exactly eff_sub out of it).
    m.comment("add, or subtract when the effective signs differ");
    let bs_inv = bs.xor(&eff_sub.sext(aw));
    let one = konst(1, 1);
    let sum_ext = cat(&[av.clone(), one]).add(&cat(&[bs_inv, eff_sub.clone()]));
    let sum = m.wire(&w("sum"), &sum_ext.bits(aw, 1));
    m.stage();
    m.comment("normalise: the sum's leading one becomes the hidden bit");
    let (lz, sum_zero) = lzc(m, &w("sum"), &sum);
    let norm = m.wire(&w("norm"), &sum.shl(&lz));
    let ms = max_scale(f);
    let rw = signed_bits(-(ms + aw as i64), ms + 1)
        .max(lz.width + 1)
        .max(big_scale.width);
    let scale = m.wire(
        &w("norm_scale"),
        &big_scale.sext(rw).add(&konst(rw, 1)).sub(&lz.zext(rw)),
    );
    m.stage();
    m.comment("round to nearest even and encode (the encoder module); NaR and zero");
    let word = encode(m, f, &w("encode"), &big_sign, &scale, &norm, &zero1, true);
    let y = mux(&is_nar, &nar_word(f), &mux(&sum_zero, &konst(n, 0), &word));
    (y, is_nar)
}

/// `posit-mul`: y = a·b. Golden `PositFormat::mul`: the exact product of the significands
/// (2·(FW+1) bits, its hidden bit at the top or one below), scales added, encoded once.
pub(crate) fn mul(p: &Params) -> Result<Built, GenError> {
    let f = posit_format(p.format, "unit 'posit-mul'")?;
    let (mut m, valid) = start(p, MUL_STAGES)?;
    let a = m.input("a", f.n);
    let b = m.input("b", f.n);
    let (y, nar) = mul_core(&mut m, f, "", &a, &b);
    m.output("y", &y);
    m.output("nar", &nar);
    finish(m, &valid, vec![])
}

/// The multiplier's datapath (wires named `PX…`): (y, nar). Marks [`MUL_STAGES`] candidate
/// boundaries.
pub(crate) fn mul_core<F: TaperedHw>(m: &mut Module, f: F, px: &str, a: &E, b: &E) -> (E, E) {
    let w = |s: &str| format!("{px}{s}");
    let n = f.n();
    m.comment("decode, part 1: the magnitudes (two's complement of negative words)");
    let ma = magnitude(m, f, &w("a"), a);
    let mb = magnitude(m, f, &w("b"), b);
    m.stage();
    m.comment("decode, part 2: regime, exponent and fraction fields");
    let da = f.fields(m, &w("a"), &ma);
    let db = f.fields(m, &w("b"), &mb);
    let is_nar = m.wire(&w("is_nar"), &da.nar.or(&db.nar));
    let is_zero = m.wire(&w("is_zero"), &da.zero.or(&db.zero));
    let neg = m.wire(&w("neg"), &da.sign.xor(&db.sign));
    let ms = max_scale(f);
    let sw = signed_bits(-2 * ms, 2 * ms + 1).max(da.scale.width);
    m.stage();
    m.comment("multiply the significands exactly; add the scales beside it");
    let esum = m.wire(&w("scale_sum"), &da.scale.sext(sw).add(&db.scale.sext(sw)));
    let prod = m.wire(&w("product"), &da.sig.mul_full(&db.sig));
    m.stage();
    let pw = prod.width;
    m.comment("normalise: a product of 2 or more moves its leading one up a scale");
    let carry = prod.msb();
    let sig = mux(&carry, &prod, &cat(&[prod.low(pw - 1), konst(1, 0)]));
    let sig = m.wire(&w("product_sig"), &sig);
    let scale = m.wire(&w("product_scale"), &esum.add(&carry.zext(sw)));
    m.comment("round to nearest even and encode (the encoder module); NaR and zero");
    let word = encode(m, f, &w("encode"), &neg, &scale, &sig, &konst(1, 0), true);
    let y = mux(&is_nar, &nar_word(f), &mux(&is_zero, &konst(n, 0), &word));
    (y, is_nar)
}

/// The posit designs of the lint grid.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<String> = if full {
        let mut v = vec![];
        for n in [4u32, 5, 8, 12, 16, 24, 32] {
            for es in 0..=3u32 {
                if es + 3 <= n {
                    v.push(format!("posit:{n}:{es}"));
                }
            }
        }
        v.extend(["posit:8", "posit:16", "posit:32"].map(String::from));
        v
    } else {
        [
            "posit:8:0",
            "posit:16:1",
            "posit:8",
            "posit:8:2:u",
            "posit:32:2",
        ]
        .map(String::from)
        .to_vec()
    };
    let mut g = vec![];
    for f in &formats {
        for (unit, max) in [
            (Unit::PositAdd, ADD_STAGES),
            (Unit::PositMul, MUL_STAGES),
            (Unit::PositMac, MAC_STAGES),
        ] {
            let stages: Vec<u32> = if full { vec![0, 1, max] } else { vec![0, max] };
            for s in stages {
                g.push(Params::new(unit, f.parse().unwrap()).stages(s));
            }
        }
    }
    g
}

/// The posit-quire PE's designs of the lint grid, posit:16: stages 0..=8 up to 2×3 (the
/// registers around the quire are stages 3..=8), 0 and 2 at 4×4, 2 above; lean, 1×1 at 0, 1,
/// 2 and the deepest, 8.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    crate::units::array::pe_designs(PeKind::PositQuire, "posit:16", full, |pes| {
        match (pes, full) {
            (0..=6, true) => &[0, 1, 2, 3, 4, 5, 6, 7, 8],
            (1, false) => &[0, 1, 2, 8],
            (7..=16, true) => &[0, 2],
            (_, true) => &[2],
            (_, false) => &[],
        }
    })
}
