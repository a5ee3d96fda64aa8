//! The Python package `lpgen`: lpgen's bit-exact golden model (`lpgen_golden`) on numpy arrays,
//! built by maturin (`pip install ./python`). Arrays in, arrays out; the loops over elements run
//! in Rust, detached from the interpreter and split over the cores for large arrays.
//!
//! - `format.rs`: `lpgen.Format`: encode, decode, quantize, add sub mul div max min neg abs exp
//!   ln fma, dot and sum along an axis, the 1-bit quantizer on words; `ops.rs`: their
//!   computations;
//! - `codecs.rs`: `lpgen.q8_encode`, `lpgen.q8_decode`, `lpgen.onebit` on values, and
//!   `lpgen.formats()`, the registry's families;
//! - `lane.rs`: `Format.alu`, one lane of the vector ALU, and `Format.dfix_lane`, the dfix
//!   lane; `dfix.rs`: `Format.dfix_dot`, the dfix PE's read-out;
//! - `rounded.rs`: `lpgen.Rounder`, a stochastic rounding stream for the elementwise
//!   operations, and `Format.acc_dot`, the float PE's read-out with a wider accumulator;
//! - `mx.rs`: `lpgen.MxFormat`, the OCP MX block formats (quantize, dequantize, dot_block);
//! - `scaled.rs`: `lpgen.Scaled`, `lpgen.quantize_nvfp4`, `lpgen.DelayedScaling`: scaled
//!   formats and NVFP4 (quantize a tensor: tensor scale, group scales, codes, values);
//! - `fast.rs`: the fast paths of encode, decode, quantize, add, sub and mul for floats of at
//!   most 16 bits (the golden elementwise kernels on numpy buffers in place);
//! - `arrays.rs`: numpy in and out, broadcasting, the parallel loops.
//!
//! `docs/python.md` is the guide; errors are `ValueError`s with the command line's one-line
//! messages.

mod arrays;
mod codecs;
mod dfix;
mod fast;
mod format;
mod lane;
mod mx;
mod ops;
mod rounded;
mod scaled;

/// lpgen's bit-exact golden model of low-precision number formats on numpy arrays
/// (docs/python.md).
#[pyo3::pymodule(name = "lpgen")]
mod lpgen_module {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::format::PyFormat;

    #[pymodule_export]
    use crate::rounded::PyRounder;

    #[pymodule_export]
    use crate::mx::PyMxFormat;

    #[pymodule_export]
    use crate::scaled::{nvfp4_dot, quantize_nvfp4, PyDelayed, PyScaled};

    #[pymodule_export]
    use crate::codecs::{formats, onebit, q8_decode, q8_encode};

    #[pymodule_export]
    use crate::fast::fast_paths;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
