//! The `float` array PE (issue 32): exact products of two float words accumulated in an exact
//! fixed-point accumulator over the format's whole range, rounded once at read-out — the
//! golden exact accumulator (`lpgen_golden::float::ExactAcc`, sum mode `quire`), as the quire
//! is for posits.
//!
//! The accumulator is `ExactAcc::bits` = 2·(emax + 1 − emin + M) + 64 + 1 bits of two's
//! complement with LSB weight 2^(2·(emin − M)) (fp8:e4m3 101, fp8:e5m2 129, bf16 587). A
//! product of two finite words, sig_a·sig_b·2^(ea + eb − 2·bias − 2M) (biased exponents, 1
//! for subnormals), is an integer of 2·(M + 1) bits at accumulator bit ea + eb − 2, so it is
//! shifted there without loss, conditionally negated (one's complement plus carry-in) and
//! added by one carry-propagate adder. Three flags beside it: NaN (a NaN operand or 0·∞),
//! +∞ and −∞ (products of an infinity; formats with `:fn` have none). Read-out (golden
//! `ExactAcc::result`): NaN if the NaN flag or both infinity flags are set, else ±∞ (±max
//! with `:fn:sat`), else +0 for a zero sum, else |acc|'s leading one by a leading-zero
//! count, the top M + 3 bits and a sticky bit for the rest, rounded once by the float
//! units' rounder (`round_encode`: subnormals, `:ftz`, overflow).
//!
//! Candidate boundaries (2): between the product in accumulator position and the adder (the
//! product register, cut at array stages 2), and the rounder's own (never cut: the read-out
//! works on the accumulator register, one cycle after the step, like the posit quire's).
//!
//! With `--acc A` (a float format wide enough to hold every product of F exactly as a
//! normal number, [`check_acc`]) the PE accumulates in A instead, one rounding per add:
//! the exact product, normalised into A's fields, is added to the A-word accumulator by
//! float-add's datapath ([`super::add_decoded`]: compare, align, add, normalise, round to
//! nearest even), s = (clear ? +0 : s) + a·b; the read-out converts s to F, rounded once
//! (golden: s = A.fma(a, b, s) on the words widened to A, then `A.convert(F, s)`). The whole
//! float add is the one-cycle accumulation loop; the product register (stages 2) is the only
//! cut (7 candidate boundaries: the product's, the adder's 5, the read-out rounder's).

use lpgen_golden::float::ExactAcc;
use lpgen_golden::{FloatFormat, Format};

use super::super::posit::decode::{lzc, ubits};
use super::stochastic::step;
use super::{
    add_decoded, decode, float_format, inf_word, qnan, round_encode, round_encode_with, zero_word,
    Decoded,
};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, StagePlan, E};
use crate::units::pe::{ArrayPe, Sideband};
use crate::units::{GenError, Params, PeIo};
use crate::units::{PeKind, Unit};
use lpgen_golden::Rounding;

/// The float format of the PE, refusing `:nonan` (whose codes the float decoder does not
/// read: every code finite).
fn pe_format(f: Format) -> Result<FloatFormat, GenError> {
    let x = float_format(f, "the float PE")?;
    if x.no_nan {
        return Err(GenError(format!(
            "the float PE does not take {f}: :nonan words (every code finite) have no float decoder yet"
        )));
    }
    Ok(x)
}

/// Builds the PE's arithmetic: when `enable`, acc = (clear ? 0 : acc) + a·b exactly (the
/// flags restart on clear too); returns the accumulator register's read-out, rounded once:
/// to nearest, or with `state` (the stepped row state, in the cycle of the `last` step) by
/// the top R bits of that state.
fn exact_pe(m: &mut Module, f: FloatFormat, io: &PeIo, state: Option<(&E, u32)>) -> E {
    let qb = ExactAcc::bits(&f) as u32;
    m.comment("decode a and b; the product's sign, NaN (a NaN operand or 0*inf) and infinity");
    let da = decode(m, f, "a", &io.a);
    let db = decode(m, f, "b", &io.b);
    let neg = m.wire("product_neg", &da.sign.xor(&db.sign));
    let mut nan = da.nan.or(&db.nan);
    let inf = match (&da.inf, &db.inf) {
        (Some(ia), Some(ib)) => {
            nan = nan.or(&ia.and(&db.zero)).or(&ib.and(&da.zero));
            Some(ia.or(ib))
        }
        _ => None,
    };
    let nan = m.wire("product_nan", &nan);
    let inf = inf.map(|i| m.wire("product_inf", &i.and(&nan.not())));
    let mut void = nan.or(&da.zero).or(&db.zero);
    if let Some(i) = &inf {
        void = void.or(i);
    }
    let void = m.wire("product_void", &void);
    m.comment("the exact product of the significands, placed at accumulator bit ea + eb - 2");
    let ones = (1u64 << f.exp_bits) - 1;
    let pw = ubits(2 * ones);
    let pos = da.exp.zext(pw).add(&db.exp.zext(pw)).sub(&konst(pw, 2));
    let pos = m.wire("position", &pos);
    let prod = m.wire("product", &da.sig.mul_full(&db.sig));
    let placed = prod.zext(qb).shl(&pos);
    let mag = mux(&void, &konst(qb, 0), &placed);
    let addend = m.wire("addend", &mag.xor(&neg.sext(qb)));
    m.stage();
    m.comment("the accumulator: acc = (clear ? 0 : acc) + addend + neg (one adder, carry-in)");
    let keep = io.clear.not();
    let acc = m.state("acc", qb, Some(0));
    let base = acc.and(&keep.sext(qb));
    let sum = cat(&[base, konst(1, 1)]).add(&cat(&[addend, neg.clone()]));
    let acc_next = m.wire("acc_next", &sum.bits(qb, 1));
    m.drive(&acc, &acc_next, Some(&io.enable));
    let flag = |m: &mut Module, name: &str, set: &E| {
        let q = m.state(name, 1, Some(0));
        let next = m.wire(&format!("{name}_next"), &q.and(&keep).or(set));
        m.drive(&q, &next, Some(&io.enable));
        q
    };
    let acc_nan = flag(m, "acc_nan", &nan);
    let infs = inf.map(|i| {
        (
            flag(m, "acc_pos_inf", &i.and(&neg.not())),
            flag(m, "acc_neg_inf", &i.and(&neg)),
        )
    });
    m.comment("read-out (golden ExactAcc::result): |acc|, its leading one, round once");
    let acc_neg = acc.msb();
    let mag = m.wire("acc_mag", &mux(&acc_neg, &konst(qb, 0).sub(&acc), &acc));
    let (lz, zero) = lzc(m, "acc", &mag);
    let norm = m.wire(
        "acc_norm",
        &mag.shl(&lz.zext(ubits(u64::from(qb)).max(lz.width))),
    );
    // Stochastic: the top M + 1 + R bits exact (the sticky bit below them).
    let keep_bits = f.frac_bits + 1 + state.map_or(2, |(_, r)| r.max(2));
    let top = norm.bits(qb - 1, qb - keep_bits);
    let sticky = norm.bits(qb - keep_bits - 1, 0).any();
    let rounded_in = m.wire("acc_top", &cat(&[top, sticky]));
    // The leading one at bit qb − 1 − lz weighs 2^(qb − 1 − lz + 2·(emin − M)): its biased
    // exponent is qb + 1 − bias − 2M − lz.
    let hi = i64::from(qb) + 1 - f.bias() - 2 * i64::from(f.frac_bits);
    let bw = signed_bits(hi - i64::from(qb), hi).max(lz.width + 1);
    let be = m.wire("acc_exp", &signed_konst(bw, hi).sub(&lz.zext(bw)));
    let random = state.map(|(s, r)| {
        m.comment("stochastic read-out: the state of the last step, one cycle on with acc");
        let s = m.now(s);
        let q = m.register("sr_readout_state", &s, None);
        m.wire("sr_random", &q.bits(31, 32 - r))
    });
    let word = round_encode_with(m, f, &acc_neg, &be, &rounded_in, random.as_ref());
    m.comment("specials: a zero sum is +0; infinities; NaN");
    let word = mux(&zero, &zero_word(f, &konst(1, 0)), &word);
    let (word, is_nan) = match infs {
        Some((pinf, ninf)) => (
            mux(&pinf.or(&ninf), &inf_word(f, &ninf), &word),
            m.wire("acc_is_nan", &acc_nan.or(&pinf.and(&ninf))),
        ),
        None => (word, acc_nan),
    };
    m.wire("acc_word", &mux(&is_nan, &qnan(f), &word))
}

/// `--acc A` for the float PE on F words: refused in one line unless A is a float format
/// with infinities (not `:fn` or `:nonan`) that holds every product of two F words exactly
/// as a normal number (2·(M_F + 1) ≤ M_A + 1, 2·(emin_F − M_F) ≥ emin_A, 2·emax_F + 1 ≤
/// emax_A), so that each add rounds once: fp8:e4m3 and fp8:e5m2 into bf16 or float:8:23.
pub(crate) fn check_acc(f: FloatFormat, acc: Format) -> Result<FloatFormat, GenError> {
    let a = float_format(acc, "--acc")?;
    let why = if a.finite || a.no_nan {
        Some("an accumulator format needs infinities (no :fn or :nonan)".to_string())
    } else if 2 * (f.frac_bits + 1) > a.frac_bits + 1 {
        Some(format!(
            "its {} significand bits do not hold a product's {}",
            a.frac_bits + 1,
            2 * (f.frac_bits + 1)
        ))
    } else if 2 * (f.emin() - i64::from(f.frac_bits)) < a.emin() || 2 * f.emax() + 1 > a.emax() {
        Some(format!(
            "its exponents {}..={} do not hold the products' {}..={} as normal numbers",
            a.emin(),
            a.emax(),
            2 * (f.emin() - i64::from(f.frac_bits)),
            2 * f.emax() + 1
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(GenError(format!(
            "--acc {acc} cannot accumulate products of {} exactly rounded once per add: {why} (e.g. --acc bf16 for fp8 formats)",
            Format::Float(f)
        ))),
        None => Ok(a),
    }
}

/// The PE with `--acc`: s = (clear ? +0 : s) + a·b in `acc`, rounded once per add, read out
/// converted to `f`.
fn wide_pe(m: &mut Module, f: FloatFormat, acc_f: FloatFormat, io: &PeIo) -> E {
    m.comment("decode a and b; the product's sign, NaN (a NaN operand or 0*inf) and infinity");
    let da = decode(m, f, "a", &io.a);
    let db = decode(m, f, "b", &io.b);
    let neg = m.wire("product_neg", &da.sign.xor(&db.sign));
    let mut nan = da.nan.or(&db.nan);
    let inf = match (&da.inf, &db.inf) {
        (Some(ia), Some(ib)) => {
            nan = nan.or(&ia.and(&db.zero)).or(&ib.and(&da.zero));
            ia.or(ib)
        }
        _ => konst(1, 0),
    };
    let nan = m.wire("product_nan", &nan);
    let inf = m.wire("product_inf", &inf.and(&nan.not()));
    let zero = m.wire("product_zero", &da.zero.or(&db.zero));
    m.comment("the exact product, normalised into the accumulator format's fields");
    let prod = m.wire("product", &da.sig.mul_full(&db.sig));
    let (lz, _) = lzc(m, "product", &prod);
    let sw = acc_f.frac_bits + 1;
    let norm = prod.shl(&lz);
    let sig = if sw > prod.width {
        cat(&[norm, konst(sw - prod.width, 0)])
    } else {
        norm
    };
    // The leading one at bit 2M_F + 1 − lz weighs 2^(ea + eb + 1 − lz − 2·bias_F): as A's
    // biased exponent, that plus bias_A (in 1..=2^E_A − 2 for every nonzero product).
    let k = 1 - 2 * f.bias() + acc_f.bias();
    let emax_sum = 2 * ((1i64 << f.exp_bits) - 1);
    let bw = signed_bits(2 + k - 2 * i64::from(f.frac_bits) - 1, emax_sum + k)
        .max(lz.width + 1)
        .max(acc_f.exp_bits + 1);
    let exp = da
        .exp
        .zext(bw)
        .add(&db.exp.zext(bw))
        .add(&signed_konst(bw, k))
        .sub(&lz.zext(bw));
    let exp = m.wire(
        "product_exp",
        &mux(&zero, &konst(acc_f.exp_bits, 1), &exp.low(acc_f.exp_bits)),
    );
    let sig = m.wire("product_sig", &mux(&zero, &konst(sw, 0), &sig));
    m.stage();
    m.comment(
        "the accumulator: s = (clear ? +0 : s) + product, rounded once (float-add's datapath)",
    );
    let aw = acc_f.width();
    let s = m.state("acc", aw, Some(0));
    let base = m.wire("acc_base", &mux(&io.clear, &konst(aw, 0), &s));
    let ds = decode(m, acc_f, "acc", &base);
    let dp = Decoded {
        sign: neg,
        nan,
        inf: Some(inf),
        zero,
        exp,
        sig,
    };
    let next = add_decoded(m, acc_f, &ds, &dp, &konst(1, 0), None);
    let next = m.wire("acc_next", &next);
    m.drive(&s, &next, Some(&io.enable));
    m.comment("read-out: the accumulator converted to the array's format, rounded once");
    let dr = decode(m, acc_f, "readout", &s);
    let (lz, _) = lzc(m, "readout", &dr.sig);
    let norm = m.wire("readout_norm", &dr.sig.shl(&lz));
    let bw = signed_bits(
        1 - i64::from(sw) - acc_f.bias() + f.bias(),
        (1i64 << acc_f.exp_bits) - acc_f.bias() + f.bias(),
    )
    .max(lz.width + 1)
    .max(acc_f.exp_bits + 2);
    let be = dr
        .exp
        .zext(bw)
        .add(&signed_konst(bw, f.bias() - acc_f.bias()))
        .sub(&lz.zext(bw));
    let be = m.wire("readout_exp", &be);
    let word = round_encode(m, f, &dr.sign, &be, &norm);
    m.comment("specials: zeros keep their sign; infinity; NaN");
    let word = mux(&dr.zero, &zero_word(f, &dr.sign), &word);
    let infinite = if !f.finite {
        inf_word(f, &dr.sign)
    } else if f.sat {
        let max = u128::from(f.max_finite(false));
        cat(&[
            dr.sign.clone(),
            crate::ir::named("FLOAT_MAX", f.width() - 1, max),
        ])
    } else {
        qnan(f)
    };
    let word = mux(
        dr.inf
            .as_ref()
            .expect("the accumulator format has infinities"),
        &infinite,
        &word,
    );
    m.wire("readout_word", &mux(&dr.nan, &qnan(f), &word))
}

/// The `float` array PE: the input register, then the product register; one accumulation.
pub(crate) struct FloatPe;

pub(crate) static FLOAT_PE: FloatPe = FloatPe;

impl ArrayPe for FloatPe {
    fn max_stages(&self) -> u32 {
        2
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        true
    }
    /// The product boundary cut at stages 2; the others never: 2 boundaries (the product's,
    /// the read-out rounder's), 7 with `--acc` (and float-add's 5).
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let cuts: &[usize] = if p.stages >= 2 { &[0] } else { &[] };
        let boundaries = if p.acc.is_some() {
            2 + super::ADD_STAGES
        } else {
            2
        };
        (boundaries, StagePlan::at(cuts))
    }
    /// With `stochastic:R`: `sr_row_state`, one 32-bit state a row, presented with the
    /// `last` step and skewed down the rows; each PE steps it once (xorshift32), rounds with
    /// the stepped state and passes that on, so PE (r, c) rounds with the state after c + 1
    /// steps (the golden stream's position row state + c).
    fn sideband(&self, p: &Params) -> Option<Sideband> {
        match p.rounding {
            Rounding::Stochastic(_) => Some(Sideband {
                port: "sr_row_state",
                bits: 32,
                per_row: true,
                pass: Some(|m, s| step(m, "sr_", s)),
                pe_bits: |_| 32,
                prepare: |_, s, _| s.clone(),
            }),
            Rounding::Nearest => None,
        }
    }
    fn rounds_stochastically(&self, p: &Params) -> bool {
        p.acc.is_none()
    }
    fn build(
        &self,
        pe: &mut Module,
        p: &Params,
        io: &PeIo,
        side: Option<&E>,
    ) -> Result<E, GenError> {
        let f = pe_format(p.format)?;
        let state = match (p.rounding, side) {
            (Rounding::Stochastic(r), Some(s)) => Some((s, r)),
            (Rounding::Stochastic(_), None) => {
                return Err(GenError(
                    "the stochastic float PE needs its row state (generator bug)".into(),
                ))
            }
            (Rounding::Nearest, _) => None,
        };
        Ok(match p.acc {
            Some(acc) => wide_pe(pe, f, check_acc(f, acc)?, io),
            None => exact_pe(pe, f, io, state),
        })
    }
}

/// The float PE's designs of the lint grid: fp8:e4m3 at 0..=2 up to 2×3 (lean 1×1), 0 and 2
/// at 4×4, 2 above; bf16 1×1 only (0..=2: its PE holds a 587-bit accumulator); with `--acc`,
/// fp8:e4m3 into bf16 and fp8:e5m2 into float:8:23, 1×1 at 0..=2 (and 2×3 in the full
/// grid); with `--rounding stochastic:R`, fp8:e4m3 2×2 at 1 (lean), else fp8:e4m3 2×3 and
/// bf16 1×1 at 0..=2 and fp8:e5m2 4×4 at 2.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let mut g =
        crate::units::array::pe_designs(PeKind::Float, "fp8:e4m3", full, |pes| match (pes, full) {
            (1, _) | (2..=6, true) => &[0, 1, 2],
            (7..=16, true) => &[0, 2],
            (_, true) => &[2],
            (_, false) => &[],
        });
    g.extend(crate::units::array::pe_designs(
        PeKind::Float,
        "bf16",
        full,
        |pes| {
            if pes == 1 {
                &[0, 1, 2]
            } else {
                &[]
            }
        },
    ));
    // Accumulating in a wider float (`--acc`).
    for (fmt, acc, shape) in [
        ("fp8:e4m3", "bf16", (1, 1)),
        ("fp8:e5m2", "float:8:23", (1, 1)),
        ("fp8:e4m3", "bf16", (2, 3)),
    ] {
        if !full && shape != (1, 1) {
            continue;
        }
        for s in 0..=2 {
            let mut p = Params::new(Unit::Array, fmt.parse().unwrap()).stages(s);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            p.acc = Some(acc.parse().unwrap());
            g.push(p);
        }
    }
    // The stochastic read-out: the lean design is the 2×2 one; the full grid has the others.
    for (fmt, r, shape, stages) in [
        ("fp8:e4m3", 4, (2, 2), &[1][..]),
        ("fp8:e4m3", 4, (2, 3), &[0, 1, 2][..]),
        ("bf16", 8, (1, 1), &[0, 1, 2][..]),
        ("fp8:e5m2", 12, (4, 4), &[2][..]),
    ] {
        if full == (shape == (2, 2)) {
            continue;
        }
        for &s in stages {
            let mut p = Params::new(Unit::Array, fmt.parse().unwrap())
                .stages(s)
                .rounding(lpgen_golden::Rounding::Stochastic(r), 3);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            g.push(p);
        }
    }
    g
}
