//! The LNS lanes on AVX2: eight lanes a vector, two vectors a line, up to four lines at once
//! (`LnsLanes`' operations, gathers of the merged G table; a Kahan step's last three
//! additions by the table of Kahan steps where the format has one, as on AVX-512, a line's
//! two vectors side by side). Lines given as their steps (the sparse frame's) run in
//! `steps.rs`; whole lanes of +, −, · in `binop`.

use std::arch::x86_64::*;
use std::ops::Range;

use crate::kernel::lockstep::{by_rows, segments, zero_run};
use crate::AluOp;

use super::kahan::{KahanSteps, C_BITS, C_NEG, C_ZERO, G_BITS, T_ZERO};
use super::{LnsLanes, L};

// `table_step` reads C_NEG as the sign bit.
const _: () = assert!(C_NEG == i32::MIN);

/// The sums and compensations of R lines' two vectors of lanes.
type State<const R: usize> = ([[__m256i; 2]; R], [[__m256i; 2]; R]);

/// The constants of the vector operations.
struct Consts<'a> {
    g: &'a [i32],
    stride: __m256i,
    last: __m256i,
    cmax: __m256i,
    reserved: __m256i,
    keep: __m256i,
    steps: Option<Steps<'a>>,
    /// `LnsLanes::still`, each half's least d in a vector.
    still: Option<[__m256i; 2]>,
}

/// [`KahanSteps`] in vectors.
struct Steps<'a> {
    table: &'a [i32],
    stride2: __m256i,
    /// cmax − 1; the least |y| and the greatest M where t ⊖ s neither flushes nor saturates
    /// (1 − `w_low`, cmax − `w_high`).
    cmax_1: __m256i,
    y_least: __m256i,
    m_most: __m256i,
}

/// The constants of `l`'s vector operations.
#[inline(always)]
unsafe fn consts(l: &LnsLanes) -> Consts<'_> {
    assert_eq!(l.lns.g.len(), 2 * l.lns.stride, "the merged G table");
    Consts {
        g: l.lns.g,
        stride: _mm256_set1_epi32(l.lns.stride as i32),
        last: _mm256_set1_epi32(l.lns.stride as i32 - 1),
        cmax: _mm256_set1_epi32(l.cmax),
        reserved: _mm256_set1_epi32(l.lns.reserved),
        keep: _mm256_set1_epi32(l.keep),
        still: l.still.map(|d| d.map(|d| _mm256_set1_epi32(d))),
        steps: l.steps.map(|t: &KahanSteps| {
            assert_eq!(t.table.len(), 4 * t.stride, "the Kahan steps' table");
            assert_eq!(t.stride, l.lns.stride, "the Kahan steps' stride");
            Steps {
                table: &t.table,
                stride2: _mm256_set1_epi32(2 * t.stride as i32),
                cmax_1: _mm256_set1_epi32(l.cmax - 1),
                y_least: _mm256_set1_epi32(1 - t.w_low),
                m_most: _mm256_set1_epi32(l.cmax - t.w_high),
            }
        }),
    }
}

/// `LnsLanes::kept` of eight magnitudes.
#[inline(always)]
unsafe fn kept(k: &Consts, c: __m256i) -> __m256i {
    _mm256_and_si256(c, k.keep)
}

/// `LnsLanes::zero_step_keeps` of eight lanes of sums `s` and compensations `c`: the lanes
/// where a Kahan step with a zero product leaves both as they are, one bit each.
#[inline(always)]
unsafe fn zero_step_keeps(k: &Consts, s: __m256i, c: __m256i) -> i32 {
    let Some([same, opposite]) = k.still else {
        return 0;
    };
    let d = _mm256_sub_epi32(_mm256_abs_epi32(s), _mm256_abs_epi32(c));
    let least = _mm256_blendv_ps(
        _mm256_castsi256_ps(same),
        _mm256_castsi256_ps(opposite),
        _mm256_castsi256_ps(_mm256_xor_si256(s, c)),
    );
    // d ≥ least as not (least > d).
    let short = _mm256_cmpgt_epi32(_mm256_castps_si256(least), d);
    let c_zero = _mm256_cmpeq_epi32(c, _mm256_setzero_si256());
    let keeps = _mm256_or_si256(c_zero, _mm256_andnot_si256(short, _mm256_set1_epi32(-1)));
    _mm256_movemask_ps(_mm256_castsi256_ps(keeps))
}

/// [`zero_step_keeps`] of eight lanes, for the tests.
#[cfg(test)]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn zero_step_keeps_8(l: &LnsLanes, s: [i32; 8], c: [i32; 8]) -> i32 {
    let k = consts(l);
    let load = |v: [i32; 8]| _mm256_loadu_si256(v.as_ptr().cast());
    zero_step_keeps(&k, load(s), load(c))
}

/// `LnsLanes::add` of eight lanes (`KEEP`: with `LnsLanes::kept`).
#[inline(always)]
unsafe fn add<const KEEP: bool>(k: &Consts, a: __m256i, b: __m256i) -> __m256i {
    let (ma, mb) = (_mm256_abs_epi32(a), _mm256_abs_epi32(b));
    let lead = _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi32(mb, ma));
    let zero = _mm256_cmpeq_epi32(_mm256_min_epi32(ma, mb), _mm256_setzero_si256());
    let d = _mm256_or_si256(_mm256_abs_epi32(_mm256_sub_epi32(ma, mb)), zero);
    let half = _mm256_and_si256(k.stride, _mm256_srai_epi32(_mm256_xor_si256(a, b), 31));
    let idx = _mm256_add_epi32(half, _mm256_min_epu32(d, k.last));
    // SAFETY (of the caller): every index is below 2·stride, the table's length.
    let g = _mm256_i32gather_epi32::<4>(k.g.as_ptr(), idx);
    let c = _mm256_add_epi32(_mm256_max_epi32(ma, mb), g);
    let c = _mm256_max_epi32(_mm256_min_epi32(c, k.cmax), _mm256_setzero_si256());
    let c = if KEEP { kept(k, c) } else { c };
    let neg = _mm256_srai_epi32(lead, 31);
    _mm256_sub_epi32(_mm256_xor_si256(c, neg), neg)
}

/// `LnsLanes::mul` of eight lanes (`KEEP`: with `LnsLanes::kept`).
#[inline(always)]
unsafe fn mul<const KEEP: bool>(k: &Consts, a: __m256i, b: __m256i) -> __m256i {
    let (ma, mb) = (_mm256_abs_epi32(a), _mm256_abs_epi32(b));
    let c = _mm256_add_epi32(_mm256_add_epi32(ma, mb), k.reserved);
    let c = _mm256_max_epi32(_mm256_min_epi32(c, k.cmax), _mm256_setzero_si256());
    let c = if KEEP { kept(k, c) } else { c };
    let zero = _mm256_cmpeq_epi32(_mm256_min_epi32(ma, mb), _mm256_setzero_si256());
    let c = _mm256_andnot_si256(zero, c);
    let neg = _mm256_srai_epi32(_mm256_xor_si256(a, b), 31);
    _mm256_sub_epi32(_mm256_xor_si256(c, neg), neg)
}

/// `a ⊕ b` (`op` Add), `a ⊖ b` (Sub) or `a ⊗ b` (Mul) of working values, eight at a time,
/// into `out`; the last `len % 8` are the caller's.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn binop(l: &LnsLanes, op: AluOp, a: &[i32], b: &[i32], out: &mut [i32]) {
    match l.keeps() {
        false => binop_keeping::<false>(l, op, a, b, out),
        true => binop_keeping::<true>(l, op, a, b, out),
    }
}

/// [`binop`], `KEEP`: with `LnsLanes::kept`.
#[target_feature(enable = "avx2")]
unsafe fn binop_keeping<const KEEP: bool>(
    l: &LnsLanes,
    op: AluOp,
    a: &[i32],
    b: &[i32],
    out: &mut [i32],
) {
    let k = consts(l);
    for ((o, a), b) in (out.chunks_exact_mut(8))
        .zip(a.chunks_exact(8))
        .zip(b.chunks_exact(8))
    {
        let (x, y) = (
            _mm256_loadu_si256(a.as_ptr().cast()),
            _mm256_loadu_si256(b.as_ptr().cast()),
        );
        let r = match op {
            AluOp::Add => add::<KEEP>(&k, x, y),
            AluOp::Sub => sub::<KEEP>(&k, x, y),
            _ => mul::<KEEP>(&k, x, y),
        };
        _mm256_storeu_si256(o.as_mut_ptr().cast(), r);
    }
}

/// `a` in the lanes where the mask `m` is all ones, `v` where it is zero.
#[inline(always)]
unsafe fn select(m: __m256i, a: __m256i, v: __m256i) -> __m256i {
    _mm256_blendv_epi8(v, a, m)
}

/// −v where `neg`'s lanes are all ones, v where they are zero.
#[inline(always)]
unsafe fn negate_where(neg: __m256i, v: __m256i) -> __m256i {
    _mm256_sub_epi32(_mm256_xor_si256(v, neg), neg)
}

/// The lanes of entries `e` that hold the flag `f` (all ones).
#[inline(always)]
unsafe fn flag(e: __m256i, f: i32) -> __m256i {
    let f = _mm256_set1_epi32(f);
    _mm256_cmpeq_epi32(_mm256_and_si256(e, f), f)
}

/// The entry of [`KahanSteps`] for eight lanes of sums `s` and `y` = c ⊕ x
/// (`KahanSteps::step`).
#[inline(always)]
unsafe fn table_index(k: &Consts, t: &Steps, s: __m256i, y: __m256i) -> __m256i {
    let (ms, my) = (_mm256_abs_epi32(s), _mm256_abs_epi32(y));
    let d = _mm256_min_epu32(_mm256_abs_epi32(_mm256_sub_epi32(ms, my)), k.last);
    let y_leads = _mm256_cmpgt_epi32(my, ms);
    let opp = _mm256_srai_epi32::<31>(_mm256_xor_si256(s, y));
    let at = _mm256_add_epi32(d, _mm256_and_si256(opp, k.stride));
    _mm256_add_epi32(at, _mm256_and_si256(y_leads, t.stride2))
}

/// (t, c') of eight lanes from their entries `e` ([`table_index`]), as
/// `KahanSteps::step`, and the lanes where the table holds (all ones; the rest take the
/// definition's additions).
#[inline(always)]
unsafe fn table_step(
    k: &Consts,
    t: &Steps,
    s: __m256i,
    y: __m256i,
    e: __m256i,
) -> (__m256i, __m256i, __m256i) {
    let (zero, one) = (_mm256_setzero_si256(), _mm256_set1_epi32(1));
    let (ms, my) = (_mm256_abs_epi32(s), _mm256_abs_epi32(y));
    let m = _mm256_max_epi32(ms, my);
    let g =
        _mm256_srai_epi32::<{ 32 - G_BITS as i32 }>(_mm256_slli_epi32::<{ 32 - G_BITS as i32 }>(e));
    let oc = _mm256_srai_epi32::<{ 32 - C_BITS as i32 }>(_mm256_slli_epi32::<
        { 32 - G_BITS as i32 - C_BITS as i32 },
    >(e));
    let (t_zero, c_zero) = (flag(e, T_ZERO), flag(e, C_ZERO));
    let t_free = _mm256_add_epi32(m, g);
    let lead = select(_mm256_cmpgt_epi32(my, ms), y, s);
    let tm = _mm256_andnot_si256(t_zero, t_free);
    let tv = negate_where(_mm256_srai_epi32::<31>(lead), tm);
    let cm = _mm256_max_epi32(_mm256_min_epi32(_mm256_add_epi32(my, oc), k.cmax), zero);
    let cm = _mm256_andnot_si256(c_zero, cm);
    // C_NEG is the sign bit: c' is negative where it and s's differ.
    let cv = negate_where(_mm256_srai_epi32::<31>(_mm256_xor_si256(s, e)), cm);
    // A zero s or y: t is the other one and c' is 0.
    let either_zero = _mm256_cmpeq_epi32(_mm256_min_epi32(ms, my), zero);
    let tv = select(either_zero, _mm256_add_epi32(s, y), tv);
    let cv = _mm256_andnot_si256(either_zero, cv);
    // 1 ≤ t_free ≤ cmax as one unsigned comparison of t_free − 1.
    let t_less = _mm256_sub_epi32(t_free, one);
    let t_in = _mm256_cmpeq_epi32(_mm256_min_epu32(t_less, t.cmax_1), t_less);
    let w_bad = _mm256_or_si256(
        _mm256_cmpgt_epi32(t.y_least, my),
        _mm256_cmpgt_epi32(m, t.m_most),
    );
    let ok = _mm256_andnot_si256(w_bad, _mm256_or_si256(t_zero, t_in));
    (tv, cv, _mm256_or_si256(either_zero, ok))
}

/// a ⊖ b of eight lanes ([`add`] of −b).
#[inline(always)]
unsafe fn sub<const KEEP: bool>(k: &Consts, a: __m256i, b: __m256i) -> __m256i {
    add::<KEEP>(k, a, _mm256_sub_epi32(_mm256_setzero_si256(), b))
}

/// `sum::kahan_formula` of eight lanes, its additions called as functions: closures handed
/// to it are compiled without AVX2, and every intrinsic in them was a call (the lanes ran
/// at 0.014 G MAC/s, under the portable lanes' 0.035). The tests hold it to the formula.
#[inline(always)]
unsafe fn kahan_formula<const KEEP: bool>(
    k: &Consts,
    s: __m256i,
    c: __m256i,
    x: __m256i,
) -> (__m256i, __m256i) {
    let tmp = add::<KEEP>(k, c, x);
    let t = add::<KEEP>(k, s, tmp);
    (t, sub::<KEEP>(k, tmp, sub::<KEEP>(k, t, s)))
}

/// The Kahan step of eight lanes (`sum::kahan_formula`): its last three additions by the
/// table of Kahan steps where the format has one and it holds in every lane
/// ([`table_step`]), by the formula otherwise.
#[inline(always)]
unsafe fn kahan_step<const KEEP: bool>(
    k: &Consts,
    s: __m256i,
    c: __m256i,
    x: __m256i,
) -> (__m256i, __m256i) {
    let Some(t) = k.steps.as_ref().filter(|_| !KEEP) else {
        return kahan_formula::<KEEP>(k, s, c, x);
    };
    let y = add::<KEEP>(k, c, x);
    // SAFETY: every index is below 4·stride, the table's length (`consts`).
    let e = _mm256_i32gather_epi32::<4>(t.table.as_ptr(), table_index(k, t, s, y));
    let (tv, cv, ok) = table_step(k, t, s, y, e);
    match _mm256_movemask_epi8(ok) {
        -1 => (tv, cv),
        _ => kahan_formula::<KEEP>(k, s, c, x),
    }
}

/// [`kahan_step`] of a line's two vectors, each operation in both before the next (their
/// gathers side by side), by the table of Kahan steps (which the format has).
#[inline(always)]
unsafe fn kahan_step2(
    k: &Consts,
    s: [__m256i; 2],
    c: [__m256i; 2],
    x: [__m256i; 2],
) -> ([__m256i; 2], [__m256i; 2]) {
    let t = k.steps.as_ref().expect("the table of Kahan steps");
    let y = [add::<false>(k, c[0], x[0]), add::<false>(k, c[1], x[1])];
    let i = [table_index(k, t, s[0], y[0]), table_index(k, t, s[1], y[1])];
    // SAFETY: every index is below 4·stride, the table's length (`consts`).
    let e = [
        _mm256_i32gather_epi32::<4>(t.table.as_ptr(), i[0]),
        _mm256_i32gather_epi32::<4>(t.table.as_ptr(), i[1]),
    ];
    let (t0, c0, ok0) = table_step(k, t, s[0], y[0], e[0]);
    let (t1, c1, ok1) = table_step(k, t, s[1], y[1], e[1]);
    match _mm256_movemask_epi8(_mm256_and_si256(ok0, ok1)) {
        -1 => ([t0, t1], [c0, c1]),
        _ => {
            let (a, b) = kahan_formula::<false>(k, s[0], c[0], x[0]);
            let (d, e) = kahan_formula::<false>(k, s[1], c[1], x[1]);
            ([a, d], [b, e])
        }
    }
}

/// One step of a lane's sum and compensation with the product `p` (`kahan`: a Kahan step).
#[inline(always)]
unsafe fn step<const KEEP: bool>(
    k: &Consts,
    kahan: bool,
    s: __m256i,
    c: __m256i,
    p: __m256i,
) -> (__m256i, __m256i) {
    match kahan {
        true => kahan_step::<KEEP>(k, s, c, p),
        false => (add::<KEEP>(k, s, p), c),
    }
}

/// One Kahan step of eight lanes ([`kahan_step`]), for the tests.
#[cfg(test)]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn kahan_step_8(
    l: &LnsLanes,
    s: [i32; 8],
    c: [i32; 8],
    x: [i32; 8],
) -> ([i32; 8], [i32; 8]) {
    let k = consts(l);
    let load = |v: [i32; 8]| _mm256_loadu_si256(v.as_ptr().cast());
    let (t, c) = kahan_step::<false>(&k, load(s), load(c), load(x));
    let mut out = ([0; 8], [0; 8]);
    _mm256_storeu_si256(out.0.as_mut_ptr().cast(), t);
    _mm256_storeu_si256(out.1.as_mut_ptr().cast(), c);
    out
}

/// L lockstep sums of each line of `xs`, as `LnsLanes::run_portable`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run(
    l: &LnsLanes,
    kahan: bool,
    xs: &[&[i32]],
    y: &[[i32; L]],
    skip: &[Range<usize>],
    out: &mut [[i32; L]],
) {
    match l.keeps() {
        false => by_rows!(run_rows(l, kahan, skip; xs, y, out)),
        true => by_rows!(run_rows_keeping(l, kahan, skip; xs, y, out)),
    }
}

/// [`rows`] with every bit of the results kept.
#[target_feature(enable = "avx2")]
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
#[target_feature(enable = "avx2")]
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

/// [`run`] of R lines: 2·R vectors of eight lanes. Each vector takes its whole step in
/// turn: with AVX2's sixteen registers, doing each operation in all 2·R vectors first (as
/// the AVX-512 form does) spills, and ran naive sums at half the speed.
#[target_feature(enable = "avx2")]
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
    let z = _mm256_setzero_si256();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let same = |a: __m256i, b: __m256i| _mm256_movemask_epi8(_mm256_cmpeq_epi32(a, b)) == -1;
    // Whether every lane's state (sum and compensation) is the same in `a` and `b`.
    let still = |a: &State<R>, b: &State<R>| {
        (0..R).all(|r| (0..2).all(|v| same(a.0[r][v], b.0[r][v]) && same(a.1[r][v], b.1[r][v])))
    };
    for (ks, zero) in segments(y.len(), skip) {
        if zero {
            // Every product here is the zero product (0).
            let every_lane = |(s, c): &mut State<R>| {
                for r in 0..R {
                    for v in 0..2 {
                        (s[r][v], c[r][v]) = step::<KEEP>(&k, kahan, s[r][v], c[r][v], z);
                    }
                }
            };
            let mut state = (s, c);
            zero_run(&mut state, ks.len(), every_lane, still);
            (s, c) = state;
            continue;
        }
        for (i, yk) in ks.map(|i| (i, &y[i])) {
            // SAFETY: yk holds L = 2·8 i32s.
            let q = [0, 1].map(|v| _mm256_loadu_si256(yk.as_ptr().add(8 * v).cast()));
            for (r, x) in xs.iter().enumerate() {
                let a = _mm256_set1_epi32(x[i]);
                if kahan && !KEEP && k.steps.is_some() {
                    let p = [mul::<KEEP>(&k, a, q[0]), mul::<KEEP>(&k, a, q[1])];
                    (s[r], c[r]) = kahan_step2(&k, s[r], c[r], p);
                    continue;
                }
                for (v, &q) in q.iter().enumerate() {
                    // Written out: a closure is compiled without AVX2 (see `kahan_formula`).
                    let p = mul::<KEEP>(&k, a, q);
                    (s[r][v], c[r][v]) = step::<KEEP>(&k, kahan, s[r][v], c[r][v], p);
                }
            }
        }
    }
    for (s, out) in s.iter().zip(out) {
        for (v, s) in s.iter().enumerate() {
            _mm256_storeu_si256(out.as_mut_ptr().add(8 * v).cast(), *s);
        }
    }
}

mod steps;
pub(super) use steps::{lines, run_steps};
