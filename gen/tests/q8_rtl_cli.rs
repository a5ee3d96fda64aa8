//! `lpgen rtl q8-enc | q8-dec` as a user meets it: the type in the module name and the
//! manifest, and one-line refusals (exit status 2, no panic) of bad types, formats and stages.

mod common;
use common::{lpgen, refused};

#[test]
fn the_type_names_the_design_and_is_in_the_manifest() {
    let dir = std::env::temp_dir().join(format!("lpgen-q8-rtl-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let run = lpgen(&[
        "rtl", "q8-enc", "--format", "fix:7:8", "--q8", "linear", "--stages", "12", "--out", out,
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let top = "lpgen_q8_enc_fix_7_8_linear_s12";
    let manifest = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
    assert!(manifest.contains("\"q8\": \"q8:linear\""), "{manifest}");
    assert!(manifest.contains("\"latency\": 12"), "{manifest}");
    assert!(dir.join("lpgen_q8_linear_fields.v").exists());
    // Other units do not list the option.
    let run = lpgen(&["rtl", "fix-mac", "--format", "fix:7:8", "--out", out]);
    assert!(run.status.success());
    let other = std::fs::read_to_string(dir.join("lpgen_fix_mac_fix_7_8_s0.json")).unwrap();
    assert!(!other.contains("\"q8\""), "{other}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_q8_requests_are_refused_in_one_line() {
    let out = std::env::temp_dir().join(format!("lpgen-q8-bad-{}", std::process::id()));
    let o = out.to_str().unwrap();
    let base = |unit: &'static str, f: &'static str| vec!["rtl", unit, "--format", f];
    let mut a = base("q8-enc", "fix:7:8");
    a.extend(["--q8", "q8:tree", "--out", o]);
    refused(&a, "unknown 8-bit type \"q8:tree\"");
    let mut a = base("q8-dec", "lns:5:6");
    a.extend(["--out", o]);
    refused(&a, "q8-dec needs a fix or posit format");
    let mut a = base("q8-enc", "f32");
    a.extend(["--out", o]);
    refused(&a, "q8-enc needs a fix or posit format");
    let mut a = base("q8-enc", "posit:16:1");
    a.extend(["--stages", "19", "--out", o]);
    refused(&a, "use --stages 0..=18");
    let mut a = base("q8-dec", "posit:16:1");
    a.extend(["--stages", "3", "--out", o]);
    refused(&a, "use --stages 0..=2");
    let _ = std::fs::remove_dir_all(&out);
}
