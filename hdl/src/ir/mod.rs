//! A small hardware IR whose widths are chosen at run time.
//!
//! A [`Module`] holds signals (ports, wires, registers), continuous assignments, stateful
//! registers with a next-value expression, and ROMs. Expressions ([`E`]) are immutable trees
//! that know their width; every operator requires operands of equal width (extend or slice
//! explicitly), so the emitted Verilog has no implicit width conversions.
//!
//! Pipelining works as in FloPoCo: the module has a current cycle; every wire records the
//! cycle it is computed in, and an expression assigned in a later cycle automatically reads a
//! delayed copy of each older signal (delay registers are created once and shared). A
//! generator marks its candidate register boundaries with [`Module::stage`]; the stage plan
//! chosen from `--stages S` decides which become registers. Stateful registers (accumulators)
//! are outside this scheme: they are read as they are, in whatever cycle.

mod expr;
mod hier;
mod module;

pub use expr::{
    cat, konst, mux, named, signed_bits, signed_konst, tree, BinOp, CmpOp, Node, ReduceOp, ShiftOp,
    E,
};
pub use hier::{Instance, InstanceOutputs, Library, SubModule, SubPort};
pub use module::{Fork, Module, Rom, SigId, SigKind, Signal, StagePlan, StateReg};
