//! `alu` and `vector` float lanes with `--rounding stochastic:R` (docs/rtl.md): the golden
//! `Rounder` replays the unit's stream. A beat of a rounding opcode (add, sub, mul, div)
//! rounds lane j with the next draw after lanes 0..j (`Calc::binop_with`), so L draws per
//! beat in lane order; other opcodes take none. `sr_load` with `in_valid` puts the golden
//! rounder at the loaded state first (a rounding beat in that cycle draws from there).
//!
//! Between the beats of rounding operations, by beat count: an idle cycle (`in_valid` low,
//! a rounding opcode and other operands on the inputs) before every 13th, a beat of a
//! non-rounding opcode (max, min, lt, neg, abs, select, convert, an unassigned code) before
//! every 7th, and `sr_load` of a random state every 29th, in turn in an idle cycle (where it
//! must not load: a load is part of a beat), with the rounding beat, or with a non-rounding
//! beat (a load alone). No restart points: every result
//! depends on the beats before it (a distributed run checks it all on rank 0).
//!
//! Exhaustive (8-bit words at most): every pair for each of add, sub, mul, div, L pairs per
//! beat in order; otherwise every pair of corner cases for each, then random operations.

use lpgen_golden::arith::BinOp;
use lpgen_golden::rounding::Xorshift32;
use lpgen_golden::Family;
use lpgen_golden::{Alu, AluIn, AluOp, FloatFormat, Format, Rounder, Rounding, ALU_OP_BITS};
use lpgen_hdl::Params;

use super::float_words::{float_pair, float_specials};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::layout::put_bits;
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs up to words of this many bits (4 opcodes × 2^16 pairs).
const MAX_EXHAUSTIVE_BITS: u32 = 8;

/// The rounding opcodes and their golden operations.
const ROUNDING: [(AluOp, BinOp); 4] = [
    (AluOp::Add, BinOp::Add),
    (AluOp::Sub, BinOp::Sub),
    (AluOp::Mul, BinOp::Mul),
    (AluOp::Div, BinOp::Div),
];

/// The opcodes that do not round (10 the conversion; 11..15 unassigned).
const OTHERS: [u8; 8] = [4, 5, 6, 7, 8, 9, 10, 13];

fn format(p: &Params) -> Result<FloatFormat> {
    match (p.format, p.rounding) {
        (Format::Float(f), Rounding::Stochastic(_)) => Ok(f),
        _ => Err(VerifError(format!(
            "{} with rounding {} needs float lanes and stochastic:R, not {}",
            p.unit.name(),
            p.rounding,
            p.format
        ))),
    }
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let f = format(p)?;
    let w = f.width();
    let ops = match mode {
        Mode::Exhaustive if w > MAX_EXHAUSTIVE_BITS => {
            return Err(no_exhaustive(
                p,
                &format!("{w}-bit words give 2^{} operand pairs per opcode", 2 * w),
            ))
        }
        Mode::Exhaustive => 4 << (2 * w),
        Mode::Vectors(n) => n + 4 * 40 * 40,
    };
    let beats = ops.div_ceil(u64::from(p.lanes));
    Ok(Plan {
        cycles: beats + beats / 13 + beats / 7 + beats / 29 + 1,
        drive,
    })
}

/// Port positions (bits).
/// The lanes' ports and the generator's.
struct Ports {
    lane: super::alu::Ports,
    load: usize,
    load_state: usize,
}

/// The driver's state: the golden lane, the stream's replica, the beat count.
struct Lanes<'a> {
    ports: Ports,
    golden: Alu,
    f: FloatFormat,
    wt: u32,
    lanes: usize,
    rounding: Rounding,
    rounder: Rounder,
    rng: Rng,
    beats: u64,
    in_n: usize,
    out_n: usize,
    chk: &'a mut crate::Checker,
}

impl Lanes<'_> {
    /// One cycle: `op` on each lane's (a, b) (in_valid when `valid`), `load` a state first.
    fn cycle(&mut self, valid: bool, op: u8, pairs: &[(u64, u64)], load: Option<u32>) {
        let (p, w, wt) = (&self.ports.lane, self.f.width() as usize, self.wt as usize);
        let mut ins = vec![0u64; self.in_n];
        put_bits(&mut ins, p.valid, 1, valid as u64);
        put_bits(&mut ins, p.op, ALU_OP_BITS, op as u64);
        if let Some(s) = load {
            put_bits(&mut ins, self.ports.load, 1, 1);
            put_bits(&mut ins, self.ports.load_state, 32, u64::from(s));
            // A load is part of a beat: without in_valid it is ignored.
            if valid {
                let gen = Xorshift32::at(s).expect("a nonzero state");
                self.rounder = Rounder::with_generator(self.rounding, gen);
            }
        }
        let rounds = ROUNDING.iter().find(|(o, _)| o.code() == op).map(|r| r.1);
        let mut want = vec![0u64; self.out_n];
        let mask_t = (1u64 << wt) - 1;
        for (j, &(a, b)) in pairs.iter().enumerate() {
            let i = AluIn {
                op,
                a,
                b,
                sel: (a ^ b) & 1 == 1,
                t_in: (a.wrapping_mul(0x9e37) ^ b) & mask_t,
            };
            put_bits(&mut ins, p.a + j * w, w as u32, a);
            put_bits(&mut ins, p.b + j * w, w as u32, b);
            put_bits(&mut ins, p.sel + j, 1, i.sel as u64);
            put_bits(&mut ins, p.t_in + j * wt, wt as u32, i.t_in);
            let mut o = self.golden.eval(&i);
            if let (Some(bin), true) = (rounds, valid) {
                let c = Format::Float(self.f).calc();
                o.y = c
                    .binop_with(bin, a, b, &mut self.rounder)
                    .expect("float rounds");
                o.nan = self.f.is_nan(o.y);
            }
            put_bits(&mut want, p.y + j * w, w as u32, o.y);
            put_bits(&mut want, p.t_out + j * wt, wt as u32, o.t_out);
            put_bits(&mut want, p.cmp + 2 * j, 2, o.cmp as u64);
            put_bits(&mut want, p.nan + j, 1, o.nan as u64);
        }
        self.chk.push(&ins, valid.then_some(&want[..]));
    }

    /// A random nonzero state.
    fn state(&mut self) -> u32 {
        (self.rng.next_u64() as u32).max(1)
    }

    /// One beat of rounding `op` on `pairs` (L of them), with the interleaved cycles.
    fn beat(&mut self, op: AluOp, pairs: &[(u64, u64)]) {
        let k = self.beats;
        self.beats += 1;
        let other = |s: &mut Self| OTHERS[s.rng.below(OTHERS.len() as u64) as usize];
        let load_kind = (k % 29 == 17).then_some((k / 29) % 3);
        if k % 13 == 12 {
            let idle: Vec<(u64, u64)> = pairs.iter().map(|&(a, b)| (b, a)).collect();
            self.cycle(false, op.code(), &idle, None);
        }
        if load_kind == Some(0) {
            let s = self.state();
            self.cycle(false, AluOp::Mul.code(), pairs, Some(s));
        }
        if k % 7 == 3 || load_kind == Some(2) {
            let (o, s) = (other(self), load_kind.filter(|&l| l == 2));
            let s = s.map(|_| self.state());
            self.cycle(true, o, pairs, s);
        }
        let s = load_kind.filter(|&l| l == 1).map(|_| self.state());
        self.cycle(true, op.code(), pairs, s);
    }

    /// The beats of `op` over `pairs`, L per beat (the last beat filled from the start).
    fn run(&mut self, op: AluOp, pairs: &[(u64, u64)]) {
        for start in (0..pairs.len()).step_by(self.lanes) {
            let beat: Vec<(u64, u64)> = (0..self.lanes)
                .map(|j| pairs[(start + j) % pairs.len()])
                .collect();
            self.beat(op, &beat);
        }
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let f = format(ctx.p)?;
    let to = ctx.p.to.unwrap_or(ctx.p.format);
    let golden = Alu::new(ctx.p.format, to)
        .map_err(|e| VerifError(e.to_string()))?
        .with_sqrt(ctx.p.sqrt);
    let l = ctx.layout;
    let ports = Ports {
        lane: super::alu::Ports::find(l)?,
        load: l.port("sr_load")?.slot * 64,
        load_state: l.port("sr_load_state")?.slot * 64,
    };
    let mut s = Lanes {
        ports,
        golden,
        f,
        wt: to.width(),
        lanes: ctx.p.lanes as usize,
        rounding: ctx.p.rounding,
        rounder: Rounder::new(ctx.p.rounding, ctx.p.rounding_seed),
        rng: Rng(ctx.seed ^ 0x5eed_1a4e),
        beats: 0,
        in_n: l.in_slots,
        out_n: l.out_slots,
        chk: ctx.chk,
    };
    let w = f.width();
    match ctx.mode {
        Mode::Exhaustive => {
            let all: Vec<(u64, u64)> = (0..1u64 << (2 * w))
                .map(|k| (k >> w, k & ((1 << w) - 1)))
                .collect();
            for (op, _) in ROUNDING {
                s.run(op, &all);
            }
        }
        Mode::Vectors(n) => {
            let sp = float_specials(f);
            let corners: Vec<(u64, u64)> = sp
                .iter()
                .flat_map(|&a| sp.iter().map(move |&b| (a, b)))
                .collect();
            for (op, _) in ROUNDING {
                s.run(op, &corners);
            }
            let mut r = Rng(ctx.seed);
            let per_op = n.div_ceil(4) as usize;
            for (op, _) in ROUNDING {
                let pairs: Vec<(u64, u64)> = (0..per_op).map(|_| float_pair(&mut r, f)).collect();
                s.run(op, &pairs);
            }
        }
    }
    Ok(())
}
