//! `mx-enc`: a block of K words (`x`, of `--input`: f32 by default) → the E8M0 `scale` and
//! the element `codes`, against the golden `MxFormat::quantize_words` (§6.3 on the words'
//! values, exact in f64).
//!
//! f32 corner blocks: all +0, ±0 mixed, zeros with one subnormal, all subnormal, a NaN, +∞ or
//! −∞ among ordinary values, ±max f32, values around 2^emax·2^±127 (the scale's clamps), ties
//! of the INT8 rounding. f32 random blocks: a block exponent from 2^−150 to 2^128, each element
//! of either sign, a few binades below it, with a full random significand or (a third of the
//! time) one of at most four bits (ties of the element rounding); an eighth of the blocks any
//! f32 patterns.
//! Other float inputs (bf16, f16, float:E:M): the same corners from the format's fields
//! (`float_corners`), random blocks of exponent fields a few below a random one (zeros and
//! subnormals among them), fractions full, few-bit or zero. Fix inputs: zeros, the most
//! negative word (alone, everywhere, beside the largest), one LSB, −1s, the largest word
//! (INT8 saturation), INT8 ties (`fix_corners`); random blocks of integers a few bit lengths
//! below a random one, the most negative word and zeros among them.
//! No exhaustive mode (K words).

use lpgen_golden::mx::{MxFormat, MxInput};
use lpgen_golden::{FixFormat, FloatFormat};
use lpgen_hdl::Params;

use super::{Ctx, Mode, Plan};
use crate::layout::{get_bits, put_bits};
use crate::rng::Rng;
use crate::{Result, VerifError};

fn mx_of(p: &Params) -> Result<MxFormat> {
    p.mx.ok_or_else(|| VerifError("mx-enc needs an MX block format (--format mx:ELEM[:bK])".into()))
}

/// The input words' format (f32 without `--input`).
fn input_of(p: &Params) -> Result<MxInput> {
    p.input.map_or(Ok(MxInput::F32), |f| {
        MxInput::new(f).map_err(|e| VerifError(format!("mx-enc --input {}", e.0)))
    })
}

/// The corner blocks of `k` words of `input`.
fn corners(input: MxInput, k: usize) -> Vec<Vec<u64>> {
    match input {
        MxInput::F32 => f32_corners(k)
            .into_iter()
            .map(|b| b.into_iter().map(u64::from).collect())
            .collect(),
        MxInput::Float(f) => float_corners(f, k),
        MxInput::Fix(f) => fix_corners(f, k),
    }
}

/// `k` copies of `base` with word `at` (mod k) replaced by `w`.
fn with<T: Copy>(k: usize, base: T, at: usize, w: T) -> Vec<T> {
    let mut v = vec![base; k];
    v[at % k] = w;
    v
}

/// The f32 corner blocks of `k` words.
fn f32_corners(k: usize) -> Vec<Vec<u32>> {
    let fill = |w: u32| vec![w; k];
    let with = |base: u32, at: usize, w: u32| with(k, base, at, w);
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

/// The corner blocks of `k` words of the float format `f` (as [`f32_corners`]).
fn float_corners(f: FloatFormat, k: usize) -> Vec<Vec<u64>> {
    let (m, n) = (f.frac_bits, f.width());
    let sign = 1u64 << (n - 1);
    let word = |field: i64, frac: u64| (field as u64) << m | frac;
    let bias = f.bias();
    let top = (1i64 << f.exp_bits) - 2;
    let (max, one, inf) = (word(top, (1 << m) - 1), word(bias, 0), word(top + 1, 0));
    let fill = |w: u64| vec![w; k];
    let mut c = vec![
        fill(0),
        (0..k).map(|i| if i % 2 == 1 { sign } else { 0 }).collect(),
        with(k, 0, 1, 1),
        with(k, sign | 1, 0, (1 << m) - 1),
        fill(1 << (m - 1)),
        with(k, one, 1, word(top + 1, 1 << (m - 1))),
        with(k, one, 0, inf),
        with(k, sign | word(bias + 2, 1 << (m - 1)), k - 1, sign | inf),
        fill(max),
        with(k, max, 0, sign | max),
        with(k, word(1, 0), 1, 3),
        fill(word(1, 0)),
    ];
    // Under a block maximum of 1.0, 2.5/64 and −3.5/64 (INT8 ties), where they are words.
    if m >= 2 && bias > 5 {
        c.push(with(k, word(bias - 5, 1 << (m - 2)), 1, one));
        c.push(with(k, sign | word(bias - 5, 3 << (m - 2)), 1, one));
    }
    c
}

/// The corner blocks of `k` words of the fix format `f`.
fn fix_corners(f: FixFormat, k: usize) -> Vec<Vec<u64>> {
    let n = f.width();
    let mask = (1u64 << n) - 1;
    let (min, max) = (1u64 << (n - 1), (1u64 << (n - 1)) - 1);
    let fill = |w: u64| vec![w; k];
    let mut c = vec![
        fill(0),
        with(k, 0, 0, min),
        fill(min),
        with(k, max, 1, min),
        with(k, 0, 1, 1),
        fill(mask),
        fill(max),
        with(k, 1, 0, mask),
    ];
    // Under a block maximum of 2^(W−2), INT8 ties 2.5 and −3.5 (k = 2^(W−2) · 2^(6−p)/64).
    if n >= 9 {
        let at = |v: u64| v << (n - 9);
        c.push(with(k, at(5), 1, 1 << (n - 2)));
        c.push(with(k, at(7).wrapping_neg() & mask, 1, 1 << (n - 2)));
    }
    c
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let mx = mx_of(p)?;
    let input = input_of(p)?;
    let cycles = match mode {
        Mode::Exhaustive => {
            return Err(VerifError(format!(
                "--exhaustive is not available for mx-enc on {mx}: a block is {} {input} words \
                 (use --vectors N)",
                mx.block
            )))
        }
        Mode::Vectors(n) => corners(input, mx.block).len() as u64 + n,
    };
    Ok(Plan { cycles, drive })
}

/// A random block of `k` words of `input`.
fn random_words(r: &mut Rng, input: MxInput, k: usize) -> Vec<u64> {
    let n = input.width();
    let mask = (1u64 << n) - 1;
    match input {
        MxInput::F32 => random_block(r, k).into_iter().map(u64::from).collect(),
        _ if r.below(8) == 0 => (0..k).map(|_| r.next_u64() & mask).collect(),
        MxInput::Float(f) => {
            let m = f.frac_bits;
            let top = r.below((1 << f.exp_bits) - 1);
            (0..k)
                .map(|_| {
                    let field = top.saturating_sub(r.below(4));
                    let frac = match r.below(4) {
                        0 => 0,
                        1 => r.below(4) << m.saturating_sub(2),
                        _ => r.next_u64() & ((1 << m) - 1),
                    };
                    let s = if r.coin() { 1u64 << (n - 1) } else { 0 };
                    s | field << m | frac & ((1 << m) - 1)
                })
                .collect()
        }
        MxInput::Fix(_) => {
            let bits = r.below(u64::from(n)) as u32;
            (0..k)
                .map(|_| match r.below(12) {
                    0 => 1u64 << (n - 1),
                    1 => 0,
                    _ => {
                        let b = bits.saturating_sub(r.below(3) as u32);
                        let v = r.next_u64() & ((1u64 << b) - 1);
                        if r.coin() {
                            v.wrapping_neg() & mask
                        } else {
                            v
                        }
                    }
                })
                .collect()
        }
    }
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
    let input = input_of(ctx.p)?;
    let n = input.width();
    let l = ctx.layout;
    let w = mx.elem_width();
    let (valid, x) = (l.slot("in_valid")?, l.slot("x")?);
    let (scale, codes) = (l.slot("scale")?, l.slot("codes")?);
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    let op = |chk: &mut crate::Checker, words: &[u64]| -> Result<()> {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        for (i, &wd) in words.iter().enumerate() {
            put_bits(&mut ins[x..], i * n as usize, n, wd);
        }
        let b = mx
            .quantize_words(input, words)
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
    for block in corners(input, mx.block) {
        op(ctx.chk, &block)?;
    }
    let mut r = Rng(ctx.seed);
    if let Mode::Vectors(count) = ctx.mode {
        for _ in 0..count {
            op(ctx.chk, &random_words(&mut r, input, mx.block))?;
        }
    }
    Ok(())
}
