//! Issue 48, item 3: `lpgen rtl` refuses an option that does not apply to the unit instead of
//! ignoring it, and a manifest never claims a property the design lacks (`--acc` or a
//! stochastic read-out on the mx array's PE, which has neither).

mod common;

use std::path::{Path, PathBuf};

use common::{lpgen, refused};
use lpgen_hdl::units::{Opt, UNITS};

fn tmp(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-rtl-options-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Every design option besides `--format`, `--stages` and the rounding's (refused by the
/// generator, `rounding_rtl_cli.rs`), a value for it, and the registry options it is one of.
const OPTIONS: [(&str, &str, &[Opt]); 9] = [
    ("--rows", "2", &[Opt::Array, Opt::Rows, Opt::Monitor]),
    ("--cols", "2", &[Opt::Array, Opt::Monitor]),
    ("--pe", "float", &[Opt::Array]),
    ("--acc", "bf16", &[Opt::Array]),
    ("--lanes", "4", &[Opt::Lanes]),
    ("--to", "f16", &[Opt::To]),
    ("--q8", "q8:linear", &[Opt::Q8]),
    ("--counter-bits", "8", &[Opt::Monitor]),
    ("--input", "f16", &[Opt::Input]),
];

/// The cases: float-add silently ignored `--to`, `--pe`, `--lanes`, `--q8` and
/// `--counter-bits`; now each (and every other option it does not take) is refused in one line
/// that names the units it applies to, and nothing is written.
#[test]
fn float_add_refuses_the_options_of_other_units() {
    let out = tmp("float-add");
    let o = out.to_str().unwrap();
    for (option, value, want) in [
        (
            "--to",
            "f16",
            "--to does not apply to float-add: it applies to alu, vector, convert",
        ),
        (
            "--pe",
            "float",
            "--pe does not apply to float-add: it applies to array",
        ),
        (
            "--lanes",
            "4",
            "--lanes does not apply to float-add: it applies to vector",
        ),
        (
            "--q8",
            "q8:linear",
            "--q8 does not apply to float-add: it applies to q8-enc, q8-dec",
        ),
        (
            "--counter-bits",
            "8",
            "--counter-bits does not apply to float-add: it applies to dfix-monitor",
        ),
    ] {
        let args = [
            "rtl",
            "float-add",
            "--format",
            "bf16",
            option,
            value,
            "--out",
            o,
        ];
        refused(&args, want);
        // cosim and synth select designs with the same options.
        let cosim = ["cosim", "float-add", "--format", "bf16", option, value];
        refused(&cosim, want);
    }
    assert!(!out.exists(), "a refused design wrote {}", out.display());
}

/// Every unit of the registry and every option: given to a unit whose entry does not take it,
/// refused in one line naming it; given to one that does, not refused for not applying.
#[test]
fn no_unit_ignores_an_option_it_does_not_take() {
    let out = tmp("every-unit");
    let o = out.to_str().unwrap();
    for e in &UNITS {
        for (option, value, opts) in OPTIONS {
            let takes = opts.iter().any(|&x| e.takes(x));
            let args = ["rtl", e.name, "--format", "bf16", option, value, "--out", o];
            let r = lpgen(&args);
            let err = String::from_utf8_lossy(&r.stderr);
            let not_applying = format!("{option} does not apply to {}", e.name);
            if takes {
                assert!(!err.contains(&not_applying), "{args:?}: {err}");
            } else {
                refused(&args, &not_applying);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The manifest's `parameters` of the design `args` writes into `dir` (`None`: refused), with
/// the text of every file of its file list.
fn design(dir: &Path, args: &[&str]) -> Option<(serde_json::Value, Vec<(String, String)>)> {
    let _ = std::fs::remove_dir_all(dir);
    let mut all = vec!["rtl"];
    all.extend(args);
    all.extend(["--out", dir.to_str().unwrap()]);
    let r = lpgen(&all);
    if !r.status.success() {
        return None;
    }
    let stdout = String::from_utf8_lossy(&r.stdout);
    let json = stdout
        .lines()
        .find(|l| l.ends_with(".json"))
        .expect("a manifest");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let list = std::fs::read_to_string(dir.join(m["file_list"].as_str().unwrap())).unwrap();
    let files = list
        .lines()
        .map(|f| (f.to_string(), std::fs::read_to_string(dir.join(f)).unwrap()))
        .collect();
    Some((m["parameters"].clone(), files))
}

/// A manifest names a stochastic rounding only for a design with the xorshift32 stream in its
/// files, and an `--acc A` only for one with a PE module of that accumulator; the mx array's
/// `--acc` and stochastic read-out (once written into its manifest and file names over a
/// design identical to the plain one) are refused in one line and write nothing.
#[test]
fn a_manifest_claims_only_what_the_design_has() {
    let dir = tmp("manifest");
    for (args, refusal) in [
        (
            &[
                "array",
                "--format",
                "mx:int8",
                "--pe",
                "mx",
                "--acc",
                "posit:8:2",
            ][..],
            Some("--acc posit:8:2 is for --pe float"),
        ),
        (
            &[
                "array",
                "--format",
                "mx:int8",
                "--pe",
                "mx",
                "--rounding",
                "stochastic:16",
                "--rounding-seed",
                "5",
            ][..],
            Some("array PE 'mx' reads out to nearest only, not stochastic:16"),
        ),
        (
            &["array", "--format", "mx:fp8:e4m3:b4", "--rows", "2"][..],
            None,
        ),
        (
            &[
                "array", "--format", "fp8:e4m3", "--pe", "float", "--acc", "bf16",
            ][..],
            None,
        ),
        (
            &[
                "array",
                "--format",
                "bf16",
                "--pe",
                "float",
                "--rounding",
                "stochastic:8",
            ][..],
            None,
        ),
        (&["array", "--format", "bf16", "--pe", "float"][..], None),
        (
            &[
                "float-add",
                "--format",
                "bf16",
                "--rounding",
                "stochastic:8",
            ][..],
            None,
        ),
        (&["float-add", "--format", "bf16"][..], None),
        (
            &[
                "convert",
                "--format",
                "f32",
                "--to",
                "bf16",
                "--rounding",
                "stochastic:4",
            ][..],
            None,
        ),
    ] {
        if let Some(want) = refusal {
            let mut all = vec!["rtl"];
            all.extend(args);
            all.extend(["--out", dir.to_str().unwrap()]);
            refused(&all, want);
            // The output directory is made first (rtl_cmd::run); no file is written into it.
            let written = std::fs::read_dir(&dir).map_or(0, |d| d.count());
            assert_eq!(written, 0, "{args:?} wrote into {}", dir.display());
            continue;
        }
        let (params, files) = design(&dir, args).unwrap_or_else(|| panic!("{args:?} refused"));
        let stream = files.iter().any(|(_, text)| text.contains("sr_x13"));
        assert_eq!(
            params.get("rounding").is_some(),
            stream,
            "{args:?}: {params}"
        );
        let acc_pe = files
            .iter()
            .find(|(name, _)| name.starts_with("lpgen_pe_") && name.contains("_acc_"));
        match params.get("acc").and_then(|a| a.as_str()) {
            Some(acc) => {
                let (name, _) = acc_pe.unwrap_or_else(|| panic!("{args:?}: no --acc PE"));
                assert!(
                    name.contains(&format!("_acc_{}", acc.replace(':', "_"))),
                    "{name}"
                );
            }
            None => assert!(acc_pe.is_none(), "{args:?}: {acc_pe:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
