//! The posit lanes on AVX2: two vectors of four f64 per line ([`super::L`] outputs).

use std::arch::x86_64::*;

use std::ops::Range;

use crate::kernel::lockstep::{by_rows, segments, zero_run};

use super::{PositF64, L};

/// The sums and compensations of R lines' two vectors of lanes.
type State<const R: usize> = ([[__m256d; 2]; R], [[__m256d; 2]; R]);

/// [`PositF64::round`] of four lanes: the fast rounding computed in every lane, the
/// lanes outside it (no fraction bit left, nonzero) then rounded one by one.
#[inline(always)]
unsafe fn round(p: &PositF64, v: __m256d) -> __m256d {
    let u = _mm256_castpd_si256(v);
    let eb = _mm256_and_si256(_mm256_srli_epi64(u, 52), _mm256_set1_epi64x(0x7ff));
    let kk = _mm256_srl_epi64(
        _mm256_add_epi64(eb, _mm256_set1_epi64x(1)),
        _mm_cvtsi64_si128(i64::from(p.f.es)),
    );
    // The regime length: max(k + 2, 1 − k); both fit i32, where the 32-bit max of the
    // two halves is the 64-bit max.
    let up = _mm256_add_epi64(kk, _mm256_set1_epi64x(2 - p.k0));
    let down = _mm256_sub_epi64(_mm256_set1_epi64x(p.k0 + 1), kk);
    let r = _mm256_max_epi32(up, down);
    let field = _mm256_add_epi64(_mm256_add_epi64(eb, r), _mm256_set1_epi64x(52 - p.body));
    let c = _mm256_castsi256_pd(_mm256_or_si256(
        _mm256_slli_epi64(field, 52),
        _mm256_set1_epi64x(1 << 51),
    ));
    let out = _mm256_sub_pd(_mm256_add_pd(v, c), c);
    let slow = _mm256_andnot_si256(
        _mm256_castpd_si256(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_EQ_OQ)),
        _mm256_cmpgt_epi64(r, _mm256_set1_epi64x(p.body - 1)),
    );
    if _mm256_testz_si256(slow, slow) != 0 {
        return out;
    }
    fix(p, v, out, slow)
}

/// The lanes of `out` marked in `slow`, rounded by the format's encoder.
#[cold]
#[inline(never)]
unsafe fn fix(p: &PositF64, v: __m256d, out: __m256d, slow: __m256i) -> __m256d {
    let (mut x, mut o, mut s) = ([0.0f64; 4], [0.0f64; 4], [0i64; 4]);
    _mm256_storeu_pd(x.as_mut_ptr(), v);
    _mm256_storeu_pd(o.as_mut_ptr(), out);
    _mm256_storeu_si256(s.as_mut_ptr().cast(), slow);
    for l in 0..4 {
        if s[l] != 0 {
            o[l] = p.slow(x[l]);
        }
    }
    _mm256_loadu_pd(o.as_ptr())
}

/// L lockstep sums of each line of `xs`, as [`PositF64::run_portable`].
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run(
    p: &PositF64,
    kahan: bool,
    xs: &[&[f64]],
    y: &[[f64; L]],
    skip: &[Range<usize>],
    out: &mut [[f64; L]],
) {
    by_rows!(run_rows(p, kahan, skip; xs, y, out));
}

/// [`run`] of R lines: 2·R vectors of four lanes.
#[target_feature(enable = "avx2")]
unsafe fn run_rows<const R: usize>(
    p: &PositF64,
    kahan: bool,
    skip: &[Range<usize>],
    xs: &[&[f64]],
    y: &[[f64; L]],
    out: &mut [[f64; L]],
) {
    assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
    let add = |a: __m256d, b: __m256d| round(p, _mm256_add_pd(a, b));
    let sub = |a: __m256d, b: __m256d| round(p, _mm256_sub_pd(a, b));
    let z = _mm256_setzero_pd();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let step = |s: &mut [[__m256d; 2]; R], c: &mut [[__m256d; 2]; R], r: usize, v: usize, prod| {
        (s[r][v], c[r][v]) = if kahan {
            crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
        } else {
            (add(s[r][v], prod), c[r][v])
        };
    };
    // Whether every lane's state (sum and compensation) is the same, bit for bit.
    let same = |a: __m256d, b: __m256d| {
        _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(
            _mm256_castpd_si256(a),
            _mm256_castpd_si256(b),
        ))) == 0xf
    };
    let still = |a: &State<R>, b: &State<R>| {
        (0..R).all(|r| (0..2).all(|v| same(a.0[r][v], b.0[r][v]) && same(a.1[r][v], b.1[r][v])))
    };
    for (ks, zero) in segments(y.len(), skip) {
        if zero {
            // Every product here is the zero product (+0).
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
            // SAFETY: yk holds L = 2·4 f64s.
            let q = [0, 1].map(|v| _mm256_loadu_pd(yk.as_ptr().add(4 * v)));
            for (r, x) in xs.iter().enumerate() {
                let a = _mm256_set1_pd(x[i]);
                for (v, &q) in q.iter().enumerate() {
                    // The step written out (not `step`: a closure the compiler may
                    // leave as a call, as it did here, 1.2× the epoch's time).
                    let prod = round(p, _mm256_mul_pd(a, q));
                    (s[r][v], c[r][v]) = if kahan {
                        crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
                    } else {
                        (add(s[r][v], prod), c[r][v])
                    };
                }
            }
        }
    }
    for (s, out) in s.iter().zip(out) {
        for (v, s) in s.iter().enumerate() {
            _mm256_storeu_pd(out.as_mut_ptr().add(4 * v), *s);
        }
    }
}

/// [`Lanes::run_sparse`](super::Lanes::run_sparse) of each line of `xs`: naive sums only.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run_sparse(
    p: &PositF64,
    xs: &[(&[u32], &[f64])],
    y: &[[f64; L]],
    out: &mut [[f64; L]],
) {
    by_rows!(sparse_rows(p; xs, y, out));
}

/// [`run_sparse`] of R lines, each stepping through its own k.
#[target_feature(enable = "avx2")]
unsafe fn sparse_rows<const R: usize>(
    p: &PositF64,
    xs: &[(&[u32], &[f64])],
    y: &[[f64; L]],
    out: &mut [[f64; L]],
) {
    let len = xs[0].0.len();
    assert!(xs.len() == R && out.len() >= R);
    assert!(xs
        .iter()
        .all(|&(ks, vs)| ks.len() == len && vs.len() == len));
    let z = _mm256_setzero_pd();
    let mut s = [[z; 2]; R];
    for j in 0..len {
        for (r, &(ks, vs)) in xs.iter().enumerate() {
            let yk = &y[ks[j] as usize];
            let a = _mm256_set1_pd(vs[j]);
            for (v, s) in s[r].iter_mut().enumerate() {
                // SAFETY: yk holds L = 2·4 f64s.
                let q = _mm256_loadu_pd(yk.as_ptr().add(4 * v));
                let prod = round(p, _mm256_mul_pd(a, q));
                *s = round(p, _mm256_add_pd(*s, prod));
            }
        }
    }
    for (s, out) in s.iter().zip(out) {
        for (v, s) in s.iter().enumerate() {
            _mm256_storeu_pd(out.as_mut_ptr().add(4 * v), *s);
        }
    }
}
