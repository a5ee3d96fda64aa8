//! `lpgen.Scaled`, `lpgen.quantize_nvfp4` and `lpgen.DelayedScaling`: the scaled formats
//! (`nvfp4`, `scaled/ELEM/GRAN/SCALE[/t]`, docs/formats.md "Scaled formats and NVFP4") on
//! numpy arrays, every rule the golden `lpgen_golden::scale`'s.
//!
//! A tensor is a 1-D array (one row of K) or a 2-D array (R × K, row-major, K the reduction
//! dimension). `quantize` returns `(tensor_scale, scales, codes, values)`: the f32 tensor
//! scale as a float (1.0 without one), the group scales' codes (blocks: R × K/B, or K/B for a
//! 1-D tensor; rows: R; columns: K; tensor: 1), the element codes in the tensor's shape, and
//! the dequantized values (float64, each rounded once).

use std::sync::Mutex;

use lpgen_golden::scale::{Delayed, Granularity, Quantized, Rule, ScaledFormat};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;

use crate::arrays::{array_out, value_error, values_in, words_in, words_out, Int, Values};
use crate::format::rounder;

/// A scaled format: `Scaled("nvfp4")`, `Scaled("scaled/fp8:e4m3/tensor/f32")`.
#[pyclass(module = "lpgen", name = "Scaled", frozen)]
pub struct PyScaled {
    f: ScaledFormat,
}

/// The tensor of `x` as (values, R, K, whether it was 1-D).
fn tensor(x: &Values<'_, f64>) -> PyResult<(Vec<f64>, usize, usize, bool)> {
    let (xs, shape) = values_in(x);
    match shape[..] {
        [k] => Ok((xs, 1, k, true)),
        [r, k] => Ok((xs, r, k, false)),
        _ => Err(value_error(format!(
            "a tensor is 1-D (K) or 2-D (R × K), not {} dimensions",
            shape.len()
        ))),
    }
}

/// `(tensor_scale, scales, codes, values)` of a quantized tensor.
fn quantized_out<'py>(
    py: Python<'py>,
    f: &ScaledFormat,
    q: &Quantized,
    one_d: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let shape: Vec<usize> = if one_d {
        vec![q.cols]
    } else {
        vec![q.rows, q.cols]
    };
    let scale_shape: Vec<usize> = match f.granularity {
        Granularity::Block(b) if !one_d => vec![q.rows, q.cols / b],
        Granularity::Tensor | Granularity::Row | Granularity::Column | Granularity::Block(_) => {
            vec![q.scales.len()]
        }
    };
    let values = f.dequantize(q).map_err(value_error)?;
    let items = [
        f64::from(f32::from_bits(q.tensor_scale)).into_bound_py_any(py)?,
        words_out(py, &scale_shape, q.scales.clone(), f.scale.code_bits())?,
        words_out(py, &shape, q.codes.clone(), f.elem.width())?,
        array_out(py, &shape, values)?,
    ];
    PyTuple::new(py, items)
}

#[pymethods]
impl PyScaled {
    #[new]
    fn new(spec: &str) -> PyResult<PyScaled> {
        Ok(PyScaled {
            f: spec.parse().map_err(value_error)?,
        })
    }

    /// The element format's string.
    #[getter]
    fn elem(&self) -> String {
        self.f.elem.to_string()
    }

    /// The scale format (`ue4m3`, `e8m0`, `f32`, …).
    #[getter]
    fn scale(&self) -> String {
        self.f.scale.to_string()
    }

    /// The granularity (`tensor`, `row`, `col`, `bK`).
    #[getter]
    fn granularity(&self) -> String {
        self.f.granularity.to_string()
    }

    /// Whether the format has an f32 tensor scale.
    #[getter]
    fn tensor_scale(&self) -> bool {
        self.f.tensor_scale
    }

    fn __str__(&self) -> String {
        self.f.to_string()
    }

    fn __repr__(&self) -> String {
        format!("lpgen.Scaled({:?})", self.f.to_string())
    }

    /// Quantizes a tensor by the current rule, the tensor amax `tensor_amax` where given (else
    /// the largest |x|): `(tensor_scale, scales, codes, values)`. With
    /// `rounding="stochastic:R"` (float and fix elements) each element is rounded
    /// stochastically, R random bits from the generator seeded by `seed` (default 0), one
    /// draw per element in C order; the scales are the nearest rounding's (the FP4 recipes'
    /// gradients, `--scaling G=…+sr`).
    #[pyo3(signature = (x, tensor_amax=None, rounding="nearest", seed=None))]
    fn quantize<'py>(
        &self,
        py: Python<'py>,
        x: Values<'py, f64>,
        tensor_amax: Option<f64>,
        rounding: &str,
        seed: Option<Int<u64>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (xs, r, k, one_d) = tensor(&x)?;
        let q = match rounder(&self.f.elem_calc(), rounding, seed)? {
            None => py.detach(|| self.f.quantize(&xs, r, k, tensor_amax)),
            Some(mut stream) => {
                py.detach(|| self.f.quantize_rounded(&xs, r, k, tensor_amax, &mut stream))
            }
        };
        quantized_out(py, &self.f, &q.map_err(value_error)?, one_d)
    }

    /// The values of stored codes: `dequantize(tensor_scale, scales, codes)` as `quantize`
    /// returns them (the codes 1-D or 2-D; the scales one per group, in any shape), each
    /// q·S/s rounded once to float64.
    fn dequantize<'py>(
        &self,
        py: Python<'py>,
        tensor_scale: f64,
        scales: &Bound<'py, PyAny>,
        codes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = tensor_scale as f32;
        if f64::from(s) != tensor_scale || !(s.is_finite() && s > 0.0) {
            return Err(value_error(format!(
                "tensor scale {tensor_scale}: a finite f32 value > 0 (1.0 without one)"
            )));
        }
        let name = self.f.to_string();
        let codes = words_in(codes, self.f.elem.width(), &format!("{name} elements"))?;
        let scales = words_in(scales, self.f.scale.code_bits(), &format!("{name} scales"))?;
        let shape = codes.shape().to_vec();
        let (rows, cols) = match shape[..] {
            [k] => (1, k),
            [r, k] => (r, k),
            _ => {
                return Err(value_error(format!(
                    "codes are 1-D (K) or 2-D (R × K), not {} dimensions",
                    shape.len()
                )))
            }
        };
        let q = Quantized {
            rows,
            cols,
            tensor_scale: s.to_bits(),
            scales: scales.iter().copied().collect(),
            codes: codes.iter().copied().collect(),
        };
        array_out(py, &shape, self.f.dequantize(&q).map_err(value_error)?)
    }
}

/// NVFP4 quantization of a tensor (1-D of K or 2-D R × K, K a multiple of 16):
/// `(tensor_scale, scales, codes, values)` as `Scaled("nvfp4").quantize` gives them (its
/// `rounding` and `seed` too).
#[pyfunction]
#[pyo3(signature = (x, tensor_amax=None, rounding="nearest", seed=None))]
pub fn quantize_nvfp4<'py>(
    py: Python<'py>,
    x: Values<'py, f64>,
    tensor_amax: Option<f64>,
    rounding: &str,
    seed: Option<Int<u64>>,
) -> PyResult<Bound<'py, PyTuple>> {
    PyScaled {
        f: lpgen_golden::scale::NVFP4,
    }
    .quantize(py, x, tensor_amax, rounding, seed)
}

/// A scaled format under TransformerEngine's delayed rule: `DelayedScaling("nvfp4",
/// history=1024, margin=0)`; each `quantize(x)` uses the scale its predecessors' amax
/// history chose, then records x's amax.
#[pyclass(module = "lpgen", name = "DelayedScaling", frozen)]
pub struct PyDelayed {
    f: ScaledFormat,
    d: Mutex<Delayed>,
}

#[pymethods]
impl PyDelayed {
    #[new]
    #[pyo3(signature = (spec, history=1024, margin=0))]
    fn new(spec: &str, history: usize, margin: i32) -> PyResult<PyDelayed> {
        let f: ScaledFormat = spec.parse().map_err(value_error)?;
        let rule: Rule = format!("delayed:{history}:{margin}")
            .parse()
            .map_err(value_error)?;
        Ok(PyDelayed {
            f,
            d: Mutex::new(Delayed::new(f, rule).map_err(value_error)?),
        })
    }

    /// The amaxes in the history, oldest first.
    fn history(&self) -> Vec<f64> {
        self.d.lock().expect("not poisoned").history().collect()
    }

    /// Quantizes the next tensor: `(tensor_scale, scales, codes, values)`.
    fn quantize<'py>(&self, py: Python<'py>, x: Values<'py, f64>) -> PyResult<Bound<'py, PyTuple>> {
        let (xs, r, k, one_d) = tensor(&x)?;
        let q = self
            .d
            .lock()
            .expect("not poisoned")
            .quantize(&xs, r, k)
            .map_err(value_error)?;
        quantized_out(py, &self.f, &q, one_d)
    }
}

/// The NVFP4 dot product of two vectors of values (1-D, the same length, a multiple of 16):
/// each quantized as NVFP4 (its own tensor amax), then the block pairs' exact products summed
/// in f32 and scaled by f32(1/(s_a·s_b)) (`acc="f32"`), or summed exactly and divided by
/// s_a·s_b, rounded once to float64 (`acc="exact"`).
#[pyfunction]
#[pyo3(signature = (a, b, acc="f32"))]
pub fn nvfp4_dot(a: Values<'_, f64>, b: Values<'_, f64>, acc: &str) -> PyResult<f64> {
    let acc: lpgen_golden::mx::Accumulation = acc.parse().map_err(value_error)?;
    let (xa, sa) = values_in(&a);
    let (xb, sb) = values_in(&b);
    if sa.len() != 1 || sa != sb {
        return Err(value_error(format!(
            "nvfp4_dot takes two 1-D vectors of one length, not shapes {sa:?} and {sb:?}"
        )));
    }
    let f = lpgen_golden::scale::NVFP4;
    let qa = f.quantize(&xa, 1, sa[0], None).map_err(value_error)?;
    let qb = f.quantize(&xb, 1, sb[0], None).map_err(value_error)?;
    lpgen_golden::scale::dot::dot(&qa.nvfp4_blocks(), &qb.nvfp4_blocks(), acc).map_err(value_error)
}
