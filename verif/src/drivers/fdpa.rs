//! `fdpa` (a, b: L operand words each; c: the output word → y, nan): one chunk of a GPU
//! matrix unit's dot product, against the golden `FdpaPlan::dot` on L pairs (one step,
//! C ← step(chunk, C)).
//!
//! Exhaustive (L·N ≤ 8: every operand tuple, e.g. all pairs of fp4 pairs at L = 2): each
//! tuple twice, with C = +0 and with C from the corner words of the output format in turn.
//! Vectors: corner chunks first (every special operand word at the first and the last
//! position of a random finite chunk, every corner C with a random chunk and with zeros, the
//! chunks where e_zero decides the result by one place, [`e_zero_chunks`]), then random chunks of five kinds:
//! finite words, a narrow exponent band (many terms survive the alignment), tiny words
//! (subnormals and the lowest binades, some zeros: e_zero leads where C is 0), cancellation to zero (the second half of the chunk negates the first, C = 0 or the
//! negated sum of the rest), and a few specials; C is +0, a random word, near the chunk's
//! sum or a corner word.

use lpgen_golden::float::fdpa::FdpaPlan;
use lpgen_golden::Family;
use lpgen_golden::{FloatFormat, Format};
use lpgen_hdl::Params;

use super::float_words::{float_specials, float_word};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs take every operand tuple up to this many bits (L·2·N).
const MAX_EXHAUSTIVE_BITS: u32 = 16;

/// The golden plan of an fdpa design (as the generator resolves it).
pub(crate) fn plan_of(p: &Params) -> Result<FdpaPlan> {
    let (Format::Float(f), Some(mode)) = (p.format, p.fdpa) else {
        return Err(VerifError(format!(
            "fdpa needs a float format and --fdpa, not {} ({:?})",
            p.format,
            p.fdpa.map(|m| m.to_string())
        )));
    };
    mode.plan(&f).map_err(|e| VerifError(e.0))
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let pl = plan_of(p)?;
    let bits = 2 * pl.chunk.l * pl.fmt.width();
    let corners = (float_specials(pl.fmt).len() * 2 + corner_c(&pl).len() * 2) as u64
        + e_zero_chunks(&pl).len() as u64;
    let cycles = match mode {
        Mode::Exhaustive if bits > MAX_EXHAUSTIVE_BITS => {
            return Err(no_exhaustive(
                p,
                &format!(
                    "{} operand pairs of {} bits are 2^{bits} tuples (exhaustive up to \
                     2^{MAX_EXHAUSTIVE_BITS})",
                    pl.chunk.l,
                    pl.fmt.width()
                ),
            ))
        }
        Mode::Exhaustive => 2u64 << bits,
        Mode::Vectors(n) => corners + n,
    };
    Ok(Plan { cycles, drive })
}

/// Corner words of the output format (C): ±0, ±1, ±the smallest subnormal and normal,
/// ±max, ±∞, NaN.
fn corner_c(pl: &FdpaPlan) -> Vec<u64> {
    float_specials(pl.output())
}

/// The word of 2^x in `f`, if it is one.
fn pow2(f: FloatFormat, x: i64) -> Option<u64> {
    let v = 2f64.powi(i32::try_from(x).ok()?);
    let w = f.from_f64(v);
    (f.to_f64(w) == v).then_some(w)
}

/// Chunks where e_zero decides the result (C = +0 leads, every product below it): a product
/// at the truncation boundary 2^(e_zero − F) beside one at the output's last place (rz: with
/// the other sign, so that the boundary bit moves the result across a last place) or at half
/// of it (rne: a tie that the boundary bit breaks). An e_zero one higher drops the boundary
/// product and changes the result. Empty where the operand format cannot reach there (L < 2,
/// or products that stay above e_zero, as fp8's).
pub(crate) fn e_zero_chunks(pl: &FdpaPlan) -> Vec<(Vec<u64>, Vec<u64>)> {
    let (f, out, l) = (pl.fmt, pl.output(), pl.chunk.l as usize);
    let e_zero = pl.chunk.rho.e_zero();
    let lsb = out.emin() - i64::from(out.frac_bits);
    let (p1, neg2) = match pl.chunk.rho {
        lpgen_golden::float::fdpa::Rho::RneF16 => (lsb - 1, false),
        lpgen_golden::float::fdpa::Rho::RzF32 | lpgen_golden::float::fdpa::Rho::RzE8m13 => {
            (lsb, true)
        }
    };
    let p2 = e_zero - i64::from(pl.chunk.f);
    let pair = |p: i64| Some((pow2(f, p - p / 2)?, pow2(f, p / 2)?));
    let (Some((a1, b1)), Some((a2, b2)), true) = (pair(p1), pair(p2), l >= 2 && p1 < e_zero) else {
        return vec![];
    };
    let mut out_chunks = vec![];
    for neg in [false, true] {
        let (mut a, mut b) = (vec![0; l], vec![0; l]);
        (a[0], b[0]) = (if neg { f.neg(a1) } else { a1 }, b1);
        (a[1], b[1]) = (if neg != neg2 { f.neg(a2) } else { a2 }, b2);
        out_chunks.push((a, b));
    }
    out_chunks
}

/// A finite operand word (random, biased to hard binades).
fn finite(r: &mut Rng, f: FloatFormat) -> u64 {
    loop {
        let w = float_word(r, f);
        if f.to_f64(w).is_finite() {
            return w;
        }
    }
}

/// A word of the binade `field` with a random fraction and sign.
fn in_binade(r: &mut Rng, f: FloatFormat, field: u64) -> u64 {
    let frac = r.next_u64() & ((1u64 << f.frac_bits) - 1);
    let w = (field << f.frac_bits) | frac;
    if r.coin() {
        f.neg(w)
    } else {
        w
    }
}

/// A random chunk (a, b) of one of the kinds of the module's comment.
pub(crate) fn chunk(r: &mut Rng, pl: &FdpaPlan) -> (Vec<u64>, Vec<u64>) {
    let (f, l) = (pl.fmt, pl.chunk.l as usize);
    let top = (1u64 << f.exp_bits) - 1;
    let mut a = vec![0; l];
    let mut b = vec![0; l];
    let kind = r.below(8);
    // A narrow band of binades: the terms' exponents lie within a few of each other.
    let band = 1 + r.below(top.saturating_sub(2).max(1));
    for i in 0..l {
        (a[i], b[i]) = match kind {
            3 | 4 => {
                let fa = (band + r.below(3)).clamp(1, top - 1);
                let fb = (band + r.below(3)).clamp(1, top - 1);
                (in_binade(r, f, fa), in_binade(r, f, fb))
            }
            5 => {
                // Tiny: subnormals and the lowest binades, some zeros (e_zero leads).
                let (fa, fb) = (r.below(3).min(top - 1), r.below(3).min(top - 1));
                let z = if r.below(4) == 0 { 0 } else { 1 };
                (in_binade(r, f, fa) * z, in_binade(r, f, fb))
            }
            _ => (finite(r, f), finite(r, f)),
        };
    }
    if kind >= 6 && l >= 2 {
        // Cancellation: the second half negates the first.
        for i in 0..l / 2 {
            a[l / 2 + i] = f.neg(a[i]);
            b[l / 2 + i] = b[i];
        }
    }
    if r.below(16) == 0 {
        let sp = float_specials(f);
        a[r.below(l as u64) as usize] = r.pick(&sp);
    }
    (a, b)
}

/// C for a chunk: +0, a random word, the negated golden sum of the chunk from +0 (exact
/// cancellation where the sum is representable), a word near it, or a corner word.
fn addend(r: &mut Rng, pl: &FdpaPlan, a: &[u64], b: &[u64]) -> u64 {
    let out = pl.output();
    let s = pl.dot(a, b, 0);
    match r.below(7) {
        0 | 6 => 0,
        1 => r.next_u64() & out.mask(),
        2 => out.neg(s),
        3 => out.neg(s) ^ (r.below(4) << r.below(u64::from(out.frac_bits))) & out.mask(),
        4 => s,
        5 => r.pick(&corner_c(pl)),
        _ => 0,
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let pl = plan_of(ctx.p)?;
    let (f, l) = (pl.fmt, pl.chunk.l as usize);
    let n = f.width();
    let lay = ctx.layout;
    let (valid, pa, pb, pc) = (
        lay.slot("in_valid")?,
        lay.slot("a")?,
        lay.slot("b")?,
        lay.slot("c")?,
    );
    let (y, nan) = (lay.slot("y")?, lay.slot("nan")?);
    let out = pl.output();
    let (in_n, out_n) = (lay.in_slots, lay.out_slots);
    let op = |chk: &mut crate::Checker, a: &[u64], b: &[u64], c: u64| {
        let mut ins = vec![0u64; in_n];
        ins[valid] = 1;
        for i in 0..l {
            put_bits(&mut ins[pa..], i * n as usize, n, a[i]);
            put_bits(&mut ins[pb..], i * n as usize, n, b[i]);
        }
        ins[pc] = c;
        let mut want = vec![0u64; out_n];
        let d = pl.dot(a, b, c);
        (want[y], want[nan]) = (d, u64::from(out.is_nan(d)));
        chk.mark_restart();
        chk.push(&ins, Some(&want));
    };
    let mut r = Rng(ctx.seed);
    match ctx.mode {
        Mode::Exhaustive => {
            let cs = corner_c(&pl);
            let bits = 2 * l as u32 * n;
            let mask = (1u64 << n) - 1;
            for t in 0..1u64 << bits {
                let word = |i: usize| (t >> (i as u32 * n)) & mask;
                let a: Vec<u64> = (0..l).map(word).collect();
                let b: Vec<u64> = (l..2 * l).map(word).collect();
                op(ctx.chk, &a, &b, 0);
                op(ctx.chk, &a, &b, cs[t as usize % cs.len()]);
            }
        }
        Mode::Vectors(count) => {
            for &s in &float_specials(f) {
                for at in [0, l - 1] {
                    let (mut a, b) = chunk(&mut r, &pl);
                    a[at] = s;
                    let c = addend(&mut r, &pl, &a, &b);
                    op(ctx.chk, &a, &b, c);
                }
            }
            for &c in &corner_c(&pl) {
                let (a, b) = chunk(&mut r, &pl);
                op(ctx.chk, &a, &b, c);
                // C alone among zero products: C truncated to F bits below its own exponent.
                op(ctx.chk, &vec![0; l], &b, c);
            }
            for (a, b) in e_zero_chunks(&pl) {
                op(ctx.chk, &a, &b, 0);
            }
            for _ in 0..count {
                let (a, b) = chunk(&mut r, &pl);
                let c = addend(&mut r, &pl, &a, &b);
                op(ctx.chk, &a, &b, c);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::float::fdpa::Fdpa;

    fn plan(f: &str, mode: &str) -> FdpaPlan {
        let Ok(Format::Float(f)) = f.parse::<Format>() else {
            panic!("a float format")
        };
        Fdpa::parse(&format!("fdpa:{mode}"))
            .unwrap()
            .plan(&f)
            .unwrap()
    }

    /// The e_zero chunks exist for bf16 (rz-f32) and f16 (rne-f16), not for fp8, and the
    /// golden's result on them differs from the same arithmetic with e_zero one higher
    /// (computed here from the definition: the boundary product dropped).
    #[test]
    fn e_zero_chunks_are_decided_by_e_zero() {
        assert!(e_zero_chunks(&plan("fp8:e4m3", "hopper")).is_empty());
        for (f, mode) in [("bf16", "ampere"), ("f16", "4:12:rne-f16")] {
            let pl = plan(f, mode);
            let chunks = e_zero_chunks(&pl);
            assert_eq!(chunks.len(), 2, "{f}");
            for (a, b) in chunks {
                let with = pl.dot(&a, &b, 0);
                // Without the boundary product (what e_zero + 1 truncates away).
                let (mut a2, b2) = (a.clone(), b.clone());
                a2[1] = 0;
                // A zero operand is itself a zero term at e_zero: the same e_max.
                let without = pl.dot(&a2, &b2, 0);
                assert_ne!(with, without, "{f}: {a:x?} {b:x?}");
            }
        }
    }

    /// The random chunks (3,000, as CI runs them) reach every kind of result: NaN, ±∞, +0
    /// from nonzero terms (cancellation); for bf16 and f16 subnormal outputs and chunks whose
    /// nonzero products all lie below e_zero while a zero term is present (e_zero leads: the
    /// e_zero mutants' ground); for bf16 (products past 2^128) the largest value toward zero.
    #[test]
    fn random_chunks_reach_every_kind_of_result() {
        for (f, mode) in [
            ("fp8:e4m3", "hopper"),
            ("bf16", "ampere"),
            ("f16", "4:12:rne-f16"),
        ] {
            let pl = plan(f, mode);
            let out = pl.output();
            let mut r = Rng(0x49);
            let (mut nan, mut inf, mut zero, mut sub, mut max, mut lead) = (0, 0, 0, 0, 0, 0);
            for _ in 0..3_000 {
                let (a, b) = chunk(&mut r, &pl);
                let c = addend(&mut r, &pl, &a, &b);
                let d = pl.dot(&a, &b, c);
                let v = out.to_f64(d);
                let any_term = a
                    .iter()
                    .zip(&b)
                    .any(|(&x, &y)| pl.fmt.to_f64(x) * pl.fmt.to_f64(y) != 0.0);
                nan += usize::from(out.is_nan(d));
                inf += usize::from(v.is_infinite());
                zero += usize::from(d == 0 && any_term);
                sub += usize::from(out.is_subnormal(d));
                // rz-f32's largest value toward zero, 0x7f7fffff (an overflow's result).
                max += usize::from(d & 0x7fff_ffff == 0x7f7f_ffff);
                let e_zero = 2f64.powi(pl.chunk.rho.e_zero() as i32);
                let products: Vec<f64> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| pl.fmt.to_f64(x) * pl.fmt.to_f64(y))
                    .collect();
                let has_zero = products.contains(&0.0) || out.to_f64(c) == 0.0;
                let below = products.iter().all(|&p| p.abs() < e_zero) && any_term;
                lead += usize::from(has_zero && below);
            }
            eprintln!("{f} {mode}: nan {nan} inf {inf} zero {zero} subnormal {sub} max {max} e_zero leads {lead}");
            assert!(nan > 0 && inf > 0 && zero > 0, "{f} {mode}");
            // fp8 products stay above 2^−18: subnormal outputs come from the corner C.
            if f != "fp8:e4m3" {
                assert!(sub > 0 && lead > 0, "{f} {mode}");
            }
            if f == "bf16" {
                assert!(max > 0, "{f}");
            }
        }
    }
}
