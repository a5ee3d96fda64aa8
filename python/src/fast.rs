//! The fast paths of `Format.encode`, `decode`, `quantize`, `add`, `sub` and `mul` for floats
//! of at most 16 bits (bf16, f16, fp8:e4m3, fp8:e5m2 and the like: the golden
//! `kernel::elementwise`, which its tests hold to the per-element operations).
//!
//! A call takes a fast path when its arrays are C-contiguous numpy arrays of the exact type
//! (float64 values; words of the format's dtype, `uint8` or `uint16`, the two operands of one
//! shape) and the rounding is nearest; anything else (lists, other dtypes, broadcasting,
//! strided views, stochastic rounding) takes the general path, which gives the same words.
//! The loop reads the numpy buffers in place and writes a new array, detached from the
//! interpreter and split over the cores, as numpy's own ufuncs do: a Python thread that
//! writes to an input array during the call gets unspecified results for it.
//! `lpgen._fast_paths(False)` turns the paths off (the tests compare the two).

use std::sync::atomic::{AtomicBool, Ordering};

use lpgen_golden::kernel::elementwise::{ElemOp, FloatKernel, Word};
use lpgen_golden::Calc;
use numpy::ndarray::IxDyn;
use numpy::{Element, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::arrays::par_chunks;
use crate::format::PyFormat;

/// Whether the fast paths are on (`lpgen._fast_paths`).
static FAST: AtomicBool = AtomicBool::new(true);

/// Turns the fast paths of `encode`, `decode`, `quantize`, `add`, `sub` and `mul` on or off
/// (for tests: off, every call takes the general path); returns the previous setting.
#[pyfunction(name = "_fast_paths")]
pub fn fast_paths(on: bool) -> bool {
    FAST.swap(on, Ordering::Relaxed)
}

/// The contiguous buffer of `obj` if it is a C-contiguous numpy array of `T`.
fn buffer<'py, T: Element>(obj: &Bound<'py, PyAny>) -> Option<PyReadonlyArrayDyn<'py, T>> {
    let arr = obj.cast::<PyArrayDyn<T>>().ok()?;
    if !arr.is_c_contiguous() {
        return None;
    }
    arr.try_readonly().ok()
}

/// A new array of `shape` filled by `fill` (detached, split over the cores) from its
/// contiguous slice.
fn filled<'py, T: Element + Send>(
    py: Python<'py>,
    shape: &[usize],
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: every element is written below before the array is handed out.
    let out = unsafe { PyArrayDyn::<T>::new(py, IxDyn(shape), false) };
    {
        let mut rw = out.try_readwrite().map_err(crate::arrays::value_error)?;
        let slice = rw.as_slice_mut().map_err(crate::arrays::value_error)?;
        let fill = &fill;
        py.detach(move || par_chunks(slice, fill));
    }
    Ok(out.into_any())
}

impl PyFormat {
    /// The format's elementwise kernels, if it has them and the fast paths are on.
    fn kernel(&self) -> Option<&'static FloatKernel> {
        match self.calc {
            Calc::Float(f) if FAST.load(Ordering::Relaxed) => FloatKernel::of(f),
            _ => None,
        }
    }

    /// `encode(x)` to nearest on the fast path, or `None` for the general path.
    pub fn encode_fast<'py>(
        &self,
        py: Python<'py>,
        x: &PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (Some(k), true) = (self.kernel(), x.is_c_contiguous()) else {
            return Ok(None);
        };
        let Ok(xs) = x.as_slice() else {
            return Ok(None);
        };
        let shape = x.shape();
        if self.width() <= 8 {
            filled::<u8>(py, shape, |at, o| k.encode(&xs[at..at + o.len()], o)).map(Some)
        } else {
            filled::<u16>(py, shape, |at, o| k.encode(&xs[at..at + o.len()], o)).map(Some)
        }
    }

    /// `quantize(x)` to nearest on the fast path, or `None`.
    pub fn quantize_fast<'py>(
        &self,
        py: Python<'py>,
        x: &PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (Some(k), true) = (self.kernel(), x.is_c_contiguous()) else {
            return Ok(None);
        };
        let Ok(xs) = x.as_slice() else {
            return Ok(None);
        };
        filled::<f64>(py, x.shape(), |at, o| k.quantize(&xs[at..at + o.len()], o)).map(Some)
    }

    /// `decode(words)` on the fast path, or `None`.
    pub fn decode_fast<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.kernel() {
            Some(k) if self.width() <= 8 => decode_words::<u8>(k, py, words, self.width()),
            Some(k) => decode_words::<u16>(k, py, words, self.width()),
            None => Ok(None),
        }
    }

    /// `a op b` on the fast path, or `None`.
    pub fn binop_fast<'py>(
        &self,
        py: Python<'py>,
        op: ElemOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.kernel() {
            Some(k) if self.width() <= 8 => binop_words::<u8>(k, py, op, a, b, self.width()),
            Some(k) => binop_words::<u16>(k, py, op, a, b, self.width()),
            None => Ok(None),
        }
    }
}

/// Whether every word of `w` fits `width` bits (else the general path refuses them).
fn fits<W: Word>(w: &[W], width: u32) -> bool {
    width as usize >= 8 * std::mem::size_of::<W>() || w.iter().all(|&x| x.bits() >> width == 0)
}

fn decode_words<'py, W: Word + Element>(
    k: &'static FloatKernel,
    py: Python<'py>,
    words: &Bound<'py, PyAny>,
    width: u32,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(w) = buffer::<W>(words) else {
        return Ok(None);
    };
    let Ok(ws) = w.as_slice() else {
        return Ok(None);
    };
    if !fits(ws, width) {
        return Ok(None);
    }
    filled::<f64>(py, w.shape(), |at, o| k.decode(&ws[at..at + o.len()], o)).map(Some)
}

fn binop_words<'py, W: Word + Element>(
    k: &'static FloatKernel,
    py: Python<'py>,
    op: ElemOp,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    width: u32,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let (Some(a), Some(b)) = (buffer::<W>(a), buffer::<W>(b)) else {
        return Ok(None);
    };
    if a.shape() != b.shape() {
        return Ok(None);
    }
    let (Ok(xs), Ok(ys)) = (a.as_slice(), b.as_slice()) else {
        return Ok(None);
    };
    if !fits(xs, width) || !fits(ys, width) {
        return Ok(None);
    }
    filled::<W>(py, a.shape(), |at, o| {
        let r = at..at + o.len();
        k.binop(op, &xs[r.clone()], &ys[r], o)
    })
    .map(Some)
}
