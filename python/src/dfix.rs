//! `Format.dfix_dot`: dot products of `dfix:W` words read out at a shift with both overflow
//! flags (`DfixFormat::dot`, the `array --pe dfix` PE's read-out), on numpy arrays.

use lpgen_golden::dfix::MAX_SCALE;
use lpgen_golden::Format;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{array_out, paired_lanes, par_map, value_error, Int, PairedLanes};
use crate::format::PyFormat;

/// Σ_k a_k·b_k along `axis` of the broadcast words (integers, scale 0), accumulated exactly
/// and read out `shift` scale steps up: `(words, overflow, overflow_half)`.
pub fn dfix_dot<'py>(
    f: &PyFormat,
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    shift: Int<i64>,
    axis: &Int<isize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let Format::Dfix(d) = f.format else {
        return Err(value_error(format!(
            "dfix_dot takes a dfix:W format, not {} (other families: Format.dot)",
            f.format
        )));
    };
    // e = ea + eb + shift with every scale within ±MAX_SCALE.
    let limit = 3 * i64::from(MAX_SCALE);
    let out_of_range = |s: &str| format!("shift {s} is out of range: give -{limit}..={limit}");
    let shift = shift.or_refuse(out_of_range)?;
    if shift.unsigned_abs() > limit.unsigned_abs() {
        return Err(value_error(format!(
            "shift {shift} is out of range: give -{limit}..={limit}"
        )));
    }
    let PairedLanes {
        a,
        b,
        k,
        lanes,
        out_shape,
        ..
    } = paired_lanes(&f.words(a)?, &f.words(b)?, axis)?;
    let out = py.detach(|| {
        par_map(lanes, |i| {
            let lane = i * k..(i + 1) * k;
            let r = d.dot(&a[lane.clone()], 0, &b[lane], 0, shift as i32);
            (r.word, r.overflow, r.overflow_at_half)
        })
    });
    let y = f.out(py, &out_shape, out.iter().map(|o| o.0).collect())?;
    let over = array_out(
        py,
        &out_shape,
        out.iter().map(|o| o.1).collect::<Vec<bool>>(),
    )?;
    let half = array_out(
        py,
        &out_shape,
        out.iter().map(|o| o.2).collect::<Vec<bool>>(),
    )?;
    PyTuple::new(py, [y, over, half])
}
