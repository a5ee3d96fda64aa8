//! The frame of the lockstep lanes ([`lockstep`]): every dot product of a set of rows with a
//! set of columns, L independent outputs at a time, each output's operations in its own k
//! order. A family's lanes (`posit/lanes.rs`, `lns/lanes.rs`, `float/narrow/lanes.rs`) give
//! the decoding of a word into its working value and the L-lane step loop; this module
//! decodes each operand once, gathers blocks of L operands side by side, and writes the
//! outputs back row-major.
//!
//! Which side goes into the lanes: the longer one. A training product often has few columns
//! (a convolution's 6 or 16 output channels, a bias gradient's one) and many rows, or the
//! reverse; lanes over the shorter side would run mostly empty. Swapping the sides swaps the
//! operands of each product a_k·b_k, so it needs a commutative product (every family's here
//! is: one exact product, rounded once) and keeps every output's k order.
//!
//! Special words: NaR and NaN are sticky in the families that use this frame (an operation
//! with one gives it, and no operation of finite words makes one), so a dot product is NaN
//! exactly when its row or its column holds one. The lanes see such words as zero and the
//! frame writes the NaN word over those outputs. Floats are the other kind: ∞ − ∞ makes a
//! NaN no word held, so their lanes give every word a value (NaN and ∞ included) and compute
//! the specials themselves; the frame then marks nothing.

use crate::arith::Bits;

/// What a family's lanes give the frame: L-lane sums of products over k, on working values
/// `T` of the words.
pub(crate) trait Lanes<T: Copy + Default, const L: usize> {
    /// The working value of a word, `None` for the NaN word (NaR), which makes every dot
    /// product it enters NaN.
    fn value(&self, w: Bits) -> Option<T>;
    /// The NaN word.
    fn special(&self) -> Bits;
    /// The word of a working value.
    fn encode(&self, v: T) -> Bits;
    /// For each line `xs[r]` (at most [`ROWS`] of them), the L dot products of it with the L
    /// lanes of `y` (`y[k][l]`: lane l's k-th operand), each in its k order, into `out[r]`.
    /// Several lines give independent chains without padding the lanes.
    fn run(&self, xs: &[&[T]], y: &[[T; L]], out: &mut [[T; L]]);
}

/// Lines of the narrow side the frame gives [`Lanes::run`] at a time.
pub(crate) const ROWS: usize = 4;

/// `run_rows::<R>(args…, lines, y, out)` for the lines `xs` in groups of at most [`ROWS`], R
/// each group's size: how a family's vector lanes go from [`Lanes::run`]'s slice of lines to
/// their loop over R lines (a const generic, so that its chains live in registers).
macro_rules! by_rows {
    ($run_rows:ident($($arg:expr),*; $xs:expr, $y:expr, $out:expr)) => {{
        let (xs, y, out) = ($xs, $y, $out);
        let rows = $crate::kernel::lockstep::ROWS;
        for (xs, out) in xs.chunks(rows).zip(out.chunks_mut(rows)) {
            match xs.len() {
                1 => $run_rows::<1>($($arg),*, xs, y, out),
                2 => $run_rows::<2>($($arg),*, xs, y, out),
                3 => $run_rows::<3>($($arg),*, xs, y, out),
                _ => $run_rows::<4>($($arg),*, xs, y, out),
            }
        }
    }};
}
pub(crate) use by_rows;

/// Whether the machine has the AVX-512 the wide lanes use (F and DQ), found at run time.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq")
}

/// The working values of `line` (NaN words as zero) and whether it held a NaN word.
fn values<T: Copy + Default, const L: usize>(
    lanes: &impl Lanes<T, L>,
    line: &[Bits],
    mut put: impl FnMut(usize, T),
) -> bool {
    let mut nan = false;
    for (i, &w) in line.iter().enumerate() {
        let v = lanes.value(w);
        nan |= v.is_none();
        put(i, v.unwrap_or_default());
    }
    nan
}

/// Every dot product of `rows` with `cols` (all of length K), row-major, by `lanes`.
pub(crate) fn lockstep<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Copy + Default,
{
    let (m, n) = (rows.len(), cols.len());
    let k = rows.first().or(cols.first()).map_or(0, |v| v.len());
    assert!(
        rows.iter().chain(cols).all(|v| v.len() == k),
        "rows and columns of K"
    );
    // The lanes run over the longer side; `wide_is_cols` says which.
    let wide_is_cols = n >= m;
    let (narrow, wide) = if wide_is_cols {
        (rows, cols)
    } else {
        (cols, rows)
    };
    // Each line decoded once, in order; the wide side in blocks of L lines side by side.
    let mut narrow_nan = vec![false; narrow.len()];
    let narrow: Vec<Vec<T>> = narrow
        .iter()
        .zip(&mut narrow_nan)
        .map(|(line, nan)| {
            let mut x = vec![T::default(); k];
            *nan = values(lanes, line, |i, v| x[i] = v);
            x
        })
        .collect();
    let mut wide_nan = vec![false; wide.len()];
    let blocks: Vec<Vec<[T; L]>> = wide
        .chunks(L)
        .zip(wide_nan.chunks_mut(L))
        .map(|(lines, nans)| {
            let mut block = vec![[T::default(); L]; k];
            for (l, (line, nan)) in lines.iter().zip(nans).enumerate() {
                *nan = values(lanes, line, |i, v| block[i][l] = v);
            }
            block
        })
        .collect();
    let mut out = vec![0; m * n];
    let mut sums = [[T::default(); L]; ROWS];
    for (p0, xs) in (0..).step_by(ROWS).zip(narrow.chunks(ROWS)) {
        let xs: Vec<&[T]> = xs.iter().map(Vec::as_slice).collect();
        for (bi, block) in blocks.iter().enumerate() {
            lanes.run(&xs, block, &mut sums[..xs.len()]);
            for (p, sums) in (p0..).zip(&sums[..xs.len()]) {
                for (l, &s) in sums.iter().enumerate().take(wide.len() - bi * L) {
                    let q = bi * L + l;
                    let (i, j) = if wide_is_cols { (p, q) } else { (q, p) };
                    out[i * n + j] = if narrow_nan[p] || wide_nan[q] {
                        lanes.special()
                    } else {
                        lanes.encode(s)
                    };
                }
            }
        }
    }
    out
}
