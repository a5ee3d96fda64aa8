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

/// PE builder (`PeBuilder`) for the `posit-quire` array PE.
#[allow(dead_code)]
pub(crate) fn quire_pe(
    _m: &mut crate::ir::Module,
    f: lpgen_golden::Format,
    _prefix: &str,
    _io: &super::PeIo,
) -> Result<crate::ir::E, GenError> {
    Err(GenError(format!(
        "the posit-quire PE is not generated yet ({f})"
    )))
}

pub(crate) fn grid(_full: bool) -> Vec<Params> {
    vec![]
}
