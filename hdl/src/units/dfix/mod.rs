//! Dynamic fixed point (`dfix:W`, seed 002) in hardware: the array PE's read-out into the
//! output group's scale (`array --pe dfix`) and the overflow monitor (`dfix-monitor`).
//! Rules: docs/formats.md, "`dfix:W`"; the golden model is `lpgen_golden::dfix`
//! (`DfixFormat::dot` gives the word and both flags of a read-out).
//!
//! The PE multiplies and accumulates exactly as the `fix` PE of `fix:(W−1):0` does (the same
//! sub-operators: W-bit integers, a wide accumulator of 2W + 16 bits). Only its read-out
//! differs: the host gives the tile's **read-out shift** s = e − (ea + eb) (output scale minus
//! the operands' scales) as a signed port with the step marked `last`; the accumulator's
//! exact integer is scaled by 2^−s, rounded once to nearest even, saturated to W bits, and
//! tested for overflow at e and at e − 1.
//!
//! How: at the array's edge s is clamped once into the biased shift u = s + W ∈ [0, N + W + 1]
//! (N the accumulator's bits; shifts beyond give the same results as the ends), which travels
//! with the step's controls from PE to PE. In the PE one arithmetic right shift of
//! acc·2^(W+2) by u gives floor(2y), y = acc·2^(1−s) the exact value at scale e − 1 (the
//! half), and one masked OR its sticky bit; from those both read-outs round to nearest even
//! (at e − 1 from floor(y), its half bit and the sticky; at e from floor(y/2), its half bit
//! floor(y) mod 2 and the rest), so a single shifter serves both flags.

mod lane;
mod monitor;

pub(crate) use lane::lane_grid;

pub use lane::{DfixLaneOp, DFIX_LANE_OP_BITS};
pub(crate) use monitor::{grid as monitor_grid, monitor, MONITOR_STAGES};

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::FixFormat;

use super::{fix, GenError, Params, PeIo, PeKind, Unit};
use crate::ir::{cat, konst, mux, Module, StagePlan, E};
use crate::units::pe::{ArrayPe, Sideband};

/// Bits of the array's signed `shift` port: every shift e − (ea + eb) of the golden model's
/// scales (|e| ≤ 1000, so |s| ≤ 3000) fits, with room.
pub const DFIX_SHIFT_BITS: u32 = 16;

/// Bits of each `dfix-monitor` counter unless `--counter-bits` says otherwise.
pub const DFIX_COUNTER_BITS: u32 = 32;

/// The most counter bits `dfix-monitor` takes (a host reads them as one u64).
const MAX_COUNTER_BITS: u32 = 64;

/// `fix:(W−1):0`: the same W-bit two's-complement integer at scale 0, whose sub-operators
/// (product, accumulator, saturation) the dfix PE shares.
pub(crate) fn carrier_fix(f: DfixFormat) -> FixFormat {
    FixFormat::new(f.width - 1, 0).expect("dfix widths are 2..=32")
}

/// The accumulator bits of a dfix:W PE (the fix carrier's: 2W + 16).
pub(crate) fn acc_bits(w: u32) -> u32 {
    2 * w + 16
}

/// The largest biased shift u = s + W for an exact integer of `n` bits: n + W + 1 (right
/// shifts beyond read out 0).
fn max_biased(w: u32, n: u32) -> u32 {
    n + w + 1
}

/// Bits of the biased shift for an exact integer of `n` bits.
fn biased_bits(w: u32, n: u32) -> u32 {
    32 - max_biased(w, n).leading_zeros()
}

/// Bits of the biased shift that travels through the array of dfix:`w` PEs.
pub fn dfix_shift_bits(w: u32) -> u32 {
    biased_bits(w, acc_bits(w))
}

/// Refuses dfix words where they do not belong, and other formats where dfix words must be.
pub(crate) fn check(p: &Params) -> Result<(), GenError> {
    let fmt = p.format_name();
    match (p.dfix_format(), p.unit) {
        (Some(_), Unit::Array) if p.pe == PeKind::Dfix => Ok(()),
        (Some(d), Unit::Array) => Err(GenError(format!(
            "array PE '{}' does not work on {d} (use --pe dfix)",
            p.pe.name()
        ))),
        (None, Unit::Array) if p.pe == PeKind::Dfix => Err(GenError(format!(
            "array PE 'dfix' needs a dfix:W format (e.g. --format dfix:10), not {fmt}"
        ))),
        (Some(_), Unit::Alu | Unit::Vector) if p.to.is_some() => Err(GenError(
            "--to does not apply to dfix lanes: the rescale opcode moves words between scales"
                .into(),
        )),
        (Some(_), Unit::Alu | Unit::Vector) => Ok(()),
        (Some(_), Unit::DfixMonitor) => {
            if !(1..=MAX_COUNTER_BITS).contains(&p.counter_bits) {
                return Err(GenError(format!(
                    "--counter-bits {}: give 1..={MAX_COUNTER_BITS}",
                    p.counter_bits
                )));
            }
            Ok(())
        }
        (None, Unit::DfixMonitor) => Err(GenError(format!(
            "dfix-monitor counts the flags of a dfix array: give --format dfix:W (e.g. dfix:10), not {fmt}"
        ))),
        (Some(d), u) => Err(GenError(format!(
            "unit '{}' does not work on {d}: dfix:W words go to 'array --pe dfix', 'vector', 'alu' and 'dfix-monitor'",
            u.name()
        ))),
        (None, _) => Ok(()),
    }
}

/// The signed `shift` port (DFIX_SHIFT_BITS) clamped into the biased shift u = s + W ∈
/// [0, n + W + 1] for exact integers of `n` bits (the array: its accumulator's, once at its
/// edge).
pub(crate) fn biased_shift(m: &mut Module, shift: &E, w: u32, n: u32) -> E {
    let vw = DFIX_SHIFT_BITS + 2;
    let (umax, ub) = (max_biased(w, n), biased_bits(w, n));
    let v = m.wire(
        "shift_plus_w",
        &shift.sext(vw).add(&konst(vw, u128::from(w))),
    );
    let above = v.sgt(&konst(vw, u128::from(umax)));
    let clamped = mux(
        &v.msb(),
        &konst(ub, 0),
        &mux(&above, &konst(ub, u128::from(umax)), &v.low(ub)),
    );
    m.wire("shift_biased", &clamped)
}

/// The `dfix` array PE: the fix PE's product and accumulator at stages ≤ 2, read out through
/// [`dfix_pe`] with the biased shift that travels with `last`; at stages 2 one register
/// inside the read-out, after the shifter, beyond the stages.
pub(crate) struct DfixPe;

pub(crate) static DFIX_PE: DfixPe = DfixPe;

impl ArrayPe for DfixPe {
    fn max_stages(&self) -> u32 {
        2
    }
    fn readout_registers(&self, stages: u32) -> u32 {
        (stages >= 2) as u32
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        false
    }
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let stages = p.stages;
        (1, StagePlan::spread(self.latency(stages), 1))
    }
    /// {overflow_half, overflow} above the word.
    fn flags(&self) -> &'static [&'static str] {
        &["overflow", "overflow_half"]
    }
    /// The read-out shift e − (ea + eb), clamped and biased once at the array's edge.
    fn sideband(&self, _: &Params) -> Option<Sideband> {
        Some(Sideband {
            port: "shift",
            bits: DFIX_SHIFT_BITS,
            per_row: false,
            pass: None,
            pe_bits: dfix_shift_bits,
            prepare: |m, s, w| biased_shift(m, s, w, acc_bits(w)),
        })
    }
    fn build(
        &self,
        pe: &mut Module,
        p: &Params,
        io: &PeIo,
        side: Option<&E>,
    ) -> Result<E, GenError> {
        let shift =
            side.ok_or_else(|| GenError("the dfix PE needs its shift (generator bug)".into()))?;
        dfix_pe(pe, p, io, shift, self.readout_registers(p.stages) == 1)
    }
}

/// All ones in `width` bits.
fn ones(width: u32) -> E {
    if width >= 128 {
        konst(width, u128::MAX)
    } else {
        konst(width, (1u128 << width) - 1)
    }
}

/// The first half of a read-out: the exact integer `acc` (at scale ea + eb) shifted by the
/// biased shift u = e − (ea + eb) + W (clamped), as ⌊2y⌋ with y the value at scale e − 1,
/// and the sticky bit of what the shift dropped.
pub(crate) struct Shifted {
    pub floor_twice: E,
    pub sticky: E,
}

/// [`Shifted`] of `acc` by `u`.
pub(crate) fn read_out_shift(m: &mut Module, prefix: &str, acc: &E, u: &E, w: u32) -> Shifted {
    m.comment("read-out shift: floor(2y), y = the accumulator at scale e - 1; sticky bit");
    // acc·2^(W+1) (the largest left shift that can matter) and one more bit below, so the
    // shift by u leaves floor(2y) with y the value at scale e − 1.
    let zw = acc.width + w + 2;
    let z = cat(&[acc.clone(), konst(w + 2, 0)]);
    let floor_twice = m.wire(&format!("{prefix}readout_shifted"), &z.sar(u));
    let dropped = ones(zw).shl(u).not();
    let sticky = m.wire(&format!("{prefix}readout_sticky"), &z.and(&dropped).any());
    Shifted {
        floor_twice,
        sticky,
    }
}

/// The second half: both roundings and saturations, (word, overflow at e, overflow at
/// e − 1), as `DfixFormat::dot`'s `ReadOut`.
pub(crate) fn read_out_round(m: &mut Module, prefix: &str, s: &Shifted, w: u32) -> (E, E, E) {
    m.comment("round to nearest even at scales e and e - 1; saturate; overflow flags");
    let (shifted, sticky) = (&s.floor_twice, &s.sticky);
    let zw = shifted.width;
    // At e − 1: floor(y), its half bit, the sticky.
    let floor_half = m.wire(
        &format!("{prefix}readout_floor_half"),
        &shifted.bits(zw - 1, 1),
    );
    let half_bit = shifted.bit(0);
    let up_half = half_bit.and(&sticky.or(&floor_half.bit(0)));
    let (_, over_half) = round_saturate(
        m,
        &format!("{prefix}readout_half_"),
        &floor_half,
        &up_half,
        w,
    );
    // At e: floor(y/2), its half bit floor(y) mod 2, the rest below it.
    let floor_e = m.wire(
        &format!("{prefix}readout_floor"),
        &floor_half.bits(floor_half.width - 1, 1),
    );
    let up = floor_half
        .bit(0)
        .and(&half_bit.or(sticky).or(&floor_half.bit(1)));
    let (word, over) = round_saturate(m, &format!("{prefix}readout_"), &floor_e, &up, w);
    (word, over, over_half)
}

/// The whole read-out of `acc` into scale e; with `register`, the shifted bits and the
/// sticky bit go through a register (one more cycle) before the rounding.
pub(crate) fn read_out(
    m: &mut Module,
    prefix: &str,
    acc: &E,
    u: &E,
    w: u32,
    register: bool,
) -> (E, E, E) {
    let mut s = read_out_shift(m, prefix, acc, u, w);
    if register {
        let held = |m: &mut Module, name: &str, e: &E| {
            let q = m.state(&format!("{prefix}{name}"), e.width, None);
            m.drive(&q, e, None);
            q
        };
        s = Shifted {
            floor_twice: held(m, "readout_shifted_q", &s.floor_twice),
            sticky: held(m, "readout_sticky_q", &s.sticky),
        };
    }
    read_out_round(m, prefix, &s, w)
}

/// `q + up` (q a wide two's-complement integer, `up` one bit) saturated to `w` bits:
/// (word, overflow). The adder is short: when q lies outside [−2^w, 2^w − 1], q + up cannot
/// fit a w-bit word either, and the word saturates by q's sign.
fn round_saturate(m: &mut Module, prefix: &str, q: &E, up: &E, w: u32) -> (E, E) {
    let above = q.bits(q.width - 1, w);
    let near = m.wire(
        &format!("{prefix}near"),
        &above.all().or(&above.any().not()),
    );
    let r = m.wire(
        &format!("{prefix}rounded"),
        &q.low(w + 1).sext(w + 2).add(&up.zext(w + 2)),
    );
    let (word, saturated) = fix::saturate(m, prefix, &r, w);
    let far = fix::extreme_word(&q.msb(), w);
    (mux(&near, &word, &far), near.not().or(&saturated))
}

/// PE builder of the `dfix` array PE: the fix PE's accumulator, read out through
/// [`read_out`] with the biased shift `shift` (which arrives with `last`, in the PE's input
/// cycle; with `readout_register`, one more register inside the read-out, after the shifter).
/// Returns {overflow_half, overflow, word} (W + 2 bits). Marks one candidate
/// boundary, after the product, as every PE builder.
pub(crate) fn dfix_pe(
    m: &mut Module,
    p: &Params,
    io: &PeIo,
    shift: &E,
    readout_register: bool,
) -> Result<E, GenError> {
    let Some(d) = p.dfix_format() else {
        return Err(GenError(format!(
            "the dfix PE works on dfix words, not {} (generator bug)",
            p.format
        )));
    };
    let f = carrier_fix(d);
    let acc = fix::pe_accumulator(m, f, "", io);
    // The result register loads the read-out one cycle after the `last` step reached the
    // accumulator: hold the shift for that cycle as `capture` holds `last`.
    let now = m.now(shift);
    let held = m.state("shift_held", shift.width, None);
    m.drive(&held, &now, None);
    let (word, over, over_half) = read_out(m, "", &acc, &held, f.width(), readout_register);
    Ok(cat(&[over_half, over, word]))
}

/// The dfix arrays of the lint grid. Lean: dfix:6 1×1 and dfix:10 2×3 at stages 0..=2,
/// the extreme widths dfix:2 and dfix:32 1×1 at 2 (and 0 for 32). Full: dfix:2, 6, 10, 16
/// and 32 at 1×1, 2×3 (stages 0..=2), 4×4 and 8×8 (stages 0 and 2).
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let mut cases: Vec<(u32, u32, u32, &[u32])> = vec![];
    if full {
        for w in [2, 6, 10, 16, 32] {
            for (r, c) in [(1, 1), (2, 3), (4, 4), (8, 8)] {
                cases.push((w, r, c, if r * c > 6 { &[0, 2] } else { &[0, 1, 2] }));
            }
        }
    } else {
        cases = vec![
            (6, 1, 1, &[0, 1, 2]),
            (10, 2, 3, &[0, 1, 2]),
            (2, 1, 1, &[2]),
            (32, 1, 1, &[0, 2]),
        ];
    }
    let mut g = vec![];
    for (w, r, c, stages) in cases {
        for &s in stages {
            let mut p = Params::dfix(Unit::Array, DfixFormat::new(w).expect("valid"));
            (p.rows, p.cols, p.stages) = (r, c, s);
            g.push(p);
        }
    }
    g
}
