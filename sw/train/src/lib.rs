//! The training driver (SPEC.md §6): networks (MLPs, LeNet-5, maxout with dropout; `arch`)
//! trained through a [`machine::Machine`] (the golden model, f32, or the simulated RTL) by
//! SGD, AdaGrad, RMSProp, Adam or AdamW, with the seeds' Kahan placements, quires, reduced precision and
//! mixed-precision stage formats.

mod adam;
pub mod arch;
pub mod chart;
pub mod checkpoint;
pub mod compress;
pub mod config;
pub mod data;
pub mod eval;
pub mod family;
pub mod layers;
pub mod machine;
pub mod model;
pub mod net;
mod net_rounding;
mod net_shares;
mod net_softmax;
mod net_storage;
pub mod optim;
pub mod parallel;
pub mod placement;
pub mod plot;
pub mod rounding;
pub mod scaling;
pub mod storage;
pub mod trainer;
pub mod transformer;

/// The float machine's old path (`lpgen_train::float::Float`): it lives in `machine::f32`.
pub use machine::f32 as float;
/// The RTL machine's old path (`lpgen_train::rtl::Rtl`): it lives in `machine::rtl`.
#[cfg(feature = "rtl")]
pub use machine::rtl;

use std::fmt;

/// A training error for the user: one line naming the problem and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainError(pub String);

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TrainError {}
