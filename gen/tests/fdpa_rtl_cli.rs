//! `lpgen rtl fdpa --format float:E:M --fdpa L:F:RHO|PRESET` (issue 49): a preset resolves
//! against the format to the design of its chunking (one name, the same files), the manifest
//! names the chunking, and bad input is refused in one line with exit status 2.

mod common;

use common::{lpgen, refused};

/// `lpgen rtl fdpa` into a fresh directory: the paths it prints.
fn rtl(dir: &std::path::Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["rtl", "fdpa", "--out", dir.to_str().unwrap()];
    all.extend(args);
    let o = lpgen(&all);
    assert!(
        o.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_preset_is_the_design_of_its_chunking() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-fdpa-rtl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = rtl(
        &dir.join("a"),
        &["--format", "fp8:e4m3", "--fdpa", "hopper"],
    );
    let b = rtl(
        &dir.join("b"),
        &["--format", "fp8:e4m3", "--fdpa", "32:13:rz-e8m13"],
    );
    assert!(
        a[0].ends_with("lpgen_fdpa_fp8_e4m3_l32_f13_rz_e8m13_s0.v"),
        "{a:?}"
    );
    let read = |p: &String| std::fs::read_to_string(p).unwrap();
    assert_eq!(read(&a[0]), read(&b[0]));
    let manifest = read(&a[2]);
    assert!(
        manifest.contains("\"fdpa\": \"32:13:rz-e8m13\""),
        "{manifest}"
    );
    // binary32 words under ampere are read as tf32.
    let t = rtl(
        &dir.join("t"),
        &["--format", "float:8:23", "--fdpa", "ampere"],
    );
    assert!(t[0].ends_with("_l4_f24_rz_f32_tf32_s0.v"), "{t:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_fdpa_designs_are_refused_in_one_line() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lpgen-fdpa-refused");
    let out = out.to_str().unwrap();
    let rtl = |args: &[&str], needle: &str| {
        let mut all = vec!["rtl", "fdpa", "--out", out];
        all.extend(args);
        refused(&all, needle);
    };
    rtl(
        &["--format", "posit:8:0", "--fdpa", "hopper"],
        "needs a float format",
    );
    rtl(
        &["--format", "lns:5:6", "--fdpa", "4:13:rz-f32"],
        "needs a float format",
    );
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "4:0:rz-f32"],
        "F = \"0\"",
    );
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "0:13:rz-f32"],
        "L = \"0\"",
    );
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "turing"],
        "unknown preset \"turing\"",
    );
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "4:13:rz-f16"],
        "unknown rounding",
    );
    rtl(&["--format", "bf16", "--fdpa", "volta"], "does not take");
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "hopper:promote128"],
        "promote128",
    );
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "65:13:rz-f32"],
        "over the limit of 64",
    );
    rtl(&["--format", "fp8:e4m3"], "needs --fdpa");
    rtl(
        &["--format", "fp8:e4m3", "--fdpa", "hopper", "--stages", "7"],
        "0..=6",
    );
    refused(
        &[
            "rtl",
            "float-fma",
            "--format",
            "f16",
            "--fdpa",
            "volta",
            "--out",
            out,
        ],
        "--fdpa does not apply to float-fma: it applies to array, fdpa",
    );
}

/// `lpgen rtl array --pe fdpa` (the array PE of the same modes): bad input in one line, exit
/// status 2; a good design names its chunking and promotion.
#[test]
fn bad_fdpa_arrays_are_refused_in_one_line() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-fdpa-array-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let array = |args: &[&str], needle: &str| {
        let mut all = vec!["rtl", "array", "--out", out, "--rows", "2", "--cols", "2"];
        all.extend(args);
        refused(&all, needle);
    };
    let fdpa = ["--pe", "fdpa", "--fdpa"];
    for (f, needle) in [("posit:16", "not posit:16"), ("lns:5:6", "not lns:5:6")] {
        array(&[&["--format", f][..], &fdpa, &["hopper"]].concat(), needle);
    }
    array(&["--format", "fp8:e4m3", "--pe", "fdpa"], "needs --fdpa");
    array(
        &[&["--format", "fp8:e4m3"][..], &fdpa, &["0:13:rz-f32"]].concat(),
        "L = \"0\"",
    );
    array(
        &[&["--format", "fp8:e4m3"][..], &fdpa, &["4:0:rz-f32"]].concat(),
        "F = \"0\"",
    );
    array(
        &[&["--format", "fp8:e4m3"][..], &fdpa, &["nvidia"]].concat(),
        "unknown preset",
    );
    array(
        &[&["--format", "fp8:e4m3"][..], &fdpa, &["hopper:promote48"]].concat(),
        "not a multiple of the chunk length",
    );
    array(
        &["--format", "fp8:e4m3", "--pe", "float", "--fdpa", "hopper"],
        "is for --pe fdpa",
    );
    array(
        &[
            &["--format", "fp8:e4m3"][..],
            &fdpa,
            &["hopper", "--stages", "3"],
        ]
        .concat(),
        "0..=2",
    );
    array(
        &[&["--format", "mx:fp8:e4m3"][..], &fdpa, &["hopper"]].concat(),
        "take --pe mx",
    );
    let o = lpgen(&[
        "rtl",
        "array",
        "--out",
        out,
        "--format",
        "bf16",
        "--pe",
        "fdpa",
        "--fdpa",
        "ampere:promote16",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert!(
        printed.contains("lpgen_array_bf16_1x1_fdpa_l8_f24_rz_f32_promote16_s0.v"),
        "{printed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
