//! Seed 003's 8-bit codecs and seed 001's 1-bit quantizer on numpy arrays of values, and the
//! registry's families.

use lpgen_golden::q8::{self, Q8Type, Scaling};
use lpgen_golden::FAMILIES;
use numpy::PyUntypedArrayMethods;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::arrays::{
    array_out, broadcast_shape, broadcast_to, par_map, par_try_map, value_error, words_in, Int,
    Real, Values,
};
use crate::format::PyFormat;

/// Elements per call of the codec's slice encoder (its scaled midpoints are made per call).
const Q8_CHUNK: usize = 1 << 14;

fn q8_type(ty: &str) -> PyResult<Q8Type> {
    ty.parse().map_err(value_error)
}

/// Encodes `x` (rounded to float32 first, as the codecs take f32 tensors) with the 8-bit type
/// `ty` as `lpgen quant` does: one scale for the whole array, its absmax for `q8:dynamic-tree`
/// and `q8:linear`, 10^offset (default 10^1) for `q8:static-tree` and `q8:mantissa`. Returns
/// `(codes, scale)`: uint8 codes of x's shape and the scale as a float (an f32 value).
#[pyfunction]
#[pyo3(signature = (x, ty="q8:dynamic-tree", offset=None))]
pub fn q8_encode<'py>(
    py: Python<'py>,
    x: Values<'py, f32>,
    ty: &str,
    offset: Option<Int<i32>>,
) -> PyResult<(Bound<'py, PyAny>, f64)> {
    let t = q8_type(ty)?;
    let scaling = match (t.default_scaling(), offset) {
        (Scaling::Absmax, Some(_)) => {
            return Err(value_error(format!(
            "offset applies to q8:static-tree and q8:mantissa; {t} is scaled by the array's absmax"
        )))
        }
        (Scaling::Offset(_), Some(o)) => {
            let o = o.or_refuse(|o| {
                format!(
                    "exponent offset {o} is out of range: use -{m}..={m} (scale 10^o)",
                    m = q8::MAX_OFFSET
                )
            })?;
            q8::offset_scale(o).map_err(value_error)?;
            Scaling::Offset(o)
        }
        (default, None) => default,
    };
    let shape = x.shape().to_vec();
    let xs: Vec<f32> = x.as_array().iter().copied().collect();
    let (scale, codes) = py.detach(|| -> PyResult<(f32, Vec<u8>)> {
        let scale = Q8Type::scale_of(&xs, scaling).map_err(value_error)?;
        let book = t.codebook();
        let mut codes = vec![0u8; xs.len()];
        for (part, out) in xs.chunks(Q8_CHUNK).zip(codes.chunks_mut(Q8_CHUNK)) {
            book.encode_slice(part, scale, out);
        }
        Ok((scale, codes))
    })?;
    Ok((array_out(py, &shape, codes)?, scale as f64))
}

/// Decodes 8-bit `codes` of type `ty` at `scale` (rounded to float32): float32 values, each
/// the code's value times the scale rounded once to f32.
#[pyfunction]
#[pyo3(signature = (codes, scale, ty="q8:dynamic-tree"))]
pub fn q8_decode<'py>(
    py: Python<'py>,
    codes: &Bound<'py, PyAny>,
    scale: Real,
    ty: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let t = q8_type(ty)?;
    let not_finite = |scale: &str| format!("scale {scale} is not a finite float32 >= 0");
    let scale = scale.0.map_err(|s| value_error(not_finite(&s)))?;
    let s = scale as f32;
    if !s.is_finite() || s < 0.0 {
        return Err(value_error(not_finite(&scale.to_string())));
    }
    let c = words_in(codes, 8, &t.to_string())?;
    let shape = c.shape().to_vec();
    let c: Vec<u8> = c.iter().map(|&w| w as u8).collect();
    let book = t.codebook();
    let out = py.detach(|| {
        let table: Vec<f32> = (0..=255u8).map(|code| book.decode(code, s)).collect();
        par_map(c.len(), |i| table[c[i] as usize])
    });
    array_out(py, &shape, out)
}

/// `Format.q8_encode_words`: the word rule of `Q8Type::encode_word` on broadcast words.
pub fn q8_encode_words<'py>(
    f: &PyFormat,
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    scale: &Bound<'py, PyAny>,
    ty: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let t = q8_type(ty)?;
    let (x, s) = (f.words(x)?, f.words(scale)?);
    let shape = broadcast_shape(&[x.shape(), s.shape()]).map_err(value_error)?;
    let (x, s) = (broadcast_to(&x, &shape), broadcast_to(&s, &shape));
    let format = f.format;
    let codes = py
        .detach(|| par_try_map(x.len(), |i| t.encode_word(format, x[i], s[i])))
        .map_err(value_error)?;
    array_out(py, &shape, codes)
}

/// `Format.q8_decode_words`: the word rule of `Q8Type::decode_word_flagged` on broadcast
/// codes and scale words.
pub fn q8_decode_words<'py>(
    f: &PyFormat,
    py: Python<'py>,
    codes: &Bound<'py, PyAny>,
    scale: &Bound<'py, PyAny>,
    ty: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let t = q8_type(ty)?;
    let (c, s) = (words_in(codes, 8, &t.to_string())?, f.words(scale)?);
    let shape = broadcast_shape(&[c.shape(), s.shape()]).map_err(value_error)?;
    let (c, s) = (broadcast_to(&c, &shape), broadcast_to(&s, &shape));
    let format = f.format;
    let out = py
        .detach(|| par_try_map(c.len(), |i| t.decode_word_flagged(format, c[i] as u8, s[i])))
        .map_err(value_error)?;
    let words = f.out(py, &shape, out.iter().map(|o| o.0).collect())?;
    let flags = array_out(py, &shape, out.iter().map(|o| o.1).collect::<Vec<bool>>())?;
    PyTuple::new(py, [words, flags])
}

/// A format from a `Format` or a format string.
pub(crate) fn format_arg(f: &Bound<'_, PyAny>) -> PyResult<PyFormat> {
    if let Ok(p) = f.cast::<PyFormat>() {
        let p = p.get();
        return Ok(PyFormat {
            format: p.format,
            calc: p.calc,
            scale: p.scale,
        });
    }
    PyFormat::parse(&f.extract::<String>()?, None)
}

/// The 1-bit quantizer with error feedback (seed 001) on values: `g` and `residual` (floats of
/// one shape, 1-D for one column or 2-D rows × cols for a matrix of columns) are rounded into
/// `format` (a format string or `Format`, default f32), quantized as `Format.onebit` does, and
/// returned as values: `(bits, reconstruction, new_residual)` (bools, float64, float64 or None).
#[pyfunction]
#[pyo3(signature = (g, residual=None, format=None, mode="naive"))]
pub fn onebit<'py>(
    py: Python<'py>,
    g: Values<'py, f64>,
    residual: Option<Values<'py, f64>>,
    format: Option<&Bound<'py, PyAny>>,
    mode: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let f = match format {
        Some(f) => format_arg(f)?,
        None => PyFormat::parse("f32", None)?,
    };
    let to_words = |a: &Values<'py, f64>| {
        let xs: Vec<f64> = a.as_array().iter().copied().collect();
        array_out(py, a.shape(), f.encode_values(py, &xs))
    };
    let gw = to_words(&g)?;
    let rw = residual.as_ref().map(to_words).transpose()?;
    let q = f.onebit_words(py, &gw, rw.as_ref(), mode)?;
    PyTuple::new(py, f.onebit_out(py, q, true)?)
}

/// The registry's families, in its order: a list of dicts with `name`, `syntax` (the format
/// strings), `modes` (of `dot` and `sum`), `pes` (the array PE kinds: `name`, `mode`, `about`),
/// `lanes` (whether it has ALU lanes) and `q8_word_rule`.
#[pyfunction]
pub fn formats(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for e in FAMILIES {
        let d = PyDict::new(py);
        d.set_item("name", e.name)?;
        d.set_item("syntax", e.syntax)?;
        let modes: Vec<&str> = e.modes.iter().map(|m| m.name()).collect();
        d.set_item("modes", modes)?;
        let pes = PyList::empty(py);
        for p in e.pes {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("mode", p.mode.name())?;
            pd.set_item("about", p.about)?;
            pes.append(pd)?;
        }
        d.set_item("pes", pes)?;
        d.set_item("lanes", e.lanes)?;
        d.set_item("q8_word_rule", e.q8_word_rule)?;
        list.append(d)?;
    }
    Ok(list)
}
