//! The R×C output-stationary systolic matmul array (`array --pe KIND`).
//!
//! PE (r, c) owns C[r][c] = Σ_k A[r][k]·B[k][c] and accumulates k = 0, 1, …, K−1 in order
//! (SPEC.md §3). A flows left to right along the rows, B top to bottom along the columns.
//! The array skews the operands itself: the host presents one *step* per cycle, unskewed.
//!
//! Ports (w = word width of the format; word i of a bus is bits [i·w+w−1 : i·w]):
//! - `a_in`  R·w   word r = A[r][k], the k-th column of the A tile
//! - `b_in`  C·w   word c = B[k][c], the k-th row of the B tile
//! - `in_valid`    this cycle carries a step; without it the cycle is a bubble (nothing
//!   accumulates; `clear` and `last` are ignored)
//! - `clear`       this step is the first of a new accumulation (k = 0): each PE starts from
//!   the zero state with A[r][0]·B[0][c]
//! - `last`        snapshot after this step: each PE copies its read-out word (rounded once,
//!   for quire / wide accumulators) into its result register
//! - `c_out` R·C·w word r·C + c = C[r][c] (row-major), the snapshot when `out_valid` is high
//! - `out_valid`   one cycle, exactly `latency` cycles after the `last` step
//!
//! Timing: latency L = R + C + stages. Stages = 1 adds an input register, stages = 2 also a
//! product register in every PE (multiply in one cycle, accumulate in the next).
//! PE (r, c) accumulates step t in cycle t + r + c + stages and loads its result register
//! `res` at the end of the next cycle; the farthest PE (R−1, C−1) does so at
//! the end of cycle t_last + L − 1, so the whole of `c_out` is the snapshot in cycle
//! t_last + L, when `out_valid` is high. Example: 2×2, stages 0 (L = 4), a tile of K = 3
//! followed at once by the next (k0', k1', k2'):
//!
//! ```text
//! cycle          0    1    2    3    4    5    6    7    8    9
//! in_valid       1    1    1    1    1    1    0    0    0    0
//! a_in, b_in     k0   k1   k2   k0'  k1'  k2'
//! clear          1    0    0    1    0    0
//! last           0    0    1    0    0    1
//! PE(0,0)        k0   k1   k2   k0'  k1'  k2'
//! PE(0,1),(1,0)       k0   k1   k2   k0'  k1'  k2'
//! PE(1,1)                  k0   k1   k2   k0'  k1'  k2'
//! res(0,0)                           C    C    C    C'   C'   C'
//! res(1,1)                                     C    C    C    C'
//! out_valid      0    0    0    0    0    0    1    0    0    1
//! c_out                                        C              C'
//! ```
//!
//! - K may arrive in several chunks, with bubbles between them: accumulators persist until
//!   the next `clear`, so the result equals the golden sequential accumulation over all k.
//! - Tiles stream back to back without a drain: the next tile's `clear` step may follow the
//!   `last` step in the next cycle. Result registers hold a snapshot until the next `last`
//!   reaches them, so two `last` steps must be at least R + C − 1 cycles apart; a host pads
//!   a shorter tile with bubbles. A `last` without a following `clear` reads partial sums and
//!   keeps accumulating.
//! - Shapes smaller than the array: the host feeds zero words (the format's zero: for LNS
//!   the reserved code with S = 0, the word 1 << (I+F); for posits and fix the all-zero
//!   word) in the unused rows of A and columns of B, and ignores those words of `c_out`.
//!
//! Every PE does one MAC per cycle at every stage count. `--stages 1` registers the inputs at
//! the array's boundary, so no path runs from a port into a PE's arithmetic; `--stages 2`
//! also registers each PE's product, so the cycle holds only the accumulation loop (the
//! Kahan step's four LNS additions, the quire's carry-propagate adder, the fix adder). The
//! loop itself is one cycle: pipelining it would need interleaved accumulations (as the
//! `lns-kahan` unit does), which the array does not offer yet.

use lpgen_golden::Format;

use super::{fix, lns, posit, start, Built, GenError, Params, PeBuilder, PeIo, PeKind};
use crate::ir::{cat, Module, E};

/// The PE builder for `p.pe`, if it suits the format family.
fn pe_builder(p: &Params) -> Result<PeBuilder, GenError> {
    let ok = matches!(
        (p.pe, p.format),
        (PeKind::Fix, Format::Fix(_))
            | (PeKind::LnsKahan | PeKind::LnsPlain, Format::Lns(_))
            | (PeKind::PositQuire, Format::Posit(_))
    );
    if !ok {
        let want = match p.format {
            Format::Fix(_) => "--pe fix",
            Format::Lns(_) => "--pe lns-kahan or lns-plain",
            Format::Posit(_) => "--pe posit-quire",
            Format::F32 => "an lns, posit or fix format",
        };
        return Err(GenError(format!(
            "array PE '{}' does not work on {} (use {want})",
            p.pe.name(),
            p.format
        )));
    }
    Ok(match p.pe {
        PeKind::Fix => fix::fix_pe,
        PeKind::LnsKahan => lns::kahan_pe,
        PeKind::LnsPlain => lns::plain_pe,
        PeKind::PositQuire => posit::quire_pe,
    })
}

/// A register loading `d` every cycle (free-running data) or resetting to 0 (control).
fn reg(m: &mut Module, name: &str, d: &E, reset: bool) -> E {
    let q = m.state(name, d.width, reset.then_some(0));
    m.drive(&q, d, None);
    q
}

/// `d` delayed by 0..=n cycles: taps[j] is `d` delayed j cycles.
fn chain(m: &mut Module, name: &str, d: &E, n: u32, reset: bool) -> Vec<E> {
    let mut taps = vec![d.clone()];
    for j in 1..=n {
        let prev = taps[j as usize - 1].clone();
        taps.push(reg(m, &format!("{name}_d{j}"), &prev, reset));
    }
    taps
}

pub(crate) fn array(p: &Params) -> Result<Built, GenError> {
    let build = pe_builder(p)?;
    // Candidate boundaries: the input register, and each PE's product register.
    let (mut m, valid) = start(p, 2)?;
    // With the product register the accumulators work one cycle later ("lag").
    let lag = (p.stages >= 2) as u32;
    let (rows, cols) = (p.rows, p.cols);
    let w = p.format.width();
    let a_in = m.input("a_in", rows * w);
    let b_in = m.input("b_in", cols * w);
    let clear = m.input("clear", 1);
    let last = m.input("last", 1);
    m.reset_on_delay(&clear);
    m.reset_on_delay(&last);
    // Optional input register (the array's one candidate stage boundary).
    m.stage();
    let en = m.wire("step", &valid);
    let clr = m.wire("step_clear", &clear.and(&valid));
    let lst = m.wire("step_last", &last.and(&valid));
    // Control reaches PE (r, c) after r + c cycles, its result register one cycle later, and
    // out_valid after R + C cycles: one shared chain of each.
    let depth = rows + cols;
    let en = chain(&mut m, "step", &en, depth - 2 + lag, true);
    let clr = chain(&mut m, "step_clear", &clr, depth - 2 + lag, true);
    let lst = chain(&mut m, "step_last", &lst, depth + lag, true);
    // Operand skew: row r of A enters PE (r, 0) after r cycles, column c of B enters
    // PE (0, c) after c cycles; each PE passes them on through a register.
    let mut a_op: Vec<Vec<E>> = vec![];
    for r in 0..rows {
        let word = m.wire(&format!("a_row{r}"), &a_in.bits(r * w + w - 1, r * w));
        let skew = chain(&mut m, &format!("a_row{r}"), &word, r, false);
        a_op.push(vec![skew[r as usize].clone()]);
    }
    let mut b_op: Vec<Vec<E>> = vec![];
    for c in 0..cols {
        let word = m.wire(&format!("b_col{c}"), &b_in.bits(c * w + w - 1, c * w));
        let skew = chain(&mut m, &format!("b_col{c}"), &word, c, false);
        b_op.push(vec![skew[c as usize].clone()]);
    }
    let mut results = vec![];
    // Every PE starts in this cycle (its operands come from explicit skew registers).
    let mut fork = m.fork();
    let li = lag as usize;
    for r in 0..rows {
        for c in 0..cols {
            let (ri, ci) = (r as usize, c as usize);
            let a = a_op[ri][ci].clone();
            let b = b_op[ci][ri].clone();
            if c + 1 < cols {
                let q = reg(&mut m, &format!("pe{r}_{c}_a"), &a, false);
                a_op[ri].push(q);
            }
            if r + 1 < rows {
                let q = reg(&mut m, &format!("pe{r}_{c}_b"), &b, false);
                b_op[ci].push(q);
            }
            let io = PeIo {
                a,
                b,
                enable: en[ri + ci + li].clone(),
                clear: clr[ri + ci + li].clone(),
            };
            let word = build(&mut m, p.format, &format!("pe{r}_{c}_"), &io)?;
            if word.width != w {
                return Err(GenError(format!(
                    "the {} PE reads out {} bits, not the {w} of {} (generator bug)",
                    p.pe.name(),
                    word.width,
                    p.format
                )));
            }
            let res = m.state(&format!("res{r}_{c}"), w, Some(0));
            m.drive(&res, &word, Some(&lst[ri + ci + 1 + li]));
            results.push(res);
            m.next_branch(&mut fork);
        }
    }
    let before = m.cycle();
    m.join(fork);
    assert_eq!(
        m.cycle(),
        before + lag,
        "the PE's product register is the plan's"
    );
    results.reverse();
    m.output("c_out", &cat(&results));
    let latency = m.cycle() + depth;
    m.output("out_valid", &lst[(depth + lag) as usize]);
    // Every LNS PE holds the format's G tables: report their digests like lns-add does.
    let tables = match p.format {
        Format::Lns(f) => super::lns::table_digests(f),
        _ => vec![],
    };
    Ok(Built {
        module: m,
        latency,
        tables,
    })
}

/// The array designs of the lint grid. Full: 1×1, 2×3, 4×4 and 8×8 of every PE kind (stages
/// 0..=2 up to 2×3, 0 and 2 at 4×4, 2 at 8×8: Yosys needs about a quarter of an hour for a
/// posit:16 8×8). Lean: the fix PE at 1×1 and 2×3, the others 1×1, at stages 0..=2.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let shapes: &[(u32, u32)] = if full {
        &[(1, 1), (2, 3), (4, 4), (8, 8)]
    } else {
        &[(1, 1), (2, 3)]
    };
    let kinds = [
        (PeKind::Fix, "fix:7:8"),
        (PeKind::LnsKahan, "lns:5:6"),
        (PeKind::LnsPlain, "lns:5:6"),
        (PeKind::PositQuire, "posit:16"),
    ];
    let mut g = vec![];
    for (pe, fmt) in kinds {
        for &(r, c) in shapes {
            if !full && pe != PeKind::Fix && r * c > 1 {
                continue;
            }
            let stages: &[u32] = match r * c {
                0..=6 => &[0, 1, 2],
                7..=16 => &[0, 2],
                _ => &[2],
            };
            for &s in stages {
                let mut p = Params::new(super::Unit::Array, fmt.parse().unwrap()).stages(s);
                p.rows = r;
                p.cols = c;
                p.pe = pe;
                g.push(p);
            }
        }
    }
    g
}
