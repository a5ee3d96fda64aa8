//! Printing: the analysed module as Verilog-2005 text, section by section (ports,
//! declarations, assignments, instances, ROMs, registers).

use std::fmt::Write;

use super::analyse::Analysed;
use crate::ir::{BinOp, CmpOp, Node, ReduceOp, ShiftOp, SigId, SigKind, Signal, StateReg, E};

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

/// A constant read as a two's-complement number (an operand of a signed comparison, product
/// or shift): `-7'sd14`, not `7'd114`.
fn signed_konst(w: u32, v: u128) -> String {
    let negative = (v >> (w - 1)) & 1 == 1;
    if !negative {
        return format!("{w}'sd{v}");
    }
    let magnitude = if w == 128 {
        v.wrapping_neg()
    } else {
        (1u128 << w) - v
    };
    format!("-{w}'sd{magnitude}")
}

struct Printer<'a> {
    names: &'a [Signal],
    /// Named constants that occur in this module at several widths (a NaR of two posit
    /// formats): printed as `NAME_W<width>`.
    widened: Vec<String>,
}

impl Printer<'_> {
    fn constant_name(&self, name: &str, width: u32) -> String {
        if self.widened.iter().any(|n| n == name) {
            format!("{name}_W{width}")
        } else {
            name.to_string()
        }
    }
}

impl Printer<'_> {
    /// `e` as an operand read as signed: `$signed(x)`, or a constant as a signed literal.
    fn signed(&self, e: &E) -> String {
        match &*e.node {
            Node::Const(v) => signed_konst(e.width, *v),
            _ => format!("$signed({})", self.expr(e)),
        }
    }

    fn expr(&self, e: &E) -> String {
        match &*e.node {
            Node::Sig(s) => self.names[*s].name.clone(),
            Node::Const(v) => konst(e.width, *v),
            Node::Named(name, _) => self.constant_name(name, e.width),
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
            Node::Not(x) => {
                // `~~x` is a syntax error to Icarus: a negated negation gets parentheses.
                let inner = self.expr(x);
                if inner.starts_with('~') {
                    format!("~({inner})")
                } else {
                    format!("~{inner}")
                }
            }
            Node::Bin(BinOp::SMul, a, b) => {
                format!("({} * {})", self.signed(a), self.signed(b))
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
                if signed {
                    format!("({} {o} {})", self.signed(a), self.signed(b))
                } else {
                    format!("({} {o} {})", self.expr(a), self.expr(b))
                }
            }
            Node::Shift(op, a, b) => {
                let b = self.expr(b);
                match op {
                    ShiftOp::Shl => format!("({} << {b})", self.expr(a)),
                    ShiftOp::Shr => format!("({} >> {b})", self.expr(a)),
                    ShiftOp::Sar => format!("({} >>> {b})", self.signed(a)),
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

/// The header comments, `module NAME (` and the port list, with `UNUSED` waivers for port
/// bits nothing reads.
fn ports(v: &mut String, a: &Analysed) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    for line in &m.header {
        let _ = writeln!(v, "// {line}");
    }
    let _ = writeln!(v, "`default_nettype none\n");
    let _ = writeln!(v, "module {} (", m.name);
    let ports: Vec<SigId> = (0..low.signals.len())
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
        let unused = unused_ranges(&a.used[i]);
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
}

/// Adds the named constants `e` reads to `out` (name, width, value), in order of first use.
fn collect_named(e: &E, out: &mut Vec<(String, u32, u128)>) {
    match &*e.node {
        Node::Named(name, v) => match out.iter().find(|(n, w, _)| **n == **name && *w == e.width) {
            Some(&(_, _, old)) => assert!(
                old == *v,
                "constant {name} has two values of {} bits in one module",
                e.width
            ),
            None => out.push((name.to_string(), e.width, *v)),
        },
        Node::Sig(_) | Node::Const(_) => {}
        Node::Slice(x, ..) | Node::Repeat(x, _) | Node::Not(x) | Node::Reduce(_, x) => {
            collect_named(x, out)
        }
        Node::Rom(_, x) => collect_named(x, out),
        Node::Concat(xs) => xs.iter().for_each(|x| collect_named(x, out)),
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            collect_named(a, out);
            collect_named(b, out);
        }
        Node::Mux(c, a, b) => {
            collect_named(c, out);
            collect_named(a, out);
            collect_named(b, out);
        }
    }
}

/// The named constants live logic reads: (name, width, value) in order of first use.
fn named_constants(a: &Analysed) -> Vec<(String, u32, u128)> {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    let mut named = vec![];
    for (id, e) in &low.assigns {
        if a.live[*id] {
            collect_named(e, &mut named);
        }
    }
    for (id, _, next, en) in &a.lowered.states {
        if a.live[*id] {
            collect_named(next, &mut named);
            en.iter().for_each(|e| collect_named(e, &mut named));
        }
    }
    for (inst, inputs) in m.instances.iter().zip(&a.lowered.instances) {
        if inst.outputs.iter().any(|(_, o)| a.live[*o]) {
            inputs
                .iter()
                .for_each(|(_, e)| collect_named(e, &mut named));
        }
    }
    named
}

/// The named constants as `localparam`s.
fn localparams(v: &mut String, named: &[(String, u32, u128)], p: &Printer) {
    if named.is_empty() {
        return;
    }
    let _ = writeln!(v);
    for (name, w, val) in named {
        let name = p.constant_name(name, *w);
        let _ = writeln!(
            v,
            "    localparam {}{name} = {};",
            range(*w),
            konst(*w, *val)
        );
    }
}

/// A declaration of every live signal that is not a port.
fn declarations(v: &mut String, a: &Analysed) {
    let low = &a.lowered.low;
    let mut decl = String::new();
    for i in 0..low.signals.len() {
        let s = &low.signals[i];
        if !a.live[i] || a.unconnected[i] || matches!(s.kind, SigKind::Input | SigKind::Output) {
            continue;
        }
        let kw = match s.kind {
            SigKind::Wire if a.rom_addr_of[i].is_some() => "reg ",
            SigKind::Wire => "wire",
            _ => "reg ",
        };
        let init = match low.m.states.iter().find(|r| r.sig == i) {
            Some(StateReg {
                power_on: Some(v), ..
            }) => format!(" = {}", konst(s.width, *v)),
            _ => String::new(),
        };
        let unused = unused_ranges(&a.used[i]);
        if unused.is_empty() {
            let _ = writeln!(decl, "    {kw} {}{}{init};", range(s.width), s.name);
        } else {
            let _ = writeln!(
                decl,
                "    /* verilator lint_off UNUSED */ // bits {unused} are not needed"
            );
            let _ = writeln!(decl, "    {kw} {}{}{init};", range(s.width), s.name);
            let _ = writeln!(decl, "    /* verilator lint_on UNUSED */");
        }
    }
    if !decl.is_empty() {
        let _ = writeln!(v, "\n{decl}");
    }
}

/// The live wires' and outputs' `assign`s and the live instances.
fn assigns_and_instances(v: &mut String, a: &Analysed, p: &Printer) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    // Assignments and instances in the order the generator made them (an instance at its
    // first output), so the datapath reads top-down.
    enum Item<'x> {
        Assign(&'x E),
        Instance(usize),
    }
    let mut items: Vec<(SigId, Item)> = low
        .assigns
        .iter()
        .filter(|(id, _)| a.live[*id])
        .map(|(id, e)| (*id, Item::Assign(e)))
        .collect();
    for (k, inst) in m.instances.iter().enumerate() {
        if inst.outputs.iter().any(|(_, o)| a.live[*o]) {
            let first = inst
                .outputs
                .iter()
                .map(|(_, o)| *o)
                .min()
                .expect("an output");
            items.push((first, Item::Instance(k)));
        }
    }
    // A wire lowering made prints just before the driver it is part of.
    items.sort_by_key(|(id, _)| match low.part_of.get(id) {
        Some(&whole) => (whole, 0, *id),
        None => (*id, 1, *id),
    });
    let any_unconnected = items.iter().any(|(_, item)| match item {
        Item::Instance(k) => m.instances[*k]
            .outputs
            .iter()
            .any(|(_, o)| a.unconnected[*o]),
        Item::Assign(_) => false,
    });
    if any_unconnected {
        let _ = writeln!(
            v,
            "    // Instance outputs that nothing here reads are left unconnected: `.port()`.\n    \
             /* verilator lint_off PINCONNECTEMPTY */"
        );
    }
    // Section comments in the order of their anchors, each before the first item at or
    // after it.
    let mut comments = m.comments.iter().peekable();
    for (id, item) in &items {
        while let Some((_, text)) = comments.next_if(|(anchor, _)| anchor <= id) {
            let _ = writeln!(v, "    // {text}");
        }
        match item {
            Item::Assign(e) => {
                let _ = writeln!(v, "    assign {} = {};", low.signals[*id].name, p.expr(e));
            }
            Item::Instance(k) => instance(v, a, p, *k),
        }
    }
    if any_unconnected {
        let _ = writeln!(v, "    /* verilator lint_on PINCONNECTEMPTY */");
    }
}

/// Instance `k` with its connections.
fn instance(v: &mut String, a: &Analysed, p: &Printer, k: usize) {
    let (inst, low) = (&a.lowered.low.m.instances[k], &a.lowered.low);
    let mut conns: Vec<String> = a.lowered.instances[k]
        .iter()
        .map(|(port, e)| format!(".{port}({})", p.expr(e)))
        .collect();
    conns.extend(inst.outputs.iter().map(|(port, o)| {
        if a.unconnected[*o] {
            format!(".{port}()")
        } else {
            format!(".{port}({})", low.signals[*o].name)
        }
    }));
    let _ = writeln!(
        v,
        "    {} {} (\n        {}\n    );",
        inst.def.name,
        inst.name,
        conns.join(",\n        ")
    );
}

/// Each live ROM read as a `case` over its address.
fn roms(v: &mut String, a: &Analysed) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    for (r, addr, out) in &low.rom_reads {
        if !a.live[*out] {
            continue;
        }
        let rom = &m.roms[*r];
        let aw = low.signals[*addr].width;
        let _ = writeln!(v, "\n    // {}: {} entries", rom.name, rom.contents.len());
        let _ = writeln!(v, "    always @* begin");
        let _ = writeln!(v, "        case ({})", low.signals[*addr].name);
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
}

/// The live registers in at most three `always` blocks, one reset style: the pipeline
/// registers (no reset), the registers with a reset (valid pipeline and state registers
/// that reset: `if (rst) ... else ...`), and the state registers without one.
fn registers(v: &mut String, a: &Analysed, p: &Printer) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    let name = |id: &SigId| &low.signals[*id].name;
    let update = |id: &SigId, next: &E, en: &Option<E>| match en {
        Some(en) => format!("if ({}) {} <= {};", p.expr(en), name(id), p.expr(next)),
        None => format!("{} <= {};", name(id), p.expr(next)),
    };
    let delays = |with_reset: bool| -> Vec<(SigId, SigId)> {
        m.delays
            .iter()
            .filter(|(d, _, r)| a.live[*d] && *r == with_reset)
            .map(|&(d, src, _)| (d, src))
            .collect()
    };
    let states = |with_reset: bool| -> Vec<&super::lower::State> {
        a.lowered
            .states
            .iter()
            .filter(|(id, reset, ..)| a.live[*id] && reset.is_some() == with_reset)
            .collect()
    };
    let block = |v: &mut String, comment: &str, lines: &[String]| {
        if lines.is_empty() {
            return;
        }
        let _ = writeln!(v, "\n    // {comment}");
        let _ = writeln!(v, "    always @(posedge clk) begin");
        for l in lines {
            let _ = writeln!(v, "        {l}");
        }
        let _ = writeln!(v, "    end");
    };

    let pipeline: Vec<String> = delays(false)
        .iter()
        .map(|(d, src)| format!("{} <= {};", name(d), name(src)))
        .collect();
    block(v, "pipeline registers", &pipeline);

    let (reset_delays, reset_states) = (delays(true), states(true));
    let mut on_reset = vec![];
    let mut otherwise = vec![];
    for (d, src) in &reset_delays {
        on_reset.push(format!(
            "{} <= {};",
            name(d),
            konst(low.signals[*d].width, 0)
        ));
        otherwise.push(format!("{} <= {};", name(d), name(src)));
    }
    for (id, reset, next, en) in &reset_states {
        let r = reset.expect("a register with a reset");
        on_reset.push(format!(
            "{} <= {};",
            name(id),
            konst(low.signals[*id].width, r)
        ));
        otherwise.push(update(id, next, en));
    }
    if !on_reset.is_empty() {
        let mut lines = vec!["if (rst) begin".to_string()];
        lines.extend(on_reset.iter().map(|l| format!("    {l}")));
        lines.push("end else begin".to_string());
        lines.extend(otherwise.iter().map(|l| format!("    {l}")));
        lines.push("end".to_string());
        let what = match (reset_delays.is_empty(), reset_states.is_empty()) {
            (false, false) => "valid pipeline and state registers",
            (false, true) => "valid pipeline",
            _ => "state registers",
        };
        block(v, &format!("{what}, reset by rst"), &lines);
    }

    let free: Vec<String> = states(false)
        .iter()
        .map(|(id, _, next, en)| update(id, next, en))
        .collect();
    block(v, "registers without reset", &free);
}

/// The analysed module as Verilog-2005 text.
pub(super) fn module(a: &Analysed) -> String {
    let named = named_constants(a);
    let mut widened: Vec<String> = named
        .iter()
        .filter(|(n, w, _)| named.iter().any(|(n2, w2, _)| n2 == n && w2 != w))
        .map(|(n, ..)| n.clone())
        .collect();
    widened.dedup();
    let p = Printer {
        names: &a.lowered.low.signals,
        widened,
    };
    let mut v = String::new();
    ports(&mut v, a);
    localparams(&mut v, &named, &p);
    declarations(&mut v, a);
    assigns_and_instances(&mut v, a, &p);
    roms(&mut v, a);
    registers(&mut v, a, &p);
    let _ = writeln!(v, "endmodule\n\n`default_nettype wire");
    v
}
