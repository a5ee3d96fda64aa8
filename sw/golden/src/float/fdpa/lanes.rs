//! The whole product of an fdpa mode on i64 lanes: the fast path of [`FdpaPlan::dots`], for chunkings whose truncated sums fit an i64 (every
//! preset's). The steps are [`FdpaPlan::step`]'s, on operands decoded once into signed
//! significands and exponents; `step` stays the definition, and the tests in `tests.rs` hold
//! this path to `dot` element by element.

use super::*;

/// The operands of one line (a row of A or a column of B), decoded once: operand k is
/// sig\[k\]·2^(e\[k\] − M) with |sig| < 2^(M + 1), M the operand format's fraction bits, so
/// e is its exponent as a term sees it (a subnormal's is the smallest normal exponent).
/// `plain` when no operand is NaN or ∞.
struct Line {
    sig: Vec<i32>,
    e: Vec<i32>,
    plain: bool,
}

impl FdpaPlan {
    /// Whether every chunk's truncated sum fits an i64: L products of M-bit significands
    /// and C (the output format's significand), each below 2^(F + 2) once aligned, or below
    /// its own width where F is narrower.
    pub(super) fn fits_i64(&self) -> bool {
        let m = u64::from(self.fmt.frac_bits);
        let mc = u64::from(self.output().frac_bits);
        let f = u64::from(self.chunk.f);
        let product = (2 * m).max(f) + 2;
        let c = mc.max(f) + 1;
        let terms = u64::from(self.chunk.l + 1)
            .next_power_of_two()
            .trailing_zeros();
        m <= 30 && product.max(c) + u64::from(terms) <= 62
    }

    /// [`Self::dots`] on lanes: each line decoded once; a pair of lines with a NaN
    /// or ∞ takes [`Self::dot`] (the specials' rules are its).
    pub(super) fn dots_on_lanes(&self, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let out = self.output();
        let lines: Vec<Line> = cols.iter().map(|c| self.line(c)).collect();
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        let step = |a: &Line, b: &Line, r: Range<usize>, c: Bits| {
            self.step_on_lanes(
                avx2,
                &out,
                &a.sig[r.clone()],
                &a.e[r.clone()],
                &b.sig[r.clone()],
                &b.e[r],
                c,
            )
        };
        let mut words = Vec::with_capacity(rows.len() * cols.len());
        for &row in rows {
            let a = self.line(row);
            words.extend(lines.iter().zip(cols).map(|(b, &col)| {
                assert_eq!(row.len(), col.len());
                if a.plain && b.plain {
                    self.walk(row.len(), 0, |r, c| step(&a, b, r, c))
                } else {
                    self.dot(row, col, 0)
                }
            }));
        }
        words
    }

    fn line(&self, words: &[Bits]) -> Line {
        let m = self.fmt.frac_bits as i64;
        let mut line = Line {
            sig: Vec::with_capacity(words.len()),
            e: Vec::with_capacity(words.len()),
            plain: true,
        };
        for &w in words {
            let (sig, e) = match self.operand(w) {
                Val::Fin(d) => {
                    let sig = d.sig as i32;
                    (if d.neg { -sig } else { sig }, (d.exp + m) as i32)
                }
                Val::Nan | Val::Inf(_) => {
                    line.plain = false;
                    (0, 0)
                }
            };
            line.sig.push(sig);
            line.e.push(e);
        }
        line
    }

    /// One chunk of operands (none NaN or ∞) and C: [`Self::step`]; `out` is the output
    /// format, `avx2` whether the CPU has AVX2.
    #[allow(clippy::too_many_arguments)]
    fn step_on_lanes(
        &self,
        avx2: bool,
        out: &FloatFormat,
        a_sig: &[i32],
        a_e: &[i32],
        b_sig: &[i32],
        b_e: &[i32],
        c: Bits,
    ) -> Bits {
        let rho = self.chunk.rho;
        let (c_neg, c_sig, c_e) = match term(out.decode(c), i64::from(out.frac_bits), rho.e_zero())
        {
            Term::Nan => return nan_of(rho),
            Term::Inf(neg) => return out.infinite(neg),
            Term::Fin { d, e } => (d.neg, d.sig, e),
        };
        let f = i64::from(self.chunk.f);
        let m2 = 2 * i64::from(self.fmt.frac_bits);
        let chunk = (a_sig, a_e, b_sig, b_e);
        #[cfg(target_arch = "x86_64")]
        let (e_max, sum) = if avx2 {
            // SAFETY: `avx2` is set only where the CPU has AVX2 (`dots_on_lanes`).
            unsafe { products_avx2(chunk, rho.e_zero(), c_e, f - m2) }
        } else {
            products(chunk, rho.e_zero(), c_e, f - m2)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (e_max, sum) = products(chunk, rho.e_zero(), c_e, f - m2);
        // C truncated as the products are, its fraction bits the output's.
        let c_t = shift_trunc(c_sig, c_e - i64::from(out.frac_bits) - e_max + f) as i64;
        let sum = sum + if c_neg { -c_t } else { c_t };
        round(rho, i128::from(sum), e_max - f)
    }
}

/// One chunk's operands: the significands and exponents of A's line, then of B's.
type Chunk<'a> = (&'a [i32], &'a [i32], &'a [i32], &'a [i32]);

/// e_max over the chunk's products (a zero one at `e_zero`, as the definition has it,
/// though C's term never stands below e_zero, so a zero product never sets e_max) and C
/// (at `c_e`), and the sum
/// of the products each truncated toward zero to F fraction bits below 2^e_max
/// (`f_less_2m` = F − 2M: a product sig_a·sig_b has 2M fraction bits below its exponent). A
/// zero product is 0 at any shift; a nonzero one's left shift is at most F − 2M, within
/// an i64 ([`FdpaPlan::fits_i64`]). Branch-free, so that the compiler gives it vector lanes.
#[inline(always)]
fn products((a_sig, a_e, b_sig, b_e): Chunk, e_zero: i64, c_e: i64, f_less_2m: i64) -> (i64, i64) {
    let n = a_sig.len();
    let (b_sig, a_e, b_e) = (&b_sig[..n], &a_e[..n], &b_e[..n]);
    let mut e_max = i32::MIN;
    for k in 0..n {
        let zero = a_sig[k] == 0 || b_sig[k] == 0;
        e_max = e_max.max(if zero { e_zero as i32 } else { a_e[k] + b_e[k] });
    }
    let e_max = i64::from(e_max).max(c_e);
    let bias = f_less_2m - e_max;
    let mut sum = 0i64;
    for k in 0..n {
        let p = i64::from(a_sig[k]) * i64::from(b_sig[k]);
        let s = i64::from(a_e[k] + b_e[k]) + bias;
        let t = (p.unsigned_abs() << s.clamp(0, 63)) >> (-s).clamp(0, 63);
        let sign = p >> 63;
        sum += (t as i64 ^ sign) - sign;
    }
    (e_max, sum)
}

/// [`products`] compiled for AVX2 (variable shifts of 64-bit lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn products_avx2(chunk: Chunk, e_zero: i64, c_e: i64, f_less_2m: i64) -> (i64, i64) {
    products(chunk, e_zero, c_e, f_less_2m)
}
