//! The LNS adder: [`add_core`], the datapath of `Lns::add_split` (decode and compare, the
//! G-table lookup, the code sum, saturate), and [`add_module`], the same datapath as a module
//! of its own that the MAC and the ALU lane instantiate (one `lpgen_lns_add_...` definition
//! per variant, shared by every instance of a design, as PACoGen's sub-units are).

use std::rc::Rc;

use lpgen_golden::{Format, GTables, LnsFormat};

use super::{fields, nan_word, saturate, zero_word, OpOut};
use crate::ir::{cat, konst, mux, signed_bits, Module, StagePlan, SubModule, E};
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
    let entry = m
        .instance(&def, &format!("{p}g_lookup"), &[("addr", &addr)])
        .port("g");
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
    m.define_ok(&name, StagePlan::none(), |r| {
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
    })
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

    m.comment("decode a and b; compare: the larger code leads, d = |ca - cb|");
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

    m.comment("G-table lookup: g = sb[d] (same signs) or db[d] (opposite signs)");
    let g = g_lookup(m, f, p, &sb, &db, &opp, &d, cw);
    let g = m.wire(&n("g"), &g);
    if stages != AddStages::Comb {
        m.stage();
    }

    m.comment("code sum: c_big + g");
    let code = m.wire(&n("code"), &big.sext(cw).add(&g));
    if stages == AddStages::All {
        m.stage();
    }

    m.comment("saturate at the largest code, flush below the smallest; NaN, pass, cancel");
    let (word, over) = saturate(m, f, p, &sign, &code);
    let y = mux(
        &nan,
        &nan_word(f),
        &mux(&pass, &pass_word, &mux(&cancel, &zero_word(f), &word)),
    );
    OpOut {
        y,
        overflow: over.and(&nan.or(&pass).or(&cancel).not()),
        nan,
    }
}

/// Boundaries [`add_core`] marks with `stages`.
fn marked(stages: AddStages) -> usize {
    match stages {
        AddStages::Comb => 0,
        AddStages::Rom => 1,
        AddStages::DecodeAndRom => 2,
        AddStages::All => 3,
    }
}

/// [`add_core`] as an instance `NAME` of the module `lpgen_lns_add_<format>[_sub|_neg]
/// [_absent][_r<cuts>]`: `_sub` with a `sub` input ([`Negate::When`]), `_neg` for a − b,
/// `_absent` with a `b_absent` input, `_r` followed by one digit per boundary `stages` marks
/// (1: the caller's plan cuts it, and the register sits inside the module). The caller's
/// boundaries are marked here, so its cycle moves on with the instance's registers.
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_module(
    m: &mut Module,
    f: LnsFormat,
    name: &str,
    a: &E,
    b: &E,
    neg: Negate,
    stages: AddStages,
    b_absent: Option<&E>,
) -> OpOut {
    let cuts = m.next_cuts(marked(stages));
    let registered = cuts.iter().any(|&c| c);
    let variant = format!(
        "{}{}{}",
        match neg {
            Negate::No => "",
            Negate::Yes => "_neg",
            Negate::When(_) => "_sub",
        },
        if b_absent.is_some() { "_absent" } else { "" },
        if cuts.is_empty() {
            String::new()
        } else {
            let digits: String = cuts.iter().map(|&c| if c { '1' } else { '0' }).collect();
            format!("_r{digits}")
        }
    );
    let def_name = format!(
        "lpgen_lns_add_{}{variant}",
        Format::Lns(f).to_string().replace(':', "_")
    );
    let cut_at: Vec<usize> = (0..cuts.len()).filter(|&i| cuts[i]).collect();
    let plan = StagePlan::at(&cut_at);
    let negated = matches!(neg, Negate::Yes);
    let def = m.define_ok(&def_name, plan, |r| {
        r.header.push(format!(
            "{f}: y = a {} b, exactly as golden Lns::add_split (docs/formats.md); \
             overflow: saturated at the largest code; nan: an operand is NaN.",
            if negated { "-" } else { "+" },
        ));
        if registered {
            r.input("clk", 1);
        }
        let a = r.input("a", f.width());
        let b = r.input("b", f.width());
        let sub = matches!(neg, Negate::When(_)).then(|| r.input("sub", 1));
        let absent = b_absent.map(|_| r.input("b_absent", 1));
        let neg = match (&neg, &sub) {
            (Negate::No, _) => Negate::No,
            (Negate::Yes, _) => Negate::Yes,
            (Negate::When(_), Some(sub)) => Negate::When(sub),
            (Negate::When(_), None) => unreachable!("a sub input for Negate::When"),
        };
        let out = add_core(r, f, "", &a, &b, neg, stages, absent.as_ref());
        r.output("y", &out.y);
        r.output("overflow", &out.overflow);
        r.output("nan", &out.nan);
    });
    let mut inputs: Vec<(&str, &E)> = vec![("a", a), ("b", b)];
    if let Negate::When(s) = &neg {
        inputs.push(("sub", s));
    }
    if let Some(absent) = b_absent {
        inputs.push(("b_absent", absent));
    }
    let out = m.instance(&def, name, &inputs);
    for _ in 0..cuts.len() {
        m.stage();
    }
    OpOut {
        y: out.port("y"),
        overflow: out.port("overflow"),
        nan: out.port("nan"),
    }
}
