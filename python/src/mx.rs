//! `lpgen.MxFormat`: the OCP MX block formats (`mx:ELEM[:bK]`, docs/formats.md "MX block
//! formats") on numpy arrays, every rule the golden `lpgen_golden::MxFormat`'s: conversion of
//! a block (§6.3), dequantization, and the exact block dot product (§6.4).
//!
//! A block is a scale byte (E8M0) and 1..=K element codes; one block is a 1-D array of codes
//! (its scale an integer), n blocks of one length a 2-D array n × L (their scales a 1-D
//! array of n). A vector of any length is blocks of K with the last one shorter
//! (`quantize`, `dequantize`, `dot`: the codes a 1-D array, the scales one per block).

use lpgen_golden::mx::{Accumulation, Exact, MxBlock, MxInput};
use lpgen_golden::MxFormat;
use numpy::ndarray::ArrayD;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;

use crate::arrays::{array_out, value_error, values_in, words_in, Values};

/// An MX block format: `MxFormat("mx:fp8:e4m3")` (K = 32) or `MxFormat("mx:fp4:e2m1:b8")`.
#[pyclass(module = "lpgen", name = "MxFormat", frozen)]
pub struct PyMxFormat {
    mx: MxFormat,
}

/// Rows of `a` (1-D: one row; 2-D: n rows), or the one-line refusal.
fn rows<T: Copy>(a: &ArrayD<T>, what: &str) -> PyResult<(Vec<Vec<T>>, bool)> {
    match a.shape() {
        [_] => Ok((vec![a.iter().copied().collect()], false)),
        [n, l] => {
            let v: Vec<T> = a.iter().copied().collect();
            Ok((
                (0..*n).map(|i| v[i * l..(i + 1) * l].to_vec()).collect(),
                true,
            ))
        }
        s => Err(value_error(format!(
            "{what}: one block (1-D) or n blocks (2-D, n × L), not {} dimensions",
            s.len()
        ))),
    }
}

/// `(scale, codes)` of converted blocks: the codes in `shape`, the scale an int (one block)
/// or a uint8 array (`batch`: one per block).
fn blocks_out<'py>(
    py: Python<'py>,
    shape: &[usize],
    batch: bool,
    blocks: &[MxBlock],
) -> PyResult<Bound<'py, PyTuple>> {
    let codes: Vec<u8> = blocks.iter().flat_map(|b| b.codes.clone()).collect();
    let codes = array_out(py, shape, codes)?;
    let scales: Vec<u8> = blocks.iter().map(|b| b.scale).collect();
    let scales = if batch {
        array_out(py, &[scales.len()], scales)?
    } else {
        scales[0].into_bound_py_any(py)?
    };
    PyTuple::new(py, [scales, codes])
}

impl PyMxFormat {
    /// Blocks from scales and codes of matching shapes.
    fn blocks(
        &self,
        scales: &Bound<'_, PyAny>,
        codes: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<MxBlock>, bool)> {
        let name = self.mx.to_string();
        let (codes, batch) = rows(
            &words_in(codes, self.mx.elem_width(), &format!("{name} elements"))?,
            "codes",
        )?;
        let scales: Vec<u64> = words_in(scales, 8, "E8M0 scales")?
            .iter()
            .copied()
            .collect();
        let want = if batch { codes.len() } else { 1 };
        if scales.len() != want {
            return Err(value_error(format!(
                "{} scales for {want} block(s): give one scale per block",
                scales.len()
            )));
        }
        let blocks = scales
            .iter()
            .zip(codes)
            .map(|(&s, c)| MxBlock {
                scale: s as u8,
                codes: c.iter().map(|&x| x as u8).collect(),
            })
            .collect();
        Ok((blocks, batch))
    }

    /// The blocks of a vector: 1-D codes cut in blocks of K (the last shorter), one scale
    /// per block.
    fn vector(
        &self,
        scales: &Bound<'_, PyAny>,
        codes: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<MxBlock>> {
        let name = self.mx.to_string();
        let codes = words_in(codes, self.mx.elem_width(), &format!("{name} elements"))?;
        let scales = words_in(scales, 8, "E8M0 scales")?;
        if codes.ndim() != 1 || scales.ndim() != 1 || codes.is_empty() {
            return Err(value_error(
                "a vector's codes and scales are 1-D arrays, at least one code",
            ));
        }
        let want = codes.len().div_ceil(self.mx.block);
        if scales.len() != want {
            return Err(value_error(format!(
                "{} codes are {want} block(s) of {name}, not {}: give one scale per block",
                codes.len(),
                scales.len()
            )));
        }
        let codes: Vec<u8> = codes.iter().map(|&c| c as u8).collect();
        Ok(scales
            .iter()
            .zip(codes.chunks(self.mx.block))
            .map(|(&s, c)| MxBlock {
                scale: s as u8,
                codes: c.to_vec(),
            })
            .collect())
    }
}

#[pymethods]
impl PyMxFormat {
    #[new]
    fn new(spec: &str) -> PyResult<PyMxFormat> {
        Ok(PyMxFormat {
            mx: spec.parse().map_err(value_error)?,
        })
    }

    /// K, the most elements of a block.
    #[getter]
    fn block(&self) -> usize {
        self.mx.block
    }

    /// The element type (`fp8:e4m3`, `int8`, …).
    #[getter]
    fn elem(&self) -> &'static str {
        self.mx.elem_name
    }

    /// Bits of an element code.
    #[getter]
    fn elem_width(&self) -> u32 {
        self.mx.elem_width()
    }

    fn __str__(&self) -> String {
        self.mx.to_string()
    }

    fn __repr__(&self) -> String {
        format!("lpgen.MxFormat({:?})", self.mx.to_string())
    }

    /// One block of 1..=K values (1-D) or n blocks (2-D, n × L, L ≤ K) converted as §6.3:
    /// `(scale, codes)`, the scale an int (1-D) or a uint8 array of n, the codes uint8.
    fn quantize_block<'py>(
        &self,
        py: Python<'py>,
        x: Values<'py, f64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (xs, shape) = values_in(&x);
        let (xs, batch) = rows(
            &ArrayD::from_shape_vec(shape.clone(), xs).expect("shape"),
            "x",
        )?;
        let blocks: Vec<MxBlock> = xs
            .iter()
            .map(|b| self.mx.quantize_block(b))
            .collect::<Result<_, _>>()
            .map_err(value_error)?;
        blocks_out(py, &shape, batch, &blocks)
    }

    /// One block of 1..=K words (1-D) or n blocks (2-D, n × L) of the word format `input`
    /// (f32, bf16, f16, an IEEE-style float:E:M up to binary32 or fix:I:F: the words
    /// `mx-enc --input` takes) converted as §6.3 on their exact values (the golden
    /// `quantize_words`): `(scale, codes)` as `quantize_block` gives them.
    fn quantize_words<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
        input: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let inp: MxInput = input.parse().map_err(value_error)?;
        let arr = words_in(words, inp.width(), &format!("{inp} words"))?;
        let shape = arr.shape().to_vec();
        let (ws, batch) = rows(&arr, "words")?;
        let blocks: Vec<MxBlock> = ws
            .iter()
            .map(|b| self.mx.quantize_words(inp, b))
            .collect::<Result<_, _>>()
            .map_err(value_error)?;
        blocks_out(py, &shape, batch, &blocks)
    }

    /// A vector of any length (1-D) converted as §6.3 in blocks of K, the last holding the
    /// remaining values: `(scales, codes)`, uint8 arrays of ⌈n/K⌉ and n.
    fn quantize<'py>(&self, py: Python<'py>, x: Values<'py, f64>) -> PyResult<Bound<'py, PyTuple>> {
        let (xs, shape) = values_in(&x);
        if shape.len() != 1 || xs.is_empty() {
            return Err(value_error(format!(
                "quantize takes a 1-D vector of at least one value, not shape {shape:?} (quantize_block takes blocks)"
            )));
        }
        let blocks = self.mx.quantize(&xs);
        let codes: Vec<u8> = blocks.iter().flat_map(|b| b.codes.clone()).collect();
        let scales: Vec<u8> = blocks.iter().map(|b| b.scale).collect();
        PyTuple::new(
            py,
            [
                array_out(py, &[scales.len()], scales)?,
                array_out(py, &[codes.len()], codes)?,
            ],
        )
    }

    /// The values of a vector's blocks (`quantize`'s scales and codes), exact in float64.
    fn dequantize<'py>(
        &self,
        py: Python<'py>,
        scales: &Bound<'py, PyAny>,
        codes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut out = vec![];
        for b in &self.vector(scales, codes)? {
            out.extend(self.mx.dequantize_block(b).map_err(value_error)?);
        }
        array_out(py, &[out.len()], out)
    }

    /// The dot product of two vectors' blocks (§6.4 per block) with the accumulation across
    /// blocks `acc`: "f32" (the specification's reference: each block's exact sum rounded to
    /// f32 and added in f32, in block order from +0; the result an f32 value) or "exact"
    /// (every block added exactly, rounded once to float64).
    #[pyo3(signature = (scales_a, codes_a, scales_b, codes_b, acc = "f32"))]
    fn dot(
        &self,
        scales_a: &Bound<'_, PyAny>,
        codes_a: &Bound<'_, PyAny>,
        scales_b: &Bound<'_, PyAny>,
        codes_b: &Bound<'_, PyAny>,
        acc: &str,
    ) -> PyResult<f64> {
        let acc: Accumulation = acc.parse().map_err(value_error)?;
        let (a, b) = (
            self.vector(scales_a, codes_a)?,
            self.vector(scales_b, codes_b)?,
        );
        let len = |v: &[MxBlock]| v.iter().map(|x| x.codes.len()).sum::<usize>();
        if len(&a) != len(&b) {
            return Err(value_error(
                "vectors of different lengths have no dot product",
            ));
        }
        self.mx.dot(&a, &b, acc).map_err(value_error)
    }

    /// The values X · P_i of blocks (`scale`, `codes` as `quantize_block` gives them), exact
    /// in float64; NaN throughout a block with the NaN scale 0xFF.
    fn dequantize_block<'py>(
        &self,
        py: Python<'py>,
        scale: &Bound<'py, PyAny>,
        codes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (blocks, batch) = self.blocks(scale, codes)?;
        let mut out = vec![];
        for b in &blocks {
            out.extend(self.mx.dequantize_block(b).map_err(value_error)?);
        }
        let shape = if batch {
            vec![blocks.len(), blocks.first().map_or(0, |b| b.codes.len())]
        } else {
            vec![out.len()]
        };
        array_out(py, &shape, out)
    }

    /// §6.4, exact: X_A·X_B·Σ P_A,i·P_B,i of block pairs (one: 1-D codes, int scales; n:
    /// 2-D codes, scale arrays). `(num, exp, nan, inf, inf_neg)`: the result num·2^exp when
    /// finite (num an int, exactly the `mx-dot` unit's `acc`; both 0 otherwise), NaN, ±∞ and
    /// its sign; for n pairs a list of ints and numpy arrays.
    fn dot_block<'py>(
        &self,
        py: Python<'py>,
        scale_a: &Bound<'py, PyAny>,
        codes_a: &Bound<'py, PyAny>,
        scale_b: &Bound<'py, PyAny>,
        codes_b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (a, batch) = self.blocks(scale_a, codes_a)?;
        let (b, batch_b) = self.blocks(scale_b, codes_b)?;
        if batch != batch_b || a.len() != b.len() {
            return Err(value_error(format!(
                "{} block(s) of a and {} of b: give as many of each",
                a.len(),
                b.len()
            )));
        }
        let (mut num, mut exp, mut nan, mut inf, mut neg) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (x, y) in a.iter().zip(&b) {
            let (n, e, f) = match self.mx.dot_block(x, y).map_err(value_error)? {
                Exact::Nan => (0, 0, [true, false, false]),
                Exact::Inf(s) => (0, 0, [false, true, s]),
                Exact::Fin { num, exp } => {
                    let n = i128::try_from(num).expect("a block's exact sum fits an i128");
                    (n, exp, [false; 3])
                }
            };
            num.push(n);
            exp.push(e);
            nan.push(f[0]);
            inf.push(f[1]);
            neg.push(f[2]);
        }
        if !batch {
            return PyTuple::new(
                py,
                [
                    num[0].into_bound_py_any(py)?,
                    exp[0].into_bound_py_any(py)?,
                    nan[0].into_bound_py_any(py)?,
                    inf[0].into_bound_py_any(py)?,
                    neg[0].into_bound_py_any(py)?,
                ],
            );
        }
        let n = [num.len()];
        PyTuple::new(
            py,
            [
                num.into_bound_py_any(py)?,
                array_out(py, &n, exp)?,
                array_out(py, &n, nan)?,
                array_out(py, &n, inf)?,
                array_out(py, &n, neg)?,
            ],
        )
    }
}
