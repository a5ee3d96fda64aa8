//! The LNS AVX-512 lanes' loops over lines given as their steps (the sparse frame's,
//! `kernel/lockstep/sparse.rs`): one or two vectors a line, or two lines a vector against a
//! side of at most eight lanes.

use std::arch::x86_64::*;

use super::{consts, each, kahan_step, mul, zero_step_keeps, Consts, LnsLanes};
use crate::kernel::lockstep::{zero_run, ROWS};

/// L lockstep sums of each line of `xs`, given as its steps: Kahan sums of lines as their
/// runs (`kernel::lockstep::Lanes::run_runs`), or naive sums of lines as their nonzero
/// values (`Lanes::run_sparse`: every line as long, padded with zeros, which leave a naive
/// sum as it was). W = 16 or 32 lanes, one or two vectors a line.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn run_steps<const W: usize>(
    l: &LnsLanes,
    kahan: bool,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; W]],
    out: &mut [[i32; W]],
) {
    match (kahan, l.keeps(), W) {
        (true, false, 16) => runs_groups::<W, 1, true, false>(l, xs, y, out),
        (true, false, _) => runs_groups::<W, 2, true, false>(l, xs, y, out),
        (true, true, 16) => runs_groups::<W, 1, true, true>(l, xs, y, out),
        (true, true, _) => runs_groups::<W, 2, true, true>(l, xs, y, out),
        (false, false, 16) => runs_groups::<W, 1, false, false>(l, xs, y, out),
        (false, false, _) => runs_groups::<W, 2, false, false>(l, xs, y, out),
        (false, true, 16) => runs_groups::<W, 1, false, true>(l, xs, y, out),
        (false, true, _) => runs_groups::<W, 2, false, true>(l, xs, y, out),
    }
}

/// [`run_steps`] of sixteen lanes, two lines a vector ([`pairs`]) where the lanes past the
/// eighth are all zero (a wide side of at most eight lines).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn run_steps16(
    l: &LnsLanes,
    kahan: bool,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; 16]],
    out: &mut [[i32; 16]],
) {
    if !y.iter().all(|q| q[8..] == [0; 8]) {
        return run_steps(l, kahan, xs, y, out);
    }
    match (kahan, l.keeps()) {
        (true, false) => pairs_groups::<true, false>(l, xs, y, out),
        (true, true) => pairs_groups::<true, true>(l, xs, y, out),
        (false, false) => pairs_groups::<false, false>(l, xs, y, out),
        (false, true) => pairs_groups::<false, true>(l, xs, y, out),
    }
}

/// [`pairs`] of the lines in groups of at most 2·`ROWS` vectors (four times as many lines).
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn pairs_groups<const KAHAN: bool, const KEEP: bool>(
    l: &LnsLanes,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; 16]],
    out: &mut [[i32; 16]],
) {
    let rows = ROWS * 4;
    for (xs, out) in xs.chunks(rows).zip(out.chunks_mut(rows)) {
        match xs.len().div_ceil(2) {
            1 => pairs::<1, KAHAN, KEEP>(l, xs, y, out),
            2 => pairs::<2, KAHAN, KEEP>(l, xs, y, out),
            3 => pairs::<3, KAHAN, KEEP>(l, xs, y, out),
            4 => pairs::<4, KAHAN, KEEP>(l, xs, y, out),
            5 => pairs::<5, KAHAN, KEEP>(l, xs, y, out),
            6 => pairs::<6, KAHAN, KEEP>(l, xs, y, out),
            7 => pairs::<7, KAHAN, KEEP>(l, xs, y, out),
            _ => pairs::<8, KAHAN, KEEP>(l, xs, y, out),
        }
    }
}

/// The lanes of each half of a vector.
const HALF: [u16; 2] = [0x00ff, 0xff00];

/// [`runs_rows`] of up to 2·R lines against a side of at most eight lanes (the rest zero,
/// whose sums are 0), two lines a vector: line 2r in lanes 0–7 of vector r and line 2r + 1
/// in lanes 8–15, each half stepping through its own line's steps. Against a convolution's
/// six channels a line of its own would leave ten of sixteen lanes empty. A zero step's
/// rest of the run, where it changed the state, is stepped in a copy of the vector and only
/// its half taken back.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
unsafe fn pairs<const R: usize, const KAHAN: bool, const KEEP: bool>(
    l: &LnsLanes,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; 16]],
    out: &mut [[i32; 16]],
) {
    assert!(xs.len().div_ceil(2) == R && out.len() >= xs.len());
    assert!(xs.iter().all(|&(ks, vs)| ks.len() == vs.len()));
    let k = consts(l);
    let z = _mm512_setzero_si512();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let same = |a: __m512i, b: __m512i, h: usize| _mm512_mask_cmpneq_epi32_mask(HALF[h], a, b) == 0;
    // Each half's sum as its line's last step left it, and each vector's state before a
    // step where a half steps a zero.
    let mut last = [z; R];
    let mut before = [(z, z); R];
    // Each line's next step (line 2r + h in half h of vector r).
    let mut at = [[0usize; 2]; R];
    loop {
        let mut p = [[z; 2]; R];
        let mut stepping = [[false; 2]; R];
        for (r, p) in p.iter_mut().enumerate() {
            let (mut a, mut q) = (z, z);
            for (h, &(ks, vs)) in xs[2 * r..].iter().take(2).enumerate() {
                let at = &mut at[r][h];
                if KAHAN {
                    while *at < ks.len() && vs[*at] == 0 && keeps(&k, &s[r], &c[r], 1, HALF[h]) {
                        *at += 1;
                        if *at == ks.len() {
                            last[r] = _mm512_mask_mov_epi32(last[r], HALF[h], s[r][0]);
                        }
                    }
                }
                if let (Some(&i), Some(&x)) = (ks.get(*at), vs.get(*at)) {
                    stepping[r][h] = true;
                    // SAFETY: y[i] holds 16 i32s, of which the first eight are the lanes'.
                    let yk = _mm256_loadu_si256(y[i as usize].as_ptr().cast());
                    let xk = _mm256_set1_epi32(x);
                    (a, q) = match h {
                        0 => (
                            _mm512_inserti64x4::<0>(a, xk),
                            _mm512_inserti64x4::<0>(q, yk),
                        ),
                        _ => (
                            _mm512_inserti64x4::<1>(a, xk),
                            _mm512_inserti64x4::<1>(q, yk),
                        ),
                    };
                    if KAHAN && x == 0 {
                        before[r] = (s[r][0], c[r][0]);
                    }
                }
            }
            p[0] = mul::<KEEP>(&k, a, q);
        }
        if !stepping.iter().flatten().any(|&on| on) {
            break;
        }
        if KAHAN {
            (s, c) = kahan_step::<R, 1, KEEP>(&k, s, c, p);
        } else {
            s = each::<R, 1, KEEP>(&k, &s, &p, false);
        }
        for r in 0..R {
            for (h, &(ks, vs)) in xs[2 * r..].iter().take(2).enumerate() {
                if !stepping[r][h] {
                    continue;
                }
                let j = at[r][h];
                if KAHAN && vs[j] == 0 {
                    let end = ks.get(j + 1).map_or(y.len(), |&i| i as usize);
                    let rest = end - ks[j] as usize - 1;
                    let (s0, c0) = before[r];
                    if rest > 0 && !(same(s[r][0], s0, h) && same(c[r][0], c0, h)) {
                        type One = ([[__m512i; 2]; 1], [[__m512i; 2]; 1]);
                        let mut state: One = ([[s[r][0], z]], [[c[r][0], z]]);
                        let one = |(s, c): &mut One| {
                            (*s, *c) = kahan_step::<1, 1, KEEP>(&k, *s, *c, [[z; 2]; 1]);
                        };
                        let still = |a: &One, b: &One| {
                            same(a.0[0][0], b.0[0][0], h) && same(a.1[0][0], b.1[0][0], h)
                        };
                        zero_run(&mut state, rest, one, still);
                        s[r][0] = _mm512_mask_mov_epi32(s[r][0], HALF[h], state.0[0][0]);
                        c[r][0] = _mm512_mask_mov_epi32(c[r][0], HALF[h], state.1[0][0]);
                    }
                }
                at[r][h] += 1;
                if at[r][h] == ks.len() {
                    last[r] = _mm512_mask_mov_epi32(last[r], HALF[h], s[r][0]);
                }
            }
        }
    }
    for (r, last) in last.iter().enumerate() {
        for h in (0..2).filter(|h| 2 * r + h < xs.len()) {
            let half = match h {
                0 => _mm512_castsi512_si256(*last),
                _ => _mm512_extracti64x4_epi64::<1>(*last),
            };
            let line = &mut out[2 * r + h];
            // SAFETY: `line` holds 16 i32s.
            _mm256_storeu_si256(line.as_mut_ptr().cast(), half);
            _mm256_storeu_si256(line.as_mut_ptr().add(8).cast(), _mm256_setzero_si256());
        }
    }
}

/// [`runs_rows`] of the lines in groups of at most `ROWS` two-vector lines (twice as many
/// one-vector lines: as many independent gathers a step).
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn runs_groups<const W: usize, const V: usize, const KAHAN: bool, const KEEP: bool>(
    l: &LnsLanes,
    xs: &[(&[u32], &[i32])],
    y: &[[i32; W]],
    out: &mut [[i32; W]],
) {
    let rows = ROWS * 2 / V;
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

/// [`run_steps`] of R lines of V vectors each, each line stepping through its own steps. A
/// step is a step of all R lines' vectors at once (their gathers side by side); a line past
/// its last step keeps its state. In Kahan sums a zero value heads a run of zero products
/// up to the line's next step. Where the state is one such a step leaves as it is in every
/// lane ([`zero_step_keeps`]), the line goes on to its next step at once: every step of
/// the run would leave it too. Otherwise the line steps the zero; if the state stood still
/// under it, it stands still under the rest; if not (rarely), that line alone steps on
/// through the run ([`zero_run`]). In naive sums a zero value's step leaves the sum.
#[target_feature(enable = "avx512f,avx512dq")]
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
        W == 16 * V && (V == 1 || V == 2),
        "one or two vectors of sixteen"
    );
    assert!(xs.len() == R && out.len() >= R);
    assert!(xs.iter().all(|&(ks, vs)| ks.len() == vs.len()));
    let k = consts(l);
    let addv = |a, b| each::<R, V, KEEP>(&k, &a, &b, false);
    let z = _mm512_setzero_si512();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let same = |a: &[__m512i; 2], b: &[__m512i; 2]| {
        (0..V).all(|v| _mm512_cmpneq_epi32_mask(a[v], b[v]) == 0)
    };
    // Each line's sum as its last step left it (a zero line's is 0), and the state of the
    // lines that step a zero as the step found it. Copied a line at a time: the whole
    // state of R lines, copied at every step, took 7 % of a LeNet-5 epoch in memcpy.
    let mut last = [[z; 2]; R];
    let mut before = [([z; 2], [z; 2]); R];
    // Each line's next step.
    let mut at = [0usize; R];
    loop {
        let mut p = [[z; 2]; R];
        let mut stepping = [false; R];
        for (r, &(ks, vs)) in xs.iter().enumerate() {
            if KAHAN {
                while at[r] < ks.len() && vs[at[r]] == 0 && keeps(&k, &s[r], &c[r], V, !0) {
                    at[r] += 1;
                    if at[r] == ks.len() {
                        last[r] = s[r];
                    }
                }
            }
            if let (Some(&i), Some(&x)) = (ks.get(at[r]), vs.get(at[r])) {
                stepping[r] = true;
                let yk = &y[i as usize];
                let a = _mm512_set1_epi32(x);
                for (v, p) in p[r].iter_mut().enumerate().take(V) {
                    // SAFETY: yk holds W = 16·V i32s.
                    let q = _mm512_loadu_si512(yk.as_ptr().add(16 * v).cast());
                    *p = mul::<KEEP>(&k, a, q);
                }
                if KAHAN && x == 0 {
                    before[r] = (s[r], c[r]);
                }
            }
        }
        if !stepping.contains(&true) {
            break;
        }
        if KAHAN {
            (s, c) = kahan_step::<R, V, KEEP>(&k, s, c, p);
        } else {
            s = addv(s, p);
        }
        for (r, &(ks, vs)) in xs.iter().enumerate() {
            if !stepping[r] {
                // Past the line's steps: its sum is in `last`.
                continue;
            }
            let j = at[r];
            if KAHAN && vs[j] == 0 {
                let end = ks.get(j + 1).map_or(y.len(), |&i| i as usize);
                let rest = end - ks[j] as usize - 1;
                let (s0, c0) = &before[r];
                if rest > 0 && !(same(&s[r], s0) && same(&c[r], c0)) {
                    let mut state = ([s[r]], [c[r]]);
                    let one = |(s, c): &mut ([[__m512i; 2]; 1], [[__m512i; 2]; 1])| {
                        (*s, *c) = kahan_step::<1, V, KEEP>(&k, *s, *c, [[z; 2]; 1]);
                    };
                    let still =
                        |a: &([[__m512i; 2]; 1], [[__m512i; 2]; 1]),
                         b: &([[__m512i; 2]; 1], [[__m512i; 2]; 1])| {
                            same(&a.0[0], &b.0[0]) && same(&a.1[0], &b.1[0])
                        };
                    zero_run(&mut state, rest, one, still);
                    (s[r], c[r]) = (state.0[0], state.1[0]);
                }
            }
            at[r] += 1;
            if at[r] == ks.len() {
                last[r] = s[r];
            }
        }
    }
    for (s, out) in last.iter().zip(out) {
        for (v, s) in s.iter().enumerate().take(V) {
            _mm512_storeu_si512(out.as_mut_ptr().add(16 * v).cast(), *s);
        }
    }
}

/// Whether a zero product's Kahan step leaves a line's state (the first `vectors` of `s`
/// and `c`) as it is in all its `lanes` ([`zero_step_keeps`]). A loop, not `all` over a
/// closure: a closure does not take the caller's target features, and its intrinsics
/// were left as calls.
#[inline(always)]
unsafe fn keeps(
    k: &Consts,
    s: &[__m512i; 2],
    c: &[__m512i; 2],
    vectors: usize,
    lanes: u16,
) -> bool {
    let mut all = lanes;
    for v in 0..vectors {
        all &= zero_step_keeps(k, s[v], c[v]);
    }
    all == lanes
}
