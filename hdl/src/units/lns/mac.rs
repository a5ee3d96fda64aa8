//! One PE's arithmetic: x = a·b (LNS multiply), then x accumulated onto a running sum, by
//! Kahan (`tmp = c + x; t = s + tmp; c = tmp − (t − s); s = t`, SPEC.md §3, every operation
//! rounded in the format; below, u = t − s) or naively (`s = s + x`), k = 0, 1, …, K−1 in
//! order. [`build`] is the one implementation; the `lns-kahan` unit and the `lns-kahan` /
//! `lns-plain` array PEs call it.
//!
//! # `lns-kahan` ports and timing
//!
//! Inputs `a`, `b` (words), `clear`, `in_valid`; outputs `sum` (word), `overflow`, `nan`,
//! `out_valid`.
//! - A *step* is a cycle with `in_valid` high: it adds a·b to its accumulation, which first
//!   restarts from s = c = zero when `clear` is set. A cycle without `in_valid` changes
//!   nothing (`clear` is ignored). `rst` sets every accumulation to s = c = zero.
//! - `latency` = stages cycles after a step, with `out_valid`: `sum` is the accumulation's s
//!   after the step, `overflow` is set if an operation of the step (the product or one of the
//!   four additions) saturated at ±code_max, `nan` if `sum` is NaN (a NaN operand since the
//!   accumulation's last clear).
//!
//! | stages | registers after                | latency | accumulations P |
//! |--------|--------------------------------|---------|-----------------|
//! | 0      | none (one combinational step)  | 0       | 1               |
//! | 1      | the product                    | 1       | 1               |
//! | 2      | the product, t                 | 2       | 2               |
//! | 3      | the product, tmp, u            | 3       | 3               |
//! | 4      | the product, tmp, t, u         | 4       | 4               |
//! | 5      | the product, each addition's G-table ROM read | 5 | 5          |
//!
//! At 5 stages the register inside each addition sits right after its ROM read, so Yosys
//! puts the four G-table ROMs in block RAM (docs/fpga.md).
//!
//! The loop (s, c → four additions → s, c) has P = 1 + (registers inside it) cycles of
//! latency. With P > 1 it holds P independent accumulations, round-robin by cycle (C-slow
//! retiming): the steps of cycles n, n + P, n + 2P, … belong to one accumulation (slot
//! n mod P, counting from the first cycle after reset) whatever `in_valid` does in the other
//! cycles. So the unit still takes one step per cycle, and each accumulation still goes
//! k = 0..K−1 in order; `clear` restarts only its own slot. A slot's s and c travel round the
//! loop with it: a cycle without `in_valid` carries them once round unchanged.
//!
//! # Array PEs
//!
//! [`kahan_pe`] and [`plain_pe`] are the same arithmetic with P = 1: when `enable`, s (and
//! c) take their values after the step at the clock edge. They mark one candidate boundary,
//! after the product (the array's stage plan decides whether it is a register). They return
//! the s register: the sum of every enabled step up to the previous cycle.

use lpgen_golden::{Format, LnsFormat};

use super::{
    add_module, lns_format, mul_core, nan_word, table_digests, zero_word, AddStages, Negate,
};
use crate::ir::{konst, mux, Module, StagePlan, E};
use crate::units::pe::ArrayPe;
use crate::units::{finish, start, too_many_stages, Built, GenError, Params, PeIo};

/// How the product is accumulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Acc {
    Kahan,
    Naive,
}

/// Where registers go: after the product (outside the loop) and between the Kahan loop's
/// additions (each one adds an interleaved accumulation).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cuts {
    pub product: bool,
    pub after_tmp: bool,
    pub after_t: bool,
    pub after_u: bool,
    /// A register after each addition's ROM read (the four G-table ROMs go to block RAM).
    pub roms: bool,
    /// Registers inside the naive loop's one addition (0..=3: after the ROM read; after the
    /// decode/compare and the ROM read; and after the code sum).
    pub naive_add: u32,
}

impl Cuts {
    /// The registers of `lns-kahan` with `stages` stages (the table above).
    fn of_stages(stages: u32) -> Cuts {
        let c = |product, after_tmp, after_t, after_u| Cuts {
            product,
            after_tmp,
            after_t,
            after_u,
            roms: false,
            naive_add: 0,
        };
        match stages {
            0 => c(false, false, false, false),
            1 => c(true, false, false, false),
            2 => c(true, false, true, false),
            3 => c(true, true, false, true),
            4 => c(true, true, true, true),
            _ => Cuts {
                roms: true,
                ..c(true, false, false, false)
            },
        }
    }

    fn in_loop(&self) -> u32 {
        self.after_tmp as u32
            + self.after_t as u32
            + self.after_u as u32
            + 4 * self.roms as u32
            + self.naive_add
    }

    /// The marks of the naive loop's addition.
    fn naive_add_stages(&self) -> AddStages {
        match self.naive_add {
            0 => AddStages::Comb,
            1 => AddStages::Rom,
            2 => AddStages::DecodeAndRom,
            _ => AddStages::All,
        }
    }

    /// The marks of each of the four additions.
    fn adds(&self) -> AddStages {
        if self.roms {
            AddStages::Rom
        } else {
            AddStages::Comb
        }
    }
}

/// An array PE marks one candidate boundary, after the product; its loop is one cycle.
const PE_CUTS: Cuts = Cuts {
    product: true,
    after_tmp: false,
    after_t: false,
    after_u: false,
    roms: false,
    naive_add: 0,
};

/// The most stages `lns-kahan` offers.
pub(crate) const KAHAN_MAX_STAGES: u32 = 5;

/// What [`build`] gives back.
pub(crate) struct Mac {
    /// The s register (read as it is).
    pub state: E,
    /// The step's accumulation after the step (its old s in a cycle without `enable`), in
    /// the cycle the loop ends in.
    pub sum: E,
    /// An operation of the step saturated (valid with `enable`), same cycle.
    pub overflow: E,
}

/// Builds one MAC into `m`, names prefixed with `prefix`. Reads `io` in the current cycle;
/// registers after the product or inside the loop only where `cuts` says (each one is a
/// `m.stage()` call, so the module's stage plan must cut every boundary this marks).
pub(crate) fn build(
    m: &mut Module,
    f: LnsFormat,
    prefix: &str,
    io: &PeIo,
    acc: Acc,
    cuts: Cuts,
) -> Mac {
    assert!(
        acc == Acc::Naive || cuts.naive_add == 0,
        "the Kahan loop places its registers between and after its additions"
    );
    assert!(
        acc == Acc::Kahan || cuts.in_loop() == cuts.naive_add,
        "the naive loop is one addition: registers only inside it"
    );
    assert!(cuts.naive_add <= 3, "an addition has three boundaries");
    let n = |s: &str| format!("{prefix}{s}");
    let w = f.width();
    let zero = zero_word(f);
    let cut = |m: &mut Module, yes: bool| {
        if yes {
            m.stage();
        }
    };

    m.comment("product x = a*b: the log codes added (golden Lns::mul)");
    let prod = mul_core(m, f, &n("mul_"), &io.a, &io.b, None, false);
    let x = m.wire(&n("x"), &prod.y);
    let mut over = m.wire(&n("x_overflow"), &prod.overflow);
    cut(m, cuts.product);

    // The loop: read s and c, add, write them back P cycles later. (Read the state registers
    // only through s_old / c_old: a register is read as it is in any cycle, a wire is delayed
    // to the cycle that reads it.)
    let pipelined = cuts.in_loop() > 0;
    let s = m.state(&n("s"), w, Some(f.zero() as u128));
    let c = (acc == Acc::Kahan).then(|| m.state(&n("c"), w, Some(f.zero() as u128)));
    // With P > 1 a slot comes round every P cycles whether or not it steps: in a cycle
    // without `enable` the additions that would change it see their b as absent (tmp = c,
    // t = s, c_new = tmp), so its s and c come round unchanged through the same datapath.
    // Delay registers do not reset, so a 1-bit marker whose delays do (`slot_ok`: 0 in the
    // loop positions filled before `rst` was released) makes a slot that comes round from
    // before the reset start from zero.
    let slot_ok = pipelined.then(|| {
        let ok = m.wire(&n("slot_ok"), &konst(1, 1));
        m.reset_on_delay(&ok);
        ok
    });
    let idle = pipelined.then(|| m.wire(&n("idle"), &io.enable.not()));
    let idle = idle.as_ref();
    m.comment(match acc {
        Acc::Kahan => "accumulation state: the sum s and Kahan's compensation c",
        Acc::Naive => "accumulation state: the sum s",
    });
    let s_old = m.wire(&n("s_old"), &s);
    let c_old = c.as_ref().map(|c| m.wire(&n("c_old"), c));
    // Interleaved, `clear` only counts with `enable` (a bubble keeps its slot).
    let clear = match pipelined {
        true => m.wire(&n("clear_step"), &io.clear.and(&io.enable)),
        false => io.clear.clone(),
    };
    let s_in = m.wire(&n("s_in"), &mux(&clear, &zero, &s_old));
    let c_in = c_old
        .as_ref()
        .map(|c_old| m.wire(&n("c_in"), &mux(&clear, &zero, c_old)));

    let (s_new, c_new) = match &c_in {
        Some(c_in) => {
            // Each addition is an instance of the adder module; its result is `NAME_y`.
            let add = |m: &mut Module, name: &str, a: &E, b: &E, neg, absent| {
                add_module(m, f, &n(name), a, b, neg, cuts.adds(), absent)
            };
            m.comment("Kahan step 1: tmp = c + x");
            let tmp = add(m, "tmp", c_in, &x, Negate::No, idle);
            over = m.wire(&n("overflow_by_tmp"), &over.or(&tmp.overflow));
            cut(m, cuts.after_tmp);
            m.comment("Kahan step 2: t = s + tmp (the new sum)");
            let t = add(m, "t", &s_in, &tmp.y, Negate::No, idle);
            over = m.wire(&n("overflow_by_t"), &over.or(&t.overflow));
            cut(m, cuts.after_t);
            m.comment("Kahan step 3: u = t - s (what the sum took of tmp)");
            let u = add(m, "u", &t.y, &s_in, Negate::Yes, None);
            over = m.wire(&n("overflow_by_u"), &over.or(&u.overflow));
            cut(m, cuts.after_u);
            m.comment("Kahan step 4: c_new = tmp - u (the part the sum lost)");
            let cn = add(m, "c_new", &tmp.y, &u.y, Negate::Yes, idle);
            over = m.wire(&n("overflow_by_c_new"), &over.or(&cn.overflow));
            (t.y, Some(cn.y))
        }
        None => {
            m.comment("naive step: t = s + x");
            let t = add_module(
                m,
                f,
                &n("t"),
                &s_in,
                &x,
                Negate::No,
                cuts.naive_add_stages(),
                idle,
            );
            over = m.wire(&n("overflow_by_t"), &over.or(&t.overflow));
            (t.y, None)
        }
    };

    m.comment("write back: s and c take the step's results");
    let en = &io.enable;
    let sum = match &slot_ok {
        None => {
            m.drive(&s, &s_new, Some(en));
            if let (Some(c), Some(c_new)) = (&c, &c_new) {
                m.drive(c, c_new, Some(en));
            }
            m.wire(&n("s_next"), &mux(en, &s_new, &s_old))
        }
        Some(ok) => {
            // The registers take a value every cycle: the step's result, which without
            // `enable` is the slot's old state.
            let keep = |v: &E| mux(ok, v, &zero);
            let s_next = m.wire(&n("s_next"), &keep(&s_new));
            m.drive(&s, &s_next, None);
            if let (Some(c), Some(c_new)) = (&c, &c_new) {
                let c_next = m.wire(&n("c_next"), &keep(c_new));
                m.drive(c, &c_next, None);
            }
            s_next
        }
    };
    Mac {
        state: s,
        sum,
        overflow: over,
    }
}

/// `lns-kahan`: one PE's multiply + Kahan accumulate as a unit (ports and timing: the module
/// documentation above). Stages 0..=5; table "sb+db" in the manifest.
pub(crate) fn kahan(p: &Params) -> Result<Built, GenError> {
    let f = lns_format(p)?;
    if p.stages > KAHAN_MAX_STAGES {
        return Err(too_many_stages(
            p.unit.name(),
            KAHAN_MAX_STAGES,
            p.stages,
            "",
        ));
    }
    // The stage plan cuts every boundary: `build` marks exactly the `stages` it uses.
    let (mut m, valid) = start(p, p.stages)?;
    let w = f.width();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let clear = m.input("clear", 1);
    let io = PeIo {
        a,
        b,
        enable: valid.clone(),
        clear,
    };
    let mac = build(&mut m, f, "", &io, Acc::Kahan, Cuts::of_stages(p.stages));
    assert_eq!(m.boundaries(), p.stages as usize);
    m.output("sum", &mac.sum);
    m.output("overflow", &mac.overflow.and(&valid));
    let nan = mac.sum.eq(&nan_word(f));
    m.output("nan", &nan);
    finish(m, &valid, table_digests(f))
}

/// The most registers an array PE puts inside its Kahan loop (`array --stages 3..=5`).
pub(crate) const PE_MAX_LOOP_REGISTERS: u32 = 3;

/// The `lns-plain` array PE with `loop_registers` (1..=3) registers inside its one addition
/// (after the ROM read; after the decode/compare and the ROM read; and after the code sum):
/// P = 1 + `loop_registers` interleaved accumulations, as [`kahan_pe_interleaved`]. Marks
/// 1 + `loop_registers` boundaries; returns the s register.
pub(crate) fn plain_pe_interleaved(
    m: &mut Module,
    f: Format,
    io: &PeIo,
    loop_registers: u32,
) -> Result<E, GenError> {
    let f = pe_format(f, "lns-plain")?;
    assert!((1..=PE_MAX_LOOP_REGISTERS).contains(&loop_registers));
    let cuts = Cuts {
        naive_add: loop_registers,
        ..PE_CUTS
    };
    Ok(build(m, f, "", io, Acc::Naive, cuts).state)
}

/// The `lns-kahan` array PE with `loop_registers` (1..=3) registers inside its Kahan loop,
/// after the product register: the loop then carries P = 1 + `loop_registers` interleaved
/// accumulations round-robin by cycle, like the `lns-kahan` unit at stages 2..=4 (the same
/// registers: t; tmp and u; tmp, t and u). Marks 1 + `loop_registers` boundaries (the
/// module's plan cuts them all). Returns the s register: one cycle after the loop's end,
/// the accumulation of the step that ended there, after that step.
pub(crate) fn kahan_pe_interleaved(
    m: &mut Module,
    f: Format,
    io: &PeIo,
    loop_registers: u32,
) -> Result<E, GenError> {
    let f = pe_format(f, "lns-kahan")?;
    assert!((1..=PE_MAX_LOOP_REGISTERS).contains(&loop_registers));
    let cuts = Cuts::of_stages(1 + loop_registers);
    debug_assert_eq!(cuts.in_loop(), loop_registers);
    Ok(build(m, f, "", io, Acc::Kahan, cuts).state)
}

fn pe_format(f: Format, pe: &str) -> Result<LnsFormat, GenError> {
    match f {
        Format::Lns(l) => Ok(l),
        other => Err(GenError(format!(
            "the {pe} PE needs an LNS format (e.g. lns:5:6), not {other}"
        ))),
    }
}

/// The builder for the `lns-kahan` array PE: when `enable`, (s, c) take the
/// Kahan step with x = a·b, from zero when `clear`; returns the s register.
pub(crate) fn kahan_pe(m: &mut Module, f: Format, prefix: &str, io: &PeIo) -> Result<E, GenError> {
    let f = pe_format(f, "lns-kahan")?;
    Ok(build(m, f, prefix, io, Acc::Kahan, PE_CUTS).state)
}

/// The builder for the `lns-plain` array PE: when `enable`, s = (clear ? 0 : s)
/// + a·b; returns the s register.
pub(crate) fn plain_pe(m: &mut Module, f: Format, prefix: &str, io: &PeIo) -> Result<E, GenError> {
    let f = pe_format(f, "lns-plain")?;
    Ok(build(m, f, prefix, io, Acc::Naive, PE_CUTS).state)
}

/// The `lns-kahan` and `lns-plain` array PEs: after the array's input register, the product
/// register, then up to [`PE_MAX_LOOP_REGISTERS`] registers inside the accumulation loop
/// (lns-kahan: between and after the Kahan additions; lns-plain: inside its one addition),
/// each interleaving one more accumulation.
pub(crate) struct LnsPe {
    kahan: bool,
}

pub(crate) static KAHAN_PE: LnsPe = LnsPe { kahan: true };
pub(crate) static PLAIN_PE: LnsPe = LnsPe { kahan: false };

impl ArrayPe for LnsPe {
    fn max_stages(&self) -> u32 {
        2 + PE_MAX_LOOP_REGISTERS
    }
    fn loop_registers(&self, stages: u32) -> u32 {
        stages.saturating_sub(2)
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        self.kahan
    }
    /// The product boundary, then the loop's: with loop registers every one is cut.
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let stages = p.stages;
        let boundaries = 1 + self.loop_registers(stages);
        (
            boundaries,
            StagePlan::spread(self.latency(stages), boundaries),
        )
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        match (self.loop_registers(p.stages), self.kahan) {
            (0, true) => kahan_pe(pe, p.format, "", io),
            (0, false) => plain_pe(pe, p.format, "", io),
            (n, true) => kahan_pe_interleaved(pe, p.format, io, n),
            (n, false) => plain_pe_interleaved(pe, p.format, io, n),
        }
    }
}
