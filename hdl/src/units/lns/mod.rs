//! LNS units: multiply/divide (`lns-mul`), add/subtract with the G tables as ROMs
//! (`lns-add`), and the multiply-accumulate of one PE (`lns-kahan`, and the `lns-kahan` /
//! `lns-plain` array PEs, in [`mac`]). Word layout and rules: docs/formats.md, "`lns:I:F`".
//!
//! The operations are built by cores ([`mul_core`], [`add_core`]) that the units and the MAC
//! share; a core given `staged = true` marks its candidate stage boundaries with
//! `m.stage()`, otherwise it is one combinational block in the current cycle.

mod lane;
mod mac;

pub(crate) use mac::{kahan, KAHAN_MAX_STAGES, KAHAN_PE, PLAIN_PE};

use lpgen_golden::{Format, GTables, LnsFormat};

use super::{finish, start, Built, GenError, Params, Unit};
use std::rc::Rc;

use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, StagePlan, SubModule, E};

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
    let max = signed_konst(cw, f.code_max() as i64);
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
    let log = mux(&over, &max.low(lw), &code.low(lw));
    let zero = konst(lw + 1, f.zero() as u128);
    let word = mux(&under, &zero, &cat(&[sign.clone(), log]));
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
    let w = f.width();
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
    let y = mux(
        &nan,
        &konst(w, f.nan() as u128),
        &mux(&zero, &konst(w, f.zero() as u128), &word),
    );
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

/// Whether [`add_core`] negates b.
pub(crate) enum Negate<'a> {
    No,
    Yes,
    /// When the 1-bit signal is set (the `sub` input of `lns-add`).
    When(&'a E),
}

/// Candidate stage boundaries of [`add_core`] when staged.
pub(crate) const ADD_CANDIDATES: u32 = 3;

/// Which stage boundaries [`add_core`] marks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddStages {
    /// None: one combinational block in the current cycle.
    Comb,
    /// All three candidates (after decode/compare, after the ROM read, after the code sum).
    All,
    /// Only the one after the ROM read: with it registered, Yosys maps the ROM to block RAM.
    Rom,
    /// The first two (after decode/compare, after the ROM read).
    DecodeAndRom,
}

/// The G tables as one ROM addressed by {opposite, d}: sb in the lower half, db in the upper,
/// each padded with zeros to a power of two (2^aw entries, aw the bits the longer table
/// needs), entries sign-extended to `cw` bits; a distance at or beyond 2^aw reads 0 (its high
/// bits are tested). One lookup instead of two and a select: fewer LUTs, and a faster
/// Verilator model (docs/perf.md). The ROM is a module of its own, one per format
/// ([`g_rom_module`]), instantiated by every adder.
#[allow(clippy::too_many_arguments)]
fn g_lookup(
    m: &mut Module,
    f: LnsFormat,
    p: &str,
    sb: &[i64],
    db: &[i64],
    opp: &E,
    d: &E,
    cw: u32,
) -> E {
    let len = sb.len().max(db.len()) as u128;
    assert!(
        len >= 1 && len < 1u128 << d.width,
        "table fits the distance"
    );
    let aw = (128 - (len - 1).leading_zeros()).max(1);
    let addr = cat(&[
        opp.clone(),
        if aw < d.width { d.low(aw) } else { d.clone() },
    ]);
    let def = g_rom_module(m, f, sb, db, aw);
    let rom = m
        .instance(&def, &format!("{p}g_lookup"), &[("addr", &addr)])
        .port("g");
    let entry = m.wire(&format!("{p}g_entry"), &rom);
    if aw < d.width {
        let in_range = m.wire(&format!("{p}g_in_range"), &d.high(d.width - aw).eq_k(0));
        mux(&in_range, &entry.sext(cw), &konst(cw, 0))
    } else {
        entry.sext(cw)
    }
}

/// The module `lpgen_lns_g_rom_<format>`: input `addr` ({opposite, d}, 1 + aw bits), output
/// `g` (the entry, minimal-width two's complement), combinational. Defined once per format
/// and shared by every adder of the design; contents from `GTables` (the golden library).
fn g_rom_module(m: &Module, f: LnsFormat, sb: &[i64], db: &[i64], aw: u32) -> Rc<SubModule> {
    let gw = sb
        .iter()
        .chain(db)
        .map(|&v| signed_bits(v, v))
        .max()
        .unwrap();
    let mask = (1u128 << gw) - 1;
    let half = |t: &[i64]| -> Vec<u128> {
        (0..1usize << aw)
            .map(|i| t.get(i).map_or(0, |&v| (v as i128 as u128) & mask))
            .collect()
    };
    let name = format!(
        "lpgen_lns_g_rom_{}",
        Format::Lns(f).to_string().replace(':', "_")
    );
    let built = m.define::<std::convert::Infallible>(&name, StagePlan::none(), |r| {
        let t = GTables::get(f.int_bits, f.frac_bits);
        r.header.push(format!(
            "G tables of {}: sb at addresses 0.., db from {} (address {{opposite, d}}); {}.",
            Format::Lns(f),
            1u32 << aw,
            t.digest()
        ));
        let addr = r.input("addr", aw + 1);
        let contents = [half(sb), half(db)].concat();
        let q = r.rom("g_rom", gw, contents, &addr);
        r.output("g", &q);
        Ok(())
    });
    match built {
        Ok(def) => def,
        Err(never) => match never {},
    }
}

/// The G tables of `f` as ROM contents: (sb, db) with `db[0]` (never read: x − x is zero) as 0.
fn g_tables(f: LnsFormat) -> (Vec<i64>, Vec<i64>) {
    let t = GTables::get(f.int_bits, f.frac_bits);
    let sb = t.sb.iter().map(|&v| v as i64).collect();
    let db =
        t.db.iter()
            .enumerate()
            .map(|(d, &v)| if d == 0 { 0 } else { v as i64 })
            .collect();
    (sb, db)
}

/// a + b, or a − b (see [`Negate`]), exactly as `Lns::add_split`: the larger code leads (its
/// sign is the result's), d = |ca − cb|; same signs: `c_big + sb[d]`; opposite signs: d = 0
/// gives zero, else `c_big + db[d]`; then saturate/flush. A NaN operand gives NaN; a zero
/// operand gives the other (b with its sign after negation).
///
/// `stages` says which of the boundaries (after the decode/compare, after the ROM read, after
/// the code sum) are marked. With `b_absent` set, b counts as zero whatever it holds (the
/// result is a; an interleaved Kahan loop uses it to carry a slot round unchanged).
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_core(
    m: &mut Module,
    f: LnsFormat,
    p: &str,
    a: &E,
    b: &E,
    neg: Negate,
    stages: AddStages,
    b_absent: Option<&E>,
) -> OpOut {
    let n = |s: &str| format!("{p}{s}");
    let w = f.width();
    let lw = f.log_width();
    let (sb, db) = g_tables(f);
    // Code arithmetic width: holds c_big + g for every code and table entry.
    let gw = sb
        .iter()
        .chain(&db)
        .map(|&v| signed_bits(v, v))
        .max()
        .unwrap();
    let cw = lw.max(gw) + 1;

    // Decode and compare.
    let fa = fields(m, f, &n("a"), a);
    let mut fb = fields(m, f, &n("b"), b);
    let mut a_zero_passes_b = fa.is_zero.clone();
    if let Some(absent) = b_absent {
        fb.is_zero = m.wire(&n("b_is_zero_or_absent"), &fb.is_zero.or(absent));
        fb.is_nan = m.wire(&n("b_is_nan_present"), &fb.is_nan.and(&absent.not()));
        a_zero_passes_b = m.wire(&n("a_zero_passes_b"), &fa.is_zero.and(&absent.not()));
    }
    // b's sign after the negation (zero and NaN keep theirs).
    let sign_b = match neg {
        Negate::No => fb.sign.clone(),
        Negate::Yes => m.wire(&n("b_sign_neg"), &fb.sign.xor(&fb.reserved.not())),
        Negate::When(s) => m.wire(&n("b_sign_neg"), &fb.sign.xor(&s.and(&fb.reserved.not()))),
    };
    let diff = m.wire(&n("diff"), &fa.log.sext(lw + 1).sub(&fb.log.sext(lw + 1)));
    let a_leads = m.wire(&n("a_leads"), &diff.msb().not());
    let big = m.wire(&n("big"), &mux(&a_leads, &fa.log, &fb.log));
    let sign = m.wire(&n("sign"), &mux(&a_leads, &fa.sign, &sign_b));
    // |ca − cb| < 2^lw, so the difference modulo 2^lw is exact: diff, or −diff as
    // ~diff + 1 (one carry chain instead of a second subtractor and a select).
    let b_leads = diff.msb();
    let d = m.wire(
        &n("d"),
        &diff.low(lw).xor(&b_leads.sext(lw)).add(&b_leads.zext(lw)),
    );
    let opp = m.wire(&n("opposite"), &fa.sign.xor(&sign_b));
    let nan = m.wire(&n("is_nan"), &fa.is_nan.or(&fb.is_nan));
    // A zero operand passes the other one through; x − x is zero.
    let pass = m.wire(&n("pass"), &fa.is_zero.or(&fb.is_zero));
    let b_neg = cat(&[sign_b.clone(), fb.log.clone()]);
    let pass_word = m.wire(&n("pass_word"), &mux(&a_zero_passes_b, &b_neg, a));
    let cancel = m.wire(&n("cancel"), &opp.and(&d.eq_k(0)));
    if matches!(stages, AddStages::All | AddStages::DecodeAndRom) {
        m.stage();
    }

    // G-table lookup.
    let g = g_lookup(m, f, p, &sb, &db, &opp, &d, cw);
    let g = m.wire(&n("g"), &g);
    if stages != AddStages::Comb {
        m.stage();
    }

    let code = m.wire(&n("code"), &big.sext(cw).add(&g));
    if stages == AddStages::All {
        m.stage();
    }

    let (word, over) = saturate(m, f, p, &sign, &code);
    let y = mux(
        &nan,
        &konst(w, f.nan() as u128),
        &mux(
            &pass,
            &pass_word,
            &mux(&cancel, &konst(w, f.zero() as u128), &word),
        ),
    );
    OpOut {
        y,
        overflow: over.and(&nan.or(&pass).or(&cancel).not()),
        nan,
    }
}

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
