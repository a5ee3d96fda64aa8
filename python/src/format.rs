//! `lpgen.Format`: one format of the registry and its golden arithmetic on numpy arrays.

use std::hash::{Hash, Hasher};

use lpgen_golden::dfix::{check_scale, DfixCalc, MAX_SCALE};
use lpgen_golden::{BinOp, Bits, Calc, Format, Rounder, Rounding, SumMode};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{
    array_out, value_error, values_in, words_dtype, words_in, Int, Values, LAST_AXIS,
};
use crate::rounded::PyRounder;

/// A number format of lpgen's registry (`posit:8:2`, `lns:5:6`, `fix:7:8`, `f32`, `dfix:10` …)
/// with its golden arithmetic on numpy arrays of words.
///
/// `Format(spec, scale=None)`: `spec` is any format string the command line takes; `scale` is
/// the group's scale exponent E of a `dfix:W` format (a word means integer·2^E, default 0) and
/// is refused for other families. Words are numpy arrays of the smallest unsigned integer type
/// that holds the format's width (`fmt.dtype`); any integer array-like is accepted as words.
#[pyclass(module = "lpgen", name = "Format", frozen, eq, hash)]
pub struct PyFormat {
    pub format: Format,
    pub calc: Calc,
    /// The scale exponent of a dfix format.
    pub scale: Option<i32>,
}

impl PartialEq for PyFormat {
    fn eq(&self, other: &Self) -> bool {
        (self.format, self.scale) == (other.format, other.scale)
    }
}

impl Hash for PyFormat {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.format, self.scale).hash(state)
    }
}

/// The rounder of `rounding` and `seed`: `None` for nearest (the format's own rounding);
/// a `ValueError` for a bad rounding, a family without stochastic rounding (asked of the
/// registry), or a seed given to nearest.
pub(crate) fn rounder(
    calc: &Calc,
    rounding: &str,
    seed: Option<Int<u64>>,
) -> PyResult<Option<Rounder>> {
    let rounding: Rounding = rounding.parse().map_err(value_error)?;
    let seed = seed.map(seed_value).transpose()?;
    calc.check_rounding(rounding).map_err(value_error)?;
    match (rounding, seed) {
        (Rounding::Nearest, None) => Ok(None),
        (Rounding::Nearest, Some(_)) => Err(value_error(
            "seed applies to rounding='stochastic:R' only, not to 'nearest'",
        )),
        (r, seed) => Ok(Some(Rounder::new(r, seed.unwrap_or(0)))),
    }
}

/// A seed of the stochastic rounding stream: `ValueError` beyond 0..=2^64 − 1.
pub fn seed_value(seed: Int<u64>) -> PyResult<u64> {
    seed.or_refuse(|s| format!("seed must be an integer from 0 to 2**64 - 1, not {s}"))
}

impl PyFormat {
    pub fn parse(spec: &str, scale: Option<Int<i64>>) -> PyResult<PyFormat> {
        let format: Format = spec.parse().map_err(value_error)?;
        match (format, scale) {
            (Format::Dfix(f), scale) => {
                let scale = match scale {
                    Some(e) => e.or_refuse(|e| {
                        format!("scale {e} is out of range: give -{MAX_SCALE}..={MAX_SCALE}")
                    })?,
                    None => 0,
                };
                let e = check_scale(scale).map_err(value_error)?;
                Ok(PyFormat {
                    format,
                    calc: Calc::Dfix(DfixCalc::new(f, e)),
                    scale: Some(e),
                })
            }
            (_, Some(_)) => Err(value_error(format!(
                "scale applies to dfix:W formats, not {spec:?}"
            ))),
            (_, None) => Ok(PyFormat {
                format,
                calc: format.calc(),
                scale: None,
            }),
        }
    }

    pub fn width(&self) -> u32 {
        self.format.width()
    }

    /// Words of this format from an integer array-like.
    pub fn words(&self, obj: &Bound<'_, PyAny>) -> PyResult<numpy::ndarray::ArrayD<u64>> {
        words_in(obj, self.width(), &self.format.to_string())
    }
}

#[pymethods]
impl PyFormat {
    #[new]
    #[pyo3(signature = (spec, scale=None))]
    fn new(spec: &str, scale: Option<Int<i64>>) -> PyResult<PyFormat> {
        PyFormat::parse(spec, scale)
    }

    /// Bits of one word.
    #[getter(width)]
    fn width_py(&self) -> u32 {
        self.width()
    }

    /// The family's name (`posit`), the first field of its format strings.
    #[getter]
    fn family(&self) -> &'static str {
        self.format.family()
    }

    /// The scale exponent E of a dfix format (a word means integer·2^E); None otherwise.
    #[getter]
    fn scale(&self) -> Option<i32> {
        self.scale
    }

    /// The accumulation modes of `dot` and `sum` this family offers.
    #[getter]
    fn modes(&self) -> Vec<&'static str> {
        self.format.entry().modes.iter().map(|m| m.name()).collect()
    }

    /// The numpy dtype of this format's words.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArrayDescr> {
        words_dtype(py, self.width())
    }

    /// The NaN (NaR) word, or None when the format has none.
    #[getter]
    fn nan(&self) -> Option<Bits> {
        self.calc.nan()
    }

    fn __str__(&self) -> String {
        self.format.to_string()
    }

    fn __repr__(&self) -> String {
        match self.scale {
            Some(e) if e != 0 => format!("lpgen.Format('{}', scale={e})", self.format),
            _ => format!("lpgen.Format('{}')", self.format),
        }
    }

    /// Words of the values `x` (any float array-like; the result has its shape):
    /// `rounding="nearest"` is the format's rounding (docs/formats.md); `"stochastic:R"`
    /// (float and fix formats) rounds stochastically with R random bits from the generator
    /// seeded by `seed` (default 0), one draw per element in C order (docs/formats.md
    /// "Stochastic rounding").
    #[pyo3(signature = (x, rounding="nearest", seed=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        x: Values<'py, f64>,
        rounding: &str,
        seed: Option<Int<u64>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let r = rounder(&self.calc, rounding, seed)?;
        if r.is_none() {
            if let Some(out) = self.encode_fast(py, &x)? {
                return Ok(out);
            }
        }
        let (xs, shape) = values_in(&x);
        let words = match r {
            None => self.encode_values(py, &xs),
            Some(r) => self.encode_rounded(py, &xs, r)?,
        };
        self.out(py, &shape, words)
    }

    /// The value of each word as float64 (exact for posit, fix, dfix and f32; the nearest
    /// float64 for LNS); NaN for NaN and NaR.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(out) = self.decode_fast(py, words)? {
            return Ok(out);
        }
        let w = self.words(words)?;
        let shape = w.shape().to_vec();
        let w: Vec<Bits> = w.iter().copied().collect();
        array_out(py, &shape, self.values(py, &w))
    }

    /// `decode(encode(x, rounding, seed))`: the values `x` rounded into the format, as float64.
    #[pyo3(signature = (x, rounding="nearest", seed=None))]
    fn quantize<'py>(
        &self,
        py: Python<'py>,
        x: Values<'py, f64>,
        rounding: &str,
        seed: Option<Int<u64>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let r = rounder(&self.calc, rounding, seed)?;
        if r.is_none() {
            if let Some(out) = self.quantize_fast(py, &x)? {
                return Ok(out);
            }
        }
        let (xs, shape) = values_in(&x);
        let values = match r {
            None => self.quantize_values(py, &xs),
            Some(r) => {
                let words = self.encode_rounded(py, &xs, r)?;
                self.values(py, &words)
            }
        };
        array_out(py, &shape, values)
    }

    /// a + b, elementwise on words (numpy broadcasting), rounded once; with `flags=True`
    /// (words, overflow): overflow says the result saturated (lns, dfix).
    #[pyo3(signature = (a, b, flags=false, rounder=None))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.arith_rounded(py, BinOp::Add, a, b, flags, rounder)
    }

    /// a − b, elementwise on words (numpy broadcasting), rounded once; with `flags=True`
    /// (words, overflow): overflow says the result saturated (lns, dfix).
    #[pyo3(signature = (a, b, flags=false, rounder=None))]
    fn sub<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.arith_rounded(py, BinOp::Sub, a, b, flags, rounder)
    }

    /// a · b, elementwise on words (numpy broadcasting), rounded once; with `flags=True`
    /// (words, overflow): overflow says the result saturated (lns, dfix).
    #[pyo3(signature = (a, b, flags=false, rounder=None))]
    fn mul<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.arith_rounded(py, BinOp::Mul, a, b, flags, rounder)
    }

    /// a / b, elementwise on words (numpy broadcasting), rounded once; with `flags=True`
    /// (words, overflow): overflow says the result saturated (lns, dfix).
    #[pyo3(signature = (a, b, flags=false, rounder=None))]
    fn div<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.arith_rounded(py, BinOp::Div, a, b, flags, rounder)
    }

    /// The larger of a and b, elementwise on words (the family's order).
    fn max<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.binop(py, BinOp::Max, a, b)
    }

    /// The smaller of a and b, elementwise on words (the family's order).
    fn min<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.binop(py, BinOp::Min, a, b)
    }

    /// −a, elementwise on words.
    fn neg<'py>(&self, py: Python<'py>, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.unary(py, Calc::neg, a)
    }

    /// |a|, elementwise on words.
    fn abs<'py>(&self, py: Python<'py>, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.unary(py, Calc::abs, a)
    }

    /// √a, correctly rounded, elementwise on words (docs/formats.md "Square root": NaN /
    /// NaR below zero, where fix and dfix give 0; LNS halves the log, to the nearer value).
    /// With `rounder` (a `Rounder`, float and fix formats): rounded stochastically, one draw
    /// each in C order.
    #[pyo3(signature = (a, rounder=None))]
    fn sqrt<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match rounder {
            None => self.unary(py, Calc::sqrt, a),
            Some(r) => self.sqrt_rounded(py, a, r),
        }
    }

    /// e^a, correctly rounded, elementwise on words (slow: exact arithmetic per element).
    fn exp<'py>(&self, py: Python<'py>, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.unary(py, Calc::exp, a)
    }

    /// ln a, correctly rounded, elementwise on words (slow: exact arithmetic per element).
    fn ln<'py>(&self, py: Python<'py>, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.unary(py, Calc::ln, a)
    }

    /// a · b + c rounded once, elementwise on words (numpy broadcasting): the exact
    /// accumulation of `dot(…, mode="quire")` over the two terms [a, c]·[b, 1], for families
    /// that offer it and hold 1 exactly; NotImplementedError otherwise (issue 32).
    /// With `rounder` (a `Rounder`, float formats): rounded stochastically, one draw each.
    #[pyo3(signature = (a, b, c, rounder=None))]
    fn fma<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        c: &Bound<'py, PyAny>,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match rounder {
            Some(r) => self.fma_rounded(py, [a, b, c], r),
            None => self.fma_words(py, a, b, c),
        }
    }

    /// The float array PE's read-out with `--acc A` along `axis` (docs/rtl.md, `array`):
    /// s = A.fma(a_k, b_k, s) from +0, k in order, on the words widened to A, then s
    /// converted to this format (the golden float operations).
    #[pyo3(signature = (a, b, acc, axis=LAST_AXIS))]
    fn acc_dot<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        acc: &str,
        axis: Int<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.acc_dot_words(py, a, b, acc, &axis)
    }

    /// Σ_k a_k·b_k along `axis` of the broadcast words (the golden `Calc::dot`, k = 0, 1, …
    /// in order) in `mode`: naive, kahan, pairwise or quire, as the family offers. Float
    /// formats also take a GPU matrix unit's `fdpa:PRESET[:promoteN]` or
    /// `fdpa:L:F:RHO[:promoteN]` (docs/formats.md "fdpa"): D = Σ a_k·b_k + C as the unit's
    /// output words (binary32 as uint32, binary16 as uint16 for `rne-f16`), C the words
    /// `init` of that format (broadcast to the result's shape; default +0).
    #[pyo3(signature = (a, b, mode="naive", axis=LAST_AXIS, init=None))]
    fn dot<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        mode: &str,
        axis: Int<isize>,
        init: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match (self.mode(mode)?, init) {
            (SumMode::Fdpa(m), init) => self.fdpa_words(py, [a, b], m, init, &axis),
            (m, Some(_)) => Err(value_error(format!(
                "init is the addend C of dot in an fdpa mode (mode=\"fdpa:…\"), not of mode {m}"
            ))),
            (SumMode::Naive | SumMode::Kahan | SumMode::Pairwise | SumMode::Quire, None) => {
                self.reduce(py, a, Some(b), mode, &axis)
            }
        }
    }

    /// A·B of an m × k and a k × n matrix of words in `mode` (naive, kahan, pairwise or quire,
    /// as the family offers): element (i, j) is `dot(a[i, :], b[:, j], mode)` bit for bit,
    /// computed by the golden kernels (exact modes on an f64 GEMM by error-free slicing).
    #[pyo3(signature = (a, b, mode="naive"))]
    fn matmul<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        mode: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.matmul_words(py, a, b, mode)
    }

    /// The running dot products along `axis` (numpy's `cumsum` of the products, in `mode`):
    /// element k is `dot` of terms 0..=k. With `flags=True`, (words, overflow): whether step k
    /// saturated (lns naive and kahan: its product or an addition; fix quire: the read-out).
    #[pyo3(signature = (a, b, mode="naive", axis=LAST_AXIS, flags=false))]
    fn cumdot<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        mode: &str,
        axis: Int<isize>,
        flags: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.running(py, a, b, mode, &axis, flags)
    }

    /// Σ_k x_k along `axis` (the golden `Calc::sum`, k in order) in `mode`.
    #[pyo3(signature = (x, mode="naive", axis=LAST_AXIS))]
    fn sum<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        mode: &str,
        axis: Int<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.reduce(py, x, None, mode, &axis)
    }

    /// The 1-bit quantizer with error feedback (seed 001) on words: `g` is one column (1-D)
    /// or a matrix whose columns are quantized separately (2-D, rows × cols); `residual`
    /// (same shape) is the carried error, None for no error feedback. Returns
    /// `(bits, reconstruction, new_residual)`: the bools (v ≥ 0), each element's
    /// reconstruction word, and the new residual words (None without a residual).
    #[pyo3(signature = (g, residual=None, mode="naive"))]
    fn onebit<'py>(
        &self,
        py: Python<'py>,
        g: &Bound<'py, PyAny>,
        residual: Option<&Bound<'py, PyAny>>,
        mode: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let q = self.onebit_words(py, g, residual, mode)?;
        PyTuple::new(py, self.onebit_out(py, q, false)?)
    }

    /// The 8-bit codec's word rule (the hardware `q8-enc`'s): each x word of this format
    /// encoded with the 8-bit type `ty` at the scale word `scale` (numpy broadcasting), as
    /// `Q8Type::encode_word`. Returns uint8 codes.
    #[pyo3(signature = (x, scale, ty="q8:dynamic-tree"))]
    fn q8_encode_words<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        scale: &Bound<'py, PyAny>,
        ty: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::codecs::q8_encode_words(self, py, x, scale, ty)
    }

    /// The 8-bit codec's word rule (the hardware `q8-dec`'s): each code of type `ty` decoded
    /// at the scale word `scale` into this format (numpy broadcasting), as
    /// `Q8Type::decode_word_flagged`. Returns `(words, flags)`: the result words and the
    /// decoder's flag (the result overflowed or is NaN/NaR).
    #[pyo3(signature = (codes, scale, ty="q8:dynamic-tree"))]
    fn q8_decode_words<'py>(
        &self,
        py: Python<'py>,
        codes: &Bound<'py, PyAny>,
        scale: &Bound<'py, PyAny>,
        ty: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        crate::codecs::q8_decode_words(self, py, codes, scale, ty)
    }

    /// Each word converted to the format `to` (a `Format` or a format string) of the same
    /// family, or between float (f32 too) and fix formats, as the golden ALU's `convert` (the hardware `convert` unit's and the ALU lane's
    /// rule): posit and fix rounded to nearest (ties to even) and saturated, LNS by its log
    /// rounded to the target's fraction bits (docs/formats.md). With `rounder` (a `Rounder`):
    /// rounded stochastically where `to` is a float (from a float or fix format), one draw per
    /// word in C order, as the `convert` unit with `--rounding stochastic:R`.
    #[pyo3(signature = (words, to, rounder=None))]
    fn convert<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
        to: &Bound<'py, PyAny>,
        rounder: Option<&PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let t = crate::codecs::format_arg(to)?;
        if let Some(r) = rounder {
            return self.convert_rounded(py, words, &t, r);
        }
        // One family (its own conversion), or a pair of the `convert` unit: float and fix,
        // f32 as float:8:23 (golden `alu::convert`).
        let same_family = self.calc.convert_to(&t.calc, 0).is_some();
        if !same_family {
            lpgen_golden::alu::convert_pair(self.format, t.format).map_err(value_error)?;
        }
        let w = self.words(words)?;
        let shape = w.shape().to_vec();
        let w: Vec<Bits> = w.iter().copied().collect();
        let conversion = lpgen_golden::alu::Conversion::tabled(&self.calc, &t.calc);
        let out = py.detach(|| crate::arrays::par_map(w.len(), |i| conversion.word(w[i])));
        t.out(py, &shape, out)
    }

    /// One lane of the vector ALU in this format (the hardware `alu` and `vector` units'
    /// rule, `lpgen_golden::Alu`), converting to and from `to` (same family; default this
    /// format): opcodes `op` (0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 lt, 7 neg, 8 abs,
    /// 9 select, 10 convert from T; 11..15 give zero), words `a`, `b`, select bits `sel`,
    /// T words `t_in`, broadcast. Returns `(y, t_out, cmp, nan)`: y, a converted to T, how a
    /// compares with b (0 equal, 1 less, 2 greater, 3 unordered), and whether y is NaN/NaR.
    #[pyo3(signature = (op, a, b, sel, t_in, to=None))]
    #[allow(clippy::too_many_arguments)]
    fn alu<'py>(
        &self,
        py: Python<'py>,
        op: &Bound<'py, PyAny>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        sel: &Bound<'py, PyAny>,
        t_in: &Bound<'py, PyAny>,
        to: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        crate::lane::alu(self, py, [op, a, b, sel, t_in], to)
    }

    /// The dfix lane (the hardware `alu` and `vector` on `dfix:W`, `DfixFormat::lane`):
    /// opcodes `op` (0 mul, 1 add, 2 sub, 3 rescale, 4 neg; 5..7 give zero without flags) on
    /// words `a`, `b`, the exact integer read out `shift` scale steps up (x·2^−shift rounded
    /// to nearest even, saturated), broadcast. Returns `(y, overflow, overflow_half, cmp)`:
    /// the word, the overflow tests at that scale and at its half, and how a compares with b
    /// (0 equal, 1 less, 2 greater).
    fn dfix_lane<'py>(
        &self,
        py: Python<'py>,
        op: &Bound<'py, PyAny>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        shift: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        crate::lane::dfix_lane(self, py, [op, a, b], shift)
    }

    /// Σ_k a_k·b_k of `dfix:W` words (integers) along `axis`, accumulated exactly and read
    /// out `shift` scale steps up (Σ·2^−shift rounded to nearest even, saturated): the
    /// `array --pe dfix` PE's read-out. Returns `(words, overflow, overflow_half)`, the
    /// flags the overflow tests at that scale and at its half.
    #[pyo3(signature = (a, b, shift, axis=LAST_AXIS))]
    fn dfix_dot<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        shift: Int<i64>,
        axis: Int<isize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        crate::dfix::dfix_dot(self, py, a, b, shift, &axis)
    }
}
