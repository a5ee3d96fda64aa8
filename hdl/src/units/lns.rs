//! LNS units: multiply/divide, add/subtract (G-table ROMs from the golden library), and the
//! Kahan-compensated MAC of one PE. Word layout and rules: docs/formats.md.

use lpgen_golden::{Format, LnsFormat};

use super::{start, valid_out, Built, GenError, Params};
use crate::ir::{konst, mux, Module, E};

fn lns_format(p: &Params) -> Result<LnsFormat, GenError> {
    match p.format {
        Format::Lns(l) => Ok(l),
        other => Err(GenError(format!(
            "unit '{}' needs an LNS format (e.g. lns:5:6), not {other}",
            p.unit.name()
        ))),
    }
}

/// A word split into its fields, with the reserved-code tests.
pub(crate) struct Fields {
    pub sign: E,
    /// The log field, two's complement, 1+I+F bits.
    pub log: E,
    pub is_nan: E,
    pub is_zero: E,
}

pub(crate) fn fields(m: &mut Module, f: LnsFormat, name: &str, w: &E) -> Fields {
    let lw = f.log_width();
    let sign = m.wire(&format!("{name}_sign"), &w.bit(lw));
    let log = m.wire(&format!("{name}_log"), &w.low(lw));
    let reserved = m.wire(&format!("{name}_reserved"), &log.eq_k(1u128 << (lw - 1)));
    let is_nan = m.wire(&format!("{name}_is_nan"), &reserved.and(&sign));
    let is_zero = m.wire(&format!("{name}_is_zero"), &reserved.and(&sign.not()));
    Fields {
        sign,
        log,
        is_nan,
        is_zero,
    }
}

/// Saturates a code of `lw + 1` bits into the log field: above code_max → code_max (overflow),
/// at or below the reserved code → zero (flush). Returns (word, overflow).
pub(crate) fn saturate(m: &mut Module, f: LnsFormat, sign: &E, code: &E) -> (E, E) {
    let lw = f.log_width();
    let cw = code.width;
    let max = konst(cw, (f.code_max() as i128 as u128) & ((1u128 << cw) - 1));
    let reserved = konst(
        cw,
        (f.code_reserved() as i128 as u128) & ((1u128 << cw) - 1),
    );
    let over = m.wire("overflow_sat", &code.sgt(&max));
    let under = m.wire("underflow_flush", &code.sle(&reserved));
    let log = mux(&over, &max.low(lw), &code.low(lw));
    let zero = konst(lw + 1, f.zero() as u128);
    let word = mux(&under, &zero, &cat2(sign, &log));
    (word, over)
}

fn cat2(a: &E, b: &E) -> E {
    crate::ir::cat(&[a.clone(), b.clone()])
}

/// `lns-mul`: y = a·b, or a/b when `div` is set. One candidate stage boundary (after the
/// code sum).
pub(crate) fn mul(p: &Params) -> Result<Built, GenError> {
    let f = lns_format(p)?;
    let (mut m, valid) = start(p, 1)?;
    let w = f.width();
    let lw = f.log_width();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let div = m.input("div", 1);
    let fa = fields(&mut m, f, "a", &a);
    let fb = fields(&mut m, f, "b", &b);
    // Exact code sum/difference in lw+1 bits, then saturate/flush.
    let la = fa.log.sext(lw + 1);
    let lb = fb.log.sext(lw + 1);
    let code = m.wire("code", &mux(&div, &la.sub(&lb), &la.add(&lb)));
    let sign = m.wire("sign", &fa.sign.xor(&fb.sign));
    // Special operands: NaN if an operand is NaN or (div) the divisor is zero; zero if an
    // operand is zero (mul) or the dividend is zero (div).
    let nan = m.wire(
        "is_nan",
        &fa.is_nan.or(&fb.is_nan).or(&div.and(&fb.is_zero)),
    );
    let zero = m.wire("is_zero", &fa.is_zero.or(&div.not().and(&fb.is_zero)));
    m.stage();
    let (word, over) = saturate(&mut m, f, &sign, &code);
    let y = mux(
        &nan,
        &konst(w, f.nan() as u128),
        &mux(&zero, &konst(w, f.zero() as u128), &word),
    );
    m.output("y", &y);
    let special = nan.or(&zero);
    m.output("overflow", &over.and(&special.not()));
    m.output("nan", &nan);
    let latency = m.cycle();
    valid_out(&mut m, &valid);
    Ok(Built {
        module: m,
        latency,
        tables: vec![],
    })
}

pub(crate) fn add(p: &Params) -> Result<Built, GenError> {
    Err(super::not_yet(p))
}

pub(crate) fn kahan(p: &Params) -> Result<Built, GenError> {
    Err(super::not_yet(p))
}

/// PE builder (`PeBuilder`) for the `lns-kahan` array PE.
#[allow(dead_code)]
pub(crate) fn kahan_pe(
    _m: &mut Module,
    f: Format,
    _prefix: &str,
    _io: &super::PeIo,
) -> Result<E, GenError> {
    Err(GenError(format!(
        "the lns-kahan PE is not generated yet ({f})"
    )))
}

/// PE builder (`PeBuilder`) for the `lns-plain` array PE.
#[allow(dead_code)]
pub(crate) fn plain_pe(
    _m: &mut Module,
    f: Format,
    _prefix: &str,
    _io: &super::PeIo,
) -> Result<E, GenError> {
    Err(GenError(format!(
        "the lns-plain PE is not generated yet ({f})"
    )))
}

/// The LNS designs of the lint grid.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<String> = if full {
        (3..=7)
            .flat_map(|i| (2..=10).map(move |f| format!("lns:{i}:{f}")))
            .collect()
    } else {
        vec!["lns:5:6".into(), "lns:3:2".into(), "lns:7:10".into()]
    };
    let mut g = vec![];
    for f in &formats {
        for s in [0, 1] {
            g.push(Params::new(super::Unit::LnsMul, f.parse().unwrap()).stages(s));
        }
    }
    g
}
