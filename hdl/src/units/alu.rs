//! One vector lane of a format (`alu`) and L lanes of it (`vector`).

use super::{not_yet, Built, GenError, Params};

pub(crate) fn alu(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn vector(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn grid(_full: bool) -> Vec<Params> {
    vec![]
}
