//! `q8-enc`: the code of the magnitude nearest to |x| at the scale (golden
//! `Q8Type::encode_word`): i = the number of midpoints m with m·scale <= |x|, found by a
//! binary search of seven levels (§3.2's search in hardware: level k compares the midpoint
//! its k bits so far select, read from a ROM of 2^k entries, with |x|/scale), then the field
//! of the i-th magnitude from a ROM, and x's sign.
//!
//! The comparisons are exact on integers: midpoints are M/2^(T+1) (golden
//! `Codebook::fixed`), so m·scale <= |x| becomes, for fix words (x = X/2^F, scale = S/2^F),
//! M·S <= R = |X|·2^(T+1); for posits (|x| = sx·2^(ex − FW), scale = ss·2^(es − FW)),
//! M·ss <= R = floor(sx·2^(ex − es + T + 1)), R aligned once by a shifter (clamped: beyond the
//! widest product every comparison holds, below 1 none does). As M is an integer, M·S <= R
//! exactly when M <= floor(R/S): one divider (a restoring one, as many quotient bits as the
//! midpoints have, the quotient clamped) replaces a multiplier a level, and the levels
//! compare ROM constants with the quotient. Midpoints past the table's last (fewer than 127
//! when magnitudes repeat) are marked absent and compare false.
//!
//! A scale that is zero, negative or NaR, and a NaR x, select the smallest magnitude (NaR
//! without a sign). Boundaries ([`enc_stages`]: 15 to 20 by type): after the input decode;
//! every four divider steps and after the divider; after each of search levels 0..=5.

use lpgen_golden::q8::FixedTables;
use lpgen_golden::{FixFormat, Format, PositFormat};

use super::f32::f32_prepare;
use super::{bits_of, check_format, read, rom_module, type_tag};
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, E};
use crate::units::divide::restoring_step;
use crate::units::posit::decode::{decode, max_scale};
use crate::units::{finish, start, Built, GenError, Params};

/// Levels of the search: 2^7 − 1 = 127 midpoints at most.
const LEVELS: u32 = 7;

/// What the search compares: `mult`·M <= `right` for each level's midpoint M.
pub(super) struct Prepared {
    /// The code's sign bit.
    pub sign: E,
    /// 0 selects the smallest magnitude whatever the search finds.
    pub ok: E,
    pub right: E,
    pub mult: E,
}

pub(crate) fn enc(p: &Params) -> Result<Built, GenError> {
    check_format(p)?;
    let book = p.q8.codebook();
    let t = book.fixed();
    let (mut m, valid) = start(p, enc_stages(p))?;
    let w = p.format.width();
    let x = m.input("x", w);
    let scale = m.input("scale", w);
    let mid_w = midpoint_bits(p);
    m.comment("prepare: |x| and the scale as the dividend and divisor (the format's decode)");
    let prep = match p.format {
        Format::Fix(f) => fix_prepare(&mut m, &t, f, mid_w, &x, &scale),
        Format::Posit(f) => posit_prepare(&mut m, &t, f, mid_w, &x, &scale),
        Format::F32(_) => f32_prepare(&mut m, &t, mid_w, &x, &scale),
        _ => unreachable!("check_format refused it"),
    };
    m.stage();
    m.comment("divide: |x| / scale, one quotient bit per midpoint bit (restoring)");
    let quotient = divide(&mut m, mid_w, &prep.right, &prep.mult);
    m.comment("search: the nearest codebook value, by a binary search over the midpoints");
    let index = search(&mut m, &t, mid_w, &quotient);
    let index = m.wire("index", &mux(&prep.ok, &index, &konst(LEVELS, 0)));
    m.comment("the code: the sign and the magnitude's field");
    // The field of each magnitude index (indices past the last magnitude are never found).
    let fields: Vec<u128> = (0..1u32 << LEVELS)
        .map(|i| {
            book.magnitude_fields
                .get(i as usize)
                .map_or(0, |&f| f as u128)
        })
        .collect();
    let comment = format!(
        "{} 7-bit field of each magnitude, ascending (golden Codebook::magnitude_fields; {}).",
        p.q8,
        t.digest()
    );
    let rom = rom_module(
        &m,
        &format!("lpgen_{}_fields", type_tag(p.q8)),
        &comment,
        LEVELS,
        fields,
    );
    let field = read(&mut m, &rom, "field", &index);
    m.output("code", &cat(&[prep.sign, field]));
    finish(m, &valid, vec![("q8 values+midpoints".into(), t.digest())])
}

fn fix_prepare(
    m: &mut Module,
    t: &FixedTables,
    f: FixFormat,
    mid_w: u32,
    x: &E,
    scale: &E,
) -> Prepared {
    let w = f.width();
    let sign = m.wire("x_neg", &x.msb());
    let ax = m.wire("x_abs", &mux(&sign, &konst(w, 0).sub(x), x));
    let ok = m.wire("scale_ok", &scale.msb().not().and(&scale.any()));
    let one = t.frac_bits + 1;
    let rw = (mid_w + w).max(w + one);
    let right = m.wire("right", &cat(&[ax, konst(one, 0)]).zext(rw));
    Prepared {
        sign,
        ok,
        right,
        mult: scale.clone(),
    }
}

fn posit_prepare(
    m: &mut Module,
    t: &FixedTables,
    f: PositFormat,
    mid_w: u32,
    x: &E,
    scale: &E,
) -> Prepared {
    let dx = decode(m, f, "x", x);
    let ds = decode(m, f, "scale", scale);
    let sign = m.wire("x_neg", &dx.sign.and(&dx.nar.not()));
    let bad = ds.sign.or(&ds.zero).or(&ds.nar).or(&dx.nar).or(&dx.zero);
    let ok = m.wire("scale_ok", &bad.not());
    let right = aligned(m, t, mid_w, 2 * max_scale(f), &dx.scale, &dx.sig, &ds.scale);
    Prepared {
        sign,
        ok,
        right,
        mult: ds.sig.clone(),
    }
}

/// `right` = floor(sx·2^d), d = ex − es + T + 1, for |x| = sx·2^(ex − FW) and scale =
/// ss·2^(es − FW) (FW: the significands' fraction bits, the same for both), so that
/// M·ss <= right exactly when M·scale <= |x|·2^(T+1). `span` bounds |ex − es|. Clamped: for
/// d > mid_w, all ones (beyond the widest product M·ss, as sx >= ss there or sx is normal).
pub(super) fn aligned(
    m: &mut Module,
    t: &FixedTables,
    mid_w: u32,
    span: i64,
    x_scale: &E,
    x_sig: &E,
    s_scale: &E,
) -> E {
    // d = ex − es + T + 1: M·ss <= sx·2^d.
    let one = t.frac_bits as i64 + 1;
    let dw = signed_bits(-span + one, span + one).max(x_scale.width + 2);
    let d = x_scale.sext(dw).sub(&s_scale.sext(dw));
    let d = m.wire("align", &d.add(&signed_konst(dw, one)));
    // The widest product M·ss has mid_w + FW + 1 bits; sx·2^d for d <= mid_w fits it.
    let sx = x_sig;
    let rw = mid_w + sx.width;
    let a = sx.zext(rw);
    let left_amount = d.low(bits_of(mid_w as u64).min(dw));
    let beyond = m.wire("align_beyond", &d.sgt(&signed_konst(dw, mid_w as i64)));
    let up = mux(&beyond, &konst(rw, 0).not(), &a.shl(&left_amount));
    let down = a.shr(&konst(dw, 0).sub(&d));
    m.wire("right", &mux(&d.msb(), &down, &up))
}

/// Divider steps between two candidate boundaries: a step is a compare-and-subtract whose
/// carry chain feeds the next, about 18 ns on an iCE40, so four make a stage of ~70 ns.
const STEPS_PER_CUT: u32 = 4;

/// Bits of the type's largest midpoint (the quotient's width).
fn midpoint_bits(p: &Params) -> u32 {
    let t = p.q8.codebook().fixed();
    bits_of(*t.midpoints.iter().max().expect("two magnitudes at least"))
}

/// Candidate boundaries of `q8-enc` (by type: the divider has one step a midpoint bit):
/// after the input decode, every [`STEPS_PER_CUT`] divider steps, after the divider, and
/// after each of search levels 0..=5.
pub(crate) fn enc_stages(p: &Params) -> u32 {
    1 + (midpoint_bits(p) - 1) / STEPS_PER_CUT + 1 + (LEVELS - 1)
}

/// floor(`right` / `mult`) clamped to `mid_w` bits (all ones when it is larger): as every
/// midpoint M is an integer below 2^mid_w, M·mult <= right exactly when M <= this. A
/// restoring division, one quotient bit a step from the top, after a single test for a
/// quotient beyond mid_w bits (right >= mult·2^mid_w). `mult` must be >= 1 where it matters
/// (the scale is positive; otherwise `ok` discards the result).
fn divide(m: &mut Module, mid_w: u32, right: &E, mult: &E) -> E {
    let dw = mult.width + 1; // the partial remainder stays below 2·mult
    let top = right.width - mid_w.min(right.width);
    let high = if top == 0 {
        konst(1, 0)
    } else {
        right.bits(right.width - 1, mid_w.min(right.width))
    };
    let cw = high.width.max(dw);
    let beyond = m.wire("quotient_beyond", &high.zext(cw).ge(&mult.zext(cw)));
    // Not beyond: the partial remainder starts as right >> mid_w (< mult) and takes one more
    // bit of `right` a step.
    let d = mult.zext(dw);
    let mut rem = high.zext(cw).low(dw.min(cw)).zext(dw);
    let mut bits = vec![];
    for i in (0..mid_w).rev() {
        let next_bit = if i < right.width {
            right.bit(i)
        } else {
            konst(1, 0)
        };
        let shifted = cat(&[rem.low(dw - 1), next_bit]);
        let (bit, reduced) = restoring_step(m, &format!("quotient_bit{i}"), &shifted, &d);
        rem = m.wire(&format!("remainder{i}"), &reduced);
        bits.push(bit);
        if i > 0 && (mid_w - i).is_multiple_of(STEPS_PER_CUT) {
            m.stage();
        }
    }
    let q = m.wire("quotient", &cat(&bits));
    let q = m.wire(
        "quotient_clamped",
        &mux(&beyond, &konst(mid_w, 0).not(), &q),
    );
    m.stage();
    q
}

/// The seven levels: bit 6 − k of the index is whether the midpoint the bits so far select
/// is at most `quotient` (a ROM of 2^k entries a level). Returns the index (the count of
/// midpoints at most |x|/scale).
fn search(m: &mut Module, t: &FixedTables, mid_w: u32, quotient: &E) -> E {
    let present = 1u128 << mid_w;
    let mut bits: Option<E> = None;
    for k in 0..LEVELS {
        let entries: Vec<u128> = (0..1usize << k)
            .map(|path| {
                let j = (path << (LEVELS - k)) + (1 << (LEVELS - 1 - k)) - 1;
                t.midpoints.get(j).map_or(0, |&mid| present | mid as u128)
            })
            .collect();
        let entry = match &bits {
            None => konst(mid_w + 1, entries[0]),
            Some(b) => m.rom(&format!("level{k}_midpoints"), mid_w + 1, entries, b),
        };
        let at_most = entry.low(mid_w).le(quotient);
        let bit = m.wire(&format!("level{k}_up"), &entry.msb().and(&at_most));
        let so_far = match bits {
            None => bit,
            Some(b) => cat(&[b, bit]),
        };
        bits = Some(m.wire(&format!("level{k}_index"), &so_far));
        if k + 1 < LEVELS {
            m.stage();
        }
    }
    bits.expect("seven levels")
}
