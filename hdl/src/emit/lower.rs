//! Lowering: expressions rewritten so the text is plain Verilog-2005 (a slice of anything but
//! a signal, an arithmetic shift inside an expression and a ROM read each get a wire of their
//! own), for every driver of the module: wires and outputs, state registers, instance inputs.

use crate::ir::{Module, Node, ShiftOp, SigId, SigKind, Signal, E};

/// The lowered module: signals plus drivers, ready to print.
pub(super) struct Lowered<'m> {
    pub m: &'m Module,
    pub signals: Vec<Signal>,
    /// Wire / output drivers, in creation order.
    pub assigns: Vec<(SigId, E)>,
    /// (rom index, address signal, output signal)
    pub rom_reads: Vec<(usize, SigId, SigId)>,
    /// For each wire lowering made, the signal whose driver it is part of (printed just
    /// before that driver).
    pub part_of: std::collections::HashMap<SigId, SigId>,
    /// The signal whose driver is being lowered.
    current: Option<SigId>,
}

impl Lowered<'_> {
    /// A wire for a part of the expression that drives `base`: `NAME_wide` (a value a slice
    /// reads part of), `NAME_sar`, `NAME_addr`, numbered when one driver needs several.
    fn new_wire(&mut self, base: &str, what: &str, e: E) -> E {
        let stem = format!("{base}_{what}");
        let mut name = stem.clone();
        let mut k = 1;
        while self.signals.iter().any(|s| s.name == name) {
            k += 1;
            name = format!("{stem}{k}");
        }
        self.signals.push(Signal {
            name,
            width: e.width,
            kind: SigKind::Wire,
            cycle: None,
        });
        let id = self.signals.len() - 1;
        if let Some(c) = self.current {
            self.part_of.insert(id, c);
        }
        self.assigns.push((id, e));
        E {
            node: std::rc::Rc::new(Node::Sig(id)),
            width: self.signals[id].width,
        }
    }

    /// Rewrites `e` (which drives `base`) so every slice is of a signal and every `>>>` /
    /// ROM read is a wire.
    fn lower(&mut self, e: &E, root: bool, base: &str) -> E {
        let w = e.width;
        let node = match &*e.node {
            Node::Sig(_) | Node::Const(_) | Node::Named(..) => return e.clone(),
            Node::Slice(x, hi, lo) => {
                let x = self.lower(x, false, base);
                let x = if x.sig().is_some() {
                    x
                } else {
                    self.new_wire(base, "wide", x)
                };
                Node::Slice(x, *hi, *lo)
            }
            Node::Concat(xs) => {
                Node::Concat(xs.iter().map(|x| self.lower(x, false, base)).collect())
            }
            Node::Repeat(x, n) => Node::Repeat(self.lower(x, false, base), *n),
            Node::Not(x) => Node::Not(self.lower(x, false, base)),
            Node::Bin(op, a, b) => {
                Node::Bin(*op, self.lower(a, false, base), self.lower(b, false, base))
            }
            Node::Cmp(op, a, b) => {
                Node::Cmp(*op, self.lower(a, false, base), self.lower(b, false, base))
            }
            Node::Shift(op, a, b) => {
                let s = Node::Shift(*op, self.lower(a, false, base), self.lower(b, false, base));
                if *op == ShiftOp::Sar && !root {
                    let s = E {
                        node: std::rc::Rc::new(s),
                        width: w,
                    };
                    return self.new_wire(base, "sar", s);
                }
                s
            }
            Node::Reduce(op, x) => Node::Reduce(*op, self.lower(x, false, base)),
            Node::Mux(c, a, b) => Node::Mux(
                self.lower(c, false, base),
                self.lower(a, false, base),
                self.lower(b, false, base),
            ),
            Node::Rom(r, a) => {
                let a = self.lower(a, false, base);
                let a = match a.sig() {
                    Some(s) => s,
                    None => self.new_wire(base, "addr", a).sig().unwrap(),
                };
                let name = self.m.roms[*r].name.clone();
                self.signals.push(Signal {
                    name,
                    width: w,
                    kind: SigKind::Wire,
                    cycle: None,
                });
                let out = self.signals.len() - 1;
                self.rom_reads.push((*r, a, out));
                return E {
                    node: std::rc::Rc::new(Node::Sig(out)),
                    width: w,
                };
            }
        };
        E {
            node: std::rc::Rc::new(node),
            width: w,
        }
    }
}

/// A state register lowered: (signal, reset value, next value, enable).
pub(super) type State = (SigId, Option<u128>, E, Option<E>);

/// The module's drivers, lowered.
pub(super) struct LoweredModule<'m> {
    pub low: Lowered<'m>,
    pub states: Vec<State>,
    /// Each instance's inputs: (port, expression).
    pub instances: Vec<Vec<(String, E)>>,
}

/// Lowers every driver of `m`; the wire drivers sorted back into creation order of their
/// targets, for readable output.
pub(super) fn lower_module(m: &Module) -> LoweredModule<'_> {
    let mut low = Lowered {
        m,
        signals: m.signals.clone(),
        assigns: vec![],
        rom_reads: vec![],
        part_of: Default::default(),
        current: None,
    };
    for (id, e) in &m.assigns {
        // A wire holding a ROM read is the ROM's output itself (assigned in its `case`).
        let name = m.signals[*id].name.clone();
        low.current = Some(*id);
        if let (Node::Rom(r, addr), SigKind::Wire) = (&*e.node, m.signals[*id].kind) {
            let addr = low.lower(addr, false, &name);
            let addr = match addr.sig() {
                Some(s) => s,
                None => low.new_wire(&name, "addr", addr).sig().unwrap(),
            };
            low.rom_reads.push((*r, addr, *id));
            continue;
        }
        let e = low.lower(e, true, &name);
        low.assigns.push((*id, e));
    }
    low.current = None;
    let states: Vec<State> = m
        .states
        .iter()
        .map(|s| {
            let next = s.next.as_ref().unwrap_or_else(|| {
                panic!("state register {} is never driven", m.signals[s.sig].name)
            });
            let name = m.signals[s.sig].name.clone();
            let next = low.lower(next, true, &format!("{name}_next"));
            let en = s
                .enable
                .as_ref()
                .map(|e| low.lower(e, false, &format!("{name}_enable")));
            (s.sig, s.reset, next, en)
        })
        .collect();
    // Instance inputs, lowered like any expression.
    let instances: Vec<Vec<(String, E)>> = m
        .instances
        .iter()
        .map(|i| {
            i.inputs
                .iter()
                .map(|(port, e)| {
                    let base = format!("{}_{port}", i.name);
                    (port.clone(), low.lower(e, false, &base))
                })
                .collect()
        })
        .collect();
    low.assigns.sort_by_key(|(id, _)| *id);
    LoweredModule {
        low,
        states,
        instances,
    }
}
