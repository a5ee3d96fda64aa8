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

use lpgen_golden::float::ExactAcc;
use lpgen_golden::{FloatFormat, Format};

use super::super::posit::decode::{lzc, ubits};
use super::{decode, float_format, inf_word, qnan, round_encode, zero_word};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, StagePlan, E};
use crate::units::pe::{ArrayPe, Sideband};
use crate::units::{GenError, Params, PeIo};

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
/// flags restart on clear too); returns the accumulator register's read-out, rounded once.
fn exact_pe(m: &mut Module, f: FloatFormat, io: &PeIo) -> E {
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
    let keep_bits = f.frac_bits + 3;
    let top = norm.bits(qb - 1, qb - keep_bits);
    let sticky = norm.bits(qb - keep_bits - 1, 0).any();
    let rounded_in = m.wire("acc_top", &cat(&[top, sticky]));
    // The leading one at bit qb − 1 − lz weighs 2^(qb − 1 − lz + 2·(emin − M)): its biased
    // exponent is qb + 1 − bias − 2M − lz.
    let hi = i64::from(qb) + 1 - f.bias() - 2 * i64::from(f.frac_bits);
    let bw = signed_bits(hi - i64::from(qb), hi).max(lz.width + 1);
    let be = m.wire("acc_exp", &signed_konst(bw, hi).sub(&lz.zext(bw)));
    let word = round_encode(m, f, &acc_neg, &be, &rounded_in);
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

/// The `float` array PE: the input register, then the product register; one accumulation.
pub(crate) struct FloatPe;

pub(crate) static FLOAT_PE: FloatPe = FloatPe;

impl ArrayPe for FloatPe {
    fn max_stages(&self) -> u32 {
        2
    }
    fn loop_registers(&self, _: u32) -> u32 {
        0
    }
    fn readout_registers(&self, _: u32) -> u32 {
        0
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        true
    }
    /// The product boundary cut at stages 2; the rounder's never.
    fn plan(&self, stages: u32) -> (u32, StagePlan) {
        let cuts: &[usize] = if stages >= 2 { &[0] } else { &[] };
        (2, StagePlan::at(cuts))
    }
    fn flags(&self) -> &'static [&'static str] {
        &[]
    }
    fn sideband(&self) -> Option<Sideband> {
        None
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        let f = pe_format(p.format)?;
        Ok(exact_pe(pe, f, io))
    }
}
