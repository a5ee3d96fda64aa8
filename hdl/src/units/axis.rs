//! `lpgen rtl … --wrap axis`: an AXI4-Stream wrapper around any unit (docs/rtl.md,
//! "AXI4-Stream wrapper"). One beat is one `in_valid` step.
//!
//! | port | dir | width | meaning |
//! | --- | --- | --- | --- |
//! | `s_axis_tdata` | in | Σ inputs, to bytes | the unit's inputs but clk, rst, in_valid, in port order, the first at bit 0; zero padding above |
//! | `s_axis_tvalid`, `s_axis_tlast` | in | 1 | |
//! | `s_axis_tready` | out | 1 | a beat is taken when tvalid and tready are both high |
//! | `m_axis_tdata` | out | Σ outputs, to bytes | the unit's outputs but out_valid, in port order, the first at bit 0; zeros above |
//! | `m_axis_tvalid`, `m_axis_tlast` | out | 1 | tlast: the result's beat's (or that of a beat without a result since the previous result), carried through the pipeline |
//! | `m_axis_tready` | in | 1 | |
//!
//! The unit's pipeline cannot stall, so the wrapper gives credit: every beat taken that will
//! give a result is a place in a result buffer of L + 2 entries (L the unit's latency), and
//! `s_axis_tready` is high while fewer than L + 2 such beats are taken and not yet delivered.
//! A result leaves the unit L cycles after its beat and waits in the buffer until
//! `m_axis_tready`: nothing is dropped or duplicated, and at L + 2 a stream runs at one beat a
//! cycle while the sink is ready (s_axis_tready is a function of registers, with no path from
//! any input). The first result appears on m_axis_tdata L + 1 cycles after its beat.
//!
//! [`Stream`] holds the rules of units whose beats do not each give a result (the array:
//! only `last` beats), that need cycles between some steps (the array's `last` spacing,
//! quant1's division), that obey an input without `in_valid` (dfix-monitor's `clear`) or
//! that interleave accumulations by cycle (beat n is issued in a cycle of slot n mod P).
//!
//! Built in the IR: the unit is an instance of its generated top (the files of its own
//! design, unchanged), the buffer and counters are state registers.

use std::rc::Rc;

use crate::ir::{cat, konst, mux, Module, StagePlan, SubModule, SubPort, E};
use crate::manifest::{Direction, Manifest, Port, StreamRules};
use crate::sources::{Verilog, VerilogFile};

use super::{generate, Design, GenError, Params, Unit, GENERATOR_VERSION};

/// The wrapper of `p`'s design is named `<top>_axis`.
pub const AXIS_SUFFIX: &str = "_axis";

/// How the wrapper streams a unit: which beats give a result, the cycles a beat of some
/// kind must leave before the next, and the accumulations the unit interleaves by cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stream {
    /// The input (a 1-bit port packed in `s_axis_tdata`) whose beats give a result, or
    /// `None`: every beat gives one.
    result_when: Option<&'static str>,
    /// After a beat whose 1-bit inputs have these values, `hold` cycles take no beat.
    hold_when: Vec<(&'static str, bool)>,
    hold: u32,
    /// 1-bit inputs that act without `in_valid` (dfix-monitor's `clear`): the wrapper gives
    /// them the beat's bit only when the beat is taken, else 0.
    gated: Vec<&'static str>,
    /// P: the unit's step of cycle t joins accumulation t mod P; beat n is issued only in a
    /// cycle of slot n mod P, so a stall never moves a step to another accumulation.
    slots: u32,
}

impl Stream {
    /// As the wrapper's manifest lists them.
    fn rules(&self) -> StreamRules {
        StreamRules {
            result_when: self.result_when.map(str::to_string),
            hold_when: self
                .hold_when
                .iter()
                .map(|(n, v)| (n.to_string(), u32::from(*v)))
                .collect(),
            hold: self.hold,
            gated: self.gated.iter().map(|g| g.to_string()).collect(),
            slots: self.slots,
        }
    }

    fn every_beat() -> Stream {
        Stream {
            result_when: None,
            hold_when: vec![],
            hold: 0,
            gated: vec![],
            slots: 1,
        }
    }
}

/// How `p`'s unit is streamed (docs/rtl.md, "AXI4-Stream wrapper"). Every unit is: one beat
/// is one `in_valid` step (an MX unit's: one block, or block pair).
fn stream_of(p: &Params) -> Stream {
    match p.unit {
        Unit::LnsMul
        | Unit::LnsAdd
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
        | Unit::FloatFma
        | Unit::MxDot
        | Unit::MxEnc
        | Unit::Nvfp4Enc
        | Unit::Nvfp4Dot
        | Unit::Fdpa => Stream::every_beat(),
        // `clear` restarts the counts with or without a read-out: only a beat's counts.
        Unit::DfixMonitor => Stream {
            gated: vec!["clear"],
            ..Stream::every_beat()
        },
        // P = 1, 1, 2, 3, 4, 5 for stages 0..=5 (docs/rtl.md, `lns-kahan`).
        Unit::LnsKahan => Stream {
            slots: p.stages.max(1),
            ..Stream::every_beat()
        },
        // Results for steps marked `last`, two of which lie R + C − 1 cycles apart.
        Unit::Array => Stream {
            result_when: Some("last"),
            hold_when: vec![("last", true)],
            hold: p.rows + p.cols - 2,
            gated: vec![],
            slots: super::array_accumulations(p),
        },
        // A result per word of either pass; after pass 1's last word the dividers run.
        Unit::Quant1 => Stream {
            hold_when: vec![("last", true), ("replay", false)],
            hold: super::quant1::quant1_gap(p) - 1,
            ..Stream::every_beat()
        },
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

/// A counter of `width` bits: + 1 where `up`, − 1 where `down`.
fn up_down(m: &mut Module, reg: &E, up: &E, down: &E) {
    let w = reg.width;
    let (one, zero) = (konst(w, 1), konst(w, 0));
    let inc = |b: &E| mux(b, &one, &zero);
    m.drive(reg, &reg.add(&inc(up)).sub(&inc(down)), None);
}

/// The 1-bit input `name` of the beat on `s_axis_tdata`.
fn field(data_in: &[&SubPort], s_data: &E, name: &str) -> E {
    let mut lo = 0;
    for p in data_in {
        if p.name == name {
            return s_data.bit(lo);
        }
        lo += p.width;
    }
    panic!("the unit has no input {name}")
}

/// The stream's inputs (cycle 0).
struct Sink {
    data: E,
    valid: E,
    last: E,
}

/// The beat side (cycle 0, before the unit): what the wrapper decided about this cycle's beat.
struct Admit {
    s_ready: E,
    accept: E,
    /// A beat taken that gives a result (one more credit used).
    credit: E,
    /// The tlast that travels with the beat to its result.
    last: E,
    /// Beats with a result taken and not yet delivered.
    taken: E,
}

/// The beat-side rules: the credit `taken`, the hold after some beats, the slot alignment.
fn admit(m: &mut Module, st: &Stream, depth: u32, data_in: &[&SubPort], s: &Sink) -> Admit {
    m.comment(
        "credit: beats with a result taken and not yet delivered, at most the buffer's depth",
    );
    let ow = bits_for(depth);
    let taken = m.state("taken", ow, Some(0));
    let mut ready = taken.lt(&konst(ow, depth.into()));
    let hold_w = bits_for(st.hold);
    let hold = (st.hold > 0).then(|| {
        m.comment("hold: cycles without a beat after a beat that needs them");
        m.state("hold", hold_w, Some(0))
    });
    if let Some(h) = &hold {
        ready = ready.and(&h.eq(&konst(hold_w, 0)));
    }
    let slots = (st.slots > 1).then(|| {
        m.comment("slots: beat n is issued only in a cycle of the unit's slot n mod P");
        let w = bits_for(st.slots - 1);
        (
            m.state("cycle_slot", w, Some(0)),
            m.state("beat_slot", w, Some(0)),
        )
    });
    if let Some((c, b)) = &slots {
        ready = ready.and(&c.eq(b));
    }
    let s_ready = m.wire("s_ready", &ready);
    let accept = m.wire("accept", &s.valid.and(&s_ready));
    if let Some((c, b)) = &slots {
        step_modulo(m, c, st.slots, None);
        step_modulo(m, b, st.slots, Some(&accept));
    }
    if let Some(h) = &hold {
        let mut when = accept.clone();
        for (name, value) in &st.hold_when {
            let f = field(data_in, &s.data, name);
            when = when.and(&if *value { f } else { f.not() });
        }
        let when = m.wire("hold_start", &when);
        let zero = konst(hold_w, 0);
        let down = mux(&h.eq(&zero), h, &h.sub(&konst(hold_w, 1)));
        m.drive(h, &mux(&when, &konst(hold_w, st.hold.into()), &down), None);
    }
    let (credit, last) = match st.result_when {
        None => (accept.clone(), s.last.clone()),
        Some(name) => {
            let gives = m.wire("gives_result", &field(data_in, &s.data, name));
            m.comment("the tlast of a beat without a result goes with the next result");
            let pend = m.state("tlast_pending", 1, Some(0));
            let last = m.wire("last_in", &s.last.or(&pend));
            m.drive(&pend, &mux(&gives, &konst(1, 0), &last), Some(&accept));
            (m.wire("credit_used", &accept.and(&gives)), last)
        }
    };
    Admit {
        s_ready,
        accept,
        credit,
        last,
        taken,
    }
}

/// Counter `c` modulo `n` (n ≥ 2) steps where `step` (every cycle: `None`).
fn step_modulo(m: &mut Module, c: &E, n: u32, step: Option<&E>) {
    let w = c.width;
    let wrap = c.eq(&konst(w, (n - 1).into()));
    m.drive(c, &mux(&wrap, &konst(w, 0), &c.add(&konst(w, 1))), step);
}

/// The wrapper module around the unit `def` of latency `lat`, streamed as `st` says.
fn wrapper(name: &str, def: &Rc<SubModule>, lat: u32, st: &Stream) -> Module {
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
    let sink = Sink {
        data: m.input("s_axis_tdata", to_bytes(w_in)),
        valid: m.input("s_axis_tvalid", 1),
        last: m.input("s_axis_tlast", 1),
    };
    let m_ready_in = m.input("m_axis_tready", 1);
    let ad = admit(&mut m, st, depth, &data_in, &sink);
    m.output("s_axis_tready", &ad.s_ready);

    m.comment("the unit");
    let mut inputs: Vec<(String, E)> = vec![("in_valid".into(), ad.accept.clone())];
    let mut lo = 0;
    for p in &data_in {
        let mut bits = sink.data.bits(lo + p.width - 1, lo);
        if st.gated.contains(&p.name.as_str()) {
            bits = bits.and(&ad.accept);
        }
        inputs.push((p.name.clone(), bits));
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
    let last = m.now(&ad.last);
    let (credit, m_ready) = if lat == 0 {
        (ad.credit.clone(), m_ready_in)
    } else {
        (
            m.ahead("credit_now", &ad.credit),
            m.ahead("m_ready_now", &m_ready_in),
        )
    };
    let pop = buffer(&mut m, depth, &outs, &last, &done, &m_ready);
    up_down(&mut m, &ad.taken, &credit, &pop);
    m
}

/// The result buffer: a ring of `depth` entries of {tlast, results}, written where `done`,
/// read where the sink takes the head; drives the m_axis outputs, returns `pop`.
fn buffer(m: &mut Module, depth: u32, outs: &[E], last: &E, done: &E, m_ready: &E) -> E {
    m.comment("result buffer: a ring of depth L + 2 entries of {tlast, results}");
    let w_out: u32 = outs.iter().map(|o| o.width).sum();
    let entry = {
        let mut parts = vec![last.clone()];
        parts.extend(outs.iter().rev().cloned());
        cat(&parts)
    };
    let ow = bits_for(depth);
    let pw = bits_for(depth - 1).max(1);
    let (wp, rp) = (
        m.state("wr_ptr", pw, Some(0)),
        m.state("rd_ptr", pw, Some(0)),
    );
    let count = m.state("count", ow, Some(0));
    let has = m.wire("has_result", &count.ne(&konst(ow, 0)));
    let pop = m.wire("pop", &has.and(m_ready));
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
    let wp_next = next(m, "wr_next", &wp);
    let rp_next = next(m, "rd_next", &rp);
    m.drive(&wp, &wp_next, Some(done));
    m.drive(&rp, &rp_next, Some(&pop));
    up_down(m, &count, done, &pop);
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
    pop
}

/// The wrapper design of `p`: the unit's own files, then `<top>_axis.v`; its manifest names
/// the unit's top in `wraps` (the unit's manifest `<top>.json` lies beside it when
/// `lpgen rtl` writes both).
pub fn wrap_axis(p: &Params) -> Result<(Design, Design), GenError> {
    let inner = generate(p)?;
    let im = Manifest::from_json(&inner.manifest)
        .map_err(|e| GenError(format!("the unit's manifest: {e}")))?;
    let def = unit_def(&inner, &im);
    let top = format!("{}{AXIS_SUFFIX}", inner.top);
    let st = stream_of(p);
    let mut m = wrapper(&top, &def, im.latency, &st);
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
        stream: Some(st.rules()),
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
    fn every_unit_is_wrapped() {
        let mut seen = vec![];
        for p in crate::units::lint_grid(false) {
            if !seen.contains(&p.unit) {
                seen.push(p.unit);
                if let Err(e) = wrap_axis(&p) {
                    panic!("{}: {}", p.unit.name(), e.0);
                }
            }
        }
        assert_eq!(seen.len(), Unit::ALL.len());
    }

    #[test]
    fn stream_rules_of_the_units_that_need_them() {
        let kahan = |s| stream_of(&params(Unit::LnsKahan, "lns:4:4", s)).slots;
        assert_eq!([0, 1, 2, 3, 5].map(kahan), [1, 1, 2, 3, 5]);
        let mut arr = params(Unit::Array, "lns:4:4", 4);
        (arr.rows, arr.cols) = (2, 3);
        let st = stream_of(&arr);
        assert_eq!(st.result_when, Some("last"));
        assert_eq!((st.hold, st.slots), (3, 3), "R + C - 2; P = stages - 1");
        let q = stream_of(&params(Unit::Quant1, "fix:7:8", 0));
        assert_eq!(q.hold_when, [("last", true), ("replay", false)]);
        assert_eq!(q.hold, 16 + 3 - 1, "W steps, launch, rounding, then one");
        let mon = stream_of(&params(Unit::DfixMonitor, "dfix:8", 1));
        assert_eq!(
            mon.gated,
            ["clear"],
            "a clear alone would act while no beat is taken"
        );
        assert_eq!(mon.rules().gated, ["clear"]);
        assert_eq!(
            stream_of(&params(Unit::PositAdd, "posit:8:0", 2)),
            Stream::every_beat()
        );
    }

    #[test]
    fn the_array_wrapper_counts_credit_for_last_beats_holds_and_aligns() {
        let mut arr = params(Unit::Array, "lns:4:4", 3);
        (arr.rows, arr.cols) = (2, 2);
        let (_, outer) = wrap_axis(&arr).unwrap();
        let text = &outer.verilog.files.last().unwrap().text;
        for want in [
            "assign credit_used = (accept & gives_result);",
            "assign s_ready = (((taken < ",
            "hold == 2'd0",
            "cycle_slot == beat_slot",
        ] {
            assert!(text.contains(want), "{want} not in {text}");
        }
    }
}
