//! The computations behind `lpgen.Format`'s methods: inputs checked and copied, then one pass
//! over the elements detached from the interpreter (`format.rs` holds the Python-facing
//! wrappers).

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::kernel::elementwise::ElemOp;
use lpgen_golden::kernel::{self, Operand};
use lpgen_golden::onebit::Quantizer;
use lpgen_golden::{BinOp, Bits, Calc, Rounder, SumMode};
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;

use crate::arrays::{
    array_out, broadcast_shape, broadcast_to, lanes_back, lanes_last, norm_axis, paired_lanes,
    par_map, par_try_map, shape_text, value_error, without_axis, words_in, words_out, Int,
    PairedLanes,
};
use crate::format::PyFormat;

/// The 1-bit quantizer's results on words: the gradient's shape, the bits, each element's
/// reconstruction word, and the new residual words (with error feedback).
pub struct OneBitWords {
    pub shape: Vec<usize>,
    pub bits: Vec<bool>,
    pub recon: Vec<Bits>,
    pub residual: Option<Vec<Bits>>,
}

/// The value of a word as float64, NaN for NaN and NaR.
fn value(calc: &Calc, w: Bits) -> f64 {
    if calc.is_nan(w) {
        f64::NAN
    } else {
        calc.to_f64(w)
    }
}

impl PyFormat {
    /// Words as a numpy array of this format's word type.
    pub fn out<'py>(
        &self,
        py: Python<'py>,
        shape: &[usize],
        words: Vec<Bits>,
    ) -> PyResult<Bound<'py, PyAny>> {
        words_out(py, shape, words, self.width())
    }

    /// An accumulation mode the family offers, or the registry's refusal, before any work.
    pub fn mode(&self, mode: &str) -> PyResult<SumMode> {
        let m: SumMode = mode.parse().map_err(value_error)?;
        self.calc.dot(m, &[], &[]).map_err(value_error)?;
        Ok(m)
    }

    /// The words nearest to `xs` by the format's rounding (`nearest`).
    pub fn encode_values(&self, py: Python<'_>, xs: &[f64]) -> Vec<Bits> {
        let calc = self.calc;
        py.detach(|| par_map(xs.len(), |i| calc.from_f64(xs[i])))
    }

    /// The words of `xs` rounded by `r`, in order: one stream, one draw per element.
    pub fn encode_rounded(
        &self,
        py: Python<'_>,
        xs: &[f64],
        mut r: Rounder,
    ) -> PyResult<Vec<Bits>> {
        let calc = self.calc;
        py.detach(|| {
            xs.iter()
                .map(|&x| calc.from_f64_with(x, &mut r))
                .collect::<Result<Vec<Bits>, _>>()
        })
        .map_err(value_error)
    }

    /// The values of `words` as float64.
    pub fn values(&self, py: Python<'_>, words: &[Bits]) -> Vec<f64> {
        let calc = self.calc;
        py.detach(|| par_map(words.len(), |i| value(&calc, words[i])))
    }

    /// `xs` rounded into the format, as float64 (encode and decode in one pass).
    pub fn quantize_values(&self, py: Python<'_>, xs: &[f64]) -> Vec<f64> {
        let calc = self.calc;
        py.detach(|| par_map(xs.len(), |i| value(&calc, calc.from_f64(xs[i]))))
    }

    /// `op` of the broadcast words `a` and `b`.
    pub fn binop<'py>(
        &self,
        py: Python<'py>,
        op: BinOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (a, b) = (self.words(a)?, self.words(b)?);
        let shape = broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?;
        let (a, b) = (broadcast_to(&a, &shape), broadcast_to(&b, &shape));
        let calc = self.calc;
        let out = py.detach(|| par_map(a.len(), |i| calc.binop(op, a[i], b[i])));
        self.out(py, &shape, out)
    }

    /// `op` of `a` and `b` rounded by `rounder` when given (never with `flags`), else as
    /// [`PyFormat::arith`].
    pub fn arith_rounded<'py>(
        &self,
        py: Python<'py>,
        op: BinOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
        rounder: Option<&crate::rounded::PyRounder>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match rounder {
            Some(_) if flags => Err(value_error(
                "flags=True and a rounder: the stochastic operations give no flags",
            )),
            Some(r) => self.binop_rounded(py, op, a, b, r),
            None => self.arith(py, op, a, b, flags),
        }
    }

    /// `op` of `a` and `b`: the words, or with `flags` the tuple (words, overflow).
    pub fn arith<'py>(
        &self,
        py: Python<'py>,
        op: BinOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        flags: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !flags {
            let fast = match op {
                BinOp::Add => Some(ElemOp::Add),
                BinOp::Sub => Some(ElemOp::Sub),
                BinOp::Mul => Some(ElemOp::Mul),
                _ => None,
            };
            if let Some(op) = fast {
                if let Some(out) = self.binop_fast(py, op, a, b)? {
                    return Ok(out);
                }
            }
            return self.binop(py, op, a, b);
        }
        let (w, f) = self.binop_flagged(py, op, a, b)?;
        Ok(pyo3::types::PyTuple::new(py, [w, f])?.into_any())
    }

    /// `op` of the broadcast words `a` and `b` with the family's overflow flag: (words,
    /// bools); a family that defines no flag for its elementwise operations is refused.
    pub fn binop_flagged<'py>(
        &self,
        py: Python<'py>,
        op: BinOp,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let calc = self.calc;
        let zero = calc.zero();
        if calc.binop_flagged(op, zero, zero).is_none() {
            return Err(value_error(format!(
                "flags=True: {} has no overflow flag on its elementwise operations (lns and \
                 dfix have one; fix flags its accumulator's read-out: cumdot(a, b, \
                 mode=\"quire\", flags=True))",
                self.format
            )));
        }
        let (a, b) = (self.words(a)?, self.words(b)?);
        let shape = broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?;
        let (a, b) = (broadcast_to(&a, &shape), broadcast_to(&b, &shape));
        let out = py.detach(|| {
            par_map(a.len(), |i| {
                calc.binop_flagged(op, a[i], b[i])
                    .expect("checked above: the family flags this operation")
            })
        });
        let (words, flags): (Vec<Bits>, Vec<bool>) = out.into_iter().unzip();
        Ok((self.out(py, &shape, words)?, array_out(py, &shape, flags)?))
    }

    /// The running dot products along `axis` of the broadcast words (element k: the dot
    /// product of terms 0..=k), and with `flags` each step's overflow flag.
    pub fn running<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        mode: &str,
        axis: &Int<isize>,
        flags: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = self.mode(mode)?;
        let calc = self.calc;
        if flags
            && calc
                .running_dot(m, &[], &[])
                .map_err(value_error)?
                .overflow
                .is_none()
        {
            return Err(value_error(format!(
                "flags=True: {} has no overflow flag in mode '{mode}' (lns: naive, kahan; \
                 fix: quire)",
                self.format
            )));
        }
        let PairedLanes {
            a,
            b,
            k,
            lanes,
            shape,
            axis,
            ..
        } = paired_lanes(&self.words(a)?, &self.words(b)?, axis)?;
        let runs = py.detach(|| {
            par_try_map(lanes, |i| {
                let lane = i * k..(i + 1) * k;
                calc.running_dot(m, &a[lane.clone()], &b[lane])
            })
        });
        let runs = runs.map_err(value_error)?;
        let mut words = Vec::with_capacity(lanes * k);
        let mut overs = Vec::with_capacity(lanes * k);
        for r in runs {
            words.extend(r.words);
            overs.extend(r.overflow.unwrap_or_else(|| vec![false; k]));
        }
        let words = self.out(py, &shape, lanes_back(words, &shape, axis))?;
        if !flags {
            return Ok(words);
        }
        let overs = array_out(py, &shape, lanes_back(overs, &shape, axis))?;
        Ok(pyo3::types::PyTuple::new(py, [words, overs])?.into_any())
    }

    /// `op` of each word of `a`.
    pub fn unary<'py>(
        &self,
        py: Python<'py>,
        op: fn(&Calc, Bits) -> Bits,
        a: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.words(a)?;
        let shape = a.shape().to_vec();
        let a: Vec<Bits> = a.iter().copied().collect();
        let calc = self.calc;
        let out = py.detach(|| par_map(a.len(), |i| op(&calc, a[i])));
        self.out(py, &shape, out)
    }

    /// a·b + c rounded once by the golden `Calc::fma` (floats: IEEE's fused multiply-add;
    /// families with an exact accumulation where 1 is a word: the quire dot product
    /// [a, c]·[b, 1]); refused where the family defines none.
    pub fn fma_words<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        c: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let calc = self.calc;
        let zero = calc.zero();
        if calc.fma(zero, zero, zero).is_none() {
            return Err(PyNotImplementedError::new_err(format!(
                "fma of {} is not implemented: the golden model has no fused multiply-add for it yet (issue 32); fma is exact only through a quire where 1 is a word",
                self.format
            )));
        }
        let (a, b, c) = (self.words(a)?, self.words(b)?, self.words(c)?);
        let shape = broadcast_shape(&[a.shape(), b.shape(), c.shape()]).map_err(value_error)?;
        let (a, b, c) = (
            broadcast_to(&a, &shape),
            broadcast_to(&b, &shape),
            broadcast_to(&c, &shape),
        );
        let out = py.detach(|| {
            par_map(a.len(), |i| {
                calc.fma(a[i], b[i], c[i])
                    .expect("checked above: the family defines fma")
            })
        });
        self.out(py, &shape, out)
    }

    /// Σ_k a_k·b_k (with `b`) or Σ_k a_k (without) along `axis` of the broadcast words, each
    /// lane k = 0, 1, … in order, in `mode`.
    pub fn reduce<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: Option<&Bound<'py, PyAny>>,
        mode: &str,
        axis: &Int<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mode = self.mode(mode)?;
        let a = self.words(a)?;
        let b = b.map(|b| self.words(b)).transpose()?;
        let shape = match &b {
            Some(b) => broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?,
            None => a.shape().to_vec(),
        };
        let axis = norm_axis(axis, shape.len())?;
        let k = shape[axis];
        let a = lanes_last(broadcast_to(&a, &shape), &shape, axis);
        let b = b.map(|b| lanes_last(broadcast_to(&b, &shape), &shape, axis));
        let out_shape = without_axis(&shape, axis);
        let lanes: usize = out_shape.iter().product();
        let calc = self.calc;
        let out = py.detach(|| {
            par_try_map(lanes, |i| {
                let lane = i * k..(i + 1) * k;
                match &b {
                    Some(b) => calc.dot(mode, &a[lane.clone()], &b[lane]),
                    None => calc.sum(mode, &a[lane]),
                }
            })
        });
        self.out(py, &out_shape, out.map_err(value_error)?)
    }

    /// A·B of an m × k and a k × n matrix of words in `mode`, through the golden kernels
    /// (`lpgen_golden::kernel::matmul`): element (i, j) is `Calc::dot` of row i of A and
    /// column j of B, bit for bit; the rows are shared among threads in blocks.
    pub fn matmul_words<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        mode: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mode = self.mode(mode)?;
        if let SumMode::Fdpa(_) = mode {
            // `dot` gives the unit's binary32 (binary16) words; a product of words of this
            // format would round them once more, silently.
            return Err(value_error(format!(
                "matmul takes naive, kahan, pairwise or quire, not {mode}: fdpa products are \
                 dot(a[:, None, :], b.T[None], mode=...), the unit's output words"
            )));
        }
        let (a, b) = (self.words(a)?, self.words(b)?);
        let (&[m, k], &[k2, n]) = (a.shape(), b.shape()) else {
            return Err(value_error(format!(
                "matmul takes two 2-D arrays (m × k and k × n), not shapes {} and {}",
                shape_text(a.shape()),
                shape_text(b.shape())
            )));
        };
        if k != k2 {
            return Err(value_error(format!(
                "matmul: A is {m} × {k} and B is {k2} × {n}: their inner sizes differ"
            )));
        }
        let (a, b): (Vec<Bits>, Vec<Bits>) =
            (a.iter().copied().collect(), b.iter().copied().collect());
        let calc = self.calc;
        // Blocks of at least 16 rows (a block's decoding of B is shared by its rows).
        let blocks = m.div_ceil(16).max(1);
        let out = py.detach(|| {
            let a = Operand::row_major(&a, m, k);
            let b = Operand::row_major(&b, k, n);
            par_try_map(blocks, |i| {
                let rows = a.rows_range((i * 16).min(m), ((i + 1) * 16).min(m));
                kernel::matmul(&calc, mode, rows, b)
            })
        });
        let words: Vec<Bits> = out.map_err(value_error)?.concat();
        self.out(py, &[m, n], words)
    }

    /// D = Σ a_k·b_k + C along `axis` in fdpa mode `m`: the output words (binary32 or
    /// binary16), C the words `init` of that format broadcast to the result's shape.
    pub fn fdpa_words<'py>(
        &self,
        py: Python<'py>,
        [a, b]: [&Bound<'py, PyAny>; 2],
        m: Fdpa,
        init: Option<&Bound<'py, PyAny>>,
        axis: &Int<isize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let calc = self.calc;
        // No products: the mode checked against the format, and its output format.
        let (_, out) = calc.fdpa(m, &[], &[], 0).map_err(value_error)?;
        let (a, b) = (self.words(a)?, self.words(b)?);
        let shape = broadcast_shape(&[a.shape(), b.shape()]).map_err(value_error)?;
        let axis = norm_axis(axis, shape.len())?;
        let k = shape[axis];
        let a = lanes_last(broadcast_to(&a, &shape), &shape, axis);
        let b = lanes_last(broadcast_to(&b, &shape), &shape, axis);
        let out_shape = without_axis(&shape, axis);
        let lanes: usize = out_shape.iter().product();
        let c = match init {
            Some(c) => {
                let c = words_in(c, out.width(), &format!("init ({out} words)"))?;
                let s = broadcast_shape(&[c.shape(), &out_shape]).map_err(value_error)?;
                if s != out_shape {
                    return Err(value_error(format!(
                        "init has shape {}, the dot products {}: it must broadcast to it",
                        shape_text(c.shape()),
                        shape_text(&out_shape)
                    )));
                }
                broadcast_to(&c, &out_shape)
            }
            None => vec![0; lanes],
        };
        let words = py.detach(|| {
            par_try_map(lanes, |i| {
                let lane = i * k..(i + 1) * k;
                calc.fdpa(m, &a[lane.clone()], &b[lane], c[i])
                    .map(|(w, _)| w)
            })
        });
        words_out(py, &out_shape, words.map_err(value_error)?, out.width())
    }

    /// Quantizes words `g` (1-D: one column; 2-D rows × cols: every column) with the 1-bit
    /// quantizer in `mode`, with error feedback when `residual` is given.
    pub fn onebit_words<'py>(
        &self,
        py: Python<'py>,
        g: &Bound<'py, PyAny>,
        residual: Option<&Bound<'py, PyAny>>,
        mode: &str,
    ) -> PyResult<OneBitWords> {
        let m: SumMode = mode.parse().map_err(value_error)?;
        let q = Quantizer::new(self.format, m).map_err(value_error)?;
        // Quantizer::new computes at the format's default arithmetic: a dfix scale of 0.
        if let Some(e) = self.scale.filter(|&e| e != 0) {
            return Err(value_error(format!(
                "the 1-bit quantizer takes {} words at scale 0 only, not at scale {e}",
                self.format
            )));
        }
        let g = self.words(g)?;
        let shape = g.shape().to_vec();
        let (rows, cols) = match shape[..] {
            [rows] => (rows, 1),
            [rows, cols] => (rows, cols),
            _ => {
                return Err(value_error(format!(
                    "the 1-bit quantizer takes a column (1-D) or a matrix of columns (2-D), not {} dimensions",
                    shape.len()
                )))
            }
        };
        let mut residual = match residual {
            Some(r) => {
                let r = self.words(r)?;
                if r.shape() != shape.as_slice() {
                    return Err(value_error(format!(
                        "the residual has shape {}, the gradient {}: they must be equal",
                        shape_text(r.shape()),
                        shape_text(&shape)
                    )));
                }
                Some(r.iter().copied().collect::<Vec<Bits>>())
            }
            None => None,
        };
        let g: Vec<Bits> = g.iter().copied().collect();
        let (bits, recon) = py.detach(|| {
            let quantized = q.matrix(&g, rows, cols, residual.as_deref_mut());
            let bits: Vec<bool> = (0..rows)
                .flat_map(|row| (0..cols).map(move |col| (row, col)))
                .map(|(row, col)| quantized.bit(row, col))
                .collect();
            (bits, quantized.values())
        });
        Ok(OneBitWords {
            shape,
            bits,
            recon,
            residual,
        })
    }

    /// [`PyFormat::onebit_words`] as Python values: (bools, then words or float64 values by
    /// `as_values`, the residual None without error feedback).
    pub fn onebit_out<'py>(
        &self,
        py: Python<'py>,
        q: OneBitWords,
        as_values: bool,
    ) -> PyResult<[Bound<'py, PyAny>; 3]> {
        let shape = q.shape;
        let out = |w: Vec<Bits>| {
            if as_values {
                array_out(py, &shape, self.values(py, &w))
            } else {
                self.out(py, &shape, w)
            }
        };
        let residual = match q.residual {
            Some(r) => out(r)?,
            None => py.None().into_bound(py),
        };
        Ok([array_out(py, &shape, q.bits)?, out(q.recon)?, residual])
    }
}
