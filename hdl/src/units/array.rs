//! The R×C output-stationary systolic matmul array.

use super::{not_yet, Built, GenError, Params};

pub(crate) fn array(p: &Params) -> Result<Built, GenError> {
    Err(not_yet(p))
}

pub(crate) fn grid(_full: bool) -> Vec<Params> {
    vec![]
}
