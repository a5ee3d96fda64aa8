//! `Format.alu`: one lane of the vector ALU (`lpgen_golden::Alu`, the hardware `alu` and
//! `vector` units' rule) on broadcast numpy arrays; `Format.dfix_lane`: the dfix lane
//! (`DfixFormat::lane`).

use std::cmp::Ordering;

use lpgen_golden::dfix::DFIX_LANE_OP_BITS;
use lpgen_golden::{Alu, AluIn, AluOut, Format, ALU_OP_BITS};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{
    array_out, broadcast_shape, broadcast_to, ints_in, par_map, value_error, words_in,
};
use crate::codecs::format_arg;
use crate::format::PyFormat;

/// The lane of `f` converting to `to` (default: `f`): `(y, t_out, cmp, nan)` of every
/// element of the broadcast `op`, `a`, `b`, `sel`, `t_in`.
pub fn alu<'py>(
    f: &PyFormat,
    py: Python<'py>,
    ins: [&Bound<'py, PyAny>; 5],
    to: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let t = match to {
        Some(t) => format_arg(t)?,
        None => PyFormat {
            format: f.format,
            calc: f.calc,
            scale: f.scale,
        },
    };
    let lane = Alu::new(f.format, t.format).map_err(value_error)?;
    let [op, a, b, sel, t_in] = ins;
    let op = words_in(op, ALU_OP_BITS, "an ALU opcode")?;
    let (a, b) = (f.words(a)?, f.words(b)?);
    let sel = words_in(sel, 1, "a select bit")?;
    let t_in = t.words(t_in)?;
    let shape = broadcast_shape(&[op.shape(), a.shape(), b.shape(), sel.shape(), t_in.shape()])
        .map_err(value_error)?;
    let op = broadcast_to(&op, &shape);
    let (a, b) = (broadcast_to(&a, &shape), broadcast_to(&b, &shape));
    let (sel, t_in) = (broadcast_to(&sel, &shape), broadcast_to(&t_in, &shape));
    let out = py.detach(|| {
        par_map(op.len(), |i| {
            let o: AluOut = lane.eval(&AluIn {
                op: op[i] as u8,
                a: a[i],
                b: b[i],
                sel: sel[i] == 1,
                t_in: t_in[i],
            });
            (o.y, o.t_out, o.cmp, o.nan)
        })
    });
    let y = f.out(py, &shape, out.iter().map(|o| o.0).collect())?;
    let t_out = t.out(py, &shape, out.iter().map(|o| o.1).collect())?;
    let cmp = array_out(py, &shape, out.iter().map(|o| o.2).collect::<Vec<u8>>())?;
    let nan = array_out(py, &shape, out.iter().map(|o| o.3).collect::<Vec<bool>>())?;
    PyTuple::new(py, [y, t_out, cmp, nan])
}

/// The dfix lane of `f` (`DfixFormat::lane`, the hardware `alu`/`vector` on `dfix:W`):
/// `(y, overflow, overflow_half, cmp)` of every element of the broadcast `op`, `a`, `b`,
/// `shift`.
pub fn dfix_lane<'py>(
    f: &PyFormat,
    py: Python<'py>,
    ins: [&Bound<'py, PyAny>; 3],
    shift: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let Format::Dfix(d) = f.format else {
        return Err(value_error(format!(
            "dfix_lane takes a dfix:W format, not {} (other families: Format.alu)",
            f.format
        )));
    };
    let [op, a, b] = ins;
    let op = words_in(op, DFIX_LANE_OP_BITS, "a dfix lane opcode")?;
    let (a, b) = (f.words(a)?, f.words(b)?);
    let shift = ints_in(shift, "shift", i64::from(i32::MAX))?;
    let shape =
        broadcast_shape(&[op.shape(), a.shape(), b.shape(), shift.shape()]).map_err(value_error)?;
    let op = broadcast_to(&op, &shape);
    let (a, b) = (broadcast_to(&a, &shape), broadcast_to(&b, &shape));
    let shift = broadcast_to(&shift, &shape);
    let calc = f.calc;
    let out = py.detach(|| {
        par_map(op.len(), |i| {
            let r = d.lane(op[i], a[i], b[i], shift[i] as i32);
            let cmp = match calc.cmp(a[i], b[i]) {
                Some(Ordering::Less) => 1u8,
                Some(Ordering::Greater) => 2,
                Some(Ordering::Equal) => 0,
                None => 3,
            };
            (r.word, r.overflow, r.overflow_at_half, cmp)
        })
    });
    let y = f.out(py, &shape, out.iter().map(|o| o.0).collect())?;
    let over = array_out(py, &shape, out.iter().map(|o| o.1).collect::<Vec<bool>>())?;
    let half = array_out(py, &shape, out.iter().map(|o| o.2).collect::<Vec<bool>>())?;
    let cmp = array_out(py, &shape, out.iter().map(|o| o.3).collect::<Vec<u8>>())?;
    PyTuple::new(py, [y, over, half, cmp])
}
