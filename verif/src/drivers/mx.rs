//! `mx-dot`: two MX blocks (scales `xa`, `xb`; element buses `pa`, `pb`) → the exact sum
//! `acc`, its exponent `exp` and the flags `nan`, `inf`, `inf_neg`, against the golden
//! `MxFormat::dot_block` (an `Exact`: NaN, ±∞, or num·2^exp; `acc` is num, bit for bit).
//!
//! Corner blocks (both modes): every corner code (±0, the smallest subnormal, ±max, the
//! all-ones codes: NaN, ∞ or −max by element type, INT8's −2) repeated over a whole block,
//! against itself and against a random block, under every scale pair of [`SCALES`] (1·1,
//! the extremes 2^−127 and 2^127, and the NaN scale 0xFF on either side).
//! Exhaustive (every element type): every element pair (ca, cb), under each scale pair of
//! [`SCALES`], at position step mod K of blocks whose other elements are random.
//! Vectors: random blocks — elements drawn from all codes a quarter of the time, else from
//! the finite non-NaN ones; scales random, an extreme, or NaN.

use lpgen_golden::mx::{Exact, MxBlock, MxFormat, SCALE_NAN};
use lpgen_hdl::Params;

use super::{Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs take every element pair up to this element width.
const MAX_EXHAUSTIVE_BITS: u32 = 8;

/// Scale pairs: one, the two extremes, mixed, an ordinary pair, and NaN on either side.
pub(crate) const SCALES: [(u8, u8); 7] = [
    (127, 127),
    (0, 0),
    (254, 254),
    (0, 254),
    (130, 119),
    (SCALE_NAN, 127),
    (3, SCALE_NAN),
];

pub(crate) fn mx_of(p: &Params) -> Result<MxFormat> {
    p.mx.ok_or_else(|| {
        VerifError(format!(
            "{} needs an MX block format (--format mx:ELEM[:bK])",
            p.unit.name()
        ))
    })
}

/// The element codes that are worth a whole block: ±0, ±the smallest nonzero, ±max, the
/// all-ones code (NaN, ∞, or −max) and INT8's 0x80.
pub(crate) fn corner_codes(mx: &MxFormat) -> Vec<u8> {
    let w = mx.elem_width();
    let all = (1u16 << w) - 1;
    let sign = 1u8 << (w - 1);
    let finite: Vec<u8> = (0..=all)
        .map(|c| c as u8)
        .filter(|&c| mx.elem_to_f64(c).is_finite())
        .collect();
    let max = *finite
        .iter()
        .filter(|&&c| c & sign == 0)
        .max_by(|&&x, &&y| mx.elem_to_f64(x).total_cmp(&mx.elem_to_f64(y)))
        .expect("finite codes");
    let mut v = vec![
        0,
        sign,
        1,
        sign | 1,
        max,
        max | sign,
        all as u8,
        sign - 1,
        sign,
    ];
    // Infinities (E5M2): +∞ and −∞.
    v.extend(
        (0..=all)
            .map(|c| c as u8)
            .filter(|&c| mx.elem_to_f64(c).is_infinite()),
    );
    v.sort_unstable();
    v.dedup();
    v
}

/// The finite codes (random elements that give a finite result).
pub(crate) fn finite_codes(mx: &MxFormat) -> Vec<u8> {
    (0..1u16 << mx.elem_width())
        .map(|c| c as u8)
        .filter(|&c| mx.elem_to_f64(c).is_finite())
        .collect()
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let mx = mx_of(p)?;
    let w = mx.elem_width();
    let corners = corner_codes(&mx).len() as u64 * 2 * SCALES.len() as u64;
    let cycles = match mode {
        Mode::Exhaustive if w > MAX_EXHAUSTIVE_BITS => {
            return Err(VerifError(format!(
                "--exhaustive is not available for mx-dot on {mx}: every element pair is \
                 2^{} (exhaustive up to {MAX_EXHAUSTIVE_BITS}-bit elements; use --vectors N)",
                2 * w
            )))
        }
        Mode::Exhaustive => corners + ((SCALES.len() as u64) << (2 * w)),
        Mode::Vectors(n) => corners + n,
    };
    Ok(Plan { cycles, drive })
}

/// A random block of `k` codes: from all codes a quarter of the time, else finite ones.
fn random_codes(r: &mut Rng, mx: &MxFormat, finite: &[u8]) -> Vec<u8> {
    let any = r.below(4) == 0;
    (0..mx.block)
        .map(|_| {
            if any {
                r.below(1 << mx.elem_width()) as u8
            } else {
                r.pick(finite)
            }
        })
        .collect()
}

fn random_scale(r: &mut Rng) -> u8 {
    match r.below(16) {
        0 => SCALE_NAN,
        1..=3 => r.pick(&[0u8, 1, 253, 254]),
        _ => r.below(255) as u8,
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let mx = mx_of(ctx.p)?;
    let l = ctx.layout;
    let w = mx.elem_width();
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
    let (nan, inf, inf_neg) = (l.slot("nan")?, l.slot("inf")?, l.slot("inf_neg")?);
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    let op = |chk: &mut crate::Checker, a: &MxBlock, b: &MxBlock| -> Result<()> {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        ins[xa] = u64::from(a.scale);
        ins[xb] = u64::from(b.scale);
        for (i, (&ca, &cb)) in a.codes.iter().zip(&b.codes).enumerate() {
            put_bits(&mut ins[pa..], i * w as usize, w, u64::from(ca));
            put_bits(&mut ins[pb..], i * w as usize, w, u64::from(cb));
        }
        let mut want = vec![0u64; out_n];
        match mx
            .dot_block(a, b)
            .map_err(|e| VerifError(format!("golden {mx}: {e}")))?
        {
            Exact::Nan => want[nan] = 1,
            Exact::Inf(neg) => {
                want[inf] = 1;
                want[inf_neg] = u64::from(neg);
            }
            Exact::Fin { num, exp } => {
                let n = i128::try_from(num).expect("a block's exact sum fits an i128") as u128;
                put_bits(&mut want[acc_slot..], 0, acc_w.min(64), n as u64);
                if acc_w > 64 {
                    put_bits(&mut want[acc_slot..], 64, acc_w - 64, (n >> 64) as u64);
                }
                put_bits(&mut want[exp_slot..], 0, exp_w, exp as u64);
            }
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
        Ok(())
    };
    let mut r = Rng(ctx.seed);
    let finite = finite_codes(&mx);
    let block = |scale: u8, codes: Vec<u8>| MxBlock { scale, codes };
    for &c in &corner_codes(&mx) {
        for &(sa, sb) in &SCALES {
            let same = vec![c; mx.block];
            op(ctx.chk, &block(sa, same.clone()), &block(sb, same.clone()))?;
            let other = random_codes(&mut r, &mx, &finite);
            op(ctx.chk, &block(sa, same), &block(sb, other))?;
        }
    }
    match ctx.mode {
        Mode::Exhaustive => {
            let mut step = 0usize;
            for &(sa, sb) in &SCALES {
                for ca in 0..1u16 << w {
                    for cb in 0..1u16 << w {
                        let (mut a, mut b) = (
                            random_codes(&mut r, &mx, &finite),
                            random_codes(&mut r, &mx, &finite),
                        );
                        let at = step % mx.block;
                        (a[at], b[at]) = (ca as u8, cb as u8);
                        step += 1;
                        op(ctx.chk, &block(sa, a), &block(sb, b))?;
                    }
                }
            }
        }
        Mode::Vectors(n) => {
            for _ in 0..n {
                let a = block(random_scale(&mut r), random_codes(&mut r, &mx, &finite));
                let b = block(random_scale(&mut r), random_codes(&mut r, &mx, &finite));
                op(ctx.chk, &a, &b)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corner blocks reach every kind of result: NaN (the NaN scale), finite, and ±∞ for
    /// E5M2; every corner code is an element word, and ±max and the smallest subnormal are
    /// among them (written from the specification: E5M2 0x7b = 57344, 0x01 = 2^−16;
    /// E2M1 0x7 = 6, 0x1 = 0.5).
    #[test]
    fn corners_reach_every_kind_of_result() {
        let e5m2: MxFormat = "mx:fp8:e5m2:b2".parse().unwrap();
        let c = corner_codes(&e5m2);
        for code in [0x7b, 0xfb, 0x01, 0x7c, 0xfc] {
            assert!(c.contains(&code), "{code:#x} in {c:x?}");
        }
        assert_eq!(e5m2.elem_to_f64(0x7b), 57344.0);
        assert_eq!(e5m2.elem_to_f64(0x01), 2f64.powi(-16));
        let fp4: MxFormat = "mx:fp4:e2m1:b2".parse().unwrap();
        let c = corner_codes(&fp4);
        assert!(
            c.contains(&0x7) && c.contains(&0xf) && c.contains(&0x1),
            "{c:x?}"
        );
        assert!(c.iter().all(|&x| x < 16));
        let (mut nan, mut inf, mut fin) = (0, 0, 0);
        for &x in &corner_codes(&e5m2) {
            for &(sa, sb) in &SCALES {
                let a = MxBlock {
                    scale: sa,
                    codes: vec![x; 2],
                };
                let b = MxBlock {
                    scale: sb,
                    codes: vec![x; 2],
                };
                match e5m2.dot_block(&a, &b).unwrap() {
                    Exact::Nan => nan += 1,
                    Exact::Inf(_) => inf += 1,
                    Exact::Fin { .. } => fin += 1,
                }
            }
        }
        assert!(nan > 0 && inf > 0 && fin > 0, "{nan} {inf} {fin}");
    }
}
