//! `mx-enc`: a block of K f32 words (`x`) → the E8M0 `scale` and the element `codes`, against
//! the golden `MxFormat::quantize_block` (the f32 words' values, exact in f64).
//!
//! Corner blocks: all +0, ±0 mixed, zeros with one subnormal, all subnormal, a NaN, +∞ or −∞
//! among ordinary values, ±max f32, values around 2^emax·2^±127 (the scale's clamps), ties
//! of the INT8 rounding.
//! Random blocks: a block exponent from 2^−150 to 2^128, each element of either sign, a few
//! binades below it, with a full random significand or (a third of the time) one of at most
//! four bits (ties of the element rounding); an eighth of the blocks any f32 patterns.
//! No exhaustive mode (K f32 words).

use lpgen_golden::mx::MxFormat;
use lpgen_hdl::Params;

use super::{Ctx, Mode, Plan};
use crate::layout::{get_bits, put_bits};
use crate::rng::Rng;
use crate::{Result, VerifError};

fn mx_of(p: &Params) -> Result<MxFormat> {
    p.mx.ok_or_else(|| VerifError("mx-enc needs an MX block format (--format mx:ELEM[:bK])".into()))
}

/// The corner blocks of `k` words.
fn corners(k: usize) -> Vec<Vec<u32>> {
    let fill = |w: u32| vec![w; k];
    let with = |base: u32, at: usize, w: u32| {
        let mut v = vec![base; k];
        v[at % k] = w;
        v
    };
    vec![
        fill(0),
        (0..k)
            .map(|i| if i % 2 == 1 { 0x8000_0000 } else { 0 })
            .collect(),
        with(0, 1, 1),
        with(0x8000_0001, 0, 0x007f_ffff),
        with(0x3f80_0000, 1, 0x7fc0_0000),
        with(0x3f80_0000, 0, 0x7f80_0000),
        with(0xc0a0_0000, k - 1, 0xff80_0000),
        fill(0x7f7f_ffff),
        with(0x7f7f_ffff, 0, 0xff7f_ffff),
        with(0x0080_0000, 1, 0x0000_0003),
        fill(0x0080_0000),
        with(0x4040_0000, 0, 0x3ec0_0000),
        // Under a block maximum of 1.0 (INT8: k = 64·x), 2.5/64 and −3.5/64: ties of the
        // INT8 rounding (to 2 and −4), and exact in the float elements' grids.
        with(0x3d20_0000, 1, 0x3f80_0000),
        with(0xbd60_0000, 1, 0x3f80_0000),
    ]
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let mx = mx_of(p)?;
    let cycles = match mode {
        Mode::Exhaustive => {
            return Err(VerifError(format!(
                "--exhaustive is not available for mx-enc on {mx}: a block is {} f32 words (use \
                 --vectors N)",
                mx.block
            )))
        }
        Mode::Vectors(n) => corners(mx.block).len() as u64 + n,
    };
    Ok(Plan { cycles, drive })
}

fn random_block(r: &mut Rng, k: usize) -> Vec<u32> {
    if r.below(8) == 0 {
        return (0..k).map(|_| r.next_u64() as u32).collect();
    }
    let top = r.below(279) as i32 - 150;
    (0..k)
        .map(|_| {
            let e = top - r.below(6) as i32;
            let sig = if r.below(3) == 0 {
                r.below(16)
            } else {
                r.below(1 << 24)
            };
            let v = sig as f64 * 2f64.powi(e - 23);
            let v = if r.coin() { -v } else { v };
            (v as f32).to_bits()
        })
        .collect()
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let mx = mx_of(ctx.p)?;
    let l = ctx.layout;
    let w = mx.elem_width();
    let (valid, x) = (l.slot("in_valid")?, l.slot("x")?);
    let (scale, codes) = (l.slot("scale")?, l.slot("codes")?);
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    let op = |chk: &mut crate::Checker, words: &[u32]| -> Result<()> {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        for (i, &wd) in words.iter().enumerate() {
            put_bits(&mut ins[x..], i * 32, 32, u64::from(wd));
        }
        let xs: Vec<f64> = words
            .iter()
            .map(|&b| f64::from(f32::from_bits(b)))
            .collect();
        let b = mx
            .quantize_block(&xs)
            .map_err(|e| VerifError(format!("golden {mx}: {e}")))?;
        let mut want = vec![0u64; out_n];
        want[scale] = u64::from(b.scale);
        for (i, &c) in b.codes.iter().enumerate() {
            put_bits(&mut want[codes..], i * w as usize, w, u64::from(c));
        }
        debug_assert_eq!(get_bits(&want[codes..], 0, w), u64::from(b.codes[0]));
        chk.mark_restart();
        chk.push(&ins, Some(&want));
        Ok(())
    };
    for block in corners(mx.block) {
        op(ctx.chk, &block)?;
    }
    let mut r = Rng(ctx.seed);
    if let Mode::Vectors(n) = ctx.mode {
        for _ in 0..n {
            op(ctx.chk, &random_block(&mut r, mx.block))?;
        }
    }
    Ok(())
}
