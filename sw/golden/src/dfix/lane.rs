//! The dfix vector lane's operations (`vector`/`alu` on `dfix:W`, docs/rtl-dfix.md "dfix
//! lanes"): each opcode forms an exact integer x from the lane's words and reads it out `shift`
//! scale steps up, y = x·2^−shift rounded once to nearest even and saturated, with the
//! overflow tests at that scale and at its half: the array PE's read-out
//! ([`DfixFormat::dot`]) of a one- or two-term dot product.

use super::{DfixFormat, ReadOut};

/// Bits of a dfix lane's opcode (the `op` port).
pub const DFIX_LANE_OP_BITS: u32 = 3;

/// The opcodes of a dfix lane. The exact integer x, with s = the `shift` port:
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DfixLaneOp {
    /// x = a·b; s = e − (ea + eb).
    Mul = 0,
    /// x = a + b (a and b of one scale e_in); s = e − e_in.
    Add = 1,
    /// x = a − b; s = e − e_in.
    Sub = 2,
    /// x = a: `a` moved from its scale e_a to e = e_a + s.
    Rescale = 3,
    /// x = −a; s = e − e_a.
    Neg = 4,
}

impl DfixLaneOp {
    pub const ALL: [DfixLaneOp; 5] = [
        DfixLaneOp::Mul,
        DfixLaneOp::Add,
        DfixLaneOp::Sub,
        DfixLaneOp::Rescale,
        DfixLaneOp::Neg,
    ];

    /// The opcode of `code` (codes 5..=7 are unassigned and give zero without flags).
    pub fn from_code(code: u64) -> Option<DfixLaneOp> {
        DfixLaneOp::ALL.into_iter().find(|o| *o as u64 == code)
    }
}

impl DfixFormat {
    /// One dfix lane operation: opcode `code` on words `a`, `b`, read out `shift` scale
    /// steps up (x·2^−shift, rounded to nearest even, saturated), with the overflow tests at
    /// that scale and at its half; an unassigned code gives zero without flags.
    pub fn lane(&self, code: u64, a: u64, b: u64, shift: i32) -> ReadOut {
        let (x, y) = (self.to_int(a) as i128, self.to_int(b) as i128);
        let v = match DfixLaneOp::from_code(code) {
            Some(DfixLaneOp::Mul) => x * y,
            Some(DfixLaneOp::Add) => x + y,
            Some(DfixLaneOp::Sub) => x - y,
            Some(DfixLaneOp::Rescale) => x,
            Some(DfixLaneOp::Neg) => -x,
            None => {
                return ReadOut {
                    word: 0,
                    overflow: false,
                    overflow_at_half: false,
                }
            }
        };
        let at = self.rescale_int(v, 0, shift);
        ReadOut {
            word: at.word,
            overflow: at.overflow,
            overflow_at_half: self.rescale_int(v, 0, shift - 1).overflow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y = round(x·2^−s) (ties to even), saturated; the flags say it lay outside the word at s
    /// and at s − 1; x from the opcode's own definition. Every word pair of dfix:4 and dfix:5
    /// at shifts −8..=8.
    #[test]
    fn lane_reads_out_the_opcodes_exact_integer() {
        for w in [4, 5] {
            let f = DfixFormat::new(w).unwrap();
            let (lo, hi) = (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1);
            let int = |v: u64| f.to_int(v) as i128;
            let read = |x: i128, s: i32| -> (i128, bool) {
                let q = if s <= 0 {
                    x << (-s)
                } else {
                    let d = 1i128 << s;
                    let (q, r) = (x.div_euclid(d), x.rem_euclid(d));
                    if 2 * r > d || (2 * r == d && q % 2 != 0) {
                        q + 1
                    } else {
                        q
                    }
                };
                (q.clamp(lo, hi), q < lo || q > hi)
            };
            let mut flagged = 0;
            for code in 0..8u64 {
                for a in 0..1u64 << w {
                    for b in 0..1u64 << w {
                        let x = match code {
                            0 => int(a) * int(b),
                            1 => int(a) + int(b),
                            2 => int(a) - int(b),
                            3 => int(a),
                            4 => -int(a),
                            _ => 0,
                        };
                        for s in -8..=8 {
                            let got = f.lane(code, a, b, s);
                            let (q, over) = read(x, s);
                            let half = code < 5 && read(x, s - 1).1;
                            let want = ((q as u64) & ((1 << w) - 1), code < 5 && over, half);
                            assert_eq!(
                                (got.word, got.overflow, got.overflow_at_half),
                                want,
                                "dfix:{w} op {code} {a:#x} {b:#x} shift {s}"
                            );
                            flagged += usize::from(got.overflow);
                        }
                    }
                }
            }
            assert!(flagged > 1000, "{flagged}");
        }
    }
}
