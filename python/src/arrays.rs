//! numpy arrays in and out: words (unsigned integers of a format's width) and values, numpy
//! broadcasting, and the elementwise loops, split over the machine's cores for large arrays.
//!
//! Inputs are copied into owned Rust arrays while the interpreter is held, so that the loops can
//! run detached from it (`Python::detach`) without another Python thread changing the data under
//! them.

use std::fmt::Display;

use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{
    AllowTypeChange, IntoPyArray, PyArrayLikeDyn, PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A one-line message as a Python `ValueError`.
pub fn value_error(e: impl Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The shape numpy broadcasts `shapes` to, or numpy's own refusal.
pub fn broadcast_shape(shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        let offset = ndim - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[offset + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let shown: Vec<String> = shapes.iter().map(|s| shape_text(s)).collect();
                return Err(format!(
                    "operands could not be broadcast together with shapes {}",
                    shown.join(" ")
                ));
            }
        }
    }
    Ok(out)
}

/// A shape as Python prints it: `(2, 3)`, `(4,)`, `()`.
pub fn shape_text(s: &[usize]) -> String {
    match s {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The elements of `a` broadcast to `shape` (which `broadcast_shape` gave), in C order.
pub fn broadcast_to<T: Copy>(a: &ArrayD<T>, shape: &[usize]) -> Vec<T> {
    a.broadcast(IxDyn(shape))
        .expect("a shape from broadcast_shape")
        .iter()
        .copied()
        .collect()
}

/// An integer argument as Python gave it: `Ok` in `T`'s range, `Err` with the integer's text
/// beyond it, so that each use refuses it with its own `ValueError` (an `OverflowError` never
/// escapes). Anything but an integer (an object with `__index__`) is a `TypeError`.
#[derive(Clone, Debug, PartialEq)]
pub struct Int<T>(pub Result<T, String>);

/// `axis=-1`: the last axis.
pub const LAST_AXIS: Int<isize> = Int(Ok(-1));

impl<'a, 'py, T: TryFrom<i128>> FromPyObject<'a, 'py> for Int<T> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let text = || obj.str().map(|s| s.to_string()).unwrap_or_default();
        match obj.extract::<i128>() {
            Ok(v) => Ok(Int(T::try_from(v).map_err(|_| text()))),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                Ok(Int(Err(text())))
            }
            Err(e) => Err(e),
        }
    }
}

/// A real argument as Python gave it: `Err` with its text for an integer beyond float64's
/// range (which Python's `float()` refuses with `OverflowError`).
#[derive(Clone, Debug, PartialEq)]
pub struct Real(pub Result<f64, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Real {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<f64>() {
            Ok(v) => Ok(Real(Ok(v))),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                Ok(Real(Err(obj
                    .str()
                    .map(|s| s.to_string())
                    .unwrap_or_default())))
            }
            Err(e) => Err(e),
        }
    }
}

/// An array-like of values (any numbers numpy converts to `T`): numpy's `OverflowError`
/// for a Python integer beyond float64 becomes a `ValueError`.
pub struct Values<'py, T: numpy::Element>(pub PyArrayLikeDyn<'py, T, AllowTypeChange>);

impl<'a, 'py, T: numpy::Element + 'py> FromPyObject<'a, 'py> for Values<'py, T>
where
    Vec<T>: FromPyObject<'a, 'py>,
{
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<PyArrayLikeDyn<'py, T, AllowTypeChange>>() {
            Ok(a) => Ok(Values(a)),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                Err(value_error(format!(
                    "a value does not fit a float ({})",
                    e.value(obj.py())
                )))
            }
            Err(e) => Err(e),
        }
    }
}

impl<'py, T: numpy::Element> std::ops::Deref for Values<'py, T> {
    type Target = PyArrayLikeDyn<'py, T, AllowTypeChange>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<T> Int<T> {
    /// The value, or `ValueError` of `why` (given the integer's text) beyond `T`'s range.
    pub fn or_refuse(self, why: impl FnOnce(&str) -> String) -> PyResult<T> {
        self.0.map_err(|text| value_error(why(&text)))
    }
}

/// The axis `axis` (negative counts from the end) of an `ndim`-dimensional array.
pub fn norm_axis(axis: &Int<isize>, ndim: usize) -> PyResult<usize> {
    if ndim == 0 {
        return Err(value_error(
            "the operands are scalars (0-d): a reduction needs at least one dimension",
        ));
    }
    let out_of_bounds =
        |axis: &str| format!("axis {axis} is out of bounds for an array of dimension {ndim}");
    let axis = axis.clone().or_refuse(out_of_bounds)?;
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a >= ndim as isize {
        return Err(value_error(format!(
            "axis {axis} is out of bounds for an array of dimension {ndim}"
        )));
    }
    Ok(a as usize)
}

/// `a` (of shape `shape`) with `axis` moved last, in C order: its lanes along `axis` are then
/// consecutive runs of `shape[axis]` elements, in the C order of the other axes.
pub fn lanes_last<T: Copy>(a: Vec<T>, shape: &[usize], axis: usize) -> Vec<T> {
    if axis + 1 == shape.len() {
        return a;
    }
    let arr = ArrayD::from_shape_vec(IxDyn(shape), a).expect("shape and data agree");
    let mut order: Vec<usize> = (0..shape.len()).filter(|&i| i != axis).collect();
    order.push(axis);
    let moved = arr.permuted_axes(IxDyn(&order));
    moved.iter().copied().collect()
}

/// The inverse of [`lanes_last`]: `v`, whose lanes along `axis` are consecutive runs (the
/// other axes in C order), back in the C order of `shape`.
pub fn lanes_back<T: Copy>(v: Vec<T>, shape: &[usize], axis: usize) -> Vec<T> {
    if axis + 1 == shape.len() {
        return v;
    }
    let mut order: Vec<usize> = (0..shape.len()).filter(|&i| i != axis).collect();
    order.push(axis);
    let moved: Vec<usize> = order.iter().map(|&i| shape[i]).collect();
    let arr = ArrayD::from_shape_vec(IxDyn(&moved), v).expect("shape and data agree");
    let mut inverse = vec![0; order.len()];
    for (pos, &ax) in order.iter().enumerate() {
        inverse[ax] = pos;
    }
    arr.permuted_axes(IxDyn(&inverse)).iter().copied().collect()
}

/// Two operands broadcast together and laid out lane by lane along one axis: lane i of
/// each is `[i * k, (i + 1) * k)`, the lanes in the C order of the other axes.
pub struct PairedLanes<T> {
    pub a: Vec<T>,
    pub b: Vec<T>,
    /// Elements per lane (`shape[axis]`).
    pub k: usize,
    /// The lanes' count (the product of `out_shape`).
    pub lanes: usize,
    /// The broadcast shape and the axis (for [`lanes_back`]).
    pub shape: Vec<usize>,
    pub axis: usize,
    /// `shape` without `axis`: one result per lane.
    pub out_shape: Vec<usize>,
}

/// `a` and `b` broadcast together, their lanes along `axis` (negative from the end) made
/// consecutive ([`PairedLanes`]); a `ValueError` when they do not broadcast or the axis is out
/// of range.
pub fn paired_lanes<T: Copy>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    axis: &Int<isize>,
) -> PyResult<PairedLanes<T>> {
    let shape = broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?;
    let axis = norm_axis(axis, shape.len())?;
    let out_shape = without_axis(&shape, axis);
    Ok(PairedLanes {
        a: lanes_last(broadcast_to(a, &shape), &shape, axis),
        b: lanes_last(broadcast_to(b, &shape), &shape, axis),
        k: shape[axis],
        lanes: out_shape.iter().product(),
        shape,
        axis,
        out_shape,
    })
}

/// `shape` without `axis`.
pub fn without_axis(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.remove(axis);
    s
}

/// The numpy module.
fn numpy_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

/// Words of a `width`-bit format (named `name` in messages) from any integer array-like:
/// unsigned or signed integers, each in 0..2^width. Floats are refused (they are values: the
/// format's `encode` takes them), as are negative integers and bits beyond the width, the last
/// with the command line's message for a bit pattern.
///
/// numpy makes a float64 array of an empty list and of Python integers that fit neither int64
/// nor uint64 together (`[2**63, 1]`), and an object array of those beyond uint64: such input
/// (not a numpy array of floats) is read integer by integer instead ([`python_words`]).
pub fn words_in(obj: &Bound<'_, PyAny>, width: u32, name: &str) -> PyResult<ArrayD<u64>> {
    let py = obj.py();
    let np = numpy_module(py)?;
    let arr = np.call_method1("asarray", (obj,))?;
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let given_floats = kind == "f" && obj.is_instance(&np.getattr("ndarray")?)?;
    let size: usize = arr.getattr("size")?.extract()?;
    if kind == "O" || (kind == "f" && (!given_floats || size == 0)) {
        return python_words(&np.call_method1("asarray", (obj, "object"))?, width, name);
    }
    let words: ArrayD<u64> = match kind.as_str() {
        "u" => {
            let a: PyReadonlyArrayDyn<'_, u64> =
                np.call_method1("asarray", (&arr, "uint64"))?.extract()?;
            a.as_array().to_owned()
        }
        "i" => {
            let a: PyReadonlyArrayDyn<'_, i64> =
                np.call_method1("asarray", (&arr, "int64"))?.extract()?;
            let a = a.as_array();
            if let Some(neg) = a.iter().find(|&&w| w < 0) {
                return Err(value_error(format!(
                    "word {neg} is negative: words of {name} are unsigned bit patterns (0 to 2^{width} - 1)"
                )));
            }
            a.mapv(|w| w as u64)
        }
        _ => {
            let dtype: String = dtype.str()?.extract()?;
            return Err(value_error(format!(
                "words of {name} are unsigned integer bit patterns, not {dtype} values (Format.encode turns values into words)"
            )));
        }
    };
    if width < 64 {
        if let Some(w) = words.iter().find(|&&w| w >> width != 0) {
            return Err(value_error(format!(
                "bit pattern \"0x{w:x}\" has more than the {width} bits of {name}"
            )));
        }
    }
    Ok(words)
}

/// Signed integers named `name` from any integer array-like, each within ±`limit`: numpy
/// integers of any width, or Python integers of any size (read one by one where numpy makes
/// floats or objects of them); floats are refused, as for words.
pub fn ints_in(obj: &Bound<'_, PyAny>, name: &str, limit: i64) -> PyResult<ArrayD<i64>> {
    let py = obj.py();
    let np = numpy_module(py)?;
    let arr = np.call_method1("asarray", (obj,))?;
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let given_floats = kind == "f" && obj.is_instance(&np.getattr("ndarray")?)?;
    let size: usize = arr.getattr("size")?.extract()?;
    let out_of_range = |v: &str| {
        value_error(format!(
            "{name} {v} is out of range: give -{limit}..={limit}"
        ))
    };
    let values: ArrayD<i64> = match kind.as_str() {
        "i" => {
            let a: PyReadonlyArrayDyn<'_, i64> =
                np.call_method1("asarray", (&arr, "int64"))?.extract()?;
            a.as_array().to_owned()
        }
        "u" => {
            let a: PyReadonlyArrayDyn<'_, u64> =
                np.call_method1("asarray", (&arr, "uint64"))?.extract()?;
            if let Some(v) = a.as_array().iter().find(|&&v| v > limit.unsigned_abs()) {
                return Err(out_of_range(&v.to_string()));
            }
            a.as_array().mapv(|v| v as i64)
        }
        "O" | "f" if kind == "O" || !given_floats || size == 0 => {
            let objects = np.call_method1("asarray", (obj, "object"))?;
            let shape: Vec<usize> = objects.getattr("shape")?.extract()?;
            let mut values = vec![];
            for item in objects.getattr("flat")?.try_iter()? {
                let item = item?;
                let v = match item.extract::<Int<i64>>() {
                    Ok(Int(Ok(v))) => v,
                    Ok(Int(Err(text))) => return Err(out_of_range(&text)),
                    Err(_) => {
                        let ty = item
                            .get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default();
                        return Err(value_error(format!(
                            "{name} takes integers, not {ty} values"
                        )));
                    }
                };
                values.push(v);
            }
            ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(value_error)?
        }
        _ => {
            let dtype: String = dtype.str()?.extract()?;
            return Err(value_error(format!(
                "{name} takes integers, not {dtype} values"
            )));
        }
    };
    if let Some(v) = values
        .iter()
        .find(|v| v.unsigned_abs() > limit.unsigned_abs())
    {
        return Err(out_of_range(&v.to_string()));
    }
    Ok(values)
}

/// The words of `arr`, a numpy array of objects, each a Python integer (an object with
/// `__index__`) in 0..2^width, refused as [`words_in`] refuses them.
fn python_words(arr: &Bound<'_, PyAny>, width: u32, name: &str) -> PyResult<ArrayD<u64>> {
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let mut words = vec![];
    for item in arr.getattr("flat")?.try_iter()? {
        let item = item?;
        let text = || item.str().map(|s| s.to_string()).unwrap_or_default();
        let w = match item.extract::<Int<u64>>() {
            Ok(Int(Ok(w))) => w,
            Ok(Int(Err(_))) if text().starts_with('-') => {
                return Err(value_error(format!(
                    "word {} is negative: words of {name} are unsigned bit patterns (0 to 2^{width} - 1)",
                    text()
                )))
            }
            Ok(Int(Err(_))) => {
                return Err(value_error(format!(
                    "word {} has more than the {width} bits of {name}",
                    text()
                )))
            }
            Err(_) => {
                let ty = item.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                return Err(value_error(format!(
                    "words of {name} are unsigned integer bit patterns, not {ty} values (Format.encode turns values into words)"
                )));
            }
        };
        if width < 64 && w >> width != 0 {
            return Err(value_error(format!(
                "bit pattern \"0x{w:x}\" has more than the {width} bits of {name}"
            )));
        }
        words.push(w);
    }
    ArrayD::from_shape_vec(IxDyn(&shape), words).map_err(value_error)
}

/// Words as a numpy array of the smallest unsigned type that holds `width` bits.
pub fn words_out<'py>(
    py: Python<'py>,
    shape: &[usize],
    words: Vec<u64>,
    width: u32,
) -> PyResult<Bound<'py, PyAny>> {
    fn out<'py, T: numpy::Element>(
        py: Python<'py>,
        shape: &[usize],
        v: Vec<T>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(ArrayD::from_shape_vec(IxDyn(shape), v)
            .map_err(value_error)?
            .into_pyarray(py)
            .into_any())
    }
    match width {
        0..=8 => out(py, shape, words.into_iter().map(|w| w as u8).collect()),
        9..=16 => out(py, shape, words.into_iter().map(|w| w as u16).collect()),
        17..=32 => out(py, shape, words.into_iter().map(|w| w as u32).collect()),
        _ => out(py, shape, words),
    }
}

/// Any elements as a numpy array of `shape`.
pub fn array_out<'py, T: numpy::Element>(
    py: Python<'py>,
    shape: &[usize],
    v: Vec<T>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(ArrayD::from_shape_vec(IxDyn(shape), v)
        .map_err(value_error)?
        .into_pyarray(py)
        .into_any())
}

/// The numpy dtype of a `width`-bit format's words.
pub fn words_dtype(py: Python<'_>, width: u32) -> Bound<'_, numpy::PyArrayDescr> {
    match width {
        0..=8 => numpy::dtype::<u8>(py),
        9..=16 => numpy::dtype::<u16>(py),
        17..=32 => numpy::dtype::<u32>(py),
        _ => numpy::dtype::<u64>(py),
    }
}

/// Values of an array-like as f64 in C order, with its shape.
pub fn values_in(a: &PyReadonlyArrayDyn<'_, f64>) -> (Vec<f64>, Vec<usize>) {
    (a.as_array().iter().copied().collect(), a.shape().to_vec())
}

/// Elements per thread below which a loop stays on one thread.
const MIN_CHUNK: usize = 1 << 14;

/// `f(0), …, f(n − 1)`, split over the available cores when `n` is large; the first error (in
/// index order of the chunks) if any.
pub fn par_try_map<T, E, F>(n: usize, f: F) -> Result<Vec<T>, E>
where
    T: Send + Clone + Default,
    E: Send,
    F: Fn(usize) -> Result<T, E> + Sync,
{
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(n / MIN_CHUNK)
        .max(1);
    let mut out = vec![T::default(); n];
    if threads == 1 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(i)?;
        }
        return Ok(out);
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    let results: Vec<Result<(), E>> = std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(chunk)
            .enumerate()
            .map(|(c, part)| {
                s.spawn(move || {
                    for (j, o) in part.iter_mut().enumerate() {
                        *o = f(c * chunk + j)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for r in results {
        r?;
    }
    Ok(out)
}

/// Elements per thread below which a fast elementwise loop stays on one thread: at about a
/// nanosecond an element, a smaller part would wait longer for a busy core's thread than it
/// saves (docs/perf.md, "Python against ml_dtypes").
const MIN_FAST_CHUNK: usize = 1 << 20;

/// `f(start, part)` for consecutive parts of `out` (`start`: the part's first index), split
/// over the available cores in parts of at least 2^20 elements (the last part on the calling
/// thread).
pub fn par_chunks<T: Send>(out: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let n = out.len();
    // (Asked only when there is work for two: `available_parallelism` reads the cgroup's
    // files, some ten microseconds, 3 % of a bf16 decode of 10^6 words.)
    if n < 2 * MIN_FAST_CHUNK {
        return f(0, out);
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(n / MIN_FAST_CHUNK)
        .max(1);
    if threads == 1 {
        return f(0, out);
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let mut parts = out.chunks_mut(chunk).enumerate().peekable();
        while let Some((c, part)) = parts.next() {
            if parts.peek().is_none() {
                f(c * chunk, part);
            } else {
                s.spawn(move || f(c * chunk, part));
            }
        }
    });
}

/// [`par_try_map`] of an infallible `f`.
pub fn par_map<T, F>(n: usize, f: F) -> Vec<T>
where
    T: Send + Clone + Default,
    F: Fn(usize) -> T + Sync,
{
    match par_try_map(n, |i| Ok::<T, std::convert::Infallible>(f(i))) {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests;
