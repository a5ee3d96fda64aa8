//! The RTL generator (SPEC.md §4): a small runtime-parametric hardware IR ([`ir`]), a
//! Verilog-2005 emitter ([`emit`]), and one generator per unit ([`units`]).

pub mod emit;
pub mod ir;
pub mod units;
pub use units::{generate, Design, GenError, Params, PeKind, Unit};
