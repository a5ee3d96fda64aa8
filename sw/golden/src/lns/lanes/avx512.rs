//! The LNS lanes on AVX-512: sixteen lanes a vector, two vectors a line, up to four lines
//! at once (two in Kahan sums, [`KAHAN_LINES`]), each operation done in every vector before
//! the next (`LnsLanes`' operations,
//! gathers of the merged G table; a Kahan step's last three additions from one entry of
//! the table of Kahan steps, `kahan.rs`). Lines given as their steps: `avx512/steps.rs`.

use std::arch::x86_64::*;
use std::ops::Range;

use crate::kernel::lockstep::{by_rows, segments, zero_run};
use crate::AluOp;

use super::kahan::{KahanSteps, C_BITS, C_NEG, C_ZERO, G_BITS, T_ZERO};
use super::{LnsLanes, L512 as L};

/// Lines of two vectors [`run`] steps side by side in Kahan sums: four vectors. With the
/// table of Kahan steps a step holds more vectors live than the 32 registers keep for
/// eight, and their spills cost more than the independent gathers win (lns:5:6 Kahan, 256
/// lines of K = 256: 0.58–0.71 G MAC/s against 0.42–0.49 for four lines; docs/perf.md).
/// Naive sums keep [`ROWS`](crate::kernel::lockstep::ROWS).
pub(super) const KAHAN_LINES: usize = 2;

/// The sums and compensations of R lines' two vectors of lanes.
type State<const R: usize> = ([[__m512i; 2]; R], [[__m512i; 2]; R]);

/// The constants of the vector operations.
struct Consts<'a> {
    g: &'a [i32],
    stride: __m512i,
    last: __m512i,
    cmax: __m512i,
    reserved: __m512i,
    keep: __m512i,
    /// The table of Kahan steps and its bounds, where the format has one and no bits are
    /// cleared.
    steps: Option<Steps<'a>>,
    /// `LnsLanes::still`, each half's least d in a vector.
    still: Option<[__m512i; 2]>,
}

// `table_step` reads C_NEG as the sign bit.
const _: () = assert!(C_NEG == i32::MIN);

/// [`KahanSteps`] in vectors.
struct Steps<'a> {
    table: &'a [i32],
    stride2: __m512i,
    /// cmax − 1; the least |y| and the greatest M where t ⊖ s neither flushes nor saturates
    /// (1 − `w_low`, cmax − `w_high`).
    cmax_1: __m512i,
    y_least: __m512i,
    m_most: __m512i,
}

/// The constants of `l`'s vector operations.
#[inline(always)]
unsafe fn consts(l: &LnsLanes) -> Consts<'_> {
    assert_eq!(l.lns.g.len(), 2 * l.lns.stride, "the merged G table");
    Consts {
        g: l.lns.g,
        stride: _mm512_set1_epi32(l.lns.stride as i32),
        last: _mm512_set1_epi32(l.lns.stride as i32 - 1),
        cmax: _mm512_set1_epi32(l.cmax),
        reserved: _mm512_set1_epi32(l.lns.reserved),
        keep: _mm512_set1_epi32(l.keep),
        still: l.still.map(|d| d.map(|d| _mm512_set1_epi32(d))),
        steps: l.steps.map(|t: &KahanSteps| {
            assert_eq!(t.table.len(), 4 * t.stride, "the Kahan steps' table");
            assert_eq!(t.stride, l.lns.stride, "the Kahan steps' stride");
            Steps {
                table: &t.table,
                stride2: _mm512_set1_epi32(2 * t.stride as i32),
                cmax_1: _mm512_set1_epi32(l.cmax - 1),
                y_least: _mm512_set1_epi32(1 - t.w_low),
                m_most: _mm512_set1_epi32(l.cmax - t.w_high),
            }
        }),
    }
}

/// `LnsLanes::kept` of sixteen magnitudes.
#[inline(always)]
unsafe fn kept(k: &Consts, c: __m512i) -> __m512i {
    _mm512_and_si512(c, k.keep)
}

/// `LnsLanes::zero_step_keeps` of sixteen lanes of sums `s` and compensations `c`: the
/// lanes where a Kahan step with a zero product leaves both as they are.
#[inline(always)]
unsafe fn zero_step_keeps(k: &Consts, s: __m512i, c: __m512i) -> u16 {
    let Some([same, opposite]) = k.still else {
        return 0;
    };
    let d = _mm512_sub_epi32(_mm512_abs_epi32(s), _mm512_abs_epi32(c));
    let least =
        _mm512_mask_blend_epi32(_mm512_movepi32_mask(_mm512_xor_si512(s, c)), same, opposite);
    _mm512_cmpeq_epi32_mask(c, _mm512_setzero_si512()) | _mm512_cmpge_epi32_mask(d, least)
}

/// [`zero_step_keeps`] of sixteen lanes, for the tests.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn zero_step_keeps_16(l: &LnsLanes, s: [i32; 16], c: [i32; 16]) -> u16 {
    let k = consts(l);
    let load = |v: [i32; 16]| _mm512_loadu_si512(v.as_ptr().cast());
    zero_step_keeps(&k, load(s), load(c))
}

/// `LnsLanes::add` of sixteen lanes (`KEEP`: with `LnsLanes::kept`).
#[inline(always)]
unsafe fn add<const KEEP: bool>(k: &Consts, a: __m512i, b: __m512i) -> __m512i {
    let zero = _mm512_setzero_si512();
    let (ma, mb) = (_mm512_abs_epi32(a), _mm512_abs_epi32(b));
    let lead = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(mb, ma), a, b);
    let either_zero = _mm512_cmpeq_epi32_mask(_mm512_min_epi32(ma, mb), zero);
    let d = _mm512_abs_epi32(_mm512_sub_epi32(ma, mb));
    let d = _mm512_mask_mov_epi32(d, either_zero, _mm512_set1_epi32(-1));
    let d = _mm512_min_epu32(d, k.last);
    let opp = _mm512_movepi32_mask(_mm512_xor_si512(a, b));
    let idx = _mm512_mask_add_epi32(d, opp, d, k.stride);
    // SAFETY (of the caller): every index is below 2·stride, the table's length.
    let g = _mm512_i32gather_epi32::<4>(idx, k.g.as_ptr());
    let c = _mm512_add_epi32(_mm512_max_epi32(ma, mb), g);
    let c = _mm512_max_epi32(_mm512_min_epi32(c, k.cmax), zero);
    let c = if KEEP { kept(k, c) } else { c };
    _mm512_mask_sub_epi32(c, _mm512_movepi32_mask(lead), zero, c)
}

/// `a ± b` ([`add`]) in the first V vectors of R lines. One vector's chain of four
/// dependent gathers (a Kahan step) would leave the core waiting; the V·R gathers of one
/// operation are independent. Written as loops, not closures over arrays, which the
/// compiler left as calls (1.5× the epoch's time).
#[inline(always)]
unsafe fn each<const R: usize, const V: usize, const KEEP: bool>(
    k: &Consts,
    a: &[[__m512i; 2]; R],
    b: &[[__m512i; 2]; R],
    neg: bool,
) -> [[__m512i; 2]; R] {
    let mut out = *a;
    for r in 0..R {
        for v in 0..V {
            let b = match neg {
                true => _mm512_sub_epi32(_mm512_setzero_si512(), b[r][v]),
                false => b[r][v],
            };
            out[r][v] = add::<KEEP>(k, a[r][v], b);
        }
    }
    out
}

/// The entry of [`KahanSteps`] for sixteen lanes of sums `s` and `y` = c ⊕ x
/// (`KahanSteps::step`).
#[inline(always)]
unsafe fn table_index(k: &Consts, t: &Steps, s: __m512i, y: __m512i) -> __m512i {
    let (ms, my) = (_mm512_abs_epi32(s), _mm512_abs_epi32(y));
    let d = _mm512_min_epu32(_mm512_abs_epi32(_mm512_sub_epi32(ms, my)), k.last);
    let y_leads = _mm512_cmpgt_epi32_mask(my, ms);
    let opp = _mm512_movepi32_mask(_mm512_xor_si512(s, y));
    let at = _mm512_mask_add_epi32(d, opp, d, k.stride);
    _mm512_mask_add_epi32(at, y_leads, at, t.stride2)
}

/// (t, c') of sixteen lanes from their entries `e` ([`table_index`]), as
/// `KahanSteps::step`, and the lanes where the table holds (the rest take the definition's
/// additions).
#[inline(always)]
unsafe fn table_step(
    k: &Consts,
    t: &Steps,
    s: __m512i,
    y: __m512i,
    e: __m512i,
) -> (__m512i, __m512i, u16) {
    let (zero, one) = (_mm512_setzero_si512(), _mm512_set1_epi32(1));
    let (ms, my) = (_mm512_abs_epi32(s), _mm512_abs_epi32(y));
    let m = _mm512_max_epi32(ms, my);
    let g = _mm512_srai_epi32::<{ 32 - G_BITS }>(_mm512_slli_epi32::<{ 32 - G_BITS }>(e));
    let oc = _mm512_srai_epi32::<{ 32 - C_BITS }>(_mm512_slli_epi32::<{ 32 - G_BITS - C_BITS }>(e));
    let flag = |f: i32| _mm512_test_epi32_mask(e, _mm512_set1_epi32(f));
    let (t_zero, c_zero) = (flag(T_ZERO), flag(C_ZERO));
    let t_free = _mm512_add_epi32(m, g);
    let lead = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(my, ms), s, y);
    let tm = _mm512_maskz_mov_epi32(!t_zero, t_free);
    let tv = _mm512_mask_sub_epi32(tm, _mm512_movepi32_mask(lead), zero, tm);
    let cm = _mm512_max_epi32(_mm512_min_epi32(_mm512_add_epi32(my, oc), k.cmax), zero);
    let cm = _mm512_maskz_mov_epi32(!c_zero, cm);
    // C_NEG is the sign bit: c' is negative where it and s's differ.
    let c_neg = _mm512_movepi32_mask(_mm512_xor_si512(s, e));
    let cv = _mm512_mask_sub_epi32(cm, c_neg, zero, cm);
    // A zero s or y: t is the other one and c' is 0.
    let either_zero = _mm512_cmpeq_epi32_mask(_mm512_min_epi32(ms, my), zero);
    let tv = _mm512_mask_add_epi32(tv, either_zero, s, y);
    let cv = _mm512_mask_mov_epi32(cv, either_zero, zero);
    // 1 ≤ t_free ≤ cmax as one unsigned comparison of t_free − 1.
    let t_in = _mm512_cmple_epu32_mask(_mm512_sub_epi32(t_free, one), t.cmax_1);
    let w_ok = _mm512_cmpge_epi32_mask(my, t.y_least) & _mm512_cmple_epi32_mask(m, t.m_most);
    (tv, cv, either_zero | ((t_zero | t_in) & w_ok))
}

/// The Kahan step of R lines' first V vectors (`sum::kahan_formula`): its last three
/// additions by the table of Kahan steps where the format has one and it holds in every
/// lane ([`table_step`]), by the formula otherwise.
#[inline(always)]
unsafe fn kahan_step<const R: usize, const V: usize, const KEEP: bool>(
    k: &Consts,
    s: [[__m512i; 2]; R],
    c: [[__m512i; 2]; R],
    x: [[__m512i; 2]; R],
) -> ([[__m512i; 2]; R], [[__m512i; 2]; R]) {
    let addv = |a, b| each::<R, V, KEEP>(k, &a, &b, false);
    let subv = |a, b| each::<R, V, KEEP>(k, &a, &b, true);
    let Some(t) = k.steps.as_ref().filter(|_| !KEEP) else {
        return crate::sum::kahan_formula(s, c, x, addv, subv);
    };
    let y = addv(c, x);
    // The indices, then the gathers side by side, then the rest.
    let mut e = y;
    for r in 0..R {
        for v in 0..V {
            e[r][v] = table_index(k, t, s[r][v], y[r][v]);
        }
    }
    for e in e.iter_mut() {
        for e in e.iter_mut().take(V) {
            // SAFETY: every index is below 4·stride, the table's length (`consts`).
            *e = _mm512_i32gather_epi32::<4>(*e, t.table.as_ptr());
        }
    }
    let (mut sum, mut comp, mut ok) = (s, c, !0u16);
    for r in 0..R {
        for v in 0..V {
            let (tv, cv, lanes) = table_step(k, t, s[r][v], y[r][v], e[r][v]);
            (sum[r][v], comp[r][v], ok) = (tv, cv, ok & lanes);
        }
    }
    if ok == !0 {
        (sum, comp)
    } else {
        crate::sum::kahan_formula(s, c, x, addv, subv)
    }
}

/// One Kahan step of sixteen lanes ([`kahan_step`]), for the tests.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn kahan_step_16(
    l: &LnsLanes,
    s: [i32; 16],
    c: [i32; 16],
    x: [i32; 16],
) -> ([i32; 16], [i32; 16]) {
    let k = consts(l);
    let load = |v: [i32; 16]| {
        [
            _mm512_loadu_si512(v.as_ptr().cast()),
            _mm512_setzero_si512(),
        ]
    };
    let (t, c) = kahan_step::<1, 1, false>(&k, [load(s)], [load(c)], [load(x)]);
    let mut out = ([0; 16], [0; 16]);
    _mm512_storeu_si512(out.0.as_mut_ptr().cast(), t[0][0]);
    _mm512_storeu_si512(out.1.as_mut_ptr().cast(), c[0][0]);
    out
}

/// `LnsLanes::mul` of sixteen lanes (`KEEP`: with `LnsLanes::kept`).
#[inline(always)]
unsafe fn mul<const KEEP: bool>(k: &Consts, a: __m512i, b: __m512i) -> __m512i {
    let zero = _mm512_setzero_si512();
    let (ma, mb) = (_mm512_abs_epi32(a), _mm512_abs_epi32(b));
    let c = _mm512_add_epi32(_mm512_add_epi32(ma, mb), k.reserved);
    let c = _mm512_max_epi32(_mm512_min_epi32(c, k.cmax), zero);
    let c = if KEEP { kept(k, c) } else { c };
    let nonzero = _mm512_cmpneq_epi32_mask(_mm512_min_epi32(ma, mb), zero);
    let c = _mm512_maskz_mov_epi32(nonzero, c);
    let neg = _mm512_movepi32_mask(_mm512_xor_si512(a, b));
    _mm512_mask_sub_epi32(c, neg, zero, c)
}

/// `a ⊕ b` (`op` Add), `a ⊖ b` (Sub) or `a ⊗ b` (Mul) of working values, sixteen at a time,
/// into `out`; the last `len % 16` are the caller's.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn binop(l: &LnsLanes, op: AluOp, a: &[i32], b: &[i32], out: &mut [i32]) {
    match l.keeps() {
        false => binop_keeping::<false>(l, op, a, b, out),
        true => binop_keeping::<true>(l, op, a, b, out),
    }
}

/// [`binop`], `KEEP`: with `LnsLanes::kept`.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn binop_keeping<const KEEP: bool>(
    l: &LnsLanes,
    op: AluOp,
    a: &[i32],
    b: &[i32],
    out: &mut [i32],
) {
    let k = consts(l);
    let zero = _mm512_setzero_si512();
    for ((o, a), b) in (out.chunks_exact_mut(16))
        .zip(a.chunks_exact(16))
        .zip(b.chunks_exact(16))
    {
        let (x, y) = (
            _mm512_loadu_si512(a.as_ptr().cast()),
            _mm512_loadu_si512(b.as_ptr().cast()),
        );
        let r = match op {
            AluOp::Add => add::<KEEP>(&k, x, y),
            AluOp::Sub => add::<KEEP>(&k, x, _mm512_sub_epi32(zero, y)),
            _ => mul::<KEEP>(&k, x, y),
        };
        _mm512_storeu_si512(o.as_mut_ptr().cast(), r);
    }
}

/// The lines [`run`] steps side by side.
pub(super) fn lines(kahan: bool) -> usize {
    match kahan {
        true => KAHAN_LINES,
        false => crate::kernel::lockstep::ROWS,
    }
}

/// L lockstep sums of each line of `xs`, as `LnsLanes::run_portable`.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn run(
    l: &LnsLanes,
    kahan: bool,
    xs: &[&[i32]],
    y: &[[i32; L]],
    skip: &[Range<usize>],
    out: &mut [[i32; L]],
) {
    match l.keeps() {
        false => by_rows!(lines(kahan); run_rows(l, kahan, skip; xs, y, out)),
        true => by_rows!(lines(kahan); run_rows_keeping(l, kahan, skip; xs, y, out)),
    }
}

/// [`rows`] with every bit of the results kept.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn run_rows<const R: usize>(
    l: &LnsLanes,
    kahan: bool,
    skip: &[Range<usize>],
    xs: &[&[i32]],
    y: &[[i32; L]],
    out: &mut [[i32; L]],
) {
    rows::<R, false>(l, kahan, skip, xs, y, out)
}

/// [`rows`] with the results' low code bits cleared (`--keep-bits`).
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn run_rows_keeping<const R: usize>(
    l: &LnsLanes,
    kahan: bool,
    skip: &[Range<usize>],
    xs: &[&[i32]],
    y: &[[i32; L]],
    out: &mut [[i32; L]],
) {
    rows::<R, true>(l, kahan, skip, xs, y, out)
}

/// [`run`] of R lines: 2·R vectors of sixteen lanes.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
unsafe fn rows<const R: usize, const KEEP: bool>(
    l: &LnsLanes,
    kahan: bool,
    skip: &[Range<usize>],
    xs: &[&[i32]],
    y: &[[i32; L]],
    out: &mut [[i32; L]],
) {
    assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
    let k = consts(l);
    // Every operation of a step is done in all 2·R vectors before the next one, so that
    // their table gathers sit side by side ([`each`]).
    let addv = |a, b| each::<R, 2, KEEP>(&k, &a, &b, false);
    let z = _mm512_setzero_si512();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let step = |s: &mut [[__m512i; 2]; R], c: &mut [[__m512i; 2]; R], p: [[__m512i; 2]; R]| {
        (*s, *c) = if kahan {
            kahan_step::<R, 2, KEEP>(&k, *s, *c, p)
        } else {
            (addv(*s, p), *c)
        };
    };
    let same = |a: __m512i, b: __m512i| _mm512_cmpneq_epi32_mask(a, b) == 0;
    // Whether every lane's state (sum and compensation) is the same in `a` and `b`.
    let still = |a: &State<R>, b: &State<R>| {
        (0..R).all(|r| (0..2).all(|v| same(a.0[r][v], b.0[r][v]) && same(a.1[r][v], b.1[r][v])))
    };
    for (ks, zero) in segments(y.len(), skip) {
        if zero {
            // Every product here is the zero product (0).
            let every_lane = |(s, c): &mut State<R>| step(s, c, [[z; 2]; R]);
            let mut state = (s, c);
            zero_run(&mut state, ks.len(), every_lane, still);
            (s, c) = state;
            continue;
        }
        for (i, yk) in ks.map(|i| (i, &y[i])) {
            // SAFETY: yk holds L = 2·16 i32s.
            let q = [0, 1].map(|v| _mm512_loadu_si512(yk.as_ptr().add(16 * v).cast()));
            let mut p = [q; R];
            for (p, x) in p.iter_mut().zip(xs) {
                let a = _mm512_set1_epi32(x[i]);
                *p = [mul::<KEEP>(&k, a, q[0]), mul::<KEEP>(&k, a, q[1])];
            }
            // The step written out (`step` is a closure the compiler may leave as a call).
            (s, c) = if kahan {
                kahan_step::<R, 2, KEEP>(&k, s, c, p)
            } else {
                (addv(s, p), c)
            };
        }
    }
    for (s, out) in s.iter().zip(out) {
        for (v, s) in s.iter().enumerate() {
            _mm512_storeu_si512(out.as_mut_ptr().add(16 * v).cast(), *s);
        }
    }
}

mod steps;
pub(super) use steps::{run_steps, run_steps16};
