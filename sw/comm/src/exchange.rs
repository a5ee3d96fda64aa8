//! Seed 001's O(1) aggregation (§3.1) of one weight matrix over a [`Transport`], on words of
//! any golden format: the reference for the training driver.
//!
//! 1. [`reduce_scatter_1bit`]: every rank quantizes its whole gradient with its own residuals
//!    (error feedback), sends the columns of stripe j (`partition(cols, K, j)`) to rank j, and
//!    the owner sums the K dequantized stripes unquantized, in source-rank order.
//! 2. The caller post-processes its stripe (AdaGrad, momentum, the update).
//! 3. [`all_gather_1bit`]: the owner quantizes its post-processed stripe again, with a second
//!    residual of that stripe, and every rank assembles the whole matrix from the K quantized
//!    stripes. The owner, too, uses the dequantized words of its own stripe, so every rank
//!    holds the same words.
//!
//! [`reduce_scatter_words`] and [`all_gather_words`] are the same steps without quantization
//! (`--compress none`): each word as its ⌈width/8⌉ bytes. [`reduce_scatter_q8`] and
//! [`all_gather_q8`] send seed 003's 8-bit codes instead (`--compress q8:TYPE`, no error
//! feedback, as that paper): a message is the sender's scale (f32, 4 bytes little-endian) and
//! one code per word, the whole matrix (or stripe) compressed with one scale. Matrices are row-major rows × cols
//! (`lpgen_golden::onebit` says which dimension is a column); a stripe is row-major rows ×
//! (its columns).

use std::ops::Range;

use lpgen_golden::onebit::{self, Quantized, Quantizer};
use lpgen_golden::q8::{Q8Type, TensorScale};
use lpgen_golden::{Bits, Format, SumMode};

use crate::{partition, CommError, Transport};

/// The columns this rank owns.
pub fn my_columns(t: &(impl Transport + ?Sized), cols: usize) -> Range<usize> {
    partition(cols, t.size(), t.rank())
}

/// Step 1 with 1-bit quantization: returns this rank's columns and their aggregated gradient
/// (rows × columns, row-major). `residual` (same shape as `g`) is this rank's error feedback.
pub fn reduce_scatter_1bit(
    t: &mut (impl Transport + ?Sized),
    q: &Quantizer,
    g: &[Bits],
    rows: usize,
    cols: usize,
    residual: Option<&mut [Bits]>,
) -> Result<(Range<usize>, Vec<Bits>), CommError> {
    let whole = q.matrix(g, rows, cols, residual);
    reduce_scatter_quantized(t, q, &whole)
}

/// Step 1 with the gradient already quantized (by the golden quantizer or by the RTL
/// `quant1` unit): sends the columns of stripe j to rank j and sums the K dequantized stripes
/// of this rank's columns.
pub fn reduce_scatter_quantized(
    t: &mut (impl Transport + ?Sized),
    q: &Quantizer,
    whole: &Quantized,
) -> Result<(Range<usize>, Vec<Bits>), CommError> {
    let format = q.calc().format();
    let (rows, cols) = (whole.rows, whole.cols);
    let (mine, parts) = scatter(
        t,
        cols,
        |range| whole.columns(range).to_bytes(format),
        |from, n, bytes| decode(format, rows, n, bytes, from),
    )?;
    Ok((mine, q.sum_dequantized(&parts)))
}

/// The skeleton of step 1: `encode(range)` is the message for the owner of the columns
/// `range`; returns this rank's columns and, in source-rank order, the messages it received
/// decoded by `decode(source, columns, bytes)`.
fn scatter<T>(
    t: &mut (impl Transport + ?Sized),
    cols: usize,
    encode: impl Fn(Range<usize>) -> Vec<u8>,
    decode: impl Fn(usize, usize, &[u8]) -> Result<T, CommError>,
) -> Result<(Range<usize>, Vec<T>), CommError> {
    let k = t.size();
    let slices = (0..k).map(|j| encode(partition(cols, k, j))).collect();
    let mine = my_columns(t, cols);
    let parts = t
        .all_to_all(slices)?
        .iter()
        .enumerate()
        .map(|(from, bytes)| decode(from, mine.len(), bytes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((mine, parts))
}

/// The skeleton of step 3: sends `bytes` (this rank's stripe) to every rank and assembles the
/// whole rows × cols matrix from the stripes, each decoded by `decode(source, columns,
/// bytes)` into rows × columns words.
fn gather(
    t: &mut (impl Transport + ?Sized),
    bytes: Vec<u8>,
    rows: usize,
    cols: usize,
    decode: impl Fn(usize, usize, &[u8]) -> Result<Vec<Bits>, CommError>,
) -> Result<Vec<Bits>, CommError> {
    let k = t.size();
    let mut out = vec![0; rows * cols];
    for (from, bytes) in t.all_gather(bytes)?.iter().enumerate() {
        let range = partition(cols, k, from);
        let words = decode(from, range.len(), bytes)?;
        for (c, col) in range.clone().enumerate() {
            for row in 0..rows {
                out[row * cols + col] = words[row * range.len() + c];
            }
        }
    }
    Ok(out)
}

/// Step 3 with 1-bit quantization: `stripe` is this rank's post-processed columns (rows ×
/// `my_columns`, row-major), `residual` its error feedback (same shape). Returns the whole
/// rows × cols matrix of dequantized words, the same on every rank.
pub fn all_gather_1bit(
    t: &mut (impl Transport + ?Sized),
    q: &Quantizer,
    stripe: &[Bits],
    rows: usize,
    cols: usize,
    residual: Option<&mut [Bits]>,
) -> Result<Vec<Bits>, CommError> {
    let mine = my_columns(t, cols);
    let quantized = q.matrix(stripe, rows, mine.len(), residual);
    all_gather_quantized(t, q.calc().format(), &quantized, cols)
}

/// Step 3 with this rank's stripe already quantized: every rank's stripe, dequantized,
/// assembled into the whole rows × `cols` matrix.
pub fn all_gather_quantized(
    t: &mut (impl Transport + ?Sized),
    format: Format,
    stripe: &Quantized,
    cols: usize,
) -> Result<Vec<Bits>, CommError> {
    let rows = stripe.rows;
    gather(t, stripe.to_bytes(format), rows, cols, |from, n, bytes| {
        decode(format, rows, n, bytes, from).map(|q| q.values())
    })
}

/// Step 1 without quantization: the K stripes summed in `mode`, source-rank order.
pub fn reduce_scatter_words(
    t: &mut (impl Transport + ?Sized),
    format: Format,
    mode: SumMode,
    g: &[Bits],
    rows: usize,
    cols: usize,
) -> Result<(Range<usize>, Vec<Bits>), CommError> {
    assert_eq!(g.len(), rows * cols, "matrix of {rows} x {cols}");
    let (mine, parts) = scatter(
        t,
        cols,
        |range| words_to_bytes(format, rows, cols, g, range),
        |from, n, bytes| bytes_to_words(format, rows * n, bytes, from),
    )?;
    Ok((mine, sum_in_rank_order(format, mode, &parts)?))
}

/// Element by element, the sum over the K parts (one per source rank, in rank order) in
/// `mode`: the fixed order that makes the aggregate independent of arrival order.
fn sum_in_rank_order(
    format: Format,
    mode: SumMode,
    parts: &[Vec<Bits>],
) -> Result<Vec<Bits>, CommError> {
    let calc = format.calc();
    let n = parts.first().map_or(0, Vec::len);
    let mut terms = vec![0; parts.len()];
    let mut out = Vec::with_capacity(n);
    for e in 0..n {
        for (term, part) in terms.iter_mut().zip(parts) {
            *term = part[e];
        }
        out.push(calc.sum(mode, &terms).map_err(|e| CommError(e.0))?);
    }
    Ok(out)
}

/// Step 3 without quantization: every rank's stripe assembled into the whole matrix.
pub fn all_gather_words(
    t: &mut (impl Transport + ?Sized),
    format: Format,
    stripe: &[Bits],
    rows: usize,
    cols: usize,
) -> Result<Vec<Bits>, CommError> {
    let mine = my_columns(t, cols);
    let bytes = words_to_bytes(format, rows, mine.len(), stripe, 0..mine.len());
    gather(t, bytes, rows, cols, |from, n, bytes| {
        bytes_to_words(format, rows * n, bytes, from)
    })
}

/// Step 1 with an 8-bit codec: every rank compresses its whole gradient with one scale
/// ([`Q8Type::compress_tensor`], the rule of `--compress-grad`), sends the scale and the codes
/// of stripe j to rank j, and the owner sums the K expanded stripes in `mode`, source-rank
/// order.
#[allow(clippy::too_many_arguments)] // the matrix, its shape, the codec and the sum's order
pub fn reduce_scatter_q8(
    t: &mut (impl Transport + ?Sized),
    codec: Q8Type,
    format: Format,
    mode: SumMode,
    g: &[Bits],
    rows: usize,
    cols: usize,
    unit: f64,
) -> Result<(Range<usize>, Vec<Bits>), CommError> {
    assert_eq!(g.len(), rows * cols, "matrix of {rows} x {cols}");
    let (scale, codes) = codec
        .compress_tensor(format, g, unit)
        .map_err(|e| CommError(e.0))?;
    let (mine, parts) = scatter(
        t,
        cols,
        |range| q8_message(format, scale, rows, cols, &codes, range),
        |from, n, bytes| q8_words(codec, format, rows * n, bytes, unit, from),
    )?;
    Ok((mine, sum_in_rank_order(format, mode, &parts)?))
}

/// Step 3 with an 8-bit codec: the owner compresses its stripe with one scale, and every rank
/// assembles the whole matrix from the K expanded stripes (the owner, too, uses its own
/// expanded words, so every rank holds the same words).
pub fn all_gather_q8(
    t: &mut (impl Transport + ?Sized),
    codec: Q8Type,
    format: Format,
    stripe: &[Bits],
    rows: usize,
    cols: usize,
    unit: f64,
) -> Result<Vec<Bits>, CommError> {
    let mine = my_columns(t, cols);
    let (scale, codes) = codec
        .compress_tensor(format, stripe, unit)
        .map_err(|e| CommError(e.0))?;
    let bytes = q8_message(format, scale, rows, mine.len(), &codes, 0..mine.len());
    gather(t, bytes, rows, cols, |from, n, bytes| {
        q8_words(codec, format, rows * n, bytes, unit, from)
    })
}

/// The scale, then the codes of the columns `range` of a row-major rows × cols matrix of codes.
fn q8_message(
    format: Format,
    scale: TensorScale,
    rows: usize,
    cols: usize,
    codes: &[u8],
    range: Range<usize>,
) -> Vec<u8> {
    let mut out = scale.to_bytes(format);
    out.reserve(rows * range.len());
    for row in 0..rows {
        out.extend_from_slice(&codes[row * cols + range.start..row * cols + range.end]);
    }
    out
}

/// The `n` words of a [`q8_message`] from rank `from`.
fn q8_words(
    codec: Q8Type,
    format: Format,
    n: usize,
    bytes: &[u8],
    unit: f64,
    from: usize,
) -> Result<Vec<Bits>, CommError> {
    let head = TensorScale::byte_len(format);
    if bytes.len() != head + n {
        return Err(CommError(format!(
            "from rank {from}: {} bytes where a scale and {n} codes take {}",
            bytes.len(),
            head + n
        )));
    }
    let bad = |e: lpgen_golden::FormatError| CommError(format!("from rank {from}: {}", e.0));
    let scale = TensorScale::from_bytes(format, &bytes[..head]).map_err(bad)?;
    codec
        .expand_tensor(format, &bytes[head..], scale, unit)
        .map_err(bad)
}

fn decode(
    format: Format,
    rows: usize,
    cols: usize,
    bytes: &[u8],
    from: usize,
) -> Result<Quantized, CommError> {
    Quantized::from_bytes(format, rows, cols, bytes)
        .map_err(|e| CommError(format!("from rank {from}: {e}")))
}

/// The columns `range` of a row-major rows × cols matrix, row-major, each word in
/// ⌈width/8⌉ little-endian bytes.
fn words_to_bytes(
    format: Format,
    rows: usize,
    cols: usize,
    m: &[Bits],
    range: Range<usize>,
) -> Vec<u8> {
    // A width known at compile time turns each word's copy into one store, not a memcpy call.
    match onebit::value_bytes(format) {
        1 => pack::<1>(rows, cols, m, range),
        2 => pack::<2>(rows, cols, m, range),
        3 => pack::<3>(rows, cols, m, range),
        4 => pack::<4>(rows, cols, m, range),
        5 => pack::<5>(rows, cols, m, range),
        6 => pack::<6>(rows, cols, m, range),
        7 => pack::<7>(rows, cols, m, range),
        _ => pack::<8>(rows, cols, m, range),
    }
}

/// The columns `range` of the row-major matrix `m`, each word in its first N bytes.
fn pack<const N: usize>(rows: usize, cols: usize, m: &[Bits], range: Range<usize>) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * range.len() * N);
    for row in 0..rows {
        for &w in &m[row * cols + range.start..row * cols + range.end] {
            out.extend_from_slice(&w.to_le_bytes()[..N]);
        }
    }
    out
}

fn bytes_to_words(
    format: Format,
    n: usize,
    bytes: &[u8],
    from: usize,
) -> Result<Vec<Bits>, CommError> {
    let vb = onebit::value_bytes(format);
    if bytes.len() != n * vb {
        return Err(CommError(format!(
            "from rank {from}: {} bytes where {n} words of {format} take {}",
            bytes.len(),
            n * vb
        )));
    }
    Ok(match vb {
        1 => unpack::<1>(bytes),
        2 => unpack::<2>(bytes),
        3 => unpack::<3>(bytes),
        4 => unpack::<4>(bytes),
        5 => unpack::<5>(bytes),
        6 => unpack::<6>(bytes),
        7 => unpack::<7>(bytes),
        _ => unpack::<8>(bytes),
    })
}

/// Words of N little-endian bytes each.
fn unpack<const N: usize>(bytes: &[u8]) -> Vec<Bits> {
    bytes
        .chunks_exact(N)
        .map(|b| {
            let mut le = [0u8; 8];
            le[..N].copy_from_slice(b);
            u64::from_le_bytes(le)
        })
        .collect()
}
