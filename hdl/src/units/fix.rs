//! The fixed-point MAC with a wide accumulator.

use super::{not_yet, Built, GenError, Params};

pub(crate) fn mac(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn grid(_full: bool) -> Vec<Params> {
    vec![]
}
