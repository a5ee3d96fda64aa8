//! Printing: the analysed module as Verilog-2005 text, section by section (ports,
//! declarations, assignments, instances, ROMs, registers).

use std::fmt::Write;

use super::analyse::Analysed;
use crate::ir::{BinOp, CmpOp, Node, ReduceOp, ShiftOp, SigId, SigKind, Signal, E};

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

/// A declaration of every live signal that is not a port.
fn declarations(v: &mut String, a: &Analysed) {
    let low = &a.lowered.low;
    let mut decl = String::new();
    for i in 0..low.signals.len() {
        let s = &low.signals[i];
        if !a.live[i] || matches!(s.kind, SigKind::Input | SigKind::Output) {
            continue;
        }
        let kw = match s.kind {
            SigKind::Wire if a.rom_addr_of[i].is_some() => "reg ",
            SigKind::Wire => "wire",
            _ => "reg ",
        };
        let unused = unused_ranges(&a.used[i]);
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
}

/// The live wires' and outputs' `assign`s and the live instances.
fn assigns_and_instances(v: &mut String, a: &Analysed, p: &Printer) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    // Section comments in the order of their anchors, each before the first live assignment
    // at or after it.
    let mut comments = m.comments.iter().peekable();
    for (id, e) in &low.assigns {
        if a.live[*id] {
            while let Some((_, text)) = comments.next_if(|(anchor, _)| anchor <= id) {
                let _ = writeln!(v, "    // {text}");
            }
            let _ = writeln!(v, "    assign {} = {};", low.signals[*id].name, p.expr(e));
        }
    }
    for (inst, inputs) in m.instances.iter().zip(&a.lowered.instances) {
        if !inst.outputs.iter().any(|(_, o)| a.live[*o]) {
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

/// The live delay registers (pipeline registers, then the reset valid pipeline) and the
/// live state registers.
fn registers(v: &mut String, a: &Analysed, p: &Printer) {
    let (m, low) = (a.lowered.low.m, &a.lowered.low);
    for with_reset in [false, true] {
        let regs: Vec<&(SigId, SigId, bool)> = m
            .delays
            .iter()
            .filter(|(d, _, r)| a.live[*d] && *r == with_reset)
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
    for (id, reset, next, en) in &a.lowered.states {
        if !a.live[*id] {
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
}

/// The analysed module as Verilog-2005 text.
pub(super) fn module(a: &Analysed) -> String {
    let p = Printer {
        names: &a.lowered.low.signals,
    };
    let mut v = String::new();
    ports(&mut v, a);
    declarations(&mut v, a);
    assigns_and_instances(&mut v, a, &p);
    roms(&mut v, a);
    registers(&mut v, a, &p);
    let _ = writeln!(v, "endmodule\n\n`default_nettype wire");
    v
}
