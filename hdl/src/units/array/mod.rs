//! The R×C output-stationary systolic matmul array (`array --pe KIND`): R×C instances of
//! one PE module (`pe_module.rs`); the host protocol is written once in [`protocol`], the
//! lint grid's designs in `grid.rs`.
//!
//! PE (r, c) owns `C[r][c] = Σ_k A[r][k]·B[k][c]` and accumulates k = 0, 1, …, K−1 in order
//! (SPEC.md §3). A flows left to right along the rows, B top to bottom along the columns,
//! and the step's controls (`valid`, `clear`, `last`) travel with A: every PE passes what
//! it received on to its neighbours through a register, so no signal reaches more than one
//! PE in a cycle. The array skews the operands itself at its edges: the host presents one
//! *step* per cycle, unskewed.
//!
//! Ports, the host protocol and its cycle diagram: docs/rtl.md, section `array`; the protocol
//! as code: [`protocol`] (the skew below is its `row_skew` and `col_skew`). In short: latency L = R + C + stages (+1 for the dfix PE at stages 2, whose
//! read-out has a register); PE (r, c) accumulates step t in
//! cycle t + r + c + stages and loads its result register at the end of the next cycle, so
//! the whole of `c_out` is the snapshot in cycle t_last + L, when `out_valid` (the corner
//! PE's `last` passed on) is high. Two `last` steps must be at least R + C − 1 cycles apart.
//!
//! Every PE does one MAC per cycle at every stage count. `--stages 1` registers the inputs at
//! the array's boundary, so no path runs from a port into a PE's arithmetic; `--stages 2`
//! also registers each PE's product, so the cycle holds only the accumulation loop (the
//! Kahan step's four LNS additions, the quire's carry-propagate adder, the fix adder) and,
//! with results, the read-out. Beyond 2, the LNS PEs put registers inside their loop and
//! interleave accumulations; the posit-quire PE puts them before and after its quire
//! (docs/rtl.md).

mod grid;
mod pe_module;
pub mod protocol;

use std::rc::Rc;

use super::family::hw;
use super::pe::{ArrayPe, Sideband};
use super::{start, top_name, Built, GenError, Params, PeKind};
use crate::ir::{cat, Module, SubModule, E};
pub(crate) use grid::{grid, pe_designs};
use pe_module::{pe_gen, pe_module};
use protocol::{col_skew, row_skew};

/// How the name of every array PE module begins (the FPGA flow keeps these modules whole).
pub const PE_MODULE_PREFIX: &str = "lpgen_pe_";

/// The instance name of the PE in row `row`, column `col` of the array's top (the FPGA flow
/// finds a PE's cells by it, `lpgen_fpga::floorplan`).
pub fn pe_instance_name(row: u32, col: u32) -> String {
    format!("pe{row}_{col}")
}

/// Registers inside the PE's read-out (the PE kind's: 1 for the dfix PE at stages 2, for the
/// fix PE 1 from stages 4 and 2 at stages 7, else 0). They add to the array's latency.
pub fn readout_registers(p: &Params) -> u32 {
    p.pe.gen().readout_registers(p.stages)
}

/// `d` delayed by 0..=n cycles: `taps[j]` is `d` delayed j cycles.
fn chain(m: &mut Module, name: &str, d: &E, n: u32, reset: bool) -> Vec<E> {
    let mut taps = vec![d.clone()];
    for j in 1..=n {
        let prev = taps[j as usize - 1].clone();
        taps.push(m.register(&format!("{name}_d{j}"), &prev, reset.then_some(0)));
    }
    taps
}

/// What enters a PE from its left (`a` and the controls) or from above (`b`).
#[derive(Clone)]
struct FromLeft {
    a: E,
    valid: E,
    clear: E,
    last: E,
    /// The PE kind's sideband (the dfix read-out shift), which travels with `last`.
    side: Option<E>,
}

/// The most stages an array of `pe` takes: the input register, the product register, and
/// what the PE kind adds (LNS PEs: up to three registers inside the accumulation loop;
/// posit-quire: up to six around its quire; fix: registers on its long wires and in its
/// read-out; `ArrayPe::max_stages` of each).
pub fn array_max_stages(pe: PeKind) -> u32 {
    pe.gen().max_stages()
}

/// Registers of the PE module on the way from its inputs to its result register (the
/// array's stage 1 is the top's input register, every later one lies inside the PE), less
/// the read-out registers that come after the accumulator.
fn pe_latency(p: &Params) -> u32 {
    p.pe.gen().latency(p.stages)
}

/// How many independent accumulations each PE of the array `p` interleaves: 1, or for the
/// LNS PEs at stages 3..=5, 1 + the registers inside the accumulation loop (2, 3, 4). Step t
/// of the host's stream belongs to accumulation t mod P (docs/rtl.md).
pub fn array_accumulations(p: &Params) -> u32 {
    1 + p.pe.gen().loop_registers(p.stages)
}

pub(crate) fn array(p: &Params) -> Result<Built, GenError> {
    let gen = pe_gen(p)?;
    // `generate` has checked the stages against `array_max_stages`.
    assert!(p.stages <= gen.max_stages());
    // Candidate boundaries of the top: the input register and each PE's product register;
    // the PE's loop registers come after them, inside the PE module.
    let mut outer = p.clone();
    outer.stages = p.stages.min(2);
    let (mut m, valid) = start(&outer, 2)?;
    m.name = top_name(p);
    let w = gen.operand_bits(p);
    let a_in = m.input("a_in", p.rows * w);
    let b_in = m.input("b_in", p.cols * w);
    let clear = m.input("clear", 1);
    let last = m.input("last", 1);
    m.reset_on_delay(&clear);
    m.reset_on_delay(&last);
    // The PE kind's sideband (dfix: the read-out shift e − (ea + eb), clamped and biased
    // once here).
    let sideband = gen.sideband(p);
    let side = sideband
        .as_ref()
        .map(|sb| sideband_inputs(&mut m, sb, p.rows, w));
    // Optional input register (the array's one candidate stage boundary).
    m.stage();
    let step = Step {
        valid: m.wire("step", &valid),
        clear: m.wire("step_clear", &clear.and(&valid)),
        last: m.wire("step_last", &last.and(&valid)),
    };
    let left = left_edge(&mut m, p, w, &a_in, &step, side, sideband.as_ref());
    let above = top_edge(&mut m, p, w, &b_in);
    let pe = pe_module(&m, p, gen)?;
    let (results, done) = pe_grid(&mut m, p, &pe, left, above, sideband.as_ref());
    result_ports(&mut m, p, gen, results);
    let depth = p.rows + p.cols;
    let latency = m.cycle() + depth + readout_registers(p);
    m.output(
        "out_valid",
        &done[(1 + pe_latency(p) + readout_registers(p)) as usize],
    );
    // Every LNS PE holds the format's G tables: report their digests like lns-add does.
    let tables = hw(&p.format).tables();
    Ok(Built {
        module: m,
        latency,
        tables,
    })
}

/// The array's step controls, after its optional input register.
struct Step {
    valid: E,
    clear: E,
    last: E,
}

/// The sideband's input port, prepared once at the array's edge: one part for a broadcast
/// value, one per row for a per-row one (the float PE's stochastic row states).
fn sideband_inputs(m: &mut Module, sb: &Sideband, rows: u32, w: u32) -> Vec<E> {
    if !sb.per_row {
        let s = m.input(sb.port, sb.bits);
        return vec![(sb.prepare)(m, &s, w)];
    }
    let s = m.input(sb.port, rows * sb.bits);
    (0..rows)
        .map(|r| {
            let part = s.bits(r * sb.bits + sb.bits - 1, r * sb.bits);
            (sb.prepare)(m, &part, w)
        })
        .collect()
}

/// What enters each row at the left edge: the row's a and the step's controls, delayed r
/// cycles for row r (the skew), and the row's sideband.
fn left_edge(
    m: &mut Module,
    p: &Params,
    w: u32,
    a_in: &E,
    step: &Step,
    side: Option<Vec<E>>,
    sideband: Option<&Sideband>,
) -> Vec<FromLeft> {
    let rows = p.rows;
    // The skew at the edges: row r (A and the controls, which travel along the rows with
    // A) enters PE (r, 0) after r cycles, column c of B enters PE (0, c) after c cycles.
    // Each tap of a chain feeds one PE.
    let deepest = row_skew(rows - 1);
    let valid_skew = chain(m, "step", &step.valid, deepest, true);
    let clear_skew = chain(m, "step_clear", &step.clear, deepest, true);
    let last_skew = chain(m, "step_last", &step.last, deepest, true);
    // Row r's sideband delayed r cycles: one chain for a broadcast value (tap r feeds row r),
    // one per row for a per-row one.
    let side_skew: Option<Vec<E>> = side.as_ref().map(|parts| {
        let port = sideband.expect("a sideband").port;
        if let [s] = &parts[..] {
            let s = m.now(s);
            let skew = chain(m, &format!("step_{port}"), &s, deepest, false);
            return (0..rows)
                .map(|r| skew[row_skew(r) as usize].clone())
                .collect();
        }
        let mut taps = vec![];
        for (r, s) in parts.iter().enumerate() {
            let s = m.now(s);
            let delay = row_skew(r as u32);
            let skew = chain(m, &format!("step_{port}{r}"), &s, delay, false);
            taps.push(skew[delay as usize].clone());
        }
        taps
    });
    m.comment("operands: row r's a delayed r cycles, column c's b delayed c cycles (the skew)");
    (0..rows)
        .map(|r| {
            let ri = r as usize;
            let tap = row_skew(r) as usize;
            let word = m.wire(&format!("a_row{r}"), &a_in.bits(r * w + w - 1, r * w));
            let skew = chain(m, &format!("a_row{r}"), &word, row_skew(r), false);
            FromLeft {
                a: skew[tap].clone(),
                valid: valid_skew[tap].clone(),
                clear: clear_skew[tap].clone(),
                last: last_skew[tap].clone(),
                side: side_skew.as_ref().map(|s| s[ri].clone()),
            }
        })
        .collect()
}

/// What enters each column at the top edge: column c's b delayed c cycles.
fn top_edge(m: &mut Module, p: &Params, w: u32, b_in: &E) -> Vec<E> {
    (0..p.cols)
        .map(|c| {
            let word = m.wire(&format!("b_col{c}"), &b_in.bits(c * w + w - 1, c * w));
            let skew = chain(m, &format!("b_col{c}"), &word, col_skew(c), false);
            skew[col_skew(c) as usize].clone()
        })
        .collect()
}

/// The R×C PE instances, a and the controls passing right and b passing down; returns the
/// PEs' results (row-major) and the `done` chain that follows the corner PE's `last`.
fn pe_grid(
    m: &mut Module,
    p: &Params,
    pe: &Rc<SubModule>,
    mut left: Vec<FromLeft>,
    mut above: Vec<E>,
    sideband: Option<&Sideband>,
) -> (Vec<E>, Vec<E>) {
    let (rows, cols) = (p.rows, p.cols);
    let mut results = vec![];
    let mut done = vec![];
    m.comment("the PE grid: a and the controls pass right, b passes down");
    // Every PE starts in this cycle (what it receives comes from registers).
    let mut fork = m.fork();
    for r in 0..rows {
        for c in 0..cols {
            let (ri, ci) = (r as usize, c as usize);
            let from_left = left[ri].clone();
            let mut ins = vec![
                ("a", &from_left.a),
                ("b", &above[ci]),
                ("valid", &from_left.valid),
                ("clear", &from_left.clear),
                ("last", &from_left.last),
            ];
            if let (Some(s), Some(sb)) = (&from_left.side, sideband) {
                ins.push((sb.port, s));
            }
            let outs = m.instance(pe, &pe_instance_name(r, c), &ins);
            left[ri] = FromLeft {
                a: outs.port("a_out"),
                valid: outs.port("valid_out"),
                clear: outs.port("clear_out"),
                last: outs.port("last_out"),
                side: sideband
                    .filter(|_| from_left.side.is_some())
                    .map(|sb| outs.port(&format!("{}_out", sb.port))),
            };
            above[ci] = outs.port("b_out");
            if r + 1 == rows && c + 1 == cols {
                // The corner PE passes `last` on R + C − 1 cycles after the step and loads
                // its result register 1 + its latency cycles after receiving it:
                // `out_valid` follows the same way (registers of this cycle).
                let corner = outs.port("last_out");
                let n = 1 + pe_latency(p) + readout_registers(p);
                done = chain(m, "done", &corner, n, true);
            }
            let word = outs.port("result");
            m.wait_for(&word);
            results.push(word);
            m.next_branch(&mut fork);
        }
    }
    let before = m.cycle();
    m.join(fork);
    assert_eq!(
        m.cycle(),
        before + pe_latency(p),
        "the PE's registers are the plan's"
    );
    (results, done)
}

/// `c_out`, row-major, and with flags one bus per flag (the PEs' results are {flags, word}).
fn result_ports(m: &mut Module, p: &Params, gen: &dyn ArrayPe, mut results: Vec<E>) {
    m.comment("results, row-major; out_valid follows the corner PE's last step");
    results.reverse();
    let flags = gen.flags();
    let w = gen.result_bits(p);
    if flags.is_empty() {
        m.output("c_out", &cat(&results));
    } else {
        // {flags, word} of each PE, row-major: a bus for the words and one per flag.
        let part = |i: u32, width: u32| -> Vec<E> {
            results.iter().map(|x| x.bits(i + width - 1, i)).collect()
        };
        m.output("c_out", &cat(&part(0, w)));
        for (i, flag) in flags.iter().enumerate() {
            m.output(flag, &cat(&part(w + i as u32, 1)));
        }
    }
}
