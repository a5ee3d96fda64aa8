//! `alu` and `vector` (L lanes sharing one opcode): op, a, b, sel, t_in → y, t_out, cmp, nan,
//! against the golden lane `lpgen_golden::Alu` (every output of every lane, every cycle).
//! Exhaustive (words of at most 10 bits): every opcode (the 11, sqrt with `--sqrt`, and the
//! unassigned) with every operand pair, and `convert` with every word of T; for a one-lane
//! `--sqrt` unit on words of 11 to 16 bits, the one-operand opcodes (sqrt, neg, abs; `t_out`
//! on every step) on every word and `convert` on every word of T. Otherwise every opcode on
//! every pair of corner cases, then random operations.

use lpgen_golden::{Alu, AluIn, AluOp, Format, ALU_OP_BITS};
use lpgen_hdl::Params;

use super::words::family_words;
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::{put_bits, Layout};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs up to words of this many bits (16 opcodes × 2^20 pairs).
const MAX_EXHAUSTIVE_BITS: u32 = 10;

/// Exhaustive runs of the one-operand opcodes of a `--sqrt` lane up to words of this many bits.
const MAX_UNARY_EXHAUSTIVE_BITS: u32 = 16;

/// The one-operand opcodes, each run on every word of a wider `--sqrt` lane.
const UNARY_OPS: [AluOp; 3] = [AluOp::Sqrt, AluOp::Neg, AluOp::Abs];

/// Whether an exhaustive run of `p` runs the one-operand opcodes only (words of 11 to 16
/// bits, one `--sqrt` lane, T of at most 16 bits).
fn unary_only(p: &Params, w: u32, wt: u32) -> bool {
    p.sqrt
        && p.lanes == 1
        && w > MAX_EXHAUSTIVE_BITS
        && w <= MAX_UNARY_EXHAUSTIVE_BITS
        && wt <= MAX_UNARY_EXHAUSTIVE_BITS
}

fn formats(p: &Params) -> Result<(Format, Format)> {
    let to = p.to.unwrap_or(p.format);
    Alu::new(p.format, to).map_err(|e| VerifError(e.to_string()))?;
    Ok((p.format, to))
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let (f, t) = formats(p)?;
    let (w, wt) = (f.width(), t.width());
    let ops = 1u64 << ALU_OP_BITS;
    let cycles = match mode {
        Mode::Exhaustive if p.lanes > 1 => {
            return Err(no_exhaustive(
                p,
                "lanes share the opcode; run the alu unit exhaustively",
            ))
        }
        Mode::Exhaustive if unary_only(p, w, wt) => {
            UNARY_OPS.len() as u64 * (1u64 << w) + (1u64 << wt)
        }
        Mode::Exhaustive if w > MAX_EXHAUSTIVE_BITS => {
            return Err(no_exhaustive(
                p,
                &format!(
                    "{w}-bit words give 2^{} operand pairs per opcode (with --sqrt, words \
                     of up to {MAX_UNARY_EXHAUSTIVE_BITS} bits run the one-operand opcodes)",
                    2 * w
                ),
            ))
        }
        Mode::Exhaustive if wt > MAX_EXHAUSTIVE_BITS => {
            return Err(no_exhaustive(
                p,
                &format!(
                    "the conversion format {t} has {wt}-bit words (at most {MAX_EXHAUSTIVE_BITS})"
                ),
            ))
        }
        Mode::Exhaustive => ops * (1u64 << (2 * w)) + (1u64 << wt),
        Mode::Vectors(n) => n + ops * 24 * 24,
    };
    Ok(Plan { cycles, drive })
}

/// Corner-case words of a format: zero, NaN/NaR, ±1, the extremes and their neighbours.
pub(super) fn specials(f: Format) -> Vec<u64> {
    family_words(f).specials()
}

/// The bit positions of the lanes' ports in the input and output slots (the stochastic
/// lanes' driver adds its generator's ports to these).
pub(super) struct Ports {
    pub op: usize,
    pub a: usize,
    pub b: usize,
    pub sel: usize,
    pub t_in: usize,
    pub valid: usize,
    pub y: usize,
    pub t_out: usize,
    pub cmp: usize,
    pub nan: usize,
}

impl Ports {
    pub(super) fn find(l: &Layout) -> Result<Ports> {
        let pos = |n: &str| -> Result<usize> { Ok(l.port(n)?.slot * 64) };
        Ok(Ports {
            op: pos("op")?,
            a: pos("a")?,
            b: pos("b")?,
            sel: pos("sel")?,
            t_in: pos("t_in")?,
            valid: pos("in_valid")?,
            y: pos("y")?,
            t_out: pos("t_out")?,
            cmp: pos("cmp")?,
            nan: pos("nan")?,
        })
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let (f, t) = formats(ctx.p)?;
    let golden = Alu::new(f, t)
        .map_err(|e| VerifError(e.to_string()))?
        .with_sqrt(ctx.p.sqrt);
    let l = ctx.layout;
    let ports = Ports::find(l)?;
    let lanes = ctx.p.lanes as usize;
    let (w, wt) = (f.width(), t.width());
    let (in_n, out_n) = (l.in_slots, l.out_slots);
    // One cycle: the opcode and each lane's inputs.
    let step = |chk: &mut crate::Checker, op: u8, lane_ins: &[AluIn]| {
        let mut ins = vec![0u64; in_n];
        let mut want = vec![0u64; out_n];
        put_bits(&mut ins, ports.valid, 1, 1);
        put_bits(&mut ins, ports.op, ALU_OP_BITS, op as u64);
        for (i, x) in lane_ins.iter().enumerate() {
            let o = golden.eval(&AluIn { op, ..*x });
            put_bits(&mut ins, ports.a + i * w as usize, w, x.a);
            put_bits(&mut ins, ports.b + i * w as usize, w, x.b);
            put_bits(&mut ins, ports.sel + i, 1, x.sel as u64);
            put_bits(&mut ins, ports.t_in + i * wt as usize, wt, x.t_in);
            put_bits(&mut want, ports.y + i * w as usize, w, o.y);
            put_bits(&mut want, ports.t_out + i * wt as usize, wt, o.t_out);
            put_bits(&mut want, ports.cmp + 2 * i, 2, o.cmp as u64);
            put_bits(&mut want, ports.nan + i, 1, o.nan as u64);
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
    };
    let lane = |a: u64, b: u64, sel: bool, t_in: u64| AluIn {
        op: 0,
        a,
        b,
        sel,
        t_in,
    };
    let mask_t = (1u64 << wt) - 1;
    match ctx.mode {
        Mode::Exhaustive if unary_only(ctx.p, w, wt) => {
            let mask = (1u64 << w) - 1;
            for op in UNARY_OPS {
                for a in 0..1u64 << w {
                    // b only reaches `cmp` (compared on every step too): a scrambled word.
                    let b = a.wrapping_mul(0x9e37_79b9) >> 7 & mask;
                    step(ctx.chk, op.code(), &[lane(a, b, a & 1 == 1, a & mask_t)]);
                }
            }
            for t_in in 0..1u64 << wt {
                step(ctx.chk, 10, &[lane(t_in & mask, 0, false, t_in)]);
            }
        }
        Mode::Exhaustive => {
            for op in 0..1u8 << ALU_OP_BITS {
                for a in 0..1u64 << w {
                    for b in 0..1u64 << w {
                        step(
                            ctx.chk,
                            op,
                            &[lane(a, b, (a ^ b) & 1 == 1, (a ^ b) & mask_t)],
                        );
                    }
                }
            }
            for t_in in 0..1u64 << wt {
                step(ctx.chk, 10, &[lane(t_in & ((1 << w) - 1), 0, false, t_in)]);
            }
        }
        Mode::Vectors(n) => {
            let (sp, spt) = (specials(f), specials(t));
            let mut r = Rng(ctx.seed);
            for op in 0..1u8 << ALU_OP_BITS {
                for (i, &a) in sp.iter().enumerate() {
                    for (j, &b) in sp.iter().enumerate() {
                        let lanes_in: Vec<AluIn> = (0..lanes)
                            .map(|k| {
                                let (x, y) = (sp[(i + k) % sp.len()], sp[(j + 3 * k) % sp.len()]);
                                let x = if k == 0 { a } else { x };
                                let y = if k == 0 { b } else { y };
                                lane(x, y, r.coin(), spt[(i + j + k) % spt.len()])
                            })
                            .collect();
                        step(ctx.chk, op, &lanes_in);
                    }
                }
            }
            let word = |r: &mut Rng, sp: &[u64], width: u32| {
                if r.below(4) == 0 {
                    sp[r.below(sp.len() as u64) as usize]
                } else {
                    r.next_u64() & ((1u64 << width) - 1)
                }
            };
            for _ in 0..n {
                let op = r.below(1 << ALU_OP_BITS) as u8;
                let lanes_in: Vec<AluIn> = (0..lanes)
                    .map(|_| {
                        let a = word(&mut r, &sp, w);
                        let b = word(&mut r, &sp, w);
                        let t_in = word(&mut r, &spt, wt);
                        lane(a, b, r.coin(), t_in)
                    })
                    .collect();
                step(ctx.chk, op, &lanes_in);
            }
        }
    }
    Ok(())
}
