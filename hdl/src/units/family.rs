//! What the unit generators need of a number family, one implementation per family module
//! (`lns/`, `posit/`, `fix/`, `dfix/`, `float/`, and f32, which has no hardware of its own), and the
//! one place that maps a golden [`Format`] to it: [`hw`]. Which formats, PE kinds and
//! accumulations exist and go together is the golden registry's (`lpgen_golden::family`).

use lpgen_golden::{AluOp, Format};

use super::alu::{LaneIn, OpResults};
use super::{Built, GenError, Params};
use crate::ir::{Module, E};

/// A family's hardware: its lanes (`alu`, `vector`), conversions (`convert`, the lanes'
/// `t_in`/`t_out`) and tables. The `to` formats are of the same family (the golden
/// registry and `lpgen_golden::Alu::new` refuse others before a generator runs).
pub(crate) trait HwFamily {
    /// Candidate stage boundaries of the family's lane.
    fn lane_stages(&self) -> u32;
    /// Refuses an `alu` or `vector` of `p` the family's lane cannot be (before its stages are
    /// checked, so the refusal names the reason).
    fn check_lane(&self, p: &Params) -> Result<(), GenError> {
        super::alu::check(p)
    }
    /// The `alu` or `vector` design on this family's words (the golden-ALU lane of
    /// `alu::lane_unit`, unless the family has a lane of its own).
    fn lane_unit(&self, p: &Params) -> Result<Built, GenError> {
        super::alu::lane_unit(p)
    }
    /// Every opcode's result of one lane converting to and from `to` (wires named `px…`).
    fn lane_ops(
        &self,
        m: &mut Module,
        to: Format,
        px: &str,
        io: &LaneIn,
        is: &dyn Fn(AluOp) -> E,
    ) -> OpResults;
    /// Whether the family's lane has the `sqrt` opcode (`--sqrt`; golden `Calc::sqrt`): its
    /// `lane_ops` give `AluOp::Sqrt` when `LaneIn::sqrt` (`alu::check_sqrt` refuses the
    /// others before a generator runs).
    fn has_lane_sqrt(&self) -> bool;
    /// Whether the family's lane has a stochastic datapath (`--rounding stochastic:R`: the
    /// rounding opcodes draw from a per-lane stream, golden `RoundedOps::binop_with`).
    fn has_stochastic_lanes(&self) -> bool;
    /// Candidate stage boundaries of `convert` to `to`.
    fn convert_stages(&self, to: Format) -> u32;
    /// `x` of this format converted to `to`.
    fn convert(&self, m: &mut Module, to: Format, px: &str, x: &E) -> E;
    /// (name, digest) of every table a design on these words holds (families with ROM
    /// tables, LNS's G tables, say which).
    fn tables(&self) -> Vec<(String, String)> {
        vec![]
    }
    /// The lane's `nan` output for result `y` where the family has more than one NaN word
    /// (float); `None`: `y` equals the family's one NaN word (`Calc::nan`).
    fn nan_flag(&self, _y: &E) -> Option<E> {
        None
    }
}

/// The hardware of `f`'s family: the registration of every family in this crate.
pub(crate) fn hw(f: &Format) -> &dyn HwFamily {
    match f {
        Format::Lns(x) => x,
        Format::Posit(x) => x,
        Format::Fix(x) => x,
        Format::Dfix(x) => x,
        Format::Float(x) => x,
        Format::Takum(x) => x,
        // No lanes or conversions of its own: f32 (the q8 codecs read and write its words,
        // `units/q8/f32.rs`; float:8:23 is its words with hardware).
        Format::F32(_) => &NoHardware,
    }
}

/// The refusal of a family without hardware of a kind, for the impls of such families
/// (reached only through a generator bug: the registry refuses first).
pub(crate) fn no_hardware(f: &dyn std::fmt::Display, what: &str) -> ! {
    panic!("{f} has no {what} (the family registry refuses it before a generator runs)")
}

/// A family without hardware of its own: no lane (the golden `Alu::new` refuses it before
/// any generator runs, with its one-line message) and no conversion.
struct NoHardware;

impl std::fmt::Display for NoHardware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this family")
    }
}

impl HwFamily for NoHardware {
    fn lane_stages(&self) -> u32 {
        0
    }
    fn lane_ops(
        &self,
        _: &mut Module,
        _: Format,
        _: &str,
        _: &LaneIn,
        _: &dyn Fn(AluOp) -> E,
    ) -> OpResults {
        no_hardware(self, "lane")
    }
    fn has_lane_sqrt(&self) -> bool {
        false
    }
    fn has_stochastic_lanes(&self) -> bool {
        false
    }
    fn convert_stages(&self, _: Format) -> u32 {
        1
    }
    fn convert(&self, _: &mut Module, _: Format, _: &str, _: &E) -> E {
        no_hardware(self, "convert")
    }
}
