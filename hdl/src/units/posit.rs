//! Posit units: adder, multiplier, and the fused MAC into a quire (both standards).

use super::{not_yet, Built, GenError, Params};

pub(crate) fn add(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn mul(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn mac(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn grid(_full: bool) -> Vec<Params> {
    vec![]
}
