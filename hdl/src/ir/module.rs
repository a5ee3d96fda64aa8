//! The module builder: signals, assignments, state registers, ROMs and pipelining.

use std::collections::HashMap;
use std::fmt;

use super::expr::{cat, mk, mux, tree_with, Node, E};
use super::hier::{Instance, Library};

/// (System)Verilog keywords a generator might pick as a name (a subset: the short nouns).
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "always", "assign", "begin", "bit", "break", "byte", "case", "cell", "class", "config",
    "const", "default", "do", "edge", "else", "end", "enum", "event", "final", "for", "force",
    "function", "generate", "if", "initial", "input", "int", "integer", "logic", "local",
    "longint", "module", "negedge", "new", "null", "output", "package", "parameter",
    "posedge", "priority", "real", "reg", "return", "shortint", "signed", "small", "static",
    "string", "struct", "supply0", "supply1", "table", "task", "time", "type", "union",
    "unique", "unsigned", "use", "var", "void", "wait", "while", "wire", "with",
];

/// Index of a signal in its module.
pub type SigId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigKind {
    Input,
    Output,
    Wire,
    /// A pipeline delay register (free-running, no reset).
    Delay,
    /// A stateful register with reset and enable.
    State,
}

#[derive(Clone, Debug)]
pub struct Signal {
    pub name: String,
    pub width: u32,
    pub kind: SigKind,
    /// The cycle its value belongs to; `None` for state registers, read as they are.
    pub cycle: Option<u32>,
}

/// A ROM: constant contents indexed by an address.
#[derive(Clone, Debug)]
pub struct Rom {
    pub name: String,
    pub width: u32,
    pub contents: Vec<u128>,
}

/// A stateful register: `q <= rst ? reset : (enable ? next : q)`.
#[derive(Clone, Debug)]
pub struct StateReg {
    pub sig: SigId,
    pub reset: Option<u128>,
    /// The value the register holds when the FPGA is configured ([`Module::power_on`]).
    pub power_on: Option<u128>,
    pub next: Option<E>,
    pub enable: Option<E>,
}

/// Which candidate boundaries of a generator become pipeline registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePlan {
    cuts: Vec<bool>,
}

impl StagePlan {
    /// `stages` registers spread evenly over `candidates` boundaries (stages <= candidates).
    pub fn spread(stages: u32, candidates: u32) -> StagePlan {
        assert!(stages <= candidates);
        let mut cuts = vec![false; candidates as usize];
        for i in 0..stages {
            // The i-th register goes after boundary round((i+1)·C/(S+1)) - 1, clamped to stay
            // distinct: for S = C every boundary is cut.
            let pos = (((i + 1) * (candidates + 1)) / (stages + 1)).max(1) - 1;
            let mut p = pos as usize;
            while cuts[p] {
                p += 1;
            }
            cuts[p] = true;
        }
        StagePlan { cuts }
    }

    pub fn none() -> StagePlan {
        StagePlan { cuts: vec![] }
    }

    /// Registers at exactly the boundaries `at` (for a unit whose sub-datapaths mark
    /// boundaries of their own that it leaves uncut).
    pub fn at(at: &[usize]) -> StagePlan {
        let mut cuts = vec![false; at.iter().max().map_or(0, |&b| b + 1)];
        for &b in at {
            cuts[b] = true;
        }
        StagePlan { cuts }
    }

    pub fn is_cut(&self, boundary: usize) -> bool {
        self.cuts.get(boundary).copied().unwrap_or(false)
    }
}

/// The start of parallel datapaths ([`Module::fork`]) and the furthest any has reached.
#[derive(Clone, Copy, Debug)]
pub struct Fork {
    cycle: u32,
    boundary: usize,
    end_cycle: u32,
    end_boundary: usize,
}

/// A module under construction.
#[derive(Debug)]
pub struct Module {
    pub name: String,
    /// Lines of the header comment.
    pub header: Vec<String>,
    pub signals: Vec<Signal>,
    /// Continuous assignments of wires and outputs.
    pub assigns: Vec<(SigId, E)>,
    /// Section comments of the generator ([`Module::comment`]): (the first signal created
    /// after the comment, its text).
    pub comments: Vec<(SigId, String)>,
    /// Delay registers: (register, the signal it delays by one cycle, reset to 0 on rst).
    pub delays: Vec<(SigId, SigId, bool)>,
    /// Signals whose delay registers reset to 0 (valid bits).
    reset_delays: Vec<SigId>,
    pub states: Vec<StateReg>,
    pub roms: Vec<Rom>,
    /// Instances of sub-modules ([`Module::instance`]).
    pub instances: Vec<Instance>,
    /// Verilator keeps the module a C++ class of its own instead of inlining every instance
    /// (`/* verilator no_inline_module */`): its code is compiled once, however many
    /// instances there are (the large array PEs, docs/perf.md).
    pub no_inline: bool,
    /// The definitions of the design this module belongs to ([`Module::define`]).
    pub(super) library: Library,
    cycle: u32,
    plan: StagePlan,
    boundary: usize,
    delay_of: HashMap<(SigId, u32), SigId>,
    names: HashMap<String, usize>,
}

impl Module {
    pub fn new(name: &str, plan: StagePlan) -> Module {
        Module {
            name: name.to_string(),
            header: vec![],
            signals: vec![],
            assigns: vec![],
            comments: vec![],
            delays: vec![],
            reset_delays: vec![],
            states: vec![],
            roms: vec![],
            instances: vec![],
            no_inline: false,
            library: Library::default(),
            cycle: 0,
            plan,
            boundary: 0,
            delay_of: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// A section comment: printed into the Verilog before the first live assignment of a
    /// signal created after this call (a stage of the datapath: "decode", "align", "Kahan:
    /// tmp = c + x", ...). A comment with no such assignment after it is not printed.
    pub fn comment(&mut self, text: &str) {
        self.comments.push((self.signals.len(), text.to_string()));
    }

    /// A fresh, legal, unique Verilog identifier based on `base` (a generator bug if `base`
    /// is a Verilog or SystemVerilog keyword: tools read the files as either).
    pub(super) fn unique(&mut self, base: &str) -> String {
        assert!(
            !KEYWORDS.contains(&base),
            "'{base}' is a (System)Verilog keyword: name the signal after what it holds"
        );
        let n = self.names.entry(base.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base.to_string()
        } else {
            format!("{base}_{}", *n - 1)
        }
    }

    pub(super) fn add_signal(
        &mut self,
        name: &str,
        width: u32,
        kind: SigKind,
        cycle: Option<u32>,
    ) -> SigId {
        let name = self.unique(name);
        self.signals.push(Signal {
            name,
            width,
            kind,
            cycle,
        });
        self.signals.len() - 1
    }

    pub fn sig(&self, id: SigId) -> E {
        mk(Node::Sig(id), self.signals[id].width)
    }

    /// The cycle values are currently computed in.
    pub fn cycle(&self) -> u32 {
        self.cycle
    }

    pub(super) fn set_cycle(&mut self, cycle: u32) {
        self.cycle = cycle;
    }

    /// A candidate register boundary: becomes a pipeline register if the plan cuts it.
    pub fn stage(&mut self) {
        if self.plan.is_cut(self.boundary) {
            self.cycle += 1;
        }
        self.boundary += 1;
    }

    /// Whether the next candidate boundary ([`Module::stage`]) becomes a register: for a
    /// sub-module whose definition holds that boundary.
    pub fn next_stage_is_cut(&self) -> bool {
        self.plan.is_cut(self.boundary)
    }

    /// How many candidate boundaries the generator has marked so far.
    pub fn boundaries(&self) -> usize {
        self.boundary
    }

    /// Starts parallel datapaths (an ALU's ops, a vector's lanes): each branch begins at this
    /// cycle and candidate boundary. Call [`Module::next_branch`] between branches and
    /// [`Module::join`] after the last; results of shorter branches are delayed where they
    /// are read, as any older signal.
    pub fn fork(&self) -> Fork {
        Fork {
            cycle: self.cycle,
            boundary: self.boundary,
            end_cycle: self.cycle,
            end_boundary: self.boundary,
        }
    }

    /// Ends a branch of `f` and rewinds to its start for the next.
    pub fn next_branch(&mut self, f: &mut Fork) {
        f.end_cycle = f.end_cycle.max(self.cycle);
        f.end_boundary = f.end_boundary.max(self.boundary);
        self.cycle = f.cycle;
        self.boundary = f.boundary;
    }

    /// Ends the last branch of `f`: the module continues after the longest branch.
    pub fn join(&mut self, mut f: Fork) {
        self.next_branch(&mut f);
        self.cycle = f.end_cycle;
        self.boundary = f.end_boundary;
    }

    pub fn input(&mut self, name: &str, width: u32) -> E {
        let id = self.add_signal(name, width, SigKind::Input, Some(0));
        self.sig(id)
    }

    /// `e` delayed (if needed) to the current cycle.
    pub fn now(&mut self, e: &E) -> E {
        let cycle = self.cycle;
        self.retime(e, cycle)
    }

    fn retime(&mut self, e: &E, cycle: u32) -> E {
        match &*e.node {
            Node::Sig(s) => {
                let s = *s;
                match self.signals[s].cycle {
                    Some(c) if c < cycle => {
                        let d = self.delayed(s, cycle);
                        self.sig(d)
                    }
                    Some(c) if c > cycle => panic!(
                        "signal {} of cycle {c} read in earlier cycle {cycle}",
                        self.signals[s].name
                    ),
                    _ => e.clone(),
                }
            }
            Node::Const(_) | Node::Named(..) => e.clone(),
            Node::Slice(x, hi, lo) => self.retime(x, cycle).bits(*hi, *lo),
            Node::Concat(xs) => {
                let xs: Vec<E> = xs.iter().map(|x| self.retime(x, cycle)).collect();
                cat(&xs)
            }
            Node::Repeat(x, n) => {
                let x = self.retime(x, cycle);
                mk(Node::Repeat(x, *n), e.width)
            }
            Node::Not(x) => self.retime(x, cycle).not(),
            Node::Bin(op, a, b) => {
                let (a, b) = (self.retime(a, cycle), self.retime(b, cycle));
                mk(Node::Bin(*op, a, b), e.width)
            }
            Node::Cmp(op, a, b) => {
                let (a, b) = (self.retime(a, cycle), self.retime(b, cycle));
                a.cmp(*op, &b)
            }
            Node::Shift(op, a, b) => {
                let (a, b) = (self.retime(a, cycle), self.retime(b, cycle));
                a.shift(*op, &b)
            }
            Node::Reduce(op, x) => {
                let x = self.retime(x, cycle);
                mk(Node::Reduce(*op, x), 1)
            }
            Node::Mux(c, a, b) => {
                let (c, a, b) = (
                    self.retime(c, cycle),
                    self.retime(a, cycle),
                    self.retime(b, cycle),
                );
                mux(&c, &a, &b)
            }
            Node::Rom(r, a) => {
                let a = self.retime(a, cycle);
                mk(Node::Rom(*r, a), e.width)
            }
        }
    }

    /// Signal `s` delayed to `cycle` (a chain of shared delay registers, `NAME_d1`, `NAME_d2`,
    /// ...: NAME delayed by 1, 2, ... cycles, the one delay suffix of emitted designs).
    fn delayed(&mut self, s: SigId, cycle: u32) -> SigId {
        let c0 = self.signals[s]
            .cycle
            .expect("only pipelined signals are delayed");
        let mut cur = s;
        for c in c0 + 1..=cycle {
            cur = match self.delay_of.get(&(s, c)) {
                Some(&d) => d,
                None => {
                    let base = self.signals[s].name.clone();
                    let d = self.add_signal(
                        &format!("{base}_d{}", c - c0),
                        self.signals[s].width,
                        SigKind::Delay,
                        Some(c),
                    );
                    let reset = self.reset_delays.contains(&s);
                    self.delays.push((d, cur, reset));
                    self.delay_of.insert((s, c), d);
                    d
                }
            };
        }
        cur
    }

    /// Delays of `s` reset to 0 on `rst` (for valid bits; data delays need no reset).
    pub fn reset_on_delay(&mut self, e: &E) {
        self.reset_delays.push(e.sig().expect("a signal"));
    }

    /// The pipelined signal `early` of an earlier cycle, read in the current one without a
    /// delay: a look at the step that reaches this cycle next (the fix PE resets its
    /// accumulator a cycle before a step with `clear` arrives). The caller answers for
    /// what that means; everything else is scheduled by [`Module::now`].
    pub fn ahead(&mut self, name: &str, early: &E) -> E {
        let s = early.sig().expect("a signal");
        let c = self.signals[s].cycle.expect("a pipelined signal");
        assert!(c < self.cycle, "`ahead` reads a signal of an earlier cycle");
        let id = self.add_signal(name, early.width, SigKind::Wire, Some(self.cycle));
        self.assigns.push((id, early.clone()));
        self.sig(id)
    }

    /// A named wire holding `e`, computed in the current cycle.
    pub fn wire(&mut self, name: &str, e: &E) -> E {
        let e = self.now(e);
        let id = self.add_signal(name, e.width, SigKind::Wire, Some(self.cycle));
        self.assigns.push((id, e));
        self.sig(id)
    }

    /// A balanced tree of the binary `op` over `terms` (adders, comparators; [`tree`]), each
    /// level's results wires `{name}_l{level}_{j}`. Returns the root (the single term itself,
    /// unnamed, when there is one).
    ///
    /// [`tree`]: super::tree
    pub fn tree(&mut self, name: &str, terms: Vec<E>, op: impl Fn(&E, &E) -> E) -> E {
        tree_with(terms, op, |level, j, v| {
            self.wire(&format!("{name}_l{level}_{j}"), &v)
        })
    }

    /// An output port driven by `e` in the current cycle.
    pub fn output(&mut self, name: &str, e: &E) {
        assert!(
            !self.names.contains_key(name),
            "output name '{name}' is already used inside the module"
        );
        let e = self.now(e);
        let id = self.add_signal(name, e.width, SigKind::Output, Some(self.cycle));
        self.assigns.push((id, e));
    }

    /// A stateful register (read as it is in any cycle). Drive it with [`Module::drive`].
    pub fn state(&mut self, name: &str, width: u32, reset: Option<u128>) -> E {
        let id = self.add_signal(name, width, SigKind::State, None);
        self.states.push(StateReg {
            sig: id,
            reset,
            power_on: None,
            next: None,
            enable: None,
        });
        self.sig(id)
    }

    /// A register loading `d` every cycle (and `reset` under `rst`, when given): a
    /// [`Module::state`] driven by `d`.
    pub fn register(&mut self, name: &str, d: &E, reset: Option<u128>) -> E {
        let q = self.state(name, d.width, reset);
        self.drive(&q, d, None);
        q
    }

    /// The value state register `reg` holds when the FPGA is configured, printed as its
    /// declaration's initial value (`reg [3:0] por = 4'd0;`), which Yosys maps to the
    /// flip-flops' initial state. Only for logic with no reset of its own, such as a board
    /// top's power-on reset counter: a generated unit resets by `rst`.
    pub fn power_on(&mut self, reg: &E, value: u128) {
        let id = reg.sig().expect("power-on value of a state register");
        assert!(
            reg.width >= 128 || value >> reg.width == 0,
            "power-on value wider than the register"
        );
        let st = self
            .states
            .iter_mut()
            .find(|s| s.sig == id)
            .expect("power-on value of a state register");
        st.power_on = Some(value);
    }

    /// Sets the next value (and optional enable) of a state register; both are taken in the
    /// current cycle.
    pub fn drive(&mut self, reg: &E, next: &E, enable: Option<&E>) {
        let id = reg.sig().expect("drive a state register");
        assert_eq!(reg.width, next.width, "next value width");
        let next = self.now(next);
        let enable = enable.map(|e| self.now(e));
        let st = self
            .states
            .iter_mut()
            .find(|s| s.sig == id)
            .expect("drive a state register");
        st.next = Some(next);
        st.enable = enable;
    }

    /// A ROM read: `contents[addr]` (0 beyond the end), as a signal named `name` (the
    /// `case` of the emitted ROM assigns it, so every use reads the one ROM).
    pub fn rom(&mut self, name: &str, width: u32, contents: Vec<u128>, addr: &E) -> E {
        let addr = self.now(addr);
        let read = mk(Node::Rom(self.roms.len(), addr), width);
        let q = self.wire(name, &read);
        let name = self.signals[q.sig().expect("a wire")].name.clone();
        self.roms.push(Rom {
            name,
            width,
            contents,
        });
        q
    }

    /// Whether each of the next `k` candidate boundaries becomes a register: for a
    /// sub-module whose definition holds those boundaries.
    pub fn next_cuts(&self, k: usize) -> Vec<bool> {
        (0..k)
            .map(|i| self.plan.is_cut(self.boundary + i))
            .collect()
    }

    /// Ports in declaration order: (name, is_input, width).
    pub fn ports(&self) -> Vec<(String, bool, u32)> {
        self.signals
            .iter()
            .filter(|s| matches!(s.kind, SigKind::Input | SigKind::Output))
            .map(|s| (s.name.clone(), s.kind == SigKind::Input, s.width))
            .collect()
    }
}

/// Calls `f` with the cycle of every pipelined signal `e` reads.
pub(super) fn visit_cycles(m: &Module, e: &E, f: &mut impl FnMut(u32)) {
    match &*e.node {
        Node::Sig(s) => {
            if let Some(c) = m.signals[*s].cycle {
                f(c)
            }
        }
        Node::Const(_) | Node::Named(..) => {}
        Node::Slice(x, ..) | Node::Repeat(x, _) | Node::Not(x) | Node::Reduce(_, x) => {
            visit_cycles(m, x, f)
        }
        Node::Rom(_, x) => visit_cycles(m, x, f),
        Node::Concat(xs) => xs.iter().for_each(|x| visit_cycles(m, x, f)),
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            visit_cycles(m, a, f);
            visit_cycles(m, b, f);
        }
        Node::Mux(c, a, b) => {
            visit_cycles(m, c, f);
            visit_cycles(m, a, f);
            visit_cycles(m, b, f);
        }
    }
}

impl fmt::Display for SigKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

#[cfg(test)]
mod tests;
