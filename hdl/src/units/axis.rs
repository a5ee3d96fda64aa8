//! `lpgen rtl … --wrap axis`: an AXI4-Stream wrapper around a unit that gives one result per
//! input at a fixed latency (docs/rtl.md, "AXI4-Stream wrapper").
//!
//! | port | dir | width | meaning |
//! | --- | --- | --- | --- |
//! | `s_axis_tdata` | in | Σ inputs, to bytes | the unit's inputs but clk, rst, in_valid, in port order, the first at bit 0; zero padding above |
//! | `s_axis_tvalid`, `s_axis_tlast` | in | 1 | |
//! | `s_axis_tready` | out | 1 | a beat is taken when tvalid and tready are both high |
//! | `m_axis_tdata` | out | Σ outputs, to bytes | the unit's outputs but out_valid, in port order, the first at bit 0; zeros above |
//! | `m_axis_tvalid`, `m_axis_tlast` | out | 1 | tlast: the input beat's, carried through the pipeline |
//! | `m_axis_tready` | in | 1 | |
//!
//! The unit's pipeline cannot stall, so the wrapper gives credit: every beat taken is a place
//! in a result buffer of L + 2 entries (L the unit's latency), and `s_axis_tready` is high
//! while fewer than L + 2 beats are taken and not yet delivered. A result leaves the unit L
//! cycles after its beat and waits in the buffer until `m_axis_tready`: nothing is dropped or
//! duplicated, and at L + 2 a stream runs at one beat a cycle while the sink is ready
//! (s_axis_tready is a register's output, with no path from m_axis_tready). The first result
//! appears on m_axis_tdata L + 1 cycles after its beat.
//!
//! Built in the IR: the unit is an instance of its generated top (the files of its own
//! design, unchanged), the buffer is state registers.

use std::rc::Rc;

use crate::ir::{cat, konst, mux, Module, StagePlan, SubModule, SubPort, E};
use crate::manifest::{Direction, Manifest, Port};
use crate::sources::{Verilog, VerilogFile};

use super::{generate, Design, GenError, Params, Unit, GENERATOR_VERSION};

/// The wrapper of `p`'s design is named `<top>_axis`.
pub const AXIS_SUFFIX: &str = "_axis";

/// Whether `p`'s unit gives one result per input at a fixed latency, its state (if any)
/// advanced only by inputs (what the wrapper streams), or why not.
fn streams(p: &Params) -> Result<(), &'static str> {
    match p.unit {
        // P = stages accumulations interleaved by cycle (docs/rtl.md): a stalled stream
        // would move steps between them.
        Unit::LnsKahan if p.stages >= 2 => {
            Err("at --stages 2 and more interleaves accumulations by clock cycle (use 0 or 1)")
        }
        Unit::LnsMul
        | Unit::LnsAdd
        | Unit::LnsKahan
        | Unit::PositAdd
        | Unit::PositMul
        | Unit::PositMac
        | Unit::FixMac
        | Unit::Alu
        | Unit::Vector
        | Unit::Q8Enc
        | Unit::Q8Dec
        | Unit::Convert
        | Unit::FloatAdd
        | Unit::FloatMul
        | Unit::FloatFma => Ok(()),
        Unit::Array => Err("gives results only for steps marked last"),
        Unit::Quant1 => Err("takes each column twice and answers after the second pass"),
        Unit::DfixMonitor => Err("counts read-outs and gives no result per input"),
        Unit::MxDot | Unit::MxEnc => {
            Err("is not wrapped yet (its ports are block buses; issue 33)")
        }
    }
}

fn bits_for(n: u32) -> u32 {
    32 - n.leading_zeros()
}

fn to_bytes(w: u32) -> u32 {
    w.div_ceil(8) * 8
}

/// The unit's generated top as a definition the wrapper instantiates: its ports from the
/// manifest (inputs at cycle 0, outputs at the latency).
fn unit_def(d: &Design, m: &Manifest) -> Rc<SubModule> {
    let ports = m
        .ports
        .iter()
        .map(|p| SubPort {
            name: p.name.clone(),
            input: p.direction == Direction::Input,
            width: p.width,
            cycle: if p.direction == Direction::Input {
                0
            } else {
                m.latency
            },
        })
        .collect();
    let top_file = format!("{}.v", d.top);
    let verilog = d
        .verilog
        .files
        .iter()
        .find(|f| f.name == top_file)
        .map_or_else(String::new, |f| f.text.clone());
    Rc::new(SubModule {
        name: d.top.clone(),
        ports,
        verilog,
        children: vec![],
    })
}

/// The wrapper module around the unit `def` of latency `lat`, with `data_in`/`data_out` the
/// unit's data ports (name, width) in port order.
fn wrapper(name: &str, def: &Rc<SubModule>, lat: u32) -> Module {
    let data_in: Vec<&SubPort> = def
        .ports
        .iter()
        .filter(|p| p.input && !["clk", "rst", "in_valid"].contains(&p.name.as_str()))
        .collect();
    let depth = lat + 2;
    let mut m = Module::new(name, StagePlan::none());
    m.input("clk", 1);
    m.input("rst", 1);
    let w_in: u32 = data_in.iter().map(|p| p.width).sum();
    let s_data = m.input("s_axis_tdata", to_bytes(w_in));
    let s_valid = m.input("s_axis_tvalid", 1);
    let s_last = m.input("s_axis_tlast", 1);
    let m_ready_in = m.input("m_axis_tready", 1);

    m.comment("credit: beats taken and not yet delivered, at most the buffer's depth");
    let ow = bits_for(depth);
    let taken = m.state("taken", ow, Some(0));
    let s_ready = m.wire("s_ready", &taken.lt(&konst(ow, depth.into())));
    m.output("s_axis_tready", &s_ready);
    let accept = m.wire("accept", &s_valid.and(&s_ready));

    m.comment("the unit");
    let mut inputs: Vec<(String, E)> = vec![("in_valid".into(), accept.clone())];
    let mut lo = 0;
    for p in &data_in {
        inputs.push((p.name.clone(), s_data.bits(lo + p.width - 1, lo)));
        lo += p.width;
    }
    let refs: Vec<(&str, &E)> = inputs.iter().map(|(n, e)| (n.as_str(), e)).collect();
    let unit = m.instance(def, "unit", &refs);
    let outs: Vec<E> = def
        .ports
        .iter()
        .filter(|p| !p.input && p.name != "out_valid")
        .map(|p| unit.port(&p.name))
        .collect();
    let done = unit.port("out_valid");
    m.wait_for(&done);
    // tlast travels with its beat through delay registers; the buffer logic below runs in the
    // same clock cycle as the credit above, read without delay.
    let last = m.now(&s_last);
    let (accept, m_ready) = if lat == 0 {
        (accept, m_ready_in)
    } else {
        (
            m.ahead("accept_now", &accept),
            m.ahead("m_ready_now", &m_ready_in),
        )
    };

    m.comment("result buffer: a ring of depth L + 2 entries of {tlast, results}");
    let w_out: u32 = outs.iter().map(|o| o.width).sum();
    let entry = {
        let mut parts = vec![last];
        parts.extend(outs.iter().rev().cloned());
        cat(&parts)
    };
    let pw = bits_for(depth - 1).max(1);
    let (wp, rp) = (
        m.state("wr_ptr", pw, Some(0)),
        m.state("rd_ptr", pw, Some(0)),
    );
    let count = m.state("count", ow, Some(0));
    let has = m.wire("has_result", &count.ne(&konst(ow, 0)));
    let pop = m.wire("pop", &has.and(&m_ready));
    let mut head: Option<E> = None;
    for k in 0..depth {
        let slot = m.state(&format!("slot{k}"), w_out + 1, None);
        let here = wp.eq(&konst(pw, k.into()));
        m.drive(&slot, &entry, Some(&done.and(&here)));
        head = Some(match head {
            None => slot,
            Some(h) => mux(&rp.eq(&konst(pw, k.into())), &slot, &h),
        });
    }
    let head = head.expect("the buffer has L + 2 >= 2 entries");
    let head = m.wire("head", &head);
    let next = |m: &mut Module, name: &str, p: &E| {
        let wrap = p.eq(&konst(pw, (depth - 1).into()));
        m.wire(name, &mux(&wrap, &konst(pw, 0), &p.add(&konst(pw, 1))))
    };
    let wp_next = next(&mut m, "wr_next", &wp);
    let rp_next = next(&mut m, "rd_next", &rp);
    m.drive(&wp, &wp_next, Some(&done));
    m.drive(&rp, &rp_next, Some(&pop));
    let one = konst(ow, 1);
    let zero = konst(ow, 0);
    let inc = |b: &E| mux(b, &one, &zero);
    m.drive(&count, &count.add(&inc(&done)).sub(&inc(&pop)), None);
    m.drive(&taken, &taken.add(&inc(&accept)).sub(&inc(&pop)), None);

    let pad = to_bytes(w_out) - w_out;
    let data = head.bits(w_out - 1, 0);
    let data = if pad == 0 {
        data
    } else {
        cat(&[konst(pad, 0), data])
    };
    m.output("m_axis_tdata", &data);
    m.output("m_axis_tvalid", &has);
    m.output("m_axis_tlast", &head.bit(w_out));
    m
}

/// The wrapper design of `p`: the unit's own files, then `<top>_axis.v`; its manifest names
/// the unit's top in `wraps` (the unit's manifest `<top>.json` lies beside it when
/// `lpgen rtl` writes both).
pub fn wrap_axis(p: &Params) -> Result<(Design, Design), GenError> {
    if let Err(why) = streams(p) {
        return Err(GenError(format!(
            "--wrap axis needs a unit with one result per input; {} {why}",
            p.unit.name()
        )));
    }
    let inner = generate(p)?;
    let im = Manifest::from_json(&inner.manifest)
        .map_err(|e| GenError(format!("the unit's manifest: {e}")))?;
    let def = unit_def(&inner, &im);
    let top = format!("{}{AXIS_SUFFIX}", inner.top);
    let mut m = wrapper(&top, &def, im.latency);
    m.header = vec![
        format!(
            "{top}: AXI4-Stream wrapper of {} ({} for {}), generated by lpgen {GENERATOR_VERSION}; do not edit.",
            inner.top, im.unit, im.format
        ),
        format!(
            "Result buffer of {} entries: the unit's latency {} + 2 (docs/rtl.md).",
            im.latency + 2,
            im.latency
        ),
        "Ports: clk, synchronous active-high rst, s_axis_* in, m_axis_* out.".into(),
    ];
    let mut files = inner.verilog.files.clone();
    files.push(VerilogFile {
        name: format!("{top}.v"),
        text: crate::emit::verilog(&m),
    });
    let verilog = Verilog { files };
    let ports = Port::list(&m);
    let manifest = Manifest {
        top: top.clone(),
        file_list: format!("{top}.f"),
        files: verilog.names(),
        ports,
        latency: im.latency + 1,
        wraps: Some(inner.top.clone()),
        ..im
    };
    let outer = Design {
        top,
        verilog,
        manifest: manifest.to_json(),
    };
    Ok((inner, outer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(unit: Unit, f: &str, stages: u32) -> Params {
        Params::new(unit, f.parse().unwrap()).stages(stages)
    }

    #[test]
    fn wrapper_ports_pack_the_units_data_ports_to_bytes() {
        let (unit, outer) = wrap_axis(&params(Unit::PositAdd, "posit:8:0", 2)).unwrap();
        assert_eq!(outer.top, format!("{}_axis", unit.top));
        let m = Manifest::from_json(&outer.manifest).unwrap();
        let ports: Vec<(&str, Direction, u32)> = m
            .ports
            .iter()
            .map(|p| (p.name.as_str(), p.direction, p.width))
            .collect();
        use Direction::{Input as I, Output as O};
        // a, b (8 bits each) and sub: 17 bits, to 24; y and nar: 9 bits, to 16.
        assert_eq!(
            ports,
            [
                ("clk", I, 1),
                ("rst", I, 1),
                ("s_axis_tdata", I, 24),
                ("s_axis_tvalid", I, 1),
                ("s_axis_tlast", I, 1),
                ("m_axis_tready", I, 1),
                ("s_axis_tready", O, 1),
                ("m_axis_tdata", O, 16),
                ("m_axis_tvalid", O, 1),
                ("m_axis_tlast", O, 1),
            ]
        );
        assert_eq!(m.wraps.as_deref(), Some(unit.top.as_str()));
        assert_eq!(m.latency, 3, "the unit's 2 cycles and the buffer's");
        assert_eq!(m.unit, "posit-add");
        // The unit's files unchanged, then the wrapper's.
        let mut want = unit.verilog.files.clone();
        assert_eq!(outer.verilog.files[..want.len()], want[..]);
        want.push(outer.verilog.files.last().unwrap().clone());
        assert_eq!(outer.verilog.files, want);
        let text = &outer.verilog.files.last().unwrap().text;
        // A ring of L + 2 = 4 entries of {tlast, nar, y}, and the credit limit 4.
        assert!(
            text.contains("reg  [9:0] slot3;") && !text.contains("slot4"),
            "{text}"
        );
        assert!(text.contains("assign s_ready = (taken < 3'd4);"), "{text}");
    }

    #[test]
    fn combinational_units_are_wrapped_too() {
        let (_, outer) = wrap_axis(&params(Unit::LnsMul, "lns:5:6", 0)).unwrap();
        let text = &outer.verilog.files.last().unwrap().text;
        assert!(text.contains("reg  [15:0] slot1;") && !text.contains("slot2"));
        assert_eq!(Manifest::from_json(&outer.manifest).unwrap().latency, 1);
    }

    #[test]
    fn units_without_one_result_per_input_are_refused() {
        for u in [Unit::Array, Unit::Quant1, Unit::DfixMonitor] {
            let e = wrap_axis(&params(u, "fix:7:8", 0)).unwrap_err().0;
            assert!(
                e.starts_with("--wrap axis needs a unit with one result per input"),
                "{e}"
            );
            assert!(e.contains(u.name()), "{e}");
        }
        for u in Unit::ALL {
            assert_eq!(
                streams(&params(u, "fix:7:8", 0)).is_ok(),
                !matches!(
                    u,
                    Unit::Array | Unit::Quant1 | Unit::DfixMonitor | Unit::MxDot | Unit::MxEnc
                )
            );
        }
        assert!(streams(&params(Unit::LnsKahan, "lns:4:4", 1)).is_ok());
        let e = wrap_axis(&params(Unit::LnsKahan, "lns:4:4", 2))
            .unwrap_err()
            .0;
        assert!(e.contains("interleaves accumulations"), "{e}");
    }
}
