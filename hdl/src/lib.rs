//! The RTL generator (SPEC.md §4): a small runtime-parametric hardware IR ([`ir`]), a
//! Verilog-2005 emitter ([`emit`]), one generator per unit ([`units`]), and the JSON manifest
//! of a generated design ([`manifest`]).

pub mod emit;
pub mod ir;
pub mod limits;
pub mod manifest;
pub mod sources;
pub mod units;
pub use manifest::{Direction, Manifest};
pub use sources::{Verilog, VerilogFile};
pub use units::{
    fdpa_array_params, fdpa_params, generate, wrap_axis, Design, GenError, Params, PeKind, Unit,
    REGISTERED_MULTIPLIER_PREFIX,
};
