//! A line's steps for the sparse frame ([`mod@super::sparse`]): its nonzero values with their k,
//! and with `runs` the first zero of each of its runs of zeros. The plain loops are the
//! definition; on AVX-512 the working values of the posit (f64) and LNS (i32) lanes are
//! counted and compacted a vector at a time (a mask of the steps, `vpcompress` in a
//! register and a whole vector stored), and on AVX2 the LNS lanes' (i32, `vpermd` by a table
//! of the masks), which the tests hold to the plain loops.

/// Whether a value (`after_zero`: the one before it is a zero; false at k 0) is a step of
/// its line (a nonzero value, or with `runs` the first zero of a run), and whether it is a
/// zero.
#[inline(always)]
fn is_step<T: Copy + Default + PartialEq>(v: T, runs: bool, after_zero: bool) -> (bool, bool) {
    let zero = v == T::default();
    (!zero | (runs & !after_zero), zero)
}

/// How many of `line`'s values are steps.
pub(crate) fn count_plain<T: Copy + Default + PartialEq>(line: &[T], runs: bool) -> usize {
    let mut after_zero = false;
    (line.iter())
        .map(|&v| {
            let (step, zero) = is_step(v, runs, after_zero);
            after_zero = zero;
            usize::from(step)
        })
        .sum()
}

/// `line`'s steps written to the fronts of `ks` and `vs`; returns their count. Every value is
/// written and the position moves on past the steps (no branch on the data), so past the
/// count the slots hold the line's last zero and its k, or what they held.
pub(crate) fn compact_plain<T: Copy + Default + PartialEq>(
    line: &[T],
    runs: bool,
    ks: &mut [u32],
    vs: &mut [T],
) -> usize {
    let (mut at, mut after_zero) = (0, false);
    for (i, &v) in line.iter().enumerate() {
        (ks[at], vs[at]) = (i as u32, v);
        let step;
        (step, after_zero) = is_step(v, runs, after_zero);
        at += usize::from(step);
    }
    at
}

/// Slots the frame leaves past a line's longest count for [`Steps::compact`]'s whole-vector
/// stores.
pub(crate) const SLACK: usize = 16;

/// The working values whose lines the sparse frame takes apart.
pub(crate) trait Steps: Copy + Default + PartialEq {
    /// [`count_plain`], unless a faster form gives the same count.
    fn count(line: &[Self], runs: bool) -> usize {
        count_plain(line, runs)
    }
    /// The steps of `line` at the fronts of `ks` and `vs` (each at least `line.len()` +
    /// [`SLACK`] long), and their count; past the count, up to the line's length, the slots
    /// hold zero values at k of the line or what they held. [`compact_plain`], unless a
    /// faster form gives the same.
    fn compact(line: &[Self], runs: bool, ks: &mut [u32], vs: &mut [Self]) -> usize {
        compact_plain(line, runs, ks, vs)
    }
}

impl Steps for f32 {}

impl Steps for f64 {
    fn count(line: &[f64], runs: bool) -> usize {
        #[cfg(target_arch = "x86_64")]
        if super::avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { avx512::count_f64(line, runs) };
        }
        count_plain(line, runs)
    }
    fn compact(line: &[f64], runs: bool, ks: &mut [u32], vs: &mut [f64]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if super::avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { avx512::compact_f64(line, runs, ks, vs) };
        }
        compact_plain(line, runs, ks, vs)
    }
}

impl Steps for i32 {
    fn count(line: &[i32], runs: bool) -> usize {
        #[cfg(target_arch = "x86_64")]
        if super::avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { avx512::count_i32(line, runs) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::count_i32(line, runs) };
        }
        count_plain(line, runs)
    }
    fn compact(line: &[i32], runs: bool, ks: &mut [u32], vs: &mut [i32]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if super::avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { avx512::compact_i32(line, runs, ks, vs) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::compact_i32(line, runs, ks, vs) };
        }
        compact_plain(line, runs, ks, vs)
    }
}

/// The i32 steps on AVX2, eight values a vector: AVX2 has no `vpcompress`, so a vector's
/// steps are moved to its front by `vpermd` with the indices of a table of every 8-bit mask.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// For each mask of eight lanes, the lanes whose bit is set, in order, then zeros: the
    /// permutation that moves them to the front.
    const FRONT: [[i32; 8]; 256] = {
        let mut t = [[0i32; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut at, mut lane) = (0, 0usize);
            while lane < 8 {
                if m >> lane & 1 == 1 {
                    t[m][at] = lane as i32;
                    at += 1;
                }
                lane += 1;
            }
            m += 1;
        }
        t
    };

    /// The steps among `n` values whose nonzero ones are the bits of `nonzero`, the value
    /// before them nonzero where `carry` is 1 (so at k 0): a nonzero value, or with `runs` a
    /// zero after a nonzero one.
    #[inline(always)]
    fn step_mask(nonzero: u32, carry: u32, runs: bool, n: usize) -> u32 {
        let heads = if runs { (nonzero << 1) | carry } else { 0 };
        (nonzero | heads) & ((1 << n) - 1)
    }

    /// Up to eight i32s from `line[at..]` (`n` of them; zeros past them) and their nonzero
    /// lanes.
    #[inline(always)]
    unsafe fn nonzero_i32(line: &[i32], at: usize, n: usize) -> (__m256i, u32) {
        let v = if n == 8 {
            _mm256_loadu_si256(line.as_ptr().add(at).cast())
        } else {
            let mut part = [0i32; 8];
            part[..n].copy_from_slice(&line[at..at + n]);
            _mm256_loadu_si256(part.as_ptr().cast())
        };
        let zero = _mm256_cmpeq_epi32(v, _mm256_setzero_si256());
        let nz = !(_mm256_movemask_ps(_mm256_castsi256_ps(zero)) as u32) & 0xff;
        (v, nz)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_i32(line: &[i32], runs: bool) -> usize {
        let (mut count, mut carry) = (0, 1);
        for at in (0..line.len()).step_by(8) {
            let n = (line.len() - at).min(8);
            let (_, nz) = nonzero_i32(line, at, n);
            count += step_mask(nz, carry, runs, n).count_ones() as usize;
            carry = (nz >> 7) & 1;
        }
        count
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compact_i32(
        line: &[i32],
        runs: bool,
        ks: &mut [u32],
        vs: &mut [i32],
    ) -> usize {
        assert!(ks.len() >= line.len() + 8 && vs.len() >= line.len() + 8);
        let (mut count, mut carry) = (0, 1);
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for at in (0..line.len()).step_by(8) {
            let n = (line.len() - at).min(8);
            let (v, nz) = nonzero_i32(line, at, n);
            let steps = step_mask(nz, carry, runs, n);
            carry = (nz >> 7) & 1;
            let front = _mm256_loadu_si256(FRONT[steps as usize].as_ptr().cast());
            // SAFETY: count ≤ at, so the stores end within the slack asserted above.
            // The lanes past the steps hold zero values (at the first lane's k).
            let kept = _mm256_cmpgt_epi32(_mm256_set1_epi32(steps.count_ones() as i32), lanes);
            let values = _mm256_and_si256(_mm256_permutevar8x32_epi32(v, front), kept);
            _mm256_storeu_si256(vs.as_mut_ptr().add(count).cast(), values);
            let k = _mm256_add_epi32(_mm256_set1_epi32(at as i32), lanes);
            let k = _mm256_permutevar8x32_epi32(k, front);
            _mm256_storeu_si256(ks.as_mut_ptr().add(count).cast(), k);
            count += steps.count_ones() as usize;
        }
        count
    }

    /// [`count_i32`] and [`compact_i32`] for the tests (on a machine with AVX2).
    #[cfg(test)]
    pub(super) fn both(line: &[i32], runs: bool, ks: &mut [u32], vs: &mut [i32]) -> (usize, usize) {
        assert!(std::is_x86_feature_detected!("avx2"));
        // SAFETY: the CPU has AVX2 (asserted just above).
        unsafe { (count_i32(line, runs), compact_i32(line, runs, ks, vs)) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// The steps among `n` values whose nonzero ones are the bits of `nonzero`, the value
    /// before them nonzero where `carry` is 1 (so at k 0): a nonzero value, or with `runs` a
    /// zero after a nonzero one.
    #[inline(always)]
    fn step_mask(nonzero: u32, carry: u32, runs: bool, n: usize) -> u32 {
        let all = if n == 32 { !0 } else { (1 << n) - 1 };
        let heads = if runs { (nonzero << 1) | carry } else { 0 };
        (nonzero | heads) & all
    }

    /// The k of `at`, `at` + 1, … in sixteen lanes.
    #[inline(always)]
    unsafe fn iota(at: usize) -> __m512i {
        let base = _mm512_set1_epi32(at as i32);
        _mm512_add_epi32(
            base,
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        )
    }

    /// The nonzero lanes of up to eight f64s from `line[at..]` (`n` of them).
    #[inline(always)]
    unsafe fn nonzero_f64(line: &[f64], at: usize, n: usize) -> (__m512d, u32) {
        let load = ((1u32 << n) - 1) as __mmask8;
        let v = _mm512_maskz_loadu_pd(load, line.as_ptr().add(at));
        // Not equal, unordered: as `!=` (−0 is a zero, NaN is not).
        let nz = _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(v, _mm512_setzero_pd());
        (v, u32::from(nz))
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn count_f64(line: &[f64], runs: bool) -> usize {
        let (mut count, mut carry) = (0, 1);
        for at in (0..line.len()).step_by(8) {
            let n = (line.len() - at).min(8);
            let (_, nz) = nonzero_f64(line, at, n);
            count += step_mask(nz, carry, runs, n).count_ones() as usize;
            carry = (nz >> 7) & 1;
        }
        count
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn compact_f64(
        line: &[f64],
        runs: bool,
        ks: &mut [u32],
        vs: &mut [f64],
    ) -> usize {
        assert!(ks.len() >= line.len() + 16 && vs.len() >= line.len() + 8);
        let (mut count, mut carry) = (0, 1);
        for at in (0..line.len()).step_by(8) {
            let n = (line.len() - at).min(8);
            let (v, nz) = nonzero_f64(line, at, n);
            let steps = step_mask(nz, carry, runs, n);
            carry = (nz >> 7) & 1;
            // SAFETY: count ≤ at, so the stores end within the slack asserted above.
            let values = _mm512_maskz_compress_pd(steps as __mmask8, v);
            _mm512_storeu_pd(vs.as_mut_ptr().add(count), values);
            let k = _mm512_maskz_compress_epi32(steps as __mmask16, iota(at));
            _mm512_storeu_si512(ks.as_mut_ptr().add(count).cast(), k);
            count += steps.count_ones() as usize;
        }
        count
    }

    /// The nonzero lanes of up to sixteen i32s from `line[at..]` (`n` of them).
    #[inline(always)]
    unsafe fn nonzero_i32(line: &[i32], at: usize, n: usize) -> (__m512i, u32) {
        let load = ((1u32 << n) - 1) as __mmask16;
        let v = _mm512_maskz_loadu_epi32(load, line.as_ptr().add(at));
        let nz = _mm512_cmpneq_epi32_mask(v, _mm512_setzero_si512());
        (v, u32::from(nz))
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn count_i32(line: &[i32], runs: bool) -> usize {
        let (mut count, mut carry) = (0, 1);
        for at in (0..line.len()).step_by(16) {
            let n = (line.len() - at).min(16);
            let (_, nz) = nonzero_i32(line, at, n);
            count += step_mask(nz, carry, runs, n).count_ones() as usize;
            carry = (nz >> 15) & 1;
        }
        count
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn compact_i32(
        line: &[i32],
        runs: bool,
        ks: &mut [u32],
        vs: &mut [i32],
    ) -> usize {
        assert!(ks.len() >= line.len() + 16 && vs.len() >= line.len() + 16);
        let (mut count, mut carry) = (0, 1);
        for at in (0..line.len()).step_by(16) {
            let n = (line.len() - at).min(16);
            let (v, nz) = nonzero_i32(line, at, n);
            let steps = step_mask(nz, carry, runs, n);
            carry = (nz >> 15) & 1;
            // SAFETY: count ≤ at, so the stores end within the slack asserted above.
            let values = _mm512_maskz_compress_epi32(steps as __mmask16, v);
            _mm512_storeu_si512(vs.as_mut_ptr().add(count).cast(), values);
            let k = _mm512_maskz_compress_epi32(steps as __mmask16, iota(at));
            _mm512_storeu_si512(ks.as_mut_ptr().add(count).cast(), k);
            count += steps.count_ones() as usize;
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of `len` values from `value`, zero with probability `zeros`/8, in runs.
    fn line<T: Copy>(
        len: usize,
        zeros: u64,
        r: &mut impl FnMut() -> u64,
        value: impl Fn(u64) -> T,
        zero: T,
    ) -> Vec<T> {
        let mut in_run = false;
        (0..len)
            .map(|_| {
                in_run = r() % 8 < zeros || (in_run && r().is_multiple_of(2));
                if in_run {
                    zero
                } else {
                    value(r())
                }
            })
            .collect()
    }

    /// Both forms on one line: the same count, the same steps, and past the count zero
    /// values at k of the line (or the slots' zeros) up to the line's length.
    fn check<T: Steps + std::fmt::Debug>(line: &[T], runs: bool) {
        let n = line.len() + SLACK;
        let (mut ks, mut vs) = (vec![0u32; n], vec![T::default(); n]);
        let (mut pk, mut pv) = (vec![0u32; n], vec![T::default(); n]);
        let want = compact_plain(line, runs, &mut pk, &mut pv);
        assert_eq!(count_plain(line, runs), want, "{line:?}");
        assert_eq!(T::count(line, runs), want, "count {line:?} runs {runs}");
        let got = T::compact(line, runs, &mut ks, &mut vs);
        assert_eq!(got, want, "compact {line:?} runs {runs}");
        assert_eq!(&ks[..got], &pk[..got], "{line:?}");
        // By their Debug forms, NaN being a step's value.
        assert_eq!(
            format!("{:?}", &vs[..got]),
            format!("{:?}", &pv[..got]),
            "{line:?}"
        );
        for at in got..line.len() {
            assert_eq!(vs[at], T::default(), "padding at {at} of {line:?}");
            assert!((ks[at] as usize) < line.len().max(1));
        }
    }

    /// The AVX2 form of the i32 steps (on any machine with AVX2, AVX-512 ones too) as
    /// [`check`] holds the dispatched one.
    #[cfg(target_arch = "x86_64")]
    fn check_avx2(line: &[i32], runs: bool) {
        let n = line.len() + SLACK;
        let (mut ks, mut vs) = (vec![0u32; n], vec![0; n]);
        let (mut pk, mut pv) = (vec![0u32; n], vec![0; n]);
        let want = compact_plain(line, runs, &mut pk, &mut pv);
        let (count, got) = avx2::both(line, runs, &mut ks, &mut vs);
        assert_eq!((count, got), (want, want), "AVX2 {line:?} runs {runs}");
        assert_eq!(
            (&ks[..got], &vs[..got]),
            (&pk[..got], &pv[..got]),
            "{line:?}"
        );
        for at in got..line.len() {
            assert_eq!(vs[at], 0, "AVX2 padding at {at} of {line:?}");
            assert!((ks[at] as usize) < line.len().max(1));
        }
    }

    /// The vector forms (on a machine with AVX-512 or AVX2) against the plain loops: lines of 0 to
    /// 70 values (past and between the vectors' widths), none to all zeros, in runs,
    /// −0 (a zero) and NaN (not one) among the f64s, both kinds of steps.
    #[test]
    fn vector_steps_are_the_plain_steps() {
        let mut r = crate::test_words(23);
        for len in 0..=70 {
            for zeros in 0..=8 {
                for runs in [false, true] {
                    let l: Vec<f64> = line(
                        len,
                        zeros,
                        &mut r,
                        |w| match w % 16 {
                            0 => -0.0,
                            1 => f64::NAN,
                            _ => (w % 1000) as f64 - 500.0,
                        },
                        0.0,
                    );
                    check(&l, runs);
                    let l: Vec<i32> = line(len, zeros, &mut r, |w| (w % 200) as i32 - 100, 0);
                    check(&l, runs);
                    #[cfg(target_arch = "x86_64")]
                    if std::is_x86_feature_detected!("avx2") {
                        check_avx2(&l, runs);
                    }
                }
            }
        }
    }
}
