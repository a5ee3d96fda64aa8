//! `nvfp4-enc`: a block of K f32 words (`x`) and the tensor scale `s_enc` → the block `scale`
//! and the E2M1 `codes`, against the golden `ScaledFormat::group_scale` (amax = the largest
//! |x|) and `elem_code`. Where the golden model refuses the block (a NaN or ±∞ word, a tensor
//! scale that is not a finite f32 > 0) the unit's answer is the scale's NaN code and codes 0.
//!
//! Corners: zeros of both signs, an all-zero block (amax 0), f32 subnormals, ±max f32, a NaN,
//! ±∞, and the refused tensor scales (0, −1, ∞, NaN) and extreme ones (the smallest subnormal,
//! the largest f32).
//! The scale sweep (both modes): under tensor scales 1, 2^−20, 2^40, 168, the smallest f32
//! subnormal and the largest f32, for every finite scale code c, blocks whose amax is
//! 6 · S_c / s_enc, the midpoint 6 · (S_c + S_c+1)/2 / s_enc (a tie of the scale rounding),
//! one f32 step either side of it and 2^14 steps either side (the last bit of the product's
//! head: the division's remainder decides); the other 15 words sit on E2M1's grid points and the
//! midpoints between them (ties of the element rounding) and beyond 6 (saturation), of both
//! signs, under S_c.
//! Random blocks (`--vectors N`): a block exponent from 2^−150 to 2^127, elements a few binades
//! below it (a third with at most four significand bits: ties); the tensor scale from the
//! golden `tensor_scale_for` with a tensor amax from 2^−4 to 2^24 times the block's (below it:
//! the scale saturates; far above: subnormal and zero scales), or a random positive f32; a
//! sixteenth any bit patterns (refused ones among them).

use lpgen_golden::scale::{Scale, ScaledFormat};
use lpgen_golden::{FloatFormat, Format};
use lpgen_hdl::Params;

use super::{Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Tensor scales of the sweep: 1, 2^−20, 2^40, 168 (A = 16), the smallest subnormal, max f32.
const SWEEP_SCALES: [u32; 6] = [
    0x3f80_0000,
    0x3580_0000,
    0x5380_0000,
    0x4328_0000,
    0x0000_0001,
    0x7f7f_ffff,
];

pub(crate) fn format_of(p: &Params) -> Result<ScaledFormat> {
    p.scaled.ok_or_else(|| {
        VerifError(format!(
            "{} needs an NVFP4 block format (--format nvfp4)",
            p.unit.name()
        ))
    })
}

/// The scale's float format (UE4M3 or UE5M3; the generator refused the others).
fn scale_format(sf: &ScaledFormat) -> Result<FloatFormat> {
    match sf.scale {
        Scale::Word {
            format: Format::Float(f),
            ..
        } => Ok(f),
        _ => Err(VerifError(format!("{sf}: not a float block scale"))),
    }
}

fn block_of(sf: &ScaledFormat) -> usize {
    match sf.granularity {
        lpgen_golden::scale::Granularity::Block(k) => k,
        _ => 1,
    }
}

/// The golden answer: (scale code, element codes).
pub(crate) fn golden(sf: &ScaledFormat, words: &[u32], s: u32) -> Result<(u64, Vec<u64>)> {
    let sfmt = scale_format(sf)?;
    let finite = |w: u32| (w >> 23) & 0xff != 0xff;
    let sv = f32::from_bits(s);
    if !(words.iter().all(|&w| finite(w)) && sv.is_finite() && sv > 0.0) {
        let mask = (1u64 << sf.scale.code_bits()) - 1;
        return Ok((sfmt.nan() & mask, vec![0; words.len()]));
    }
    let xs: Vec<f64> = words
        .iter()
        .map(|&w| f64::from(f32::from_bits(w)))
        .collect();
    let amax = xs.iter().fold(0f64, |m, v| m.max(v.abs()));
    let sc = sf.group_scale(amax, s, 0);
    let codes = xs
        .iter()
        .map(|&x| sf.elem_code(x, s, sc))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| VerifError(format!("golden {sf}: {}", e.0)))?;
    Ok((sc, codes))
}

/// The corner (block, tensor scale) pairs of `k` words.
fn corners(k: usize) -> Vec<(Vec<u32>, u32)> {
    let with = |base: u32, at: usize, w: u32| {
        let mut v = vec![base; k];
        v[at % k] = w;
        v
    };
    let one = 0x3f80_0000;
    let mut c = vec![];
    for s in [one, 0x4328_0000, 0x0000_0001, 0x7f7f_ffff, 0x0080_0000] {
        c.push((vec![0; k], s));
        c.push((
            (0..k)
                .map(|i| if i % 2 == 1 { 0x8000_0000 } else { 0 })
                .collect(),
            s,
        ));
        c.push((with(0, 1, 1), s));
        c.push((with(0x8000_0001, 0, 0x007f_ffff), s));
        c.push((vec![0x7f7f_ffff; k], s));
        c.push((with(0x7f7f_ffff, 0, 0xff7f_ffff), s));
        c.push((with(0x40c0_0000, 1, 0xbf80_0000), s));
    }
    for s in [
        0,
        0x8000_0000,
        0xbf80_0000,
        0x7f80_0000,
        0x7fc0_0000,
        0xff80_0000,
    ] {
        c.push((with(one, 0, 0x40c0_0000), s));
    }
    for bad in [0x7fc0_0000, 0x7f80_0000, 0xff80_0000, 0xffc0_0001] {
        c.push((with(one, k - 1, bad), one));
    }
    c
}

/// Quarters of S (of the elements under a scale S): E2M1's grid points 0.5 … 6, the midpoints
/// between them, 0 and values past 6.
const QUARTERS: [u32; 15] = [1, 2, 3, 5, 6, 7, 10, 12, 14, 20, 24, 26, 0, 4, 40];

/// The sweep's (block, tensor scale) pairs: every finite scale code under each of
/// [`SWEEP_SCALES`].
fn sweep(sf: &ScaledFormat, k: usize) -> Result<Vec<(Vec<u32>, u32)>> {
    let codes: Vec<u64> = (0..1u64 << sf.scale.code_bits())
        .filter(|&c| sf.scale.value(c).is_finite())
        .collect();
    let mut v = vec![];
    for &s in &SWEEP_SCALES {
        let sd = f64::from(f32::from_bits(s));
        for (n, &c) in codes.iter().enumerate() {
            let sc = sf.scale.value(c);
            let next = codes.get(n + 1).map_or(sc * 2.0, |&d| sf.scale.value(d));
            let exact = (6.0 * sc / sd) as f32;
            let mid = (3.0 * (sc + next) / sd) as f32;
            let up = f32::from_bits(mid.to_bits() + 1);
            let down = f32::from_bits(mid.to_bits().saturating_sub(1));
            // One step of a product head's last bit (bit 14 of a 24-bit significand) either
            // side of the tie: under s_enc = 1 the remainder of the division by 3 alone says
            // which way it rounds.
            let head_up = f32::from_bits(mid.to_bits() + (1 << 14));
            let head_down = f32::from_bits(mid.to_bits().saturating_sub(1 << 14));
            let amaxes = [exact, mid, up, down, head_up, head_down];
            for (j, amax) in amaxes.into_iter().enumerate() {
                if !amax.is_finite() {
                    continue;
                }
                let mut b: Vec<u32> = (0..k)
                    .map(|i| {
                        let q = QUARTERS[(i + j) % QUARTERS.len()];
                        let x = (f64::from(q) / 4.0 * sc / sd) as f32;
                        let x = if (i + n) % 3 == 1 { -x } else { x };
                        x.to_bits()
                    })
                    .collect();
                b[(n + j) % k] = amax.to_bits();
                v.push((b, s));
            }
        }
    }
    Ok(v)
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let sf = format_of(p)?;
    let k = block_of(&sf);
    let fixed = (corners(k).len() + sweep(&sf, k)?.len()) as u64;
    let cycles = match mode {
        Mode::Exhaustive => fixed,
        Mode::Vectors(n) => fixed + n,
    };
    Ok(Plan { cycles, drive })
}

/// A random f32 with exponent `e` (unbiased) and a full or few-bit significand, either sign.
fn random_word(r: &mut Rng, e: i32) -> u32 {
    let sig = if r.below(3) == 0 {
        r.below(16)
    } else {
        r.below(1 << 24)
    };
    let v = sig as f64 * 2f64.powi(e - 23);
    let v = if r.coin() { -v } else { v };
    (v as f32).to_bits()
}

/// A random block of `k` words and a tensor scale.
pub(crate) fn random_block(r: &mut Rng, sf: &ScaledFormat, k: usize) -> (Vec<u32>, u32) {
    if r.below(16) == 0 {
        let b = (0..k).map(|_| r.next_u64() as u32).collect();
        return (b, r.next_u64() as u32);
    }
    let top = r.below(279) as i32 - 150;
    let b: Vec<u32> = (0..k)
        .map(|_| match r.below(10) {
            0 => 0,
            1 => 0x8000_0000,
            _ => {
                let e = top - r.below(6) as i32;
                random_word(r, e)
            }
        })
        .collect();
    let amax = b
        .iter()
        .map(|&w| f64::from(f32::from_bits(w)).abs())
        .fold(0f64, f64::max);
    let s = match r.below(8) {
        0 => (r.next_u64() as u32) & 0x7fff_ffff,
        _ => {
            let a = amax * 2f64.powi(r.below(29) as i32 - 4);
            sf.tensor_scale_for(a, 0)
        }
    };
    // A random positive f32 may be ∞ or NaN: refused, as any bits.
    (b, s)
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let sf = format_of(ctx.p)?;
    let k = block_of(&sf);
    let l = ctx.layout;
    let (valid, x, s_in) = (l.slot("in_valid")?, l.slot("x")?, l.slot("s_enc")?);
    let (scale, codes) = (l.slot("scale")?, l.slot("codes")?);
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    let op = |chk: &mut crate::Checker, words: &[u32], s: u32| -> Result<()> {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        for (i, &wd) in words.iter().enumerate() {
            put_bits(&mut ins[x..], i * 32, 32, u64::from(wd));
        }
        ins[s_in] = u64::from(s);
        let (sc, cs) = golden(&sf, words, s)?;
        let mut want = vec![0u64; out_n];
        want[scale] = sc;
        for (i, &c) in cs.iter().enumerate() {
            put_bits(&mut want[codes..], i * 4, 4, c);
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
        Ok(())
    };
    for (b, s) in corners(k).into_iter().chain(sweep(&sf, k)?) {
        op(ctx.chk, &b, s)?;
    }
    let mut r = Rng(ctx.seed);
    if let Mode::Vectors(n) = ctx.mode {
        for _ in 0..n {
            let (b, s) = random_block(&mut r, &sf, k);
            op(ctx.chk, &b, s)?;
        }
    }
    Ok(())
}
