//! The drivers: for each unit, stimuli and the golden model's answer for every step, fed to
//! the RTL (through a [`Checker`]) in the same order. [`run`] is the registry: one match arm
//! per unit; a unit without a driver is refused in one line.
//!
//! Adding a unit (e.g. `alu`, `vector`): a module with `plan(p, mode) -> Result<Plan>` (refuse
//! what it cannot do, estimate the cycles) and a `drive(ctx)` that, for each cycle, fills the
//! input slots (`ctx.layout.slot(name)`, buses with `layout::put_bits`) and pushes them with
//! the golden outputs due `latency` cycles later (`ctx.chk.push(ins, Some(want))`, `None` for
//! a bubble), calling `ctx.chk.mark_restart()` where the stimuli stop depending on earlier
//! state; then one arm in `plan`. Latency, `out_valid`, batching, reports and VCDs are
//! the checker's.

mod alu;
mod array;
mod binary;
mod block_array;
mod convert;
mod dfix;
mod dfix_lane;
mod fdpa;
mod fdpa_array;
mod float_fma;
mod float_words;
mod kahan;
mod lane_sr;
mod mac;
mod mx;
mod mx_array;
mod mx_enc;
mod nvfp4_array;
mod nvfp4_dot;
mod nvfp4_enc;
mod q8;
mod quant1;
mod stochastic;
mod tiles;
pub(crate) mod words;

pub use array::Pes;

use std::path::{Path, PathBuf};

use lpgen_golden::{Calc, Format, Rounding};
use lpgen_hdl::{generate, Design, Params, PeKind, Unit};

use crate::engine::{replay_vcd, Checker, Mismatch, Replay};
use crate::layout::{get_bits, Layout};
use crate::runtime::{Model, Toolchain};
use crate::{Result, VerifError};

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every operand pair (where the unit and format allow it).
    Exhaustive,
    /// Corner cases, then random operations up to this many steps.
    Vectors(u64),
}

pub struct RunOptions {
    pub mode: Mode,
    pub seed: u64,
    /// Where to write the VCD of the first failing case (rebuilt with tracing and replayed).
    pub vcd: Option<PathBuf>,
    /// Called now and then with (cycles run, cycles planned).
    pub progress: Option<Box<dyn FnMut(u64, u64)>>,
    /// `(rank, parts)`: check only this rank's share of the steps (a distributed run;
    /// [`Checker::share`]).
    pub share: Option<(usize, usize)>,
}

impl RunOptions {
    pub fn new(mode: Mode, seed: u64) -> RunOptions {
        RunOptions {
            mode,
            seed,
            vcd: None,
            progress: None,
            share: None,
        }
    }
}

/// The outcome of a run.
#[derive(Debug)]
pub struct Report {
    pub top: String,
    /// Results compared bit for bit and equal.
    pub passed: u64,
    /// Results that differ, are late or missing, and spurious `out_valid` cycles.
    pub failed: u64,
    /// The first mismatches, described (inputs, expected and actual bits and values).
    pub details: Vec<String>,
    /// What became of the VCD of the first failing case, if one was asked for.
    pub vcd: Option<String>,
    pub cycles: u64,
}

/// Refuses, in one line, a request no driver can serve (before any build).
pub fn supported(p: &Params, mode: Mode) -> Result<()> {
    plan(p, mode).map(|_| ())
}

/// Builds (or finds in the cache) the model of `design`, so that ranks of a distributed run
/// that start after this one load it instead of building it too.
pub fn prepare(tc: &Toolchain, design: &Design) -> Result<()> {
    let layout = Layout::from_manifest(&design.manifest)?;
    tc.model(&design.verilog, &layout, false).map(drop)
}

/// Generates the design of `p` and checks it against the golden model.
pub fn run(tc: &Toolchain, p: &Params, opts: RunOptions) -> Result<Report> {
    let d = generate(p)?;
    run_design(tc, p, &d, opts)
}

/// Checks `design` (the design of `p`, or a deliberately altered one) against the golden
/// model of `p`.
pub fn run_design(tc: &Toolchain, p: &Params, d: &Design, mut opts: RunOptions) -> Result<Report> {
    let layout = Layout::from_manifest(&d.manifest)?;
    // Refuse what a driver cannot do before spending a build on it.
    let plan = plan(p, opts.mode)?;
    let model = tc.model(&d.verilog, &layout, false)?;
    let mut chk = Checker::new(model, &layout)?;
    let mut total = plan.cycles;
    if let Some((rank, parts)) = opts.share {
        chk.share(rank, parts);
        total = total.div_ceil(parts as u64);
    }
    if let Some(mut f) = opts.progress.take() {
        chk.on_progress(Box::new(move |c| f(c, total)));
    }
    let mut ctx = Ctx {
        p,
        layout: &layout,
        chk: &mut chk,
        mode: opts.mode,
        seed: opts.seed,
    };
    (plan.drive)(&mut ctx)?;
    chk.finish();
    let describe = Describer::new(p, &layout);
    let details = chk
        .mismatches
        .iter()
        .map(|m| describe.mismatch(m))
        .collect();
    let vcd = match (&opts.vcd, &chk.replay) {
        (Some(path), Some(r)) => Some(write_vcd(tc, d, &layout, r, path, &chk.mismatches[0])),
        _ => None,
    };
    Ok(Report {
        top: layout.top.clone(),
        passed: chk.passed,
        failed: chk.failed,
        details,
        vcd,
        cycles: chk.cycle(),
    })
}

fn write_vcd(
    tc: &Toolchain,
    d: &Design,
    l: &Layout,
    r: &Replay,
    path: &Path,
    first: &Mismatch,
) -> String {
    let go = || -> Result<String> {
        let so = tc.shared_object(&d.verilog, l, true)?;
        let mut m = Model::load(&so, l, Some(path))?;
        let got = replay_vcd(&mut m, l, r, path)?;
        drop(m);
        let same = got == first.got;
        Ok(format!(
            "VCD of the failing case: {} (cycles {}..{} replayed from {}{}; {})",
            path.display(),
            r.start,
            r.fail + u64::from(l.latency) + 4,
            if r.start == 0 {
                "reset"
            } else {
                "a restart point"
            },
            if r.complete {
                ""
            } else {
                ", history truncated"
            },
            if same {
                "the mismatch reproduces"
            } else {
                "the replay differs from the run"
            }
        ))
    };
    go().unwrap_or_else(|e| format!("no VCD: {e}"))
}

/// A unit's driver and its planned length in cycles.
pub(crate) struct Plan {
    pub cycles: u64,
    pub drive: fn(&mut Ctx) -> Result<()>,
}

/// What a driver works with.
pub(crate) struct Ctx<'a> {
    pub p: &'a Params,
    pub layout: &'a Layout,
    pub chk: &'a mut Checker,
    pub mode: Mode,
    pub seed: u64,
}

/// The registry: the driver of each unit, refusing impossible requests (exit status 2).
fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    match p.unit {
        Unit::FloatAdd | Unit::FloatMul if p.rounding != Rounding::Nearest => {
            stochastic::plan(p, mode)
        }
        Unit::LnsMul
        | Unit::LnsAdd
        | Unit::PositAdd
        | Unit::PositMul
        | Unit::FloatAdd
        | Unit::FloatMul => binary::plan(p, mode),
        Unit::FloatFma => float_fma::plan(p, mode),
        Unit::LnsKahan => kahan::plan(p, mode),
        Unit::PositMac | Unit::FixMac => mac::plan(p, mode),
        Unit::Array if p.pe == PeKind::Dfix => dfix::plan_array(p, mode),
        Unit::Array if p.pe == PeKind::Mx => mx_array::plan(p, mode),
        Unit::Array if p.pe == PeKind::Fdpa => fdpa_array::plan(p, mode),
        Unit::Array if p.pe == PeKind::Nvfp4 => nvfp4_array::plan(p, mode),
        Unit::Array => array::plan(p, mode),
        Unit::Alu | Unit::Vector if p.rounding != Rounding::Nearest => lane_sr::plan(p, mode),
        Unit::Alu | Unit::Vector if p.dfix_format().is_some() => dfix_lane::plan(p, mode),
        Unit::Alu | Unit::Vector => alu::plan(p, mode),
        Unit::Quant1 => quant1::plan(p, mode),
        Unit::Q8Enc | Unit::Q8Dec => q8::plan(p, mode),
        Unit::Convert => convert::plan(p, mode),
        Unit::DfixMonitor => dfix::plan_monitor(p, mode),
        Unit::MxDot => mx::plan(p, mode),
        Unit::MxEnc => mx_enc::plan(p, mode),
        Unit::Nvfp4Enc => nvfp4_enc::plan(p, mode),
        Unit::Nvfp4Dot => nvfp4_dot::plan(p, mode),
        Unit::Fdpa => fdpa::plan(p, mode),
    }
}

pub(crate) fn no_exhaustive(p: &Params, why: &str) -> VerifError {
    VerifError(format!(
        "--exhaustive is not available for {} on {}: {why} (use --vectors N)",
        p.unit.name(),
        p.format
    ))
}

/// Formats mismatches: every input and output port, words with their values.
struct Describer {
    calc: Calc,
    w: u32,
    /// `convert`'s output `y` holds words of `--to`, not of the format.
    y_to: Option<(Calc, u32)>,
    /// fdpa's `c` and `y`: words of the output format.
    out_words: Option<(Calc, u32)>,
    /// An array on MX or NVFP4 blocks: (operand bits, element bits) of `a_in` and `b_in`.
    blocks: Option<(usize, u32)>,
    layout: Layout,
}

/// Ports that carry format words (buses of them for the array).
const WORD_PORTS: [&str; 15] = [
    "a", "b", "c", "y", "sum", "a_in", "b_in", "c_out", "g", "r", "r_out", "neg", "pos", "x",
    "scale",
];

impl Describer {
    fn new(p: &Params, layout: &Layout) -> Describer {
        let y_to = match (p.unit, p.to) {
            (Unit::Convert, Some(t)) => Some((t.calc(), t.width())),
            _ => None,
        };
        // fdpa's c and y are words of its output format (binary32 or binary16).
        let out_words = match (p.unit, fdpa::plan_of(p)) {
            (Unit::Fdpa, Ok(pl)) => Some((Format::Float(pl.output()).calc(), pl.output().width())),
            _ => None,
        };
        let blocks = match (p.unit, p.mx, nvfp4_dot::block_of(p)) {
            (Unit::Array, Some(mx), _) => {
                Some((8 + mx.block * mx.elem_width() as usize, mx.elem_width()))
            }
            (Unit::Array, None, Ok(k)) => Some((8 + 4 * k, 4)),
            _ => None,
        };
        Describer {
            calc: p.format.calc(),
            w: p.format.width(),
            y_to,
            out_words,
            blocks,
            layout: layout.clone(),
        }
    }

    /// An MX or NVFP4 array's operand port as blocks: `a_in=[x=0x7f: 01 02 …; …]` (scale byte, then
    /// the element codes in hex); `None` for other ports and designs.
    fn block_port(&self, slots: &[u64], port: &crate::layout::Port) -> Option<String> {
        let (ob, w) = self.blocks?;
        if !["a_in", "b_in"].contains(&port.name.as_str()) {
            return None;
        }
        let s = &slots[port.slot..port.slot + port.slots()];
        let blocks: Vec<String> = (0..port.width as usize / ob)
            .map(|j| {
                let codes: Vec<String> = (0..(ob - 8) / w as usize)
                    .map(|i| format!("{:02x}", get_bits(s, j * ob + 8 + i * w as usize, w)))
                    .collect();
                format!("x={:#04x}: {}", get_bits(s, j * ob, 8), codes.join(" "))
            })
            .collect();
        Some(format!("\n    {}=[{}]", port.name, blocks.join("; ")))
    }

    /// The calculator and word width of a port's words.
    fn format_of(&self, name: &str) -> (&Calc, u32) {
        match (&self.y_to, &self.out_words) {
            (Some((calc, w)), _) if name == "y" => (calc, *w),
            (_, Some((calc, w))) if name == "y" || name == "c" => (calc, *w),
            _ => (&self.calc, self.w),
        }
    }

    fn word(&self, name: &str, bits: u64) -> String {
        let (calc, w) = self.format_of(name);
        format!(
            "{:#0w$x} ({})",
            bits,
            calc.value_string(bits),
            w = w.div_ceil(4) as usize + 2
        )
    }

    /// The words of a port: (index, bits).
    fn words(&self, slots: &[u64], port: &crate::layout::Port) -> Vec<u64> {
        let s = &slots[port.slot..port.slot + port.slots()];
        if self.is_word_port(&port.name) {
            let (_, w) = self.format_of(&port.name);
            (0..(port.width / w) as usize)
                .map(|i| get_bits(s, i * w as usize, w))
                .collect()
        } else {
            vec![get_bits(s, 0, port.width.min(64))]
        }
    }

    /// Whether a port holds words of the format: a word port at least one word wide (an
    /// NVFP4 encoder's 8-bit `scale` beside f32 words is a plain number).
    fn is_word_port(&self, name: &str) -> bool {
        WORD_PORTS.contains(&name)
            && self
                .layout
                .port(name)
                .map_or(true, |p| p.width >= self.format_of(name).1)
    }

    fn value(&self, name: &str, bits: u64) -> String {
        if self.is_word_port(name) {
            self.word(name, bits)
        } else {
            format!("{bits}")
        }
    }

    fn mismatch(&self, m: &Mismatch) -> String {
        let mut s = format!(
            "step in cycle {} (0 = first cycle after reset):\n  inputs:",
            m.cycle
        );
        for p in self
            .layout
            .ports
            .iter()
            .filter(|p| p.input && p.name != "rst")
        {
            if let Some(text) = self.block_port(&m.ins, p) {
                s += &text;
                continue;
            }
            let ws = self.words(&m.ins, p);
            if ws.len() == 1 {
                s += &format!(" {}={}", p.name, self.value(&p.name, ws[0]));
            } else {
                let list: Vec<String> = ws.iter().map(|&w| self.value(&p.name, w)).collect();
                s += &format!("\n    {}=[{}]", p.name, list.join(", "));
            }
        }
        let lat = self.layout.latency;
        let got_valid = m.got[self.layout.slot("out_valid").unwrap_or(0)] & 1;
        let Some(want) = &m.want else {
            return s + &format!(
                "\n  no result due {lat} cycles later, but out_valid = {got_valid}"
            );
        };
        s += &format!("\n  {lat} cycles later: out_valid = {got_valid} (expected 1)");
        for p in self.layout.outputs().filter(|p| p.name != "out_valid") {
            let (ws, gs) = (self.words(want, p), self.words(&m.got, p));
            for (i, (w, g)) in ws.iter().zip(&gs).enumerate() {
                let name = if ws.len() > 1 {
                    format!("{}[{i}]", p.name)
                } else {
                    p.name.clone()
                };
                if w != g {
                    s += &format!(
                        "\n  {name}: expected {}, actual {}  <-- differs",
                        self.value(&p.name, *w),
                        self.value(&p.name, *g)
                    );
                } else if ws.len() == 1 {
                    s += &format!("\n  {name}: {} as expected", self.value(&p.name, *w));
                }
            }
        }
        s
    }
}
