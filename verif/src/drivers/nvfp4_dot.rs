//! `nvfp4-dot`: two NVFP4 blocks (UE4M3 scales `xa`, `xb`; E2M1 buses `pa`, `pb`) → the exact
//! `acc`, its exponent `exp` and `nan`, against the golden `scale::dot::dot_block` (an `Exact`:
//! NaN, or num · 2^exp; `acc` is num and `exp` is exp, bit for bit). A scale byte >= 0x80 (the
//! golden model refuses it: not a UE4M3 scale) gives `nan`.
//!
//! Corners (both modes): each E2M1 code over a whole block, against itself and a random block,
//! under the scale pairs of [`SCALES`]. Exhaustive: every element pair (ca, cb) at position
//! step mod K of random blocks under each pair of [`SCALES`], then every pair of scale bytes
//! (all 256 × 256, refused ones included) on random blocks. Vectors: random blocks under
//! random scale bytes (an extreme, the NaN, a refused byte now and then).

use lpgen_golden::mx::Exact;
use lpgen_golden::scale::dot::dot_block;
use lpgen_golden::scale::Nvfp4Block;
use lpgen_hdl::Params;

use super::nvfp4_enc::format_of;
use super::{Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Scale pairs: 1 · 1, zero, the smallest subnormal, the largest (448), mixed, the NaN 0x7F
/// and a refused byte on either side.
pub(crate) const SCALES: [(u8, u8); 8] = [
    (0x38, 0x38),
    (0x00, 0x38),
    (0x01, 0x01),
    (0x7e, 0x7e),
    (0x01, 0x7e),
    (0x53, 0x0f),
    (0x7f, 0x38),
    (0x38, 0x80),
];

pub(crate) fn block_of(p: &Params) -> Result<usize> {
    match format_of(p)?.granularity {
        lpgen_golden::scale::Granularity::Block(k) => Ok(k),
        g => Err(VerifError(format!("nvfp4-dot on {g} granularity"))),
    }
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    block_of(p)?;
    let corners = 16 * 2 * SCALES.len() as u64;
    let cycles = match mode {
        Mode::Exhaustive => corners + 256 * SCALES.len() as u64 + 256 * 256,
        Mode::Vectors(n) => corners + n,
    };
    Ok(Plan { cycles, drive })
}

fn random_codes(r: &mut Rng, k: usize) -> Vec<u8> {
    (0..k).map(|_| r.below(16) as u8).collect()
}

fn random_scale(r: &mut Rng) -> u8 {
    match r.below(32) {
        0 => 0x7f,
        1 => 0x80 | r.below(128) as u8,
        2..=5 => r.pick(&[0u8, 1, 7, 8, 0x7d, 0x7e]),
        _ => r.below(127) as u8,
    }
}

/// The golden answer: `None` for NaN (and a refused byte), else (num, exp).
fn golden(a: &Nvfp4Block, b: &Nvfp4Block) -> Result<Option<(i128, i64)>> {
    if a.scale >= 0x80 || b.scale >= 0x80 {
        return Ok(None);
    }
    match dot_block(a, b).map_err(|e| VerifError(format!("golden nvfp4 dot: {}", e.0)))? {
        Exact::Fin { num, exp } => Ok(Some((
            i128::try_from(num).expect("a block's exact sum fits an i128"),
            exp,
        ))),
        Exact::Nan | Exact::Inf(_) => Ok(None),
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let k = block_of(ctx.p)?;
    let l = ctx.layout;
    let (valid, xa, xb, pa, pb) = (
        l.slot("in_valid")?,
        l.slot("xa")?,
        l.slot("xb")?,
        l.slot("pa")?,
        l.slot("pb")?,
    );
    let acc = l.port("acc")?;
    let (acc_slot, acc_w) = (acc.slot, acc.width);
    let exp = l.port("exp")?;
    let (exp_slot, exp_w) = (exp.slot, exp.width);
    let nan = l.slot("nan")?;
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    let op = |chk: &mut crate::Checker, a: &Nvfp4Block, b: &Nvfp4Block| -> Result<()> {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        ins[xa] = u64::from(a.scale);
        ins[xb] = u64::from(b.scale);
        for (i, (&ca, &cb)) in a.codes.iter().zip(&b.codes).enumerate() {
            put_bits(&mut ins[pa..], i * 4, 4, u64::from(ca));
            put_bits(&mut ins[pb..], i * 4, 4, u64::from(cb));
        }
        let mut want = vec![0u64; out_n];
        match golden(a, b)? {
            None => want[nan] = 1,
            Some((num, e)) => {
                put_bits(&mut want[acc_slot..], 0, acc_w, num as u64);
                put_bits(&mut want[exp_slot..], 0, exp_w, e as u64);
            }
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
        Ok(())
    };
    let block = |scale: u8, codes: Vec<u8>| Nvfp4Block {
        tensor_scale: 0x3f80_0000,
        scale,
        codes,
    };
    let mut r = Rng(ctx.seed);
    for c in 0..16u8 {
        for &(sa, sb) in &SCALES {
            op(ctx.chk, &block(sa, vec![c; k]), &block(sb, vec![c; k]))?;
            let other = random_codes(&mut r, k);
            op(ctx.chk, &block(sa, vec![c; k]), &block(sb, other))?;
        }
    }
    match ctx.mode {
        Mode::Exhaustive => {
            let mut step = 0usize;
            for &(sa, sb) in &SCALES {
                for ca in 0..16u8 {
                    for cb in 0..16u8 {
                        let (mut a, mut b) = (random_codes(&mut r, k), random_codes(&mut r, k));
                        (a[step % k], b[step % k]) = (ca, cb);
                        step += 1;
                        op(ctx.chk, &block(sa, a), &block(sb, b))?;
                    }
                }
            }
            for sa in 0..=255u8 {
                for sb in 0..=255u8 {
                    let (a, b) = (random_codes(&mut r, k), random_codes(&mut r, k));
                    op(ctx.chk, &block(sa, a), &block(sb, b))?;
                }
            }
        }
        Mode::Vectors(n) => {
            for _ in 0..n {
                let a = block(random_scale(&mut r), random_codes(&mut r, k));
                let b = block(random_scale(&mut r), random_codes(&mut r, k));
                op(ctx.chk, &a, &b)?;
            }
        }
    }
    Ok(())
}
