//! Verilator at run time: find it, build a design and its shim into a shared object, cache
//! the result by content digest, and load it with `libloading`.
//!
//! Cache: `$LPGEN_CACHE/verilator/<digest>/` (default `$XDG_CACHE_HOME/lpgen` or
//! `~/.cache/lpgen`), the digest covering the Verilog, the shim, the flags and the Verilator
//! version. An entry is built in a temporary directory beside it
//! (`.tmp-<digest>-<pid>-<nanos>`) and renamed into place when complete; it holds `model.so`
//! and a `stamp` with the digest and length of `model.so`. An entry whose stamp is missing or
//! does not match its `model.so`, or a file or link where the entry's directory should be, is
//! removed and rebuilt, never loaded. An intact entry whose object does not load (built for
//! another machine, or cut short before it was stamped) is rebuilt once; then the load error
//! is reported. Temporaries that a killed build left behind are swept on the next use of the
//! cache (see [`ensure_entry`]): a temporary names its builder's pid, and holds `builder`,
//! the host and PID namespace where that pid means something. A failed build leaves its full
//! log beside the entries, as `<digest>.log`.
//!
//! The parts: `toolchain` finds Verilator and a C++ compiler and builds a design into a cache
//! entry ([`Toolchain`]); `cache` keeps the entries (stamped, swept, rebuilt when broken);
//! `model` checks and loads a built object and drives it ([`Model`]). The helpers below keep
//! the errors of all three to one line.

mod cache;
mod model;
#[cfg(test)]
mod tests;
mod toolchain;

pub use cache::{ensure_entry, entry_valid};
pub use model::Model;
pub use toolchain::{Toolchain, VERILATOR_FLAGS};

use crate::VerifError;

/// The longest quotation of a compiler's output in an error.
const QUOTE_CHARS: usize = 240;

/// `s` with its control characters escaped (a newline, a carriage return, a terminal's
/// escape), so that an error quoting a path or a tool's output stays one line.
fn one_line(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            o.extend(c.escape_default());
        } else {
            o.push(c);
        }
    }
    o
}

/// An error for the user, kept to one line.
fn fail(msg: String) -> VerifError {
    VerifError(one_line(&msg))
}

/// The line of a build log worth quoting (the first naming an error, else the last), without
/// terminal colours, trimmed and cut to `QUOTE_CHARS`.
fn summary(log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.contains("Error") || l.contains("error"))
        .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("no output");
    // Drop ANSI sequences (ESC [ parameters final-byte); other controls are escaped later.
    let (mut plain, mut chars) = (String::new(), line.chars().peekable());
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&d) {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let plain = plain.trim();
    match plain.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &plain[..cut]),
        None => plain.to_string(),
    }
}
