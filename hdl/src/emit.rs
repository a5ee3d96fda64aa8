//! Verilog-2005 emitter: one module per file, deterministic text.
//!
//! Before printing, expressions are lowered so the text is plain Verilog-2005: a slice of
//! anything but a signal, an arithmetic shift (whose signedness must not leak into an
//! enclosing expression) and a ROM read each get a wire of their own. Only signals that
//! reach an output are printed. Bits that are computed but never read (a carry, the bits a
//! rounding step drops) are declared inside `verilator lint_off UNUSED` with a comment, so
//! `verilator --lint-only -Wall` is clean without hiding anything else.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::ir::{BinOp, CmpOp, Module, Node, ReduceOp, ShiftOp, SigId, SigKind, Signal, E};

/// The lowered module: signals plus drivers, ready to print.
struct Lowered<'m> {
    m: &'m Module,
    signals: Vec<Signal>,
    /// Wire / output drivers, in creation order.
    assigns: Vec<(SigId, E)>,
    /// (rom index, address signal, output signal)
    rom_reads: Vec<(usize, SigId, SigId)>,
    temp: usize,
}

impl Lowered<'_> {
    fn new_wire(&mut self, base: &str, e: E) -> E {
        self.temp += 1;
        let name = format!("{base}_t{}", self.temp);
        self.signals.push(Signal {
            name,
            width: e.width,
            kind: SigKind::Wire,
            cycle: None,
        });
        let id = self.signals.len() - 1;
        self.assigns.push((id, e));
        E {
            node: std::rc::Rc::new(Node::Sig(id)),
            width: self.signals[id].width,
        }
    }

    /// Rewrites `e` so every slice is of a signal and every `>>>` / ROM read is a wire.
    fn lower(&mut self, e: &E, root: bool) -> E {
        let w = e.width;
        let node = match &*e.node {
            Node::Sig(_) | Node::Const(_) => return e.clone(),
            Node::Slice(x, hi, lo) => {
                let x = self.lower(x, false);
                let x = if x.sig().is_some() {
                    x
                } else {
                    self.new_wire("slice", x)
                };
                Node::Slice(x, *hi, *lo)
            }
            Node::Concat(xs) => Node::Concat(xs.iter().map(|x| self.lower(x, false)).collect()),
            Node::Repeat(x, n) => Node::Repeat(self.lower(x, false), *n),
            Node::Not(x) => Node::Not(self.lower(x, false)),
            Node::Bin(op, a, b) => Node::Bin(*op, self.lower(a, false), self.lower(b, false)),
            Node::Cmp(op, a, b) => Node::Cmp(*op, self.lower(a, false), self.lower(b, false)),
            Node::Shift(op, a, b) => {
                let s = Node::Shift(*op, self.lower(a, false), self.lower(b, false));
                if *op == ShiftOp::Sar && !root {
                    let s = E {
                        node: std::rc::Rc::new(s),
                        width: w,
                    };
                    return self.new_wire("sar", s);
                }
                s
            }
            Node::Reduce(op, x) => Node::Reduce(*op, self.lower(x, false)),
            Node::Mux(c, a, b) => Node::Mux(
                self.lower(c, false),
                self.lower(a, false),
                self.lower(b, false),
            ),
            Node::Rom(r, a) => {
                let a = self.lower(a, false);
                let a = match a.sig() {
                    Some(s) => s,
                    None => self.new_wire("addr", a).sig().unwrap(),
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

/// Calls `f(signal, bits)` for every signal `e` reads: `bits` is `Some((hi, lo))` for a slice
/// of the signal, `None` when all of it is read.
fn visit_sigs(e: &E, f: &mut impl FnMut(SigId, Option<(u32, u32)>)) {
    match &*e.node {
        Node::Sig(s) => f(*s, None),
        Node::Const(_) => {}
        Node::Slice(x, hi, lo) => match x.sig() {
            Some(s) => f(s, Some((*hi, *lo))),
            None => visit_sigs(x, f),
        },
        Node::Concat(xs) => xs.iter().for_each(|x| visit_sigs(x, f)),
        Node::Repeat(x, _) | Node::Not(x) | Node::Reduce(_, x) | Node::Rom(_, x) => {
            visit_sigs(x, f)
        }
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            visit_sigs(a, f);
            visit_sigs(b, f);
        }
        Node::Mux(c, a, b) => {
            visit_sigs(c, f);
            visit_sigs(a, f);
            visit_sigs(b, f);
        }
    }
}

/// Marks the bits of each signal that `e` reads.
fn mark_used(e: &E, used: &mut [Vec<bool>]) {
    visit_sigs(e, &mut |s, bits| {
        let (hi, lo) = bits.unwrap_or((used[s].len() as u32 - 1, 0));
        (lo..=hi).for_each(|i| used[s][i as usize] = true);
    });
}

fn sigs_of(e: &E, out: &mut Vec<SigId>) {
    visit_sigs(e, &mut |s, _| out.push(s));
}

fn range(w: u32) -> String {
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

fn konst(w: u32, v: u128) -> String {
    if w == 1 {
        format!("1'b{v}")
    } else if w <= 32 {
        format!("{w}'d{v}")
    } else {
        format!("{w}'h{v:x}")
    }
}

struct Printer<'a> {
    names: &'a [Signal],
}

impl Printer<'_> {
    fn expr(&self, e: &E) -> String {
        match &*e.node {
            Node::Sig(s) => self.names[*s].name.clone(),
            Node::Const(v) => konst(e.width, *v),
            Node::Slice(x, hi, lo) => {
                let n = self.expr(x);
                if hi == lo {
                    format!("{n}[{hi}]")
                } else {
                    format!("{n}[{hi}:{lo}]")
                }
            }
            Node::Concat(xs) => {
                let parts: Vec<String> = xs.iter().map(|x| self.expr(x)).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Node::Repeat(x, n) => format!("{{{n}{{{}}}}}", self.expr(x)),
            Node::Not(x) => format!("~{}", self.expr(x)),
            Node::Bin(BinOp::SMul, a, b) => {
                format!("($signed({}) * $signed({}))", self.expr(a), self.expr(b))
            }
            Node::Bin(op, a, b) => {
                let o = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                    BinOp::Mul | BinOp::SMul => "*",
                };
                format!("({} {o} {})", self.expr(a), self.expr(b))
            }
            Node::Cmp(op, a, b) => {
                let (o, signed) = match op {
                    CmpOp::Eq => ("==", false),
                    CmpOp::Ne => ("!=", false),
                    CmpOp::Lt => ("<", false),
                    CmpOp::Le => ("<=", false),
                    CmpOp::Gt => (">", false),
                    CmpOp::Ge => (">=", false),
                    CmpOp::SLt => ("<", true),
                    CmpOp::SLe => ("<=", true),
                    CmpOp::SGt => (">", true),
                    CmpOp::SGe => (">=", true),
                };
                let (a, b) = (self.expr(a), self.expr(b));
                if signed {
                    format!("($signed({a}) {o} $signed({b}))")
                } else {
                    format!("({a} {o} {b})")
                }
            }
            Node::Shift(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                match op {
                    ShiftOp::Shl => format!("({a} << {b})"),
                    ShiftOp::Shr => format!("({a} >> {b})"),
                    ShiftOp::Sar => format!("($signed({a}) >>> {b})"),
                }
            }
            Node::Reduce(op, x) => {
                let o = match op {
                    ReduceOp::Or => "|",
                    ReduceOp::And => "&",
                    ReduceOp::Xor => "^",
                };
                format!("({o}{})", self.expr(x))
            }
            Node::Mux(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Node::Rom(..) => unreachable!("ROM reads are lowered to wires"),
        }
    }
}

/// Describes unused bits like `[7:4], [0]` for the lint comment.
fn unused_ranges(used: &[bool]) -> String {
    let mut out = vec![];
    let mut i = used.len();
    while i > 0 {
        i -= 1;
        if !used[i] {
            let hi = i;
            while i > 0 && !used[i - 1] {
                i -= 1;
            }
            out.push(if hi == i {
                format!("[{hi}]")
            } else {
                format!("[{hi}:{i}]")
            });
        }
    }
    out.join(", ")
}

/// The module as Verilog-2005 text.
pub fn verilog(m: &Module) -> String {
    let mut low = Lowered {
        m,
        signals: m.signals.clone(),
        assigns: vec![],
        rom_reads: vec![],
        temp: 0,
    };
    for (id, e) in &m.assigns {
        let e = low.lower(e, true);
        low.assigns.push((*id, e));
    }
    let states: Vec<(SigId, Option<u128>, E, Option<E>)> = m
        .states
        .iter()
        .map(|s| {
            let next = s.next.as_ref().unwrap_or_else(|| {
                panic!("state register {} is never driven", m.signals[s.sig].name)
            });
            let next = low.lower(next, true);
            let en = s.enable.as_ref().map(|e| low.lower(e, false));
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
                .map(|(port, e)| (port.clone(), low.lower(e, false)))
                .collect()
        })
        .collect();
    // Sort the drivers back into creation order of their targets for readable output.
    low.assigns.sort_by_key(|(id, _)| *id);
    let n = low.signals.len();

    // Liveness from the outputs.
    let mut driver: Vec<Vec<E>> = vec![vec![]; n];
    for (id, e) in &low.assigns {
        driver[*id].push(e.clone());
    }
    for (d, src, _) in &m.delays {
        driver[*d].push(E {
            node: std::rc::Rc::new(Node::Sig(*src)),
            width: m.signals[*src].width,
        });
    }
    for (id, _, next, en) in &states {
        driver[*id].push(next.clone());
        if let Some(en) = en {
            driver[*id].push(en.clone());
        }
    }
    // An instance drives its outputs from its inputs; one live output keeps all of them.
    let mut instance_of: Vec<Option<usize>> = vec![None; n];
    for (k, inst) in m.instances.iter().enumerate() {
        for (_, out) in &inst.outputs {
            driver[*out].extend(instances[k].iter().map(|(_, e)| e.clone()));
            instance_of[*out] = Some(k);
        }
    }
    let mut rom_addr_of: Vec<Option<SigId>> = vec![None; n];
    for (_, a, out) in &low.rom_reads {
        rom_addr_of[*out] = Some(*a);
    }
    let mut live = vec![false; n];
    let mut work: Vec<SigId> = (0..n)
        .filter(|&i| matches!(low.signals[i].kind, SigKind::Output | SigKind::Input))
        .collect();
    while let Some(s) = work.pop() {
        if live[s] {
            continue;
        }
        live[s] = true;
        let mut deps = vec![];
        for e in &driver[s] {
            sigs_of(e, &mut deps);
        }
        deps.extend(rom_addr_of[s]);
        if let Some(k) = instance_of[s] {
            deps.extend(m.instances[k].outputs.iter().map(|(_, o)| *o));
        }
        work.extend(deps.into_iter().filter(|&d| !live[d]));
    }

    // Bit usage of the live logic.
    let mut used: Vec<Vec<bool>> = low
        .signals
        .iter()
        .map(|s| vec![false; s.width as usize])
        .collect();
    for (s, drivers) in driver.iter().enumerate() {
        if live[s] && low.signals[s].kind != SigKind::Input {
            for e in drivers {
                mark_used(e, &mut used);
            }
        }
    }
    for (_, a, out) in &low.rom_reads {
        if live[*out] {
            used[*a].iter_mut().for_each(|b| *b = true);
        }
    }
    // Registers read clk (and rst, when one resets); instances get both.
    let clocked =
        m.delays.iter().any(|(d, _, _)| live[*d]) || states.iter().any(|(id, ..)| live[*id]);
    let reset = m.delays.iter().any(|(d, _, r)| live[*d] && *r)
        || states.iter().any(|(id, r, ..)| live[*id] && r.is_some());
    for (i, s) in low.signals.iter().enumerate() {
        let register_port = s.kind == SigKind::Input
            && ((s.name == "clk" && clocked) || (s.name == "rst" && reset));
        if s.kind == SigKind::Output || register_port {
            used[i].iter_mut().for_each(|b| *b = true);
        }
    }

    let p = Printer {
        names: &low.signals,
    };
    let mut v = String::new();
    for line in &m.header {
        let _ = writeln!(v, "// {line}");
    }
    let _ = writeln!(v, "`default_nettype none\n");
    let _ = writeln!(v, "module {} (", m.name);
    let ports: Vec<SigId> = (0..n)
        .filter(|&i| matches!(low.signals[i].kind, SigKind::Input | SigKind::Output))
        .collect();
    for (k, &i) in ports.iter().enumerate() {
        let s = &low.signals[i];
        let dir = if s.kind == SigKind::Input {
            "input "
        } else {
            "output"
        };
        let sep = if k + 1 == ports.len() { "" } else { "," };
        let unused = unused_ranges(&used[i]);
        if unused.is_empty() {
            let _ = writeln!(v, "    {dir} wire {}{}{sep}", range(s.width), s.name);
        } else {
            let _ = writeln!(
                v,
                "    /* verilator lint_off UNUSED */ // bits {unused} not needed by this unit"
            );
            let _ = writeln!(v, "    {dir} wire {}{}{sep}", range(s.width), s.name);
            let _ = writeln!(v, "    /* verilator lint_on UNUSED */");
        }
    }
    let _ = writeln!(v, ");");
    if m.no_inline {
        let _ = writeln!(v, "    /* verilator no_inline_module */");
    }

    // Declarations.
    let mut decl = String::new();
    for i in 0..n {
        let s = &low.signals[i];
        if !live[i] || matches!(s.kind, SigKind::Input | SigKind::Output) {
            continue;
        }
        let kw = match s.kind {
            SigKind::Wire if rom_addr_of[i].is_some() => "reg ",
            SigKind::Wire => "wire",
            _ => "reg ",
        };
        let unused = unused_ranges(&used[i]);
        if unused.is_empty() {
            let _ = writeln!(decl, "    {kw} {}{};", range(s.width), s.name);
        } else {
            let _ = writeln!(
                decl,
                "    /* verilator lint_off UNUSED */ // bits {unused} are not needed"
            );
            let _ = writeln!(decl, "    {kw} {}{};", range(s.width), s.name);
            let _ = writeln!(decl, "    /* verilator lint_on UNUSED */");
        }
    }
    if !decl.is_empty() {
        let _ = writeln!(v, "\n{decl}");
    }

    for (id, e) in &low.assigns {
        if live[*id] {
            let _ = writeln!(v, "    assign {} = {};", low.signals[*id].name, p.expr(e));
        }
    }

    for (inst, inputs) in m.instances.iter().zip(&instances) {
        if !inst.outputs.iter().any(|(_, o)| live[*o]) {
            continue;
        }
        let _ = writeln!(v, "\n    {} {} (", inst.def.name, inst.name);
        let mut conns: Vec<String> = inputs
            .iter()
            .map(|(port, e)| format!(".{port}({})", p.expr(e)))
            .collect();
        conns.extend(
            inst.outputs
                .iter()
                .map(|(port, o)| format!(".{port}({})", low.signals[*o].name)),
        );
        let _ = writeln!(v, "        {}\n    );", conns.join(",\n        "));
    }

    for (r, a, out) in &low.rom_reads {
        if !live[*out] {
            continue;
        }
        let rom = &m.roms[*r];
        let aw = low.signals[*a].width;
        let _ = writeln!(v, "\n    // {}: {} entries", rom.name, rom.contents.len());
        let _ = writeln!(v, "    always @* begin");
        let _ = writeln!(v, "        case ({})", low.signals[*a].name);
        for (k, val) in rom.contents.iter().enumerate() {
            let _ = writeln!(
                v,
                "            {}: {} = {};",
                konst(aw, k as u128),
                low.signals[*out].name,
                konst(rom.width, *val)
            );
        }
        let _ = writeln!(
            v,
            "            default: {} = {};",
            low.signals[*out].name,
            konst(rom.width, 0)
        );
        let _ = writeln!(v, "        endcase\n    end");
    }

    for with_reset in [false, true] {
        let regs: Vec<&(SigId, SigId, bool)> = m
            .delays
            .iter()
            .filter(|(d, _, r)| live[*d] && *r == with_reset)
            .collect();
        if regs.is_empty() {
            continue;
        }
        let what = if with_reset {
            "valid pipeline"
        } else {
            "pipeline registers"
        };
        let _ = writeln!(v, "\n    // {what}");
        let _ = writeln!(v, "    always @(posedge clk) begin");
        for (d, src, _) in regs {
            let w = low.signals[*d].width;
            let (d, src) = (&low.signals[*d].name, &low.signals[*src].name);
            if with_reset {
                let _ = writeln!(v, "        {d} <= rst ? {} : {src};", konst(w, 0));
            } else {
                let _ = writeln!(v, "        {d} <= {src};");
            }
        }
        let _ = writeln!(v, "    end");
    }

    for (id, reset, next, en) in &states {
        if !live[*id] {
            continue;
        }
        let name = &low.signals[*id].name;
        let w = low.signals[*id].width;
        let _ = writeln!(v, "\n    always @(posedge clk) begin");
        let upd = match en {
            Some(en) => format!("if ({}) {name} <= {};", p.expr(en), p.expr(next)),
            None => format!("{name} <= {};", p.expr(next)),
        };
        match reset {
            Some(r) => {
                let _ = writeln!(v, "        if (rst) {name} <= {};", konst(w, *r));
                let _ = writeln!(v, "        else {upd}");
            }
            None => {
                let _ = writeln!(v, "        {upd}");
            }
        }
        let _ = writeln!(v, "    end");
    }
    let _ = writeln!(v, "endmodule\n\n`default_nettype wire");
    v
}

/// The names of live signals (for tests).
pub fn live_signal_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            (l.starts_with("wire") || l.starts_with("reg")).then(|| {
                l.trim_end_matches(';')
                    .split_whitespace()
                    .last()
                    .unwrap_or("")
                    .to_string()
            })
        })
        .collect()
}
