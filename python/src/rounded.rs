//! `lpgen.Rounder`: one golden stochastic-rounding stream (`lpgen_golden::Rounder`, the
//! xorshift32 generator of docs/formats.md "Stochastic rounding") that the elementwise
//! operations of `Format` draw from, one draw per element in C order, across calls; and
//! `Format.acc_dot`, the float array PE's read-out with `--acc A`.

use std::sync::Mutex;

use lpgen_golden::{BinOp, Bits, Format, Rounder, Rounding};
use pyo3::prelude::*;

use crate::arrays::{broadcast_shape, broadcast_to, paired_lanes, value_error, Int, PairedLanes};
use crate::format::{seed_value, PyFormat};

/// A stochastic rounding stream: `Rounder("stochastic:R", seed=S)`. Hand it to
/// `Format.add/sub/mul/div/fma(…, rounder=r)`: each element (numpy broadcasting, C order)
/// takes the stream's next draw, and the stream runs on across calls, as a generated unit
/// with `--rounding stochastic:R --rounding-seed S` steps it once per operation.
#[pyclass(module = "lpgen", name = "Rounder", frozen)]
pub struct PyRounder {
    inner: Mutex<Rounder>,
}

#[pymethods]
impl PyRounder {
    #[new]
    #[pyo3(signature = (rounding, seed=None))]
    fn new(rounding: &str, seed: Option<Int<u64>>) -> PyResult<PyRounder> {
        let seed = seed.map(seed_value).transpose()?.unwrap_or(0);
        let r: Rounding = rounding.parse().map_err(value_error)?;
        if r == Rounding::Nearest {
            return Err(value_error(
                "Rounder takes rounding='stochastic:R' (nearest needs no stream)",
            ));
        }
        Ok(PyRounder {
            inner: Mutex::new(Rounder::new(r, seed)),
        })
    }

    /// The generator's 32-bit state (the hardware's `sr_state` after as many operations).
    #[getter]
    fn state(&self) -> u32 {
        self.lock().generator().state()
    }

    /// `stochastic:R`.
    #[getter]
    fn rounding(&self) -> String {
        self.lock().rounding().to_string()
    }

    fn __repr__(&self) -> String {
        let r = self.lock();
        format!(
            "lpgen.Rounder({:?}, state={:#010x})",
            r.rounding().to_string(),
            r.generator().state()
        )
    }
}

impl PyRounder {
    fn lock(&self) -> std::sync::MutexGuard<'_, Rounder> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl PyFormat {
    /// a `op` b rounded by the stream `r`, elementwise in C order (one draw each).
    pub fn binop_rounded<'py>(
        &self,
        py: Python<'py>,
        op: BinOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        r: &PyRounder,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (a, b) = (self.words(a)?, self.words(b)?);
        let shape = broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?;
        let (a, b) = (broadcast_to(&a, &shape), broadcast_to(&b, &shape));
        let mut g = r.lock();
        self.calc
            .check_rounding(g.rounding())
            .map_err(value_error)?;
        let out: Result<Vec<Bits>, _> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| self.calc.binop_with(op, x, y, &mut g))
            .collect();
        self.out(py, &shape, out.map_err(value_error)?)
    }

    /// √a rounded by the stream `r`, elementwise in C order (one draw each).
    pub fn sqrt_rounded<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        r: &PyRounder,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.words(a)?;
        let shape = a.shape().to_vec();
        let mut g = r.lock();
        self.calc
            .check_rounding(g.rounding())
            .map_err(value_error)?;
        let out: Result<Vec<Bits>, _> = a.iter().map(|&x| self.calc.sqrt_with(x, &mut g)).collect();
        self.out(py, &shape, out.map_err(value_error)?)
    }

    /// Each word converted to `to` by the stream `r` (golden `alu::convert_with`: float
    /// results only), in C order, one draw each.
    pub fn convert_rounded<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
        to: &PyFormat,
        r: &PyRounder,
    ) -> PyResult<Bound<'py, PyAny>> {
        lpgen_golden::alu::convert_pair(self.format, to.format).map_err(value_error)?;
        let w = self.words(words)?;
        let shape = w.shape().to_vec();
        let mut g = r.lock();
        let out: Result<Vec<Bits>, _> = w
            .iter()
            .map(|&x| lpgen_golden::alu::convert_with(&self.calc, &to.calc, x, &mut g))
            .collect();
        to.out(py, &shape, out.map_err(value_error)?)
    }

    /// a·b + c rounded once by the stream `r` (float formats), elementwise in C order.
    pub fn fma_rounded<'py>(
        &self,
        py: Python<'py>,
        abc: [&Bound<'py, PyAny>; 3],
        r: &PyRounder,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Format::Float(f) = self.format else {
            return Err(value_error(format!(
                "fma with a rounder: stochastic fma is defined for float formats, not {}",
                self.format
            )));
        };
        let [a, b, c] = abc.map(|x| self.words(x));
        let (a, b, c) = (a?, b?, c?);
        let shape = broadcast_shape(&[a.shape(), b.shape(), c.shape()]).map_err(value_error)?;
        let (a, b, c) = (
            broadcast_to(&a, &shape),
            broadcast_to(&b, &shape),
            broadcast_to(&c, &shape),
        );
        let mut g = r.lock();
        let out = (0..a.len())
            .map(|i| f.fma_with(a[i], b[i], c[i], &mut g))
            .collect();
        self.out(py, &shape, out)
    }

    /// The float array PE's read-out with `--acc A` (docs/rtl.md): the golden
    /// `FloatFormat::dot_wide` (`WideAcc`) of each lane.
    pub fn acc_dot_words<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        acc: &str,
        axis: &Int<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (Format::Float(f), Ok(Format::Float(wide))) = (self.format, acc.parse::<Format>())
        else {
            return Err(value_error(format!(
                "acc_dot takes a float format and a float accumulator format, not {} and {acc:?}",
                self.format
            )));
        };
        let PairedLanes {
            a,
            b,
            k,
            lanes,
            out_shape,
            ..
        } = paired_lanes(&self.words(a)?, &self.words(b)?, axis)?;
        let out = (0..lanes)
            .map(|i| f.dot_wide(&wide, &a[i * k..(i + 1) * k], &b[i * k..(i + 1) * k]))
            .collect();
        self.out(py, &out_shape, out)
    }
}
