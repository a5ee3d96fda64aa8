//! The R×C output-stationary systolic matmul array (`array --pe KIND`): R×C instances of
//! one PE module ([`pe_module`]).
//!
//! PE (r, c) owns C[r][c] = Σ_k A[r][k]·B[k][c] and accumulates k = 0, 1, …, K−1 in order
//! (SPEC.md §3). A flows left to right along the rows, B top to bottom along the columns,
//! and the step's controls (`valid`, `clear`, `last`) travel with A: every PE passes what
//! it received on to its neighbours through a register, so no signal reaches more than one
//! PE in a cycle. The array skews the operands itself at its edges: the host presents one
//! *step* per cycle, unskewed.
//!
//! Ports, the host protocol and its cycle diagram: docs/rtl.md, section `array` (written
//! there once). In short: latency L = R + C + stages (+1 for the dfix PE at stages 2, whose
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

use std::rc::Rc;

use super::family::hw;
use super::pe::{ArrayPe, Sideband};
use super::{start, top_name, Built, GenError, Params, PeIo, PeKind};
use crate::ir::{cat, Module, SubModule, E};

/// How the name of every array PE module begins (the FPGA flow keeps these modules whole).
pub const PE_MODULE_PREFIX: &str = "lpgen_pe_";

/// The instance name of the PE in row `row`, column `col` of the array's top (the FPGA flow
/// finds a PE's cells by it, `lpgen_fpga::floorplan`).
pub fn pe_instance_name(row: u32, col: u32) -> String {
    format!("pe{row}_{col}")
}

/// The generator of `p.pe`, if the registry gives that PE to the format's family.
fn pe_gen(p: &Params) -> Result<&'static dyn ArrayPe, GenError> {
    // MX blocks go with the MX PE only (the format is then f32, unused). It reads out to
    // nearest and accumulates in f32, so that a manifest never claims `--acc` or a
    // stochastic read-out it lacks (issue 48).
    match (p.mx, p.pe == PeKind::Mx) {
        (Some(_), true) => {
            check_read_out(p)?;
            return Ok(p.pe.gen());
        }
        (Some(mx), false) => {
            return Err(GenError(format!(
                "array PE '{}' does not work on {mx}: MX blocks take --pe mx (the default for mx:… formats)",
                p.pe.name()
            )))
        }
        (None, true) => {
            return Err(GenError(format!(
                "array PE 'mx' works on MX blocks (--format mx:ELEM[:bK], e.g. mx:fp8:e4m3), not {}",
                p.format
            )))
        }
        (None, false) => {}
    }
    // The fdpa PE is a mode's, not the family's: float formats with --fdpa only (and
    // --fdpa with it only).
    super::float::check_fdpa_array(p)?;
    if p.pe == PeKind::Fdpa {
        check_read_out(p)?;
        return Ok(p.pe.gen());
    }
    let entry = p.format.entry();
    if entry.pe(p.pe.name()).is_some() {
        check_read_out(p)?;
    }
    if let (Some(acc), false) = (p.acc, p.pe == PeKind::Float) {
        return Err(acc_is_for_float(acc, p));
    }
    if entry.pe(p.pe.name()).is_none() {
        let want = match entry.pes.len() {
            0 => format!(
                "an {} format",
                lpgen_golden::family::families_with(|f| !f.pes.is_empty())
            ),
            _ => {
                let names: Vec<&str> = entry.pes.iter().map(|p| p.name).collect();
                format!("--pe {}", lpgen_golden::family::or_list(&names))
            }
        };
        return Err(GenError(format!(
            "array PE '{}' does not work on {} (use {want})",
            p.pe.name(),
            p.format
        )));
    }
    Ok(p.pe.gen())
}

/// `--acc A` given to a PE other than float's.
fn acc_is_for_float(acc: lpgen_golden::Format, p: &Params) -> GenError {
    GenError(format!(
        "--acc {acc} is for --pe float (the {} PE accumulates as its kind says)",
        p.pe.name()
    ))
}

/// Refuses a stochastic read-out of a PE that rounds to nearest only, and `--acc` on a PE
/// other than float's (`p.pe` works on `p`'s words).
fn check_read_out(p: &Params) -> Result<(), GenError> {
    if p.rounding != lpgen_golden::Rounding::Nearest && !p.pe.gen().rounds_stochastically(p) {
        let acc = p.acc.map_or(String::new(), |a| format!(" --acc {a}"));
        return Err(GenError(format!(
            "array PE '{}'{acc} reads out to nearest only, not {} (stochastic read-out: --pe float with its exact accumulator)",
            p.pe.name(),
            p.rounding
        )));
    }
    match p.acc {
        Some(acc) if p.pe != PeKind::Float => Err(acc_is_for_float(acc, p)),
        _ => Ok(()),
    }
}

/// The PE module `lpgen_pe_<kind>_<format>_s<S>` (S = 1 with the product register), defined
/// once and instantiated R×C times. A step enters as `a`, `b`, `valid`, `clear`, `last` (one
/// cycle, `clear` and `last` already gated by `valid`); the PE passes all five on through a
/// register each (`a_out`, `valid_out`, `clear_out`, `last_out` to the right-hand
/// neighbour, `b_out` to the one below), so no signal reaches more than one PE. `result`
/// is the PE's result register: loaded with the accumulator's read-out word (rounded once
/// for wide accumulators) S + 1 cycles after a step with `last`, held until the next.
fn pe_module(m: &Module, p: &Params, gen: &dyn ArrayPe) -> Result<Rc<SubModule>, GenError> {
    let pe_stages = gen.latency(p.stages);
    let readout = gen.readout_registers(p.stages);
    // S: the PE's registers on the way to its result register, read-out register included.
    let acc = p.acc.map_or(String::new(), |a| {
        format!("_acc_{}", a.to_string().replace(':', "_"))
    });
    // The fdpa PE's chunking (and promotion): arrays of two modes have two PE modules.
    let acc = match p.fdpa.filter(|_| p.pe == PeKind::Fdpa) {
        Some(mode) => acc + &super::params::fdpa_name(p.format, mode),
        None => acc,
    };
    let sr = match p.rounding {
        lpgen_golden::Rounding::Stochastic(r) => format!("_sr{r}"),
        lpgen_golden::Rounding::Nearest => String::new(),
    };
    let name = format!(
        "{PE_MODULE_PREFIX}{}_{}{acc}{sr}_s{}",
        p.pe.name().replace('-', "_"),
        p.format_name().replace(':', "_"),
        pe_stages + readout
    );
    let w = gen.operand_bits(p);
    // The result register also holds the PE's flags above the word.
    let result_width = gen.result_bits(p) + gen.flags().len() as u32;
    let (boundaries, plan) = gen.plan(p);
    let sideband = gen.sideband(p);
    m.define(&name, plan, |pe| {
        pe.header.push(format!(
            "One {} PE of the array for {}; ports and timing: docs/rtl.md, array.",
            p.pe.name(),
            p.format_name()
        ));
        // Large PEs stay one C++ class in Verilator, compiled once: the 8×8 posit-quire
        // model builds in 83 s instead of more than 13 minutes, and the lns-kahan one runs
        // faster (docs/perf.md). Small PEs (fix, lns-plain) simulate faster inlined.
        pe.no_inline = gen.no_inline();
        pe.input("clk", 1);
        pe.input("rst", 1);
        let a = pe.input("a", w);
        let b = pe.input("b", w);
        let valid = pe.input("valid", 1);
        let clear = pe.input("clear", 1);
        let last = pe.input("last", 1);
        // What the PE uses and passes on: the sideband as received, or made of it (`pass`).
        let side = sideband.as_ref().map(|sb| {
            let s = pe.input(sb.port, (sb.pe_bits)(w));
            let s = match sb.pass {
                Some(pass) => pass(pe, &s),
                None => s,
            };
            (sb.port, s)
        });
        for (port, d, reset) in [
            ("a_out", &a, false),
            ("b_out", &b, false),
            ("valid_out", &valid, true),
            ("clear_out", &clear, true),
            ("last_out", &last, true),
        ] {
            let q = pe.register(&format!("{port}_q"), d, reset.then_some(0));
            pe.output(port, &q);
        }
        if let Some((port, s)) = &side {
            let q = pe.register(&format!("{port}_out_q"), s, None);
            pe.output(&format!("{port}_out"), &q);
        }
        for control in [&valid, &clear, &last] {
            pe.reset_on_delay(control);
        }
        let io = PeIo {
            a,
            b,
            enable: valid,
            clear,
        };
        // The accumulator register holds the step `last` marks one cycle after the step
        // leaves the loop (with loop registers, the register holds each accumulation in
        // turn as it comes round).
        let word = gen.build(pe, p, &io, side.as_ref().map(|(_, s)| s))?;
        let last_now = pe.now(&last);
        let mut capture = pe.register("capture", &last_now, Some(0));
        for k in 0..readout {
            // The read-out's registers: the result loads a cycle later for each.
            let name = if k == 0 {
                "capture_readout".into()
            } else {
                format!("capture_readout{k}")
            };
            capture = pe.register(&name, &capture, Some(0));
        }
        if word.width != result_width {
            return Err(GenError(format!(
                "the {} PE reads out {} bits, not the {result_width} of {} (generator bug)",
                p.pe.name(),
                word.width,
                p.format
            )));
        }
        assert_eq!(
            pe.boundaries(),
            boundaries as usize,
            "a PE marks the product boundary and its loop's"
        );
        assert_eq!(pe.cycle(), pe_stages, "the PE's latency is its plan's");
        let res = pe.state("res", result_width, Some(0));
        pe.drive(&res, &word, Some(&capture));
        pe.output("result", &res);
        Ok(())
    })
}

/// Registers inside the PE's read-out (the PE kind's: 1 for the dfix PE at stages 2, for the
/// fix PE 1 from stages 4 and 2 at stages 7, else 0). They add to the array's latency.
pub fn readout_registers(p: &Params) -> u32 {
    p.pe.gen().readout_registers(p.stages)
}

/// `d` delayed by 0..=n cycles: taps[j] is `d` delayed j cycles.
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
    let valid_skew = chain(m, "step", &step.valid, rows - 1, true);
    let clear_skew = chain(m, "step_clear", &step.clear, rows - 1, true);
    let last_skew = chain(m, "step_last", &step.last, rows - 1, true);
    // Row r's sideband delayed r cycles: one chain for a broadcast value (tap r feeds row r),
    // one per row for a per-row one.
    let side_skew: Option<Vec<E>> = side.as_ref().map(|parts| {
        let port = sideband.expect("a sideband").port;
        if let [s] = &parts[..] {
            let s = m.now(s);
            return chain(m, &format!("step_{port}"), &s, rows - 1, false);
        }
        let mut taps = vec![];
        for (r, s) in parts.iter().enumerate() {
            let s = m.now(s);
            let skew = chain(m, &format!("step_{port}{r}"), &s, r as u32, false);
            taps.push(skew[r].clone());
        }
        taps
    });
    m.comment("operands: row r's a delayed r cycles, column c's b delayed c cycles (the skew)");
    (0..rows)
        .map(|r| {
            let ri = r as usize;
            let word = m.wire(&format!("a_row{r}"), &a_in.bits(r * w + w - 1, r * w));
            let skew = chain(m, &format!("a_row{r}"), &word, r, false);
            FromLeft {
                a: skew[ri].clone(),
                valid: valid_skew[ri].clone(),
                clear: clear_skew[ri].clone(),
                last: last_skew[ri].clone(),
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
            let skew = chain(m, &format!("b_col{c}"), &word, c, false);
            skew[c as usize].clone()
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

/// The array designs of the lint grid. Full: 1×1, 2×3, 4×4, 8×8 and 16×16 of every PE kind
/// (stages 0..=2 up to 2×3, the LNS PEs 0..=5 there and the posit-quire PE 0..=8; 0 and 2
/// at 4×4, 2 from 8×8; Yosys `synth` keeps the hierarchy, so it maps the PE module once
/// whatever the size; the fix PE 0..=9 up to 2×3, and 0, 2, 4, 7, 9 at 4×4). Lean: the
/// fix PE at 1×1 and 2×3 at stages 0..=9, the others 1×1 at stages 0..=2, the LNS PEs 1×1
/// at 5 and the posit-quire PE 1×1 at 8. The float PE: fp8:e4m3 as the other PEs, bf16 1×1
/// only (0..=2); with `--acc`: fp8:e4m3 into bf16 and fp8:e5m2 into float:8:23, 1×1 at
/// 0..=2 (and 2×3 in the full grid); with `--rounding stochastic:R`, the designs below.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let shapes: &[(u32, u32)] = if full {
        &[(1, 1), (2, 3), (4, 4), (8, 8), (16, 16)]
    } else {
        &[(1, 1), (2, 3)]
    };
    let kinds = [
        (PeKind::Fix, "fix:7:8"),
        (PeKind::LnsKahan, "lns:5:6"),
        (PeKind::LnsPlain, "lns:5:6"),
        (PeKind::PositQuire, "posit:16"),
        (PeKind::Float, "fp8:e4m3"),
        (PeKind::Float, "bf16"),
    ];
    let mut g = super::dfix::array_grid(full);
    for (pe, fmt) in kinds {
        for &(r, c) in shapes {
            if !full && pe != PeKind::Fix && r * c > 1 {
                continue;
            }
            // bf16's PE holds a 587-bit accumulator: one PE is enough to lint it.
            if fmt == "bf16" && r * c > 1 {
                continue;
            }
            let stages: &[u32] = match (r * c, pe) {
                // Interleaved Kahan loops (stages 3..=5): the lean grid checks the deepest.
                (0..=6, PeKind::LnsKahan | PeKind::LnsPlain) if full => &[0, 1, 2, 3, 4, 5],
                (1, PeKind::LnsKahan | PeKind::LnsPlain) => &[0, 1, 2, 5],
                // Registers around the quire (stages 3..=8): the lean grid checks the deepest.
                (0..=6, PeKind::PositQuire) if full => &[0, 1, 2, 3, 4, 5, 6, 7, 8],
                (1, PeKind::PositQuire) => &[0, 1, 2, 8],
                (0..=6, PeKind::Fix) => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
                (0..=6, _) => &[0, 1, 2],
                (7..=16, PeKind::Fix) => &[0, 2, 4, 7, 9],
                (7..=16, _) => &[0, 2],
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
    // The float PE accumulating in a wider float (`--acc`): 1×1 at every stage count, and
    // 2×3 in the full grid.
    for (fmt, acc, shape) in [
        ("fp8:e4m3", "bf16", (1, 1)),
        ("fp8:e5m2", "float:8:23", (1, 1)),
        ("fp8:e4m3", "bf16", (2, 3)),
    ] {
        if !full && shape != (1, 1) {
            continue;
        }
        for s in 0..=2 {
            let mut p = Params::new(super::Unit::Array, fmt.parse().unwrap()).stages(s);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            p.acc = Some(acc.parse().unwrap());
            g.push(p);
        }
    }
    // The float PE's stochastic read-out: lean, fp8:e4m3 2×2 at stages 1; full, fp8:e4m3
    // 2×3 and bf16 1×1 at 0..=2, fp8:e5m2 4×4 at 2.
    for (fmt, r, shape, stages) in [
        ("fp8:e4m3", 4, (2, 2), &[1][..]),
        ("fp8:e4m3", 4, (2, 3), &[0, 1, 2][..]),
        ("bf16", 8, (1, 1), &[0, 1, 2][..]),
        ("fp8:e5m2", 12, (4, 4), &[2][..]),
    ] {
        // The lean design is the 2×2 one; the full grid has the others.
        if full == (shape == (2, 2)) {
            continue;
        }
        for &s in stages {
            let mut p = Params::new(super::Unit::Array, fmt.parse().unwrap())
                .stages(s)
                .rounding(lpgen_golden::Rounding::Stochastic(r), 3);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            g.push(p);
        }
    }
    g.extend(super::mx::array_grid(full));
    g.extend(super::float::fdpa_array_grid(full));
    g
}
