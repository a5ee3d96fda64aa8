//! What the command-line tests share: running lpgen, and the one-line refusal contract
//! (SPEC.md §9: exit status 2, one line on stderr, no panic, nothing printed before).

use std::process::{Command, Output};

/// `lpgen ARGS` run to completion.
pub fn lpgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen")
}

/// `lpgen ARGS` must be refused in one line containing `needle`.
pub fn refused(args: &[&str], needle: &str) {
    let out = lpgen(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "lpgen {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "lpgen {args:?}: {err}");
    assert!(!err.contains("panicked"), "lpgen {args:?}: {err}");
    assert!(
        err.contains(needle),
        "lpgen {args:?}: {err:?} lacks {needle:?}"
    );
    assert!(
        out.stdout.is_empty(),
        "lpgen {args:?} printed before refusing"
    );
}
