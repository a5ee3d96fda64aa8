//! The LNS AVX2 lanes' loops over lines given as their steps (the sparse frame's,
//! `kernel/lockstep/sparse.rs`): one or two vectors of eight lanes a line. The same loop as
//! the AVX-512 lanes' `runs_rows`, each vector's step taken whole in turn (as the dense
//! AVX2 loop does: AVX2's sixteen registers do not hold every vector's operation side by
//! side).

use std::arch::x86_64::*;

use super::{add, consts, kahan_step, kahan_step2, mul, zero_step_keeps, Consts, LnsLanes};
use crate::kernel::lockstep::{zero_run, ROWS};

/// A line's sums and compensations: up to two vectors of eight lanes each.
type Line = ([__m256i; 2], [__m256i; 2]);

/// W lockstep sums of each line of `xs`, given as its steps: Kahan sums of lines as their
/// runs (`kernel::lockstep::Lanes::run_runs`), or naive sums of lines as their nonzero
/// values (`Lanes::run_sparse`: every line as long, padded with zeros, which leave a naive
/// sum as it was). W = 8 or 16 lanes, one or two vectors a line.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn run_steps<const W: usize>(
    l: &LnsLanes,
    kahan: bool,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; W]],
    out: &mut [[i32; W]],
) {
    match (kahan, l.keeps(), W) {
        (true, false, 8) => runs_groups::<W, 1, true, false>(l, xs, y, out),
        (true, false, _) => runs_groups::<W, 2, true, false>(l, xs, y, out),
        (true, true, 8) => runs_groups::<W, 1, true, true>(l, xs, y, out),
        (true, true, _) => runs_groups::<W, 2, true, true>(l, xs, y, out),
        (false, false, 8) => runs_groups::<W, 1, false, false>(l, xs, y, out),
        (false, false, _) => runs_groups::<W, 2, false, false>(l, xs, y, out),
        (false, true, 8) => runs_groups::<W, 1, false, true>(l, xs, y, out),
        (false, true, _) => runs_groups::<W, 2, false, true>(l, xs, y, out),
    }
}

/// The lines [`run_steps`] steps side by side: `ROWS` lines of two vectors, or twice as many
/// of one (as many independent chains a step).
pub(crate) fn lines(vectors: usize) -> usize {
    ROWS * 2 / vectors
}

/// [`runs_rows`] of the lines in groups of at most [`lines`].
#[target_feature(enable = "avx2")]
unsafe fn runs_groups<const W: usize, const V: usize, const KAHAN: bool, const KEEP: bool>(
    l: &LnsLanes,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; W]],
    out: &mut [[i32; W]],
) {
    let rows = lines(V);
    for (xs, out) in xs.chunks(rows).zip(out.chunks_mut(rows)) {
        match xs.len() {
            1 => runs_rows::<1, W, V, KAHAN, KEEP>(l, xs, y, out),
            2 => runs_rows::<2, W, V, KAHAN, KEEP>(l, xs, y, out),
            3 => runs_rows::<3, W, V, KAHAN, KEEP>(l, xs, y, out),
            4 => runs_rows::<4, W, V, KAHAN, KEEP>(l, xs, y, out),
            5 => runs_rows::<5, W, V, KAHAN, KEEP>(l, xs, y, out),
            6 => runs_rows::<6, W, V, KAHAN, KEEP>(l, xs, y, out),
            7 => runs_rows::<7, W, V, KAHAN, KEEP>(l, xs, y, out),
            _ => runs_rows::<8, W, V, KAHAN, KEEP>(l, xs, y, out),
        }
    }
}

/// One step of a line's first V vectors with the operand `x` against the lanes' values `yk`:
/// a Kahan step, or (naive) an addition.
#[inline(always)]
unsafe fn step<const V: usize, const KAHAN: bool, const KEEP: bool>(
    k: &Consts,
    line: &mut Line,
    x: i32,
    yk: &[i32],
) {
    let a = _mm256_set1_epi32(x);
    if KAHAN && !KEEP && V == 2 && k.steps.is_some() {
        // SAFETY (of the caller): yk holds 16 i32s.
        let q = [0, 1].map(|v| _mm256_loadu_si256(yk.as_ptr().add(8 * v).cast()));
        let p = [mul::<KEEP>(k, a, q[0]), mul::<KEEP>(k, a, q[1])];
        (line.0, line.1) = kahan_step2(k, line.0, line.1, p);
        return;
    }
    for v in 0..V {
        // SAFETY (of the caller): yk holds 8·V i32s.
        let q = _mm256_loadu_si256(yk.as_ptr().add(8 * v).cast());
        let p = mul::<KEEP>(k, a, q);
        let (s, c) = (line.0[v], line.1[v]);
        (line.0[v], line.1[v]) = match KAHAN {
            true => kahan_step::<KEEP>(k, s, c, p),
            false => (add::<KEEP>(k, s, p), c),
        };
    }
}

/// Whether every lane of a line's first V vectors holds the same state in `a` and `b`.
#[inline(always)]
unsafe fn same<const V: usize>(a: &Line, b: &Line) -> bool {
    let mut all = true;
    for v in 0..V {
        let s = _mm256_cmpeq_epi32(a.0[v], b.0[v]);
        let c = _mm256_cmpeq_epi32(a.1[v], b.1[v]);
        all &= _mm256_movemask_epi8(_mm256_and_si256(s, c)) == -1;
    }
    all
}

/// Whether a zero product's Kahan step leaves a line's state (its first V vectors) as it is
/// in every lane ([`zero_step_keeps`]).
#[inline(always)]
unsafe fn keeps<const V: usize>(k: &Consts, line: &Line) -> bool {
    let mut all = 0xff;
    for v in 0..V {
        all &= zero_step_keeps(k, line.0[v], line.1[v]);
    }
    all == 0xff
}

/// [`run_steps`] of R lines of V vectors each, each line stepping through its own steps, as
/// the AVX-512 lanes' `runs_rows`: a line past its last step keeps its state; in Kahan sums a
/// zero value heads a run of zero products up to the line's next step, which the line goes
/// past at once where its state is one a zero step leaves ([`zero_step_keeps`]), steps once
/// otherwise, and, if that step changed the state (rarely), steps on alone through the run
/// ([`zero_run`]). In naive sums a zero value's step leaves the sum.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn runs_rows<
    const R: usize,
    const W: usize,
    const V: usize,
    const KAHAN: bool,
    const KEEP: bool,
>(
    l: &LnsLanes,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; W]],
    out: &mut [[i32; W]],
) {
    assert!(
        W == 8 * V && (V == 1 || V == 2),
        "one or two vectors of eight"
    );
    assert!(xs.len() == R && out.len() >= R);
    assert!(xs.iter().all(|&(ks, vs)| ks.len() == vs.len()));
    let k = consts(l);
    let z = _mm256_setzero_si256();
    // Each line's state; a line past its last step is not stepped again.
    let mut state: [Line; R] = [([z; 2], [z; 2]); R];
    // Each line's next step.
    let mut at = [0usize; R];
    loop {
        let mut stepped = false;
        for (r, &(ks, vs)) in xs.iter().enumerate() {
            let line = &mut state[r];
            if KAHAN {
                while at[r] < ks.len() && vs[at[r]] == 0 && keeps::<V>(&k, line) {
                    at[r] += 1;
                }
            }
            let j = at[r];
            let (Some(&i), Some(&x)) = (ks.get(j), vs.get(j)) else {
                continue;
            };
            stepped = true;
            let before = *line;
            step::<V, KAHAN, KEEP>(&k, line, x, &y[i as usize]);
            if KAHAN && x == 0 {
                let end = ks.get(j + 1).map_or(y.len(), |&i| i as usize);
                let rest = end - i as usize - 1;
                if rest > 0 && !same::<V>(line, &before) {
                    let zero = [0i32; W];
                    let one = |line: &mut Line| step::<V, KAHAN, KEEP>(&k, line, 0, &zero);
                    zero_run(line, rest, one, |a, b| same::<V>(a, b));
                }
            }
            at[r] += 1;
        }
        if !stepped {
            break;
        }
    }
    for ((s, _), out) in state.iter().zip(out) {
        for (v, s) in s.iter().enumerate().take(V) {
            _mm256_storeu_si256(out.as_mut_ptr().add(8 * v).cast(), *s);
        }
    }
}
