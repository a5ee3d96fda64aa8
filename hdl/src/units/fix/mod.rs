//! The fixed-point MAC with a wide accumulator (`fix-mac`) and the array PE built from the
//! same pieces (`fix_pe`). Rules: docs/formats.md, "`fix:I:F`" (MAC / wide accumulator).
//!
//! Products are exact (2F fraction bits) and accumulate in a register of
//! `FixFormat::acc_bits()` = 2·(1+I+F) + 16 bits that wraps like the golden `FixAcc`. Reading
//! out rounds once to F fraction bits (nearest, ties to even) and saturates at the most
//! negative and most positive codes (`FixAcc::to_word`).
//!
//! `fix-mac` ports: `a`, `b` (words), `op` (0: acc += a·b, 1: acc −= a·b, 2: acc = a·b,
//! 3: acc = 0), `in_valid`; `y` (the accumulator after this step, rounded), `overflow` (the
//! read-out saturated), `out_valid`. Candidate stage boundaries: after the multiply, after the
//! accumulator (the read-out rounding then works on the accumulator register itself).
//! Latency = stages; a new op every cycle, back to back.

mod lane;

use lpgen_golden::{FixFormat, Format};

use super::{finish, start, Built, GenError, Params, PeIo, PeKind};
use std::rc::Rc;

use crate::ir::{konst, mux, named, Module, StagePlan, SubModule, E};
use crate::units::pe::ArrayPe;

fn fix_format(f: Format, what: &str) -> Result<FixFormat, GenError> {
    match f {
        Format::Fix(x) => Ok(x),
        other => Err(GenError(format!(
            "{what} needs a fix format (e.g. fix:7:8), not {other}"
        ))),
    }
}

/// The exact product a·b of two words, sign-extended to the accumulator width.
fn product(m: &mut Module, f: FixFormat, prefix: &str, a: &E, b: &E) -> E {
    m.comment("product a*b, exact (2F fraction bits)");
    let p = m.wire(&format!("{prefix}product"), &a.smul_full(b));
    p.sext(f.acc_bits())
}

/// The accumulator rounded once to F fraction bits (ties to even) and saturated to a word:
/// (word, saturated).
fn round_sat(m: &mut Module, f: FixFormat, prefix: &str, acc: &E) -> (E, E) {
    m.comment("read-out: round once to F fraction bits (nearest even), saturate to a word");
    let r = rne_shr(m, prefix, acc, f.frac_bits);
    saturate(m, prefix, &r, f.width())
}

/// Two's-complement `x` / 2^sh rounded to nearest, ties to even, in x.width − sh + 1 bits
/// (one more, so rounding up cannot wrap). Wires `PREFIXround_up`, `PREFIXrounded`.
pub(crate) fn rne_shr(m: &mut Module, prefix: &str, x: &E, sh: u32) -> E {
    let up = (sh > 0).then(|| m.wire(&format!("{prefix}round_up"), &round_up(x, sh)));
    rne_shr_by(m, prefix, x, sh, up.as_ref())
}

/// Whether `x` / 2^sh rounds up (nearest, ties to even); `sh` > 0.
fn round_up(x: &E, sh: u32) -> E {
    let half = x.bit(sh - 1);
    let sticky = if sh >= 2 {
        x.bits(sh - 2, 0).any()
    } else {
        konst(1, 0)
    };
    half.and(&sticky.or(&x.bit(sh)))
}

/// [`rne_shr`] with its round-up bit `up` given ([`round_up`] of `x`; None when `sh` = 0).
fn rne_shr_by(m: &mut Module, prefix: &str, x: &E, sh: u32, up: Option<&E>) -> E {
    let n = x.width;
    let q = x.bits(n - 1, sh).sext(n - sh + 1);
    let rounded = match up {
        Some(up) => q.add(&up.zext(n - sh + 1)),
        None => q,
    };
    m.wire(&format!("{prefix}rounded"), &rounded)
}

/// Two's-complement `r` (wider than `w`) saturated to `w` bits: (word, saturated).
pub(crate) fn saturate(m: &mut Module, prefix: &str, r: &E, w: u32) -> (E, E) {
    let fits = fits_word(m, prefix, r, w);
    (saturated(&fits, &r.low(w), &r.msb(), w), fits.not())
}

/// Whether two's-complement `r` fits `w` bits: the bits above the word's sign bit repeat it.
fn fits_word(m: &mut Module, prefix: &str, r: &E, w: u32) -> E {
    let top = r.bits(r.width - 1, w - 1);
    m.wire(&format!("{prefix}fits"), &top.all().or(&top.any().not()))
}

/// The word `low` when it `fits`, else the most negative or most positive word by `negative`.
fn saturated(fits: &E, low: &E, negative: &E, w: u32) -> E {
    mux(fits, low, &extreme_word(negative, w))
}

/// The most negative `w`-bit two's-complement word when `negative`, else the most positive:
/// what every saturation of fix and dfix words gives.
pub(crate) fn extreme_word(negative: &E, w: u32) -> E {
    let max = named("FIX_MAX", w, (1u128 << (w - 1)) - 1);
    let min = named("FIX_MIN", w, 1u128 << (w - 1));
    mux(negative, &min, &max)
}

/// Candidate stage boundaries of `fix-mac` (after the multiply, after the accumulator).
pub(crate) const MAC_STAGES: u32 = 2;

/// `fix-mac`: one accumulator, four ops, two candidate stage boundaries.
pub(crate) fn mac(p: &Params) -> Result<Built, GenError> {
    let f = fix_format(p.format, "unit 'fix-mac'")?;
    let (mut m, valid) = start(p, MAC_STAGES)?;
    let w = f.width();
    let n = f.acc_bits();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let op = m.input("op", 2);
    let prod = product(&mut m, f, "", &a, &b);
    m.stage();
    m.comment("accumulate: op 0: acc + p; 1: acc - p; 2: 0 + p; 3: 0 (one adder)");
    let acc = m.state("acc", n, Some(0));
    let keep = m.wire("keep_acc", &op.bit(1).not());
    let sub = m.wire("subtract", &keep.and(&op.bit(0)));
    let use_p = m.wire("use_p", &op.all().not());
    let base = acc.and(&keep.sext(n));
    let addend = prod.and(&use_p.sext(n));
    let flip = sub.sext(n);
    let sum = base.xor(&flip).add(&addend);
    let acc_next = m.wire("acc_next", &sum.xor(&flip));
    m.drive(&acc, &acc_next, Some(&valid));
    let before = m.cycle();
    m.stage();
    // With a register after the accumulator, read the accumulator register itself.
    let src = if m.cycle() > before { acc } else { acc_next };
    let (y, over) = round_sat(&mut m, f, "", &src);
    m.output("y", &y);
    m.output("overflow", &over);
    finish(m, &valid, vec![])
}

/// The builder for the `fix` array PE: when `enable`, acc = (clear ? 0 : acc) +
/// a·b (exact, wrapping); returns the accumulator register rounded once and saturated.
/// Marks one candidate boundary, after the product.
pub(crate) fn fix_pe(m: &mut Module, f: Format, prefix: &str, io: &PeIo) -> Result<E, GenError> {
    let f = fix_format(f, "the fix PE")?;
    let acc = pe_accumulator(m, f, prefix, io);
    let (word, _) = round_sat(m, f, prefix, &acc);
    Ok(word)
}

/// The `fix` array PE at stages 3..=9: [`fix_pe`] with registers on the PE's long wires, so
/// that no path carries both a long wire and logic. On an FPGA the multiplier is a DSP site
/// the PE's logic cannot always sit beside (the fix array's critical path at 8×8 ran from an
/// operand register 31 columns to its DSP and back, docs/fpga.md). Stage 3 + k adds, in
/// order: a register on each operand (which the tools merge with the pass-on registers
/// `a_out`/`b_out`); a register between the read-out's rounding and its saturation
/// (`readout_register`, the caller's to account for: `readout_registers`); a second operand
/// register, fed by the first, which can sit by the DSP; a second product register, between
/// the DSP and the accumulator (with the first, in [`registered_multiplier`]); a register
/// after the read-out's saturation test (the next critical path once the DSP holds its
/// registers, docs/fpga.md); a third product register and a third operand register (stages
/// 8 and 9: on a large array the DSP sites are far from the logic they serve, so each wire
/// between them gets a register that can sit halfway). Marks a candidate boundary for each
/// operand and product register: [`fix_pe_boundaries`].
pub(crate) fn fix_pe_registered(
    m: &mut Module,
    f: Format,
    io: &PeIo,
    stages: u32,
) -> Result<E, GenError> {
    let f = fix_format(f, "the fix PE")?;
    // From stages 8 a bubble multiplies 0, so the accumulator needs no enable (at 12×12 the
    // enable's register, 42 columns from the accumulator, was the critical path).
    let a = if stages >= 8 {
        m.wire("a_or_zero", &io.a.and(&io.enable.sext(f.width())))
    } else {
        io.a.clone()
    };
    m.stage();
    let prod = if stages >= 6 {
        if stages >= 9 {
            // A third operand register, between the pass-on register and the DSP's own.
            m.stage();
        }
        // The second operand registers, the multiply and the first product register as one
        // module, which a synthesis flow can replace by a DSP block holding these registers.
        let mul = registered_multiplier(m, f.width())?;
        let p = m
            .instance(&mul, "mul", &[("a", &a), ("b", &io.b)])
            .port("p");
        m.wait_for(&p);
        let p = p.sext(f.acc_bits());
        m.stage();
        if stages >= 8 {
            // A third product register, between the DSP's output register and the second.
            // The step in this cycle is the accumulator's next: its `clear` resets the loop
            // register a cycle ahead (`accumulate_clear_ahead`).
            let clear_early = m.wire("clear_early", &io.clear);
            m.stage();
            let clear_next = m.ahead("clear_next", &clear_early);
            let (acc, up) = accumulate_clear_ahead(m, f, &p, &clear_next);
            return Ok(readout(m, f, &acc, up.as_ref(), stages));
        }
        p
    } else {
        if stages >= 5 {
            m.stage();
        }
        let prod = product(m, f, "", &io.a, &io.b);
        m.stage();
        prod
    };
    let acc = accumulate(m, f, "", &prod, io);
    Ok(readout(m, f, &acc, None, stages))
}

/// The read-out of [`fix_pe_registered`]: the accumulator rounded (by `up` when its
/// round-up bit is given) and saturated, with [`fix_pe_readout_registers`] registers inside.
fn readout(m: &mut Module, f: FixFormat, acc: &E, up: Option<&E>, stages: u32) -> E {
    m.comment("read-out: round once to F fraction bits (nearest even), saturate to a word");
    let mut rounded = match up {
        Some(up) => rne_shr_by(m, "", acc, f.frac_bits, Some(up)),
        None => rne_shr(m, "", acc, f.frac_bits),
    };
    // The read-out registers are free-running: each holds the value before it one cycle
    // later, and the result register is captured as many cycles later (the caller's).
    if fix_pe_readout_registers(stages) >= 1 {
        rounded = m.register("readout_rounded_q", &rounded, None);
    }
    let w = f.width();
    if fix_pe_readout_registers(stages) < 2 {
        return saturate(m, "", &rounded, w).0;
    }
    // Stages 7: the saturation test in a register of its own, beside the word's bits and
    // sign, so the result register is fed by one multiplexer.
    let fits = fits_word(m, "", &rounded, w);
    let fits = m.register("readout_fits_q", &fits, None);
    let low = m.register("readout_word_q", &rounded.low(w), None);
    let negative = m.register("readout_negative_q", &rounded.msb(), None);
    saturated(&fits, &low, &negative, w)
}

/// The read-out registers of [`fix_pe_registered`] at `stages` (the array's latency counts
/// them: `readout_registers`): one after the rounding from stages 4, one after the
/// saturation test from stages 7.
pub(crate) fn fix_pe_readout_registers(stages: u32) -> u32 {
    (stages >= 4) as u32 + (stages >= 7) as u32
}

/// The candidate boundaries [`fix_pe_registered`] marks at `stages` (3..=9), all cut: from
/// stages 6 two of its registers are inside [`registered_multiplier`].
pub(crate) fn fix_pe_boundaries(stages: u32) -> usize {
    match stages {
        5 | 8 => 3,
        9 => 4,
        _ => 2,
    }
}

/// The `fix` array PE: the input register, the product register, then registers on its long
/// wires and inside its read-out ([`fix_pe_registered`]), up to stages 9.
/// The fix PE's designs of the lint grid: fix:7:8 at stages 0..=9 up to 2×3 (the lean grid
/// too), and 0, 2, 4, 7, 9 at 4×4, 2 above.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    crate::units::array::pe_designs(PeKind::Fix, "fix:7:8", full, |pes| match pes {
        0..=6 => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        7..=16 => &[0, 2, 4, 7, 9],
        _ => &[2],
    })
}

pub(crate) struct FixPe;

pub(crate) static FIX_PE: FixPe = FixPe;

impl ArrayPe for FixPe {
    fn max_stages(&self) -> u32 {
        9
    }
    fn readout_registers(&self, stages: u32) -> u32 {
        fix_pe_readout_registers(stages)
    }
    /// The read-out registers come after the accumulator, within the stages.
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1) - self.readout_registers(stages)
    }
    fn no_inline(&self) -> bool {
        false
    }
    /// Beyond stages 2, every boundary of [`fix_pe_registered`] cut.
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let stages = p.stages;
        if stages > 2 {
            let n = fix_pe_boundaries(stages);
            (n as u32, StagePlan::at(&(0..n).collect::<Vec<_>>()))
        } else {
            (1, StagePlan::spread(self.latency(stages), 1))
        }
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        if p.stages > 2 {
            fix_pe_registered(pe, p.format, io, p.stages)
        } else {
            fix_pe(pe, p.format, "", io)
        }
    }
}

/// The name prefix of `registered_multiplier`'s modules: `lpgen_mul_signed_<W>x<W>_s2`.
pub const REGISTERED_MULTIPLIER_PREFIX: &str = "lpgen_mul_signed_";

/// A signed `width`×`width` multiplier with a register on each operand and one on the exact
/// 2·`width`-bit product (latency 2; ports `clk`, `a`, `b`, `p`), the shape of an FPGA's
/// multiplier block with its input and output registers (`lpgen_fpga` maps it to one).
fn registered_multiplier(m: &Module, width: u32) -> Result<Rc<SubModule>, GenError> {
    let name = format!("{REGISTERED_MULTIPLIER_PREFIX}{width}x{width}_s2");
    m.define(&name, StagePlan::at(&[0, 1]), |mul| {
        mul.header.push(
            "p = a·b (signed, exact), a and b registered, then p: latency 2 (docs/rtl.md, array)."
                .into(),
        );
        mul.input("clk", 1);
        let a = mul.input("a", width);
        let b = mul.input("b", width);
        mul.stage();
        let p = mul.wire("product", &a.smul_full(&b));
        mul.stage();
        mul.output("p", &p);
        Ok(())
    })
}

/// The fix PE's multiply-accumulate (the `dfix` PE's too): when `enable`, acc = (clear ? 0 :
/// acc) + a·b, exact and wrapping in `acc_bits()` bits; returns the accumulator register.
/// Marks one candidate boundary, after the product.
pub(crate) fn pe_accumulator(m: &mut Module, f: FixFormat, prefix: &str, io: &PeIo) -> E {
    let prod = product(m, f, prefix, &io.a, &io.b);
    m.stage();
    accumulate(m, f, prefix, &prod, io)
}

/// The accumulator register: when `enable`, acc = (clear ? 0 : acc) + `prod`.
fn accumulate(m: &mut Module, f: FixFormat, prefix: &str, prod: &E, io: &PeIo) -> E {
    let n = f.acc_bits();
    m.comment("accumulate, exact and wrapping: acc = (clear ? 0 : acc) + a*b");
    let acc = m.state(&format!("{prefix}acc"), n, Some(0));
    let base = acc.and(&io.clear.not().sext(n));
    let acc_next = m.wire(&format!("{prefix}acc_next"), &base.add(prod));
    m.drive(&acc, &acc_next, Some(&io.enable));
    acc
}

/// [`accumulate`] with `clear` and the enable out of the loop (stages 8 and 9), for a `prod`
/// that is 0 in bubbles: the loop register `acc_base` is reset to 0 a cycle before a step
/// with `clear` reaches it (`clear_next`, that step's `clear` a cycle ahead), so a
/// synchronous reset does what the gate in front of the adder did (at 12×12 and stages 9
/// that gate's `clear` register, 10 columns away, was the critical path, docs/fpga.md). The
/// read-out's register `acc` loads the same sum, without the reset, and a register beside it
/// the read-out's round-up bit, from the sum's low bits, which the adder has early (at
/// 12×12 the read-out's round-up logic before its adder was the next critical path):
/// (`acc`, the round-up bit, None for F = 0).
fn accumulate_clear_ahead(
    m: &mut Module,
    f: FixFormat,
    prod: &E,
    clear_next: &E,
) -> (E, Option<E>) {
    let n = f.acc_bits();
    let base = m.state("acc_base", n, Some(0));
    let sum = m.wire("acc_next", &base.add(prod));
    m.drive(&base, &mux(clear_next, &konst(n, 0), &sum), None);
    let up = (f.frac_bits > 0)
        .then(|| m.register("acc_round_up", &round_up(&sum, f.frac_bits), Some(0)));
    (m.register("acc", &sum, Some(0)), up)
}

/// The fix designs of the lint grid.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<String> = if full {
        let mut v = vec![];
        for i in [0, 1, 3, 7, 15] {
            for fr in [0, 1, 2, 4, 8, 16] {
                if i + fr >= 1 && i + fr <= 31 {
                    v.push(format!("fix:{i}:{fr}"));
                }
            }
        }
        v
    } else {
        vec!["fix:7:8".into(), "fix:3:4".into()]
    };
    let mut g = vec![];
    for f in &formats {
        for s in [0, 1, 2] {
            g.push(Params::new(super::Unit::FixMac, f.parse().unwrap()).stages(s));
        }
    }
    g
}
