//! The frame of the lockstep lanes ([`lockstep`]): every dot product of a set of rows with a
//! set of columns, L independent outputs at a time, each output's operations in its own k
//! order. A family's lanes (`posit/lanes.rs`, `lns/lanes.rs`) give the decoding of a word
//! into its working value and the L-lane step loop; this module decodes each operand once,
//! gathers blocks of L operands side by side, and writes the outputs back row-major.
//!
//! Which side goes into the lanes: the longer one. A training product often has few columns
//! (a convolution's 6 or 16 output channels, a bias gradient's one) and many rows, or the
//! reverse; lanes over the shorter side would run mostly empty. Swapping the sides swaps the
//! operands of each product a_k·b_k, so it needs a commutative product (both families' are:
//! one exact product, rounded once) and keeps every output's k order.
//!
//! Special words: NaR and NaN are sticky in the families that use this frame (an operation
//! with one gives it, and no operation of finite words makes one), so a dot product is NaN
//! exactly when its row or its column holds one. The lanes see such words as zero and the
//! frame writes the NaN word over those outputs.

use crate::arith::Bits;

/// What a family's lanes give the frame: L-lane sums of products over k, on working values
/// `T` of the words.
pub(crate) trait Lanes<T: Copy + Default, const L: usize> {
    /// The working value of a word that is not special (`is_special` is false).
    fn decode(&self, w: Bits) -> T;
    /// Whether `w` is the NaN word (NaR), which makes every dot product it enters NaN.
    fn is_special(&self, w: Bits) -> bool;
    /// The NaN word.
    fn special(&self) -> Bits;
    /// The word of a working value.
    fn encode(&self, v: T) -> Bits;
    /// The L dot products of `x` with the L lanes of `y` (`y[k][l]`: lane l's k-th operand),
    /// each in its k order.
    fn run(&self, x: &[T], y: &[[T; L]]) -> [T; L];
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
    let nan_of = |v: &&[Bits]| v.iter().any(|&w| lanes.is_special(w));
    let (row_nan, col_nan): (Vec<bool>, Vec<bool>) = (
        rows.iter().map(nan_of).collect(),
        cols.iter().map(nan_of).collect(),
    );
    let value = |w: Bits| {
        if lanes.is_special(w) {
            T::default()
        } else {
            lanes.decode(w)
        }
    };
    // The lanes run over the longer side; `wide_is_cols` says which.
    let wide_is_cols = n >= m;
    let (narrow, wide) = if wide_is_cols {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let blocks: Vec<Vec<[T; L]>> = wide
        .chunks(L)
        .map(|b| {
            (0..k)
                .map(|i| std::array::from_fn(|l| b.get(l).map_or(T::default(), |v| value(v[i]))))
                .collect()
        })
        .collect();
    let mut out = vec![0; m * n];
    let mut x = Vec::with_capacity(k);
    for (p, v) in narrow.iter().enumerate() {
        x.clear();
        x.extend(v.iter().map(|&w| value(w)));
        for (bi, block) in blocks.iter().enumerate() {
            let sums = lanes.run(&x, block);
            for (l, &s) in sums.iter().enumerate().take(wide.len() - bi * L) {
                let q = bi * L + l;
                let (i, j) = if wide_is_cols { (p, q) } else { (q, p) };
                out[i * n + j] = if row_nan[i] || col_nan[j] {
                    lanes.special()
                } else {
                    lanes.encode(s)
                };
            }
        }
    }
    out
}
