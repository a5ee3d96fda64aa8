//! `fdpa`: a GPU matrix unit's fused dot-product-add (issue 49), D = Σ a_i·b_i + C over one
//! chunk of L operand pairs, bit-exact to the golden `FdpaPlan::dot` on L pairs
//! (`lpgen_golden::float::fdpa`; docs/formats.md, "fdpa").
//!
//! Ports: `a`, `b` (L·N: operand i at bits [i·N +: N]), `c` (the output word: 32 bits, or 16
//! for `rne-f16`); out `y` (the output word) and `nan` (y is the NaN word).
//!
//! The datapath, one section per stage of the definition:
//! 1. decode every operand and C (the float units' decoder); each product's term stands at
//!    e_a + e_b (a subnormal at its format's smallest normal exponent), C's at its exponent,
//!    and a zero term at e_zero (the named constant `FDPA_E_ZERO`); NaN and ∞ as IEEE;
//! 2. multiply the significands exactly; a tree of signed comparisons finds e_max;
//! 3. align: each term is shifted right by e_max − e_i at F fraction bits below 2^e_max, the
//!    bits shifted out dropped (truncation toward zero of the magnitude);
//! 4. an exact two's-complement adder tree over the L + 1 terms;
//! 5. normalise (leading-zero count) and round once by RHO: toward zero to binary32 (23 or
//!    13 fraction bits, subnormals; overflow the largest such value) or to nearest even
//!    binary16 (the float units' rounder); a zero result is +0.
//!
//! The chunking (L, F, RHO) and the presets are the golden's ([`Fdpa::plan`]): `--fdpa
//! hopper` on fp8 operands is the design of `--fdpa 32:13:rz-e8m13`.

use lpgen_golden::float::fdpa::{Fdpa, FdpaPlan, Rho};
use lpgen_golden::FloatFormat;

use super::super::posit::decode::lzc;
use super::super::{finish, start, Built, GenError, Params, Unit};
use super::{decode, float_format, inf_word, round_encode};
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode, multiply and e_max,
/// align, sum, normalise, round.
pub(crate) const FDPA_STAGES: u32 = 6;

/// The longest chunk the generator builds: twice the longest of any preset (Hopper's and
/// Blackwell's 32 fp8 pairs); the golden mode takes longer ones, which no matrix unit has.
pub const MAX_FDPA_L: u32 = 64;

/// The plan of an fdpa design: its operand format and the golden plan (chunking, tf32),
/// or the one-line refusal.
pub(crate) fn plan(p: &Params) -> Result<FdpaPlan, GenError> {
    let what = format!("unit '{}'", p.unit.name());
    let f = float_format(p.format, &what)?;
    let Some(mode) = p.fdpa else {
        return Err(GenError(format!(
            "{what} needs --fdpa L:F:RHO (RHO rz-f32, rz-e8m13 or rne-f16) or a preset \
             (volta, ampere, ada, hopper, blackwell)"
        )));
    };
    if let Some(n) = mode.promote {
        return Err(GenError(format!(
            "{what} computes one chunk: promote{n} (the binary32 accumulation across chunks) \
             is not part of it; give --fdpa without :promote{n}"
        )));
    }
    let plan = mode.plan(&f).map_err(|e| GenError(e.0))?;
    if plan.chunk.l > MAX_FDPA_L {
        return Err(GenError(format!(
            "{what}: L = {} is over the limit of {MAX_FDPA_L} (twice the longest chunk of any \
             preset)",
            plan.chunk.l
        )));
    }
    Ok(plan)
}

/// The header line of an fdpa design (the unit, or an array of fdpa PEs): its chunking and
/// e_zero, and the PEs' promotion.
pub(crate) fn header(p: &Params) -> Option<String> {
    let pl = match p.unit {
        Unit::Array => super::fdpa_pe::pe_plan(p).ok()?,
        _ => plan(p).ok()?,
    };
    let promote = pl.promote.map_or(String::new(), |n| {
        format!(
            " Promotion: every {n} products into a binary32 accumulator, to nearest even \
             (:promote{n})."
        )
    });
    Some(format!(
        "Chunk: L = {} operand pairs, F = {} fraction bits below 2^e_max, RHO = {}{}; \
         e_zero = {} (FDPA_E_ZERO, two's complement) (golden fdpa:{}:{}:{}; docs/formats.md).{promote}",
        pl.chunk.l,
        pl.chunk.f,
        pl.chunk.rho.name(),
        if pl.tf32 {
            ", binary32 words read as tf32"
        } else {
            ""
        },
        pl.chunk.rho.e_zero(),
        pl.chunk.l,
        pl.chunk.f,
        pl.chunk.rho.name()
    ))
}

/// `fdpa` for `--format float:E:M --fdpa L:F:RHO` (or a preset).
pub(crate) fn fdpa(p: &Params) -> Result<Built, GenError> {
    let plan = plan(p)?;
    let (f, out) = (plan.fmt, plan.output());
    let l = plan.chunk.l;
    let (mut m, valid) = start(p, FDPA_STAGES)?;
    let a = m.input("a", l * f.width());
    let b = m.input("b", l * f.width());
    let c = m.input("c", out.width());
    let y = fdpa_core(&mut m, &plan, &a, &b, &c);
    let y = m.wire("fdpa_word", &y);
    m.output("y", &y);
    m.output("nan", &y.eq(&nan_word(plan.chunk.rho)));
    finish(m, &valid, vec![])
}

/// The NaN result word, `FDPA_NAN` (0x7FFFFFFF, or 0x7FFF for binary16).
fn nan_word(rho: Rho) -> E {
    let out = rho.output();
    named("FDPA_NAN", out.width(), (1u128 << (out.width() - 1)) - 1)
}

/// The exponent range of the datapath: (lo, hi) over every term's exponent (products, C
/// and e_zero; the all-ones field included, whose terms are specials).
fn exp_range(plan: &FdpaPlan) -> (i64, i64) {
    let (f, out) = (plan.fmt, plan.output());
    let ones = |x: &FloatFormat| (1i64 << x.exp_bits) - 1;
    let e_zero = plan.chunk.rho.e_zero();
    let lo = (2 * (1 - f.bias())).min(1 - out.bias()).min(e_zero);
    let hi = (2 * (ones(&f) - f.bias()))
        .max(ones(&out) - out.bias())
        .max(e_zero);
    (lo, hi)
}

/// One term of the chunk: sign, signed exponent (e_zero for a zero), magnitude with `frac`
/// fraction bits.
struct Term {
    sign: E,
    exp: E,
    mag: E,
    frac: u32,
}

/// The datapath: y in the cycle it ends in. Marks [`FDPA_STAGES`] boundaries.
pub(crate) fn fdpa_core(m: &mut Module, plan: &FdpaPlan, a: &E, b: &E, c: &E) -> E {
    let (f, out, rho) = (plan.fmt, plan.output(), plan.chunk.rho);
    let (l, n, ff) = (plan.chunk.l, f.width(), plan.chunk.f);
    let (lo, hi) = exp_range(plan);
    let dw = signed_bits(0, hi - lo) - 1;
    let ew = signed_bits(lo, hi).max(dw + 1);
    m.comment(&format!(
        "decode the {l} operand pairs and C; NaN and infinity as IEEE (∞·0, ∞ − ∞: NaN)"
    ));
    let e_zero = named(
        "FDPA_E_ZERO",
        ew,
        (rho.e_zero() as i128 as u128) & ((1u128 << ew) - 1),
    );
    let (mut nans, mut pos, mut neg) = (vec![], vec![], vec![]);
    let mut decoded = vec![];
    for i in 0..l {
        let da = decode(m, f, &format!("a{i}"), &a.bits(i * n + n - 1, i * n));
        let db = decode(m, f, &format!("b{i}"), &b.bits(i * n + n - 1, i * n));
        let (sa, sb) = (tf32(plan, &da.sig), tf32(plan, &db.sig));
        let za = m.wire(&format!("a{i}_zero"), &sa.any().not());
        let zb = m.wire(&format!("b{i}_zero"), &sb.any().not());
        let sign = m.wire(&format!("p{i}_sign"), &da.sign.xor(&db.sign));
        nans.push(da.nan.or(&db.nan));
        if let (Some(ia), Some(ib)) = (&da.inf, &db.inf) {
            nans.push(ia.and(&zb).or(&ib.and(&za)));
            let inf = ia.or(ib);
            pos.push(inf.and(&sign.not()));
            neg.push(inf.and(&sign));
        }
        let zero = m.wire(&format!("p{i}_zero"), &za.or(&zb));
        let e = da.exp.zext(ew).add(&db.exp.zext(ew));
        let e = e.add(&signed_konst(ew, -2 * f.bias()));
        let exp = m.wire(&format!("p{i}_exp"), &mux(&zero, &e_zero, &e));
        decoded.push((sign, exp, sa, sb));
    }
    let dc = decode(m, out, "c", c);
    nans.push(dc.nan.clone());
    let ic = dc
        .inf
        .clone()
        .expect("binary32 and binary16 have infinities");
    pos.push(ic.and(&dc.sign.not()));
    neg.push(ic.and(&dc.sign));
    let c_exp = dc.exp.zext(ew).add(&signed_konst(ew, -out.bias()));
    let c_term = Term {
        sign: dc.sign.clone(),
        exp: m.wire("c_exp", &mux(&dc.zero, &e_zero, &c_exp)),
        mag: dc.sig.clone(),
        frac: out.frac_bits,
    };
    let pos = m.wire("pos_inf", &cat(&pos).any());
    let neg = m.wire("neg_inf", &cat(&neg).any());
    let is_nan = m.wire("is_nan", &cat(&nans).any().or(&pos.and(&neg)));
    let is_inf = m.wire("is_inf", &pos.or(&neg));
    m.stage();
    m.comment("multiply the significands exactly; the largest exponent e_max (signed tree)");
    let mut terms: Vec<Term> = vec![];
    for (i, (sign, exp, sa, sb)) in decoded.into_iter().enumerate() {
        let mag = m.wire(&format!("p{i}_sig"), &sa.mul_full(&sb));
        let frac = 2 * f.frac_bits;
        terms.push(Term {
            sign,
            exp,
            mag,
            frac,
        });
    }
    terms.push(c_term);
    let e_max = max_tree(m, terms.iter().map(|t| t.exp.clone()).collect());
    m.stage();
    m.comment(&format!(
        "align and truncate: each term shifted right by e_max − e_i, {ff} fraction bits kept \
         below 2^e_max (bits shifted out are dropped: toward zero)"
    ));
    let sw = ff + (4 * u64::from(l) + 2).ilog2() + 2;
    let mut signed = vec![];
    for (i, t) in terms.iter().enumerate() {
        let name = if i as u32 == l {
            "c".to_string()
        } else {
            format!("p{i}")
        };
        let d = m.wire(&format!("{name}_diff"), &e_max.sub(&t.exp)).low(dw);
        let g = ff.max(t.frac);
        let x = m.wire(&format!("{name}_fixed"), &shl_const(&t.mag, g - t.frac));
        let aligned = m.wire(&format!("{name}_aligned"), &x.shr(&d));
        let tr = aligned.bits(aligned.width - 1, g - ff).zext(sw);
        let v = mux(&t.sign, &konst(sw, 0).sub(&tr), &tr);
        signed.push(m.wire(&format!("{name}_term"), &v));
    }
    m.stage();
    m.comment(&format!(
        "add the {} terms exactly (a balanced tree, two's complement)",
        l + 1
    ));
    let sum = sum_tree(m, signed);
    m.stage();
    m.comment("normalise: |sum| with its leading one at the top; its biased exponent");
    let sum_neg = m.wire("sum_neg", &sum.msb());
    let w = sw - 1;
    let mag = m
        .wire("sum_abs", &mux(&sum_neg, &konst(sw, 0).sub(&sum), &sum))
        .low(w);
    let (lz, sum_zero) = lzc(m, "sum", &mag);
    let norm = m.wire("norm", &mag.shl(&lz));
    // The leading one's exponent: e_max − F + (W − 1) − lz, biased by the output's bias.
    let off = i64::from(w) - 1 - i64::from(ff) + out.bias();
    let bw = signed_bits(lo - i64::from(ff) + out.bias() - 1, hi + off + 1)
        .max(out.exp_bits + 2)
        .max(lz.width + 1);
    let be = e_max.sext(bw).add(&signed_konst(bw, off));
    let be = m.wire("norm_exp", &be.sub(&lz.zext(bw)));
    m.stage();
    let word = match rho {
        Rho::RzF32 | Rho::RzE8m13 => round_rz(m, plan, &sum_neg, &be, &norm),
        Rho::RneF16 => {
            let pad = (out.frac_bits + 3).saturating_sub(w);
            let norm = cat(&[norm, konst(pad.max(1), 0)]);
            let word = round_encode(m, out, &sum_neg, &be, &norm);
            // A result that rounds to −0 is +0.
            let zero = word.low(out.width() - 1).any().not();
            mux(&zero, &konst(out.width(), 0), &word)
        }
    };
    m.comment("specials: NaN, infinity, a zero sum (+0)");
    let word = mux(&sum_zero, &konst(out.width(), 0), &word);
    let word = mux(&is_inf, &inf_word(out, &neg), &word);
    mux(&is_nan, &nan_word(rho), &word)
}

/// `x` with `k` zeros appended below (x·2^k, k + width bits).
fn shl_const(x: &E, k: u32) -> E {
    if k == 0 {
        x.clone()
    } else {
        cat(&[x.clone(), konst(k, 0)])
    }
}

/// A significand read as tf32 where the plan says so: its low 13 fraction bits dropped.
fn tf32(plan: &FdpaPlan, sig: &E) -> E {
    if plan.tf32 {
        cat(&[sig.high(sig.width - 13), konst(13, 0)])
    } else {
        sig.clone()
    }
}

/// The largest of signed exponents, a balanced tree of comparisons.
fn max_tree(m: &mut Module, level: Vec<E>) -> E {
    let e_max = m.tree("emax", level, |x, y| mux(&x.sgt(y), x, y));
    m.wire("e_max", &e_max)
}

/// The exact sum of two's-complement terms of one width, a balanced tree.
fn sum_tree(m: &mut Module, level: Vec<E>) -> E {
    let sum = m.tree("sum", level, E::add);
    m.wire("sum", &sum)
}

/// Rounds (−1)^sign · norm · 2^(be − 127 − (W − 1)) toward zero to binary32 with 23 (rz-f32)
/// or 13 (rz-e8m13) fraction bits, as the golden: a result below 2^−126 keeps the fraction
/// bits at that exponent (subnormals), one past 2^127·(2 − ulp) is the largest value with
/// those bits (`FDPA_RZ_MAX`), and a result that truncates to zero is +0 (the zero sum is
/// the caller's). Marks one boundary (between the decision and the word).
fn round_rz(m: &mut Module, plan: &FdpaPlan, sign: &E, be: &E, norm: &E) -> E {
    let out = plan.output();
    let keep = match plan.chunk.rho {
        Rho::RzF32 => 23,
        Rho::RzE8m13 => 13,
        Rho::RneF16 => unreachable!("rne-f16 rounds to nearest"),
    };
    m.comment(&format!(
        "round toward zero to {keep} fraction bits: subnormal results shift right to the \
         smallest exponent; past the largest, the largest"
    ));
    let w = norm.width.max(keep + 2);
    let norm = shl_const(norm, w - norm.width);
    let bw = be.width + 1;
    let field = be.low(out.exp_bits);
    let bx = be.sext(bw);
    let one = signed_konst(bw, 1);
    let tiny = m.wire("tiny", &bx.slt(&one));
    let emax = (1i64 << out.exp_bits) - 2;
    let huge = m.wire("huge", &bx.sgt(&signed_konst(bw, emax)));
    let shift = mux(&tiny, &one.sub(&bx), &konst(bw, 0));
    let shift = m.wire("subnormal_shift", &shift);
    let shifted = m.wire("subnormal_sig", &norm.shr(&shift));
    let frac = m.wire("round_frac", &shifted.bits(w - 2, w - 1 - keep));
    let field = m.wire("round_field", &mux(&tiny, &konst(out.exp_bits, 0), &field));
    let flushed = m.wire("flushed", &tiny.and(&frac.any().not()));
    m.stage();
    m.comment("encode: sign, field, the kept fraction bits (zeros below); overflow; +0");
    let pad = out.frac_bits - keep;
    let body = if pad > 0 {
        cat(&[field, frac, konst(pad, 0)])
    } else {
        cat(&[field, frac])
    };
    let word = cat(&[sign.clone(), body]);
    // The largest finite field, then `keep` ones and `pad` zeros.
    let max = (((1u128 << out.exp_bits) - 2) << out.frac_bits) | (((1u128 << keep) - 1) << pad);
    let max = named("FDPA_RZ_MAX", out.width() - 1, max);
    let word = mux(&huge, &cat(&[sign.clone(), max]), &word);
    mux(&flushed, &konst(out.width(), 0), &word)
}

/// The fdpa designs of the lint grid: lean, fp4 pairs of two, fp8 Hopper chunks, bf16
/// Ampere and f16 into binary16, each at both ends of `--stages`; full, more formats and
/// chunkings at every stage count.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let designs: Vec<(&str, &str)> = if full {
        vec![
            ("float:2:1", "2:3:rz-f32"),
            ("float:2:1", "2:1:rne-f16"),
            ("fp8:e4m3", "hopper"),
            ("fp8:e5m2", "ada"),
            ("fp8:e5m2", "blackwell"),
            ("bf16", "ampere"),
            ("f16", "volta"),
            ("f16", "hopper"),
            ("f16", "8:12:rne-f16"),
            ("float:8:23", "ampere"),
            ("fp8:e4m3:ftz", "4:13:rz-e8m13"),
        ]
    } else {
        vec![
            ("float:2:1", "2:3:rz-f32"),
            ("fp8:e4m3", "hopper"),
            ("bf16", "ampere"),
            ("f16", "4:12:rne-f16"),
        ]
    };
    let stages: Vec<u32> = if full {
        (0..=FDPA_STAGES).collect()
    } else {
        vec![0, FDPA_STAGES]
    };
    let mut g = vec![];
    for (f, mode) in designs {
        for &s in &stages {
            g.push(params(f, mode).stages(s));
        }
    }
    g
}

/// An fdpa design on `format` with `--fdpa mode` (`L:F:RHO` or a preset).
pub fn params(format: &str, mode: &str) -> Params {
    let mut p = Params::new(Unit::Fdpa, format.parse().expect("a float format"));
    p.fdpa = Some(Fdpa::parse(&format!("fdpa:{mode}")).expect("an fdpa mode"));
    p
}
