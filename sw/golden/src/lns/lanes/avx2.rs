//! The LNS lanes on AVX2: eight lanes a vector, two vectors a line, up to four lines at once
//! (`LnsLanes`' operations, gathers of the merged G table).

use std::arch::x86_64::*;
use std::ops::Range;

use crate::kernel::lockstep::{by_rows, segments, zero_run};

use super::{LnsLanes, L};

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
}

/// `LnsLanes::kept` of eight magnitudes.
#[inline(always)]
unsafe fn kept(k: &Consts, c: __m256i) -> __m256i {
    _mm256_and_si256(c, k.keep)
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
    assert_eq!(l.lns.g.len(), 2 * l.lns.stride, "the merged G table");
    assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
    let k = Consts {
        g: l.lns.g,
        stride: _mm256_set1_epi32(l.lns.stride as i32),
        last: _mm256_set1_epi32(l.lns.stride as i32 - 1),
        cmax: _mm256_set1_epi32(l.cmax),
        reserved: _mm256_set1_epi32(l.lns.reserved),
        keep: _mm256_set1_epi32(l.keep),
    };
    let addv = |a, b| add::<KEEP>(&k, a, b);
    let subv = |a, b| add::<KEEP>(&k, a, _mm256_sub_epi32(_mm256_setzero_si256(), b));
    let z = _mm256_setzero_si256();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let step = |s: &mut [[__m256i; 2]; R], c: &mut [[__m256i; 2]; R], r: usize, v: usize, p| {
        (s[r][v], c[r][v]) = if kahan {
            crate::sum::kahan_formula(s[r][v], c[r][v], p, addv, subv)
        } else {
            (addv(s[r][v], p), c[r][v])
        };
    };
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
                        step(s, c, r, v, z);
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
                for (v, &q) in q.iter().enumerate() {
                    step(&mut s, &mut c, r, v, mul::<KEEP>(&k, a, q));
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
