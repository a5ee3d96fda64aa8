//! The 8-bit codecs: `q8-enc` (x, scale → code) and `q8-dec` (code, scale → y and its flag,
//! `overflow` or `nar`), against the golden `Q8Type::encode_word` / `decode_word_flagged`.
//!
//! Scale words: the format's corner cases (zero, negative, NaR, ±min, ±max, one and its
//! neighbours) and a few random ones. Exhaustive: the encoder takes every x word (up to
//! 16-bit formats) with each of them; the decoder every code with every scale word up to
//! 12-bit formats, else with them. Vectors: every corner pair, then random pairs.
//!
//! f32 words (32 bits: vectors only for the encoder): corner scales are ±0, subnormals, the
//! normal extremes, ±∞, NaN, negative and ordinary values; random words are any pattern half
//! the time, else values of moderate exponent; a quarter of the encoder's random pairs are a
//! scale of few significant bits with x exactly at a midpoint times it or one ulp either side.

use lpgen_golden::{Family, Format, F32};
use lpgen_hdl::{Params, Unit};

use super::words::{fix_specials, fix_word, posit_specials, posit_word};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive encoder runs take every x word up to this width.
const MAX_ENC_BITS: u32 = 16;
/// Exhaustive decoder runs take every scale word up to this width.
const MAX_DEC_SCALE_BITS: u32 = 12;
/// Random scale words beside the corner cases.
const RANDOM_SCALES: usize = 8;

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let w = match p.format {
        Format::Fix(_) | Format::Posit(_) | Format::F32(F32) => p.format.width(),
        other => {
            return Err(VerifError(format!(
                "{} needs a fix, posit or f32 format (e.g. fix:7:8, posit:16:1, f32), not {other}",
                p.unit.name()
            )))
        }
    };
    let scales = (specials(p.format).len() + RANDOM_SCALES) as u64;
    let cycles = match (p.unit, mode) {
        (Unit::Q8Enc, Mode::Exhaustive) if w > MAX_ENC_BITS => {
            return Err(no_exhaustive(
                p,
                &format!("every x word is 2^{w} (exhaustive up to {MAX_ENC_BITS} bits)"),
            ))
        }
        (Unit::Q8Enc, Mode::Exhaustive) => scales << w,
        (_, Mode::Exhaustive) if w <= MAX_DEC_SCALE_BITS => 256 << w,
        (_, Mode::Exhaustive) => 256 * scales,
        (Unit::Q8Enc, Mode::Vectors(n)) => n + scales * scales,
        (_, Mode::Vectors(n)) => n + 256 * scales,
    };
    Ok(Plan { cycles, drive })
}

/// The format's corner-case words.
fn specials(f: Format) -> Vec<u64> {
    match f {
        Format::Fix(x) => {
            let mut v = fix_specials(x);
            v.extend([x.from_int(3), x.from_int(-3), x.one() >> 1, x.one() << 1]);
            v.sort_unstable();
            v.dedup();
            v
        }
        Format::Posit(x) => posit_specials(x),
        Format::F32(F32) => [
            0.0f32,
            -0.0,
            f32::from_bits(1),
            f32::from_bits(0x0040_0001),
            f32::from_bits(0x807f_ffff),
            f32::MIN_POSITIVE,
            1.0,
            -1.0,
            0.75,
            3.0,
            f32::MAX,
            -f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ]
        .iter()
        .map(|x| x.to_bits() as u64)
        .chain([0x7fc0_0000, 0xffc0_0001, 0x7f80_0001])
        .collect(),
        _ => unreachable!("checked by plan"),
    }
}

/// A random f32 word: any pattern, or a value 2^(−40..40) of either sign.
fn f32_word(r: &mut Rng) -> u64 {
    let bits = r.next_u64() as u32;
    if r.coin() {
        return bits as u64;
    }
    let exp = 127 - 40 + r.below(81) as u32;
    ((bits & 0x807f_ffff) | exp << 23) as u64
}

/// A scale of few significant bits (odd·2^e, odd < 16) and an f32 x exactly at a midpoint
/// times it, or one ulp either side, of either sign: None when the midpoints tried do not
/// give an f32 product.
fn f32_tie(r: &mut Rng, ty: lpgen_golden::q8::Q8Type) -> Option<(u64, u64)> {
    let s = (2 * r.below(8) + 1) as f32 * 2f32.powi(r.below(61) as i32 - 30);
    let mids = &ty.codebook().midpoints;
    for _ in 0..16 {
        let exact = mids[r.below(mids.len() as u64) as usize] * s as f64;
        let x = exact as f32;
        if x as f64 == exact && x != 0.0 {
            let w = x.to_bits() as u64 + r.below(3) - 1;
            let sign = if r.coin() { 0x8000_0000 } else { 0 };
            return Some((w | sign, s.to_bits() as u64));
        }
    }
    None
}

fn random_word(r: &mut Rng, f: Format) -> u64 {
    match f {
        Format::Fix(x) => {
            let small = r.coin();
            fix_word(r, x, small)
        }
        Format::Posit(x) => posit_word(r, x),
        Format::F32(F32) => f32_word(r),
        _ => unreachable!("checked by plan"),
    }
}

/// Corner cases and a few random scale words.
fn scale_words(f: Format, r: &mut Rng) -> Vec<u64> {
    let mut v = specials(f);
    for _ in 0..RANDOM_SCALES {
        v.push(random_word(r, f));
    }
    v
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let l = ctx.layout;
    let (f, ty) = (ctx.p.format, ctx.p.q8);
    let w = f.width();
    let enc = ctx.p.unit == Unit::Q8Enc;
    let (input, output) = if enc { ("x", "code") } else { ("code", "y") };
    let (a, s, valid, out) = (
        l.slot(input)?,
        l.slot("scale")?,
        l.slot("in_valid")?,
        l.slot(output)?,
    );
    // The decoder's flag: overflow (fix), nar (posit) or nan (f32).
    let flag = match (enc, f) {
        (true, _) => None,
        (false, Format::Fix(_)) => Some(l.slot("overflow")?),
        (false, Format::F32(F32)) => Some(l.slot("nan")?),
        (false, _) => Some(l.slot("nar")?),
    };
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    ins[valid] = 1;
    let golden = |x: u64, scale: u64| -> Result<(u64, bool)> {
        let r = if enc {
            ty.encode_word(f, x, scale).map(|c| (u64::from(c), false))
        } else {
            ty.decode_word_flagged(f, x as u8, scale)
        };
        r.map_err(|e| VerifError(format!("golden {ty}: {e}")))
    };
    let mut op = |chk: &mut crate::Checker, x: u64, scale: u64| -> Result<()> {
        ins[a] = x;
        ins[s] = scale;
        let (y, flagged) = golden(x, scale)?;
        want[out] = y;
        if let Some(slot) = flag {
            want[slot] = flagged as u64;
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
        Ok(())
    };
    let mut r = Rng(ctx.seed);
    let scales = scale_words(f, &mut r);
    let inputs: Vec<u64> = if enc { specials(f) } else { (0..256).collect() };
    match ctx.mode {
        Mode::Exhaustive if enc => {
            for &scale in &scales {
                for x in 0..1u64 << w {
                    op(ctx.chk, x, scale)?;
                }
            }
        }
        Mode::Exhaustive => {
            let all: Vec<u64> = if w <= MAX_DEC_SCALE_BITS {
                (0..1u64 << w).collect()
            } else {
                scales
            };
            for &scale in &all {
                for code in 0..256 {
                    op(ctx.chk, code, scale)?;
                }
            }
        }
        Mode::Vectors(n) => {
            for &scale in &scales {
                for &x in &inputs {
                    op(ctx.chk, x, scale)?;
                }
            }
            for _ in 0..n {
                let scale = if r.below(4) == 0 {
                    r.pick(&scales)
                } else {
                    random_word(&mut r, f)
                };
                let tie = (enc && f == Format::F32(F32) && r.below(4) == 0)
                    .then(|| f32_tie(&mut r, ty))
                    .flatten();
                let (x, scale) = match tie {
                    Some(pair) => pair,
                    None if enc => (random_word(&mut r, f), scale),
                    None => (r.below(256), scale),
                };
                op(ctx.chk, x, scale)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::q8::Q8Type;

    /// Most tie attempts give one, and a third of them exact ties (not a neighbour).
    #[test]
    fn f32_ties_are_found() {
        let mut r = Rng(7);
        for ty in Q8Type::ALL {
            let mut exact = 0;
            let mut found = 0;
            for _ in 0..3000 {
                let Some((x, s)) = f32_tie(&mut r, ty) else {
                    continue;
                };
                found += 1;
                let (x, s) = (
                    f32::from_bits(x as u32).abs() as f64,
                    f32::from_bits(s as u32),
                );
                exact += ty.codebook().midpoints.iter().any(|&m| m * s as f64 == x) as u32;
            }
            assert!(found > 2000, "{ty}: {found}");
            assert!(exact > 500, "{ty}: {exact}");
        }
    }
}
