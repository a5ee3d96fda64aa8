//! The posit lanes on AVX-512: two vectors of eight f64 per line ([`super::L512`] outputs).

use std::arch::x86_64::*;

use std::ops::Range;

use crate::kernel::lockstep::{by_rows, segments, zero_run, ROWS};

use super::{PositF64, L512 as L};
use crate::arith::Bits;
use crate::family_trait::Family;

/// The sums and compensations of R lines' two vectors of lanes.
type State<const R: usize> = ([[__m512d; 2]; R], [[__m512d; 2]; R]);

/// [`PositF64::round`] of eight lanes, as the AVX2 form with masks.
#[inline(always)]
unsafe fn round(p: &PositF64, v: __m512d) -> __m512d {
    let all = |x: i64| _mm512_set1_epi64(x);
    let u = _mm512_castpd_si512(v);
    let eb = _mm512_and_si512(_mm512_srli_epi64::<52>(u), all(0x7ff));
    let kk = _mm512_srl_epi64(
        _mm512_add_epi64(eb, all(1)),
        _mm_cvtsi64_si128(i64::from(p.f.es)),
    );
    // The regime length: max(k + 2, 1 − k).
    let r = _mm512_max_epi64(
        _mm512_add_epi64(kk, all(2 - p.k0)),
        _mm512_sub_epi64(all(p.k0 + 1), kk),
    );
    let field = _mm512_add_epi64(_mm512_add_epi64(eb, r), all(52 - p.body));
    let c = _mm512_castsi512_pd(_mm512_or_si512(
        _mm512_slli_epi64::<52>(field),
        all(1 << 51),
    ));
    let out = _mm512_sub_pd(_mm512_add_pd(v, c), c);
    let nonzero = _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(v, _mm512_setzero_pd());
    let slow = _mm512_mask_cmpgt_epi64_mask(nonzero, r, all(p.body - 1));
    if slow == 0 {
        return out;
    }
    fix(p, v, out, slow)
}

/// The lanes of `out` marked in `slow`, rounded by the format's encoder.
#[cold]
#[inline(never)]
unsafe fn fix(p: &PositF64, v: __m512d, out: __m512d, slow: __mmask8) -> __m512d {
    let (mut x, mut o) = ([0.0f64; 8], [0.0f64; 8]);
    _mm512_storeu_pd(x.as_mut_ptr(), v);
    _mm512_storeu_pd(o.as_mut_ptr(), out);
    for l in 0..8 {
        if slow >> l & 1 != 0 {
            o[l] = p.slow(x[l]);
        }
    }
    _mm512_loadu_pd(o.as_ptr())
}

/// L lockstep sums of each line of `xs`, as [`PositF64::run_portable`].
#[target_feature(enable = "avx512f,avx512dq")]
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

/// [`run`] of R lines: 2·R vectors of eight lanes.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn run_rows<const R: usize>(
    p: &PositF64,
    kahan: bool,
    skip: &[Range<usize>],
    xs: &[&[f64]],
    y: &[[f64; L]],
    out: &mut [[f64; L]],
) {
    assert!(xs.len() == R && out.len() >= R && xs.iter().all(|x| x.len() == y.len()));
    let add = |a: __m512d, b: __m512d| round(p, _mm512_add_pd(a, b));
    let sub = |a: __m512d, b: __m512d| round(p, _mm512_sub_pd(a, b));
    let z = _mm512_setzero_pd();
    let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
    let step = |s: &mut [[__m512d; 2]; R], c: &mut [[__m512d; 2]; R], r: usize, v: usize, prod| {
        (s[r][v], c[r][v]) = if kahan {
            crate::sum::kahan_formula(s[r][v], c[r][v], prod, add, sub)
        } else {
            (add(s[r][v], prod), c[r][v])
        };
    };
    // Whether every lane's state (sum and compensation) is the same, bit for bit.
    let same = |a: __m512d, b: __m512d| {
        _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(a), _mm512_castpd_si512(b)) == 0
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
            // SAFETY: yk holds L = 2·8 f64s.
            let q = [0, 1].map(|v| _mm512_loadu_pd(yk.as_ptr().add(8 * v)));
            for (r, x) in xs.iter().enumerate() {
                let a = _mm512_set1_pd(x[i]);
                for (v, &q) in q.iter().enumerate() {
                    // The step written out (not `step`: a closure the compiler may
                    // leave as a call, as it did here, 1.2× the epoch's time).
                    let prod = round(p, _mm512_mul_pd(a, q));
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
            _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), *s);
        }
    }
}

/// [`Lanes::run_sparse`](super::Lanes::run_sparse) of each line of `xs`, W = 8 or 16 lanes
/// (one or two vectors a line): naive sums only.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn run_sparse<const W: usize>(
    p: &PositF64,
    xs: &[(&[u32], &[f64])],
    y: &[[f64; W]],
    out: &mut [[f64; W]],
) {
    for (xs, out) in xs.chunks(ROWS).zip(out.chunks_mut(ROWS)) {
        match xs.len() {
            1 => sparse_rows::<1, W>(p, xs, y, out),
            2 => sparse_rows::<2, W>(p, xs, y, out),
            3 => sparse_rows::<3, W>(p, xs, y, out),
            _ => sparse_rows::<4, W>(p, xs, y, out),
        }
    }
}

/// [`run_sparse`] of R lines, each stepping through its own k.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn sparse_rows<const R: usize, const W: usize>(
    p: &PositF64,
    xs: &[(&[u32], &[f64])],
    y: &[[f64; W]],
    out: &mut [[f64; W]],
) {
    let len = xs[0].0.len();
    assert!(W == 8 || W == 16, "one or two vectors of eight");
    assert!(xs.len() == R && out.len() >= R);
    assert!(xs
        .iter()
        .all(|&(ks, vs)| ks.len() == len && vs.len() == len));
    let z = _mm512_setzero_pd();
    let mut s = [[z; 2]; R];
    for j in 0..len {
        for (r, &(ks, vs)) in xs.iter().enumerate() {
            let yk = &y[ks[j] as usize];
            let a = _mm512_set1_pd(vs[j]);
            for (v, s) in s[r].iter_mut().enumerate().take(W / 8) {
                // SAFETY: yk holds W = 8·(W / 8) f64s.
                let q = _mm512_loadu_pd(yk.as_ptr().add(8 * v));
                let prod = round(p, _mm512_mul_pd(a, q));
                *s = round(p, _mm512_add_pd(*s, prod));
            }
        }
    }
    for (s, out) in s.iter().zip(out) {
        for (v, s) in s.iter().enumerate().take(W / 8) {
            _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), *s);
        }
    }
}

/// The working values of `line`'s words (NaR as zero) appended to `out`, eight at a time,
/// and whether one was NaR: each word's fields taken apart in the vector (the regime's run
/// by `vplzcntq`), and its f64 packed from them, as [`PositFormat::to_f64`] computes it
/// (`tests` hold the two to each other on every word of every format of the path). `None`
/// (and `out` as it was) if a word is wider than the format.
///
/// [`PositFormat::to_f64`]: super::PositFormat::to_f64
#[target_feature(enable = "avx512f,avx512dq,avx512cd")]
pub(super) unsafe fn decode(p: &PositF64, line: &[Bits], out: &mut Vec<f64>) -> Option<bool> {
    let (n, es) = (i64::from(p.f.n), i64::from(p.f.es));
    let all = |x: i64| _mm512_set1_epi64(x);
    let (mask, nar) = (all((1 << n) - 1), all(1 << (n - 1)));
    let mut any_nar: __mmask8 = 0;
    let start = out.len();
    out.reserve(line.len());
    let mut chunks = line.chunks_exact(8);
    for words in &mut chunks {
        // SAFETY: `words` holds eight u64s.
        let w = _mm512_loadu_si512(words.as_ptr().cast());
        if _mm512_cmpgt_epu64_mask(w, mask) != 0 {
            out.truncate(start);
            return None;
        }
        let is_nar = _mm512_cmpeq_epi64_mask(w, nar);
        let zero_or_nar = _mm512_cmpeq_epi64_mask(w, _mm512_setzero_si512()) | is_nar;
        any_nar |= is_nar;
        // The magnitude's body: a negative word's two's complement, its N − 1 bits moved to
        // the top of the u64.
        let negative = _mm512_test_epi64_mask(w, nar);
        let magnitude = _mm512_mask_sub_epi64(w, negative, _mm512_setzero_si512(), w);
        let body = _mm512_sllv_epi64(_mm512_and_si512(magnitude, mask), all(65 - n));
        // The regime: a run of m equal bits, k = m − 1 for ones, −m for zeros.
        let ones = _mm512_movepi64_mask(body);
        let run = _mm512_mask_lzcnt_epi64(
            _mm512_lzcnt_epi64(body),
            ones,
            _mm512_xor_si512(body, all(-1)),
        );
        let k = _mm512_mask_sub_epi64(
            _mm512_sub_epi64(_mm512_setzero_si512(), run),
            ones,
            run,
            all(1),
        );
        // Past the regime and its last bit: es exponent bits (zeros where the word ends),
        // then the fraction. Shifts of 64 or more give zero.
        let rest = _mm512_sllv_epi64(body, _mm512_add_epi64(run, all(1)));
        let e = _mm512_srlv_epi64(rest, all(64 - es));
        let fraction = _mm512_srli_epi64::<12>(_mm512_sllv_epi64(rest, all(es)));
        let scale = _mm512_add_epi64(_mm512_sllv_epi64(k, all(es)), e);
        let bits = _mm512_or_si512(
            _mm512_slli_epi64::<52>(_mm512_add_epi64(scale, all(1023))),
            fraction,
        );
        let signed = _mm512_mask_or_epi64(bits, negative, bits, all(i64::MIN));
        let value = _mm512_maskz_mov_epi64(!zero_or_nar, signed);
        let mut values = [0.0f64; 8];
        _mm512_storeu_pd(values.as_mut_ptr(), _mm512_castsi512_pd(value));
        out.extend_from_slice(&values);
    }
    for &w in chunks.remainder() {
        if w >> n != 0 {
            out.truncate(start);
            return None;
        }
        let v = Family::to_f64(&p.f, w);
        any_nar |= u8::from(v.is_nan());
        out.push(if v.is_nan() { 0.0 } else { v });
    }
    Some(any_nar != 0)
}
