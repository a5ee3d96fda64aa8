//! The fused posit MAC into a quire (`posit-mac`) and the array PE built from the same code
//! (`quire_pe`), for posits and, as `takum-quire`, for takums (`QuirePe` over
//! [`TaperedHw`]). Rules: docs/formats.md, "Quire"; golden `tapered::Quire::fma` and
//! `Quire::to_word`.
//!
//! The quire is a `quire_bits()`-bit two's-complement register with LSB weight
//! 2^−quire_frac_bits, beside a NaR flag. A product a·b = sig_a·sig_b·2^(ea+eb−2·FW) is exact
//! (2·(FW+1) bits) and is a multiple of 2^−quire_frac_bits, so it is shifted into quire
//! position without loss, conditionally negated (one's complement plus carry-in) and added
//! with a full-width carry-propagate adder; the sum wraps modulo 2^quire_bits like the golden
//! quire. A NaR operand sets the flag (and adds nothing); only a clear resets it. Read-out:
//! NaR if the flag is set or the bits are 10…0; otherwise the magnitude's leading one is found
//! by a leading-zero count over the quire width, the quire is normalised and rounded once by
//! the shared encoder, the bits below the kept ones folding into the sticky bit.
//!
//! `posit-mac` ports: `a`, `b` (N-bit words), `op` (0: q += a·b, 1: q −= a·b, 2: q = a·b
//! (clear, then accumulate), 3: q = 0, NaR flag cleared), `in_valid`; `y` (the quire after
//! this op, rounded once), `nar` (y is NaR), `out_valid`.
//!
//! Candidate stage boundaries (8), in order: after decode, after the multiply, after the
//! shift into quire position, after the quire (the read-out then works on the quire register
//! itself instead of its next value), after the negation to a magnitude (a full-width carry
//! chain of its own), after the leading-zero count, after the normalising shift, and inside
//! the encoder. Timing: an op presented with `in_valid` in cycle t reaches
//! the quire adder in cycle t + c (c = cuts among the first three boundaries) and updates the
//! register at the end of that cycle; `y`/`nar`/`out_valid` for it appear in cycle
//! t + stages (latency = stages, as for `fix-mac`). Ops issue back to back, one per cycle:
//! the only loop-carried path is the single-cycle quire add (q → adder → q), which no stage
//! setting pipelines. With stages = 0 the whole MAC and read-out is one combinational step
//! and `y` is the rounded next quire value. The array PE at stages >= 3
//! ([`QuirePe`]) cuts the same boundaries around its quire. Not built: a
//! carry-save quire (or a segmented adder, carries resolved at read-out) would shorten the
//! loop itself for wide quires.

use std::marker::PhantomData;

use lpgen_golden::{Format, PositFormat};

use super::decode::{decode, lzc, max_scale, ubits};
use super::encode::encode;
use super::{finish, nar_word, posit_format, start, Built, GenError, Params, TaperedHw};
use crate::ir::StagePlan;
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};
use crate::units::pe::ArrayPe;
use crate::units::PeIo;

/// Candidate stage boundaries of `posit-mac`.
pub(crate) const CANDIDATES: u32 = 8;

/// What drives one MAC step.
struct Ctl {
    a: E,
    b: E,
    /// The step happens (the quire and flag load).
    enable: E,
    /// Start from a zero quire and a clear NaR flag.
    clear: E,
    /// Subtract the product instead of adding it.
    sub: E,
    /// Add nothing (clear only).
    kill: E,
}

/// Which candidate boundaries [`mac_core`] marks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Marks {
    /// All eight (`posit-mac`).
    Unit,
    /// One, between the product in quire position and the quire adder (the array PE at
    /// stages <= 2); the read-out works on the quire register.
    Product,
    /// All but the one after the quire (the array PE at stages >= 3: [`PE_CANDIDATES`]);
    /// the read-out works on the quire register.
    Pe,
}

/// Candidate boundaries of the pipelined array PE ([`QuirePe`]), in the order
/// they are marked: after decode, after the multiply, after the shift into quire position
/// (the product register), after the negation to a magnitude, after the leading-zero
/// count, after the normalising shift, inside the encoder.
pub(crate) const PE_CANDIDATES: u32 = 7;

/// Which of [`PE_CANDIDATES`] the array PE cuts at array stages 2 + `extra`: the product
/// register always, then the first `extra` of: after the negation, after the multiply,
/// after the leading-zero count, after decode, after the normalising shift, inside the
/// encoder. The read-out (quire register to result register, one cycle before) was the
/// critical path of the stages-2 array (ECP5, docs/fpga.md), the front next.
pub(crate) fn pe_cuts(extra: u32) -> Vec<usize> {
    const PRODUCT: usize = 2;
    const ORDER: [usize; 6] = [3, 1, 4, 0, 5, 6];
    assert!(extra as usize <= ORDER.len(), "{extra} extra PE registers");
    let mut cuts = vec![PRODUCT];
    cuts.extend(&ORDER[..extra as usize]);
    cuts.sort_unstable();
    cuts
}

/// Builds the MAC into `m` with names prefixed by `px`; returns (read-out word, NaR). Any
/// family on the posit datapath: its quire's size is the golden `Tapered::quire_bits` and
/// `quire_frac_bits`.
fn mac_core<F: TaperedHw>(m: &mut Module, f: F, px: &str, c: &Ctl, marks: Marks) -> (E, E) {
    let nm = |s: &str| format!("{px}{s}");
    // Every candidate boundary but the quire's (which only the unit marks) is marked.
    let pipelined = marks != Marks::Product;
    let stage = |m: &mut Module| {
        if pipelined {
            m.stage();
        }
    };
    let n = f.n();
    let qb = f.quire_bits();
    let fb = f.quire_frac_bits() as i64;
    let ms = max_scale(f);
    m.comment("decode a and b; the product's sign, zero and NaR");
    let da = decode(m, f, &nm("a"), &c.a);
    let db = decode(m, f, &nm("b"), &c.b);
    let any_nar = da.nar.or(&db.nar);
    let nar_in = m.wire(&nm("nar_in"), &any_nar.and(&c.kill.not()));
    let pz = m.wire(
        &nm("product_zero"),
        &da.zero.or(&db.zero).or(&any_nar).or(&c.kill),
    );
    let neg = m.wire(
        &nm("product_neg"),
        &da.sign.xor(&db.sign).xor(&c.sub).and(&pz.not()),
    );
    m.comment("exact product of the significands, placed at its position in the quire");
    // The product's LSB has weight 2^(ea+eb−2·FW); in quire LSBs that is
    // ea + eb + QF − 2·FW (QF = quire_frac_bits: 2·max_scale for posits). Shift by
    // pos = ea + eb + QF (0..=2·max_scale + QF) into a field 2·FW bits wider, whose low
    // 2·FW bits are then always zero (posits at their smallest scales have no fraction
    // bits; a takum's product lies at least 10 quire LSBs up).
    let pw = signed_bits(-2 * ms, 2 * ms + fb);
    let pos = da
        .scale
        .sext(pw)
        .add(&db.scale.sext(pw))
        .add(&signed_konst(pw, fb));
    let pos = m.wire(&nm("position"), &pos.resize(ubits((2 * ms + fb) as u64)));
    stage(m);
    let prod = m.wire(&nm("product"), &da.sig.mul_full(&db.sig));
    stage(m);
    let low = prod.width - 2; // 2·FW
    let xw = (2 * ms + fb) as u32 + prod.width;
    let placed = m.wire(&nm("placed"), &prod.zext(xw).shl(&pos));
    let mag = mux(&pz, &konst(xw - low, 0), &placed.bits(xw - 1, low));
    let addend = m.wire(&nm("addend"), &mag.zext(qb).xor(&neg.sext(qb)));
    m.stage();
    m.comment("the quire: q = (clear ? 0 : q) + addend + neg (one adder with carry-in)");
    // The quire: q = (clear ? 0 : q) + addend + neg, one carry-propagate adder with carry-in.
    let q = m.state(&nm("quire"), qb, Some(0));
    let qn = m.state(&nm("quire_nar"), 1, Some(0));
    let keep = c.clear.not();
    let base = q.and(&keep.sext(qb));
    let sum = cat(&[base, konst(1, 1)]).add(&cat(&[addend, neg.clone()]));
    let q_next = m.wire(&nm("quire_next"), &sum.bits(qb, 1));
    let qn_next = m.wire(&nm("quire_nar_next"), &qn.and(&keep).or(&nar_in));
    m.drive(&q, &q_next, Some(&c.enable));
    m.drive(&qn, &qn_next, Some(&c.enable));
    let before = m.cycle();
    if marks == Marks::Unit {
        m.stage();
    }
    let (src, src_nar) = if marks != Marks::Unit || m.cycle() > before {
        (q, qn)
    } else {
        (q_next, qn_next)
    };
    m.comment(&format!(
        "read-out (golden tapered::Quire::to_word): |q|, its leading one, round once to a {}",
        F::FAMILY
    ));
    let qr = m.wire(&nm("quire_rd"), &src);
    let qr_nar = m.wire(&nm("quire_rd_nar"), &src_nar);
    let qneg = qr.msb();
    let pattern = qneg.and(&qr.bits(qb - 2, 0).any().not());
    let is_nar = m.wire(&nm("is_nar"), &qr_nar.or(&pattern));
    let qmag = mux(&qneg, &konst(qb, 0).sub(&qr), &qr);
    let qmag = m.wire(&nm("quire_mag"), &qmag.low(qb - 1));
    stage(m);
    let (lz, zero) = lzc(m, &nm("quire"), &qmag);
    stage(m);
    let norm = m.wire(&nm("quire_norm"), &qmag.shl(&lz));
    // The leading one at bit qb−2−lz has weight 2^(qb−2−lz−fb).
    let top = qb as i64 - 2 - fb;
    let rw = signed_bits(-fb, top).max(lz.width + 1);
    let scale = m.wire(&nm("quire_scale"), &signed_konst(rw, top).sub(&lz.zext(rw)));
    stage(m);
    let word = encode(
        m,
        f,
        &nm("quire_encode"),
        &qneg,
        &scale,
        &norm,
        &konst(1, 0),
        pipelined,
    );
    let y = mux(&is_nar, &nar_word(f), &mux(&zero, &konst(n, 0), &word));
    let y = m.wire(&nm("quire_word"), &y);
    let is_nar = m.now(&is_nar);
    (y, is_nar)
}

/// `posit-mac`: one quire, four ops, eight candidate stage boundaries (module docs).
pub(crate) fn mac(p: &Params) -> Result<Built, GenError> {
    let f = posit_format(p.format, "unit 'posit-mac'")?;
    let (mut m, valid) = start(p, CANDIDATES)?;
    let n = f.n;
    let a = m.input("a", n);
    let b = m.input("b", n);
    let op = m.input("op", 2);
    let ctl = Ctl {
        a,
        b,
        enable: valid.clone(),
        clear: op.bit(1),
        sub: op.bit(0).and(&op.bit(1).not()),
        kill: op.all(),
    };
    let (y, nar) = mac_core(&mut m, f, "", &ctl, Marks::Unit);
    m.output("y", &y);
    m.output("nar", &nar);
    finish(m, &valid, vec![])
}

/// The builder for the `posit-quire` array PE: when `enable`, q = (clear ? 0 :
/// q) + a·b exactly (the NaR flag likewise restarts on clear); returns the quire register
/// rounded once to a posit (NaR for a flagged quire). Marks one candidate boundary, between
/// the product (in quire position) and the quire adder.
pub(crate) fn quire_pe(m: &mut Module, f: Format, prefix: &str, io: &PeIo) -> Result<E, GenError> {
    let f = posit_format(f, "the posit-quire PE")?;
    tapered_quire_pe(m, f, prefix, io, Marks::Product)
}

/// [`quire_pe`] for any family on the posit datapath, with the boundaries of `marks`.
fn tapered_quire_pe<F: TaperedHw>(
    m: &mut Module,
    f: F,
    prefix: &str,
    io: &PeIo,
    marks: Marks,
) -> Result<E, GenError> {
    let ctl = pe_ctl(io);
    let (y, _) = mac_core(m, f, prefix, &ctl, marks);
    Ok(y)
}

/// An array PE's step: a += a·b when `enable`, from zero on `clear`.
fn pe_ctl(io: &PeIo) -> Ctl {
    Ctl {
        a: io.a.clone(),
        b: io.b.clone(),
        enable: io.enable.clone(),
        clear: io.clear.clone(),
        sub: konst(1, 0),
        kill: konst(1, 0),
    }
}

/// The quire array PE of a family on the posit datapath (`posit-quire`, `takum-quire`):
/// the input register, the product register, then up to six registers before and after its
/// quire ([`pe_cuts`]); one accumulation at every stage count. At stages >= 3 all
/// [`PE_CANDIDATES`] boundaries are marked (the plan cuts [`pe_cuts`]): registers before the
/// quire delay the step on its way to the quire, registers after it delay the read-out of
/// the quire register. Neither is inside the accumulation loop, which stays the one-cycle
/// quire add: one accumulation per PE, as at stages <= 2.
pub(crate) struct QuirePe<F>(PhantomData<F>);

impl<F> QuirePe<F> {
    pub(crate) const fn new() -> QuirePe<F> {
        QuirePe(PhantomData)
    }
}

pub(crate) static QUIRE_PE: QuirePe<PositFormat> = QuirePe::new();

impl<F: TaperedHw + Sync> ArrayPe for QuirePe<F> {
    fn max_stages(&self) -> u32 {
        1 + PE_CANDIDATES
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        true
    }
    /// Beyond stages 2, boundaries of its own before and after its quire.
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let stages = p.stages;
        if stages > 2 {
            (PE_CANDIDATES, StagePlan::at(&pe_cuts(stages - 2)))
        } else {
            (1, StagePlan::spread(self.latency(stages), 1))
        }
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        let Some(f) = F::of(p.format) else {
            return Err(GenError(format!(
                "the {}-quire PE needs a {} format, not {}",
                F::FAMILY,
                F::FAMILY,
                p.format
            )));
        };
        let marks = if p.stages > 2 {
            Marks::Pe
        } else {
            Marks::Product
        };
        tapered_quire_pe(pe, f, "", io, marks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit;
    use crate::ir::StagePlan;

    #[test]
    fn the_pe_builds_with_prefixed_names_and_reads_the_register() {
        let mut m = Module::new("pe_test", StagePlan::none());
        let io = PeIo {
            a: m.input("a", 16),
            b: m.input("b", 16),
            enable: m.input("en", 1),
            clear: m.input("clr", 1),
        };
        m.input("clk", 1);
        m.input("rst", 1);
        let f: Format = "posit:16:1".parse().unwrap();
        let y = quire_pe(&mut m, f, "pe0_1_", &io).unwrap();
        assert_eq!(y.width, 16);
        m.output("y", &y);
        let v = emit::verilog(&m);
        assert!(v.contains("reg  [127:0] pe0_1_quire;"), "{v}");
        assert!(v.contains("pe0_1_quire_rd = pe0_1_quire;"), "{v}");
        assert!(quire_pe(&mut m, "lns:5:6".parse().unwrap(), "x_", &io).is_err());
    }
}
