//! The array's PE module: which PE generator serves a design (the registry's pairing of PE
//! kinds with families, `--acc` and stochastic read-outs refused where the PE lacks them),
//! and the module `lpgen_pe_<kind>_<format>…` the array instantiates R×C times.

use std::rc::Rc;

use super::PE_MODULE_PREFIX;
use crate::ir::{Module, SubModule};
use crate::units::pe::ArrayPe;
use crate::units::{GenError, Params, PeIo, PeKind};

/// The generator of `p.pe`, if the registry gives that PE to the format's family.
pub(super) fn pe_gen(p: &Params) -> Result<&'static dyn ArrayPe, GenError> {
    // NVFP4 blocks go with the NVFP4 PE only (the format is then f32, unused), which reads out
    // to nearest and accumulates in f32, as the MX PE below.
    match (p.scaled, p.pe == PeKind::Nvfp4) {
        (Some(_), true) => {
            check_read_out(p)?;
            return Ok(p.pe.gen());
        }
        (Some(sf), false) => {
            return Err(GenError(format!(
                "array PE '{}' does not work on {sf}: NVFP4 blocks take --pe nvfp4 (the default for nvfp4 formats)",
                p.pe.name()
            )))
        }
        // An MX format is refused below, by the MX pairing.
        (None, true) if p.mx.is_none() => {
            return Err(GenError(format!(
                "array PE 'nvfp4' works on NVFP4 blocks (--format nvfp4, or scaled/fp4:e2m1/bK/ue4m3/t with K <= 16), not {}",
                p.format
            )))
        }
        (None, _) => {}
    }
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
    crate::units::float::check_fdpa_array(p)?;
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
pub(super) fn pe_module(
    m: &Module,
    p: &Params,
    gen: &dyn ArrayPe,
) -> Result<Rc<SubModule>, GenError> {
    let pe_stages = gen.latency(p.stages);
    let readout = gen.readout_registers(p.stages);
    // S: the PE's registers on the way to its result register, read-out register included.
    let acc = p.acc.map_or(String::new(), |a| {
        format!("_acc_{}", a.to_string().replace(':', "_"))
    });
    // The fdpa PE's chunking (and promotion): arrays of two modes have two PE modules.
    let acc = match p.fdpa.filter(|_| p.pe == PeKind::Fdpa) {
        Some(mode) => acc + &crate::units::params::fdpa_name(p.format, mode),
        None => acc,
    };
    let sr = match p.rounding {
        lpgen_golden::Rounding::Stochastic(r) => format!("_sr{r}"),
        lpgen_golden::Rounding::Nearest => String::new(),
    };
    let name = format!(
        "{PE_MODULE_PREFIX}{}_{}{acc}{sr}_s{}",
        p.pe.name().replace('-', "_"),
        p.format_name().replace([':', '/'], "_"),
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
