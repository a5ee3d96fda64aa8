//! IEEE-style float units (`float:E:M[:fn][:sat][:ftz]`, issue 32): adder/subtractor,
//! multiplier and fused multiply-add, round to nearest even, bit-exact to the golden
//! `FloatFormat::add`, `sub`, `mul` and `fma` (docs/formats.md, "float:E:M"). They share the operand decoder (the module
//! `lpgen_float_decode_*`, [`decode`]), the leading-zero counter of the posit units and the
//! rounder/encoder ([`round_encode`]), which mirrors the golden `FloatFormat::round_with`.
//!
//! Ports and timing (t = the cycle of `in_valid`):
//!
//! | unit | inputs | outputs | candidate boundaries | latency |
//! | --- | --- | --- | --- | --- |
//! | `float-add` | `a`, `b` (N), `sub` (1: a − b) | `y` (N), `nan` | 5: decode/compare, align, add, normalise, round | stages |
//! | `float-mul` | `a`, `b` (N) | `y` (N), `nan` | 4: decode, multiply, normalise, round | stages |
//! | `float-fma` | `a`, `b`, `c` (N) | `y` (N), `nan` | 7: decode, multiply, normalise terms, align, add, normalise, round | stages |
//!
//! `nan` is high when `y` is a NaN (the canonical one: every NaN a unit produces is it).

mod add;
mod convert;
mod div;
mod fdpa;
mod fdpa_pe;
mod fma;
mod lane;
mod mul;
mod pe;
mod sqrt;
mod stochastic;

use std::rc::Rc;

use lpgen_golden::{FloatFormat, Format};

use super::{GenError, Params, Unit};
use crate::ir::{cat, konst, mux, named, signed_konst, Module, StagePlan, SubModule, E};

pub(crate) use add::{add, add_decoded, ADD_STAGES};
pub(crate) use convert::{convert_stochastic, fix_to_float, pad_to, CONVERT_STAGES};
pub(crate) use fdpa::{fdpa, grid as fdpa_grid, header as fdpa_header, FDPA_STAGES};
pub use fdpa::{params as fdpa_params, MAX_FDPA_L};
pub use fdpa_pe::array_params as fdpa_array_params;
pub(crate) use fdpa_pe::{array_grid as fdpa_array_grid, check_array as check_fdpa_array, FDPA_PE};
pub(crate) use fma::{fma, FMA_STAGES};
pub(crate) use lane::check_hardware;
pub(crate) use mul::{mul, MUL_STAGES};
pub(crate) use pe::{array_grid, FLOAT_PE};
pub(crate) use stochastic::{
    array_header, convert_grid as stochastic_convert_grid, lane_random_bits, lanes_header,
    random_bits, stochastic_header,
};

pub(crate) fn float_format(f: Format, what: &str) -> Result<FloatFormat, GenError> {
    match f {
        Format::Float(x) => check_hardware(x, what).map(|_| x),
        Format::F32(_) => Err(GenError(format!(
            "{what} takes float:E:M words: for f32 use float:8:23 (the same words)"
        ))),
        other => Err(GenError(format!(
            "{what} needs a float format (e.g. bf16, fp8:e4m3, float:5:10), not {other}"
        ))),
    }
}

/// The canonical NaN word, as the named constant `FLOAT_QNAN`.
pub(crate) fn qnan(f: FloatFormat) -> E {
    named("FLOAT_QNAN", f.width(), u128::from(f.nan()))
}

/// A word of sign `sign` and magnitude bits `body` (N − 1 bits).
fn signed_word(sign: &E, body: &E) -> E {
    cat(&[sign.clone(), body.clone()])
}

/// ±∞ (formats without `:fn`): the sign, then the constant `FLOAT_INF` (exponent all ones,
/// fraction zero).
pub(crate) fn inf_word(f: FloatFormat, sign: &E) -> E {
    let ones = (1u128 << f.exp_bits) - 1;
    let body = named("FLOAT_INF", f.width() - 1, ones << f.frac_bits);
    signed_word(sign, &body)
}

/// ±0.
pub(crate) fn zero_word(f: FloatFormat, sign: &E) -> E {
    signed_word(sign, &konst(f.width() - 1, 0))
}

/// The fields of a decoded float word: its value is (−1)^sign · sig · 2^(exp − bias − M)
/// unless it is NaN or ∞.
pub(crate) struct Decoded {
    pub sign: E,
    pub nan: E,
    /// ±∞; `None` with `:fn` (no infinities).
    pub inf: Option<E>,
    /// ±0 (with `:ftz` also a subnormal).
    pub zero: E,
    /// The biased exponent, 1 for subnormals and zeros (E bits).
    pub exp: E,
    /// The significand with its hidden bit at the top (M + 1 bits; 0 for zeros).
    pub sig: E,
}

/// Decodes `x` through the shared module `lpgen_float_decode_…` (one definition per
/// format's decoding: E, M, `:fn`, `:ftz`), instantiated as `NAME_decode`.
pub(crate) fn decode(m: &mut Module, f: FloatFormat, name: &str, x: &E) -> Decoded {
    let def = decode_module(m, f);
    let outs = m.instance(&def, &format!("{name}_decode"), &[("x", x)]);
    Decoded {
        sign: outs.port("sign"),
        nan: outs.port("nan"),
        inf: (!f.finite).then(|| outs.port("inf")),
        zero: outs.port("zero"),
        exp: outs.port("exp"),
        sig: outs.port("sig"),
    }
}

fn decode_module(m: &Module, f: FloatFormat) -> Rc<SubModule> {
    let (e, mf) = (f.exp_bits, f.frac_bits);
    let name = format!(
        "lpgen_float_decode_e{e}m{mf}{}{}",
        if f.no_nan {
            "_nonan"
        } else if f.finite {
            "_fn"
        } else {
            ""
        },
        if f.ftz { "_ftz" } else { "" }
    );
    m.define_ok(&name, StagePlan::none(), |r| {
        r.header.push(format!(
            "Decodes a word of float:{e}:{mf}{}{}: sign, NaN, {}zero, biased exponent (1 for \
             subnormals), significand with its hidden bit.",
            if f.no_nan {
                ":nonan (no NaN code)"
            } else if f.finite {
                ":fn"
            } else {
                ""
            },
            if f.ftz {
                ":ftz (subnormals read as zeros)"
            } else {
                ""
            },
            if f.finite { "" } else { "infinity, " }
        ));
        let n = f.width();
        let x = r.input("x", n);
        let field = r.wire("field", &x.bits(n - 2, mf));
        let frac = r.wire("frac", &x.low(mf));
        let field_ones = field.all();
        let field_zero = r.wire("field_zero", &field.any().not());
        let frac_zero = frac.any().not();
        // :nonan (the MX FP6/FP4 elements): no NaN code; the all-ones field is normal.
        let nan = if f.no_nan {
            konst(1, 0)
        } else if f.finite {
            field_ones.and(&frac.all())
        } else {
            field_ones.and(&frac.any())
        };
        r.output("sign", &x.msb());
        r.output("nan", &nan);
        if !f.finite {
            r.output("inf", &field_ones.and(&frac_zero));
        }
        let zero = if f.ftz {
            field_zero.clone()
        } else {
            field_zero.and(&frac_zero)
        };
        r.output("zero", &zero);
        r.output("exp", &mux(&field_zero, &konst(e, 1), &field));
        let low = if f.ftz {
            mux(&field_zero, &konst(mf, 0), &frac)
        } else {
            frac
        };
        r.output("sig", &cat(&[field_zero.not(), low]));
    })
}

/// Whether word `y` is a NaN (the `nan` output).
pub(crate) fn is_nan_word(f: FloatFormat, y: &E) -> E {
    let n = f.width();
    let field = y.bits(n - 2, f.frac_bits);
    let frac = y.low(f.frac_bits);
    if f.finite {
        field.all().and(&frac.all())
    } else {
        field.all().and(&frac.any())
    }
}

/// Align and add, between two candidate boundaries: the smaller significand shifted right by
/// `d` (the exponent difference; what falls out becomes a sticky bit), then big + small, or
/// big − small when `eff_sub`, in one adder (the subtrahend inverted, `eff_sub` as the carry
/// in). The sum has the significands' width + 1 + `low` bits: a carry bit on top and `low`
/// bits below, the lowest a sticky bit (3 to round to nearest: guard, round, sticky).
/// Shared by `float-add` and the addition of `float-fma`.
pub(crate) fn align_add_with(
    m: &mut Module,
    d: &E,
    big_sig: &E,
    small_sig: &E,
    eff_sub: &E,
    low: u32,
) -> E {
    m.comment("align: shift the smaller significand right by the exponent difference; sticky");
    let d = m.wire("align_shift", d);
    let aw = big_sig.width + 1 + low;
    let av = cat(&[konst(1, 0), big_sig.clone(), konst(low, 0)]);
    let bv = cat(&[konst(1, 0), small_sig.clone(), konst(low, 0)]);
    let ones = konst(aw, (1u128 << aw) - 1);
    let lost = m.wire("align_sticky", &bv.and(&ones.shl(&d).not()).any());
    let aligned = m.wire("aligned", &bv.shr(&d).or(&lost.zext(aw)));
    m.stage();
    m.comment("add, or subtract when the effective signs differ");
    let inv = aligned.xor(&eff_sub.sext(aw));
    let sum_ext = cat(&[av, konst(1, 1)]).add(&cat(&[inv, eff_sub.clone()]));
    let sum_ext = m.wire("sum_wide", &sum_ext);
    m.wire("sum", &sum_ext.bits(aw, 1))
}

/// Rounds (−1)^sign · norm · 2^(be − bias − (W − 1)) to the word nearest, ties to the even
/// significand, as the golden `round_with`: `norm` (W ≥ M + 3 bits) holds the value's
/// leading one at its top (any nonzero value; its lowest bit may be a sticky bit), `be` is
/// the signed biased exponent of that leading one. Results below the smallest normal are
/// shifted right to the smallest exponent first (subnormals), or with `:ftz` rounded as
/// normals and flushed to zero of their sign when below it; past max finite the result is
/// the overflow word (±max with `:sat`, NaN with `:fn`, ±∞). Marks one candidate boundary
/// (between the rounding decision and the increment).
pub(crate) fn round_encode(m: &mut Module, f: FloatFormat, sign: &E, be: &E, norm: &E) -> E {
    round_encode_with(m, f, sign, be, norm, None)
}

/// [`round_encode`], or with `random` (R bits, the stream's draw for this result) rounded
/// stochastically as the golden `round_with` does with `Draw::Stochastic`: the magnitude is
/// truncated and moves one unit of the last place iff d + random ≥ 2^R, d being the top R
/// bits of the discarded part (zeros appended). `norm` must be exact in the R bits below its
/// top M + 1 (a sticky bit, if any, lies below them).
pub(crate) fn round_encode_with(
    m: &mut Module,
    f: FloatFormat,
    sign: &E,
    be: &E,
    norm: &E,
    random: Option<&E>,
) -> E {
    let (e, mf) = (f.exp_bits, f.frac_bits);
    // Stochastic: zeros appended so that R discarded bits exist even after no shift.
    let norm = match random {
        Some(r) if norm.width < mf + 1 + r.width => {
            cat(&[norm.clone(), konst(mf + 1 + r.width - norm.width, 0)])
        }
        _ => norm.clone(),
    };
    let norm = &norm;
    let w = norm.width;
    assert!(w >= mf + 3, "the rounder needs a guard and a sticky bit");
    assert!(w < 128, "significands of at most 127 bits");
    let bw = be.width.max(e + 2);
    let be = be.sext(bw);
    let one = signed_konst(bw, 1);
    m.comment("round: subnormal results shift right to the smallest exponent; guard, sticky");
    let tiny = m.wire("tiny", &be.slt(&one));
    let (shifted, lost) = if f.ftz {
        (norm.clone(), konst(1, 0))
    } else {
        let sw = bw + 1;
        let ds = mux(&tiny, &one.sext(sw).sub(&be.sext(sw)), &konst(sw, 0));
        let ds = m.wire("subnormal_shift", &ds);
        // (Stochastic rounding ignores the bits shifted out: they lie below the top R.)
        let lost = match random {
            None => {
                let ones = konst(w, (1u128 << w) - 1);
                m.wire("subnormal_sticky", &norm.and(&ones.shl(&ds).not()).any())
            }
            Some(_) => konst(1, 0),
        };
        (m.wire("subnormal_sig", &norm.shr(&ds)), lost)
    };
    let mant = m.wire("round_frac", &shifted.bits(w - 2, w - 1 - mf));
    let round_up = match random {
        None => {
            let guard = shifted.bit(w - 2 - mf);
            let sticky = shifted.low(w - 2 - mf).any().or(&lost);
            guard.and(&sticky.or(&mant.bit(0)))
        }
        Some(r) => {
            let rb = r.width;
            let d = m.wire("round_discard", &shifted.bits(w - 2 - mf, w - 1 - mf - rb));
            // The carry out of d + random: d + random ≥ 2^R.
            d.zext(rb + 1).add(&r.zext(rb + 1)).bit(rb)
        }
    };
    let round_up = m.wire("round_up", &round_up);
    let field = m.wire("round_field", &mux(&tiny, &konst(e, 0), &be.low(e)));
    // The biased exponent of max finite: 2^E − 2, or 2^E − 1 with `:fn`.
    let emax = (1i64 << e) - 2 + i64::from(f.finite);
    let huge = m.wire("huge", &be.sgt(&signed_konst(bw, emax)));
    let below_half = if f.ftz {
        Some(m.wire("below_half_min", &be.slt(&signed_konst(bw, 0))))
    } else {
        None
    };
    m.stage();
    m.comment("encode: add the rounding increment (its carry may reach the exponent)");
    let bodyw = e + mf + 1;
    let body = cat(&[konst(1, 0), field, mant]).add(&round_up.zext(bodyw));
    let body = m.wire("rounded", &body);
    let rounded_field = body.bits(e + mf - 1, mf);
    let past_max = if f.finite {
        body.ge(&konst(bodyw, (1u128 << (e + mf)) - 1))
    } else {
        rounded_field.all()
    };
    let overflow = m.wire("overflow", &huge.or(&past_max));
    let over_word = if f.sat {
        let max = u128::from(f.max_finite(false));
        signed_word(sign, &named("FLOAT_MAX", f.width() - 1, max))
    } else if f.finite {
        qnan(f)
    } else {
        inf_word(f, sign)
    };
    let word = signed_word(sign, &body.low(e + mf));
    let word = match below_half {
        Some(bh) => {
            let flush = m.wire("flush", &bh.or(&rounded_field.any().not()));
            mux(&flush, &zero_word(f, sign), &word)
        }
        None => word,
    };
    mux(&overflow, &over_word, &word)
}

/// The float designs of the lint grid.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<&str> = if full {
        vec![
            "fp8:e4m3",
            "fp8:e5m2",
            "float:3:4",
            "float:2:1",
            "float:4:3:sat",
            "fp8:e4m3:sat",
            "fp8:e5m2:ftz",
            "float:3:4:fn:ftz",
            "bf16",
            "f16",
            "f16:sat:ftz",
            "float:8:23",
            "float:11:52",
        ]
    } else {
        vec!["fp8:e4m3", "bf16", "float:3:4"]
    };
    let mut g = vec![];
    for f in formats {
        for (unit, max) in [
            (Unit::FloatAdd, ADD_STAGES),
            (Unit::FloatMul, MUL_STAGES),
            (Unit::FloatFma, FMA_STAGES),
        ] {
            let stages: Vec<u32> = if full {
                (0..=max).collect()
            } else {
                vec![0, max]
            };
            for s in stages {
                g.push(Params::new(unit, f.parse().unwrap()).stages(s));
            }
        }
    }
    g.extend(stochastic::grid(full));
    g
}
