//! Co-simulation (SPEC.md §5): generated RTL compiled with Verilator at run time, driven from
//! Rust, and compared bit for bit with the golden model.
//!
//! - [`runtime`]: finds Verilator, builds a design with a generated C++ shim into a shared
//!   object (cached by content digest; a broken cache entry is rebuilt, never trusted) and
//!   loads it with `libloading`. One FFI call runs a whole batch of cycles.
//! - [`engine`]: streams cycles through a model, honours the latency and `out_valid`, and
//!   compares every output bit with the expected words; mismatches keep their inputs, and a
//!   failing case can be replayed into a VCD.
//! - [`drivers`]: one driver per unit family (the registry is [`drivers::run`]): the stimuli
//!   (exhaustive, corner cases, random with a replayable seed) and the golden model's answer
//!   for each step.

pub mod digest;
pub mod drivers;
pub mod engine;
pub mod layout;
pub mod rng;
pub mod runtime;
mod shim;
pub use lpgen_tempfiles as tempfiles;

pub use drivers::{run, Mode, Report, RunOptions};
pub use engine::{Checker, Mismatch};
pub use layout::Layout;
pub use runtime::{Model, Toolchain};

use std::fmt;

/// A co-simulation error for the user: one line naming the problem and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifError(pub String);

impl fmt::Display for VerifError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VerifError {}

impl From<lpgen_hdl::GenError> for VerifError {
    fn from(e: lpgen_hdl::GenError) -> Self {
        VerifError(e.0)
    }
}

pub type Result<T, E = VerifError> = std::result::Result<T, E>;
