//! The frame of the lockstep lanes ([`lockstep`]): every dot product of a set of rows with a
//! set of columns, L independent outputs at a time, each output's operations in its own k
//! order. A family's lanes (`posit/lanes.rs`, `lns/lanes.rs`, `float/narrow/lanes.rs`) give
//! the decoding of a word into its working value and the L-lane step loop; this module
//! decodes each operand once, gathers blocks of L operands side by side, and writes the
//! outputs back row-major. Two frames: the [`dense`] one here, every line against every k,
//! and the [`sparse()`] one (`lockstep/sparse.rs`), each line through its own steps, for lanes
//! whose zero products leave their sums or whose runs of them stand still.
//!
//! Which side goes into the lanes (dense frame): the longer one. A training product often has few columns
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

use std::ops::Range;

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
    /// Whether a product with a zero operand (the working value `T::default()`) is one value
    /// at every k and in every lane, whatever the other operand: true of a family with one
    /// zero and no infinity (LNS, posits), false of floats (±0, and 0·∞). A step that adds
    /// it then depends on the sums' state alone, so a run of such steps may stop as soon as
    /// one leaves the state as it was: every further one would too. The frame then hands
    /// [`Lanes::run_skipping`] the runs of k where every product of the call is that zero.
    fn zero_products_are_one(&self) -> bool {
        false
    }
    /// [`Lanes::run`], told the ranges of k (`skip`: sorted, disjoint) where every product of
    /// the call is the zero product ([`Lanes::zero_products_are_one`]): lanes that step
    /// through such a range only until the state stands still give the same sums. Lanes
    /// that do not use it run every step.
    fn run_skipping(&self, xs: &[&[T]], y: &[[T; L]], skip: &[Range<usize>], out: &mut [[T; L]]) {
        let _ = skip;
        self.run(xs, y, out)
    }
    /// The working values of `line`'s words appended to `out` (the NaN word as zero), and
    /// whether one was the NaN word: [`Lanes::value`] word by word (the flag kept in a
    /// register: a flag in memory, or-ed at every word, chains the words' decoding through a
    /// store and a load), unless the lanes decode faster to the same values.
    fn decode(&self, line: &[Bits], out: &mut Vec<T>) -> bool
    where
        Self: Sized,
    {
        let mut nan = false;
        out.extend(line.iter().map(|&w| value_or_zero(self, w, &mut nan)));
        nan
    }
    /// Whether a step with a zero product leaves every lane's state as it was, whatever the
    /// state (naive sums in a family with one zero and no infinity: s + 0 is s). A line can
    /// then skip its own zeros, whatever the other lines hold: the frame gives such lanes
    /// each line as its nonzero values ([`sparse()`]) and calls [`Lanes::run_sparse`].
    fn zero_products_leave_sums(&self) -> bool {
        false
    }
    /// [`Lanes::run`] of lines given by their nonzero values `x.1` and those values' k `x.0`
    /// (each in k order; every line of a call as long as the longest, padded with zero values
    /// at any k, steps that leave the sums). Lanes that do not step through such lines
    /// themselves get each line spread back to its dense values (the same sums).
    fn run_sparse(&self, xs: &[(&[u32], &[T])], y: &[[T; L]], out: &mut [[T; L]])
    where
        T: PartialEq,
    {
        let dense = spread(xs, y.len());
        let xs: Vec<&[T]> = dense.iter().map(Vec::as_slice).collect();
        self.run(&xs, y, out)
    }
    /// How many lines (at most [`ROWS`]) the dense frame gives [`Lanes::run`] at a time.
    fn rows_at_once(&self) -> usize {
        ROWS
    }
    /// How many lines the sparse frame gives [`Lanes::run_sparse`] and [`Lanes::run_runs`]
    /// at a time.
    fn lines_at_once(&self) -> usize {
        ROWS
    }
    /// Whether the lanes step lines given as their runs ([`Lanes::run_runs`]) themselves:
    /// then the frame gives them each line as its steps where that leaves fewer lane-steps
    /// than the dense frame ([`sparse_either`]).
    fn steps_runs(&self) -> bool {
        false
    }
    /// [`Lanes::run`] of lines given as their steps: each line's nonzero values `x.1` at
    /// their k `x.0`, in k order, and at the first k of each of its runs of zeros one zero
    /// value that stands for the whole run (up to the next step's k, or K = `y.len()`).
    /// Lines may differ in length; nothing pads them. Lanes whose zero products are one
    /// value ([`Lanes::zero_products_are_one`]) step such a run only until the state stands
    /// still ([`zero_run`]). Lanes that do not step such lines themselves get each line
    /// spread back to its dense values (the same sums).
    fn run_runs(&self, xs: &[(&[u32], &[T])], y: &[[T; L]], out: &mut [[T; L]])
    where
        T: PartialEq,
    {
        let dense = spread(xs, y.len());
        let xs: Vec<&[T]> = dense.iter().map(Vec::as_slice).collect();
        self.run(&xs, y, out)
    }
}

/// Lines given by values at their k (`(ks, vs)`), spread back to k dense values, zero at
/// every other k.
fn spread<T: Copy + Default + PartialEq>(xs: &[(&[u32], &[T])], k: usize) -> Vec<Vec<T>> {
    (xs.iter())
        .map(|&(ks, vs)| {
            let mut line = vec![T::default(); k];
            for (&i, &v) in ks.iter().zip(vs).filter(|&(_, &v)| v != T::default()) {
                line[i as usize] = v;
            }
            line
        })
        .collect()
}

mod sparse;
mod steps;
pub(crate) use sparse::{sparse, sparse_either};
use steps::Steps;

/// The k of `0..k` as consecutive ranges, each with whether it is one of `skip`'s (sorted,
/// disjoint, within `0..k`): the loop of lanes that honour [`Lanes::run_skipping`].
pub(crate) fn segments(
    k: usize,
    skip: &[Range<usize>],
) -> impl Iterator<Item = (Range<usize>, bool)> + '_ {
    let mut at = 0;
    let mut next = skip.iter().peekable();
    std::iter::from_fn(move || {
        if at >= k {
            return None;
        }
        match next.peek() {
            Some(r) if r.start == at => {
                at = r.end;
                Some((next.next().unwrap().clone(), true))
            }
            Some(r) => {
                let seg = at..r.start;
                at = r.start;
                Some((seg, false))
            }
            None => {
                let seg = at..k;
                at = k;
                Some((seg, false))
            }
        }
    })
}

/// Steps `state` through a run of `n` zero products ([`Lanes::run_skipping`]): `step`
/// advances every lane by one zero product, `still(a, b)` says whether every lane's state is
/// the same in `a` and `b`. Under such steps a lane's state stands still at once or after a
/// step, or alternates between two states (of 10^5 random lns:5:6 Kahan states: 98.9 %,
/// 0.8 % and 0.25 %, and nothing else). So this steps until every lane's state is the one of
/// one step before (it stands still: every further step would leave it) or of two (the
/// run's parity then picks one of the last two), or to the run's end.
#[inline(always)]
pub(crate) fn zero_run<S: Copy>(
    state: &mut S,
    n: usize,
    mut step: impl FnMut(&mut S),
    still: impl Fn(&S, &S) -> bool,
) {
    // The states one and two steps before this one.
    let mut back = [*state; 2];
    for j in 1..=n {
        back = [back[1], *state];
        step(state);
        if still(state, &back[1]) {
            return;
        }
        if j >= 2 && still(state, &back[0]) {
            if (n - j) % 2 == 1 {
                *state = back[1];
            }
            return;
        }
    }
}

/// Which k of a line hold a zero, one bit each.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Zeros(Vec<u64>);

impl Zeros {
    /// Every one of k values a zero.
    fn all(k: usize) -> Zeros {
        let mut z = Zeros(vec![!0; k.div_ceil(64)]);
        if !k.is_multiple_of(64) {
            *z.0.last_mut().unwrap() = (1 << (k % 64)) - 1;
        }
        z
    }
    fn of<T: Copy + Default + PartialEq>(line: &[T]) -> Zeros {
        let word = |chunk: &[T]| {
            (chunk.iter().enumerate())
                .fold(0u64, |z, (i, v)| z | u64::from(*v == T::default()) << i)
        };
        Zeros(line.chunks(64).map(word).collect())
    }
    fn any(&self) -> bool {
        self.0.iter().any(|&w| w != 0)
    }
    fn and(&mut self, other: &Zeros) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= b);
    }
    /// The runs of at least two zeros where `self` or `other` has one, found a word of 64 k
    /// at a time (the bits past k are clear in both).
    fn runs_with(&self, other: &Zeros, k: usize) -> Vec<Range<usize>> {
        let mut runs = vec![];
        let mut close = |start: usize, end: usize| {
            if end - start >= 2 {
                runs.push(start..end);
            }
        };
        // Where the run that reaches the current word began.
        let mut start = None;
        for (w, (&a, &b)) in self.0.iter().zip(&other.0).enumerate() {
            let (z, base) = (a | b, w * 64);
            let mut at = 0;
            while at < 64 {
                // The next bit from `at` that ends the current run, or starts one.
                let rest = match start {
                    Some(_) => !z >> at,
                    None => z >> at,
                };
                if rest == 0 {
                    break;
                }
                at += rest.trailing_zeros() as usize;
                match start.take() {
                    Some(s) => close(s, base + at),
                    None => start = Some(base + at),
                }
            }
        }
        if let Some(s) = start {
            close(s, k);
        }
        runs
    }
}

/// The most lines of the narrow side the dense frame gives [`Lanes::run`] at a time (lanes
/// may take fewer: [`Lanes::rows_at_once`]).
pub(crate) const ROWS: usize = 4;

/// `run_rows::<R>(args…, lines, y, out)` for the lines `xs` in groups of at most [`ROWS`]
/// (or of at most `rows`, given first), R each group's size: how a family's vector lanes go
/// from [`Lanes::run`]'s slice of lines to their loop over R lines (a const generic, so that
/// its chains live in registers).
macro_rules! by_rows {
    ($run_rows:ident($($arg:expr),*; $xs:expr, $y:expr, $out:expr)) => {
        $crate::kernel::lockstep::by_rows!(
            $crate::kernel::lockstep::ROWS; $run_rows($($arg),*; $xs, $y, $out)
        )
    };
    ($rows:expr; $run_rows:ident($($arg:expr),*; $xs:expr, $y:expr, $out:expr)) => {{
        let (xs, y, out) = ($xs, $y, $out);
        let rows: usize = $rows;
        assert!((1..=$crate::kernel::lockstep::ROWS).contains(&rows), "groups of at most ROWS lines");
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

/// The working value of `w` (a NaN word as zero), setting `nan` where it is one.
#[inline(always)]
fn value_or_zero<T: Copy + Default, const L: usize>(
    lanes: &impl Lanes<T, L>,
    w: Bits,
    nan: &mut bool,
) -> T {
    let v = lanes.value(w);
    *nan |= v.is_none();
    v.unwrap_or_default()
}

/// The K of a product's rows and columns (0 where there are none), which all must share.
fn common_k(rows: &[&[Bits]], cols: &[&[Bits]]) -> usize {
    let k = rows.first().or(cols.first()).map_or(0, |v| v.len());
    assert!(
        rows.iter().chain(cols).all(|v| v.len() == k),
        "rows and columns of K"
    );
    k
}

/// The block of up to L `lines` (each of k values) side by side: `block[i][l]` is line l's
/// value at k = i, the lanes past the lines zero. Filled a tile of k-rows at a time: each
/// line's run of values in the tile (one cache line) read in order and written into the
/// tile's rows, which stay in cache (a line at a time over all of k would write at a stride
/// of L values, a cache line each; a k-row at a time, built apart and copied in, read L
/// streams).
fn block<'a, T: Copy + Default + 'a, const L: usize>(
    lines: impl Iterator<Item = &'a [T]> + Clone,
    k: usize,
) -> Vec<[T; L]> {
    let tile = (64 / std::mem::size_of::<T>()).max(1);
    let mut block = vec![[T::default(); L]; k];
    for (i0, rows) in (0..).step_by(tile).zip(block.chunks_mut(tile)) {
        for (l, line) in lines.clone().enumerate() {
            for (slot, &v) in rows.iter_mut().zip(&line[i0..]) {
                slot[l] = v;
            }
        }
    }
    block
}

/// Every dot product of `rows` with `cols` (all of length K), row-major, by `lanes`.
///
/// Lanes whose sums a zero product leaves, or that step lines as their runs, go to the
/// [`fn@sparse`] frame; the others to the [`dense`] one.
pub(crate) fn lockstep<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Steps,
{
    if lanes.zero_products_leave_sums() || lanes.steps_runs() {
        return sparse(lanes, rows, cols);
    }
    dense(lanes, rows, cols)
}

/// Every dot product of `rows` with `cols` (all of length K), row-major, by `lanes`, each
/// line of the narrow side against blocks of L lines of the wide side at every k.
///
/// Where zero products are one value ([`Lanes::zero_products_are_one`]), the wide side's
/// lines go into the lanes sorted by where their zeros lie (a convolution's padded im2col
/// has a few patterns of zeros, one per output position), so that a block's lanes share
/// their zeros; each call then names the runs of k where its lines or its block's lanes
/// are all zero.
pub(crate) fn dense<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &[&[Bits]],
    cols: &[&[Bits]],
) -> Vec<Bits>
where
    T: Copy + Default + PartialEq,
{
    let (m, n, k) = (rows.len(), cols.len(), common_k(rows, cols));
    // The lanes run over the longer side; `wide_is_cols` says which.
    let wide_is_cols = n >= m;
    let (narrow, wide) = if wide_is_cols {
        (rows, cols)
    } else {
        (cols, rows)
    };
    // Each line decoded once, in order.
    let (values, nan) = decode_lines(lanes, narrow, k);
    let narrow = Decoded {
        values: &values,
        nan: &nan,
    };
    if lanes.zero_products_are_one() {
        // All the values first, to sort the lines by their zeros where there are any.
        let (values, nan) = decode_lines(lanes, wide, k);
        let wide = Decoded {
            values: &values,
            nan: &nan,
        };
        return by_blocks(
            lanes,
            &narrow,
            Wide::sorted(lanes, &wide, k),
            wide_is_cols,
            n,
            k,
        );
    }
    // Each wide line decoded straight into its lane (no sorting).
    let mut nan = vec![false; wide.len()];
    let mut blocks = vec![vec![[T::default(); L]; k]; wide.len().div_ceil(L)];
    for ((lines, nans), block) in wide.chunks(L).zip(nan.chunks_mut(L)).zip(&mut blocks) {
        for (l, (line, nan)) in lines.iter().zip(nans).enumerate() {
            for (slot, &w) in block.iter_mut().zip(*line) {
                slot[l] = value_or_zero(lanes, w, nan);
            }
        }
    }
    let wide = Wide {
        order: (0..wide.len()).collect(),
        blocks,
        nan,
        zeros: None,
    };
    by_blocks(lanes, &narrow, wide, wide_is_cols, n, k)
}

/// [`dense`] of sides the caller has decoded (the [`sparse_either`] frame, where it finds
/// the dense frame the cheaper).
pub(crate) fn dense_decoded<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    rows: &Decoded<'_, T>,
    cols: &Decoded<'_, T>,
    k: usize,
) -> Vec<Bits>
where
    T: Copy + Default + PartialEq,
{
    let (m, n) = (rows.lines(), cols.lines());
    let wide_is_cols = n >= m;
    let (narrow, wide) = if wide_is_cols {
        (rows, cols)
    } else {
        (cols, rows)
    };
    by_blocks(
        lanes,
        narrow,
        Wide::sorted(lanes, wide, k),
        wide_is_cols,
        n,
        k,
    )
}

/// One side of a product decoded: its lines' values one after another (K each), and whether
/// each line held the NaN word.
pub(crate) struct Decoded<'a, T> {
    pub(crate) values: &'a [T],
    pub(crate) nan: &'a [bool],
}

impl<T: Copy> Decoded<'_, T> {
    fn line(&self, p: usize, k: usize) -> &[T] {
        &self.values[p * k..(p + 1) * k]
    }
    fn lines(&self) -> usize {
        self.nan.len()
    }
}

/// `lines` (each of k words) decoded by `lanes`: their values one after another, and each
/// one's NaN flag ([`Decoded`]'s parts).
fn decode_lines<T: Copy + Default, const L: usize>(
    lanes: &impl Lanes<T, L>,
    lines: &[&[Bits]],
    k: usize,
) -> (Vec<T>, Vec<bool>) {
    let mut values = Vec::with_capacity(lines.len() * k);
    let nan = lines
        .iter()
        .map(|line| lanes.decode(line, &mut values))
        .collect();
    (values, nan)
}

/// The wide side in the lanes: `order[q]`, the wide line in lane position q; blocks of L of
/// them side by side; each line's NaN flag; and where zero products are one value, where
/// every lane of a block is zero (its padding lanes are).
struct Wide<T, const L: usize> {
    order: Vec<usize>,
    blocks: Vec<Vec<[T; L]>>,
    nan: Vec<bool>,
    zeros: Option<Vec<Zeros>>,
}

impl<T: Copy + Default + PartialEq, const L: usize> Wide<T, L> {
    /// The decoded `wide` side in blocks: sorted by where their zeros lie if any line has
    /// one and zero products are one value.
    fn sorted(lanes: &impl Lanes<T, L>, wide: &Decoded<'_, T>, k: usize) -> Wide<T, L> {
        let mut order: Vec<usize> = (0..wide.lines()).collect();
        let skips = lanes.zero_products_are_one();
        let line_zeros: Vec<Zeros> = match skips {
            true => order.iter().map(|&q| Zeros::of(wide.line(q, k))).collect(),
            false => vec![],
        };
        if line_zeros.iter().any(Zeros::any) {
            order.sort_by(|&p, &q| line_zeros[p].cmp(&line_zeros[q]));
        }
        let blocks = (order.chunks(L))
            .map(|lines| block(lines.iter().map(|&q| wide.line(q, k)), k))
            .collect();
        let zeros = skips.then(|| {
            (order.chunks(L))
                .map(|lines| {
                    let mut z = Zeros::all(k);
                    lines.iter().for_each(|&q| z.and(&line_zeros[q]));
                    z
                })
                .collect()
        });
        Wide {
            order,
            blocks,
            nan: wide.nan.to_vec(),
            zeros,
        }
    }
}

/// The dense frame's loop: each group of narrow lines against every block of `wide`,
/// written row-major (n columns).
fn by_blocks<T, const L: usize>(
    lanes: &impl Lanes<T, L>,
    narrow: &Decoded<'_, T>,
    wide: Wide<T, L>,
    wide_is_cols: bool,
    n: usize,
    k: usize,
) -> Vec<Bits>
where
    T: Copy + Default + PartialEq,
{
    let (lines, wide_lines) = (narrow.lines(), wide.order.len());
    let mut out = vec![0; lines * wide_lines];
    let mut sums = [[T::default(); L]; ROWS];
    // Groups of at most the lanes' lines at once, as even as they can be (six lines as
    // 3 + 3, not 4 + 2: a group's lines are the lanes' independent chains).
    let at_once = lanes.rows_at_once();
    assert!((1..=ROWS).contains(&at_once), "at most ROWS lines at once");
    let groups = lines.div_ceil(at_once);
    let cuts: Vec<usize> = (0..=groups).map(|g| g * lines / groups.max(1)).collect();
    for (p0, p1) in cuts.windows(2).map(|c| (c[0], c[1])) {
        let xs: Vec<&[T]> = (p0..p1).map(|p| narrow.line(p, k)).collect();
        let lines_zeros = wide.zeros.as_ref().map(|_| {
            let mut z = Zeros::all(k);
            xs.iter().for_each(|x| z.and(&Zeros::of(x)));
            z
        });
        for (bi, block) in wide.blocks.iter().enumerate() {
            let out_sums = &mut sums[..xs.len()];
            match (&lines_zeros, &wide.zeros) {
                (Some(z), Some(block_zeros)) => {
                    let skip = z.runs_with(&block_zeros[bi], k);
                    lanes.run_skipping(&xs, block, &skip, out_sums)
                }
                _ => lanes.run(&xs, block, out_sums),
            }
            for (p, sums) in (p0..).zip(&sums[..xs.len()]) {
                for (l, &s) in sums.iter().enumerate().take(wide_lines - bi * L) {
                    let q = wide.order[bi * L + l];
                    let (i, j) = if wide_is_cols { (p, q) } else { (q, p) };
                    out[i * n + j] = if narrow.nan[p] || wide.nan[q] {
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

#[cfg(test)]
mod tests;
