//! LNS units: multiply/divide (`lns-mul`), add/subtract with the G tables as ROMs
//! (`lns-add`), and the multiply-accumulate of one PE (`lns-kahan`, and the `lns-kahan` /
//! `lns-plain` array PEs, in [`mac`]). Word layout and rules: docs/formats.md, "`lns:I:F`".
//!
//! The operations are built by cores ([`mul_core`], [`add_core`]) that the units and the MAC
//! share; a core given `staged = true` marks its candidate stage boundaries with
//! `m.stage()`, otherwise it is one combinational block in the current cycle.

mod adder;
mod lane;
mod mac;

pub(crate) use adder::{add_core, add_module, AddStages, Negate, ADD_CANDIDATES};

pub(crate) use mac::{kahan, KAHAN_MAX_STAGES, KAHAN_PE, PLAIN_PE};

use lpgen_golden::{Format, GTables, LnsFormat};

use super::{finish, start, Built, GenError, Params, PeKind, Unit};

use crate::ir::{cat, mux, named, Module, E};

fn lns_format(p: &Params) -> Result<LnsFormat, GenError> {
    match p.format {
        Format::Lns(l) => Ok(l),
        other => Err(GenError(format!(
            "unit '{}' needs an LNS format (e.g. lns:5:6), not {other}",
            p.unit.name()
        ))),
    }
}

/// The G-table digests a design holding the tables of `f` reports (`Built::tables`): one
/// entry, "sb+db", `GTables::digest()`.
pub(crate) fn table_digests(f: LnsFormat) -> Vec<(String, String)> {
    let t = GTables::get(f.int_bits, f.frac_bits);
    vec![("sb+db".to_string(), t.digest())]
}

/// A word split into its fields, with the reserved-code tests.
pub(crate) struct Fields {
    pub sign: E,
    /// The log field, two's complement, 1+I+F bits.
    pub log: E,
    /// The reserved code (zero or NaN).
    pub reserved: E,
    pub is_nan: E,
    pub is_zero: E,
}

/// The word of zero (the reserved log code, sign 0), as the named constant `LNS_ZERO`.
pub(crate) fn zero_word(f: LnsFormat) -> E {
    named("LNS_ZERO", f.width(), f.zero() as u128)
}

/// The word of NaN (the reserved log code, sign 1), as the named constant `LNS_NAN`.
pub(crate) fn nan_word(f: LnsFormat) -> E {
    named("LNS_NAN", f.width(), f.nan() as u128)
}

pub(crate) fn fields(m: &mut Module, f: LnsFormat, name: &str, w: &E) -> Fields {
    let lw = f.log_width();
    let sign = m.wire(&format!("{name}_sign"), &w.bit(lw));
    let log = m.wire(&format!("{name}_log"), &w.low(lw));
    let reserved_log = named("LNS_RESERVED_LOG", lw, 1u128 << (lw - 1));
    let reserved = m.wire(&format!("{name}_reserved"), &log.eq(&reserved_log));
    let is_nan = m.wire(&format!("{name}_is_nan"), &reserved.and(&sign));
    let is_zero = m.wire(&format!("{name}_is_zero"), &reserved.and(&sign.not()));
    Fields {
        sign,
        log,
        reserved,
        is_nan,
        is_zero,
    }
}

/// Saturates a two's-complement code (any width above the log field's) into the log field:
/// above code_max → code_max (overflow), at or below the reserved code → zero (flush).
/// Returns (word, overflow). Wire names start with `prefix`.
pub(crate) fn saturate(m: &mut Module, f: LnsFormat, prefix: &str, sign: &E, code: &E) -> (E, E) {
    let lw = f.log_width();
    let cw = code.width;
    assert!(cw > lw, "the code has a bit above the log field");
    // code_max = 2^(lw−1) − 1 and the reserved code is −2^(lw−1), so both tests read bits
    // instead of comparing (a carry chain each): above code_max, the code is nonnegative
    // with a bit set in [cw−2 : lw−1]; at or below the reserved code, it is negative and
    // either not all ones there or zero below.
    debug_assert_eq!(f.code_max() as i64, (1i64 << (lw - 1)) - 1);
    debug_assert_eq!(f.code_reserved() as i64, -(1i64 << (lw - 1)));
    let sign_bit = code.msb();
    let high = code.bits(cw - 2, lw - 1);
    let over = m.wire(
        &format!("{prefix}overflow_sat"),
        &sign_bit.not().and(&high.any()),
    );
    let under = m.wire(
        &format!("{prefix}underflow_flush"),
        &sign_bit.and(&high.all().not().or(&code.low(lw - 1).any().not())),
    );
    let log_max = named("LNS_LOG_MAX", lw, f.code_max() as u128);
    let log = mux(&over, &log_max, &code.low(lw));
    let word = mux(&under, &zero_word(f), &cat(&[sign.clone(), log]));
    (word, over)
}

/// What an operation core gives back, in the cycle it ends in (expressions: name them with
/// `m.wire` where they are used).
pub(crate) struct OpOut {
    /// The result word.
    pub y: E,
    /// The result saturated at ±code_max (never set with a special operand).
    pub overflow: E,
    /// An operand is NaN (or, for a division, the divisor is zero): `y` is NaN.
    pub nan: E,
}

/// a·b, or a/b when `div` is given and set: exact code sum/difference, sign `Sa xor Sb`, then
/// saturate/flush; a NaN operand or a zero divisor gives NaN, a zero factor or dividend zero.
/// Staged: one candidate boundary, after the code sum.
pub(crate) fn mul_core(
    m: &mut Module,
    f: LnsFormat,
    p: &str,
    a: &E,
    b: &E,
    div: Option<&E>,
    staged: bool,
) -> OpOut {
    let n = |s: &str| format!("{p}{s}");
    let lw = f.log_width();
    let fa = fields(m, f, &n("a"), a);
    let fb = fields(m, f, &n("b"), b);
    // Exact code sum/difference in lw+1 bits, then saturate/flush.
    let la = fa.log.sext(lw + 1);
    let lb = fb.log.sext(lw + 1);
    let (code, nan, zero) = match div {
        Some(div) => (
            mux(div, &la.sub(&lb), &la.add(&lb)),
            fa.is_nan.or(&fb.is_nan).or(&div.and(&fb.is_zero)),
            fa.is_zero.or(&div.not().and(&fb.is_zero)),
        ),
        None => (
            la.add(&lb),
            fa.is_nan.or(&fb.is_nan),
            fa.is_zero.or(&fb.is_zero),
        ),
    };
    let code = m.wire(&n("code"), &code);
    let sign = m.wire(&n("sign"), &fa.sign.xor(&fb.sign));
    let nan = m.wire(&n("is_nan"), &nan);
    let zero = m.wire(&n("is_zero"), &zero);
    if staged {
        m.stage();
    }
    let (word, over) = saturate(m, f, p, &sign, &code);
    let y = mux(&nan, &nan_word(f), &mux(&zero, &zero_word(f), &word));
    OpOut {
        y,
        overflow: over.and(&nan.or(&zero).not()),
        nan,
    }
}

/// `lns-mul`: y = a·b, or a/b when `div` is set. One candidate stage boundary (after the
/// code sum).
///
/// Ports: `a`, `b` (words), `div`, `in_valid` → `y` (word), `overflow` (saturated at
/// ±code_max), `nan` (an operand is NaN or the divisor zero), `out_valid`; latency = stages.
pub(crate) fn mul(p: &Params) -> Result<Built, GenError> {
    let f = lns_format(p)?;
    let (mut m, valid) = start(p, MUL_STAGES)?;
    let w = f.width();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let div = m.input("div", 1);
    let out = mul_core(&mut m, f, "", &a, &b, Some(&div), true);
    m.output("y", &out.y);
    m.output("overflow", &out.overflow);
    m.output("nan", &out.nan);
    finish(m, &valid, vec![])
}

/// Candidate stage boundaries of `lns-mul` (after the code sum).
pub(crate) const MUL_STAGES: u32 = 1;

/// `lns-add`: y = a + b, or a − b when `sub` is set. Three candidate stage boundaries: after
/// the decode/compare, after the G-table ROM read (one stage registers the ROM output), after
/// the code sum.
///
/// Ports: `a`, `b` (words), `sub`, `in_valid` → `y` (word), `overflow` (saturated at
/// ±code_max), `nan` (an operand is NaN), `out_valid`; latency = stages (0..=3), one
/// operation per cycle. Manifest table "sb+db": `GTables::digest()`.
pub(crate) fn add(p: &Params) -> Result<Built, GenError> {
    let f = lns_format(p)?;
    let (mut m, valid) = start(p, ADD_CANDIDATES)?;
    let w = f.width();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let sub = m.input("sub", 1);
    let out = add_core(
        &mut m,
        f,
        "",
        &a,
        &b,
        Negate::When(&sub),
        AddStages::All,
        None,
    );
    m.output("y", &out.y);
    m.output("overflow", &out.overflow);
    m.output("nan", &out.nan);
    finish(m, &valid, table_digests(f))
}

/// The LNS designs of the lint grid: every unit at each stage count it supports, in
/// lns:I:F for I in 3..=7, F in 2..=10 (full), or in lns:5:6 and lns:3:2 plus lns:7:10 with
/// its 12k-entry tables for `lns-mul` and one `lns-add` (lean: Yosys needs about 15 s for
/// each lns:7:10 adder and 80 s for an lns:7:10 `lns-kahan`, which holds four).
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<String> = if full {
        (3..=7)
            .flat_map(|i| (2..=10).map(move |f| format!("lns:{i}:{f}")))
            .collect()
    } else {
        vec!["lns:5:6".into(), "lns:3:2".into()]
    };
    let units = [
        (Unit::LnsMul, 1),
        (Unit::LnsAdd, ADD_CANDIDATES),
        (Unit::LnsKahan, mac::KAHAN_MAX_STAGES),
    ];
    let mut g = vec![];
    for f in &formats {
        for &(u, max) in &units {
            for s in 0..=max {
                g.push(Params::new(u, f.parse().unwrap()).stages(s));
            }
        }
    }
    if !full {
        let f = "lns:7:10".parse().unwrap();
        g.push(Params::new(Unit::LnsMul, f).stages(0));
        g.push(Params::new(Unit::LnsMul, f).stages(1));
        g.push(Params::new(Unit::LnsAdd, f).stages(1));
    }
    g
}

/// The LNS PEs' designs of the lint grid (Kahan, then plain), lns:5:6: stages 0..=5 up to
/// 2×3 (the interleaved Kahan loops are stages 3..=5), 0 and 2 at 4×4, 2 above; lean, 1×1
/// at 0, 1, 2 and the deepest, 5.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let mut g = vec![];
    for pe in [PeKind::LnsKahan, PeKind::LnsPlain] {
        g.extend(crate::units::array::pe_designs(
            pe,
            "lns:5:6",
            full,
            |pes| match (pes, full) {
                (0..=6, true) => &[0, 1, 2, 3, 4, 5],
                (1, false) => &[0, 1, 2, 5],
                (7..=16, true) => &[0, 2],
                (_, true) => &[2],
                (_, false) => &[],
            },
        ));
    }
    g
}
