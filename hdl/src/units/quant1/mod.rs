//! `quant1`: seed 001's 1-bit quantizer with error feedback for one column of `fix:I:F` or
//! posit gradient words, bit for bit the golden `lpgen_golden::onebit::Quantizer::column`
//! with the `quire` sum mode (the exact sum fix training uses; the quire for posits). Rules:
//! docs/formats.md, "`1bit`"; ports and timing: docs/rtl.md, "`quant1`".
//!
//! The column streams through twice, one word per cycle, from the host's gradient and
//! residual memories:
//! - pass 1 (`replay` = 0, `first` on the first word, `last` on the last): v = g + r (the
//!   format's addition), `bit` = v ≥ 0, and v is added exactly into the sum (fix: a wide
//!   register; posit: a quire, the array PE's) and the count of its side;
//! - after `last` the two means are divided out by two sequential restoring dividers (one
//!   module, [`mean_divider`] or [`posit_mean::divider`], instantiated for each side): the
//!   division steps + 2 cycles;
//! - pass 2 (`replay` = 1, the same g and r again): `r_out` = v − the mean of v's side.
//!
//! Replaying the column instead of buffering v keeps the unit free of a rows × W memory: the
//! host holds g and r in memory anyway, and recomputing v costs one adder.
//!
//! Fix widths: a side's sum takes W + ⌈log2 rows⌉ bits (rows words of at least −2^(W−1)
//! each), a count ⌊log2 rows⌋ + 1 bits. The golden quire sum of fix words is exact and
//! saturated once to a word, so the divider saturates the sum first; the mean is that word
//! divided by the count, rounded to nearest even (no saturation: |sum / n| ≤ |sum|), and zero
//! for n = 0.

use std::rc::Rc;

use lpgen_golden::Family;
use lpgen_golden::{FixFormat, Format, PositFormat};

mod posit_mean;

use super::divide::SequentialDivider;
use super::fix::saturate;
use super::{finish, posit, start_with, Built, GenError, Params, PeIo, Unit};
use crate::ir::{cat, konst, mux, Module, StagePlan, SubModule};

/// Candidate stage boundaries: after v = g + r and its bit (the posit adder's own stay uncut).
pub(crate) const STAGES: u32 = 1;

/// Bits of an unsigned number up to `n`.
fn bits_for(n: u32) -> u32 {
    (32 - n.leading_zeros()).max(1)
}

/// ⌈log2 n⌉ for n ≥ 1.
fn log2_ceil(n: u32) -> u32 {
    32 - (n - 1).leading_zeros()
}

/// The widths of a side's sum and count for columns of up to `rows` words of `f`.
pub(crate) fn sum_count_widths(f: FixFormat, rows: u32) -> (u32, u32) {
    (f.width() + log2_ceil(rows), bits_for(rows))
}

/// Division steps of the mean dividers of `p` (0 for a format quant1 does not take).
fn divider_steps(p: &Params) -> u32 {
    match quant1_format(p) {
        Ok(Words::Fix(f)) => f.width(),
        Ok(Words::Posit(f)) => posit_mean::steps(f, p.rows),
        Err(_) => 0,
    }
}

/// Cycles from the last word of pass 1 entering to the first word of pass 2 (or of the next
/// column) that may enter: the launch cycle, the division steps (W for fix, D for posits),
/// the rounding cycle, then one.
pub fn quant1_gap(p: &Params) -> u32 {
    divider_steps(p) + 3
}

/// The words quant1 works on.
#[derive(Clone, Copy)]
enum Words {
    Fix(FixFormat),
    Posit(PositFormat),
}

fn quant1_format(p: &Params) -> Result<Words, GenError> {
    match p.format {
        Format::Fix(f) => Ok(Words::Fix(f)),
        Format::Posit(f) => Ok(Words::Posit(f)),
        other => Err(GenError(format!(
            "quant1 is built for fix and posit formats (e.g. fix:7:8, posit:16:1), not {other}"
        ))),
    }
}

/// The most stages of `p`: one register after v, for fix and posits.
pub(crate) fn max_stages(_: &Params) -> u32 {
    STAGES
}

pub(crate) fn quant1(p: &Params) -> Result<Built, GenError> {
    let words = quant1_format(p)?;
    crate::limits::check_column_rows(p.rows)?;
    let w = p.format.width();
    let count_w = bits_for(p.rows);
    // The one candidate register sits after v; the posit adder before it marks boundaries
    // of its own (ADD_STAGES), which stay uncut, as do the quires' and the second adder's.
    let after_v = match words {
        Words::Fix(_) => 0,
        Words::Posit(_) => posit::ADD_STAGES as usize,
    };
    let plan = match p.stages {
        0 => StagePlan::none(),
        _ => StagePlan::at(&[after_v]),
    };
    let (mut m, valid) = start_with(p, plan);
    let replay = m.input("replay", 1);
    let first = m.input("first", 1);
    let last = m.input("last", 1);
    let g = m.input("g", w);
    let r = m.input("r", w);
    let zero = konst(1, 0);
    // v = g + r, the format's addition (fix: exact in one more bit, then saturated).
    let v = match words {
        Words::Fix(_) => {
            let v_exact = m.wire("v_exact", &g.sext(w + 1).add(&r.sext(w + 1)));
            saturate(&mut m, "v_", &v_exact, w).0
        }
        Words::Posit(f) => posit::add_core(&mut m, f, "v_", &g, &r, &zero).0,
    };
    let v = m.wire("v", &v);
    // v ≥ 0: the sign bit is clear (posit NaR, 10…0, is on the 0 side like a negative).
    let bit = m.wire("bit_pos", &v.msb().not());
    assert_eq!(
        m.boundaries(),
        after_v,
        "the register after v is the planned one"
    );
    m.stage();

    let accumulate = m.wire("accumulate", &valid.and(&replay.not()));
    let mut sides = vec![];
    for (side, on_side) in [("pos", bit.clone()), ("neg", bit.not())] {
        let count = m.state(&format!("count_{side}"), count_w, Some(0));
        // `first` starts the column's sums and counts from this word.
        let count_base = mux(&first, &konst(count_w, 0), &count);
        let count_next = count_base.add(&on_side.zext(count_w));
        m.drive(&count, &count_next, Some(&accumulate));
        let sum = match words {
            Words::Fix(f) => {
                let (sum_w, _) = sum_count_widths(f, p.rows);
                let sum = m.state(&format!("sum_{side}"), sum_w, Some(0));
                let sum_base = mux(&first, &konst(sum_w, 0), &sum);
                let addend = mux(&on_side, &v.sext(sum_w), &konst(sum_w, 0));
                let sum_next = m.wire(&format!("sum_{side}_next"), &sum_base.add(&addend));
                m.drive(&sum, &sum_next, Some(&accumulate));
                sum
            }
            Words::Posit(f) => {
                // The side's quire: v·1 added exactly; the other side's words add 0, and
                // `first` clears it (a word of the other side must not bring its NaR in).
                let io = PeIo {
                    a: mux(&on_side, &v, &konst(w, 0)),
                    b: konst(w, u128::from(f.one())),
                    enable: accumulate.and(&on_side.or(&first)),
                    clear: first.clone(),
                };
                let sum = posit::quire_pe(&mut m, p.format, &format!("{side}_"), &io)?;
                m.wire(&format!("sum_{side}"), &sum)
            }
        };
        sides.push((side, sum, count));
    }
    // The dividers start the cycle after the last word is accumulated, from the registers.
    let launch = m.state("launch", 1, Some(0));
    let launch_next = m.wire("launch_next", &accumulate.and(&last));
    m.drive(&launch, &launch_next, None);
    let div = match words {
        Words::Fix(f) => mean_divider(&m, f, p.rows)?,
        Words::Posit(f) => posit_mean::divider(&m, f, p.rows),
    };
    let mut dividers = vec![];
    for (side, sum, count) in &sides {
        let inputs = [("start", &launch), ("sum", sum), ("count", count)];
        dividers.push(m.instance(&div, &format!("mean_{side}"), &inputs));
    }
    let (pos, neg) = (dividers[0].port("mean"), dividers[1].port("mean"));
    // Both run in step; either's busy would do, and using both leaves no output unread.
    let busy = dividers[0].port("busy").or(&dividers[1].port("busy"));
    // Pass 2 subtracts the mean of v's side; pass 1 subtracts nothing (r_out = v).
    let mean = mux(&bit, &pos, &neg);
    let subtrahend = m.wire("subtrahend", &mux(&replay, &mean, &konst(w, 0)));
    let r_out = match words {
        Words::Fix(_) => {
            let r_exact = m.wire("r_exact", &v.sext(w + 1).sub(&subtrahend.sext(w + 1)));
            saturate(&mut m, "r_", &r_exact, w).0
        }
        Words::Posit(f) => posit::add_core(&mut m, f, "r_", &v, &subtrahend, &konst(1, 1)).0,
    };
    m.output("onebit", &bit);
    m.output("r_out", &r_out);
    m.output("neg", &neg);
    m.output("pos", &pos);
    m.output("busy", &busy);
    finish(m, &valid, vec![])
}

/// The mean divider `lpgen_quant1_mean_fix_I_F_rROWS`: on `start` it loads `sum` (saturated
/// to a word, as the golden quire sum is) and `count`, then runs W restoring steps, one
/// quotient bit per cycle, on the magnitude, then loads the register `mean` with the quotient
/// rounded to nearest even with the sum's sign (zero for count 0): it holds the new mean from
/// W + 2 cycles after `start` until the next division ends. `busy` is high in the start cycle
/// and while steps remain.
fn mean_divider(m: &Module, f: FixFormat, rows: u32) -> Result<Rc<SubModule>, GenError> {
    let w = f.width();
    let (sum_w, count_w) = sum_count_widths(f, rows);
    let name = format!(
        "lpgen_quant1_mean_fix_{}_{}_r{rows}",
        f.int_bits, f.frac_bits
    );
    m.define(&name, StagePlan::none(), |d| {
        d.header.push(format!(
            "The mean of one side of a quant1 column of up to {rows} {} words; docs/rtl.md, quant1.",
            Format::Fix(f)
        ));
        d.input("clk", 1);
        d.input("rst", 1);
        let start = d.input("start", 1);
        let sum = d.input("sum", sum_w);
        let count = d.input("count", count_w);
        let (word, _) = saturate(d, "sum_", &sum, w);
        let word = d.wire("sum_word", &word);
        // |word| in W unsigned bits: 2^(W−1), of the most negative word, fits.
        let magnitude = d.wire(
            "magnitude",
            &mux(&word.msb(), &konst(w, 0).sub(&word), &word),
        );
        // Steps W + 1 .. 2 divide, step 1 loads the mean register.
        let div = SequentialDivider::registers(d, w, count_w);
        let negative = d.state("negative", 1, Some(0));
        let control = div.control(d, &start, w, w);
        div.step(d, &control, &start, &magnitude, &count);
        d.drive(&negative, &word.msb(), Some(&start));
        SequentialDivider::count_steps(d, &control, &start, w);
        let (quotient, remainder, divisor) = (&div.quotient, &div.remainder, &div.divisor);
        let divisor_wide = divisor.zext(count_w + 1);
        // Round to nearest, ties to even: twice the remainder against the divisor. The mean
        // is registered, so that pass 2's subtraction does not start behind this logic.
        let twice = cat(&[remainder.clone(), konst(1, 0)]);
        let tie = twice.eq(&divisor_wide);
        let up = d.wire(
            "round_up",
            &twice.gt(&divisor_wide).or(&tie.and(&quotient.bit(0))),
        );
        // ±(quotient + up) in one adder: −(q + up) = ~q + (1 − up).
        let flip = negative.sext(w);
        let signed = d.wire(
            "signed_mean",
            &quotient.xor(&flip).add(&up.xor(&negative).zext(w)),
        );
        let empty = divisor.any().not();
        let finished = d.wire("finished", &control.steps.eq_k(1));
        let mean = &control.result;
        d.drive(mean, &mux(&empty, &konst(w, 0), &signed), Some(&finished));
        d.output("mean", mean);
        d.output("busy", &control.busy);
        Ok(())
    })
}

/// The quant1 designs of the lint grid: the shortest column, a power of two, a length that
/// is not one, and the longest allowed, at every stage count; posits of both standards.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let cases: &[(&str, u32)] = if full {
        &[
            ("fix:1:1", 1),
            ("fix:2:2", 3),
            ("fix:3:4", 2),
            ("fix:7:8", 784),
            ("fix:7:8", 1024),
            ("fix:15:16", 65536),
            ("fix:30:1", 65536),
            ("posit:4:0", 2),
            ("posit:5:u", 3),
            ("posit:8:0", 1),
            ("posit:8", 784),
            ("posit:16:1", 1024),
            ("posit:32:2", 65536),
        ]
    } else {
        &[
            ("fix:1:1", 1),
            ("fix:3:4", 3),
            ("fix:7:8", 1024),
            ("posit:8:0", 3),
            ("posit:16:1", 784),
        ]
    };
    let mut g = vec![];
    for &(f, rows) in cases {
        let mut p = Params::new(Unit::Quant1, f.parse().expect("grid format"));
        p.rows = rows;
        for s in 0..=max_stages(&p) {
            g.push(p.clone().stages(s));
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_bound_the_longest_column() {
        let f = FixFormat::new(7, 8).unwrap();
        assert_eq!(sum_count_widths(f, 1), (16, 1));
        assert_eq!(sum_count_widths(f, 784), (26, 10));
        assert_eq!(sum_count_widths(f, 1024), (26, 11));
        assert_eq!(sum_count_widths(f, 65536), (32, 17));
        // rows words of the most negative word fit the sum exactly.
        for rows in [1u32, 2, 3, 784, 1024, 65536] {
            let (sum_w, _) = sum_count_widths(f, rows);
            let most = i128::from(rows) * -(1i128 << 15);
            assert!(most >= -(1i128 << (sum_w - 1)), "{rows}");
        }
    }

    #[test]
    fn refusals_are_one_line() {
        let p = Params::new(Unit::Quant1, "lns:5:6".parse().unwrap());
        let e = quant1(&p).err().expect("lns:5:6 refused").0;
        assert!(
            e.contains("fix and posit formats") && !e.contains('\n'),
            "{e}"
        );
        // fix:0:F has no word 1, but its quire sum is the exact sum: built.
        assert!(quant1(&Params::new(Unit::Quant1, "fix:0:4".parse().unwrap())).is_ok());
    }
}
