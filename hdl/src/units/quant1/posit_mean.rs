//! quant1's mean divider for posits: a side's quire sum, already rounded once to a posit, over
//! the integer count, the exact quotient rounded once to the format (golden
//! `Quantizer::mean`: the format's correctly rounded division, or the exact ratio where the
//! count is not a posit word; both are the exact quotient rounded once).
//!
//! The significand 1.f (FW + 1 bits) is extended by E = ⌊log2 R⌋ + 2 zero bits and divided
//! by the count (below 2^(E−1)) in D = FW + 1 + E restoring steps, one bit per cycle: the
//! quotient then has at least FW + 2 significant bits (every bit a posit can keep and its
//! guard), the remainder gives the sticky bit, and the shared posit encoder rounds on the
//! bit string (nearest even, maxpos/minpos saturation, the `:u` rule).

use std::rc::Rc;

use lpgen_golden::{Format, PositFormat};

use super::super::divide::SequentialDivider;
use super::super::posit::decode::{decode, frac_width, lzc};
use super::super::posit::encode::encode;
use super::bits_for;
use crate::ir::{cat, konst, mux, signed_bits, Module, StagePlan, SubModule};

/// Zero bits appended to the significand: the count has ⌊log2 rows⌋ + 1 bits, one more keeps
/// the quotient at FW + 2 significant bits or more.
fn extension(rows: u32) -> u32 {
    bits_for(rows) + 1
}

/// Division steps (quotient bits) for columns of up to `rows` words of `f`.
pub(crate) fn steps(f: PositFormat, rows: u32) -> u32 {
    frac_width(f) + 1 + extension(rows)
}

/// The divider `lpgen_quant1_mean_<format>_rROWS`, with the ports of the fix one: on `start`
/// it decodes `sum` (a posit word) and loads `count`; `mean` is loaded D + 1 cycles later and
/// held until the next division ends. NaR over any count is NaR; zero, or a count of zero,
/// gives zero.
pub(crate) fn divider(m: &Module, f: PositFormat, rows: u32) -> Rc<SubModule> {
    let n = f.n;
    let count_w = bits_for(rows);
    let d_steps = steps(f, rows);
    let name = format!(
        "lpgen_quant1_mean_{}_r{rows}",
        Format::Posit(f).to_string().replace(':', "_")
    );
    let built = m.define::<()>(&name, StagePlan::none(), |d| {
        d.header.push(format!(
            "The mean of one side of a quant1 column of up to {rows} {} words; docs/rtl.md, quant1.",
            Format::Posit(f)
        ));
        d.input("clk", 1);
        d.input("rst", 1);
        let start = d.input("start", 1);
        let sum = d.input("sum", n);
        let count = d.input("count", count_w);
        let dec = decode(d, f, "sum", &sum);
        let scale_w = dec.scale.width;
        let dividend = cat(&[dec.sig.clone(), konst(extension(rows), 0)]);
        assert_eq!(dividend.width, d_steps, "one quotient bit per dividend bit");
        let div = SequentialDivider::registers(d, d_steps, count_w);
        let negative = d.state("negative", 1, Some(0));
        let scale = d.state("scale", scale_w, Some(0));
        let nar = d.state("nar", 1, Some(0));
        let zero = d.state("zero", 1, Some(0));
        let control = div.control(d, &start, d_steps, n);
        // One restoring step a cycle, as in the fix divider.
        div.step(d, &control, &start, &dividend, &count);
        d.drive(&negative, &dec.sign, Some(&start));
        d.drive(&scale, &dec.scale, Some(&start));
        d.drive(&nar, &dec.nar, Some(&start));
        d.drive(&zero, &dec.zero.or(&count.any().not()), Some(&start));
        SequentialDivider::count_steps(d, &control, &start, d_steps);
        let (quotient, remainder) = (&div.quotient, &div.remainder);
        // Normalise: the quotient's leading one becomes the hidden bit; the value is
        // quotient · 2^(scale − FW − E), so the mean's scale is scale − (leading zeros).
        let (lz, _) = lzc(d, "quotient", quotient);
        let lz = d.wire("leading_zeros", &lz);
        let sig = d.wire("mean_sig", &quotient.shl(&lz));
        let max = f.max_scale() as i64;
        let wide = signed_bits(-max - i64::from(d_steps), max).max(scale_w);
        let mean_scale = d.wire(
            "mean_scale",
            &scale.sext(wide).sub(&lz.zext(wide.max(lz.width)).low(wide)),
        );
        let sticky = d.wire("sticky", &remainder.any());
        let word = encode(d, f, "mean_encode", &negative, &mean_scale, &sig, &sticky, false);
        let nar_word = crate::units::posit::nar_word(f);
        let value = mux(&nar, &nar_word, &mux(&zero, &konst(n, 0), &word));
        let finished = d.wire("finished", &control.steps.eq_k(1));
        d.drive(&control.result, &value, Some(&finished));
        d.output("mean", &control.result);
        d.output("busy", &control.busy);
        Ok(())
    });
    built.expect("the posit divider cannot fail")
}
