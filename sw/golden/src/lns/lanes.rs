//! LNS sums of products (naive, Kahan) in lockstep: up to 4 × 32 outputs at a time on
//! AVX-512, 4 × 16 on AVX2 (found at run time, the G tables read by gathers), and in
//! portable code otherwise. [`Lns::add_split`] and [`Lns::mul_split`] stay the definition;
//! the lanes compute the same operations in a form without branches, and this module's
//! tests and `kernel/tests.rs` hold the two to each other.
//!
//! The lanes' working value of a word is one i32, ±c with c = code − reserved: zero is 0
//! (the reserved code, no sign) and every other value has c ≥ 1, so that a block's padding
//! (0) is a zero. NaN is sticky and made by no operation on other words: the lockstep frame
//! (`kernel::lockstep`) gives it to the outputs whose row or column holds one, and the lanes
//! never see it. In this form, as in `add_split`: the larger magnitude leads and gives the
//! sign; d = |ca − cb| and the signs pick the entry of the merged G table; the result
//! saturates above the largest code and flushes at or below the reserved one. A zero
//! operand leaves the other: its d is taken past the tables (the last entry of each half
//! of the merged table is 0), so the sum is the other operand's own magnitude and sign.

use crate::arith::{Arith, Bits};
#[cfg(target_arch = "x86_64")]
use crate::kernel::lockstep::avx512;
use std::ops::Range;

use crate::kernel::lockstep::{lockstep, Lanes};

use super::Lns;

/// Outputs computed in lockstep per line of the other side: two AVX2 vectors of eight, for up
/// to four lines at once (eight independent chains against the latency of a Kahan step's four
/// table lookups, without padding a short side to more lanes).
const L: usize = 16;

/// The same on AVX-512: two vectors of sixteen.
const L512: usize = 32;

/// The lanes' form of an LNS context (from [`Lns::lanes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LnsLanes {
    lns: Lns,
    /// code_max − reserved: the largest magnitude c.
    cmax: i32,
}

impl Lns {
    /// The lockstep form of this context.
    pub(crate) fn lanes(&self) -> LnsLanes {
        LnsLanes {
            lns: *self,
            cmax: self.max - self.reserved,
        }
    }
}

impl LnsLanes {
    /// Every naive or Kahan dot product of `rows` with `cols`, row-major.
    pub(crate) fn dots(&self, kahan: bool, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let run = Run { l: *self, kahan };
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            return lockstep(&Run512(run), rows, cols);
        }
        lockstep(&run, rows, cols)
    }

    /// N lockstep sums in portable code.
    fn run_portable<const N: usize>(&self, kahan: bool, x: &[i32], y: &[[i32; N]]) -> [i32; N] {
        let (mut s, mut c) = ([0i32; N], [0i32; N]);
        for (&p, yk) in x.iter().zip(y) {
            for ((s, c), &q) in s.iter_mut().zip(c.iter_mut()).zip(yk) {
                let prod = self.mul(p, q);
                (*s, *c) = if kahan {
                    crate::sum::kahan_formula(
                        *s,
                        *c,
                        prod,
                        |a, b| self.add(a, b),
                        |a, b| self.sub(a, b),
                    )
                } else {
                    (self.add(*s, prod), *c)
                };
            }
        }
        s
    }
}

/// ±c with the sign of `neg` (a mask of all ones or zeros).
#[inline(always)]
fn signed(c: i32, neg: i32) -> i32 {
    (c ^ neg).wrapping_sub(neg)
}

/// The lanes' arithmetic on one value (the portable path, and the statement the vector code
/// follows operation by operation). NaN is not a value here.
impl Arith for LnsLanes {
    type Val = i32;
    #[inline(always)]
    fn load(&self, w: Bits) -> i32 {
        let v = self.lns.split(w);
        let c = v.code - self.lns.reserved;
        signed(c, -i32::from(v.neg))
    }
    #[inline(always)]
    fn store(&self, v: i32) -> Bits {
        self.lns.join(crate::lns::Split {
            neg: v < 0,
            code: v.unsigned_abs() as i32 + self.lns.reserved,
        })
    }
    #[inline(always)]
    fn zero(&self) -> i32 {
        0
    }
    #[inline(always)]
    fn add(&self, a: i32, b: i32) -> i32 {
        let (ma, mb) = (a.abs(), b.abs());
        let lead = if mb > ma { b } else { a };
        let zero = ma.min(mb) == 0;
        let d = (ma - mb).unsigned_abs() | (zero as u32).wrapping_neg();
        let stride = self.lns.stride as u32;
        let half = stride & ((a ^ b) >> 31) as u32;
        let g = self.lns.g[(half + d.min(stride - 1)) as usize];
        let c = (ma.max(mb) + g).min(self.cmax).max(0);
        signed(c, lead >> 31)
    }
    #[inline(always)]
    fn sub(&self, a: i32, b: i32) -> i32 {
        self.add(a, -b)
    }
    #[inline(always)]
    fn mul(&self, a: i32, b: i32) -> i32 {
        let (ma, mb) = (a.abs(), b.abs());
        let c = (ma + mb + self.lns.reserved).min(self.cmax).max(0);
        let c = if ma.min(mb) == 0 { 0 } else { c };
        signed(c, (a ^ b) >> 31)
    }
}

/// The frame's view of the lanes in one mode: L lanes, on AVX2 or in portable code.
struct Run {
    l: LnsLanes,
    kahan: bool,
}

impl Run {
    fn value(&self, w: Bits) -> Option<i32> {
        let v = self.l.lns.split(w);
        let nan = v.neg && v.code == self.l.lns.reserved;
        (!nan).then(|| self.l.load(w))
    }
}

/// The same lanes, L512 wide, on AVX-512 (made only where the machine has it).
#[cfg(target_arch = "x86_64")]
struct Run512(Run);

#[cfg(target_arch = "x86_64")]
impl Lanes<i32, L512> for Run512 {
    fn value(&self, w: Bits) -> Option<i32> {
        self.0.value(w)
    }
    fn special(&self) -> Bits {
        self.0.l.lns.fmt.nan()
    }
    fn encode(&self, v: i32) -> Bits {
        self.0.l.store(v)
    }
    fn run(&self, xs: &[&[i32]], y: &[[i32; L512]], out: &mut [[i32; L512]]) {
        self.run_skipping(xs, y, &[], out)
    }
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn run_skipping(
        &self,
        xs: &[&[i32]],
        y: &[[i32; L512]],
        skip: &[Range<usize>],
        out: &mut [[i32; L512]],
    ) {
        assert!(avx512(), "Run512 is made where the machine has AVX-512");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run(&self.0.l, self.0.kahan, xs, y, skip, out) }
    }
}

impl Lanes<i32, L> for Run {
    fn value(&self, w: Bits) -> Option<i32> {
        Run::value(self, w)
    }
    fn special(&self) -> Bits {
        self.l.lns.fmt.nan()
    }
    fn encode(&self, v: i32) -> Bits {
        self.l.store(v)
    }
    fn run(&self, xs: &[&[i32]], y: &[[i32; L]], out: &mut [[i32; L]]) {
        self.run_skipping(xs, y, &[], out)
    }
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn run_skipping(
        &self,
        xs: &[&[i32]],
        y: &[[i32; L]],
        skip: &[Range<usize>],
        out: &mut [[i32; L]],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2::run(&self.l, self.kahan, xs, y, skip, out) };
        }
        // Every step, the skipped ones too (the same sums).
        for (x, out) in xs.iter().zip(out) {
            *out = self.l.run_portable(self.kahan, x, y);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
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
    }

    /// `LnsLanes::add` of eight lanes.
    #[inline(always)]
    unsafe fn add(k: &Consts, a: __m256i, b: __m256i) -> __m256i {
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
        let neg = _mm256_srai_epi32(lead, 31);
        _mm256_sub_epi32(_mm256_xor_si256(c, neg), neg)
    }

    /// `LnsLanes::mul` of eight lanes.
    #[inline(always)]
    unsafe fn mul(k: &Consts, a: __m256i, b: __m256i) -> __m256i {
        let (ma, mb) = (_mm256_abs_epi32(a), _mm256_abs_epi32(b));
        let c = _mm256_add_epi32(_mm256_add_epi32(ma, mb), k.reserved);
        let c = _mm256_max_epi32(_mm256_min_epi32(c, k.cmax), _mm256_setzero_si256());
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
        by_rows!(run_rows(l, kahan, skip; xs, y, out));
    }

    /// [`run`] of R lines: 2·R vectors of eight lanes. Each vector takes its whole step in
    /// turn: with AVX2's sixteen registers, doing each operation in all 2·R vectors first (as
    /// the AVX-512 form does) spills, and ran naive sums at half the speed.
    #[target_feature(enable = "avx2")]
    unsafe fn run_rows<const R: usize>(
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
        };
        let addv = |a, b| add(&k, a, b);
        let subv = |a, b| add(&k, a, _mm256_sub_epi32(_mm256_setzero_si256(), b));
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
                        step(&mut s, &mut c, r, v, mul(&k, a, q));
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
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use crate::kernel::lockstep::{by_rows, segments, zero_run};

    use super::{LnsLanes, L512 as L};

    /// The sums and compensations of R lines' two vectors of lanes.
    type State<const R: usize> = ([[__m512i; 2]; R], [[__m512i; 2]; R]);

    /// The constants of the vector operations.
    struct Consts<'a> {
        g: &'a [i32],
        stride: __m512i,
        last: __m512i,
        cmax: __m512i,
        reserved: __m512i,
    }

    /// `LnsLanes::add` of sixteen lanes.
    #[inline(always)]
    unsafe fn add(k: &Consts, a: __m512i, b: __m512i) -> __m512i {
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
        _mm512_mask_sub_epi32(c, _mm512_movepi32_mask(lead), zero, c)
    }

    /// `a ± b` ([`add`]) in every vector of R lines. One vector's chain of four dependent
    /// gathers (a Kahan step) would leave the core waiting; the 2·R gathers of one operation
    /// are independent. Written as loops, not closures over arrays, which the compiler left
    /// as calls (1.5× the epoch's time).
    #[inline(always)]
    unsafe fn each<const R: usize>(
        k: &Consts,
        a: &[[__m512i; 2]; R],
        b: &[[__m512i; 2]; R],
        neg: bool,
    ) -> [[__m512i; 2]; R] {
        let mut out = *a;
        for r in 0..R {
            for v in 0..2 {
                let b = match neg {
                    true => _mm512_sub_epi32(_mm512_setzero_si512(), b[r][v]),
                    false => b[r][v],
                };
                out[r][v] = add(k, a[r][v], b);
            }
        }
        out
    }

    /// `LnsLanes::mul` of sixteen lanes.
    #[inline(always)]
    unsafe fn mul(k: &Consts, a: __m512i, b: __m512i) -> __m512i {
        let zero = _mm512_setzero_si512();
        let (ma, mb) = (_mm512_abs_epi32(a), _mm512_abs_epi32(b));
        let c = _mm512_add_epi32(_mm512_add_epi32(ma, mb), k.reserved);
        let c = _mm512_max_epi32(_mm512_min_epi32(c, k.cmax), zero);
        let nonzero = _mm512_cmpneq_epi32_mask(_mm512_min_epi32(ma, mb), zero);
        let c = _mm512_maskz_mov_epi32(nonzero, c);
        let neg = _mm512_movepi32_mask(_mm512_xor_si512(a, b));
        _mm512_mask_sub_epi32(c, neg, zero, c)
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
        by_rows!(run_rows(l, kahan, skip; xs, y, out));
    }

    /// [`run`] of R lines: 2·R vectors of sixteen lanes.
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn run_rows<const R: usize>(
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
            stride: _mm512_set1_epi32(l.lns.stride as i32),
            last: _mm512_set1_epi32(l.lns.stride as i32 - 1),
            cmax: _mm512_set1_epi32(l.cmax),
            reserved: _mm512_set1_epi32(l.lns.reserved),
        };
        // Every operation of a step is done in all 2·R vectors before the next one, so that
        // their table gathers sit side by side ([`each`]).
        let addv = |a, b| each(&k, &a, &b, false);
        let subv = |a, b| each(&k, &a, &b, true);
        let z = _mm512_setzero_si512();
        let (mut s, mut c) = ([[z; 2]; R], [[z; 2]; R]);
        let step = |s: &mut [[__m512i; 2]; R], c: &mut [[__m512i; 2]; R], p: [[__m512i; 2]; R]| {
            (*s, *c) = if kahan {
                crate::sum::kahan_formula(*s, *c, p, addv, subv)
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
                    *p = [mul(&k, a, q[0]), mul(&k, a, q[1])];
                }
                // The step written out (`step` is a closure the compiler may leave as a call).
                (s, c) = if kahan {
                    crate::sum::kahan_formula(s, c, p, addv, subv)
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
}

#[cfg(test)]
mod tests;
