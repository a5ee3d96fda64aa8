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
use crate::AluOp;
use std::ops::Range;

use crate::kernel::lockstep::{lockstep, sparse_either, Lanes, ROWS};

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
    /// The code bits every result keeps (`--keep-bits`: [`Lns::clear_low_bits`]); all of
    /// them where no bits are cleared.
    keep: i32,
    /// The table of Kahan steps (`kahan.rs`), where the format has one and no bits are
    /// cleared.
    steps: Option<&'static KahanSteps>,
    /// For each half of the G table (same signs, opposite signs), the least d from which
    /// every entry is 0 (the test of `LnsLanes::zero_step_keeps`); `None` where bits are
    /// cleared (`--keep-bits`) or where G's last entries are not 0.
    still: Option<[i32; 2]>,
}

impl Lns {
    /// The lockstep form of this context.
    pub(crate) fn lanes(&self) -> LnsLanes {
        self.lanes_keeping(self.fmt.frac_bits)
    }

    /// The lockstep form of this context with every result's code cleared below its top `n`
    /// fraction bits ([`Lns::clear_low_bits`]).
    fn lanes_keeping(&self, n: u32) -> LnsLanes {
        let dropped = self.fmt.frac_bits.saturating_sub(n);
        let l = LnsLanes {
            lns: *self,
            cmax: self.max - self.reserved,
            keep: !((1i32 << dropped) - 1),
            steps: None,
            still: None,
        };
        LnsLanes {
            steps: (!l.keeps()).then(|| KahanSteps::get(&l)).flatten(),
            still: (!l.keeps()).then(|| l.zero_still()).flatten(),
            ..l
        }
    }

    /// Every naive or Kahan dot product of `rows` with `cols` (row-major) with every
    /// operation's result cleared below its top `n` fraction bits (`--keep-bits`, seed 000
    /// §4.5): [`Lns::dot_keeping`] of each, on the lockstep lanes.
    pub fn dots_keeping(
        &self,
        n: u32,
        kahan: bool,
        rows: &[&[Bits]],
        cols: &[&[Bits]],
    ) -> Vec<Bits> {
        self.lanes_keeping(n).dots(kahan, rows, cols)
    }
}

impl LnsLanes {
    /// Whether results lose code bits (`--keep-bits`).
    fn keeps(&self) -> bool {
        self.keep != -1
    }

    /// Magnitude `c` = code − reserved with the code bits [`LnsLanes::keep`] clears cleared.
    /// The reserved code, −2^(L−1), has none of them set, so clearing them in c clears them in
    /// the code, and a code cleared down to the reserved one is zero (c = 0), as
    /// [`Lns::clear_low_bits`] flushes it.
    #[inline(always)]
    fn kept(&self, c: i32) -> i32 {
        c & self.keep
    }

    /// For each half of the G table, the least d from which every entry of the half is 0,
    /// if the last entry of both is: then s ⊕ c is s where |s| − |c| is at least that d,
    /// and x ⊕ 0 is x.
    fn zero_still(&self) -> Option<[i32; 2]> {
        let (g, stride) = (self.lns.g, self.lns.stride);
        let half = |h: usize| &g[h * stride..(h + 1) * stride];
        if half(0).last() != Some(&0) || half(1).last() != Some(&0) {
            return None;
        }
        let from = |h: usize| half(h).iter().rposition(|&v| v != 0).map_or(0, |d| d + 1);
        Some([from(0) as i32, from(1) as i32])
    }

    /// Whether a Kahan step that adds a zero product (`sum::kahan_formula` of s, c and 0)
    /// leaves the sum s and compensation c as they are, by a test that needs no table: c
    /// is 0, or |s| exceeds |c| by at least the d from which G's half for their signs is
    /// 0 (so t = s ⊕ c is s, t ⊖ s is 0, and c' = c ⊖ 0 is c). Never true of a state the
    /// step changes; false wherever bits are cleared (`--keep-bits`). The statement the
    /// vector lanes' test follows (`avx512::zero_step_keeps`), held to the formula by the
    /// tests.
    #[cfg(test)]
    fn zero_step_keeps(&self, s: i32, c: i32) -> bool {
        let Some(still) = self.still else {
            return false;
        };
        c == 0 || s.abs() - c.abs() >= still[usize::from((s ^ c) < 0)]
    }

    /// Every naive or Kahan dot product of `rows` with `cols`, row-major.
    pub(crate) fn dots(&self, kahan: bool, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let run = Run { l: *self, kahan };
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            return sparse_either(&Run512(run), &Half512(run), rows, cols);
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return sparse_either(&Steps2(run), &Half2(run), rows, cols);
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

    /// `a + b`, `a − b` or `a · b` of each pair of words (`op`: [`AluOp::Add`], `Sub` or
    /// `Mul`; `false` for any other, which the caller does word by word), into `out`: the
    /// lanes' operations on AVX-512 or AVX2, a block of words decoded, operated on a vector
    /// at a time and encoded; a NaN operand gives NaN. Where the machine has neither,
    /// `false`. `Lns::add`, `sub` and `mul` stay the definition (the tests hold these to
    /// them).
    pub(crate) fn binop_words(&self, op: AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
        if !matches!(op, AluOp::Add | AluOp::Sub | AluOp::Mul) {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            type Vector = unsafe fn(&LnsLanes, AluOp, &[i32], &[i32], &mut [i32]);
            let (vector, width): (Vector, usize) = if avx512() {
                (avx512::binop, 16)
            } else if std::is_x86_feature_detected!("avx2") {
                (avx2::binop, 8)
            } else {
                return false;
            };
            self.binop_blocks(op, a, b, out, |x, y, r| {
                // SAFETY: the CPU has the vector unit `vector` was compiled for (checked
                // just above).
                unsafe { vector(self, op, x, y, r) };
                r.len() / width * width
            });
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (a, b, out);
            false
        }
    }

    /// [`LnsLanes::binop_words`] by blocks: each block's words decoded, `vector` run on the
    /// working values (it returns how many it did, from the first), the rest done one by one,
    /// encoded, and NaN written where an operand is NaN.
    #[cfg(target_arch = "x86_64")]
    fn binop_blocks(
        &self,
        op: AluOp,
        a: &[Bits],
        b: &[Bits],
        out: &mut [Bits],
        vector: impl Fn(&[i32], &[i32], &mut [i32]) -> usize,
    ) {
        let run = Run {
            l: *self,
            kahan: false,
        };
        let nan = self.lns.fmt.nan();
        const BLOCK: usize = 1024;
        let (mut x, mut y, mut r) = (
            Vec::with_capacity(BLOCK),
            Vec::with_capacity(BLOCK),
            vec![0i32; BLOCK],
        );
        for ((o, a), b) in out
            .chunks_mut(BLOCK)
            .zip(a.chunks(BLOCK))
            .zip(b.chunks(BLOCK))
        {
            x.clear();
            y.clear();
            let nans = run.decode(a, &mut x) | run.decode(b, &mut y);
            let r = &mut r[..o.len()];
            let done = vector(&x, &y, r);
            for i in done..o.len() {
                r[i] = match op {
                    AluOp::Add => self.add(x[i], y[i]),
                    AluOp::Sub => self.sub(x[i], y[i]),
                    _ => self.mul(x[i], y[i]),
                };
            }
            for (o, &v) in o.iter_mut().zip(r.iter()) {
                *o = self.store(v);
            }
            if nans {
                for ((o, &a), &b) in o.iter_mut().zip(a).zip(b) {
                    if a == nan || b == nan {
                        *o = nan;
                    }
                }
            }
        }
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
        let c = self.kept((ma.max(mb) + g).min(self.cmax).max(0));
        signed(c, lead >> 31)
    }
    #[inline(always)]
    fn sub(&self, a: i32, b: i32) -> i32 {
        self.add(a, -b)
    }
    #[inline(always)]
    fn mul(&self, a: i32, b: i32) -> i32 {
        let (ma, mb) = (a.abs(), b.abs());
        let c = self.kept((ma + mb + self.lns.reserved).min(self.cmax).max(0));
        let c = if ma.min(mb) == 0 { 0 } else { c };
        signed(c, (a ^ b) >> 31)
    }
}

/// The frame's view of the lanes in one mode: L lanes, on AVX2 or in portable code.
#[derive(Clone, Copy)]
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

    /// [`Run::value`] of each word of `line` (NaN as zero) appended to `out`, and whether one
    /// was NaN: the same operations written without a branch, so that they vectorize (on
    /// AVX-512 or AVX2, whichever the machine has: AVX2's took an lns:5:6 LeNet-5 epoch 0.97×
    /// the time of the portable code's on a machine without AVX-512).
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { self.decode_avx512(line, out) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.decode_avx2(line, out) };
        }
        self.decode_plain(line, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decode_avx2(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.decode_plain(line, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn decode_avx512(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.decode_plain(line, out)
    }

    #[inline(always)]
    fn decode_plain(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        let (lw, reserved) = (self.l.lns.lw, self.l.lns.reserved);
        let sh = 64 - lw;
        let start = out.len();
        out.resize(start + line.len(), 0);
        // A loop over two slices with the flag in a local: the form the compiler vectorizes.
        let mut nan = false;
        for (v, &w) in out[start..].iter_mut().zip(line) {
            // `Lns::split`, and `LnsLanes::load` of its parts.
            let neg = (w >> lw) & 1 == 1;
            let code = ((w << sh) as i64 >> sh) as i32;
            // NaN (negative, the reserved code) comes out as zero by itself.
            nan |= neg & (code == reserved);
            *v = signed(code - reserved, -i32::from(neg));
        }
        nan
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
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.0.decode(line, out)
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
    fn rows_at_once(&self) -> usize {
        avx512::lines(self.0.kahan)
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
    fn zero_products_leave_sums(&self) -> bool {
        !self.0.kahan
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L512]], out: &mut [[i32; L512]]) {
        assert!(avx512() && !self.0.kahan, "Run512 in naive sums");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_steps(&self.0.l, false, xs, y, out) }
    }
    fn steps_runs(&self) -> bool {
        self.0.kahan
    }
    fn run_runs(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L512]], out: &mut [[i32; L512]]) {
        assert!(avx512() && self.0.kahan, "Run512 in Kahan sums");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_steps(&self.0.l, true, xs, y, out) }
    }
}

/// Sums on AVX-512, one vector of sixteen lanes a line, for lines given as their steps
/// against a wide side of at most sixteen lines (a convolution's six or sixteen channels),
/// which two vectors would run mostly empty. Only the sparse frame ([`sparse_either`])
/// takes it.
#[cfg(target_arch = "x86_64")]
struct Half512(Run);

#[cfg(target_arch = "x86_64")]
impl Lanes<i32, L> for Half512 {
    fn value(&self, w: Bits) -> Option<i32> {
        self.0.value(w)
    }
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.0.decode(line, out)
    }
    fn special(&self) -> Bits {
        self.0.l.lns.fmt.nan()
    }
    fn encode(&self, v: i32) -> Bits {
        self.0.l.store(v)
    }
    /// The dense lines on the AVX2 lanes (the same sums).
    fn run(&self, xs: &[&[i32]], y: &[[i32; L]], out: &mut [[i32; L]]) {
        self.0.run(xs, y, out)
    }
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn zero_products_leave_sums(&self) -> bool {
        !self.0.kahan
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L]], out: &mut [[i32; L]]) {
        assert!(avx512() && !self.0.kahan, "Half512 in naive sums");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_steps16(&self.0.l, false, xs, y, out) }
    }
    fn steps_runs(&self) -> bool {
        self.0.kahan
    }
    /// Eight lines of one vector: as many independent gathers a step as four of two; and
    /// sixteen, two a vector, against a side of at most eight lines (`avx512::pairs`).
    fn lines_at_once(&self) -> usize {
        4 * ROWS
    }
    fn run_runs(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L]], out: &mut [[i32; L]]) {
        assert!(avx512() && self.0.kahan, "Half512 in Kahan sums");
        // SAFETY: the CPU has AVX-512 F and DQ (asserted just above).
        unsafe { avx512::run_steps16(&self.0.l, true, xs, y, out) }
    }
}

/// The AVX2 lanes (two vectors of eight a line) for the sparse frame as well as the dense
/// one: lines given as their steps go to `avx2::run_steps` (made only where the machine has
/// AVX2).
#[cfg(target_arch = "x86_64")]
struct Steps2(Run);

#[cfg(target_arch = "x86_64")]
impl Lanes<i32, L> for Steps2 {
    fn value(&self, w: Bits) -> Option<i32> {
        self.0.value(w)
    }
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.0.decode(line, out)
    }
    fn special(&self) -> Bits {
        self.0.l.lns.fmt.nan()
    }
    fn encode(&self, v: i32) -> Bits {
        self.0.l.store(v)
    }
    fn run(&self, xs: &[&[i32]], y: &[[i32; L]], out: &mut [[i32; L]]) {
        self.0.run(xs, y, out)
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
        self.0.run_skipping(xs, y, skip, out)
    }
    fn zero_products_leave_sums(&self) -> bool {
        !self.0.kahan
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L]], out: &mut [[i32; L]]) {
        assert!(std::is_x86_feature_detected!("avx2") && !self.0.kahan);
        // SAFETY: the CPU has AVX2 (asserted just above).
        unsafe { avx2::run_steps(&self.0.l, false, xs, y, out) }
    }
    fn steps_runs(&self) -> bool {
        self.0.kahan
    }
    fn lines_at_once(&self) -> usize {
        avx2::lines(2)
    }
    fn run_runs(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L]], out: &mut [[i32; L]]) {
        assert!(std::is_x86_feature_detected!("avx2") && self.0.kahan);
        // SAFETY: the CPU has AVX2 (asserted just above).
        unsafe { avx2::run_steps(&self.0.l, true, xs, y, out) }
    }
}

/// Lanes of one AVX2 vector of eight a line, for lines given as their steps against a wide
/// side of at most eight lines (a convolution's six channels), which two vectors would run
/// mostly empty. Only the sparse frame ([`sparse_either`]) takes it.
#[cfg(target_arch = "x86_64")]
struct Half2(Run);

/// Lanes of [`Half2`].
#[cfg(target_arch = "x86_64")]
const L8: usize = 8;

#[cfg(target_arch = "x86_64")]
impl Lanes<i32, L8> for Half2 {
    fn value(&self, w: Bits) -> Option<i32> {
        self.0.value(w)
    }
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        self.0.decode(line, out)
    }
    fn special(&self) -> Bits {
        self.0.l.lns.fmt.nan()
    }
    fn encode(&self, v: i32) -> Bits {
        self.0.l.store(v)
    }
    /// The dense lines in portable code (the frame gives dense lines to [`Steps2`]).
    fn run(&self, xs: &[&[i32]], y: &[[i32; L8]], out: &mut [[i32; L8]]) {
        for (x, out) in xs.iter().zip(out) {
            *out = self.0.l.run_portable(self.0.kahan, x, y);
        }
    }
    fn zero_products_are_one(&self) -> bool {
        true
    }
    fn zero_products_leave_sums(&self) -> bool {
        !self.0.kahan
    }
    fn run_sparse(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L8]], out: &mut [[i32; L8]]) {
        assert!(std::is_x86_feature_detected!("avx2") && !self.0.kahan);
        // SAFETY: the CPU has AVX2 (asserted just above).
        unsafe { avx2::run_steps(&self.0.l, false, xs, y, out) }
    }
    fn steps_runs(&self) -> bool {
        self.0.kahan
    }
    fn lines_at_once(&self) -> usize {
        avx2::lines(1)
    }
    fn run_runs(&self, xs: &[(&[u32], &[i32])], y: &[[i32; L8]], out: &mut [[i32; L8]]) {
        assert!(std::is_x86_feature_detected!("avx2") && self.0.kahan);
        // SAFETY: the CPU has AVX2 (asserted just above).
        unsafe { avx2::run_steps(&self.0.l, true, xs, y, out) }
    }
}

impl Lanes<i32, L> for Run {
    fn value(&self, w: Bits) -> Option<i32> {
        Run::value(self, w)
    }
    fn decode(&self, line: &[Bits], out: &mut Vec<i32>) -> bool {
        Run::decode(self, line, out)
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

mod kahan;
use kahan::KahanSteps;

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(test)]
mod tests;
