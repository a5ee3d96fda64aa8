//! Verilog-2005 emitter: one module per file, deterministic text.
//!
//! Before printing, expressions are lowered so the text is plain Verilog-2005: a slice of
//! anything but a signal, an arithmetic shift (whose signedness must not leak into an
//! enclosing expression) and a ROM read each get a wire of their own. Only signals that
//! reach an output are printed. Bits that are computed but never read (a carry, the bits a
//! rounding step drops) are declared inside `verilator lint_off UNUSED` with a comment, so
//! `verilator --lint-only -Wall` is clean without hiding anything else.

//!
//! Three passes: lowering (`lower.rs`), analysis (`analyse.rs`: liveness and bit use) and
//! printing (`print.rs`).

mod analyse;
mod lower;
mod print;

use std::collections::BTreeSet;

use crate::ir::Module;

/// The module as Verilog-2005 text.
pub fn verilog(m: &Module) -> String {
    print::module(&analyse::analyse(lower::lower_module(m)))
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
