//! `lpgen rtl q8-enc | q8-dec | convert` as a user meets it: the type in the module name and
//! the manifest, f32 codecs, and one-line refusals (exit status 2, no panic) of bad types,
//! formats, format pairs and stages.

mod common;
use common::{lpgen, refused};

#[test]
fn the_type_names_the_design_and_is_in_the_manifest() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-q8-rtl-{}", std::process::id()));
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
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-q8-bad-{}", std::process::id()));
    let o = out.to_str().unwrap();
    let base = |unit: &'static str, f: &'static str| vec!["rtl", unit, "--format", f];
    let mut a = base("q8-enc", "fix:7:8");
    a.extend(["--q8", "q8:tree", "--out", o]);
    refused(&a, "unknown 8-bit type \"q8:tree\"");
    let mut a = base("q8-dec", "lns:5:6");
    a.extend(["--out", o]);
    refused(&a, "q8-dec needs a fix, posit or f32 format");
    let mut a = base("q8-enc", "dfix:10");
    a.extend(["--out", o]);
    refused(&a, "q8-enc' does not work on dfix:10");
    let mut a = base("q8-enc", "posit:16:1");
    a.extend(["--stages", "19", "--out", o]);
    refused(&a, "use --stages 0..=18");
    let mut a = base("q8-dec", "posit:16:1");
    a.extend(["--stages", "3", "--out", o]);
    refused(&a, "use --stages 0..=2");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn f32_codecs_and_the_convert_unit_are_generated() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-q8-f32-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    for (args, top, port) in [
        (
            &["q8-dec", "--format", "f32", "--stages", "2"][..],
            "lpgen_q8_dec_f32_dynamic_tree_s2",
            "\"nan\"",
        ),
        (
            &["q8-enc", "--format", "f32", "--q8", "linear"][..],
            "lpgen_q8_enc_f32_linear_s0",
            "\"code\"",
        ),
        (
            &[
                "convert",
                "--format",
                "posit:16:1",
                "--to",
                "posit:8:2",
                "--stages",
                "2",
            ][..],
            "lpgen_convert_posit_16_1_to_posit_8_2_s2",
            "\"latency\": 2",
        ),
    ] {
        let mut a = vec!["rtl"];
        a.extend(args);
        a.extend(["--out", out]);
        let run = lpgen(&a);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let manifest = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
        assert!(manifest.contains(port), "{manifest}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_convert_requests_are_refused_in_one_line() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-convert-bad-{}", std::process::id()));
    let o = out.to_str().unwrap();
    refused(
        &["rtl", "convert", "--format", "posit:16:1", "--out", o],
        "convert needs --to T",
    );
    for (f, t) in [
        ("posit:16:1", "lns:4:3"),
        ("f32", "posit:8:0"),
        ("f32", "lns:4:3"),
        ("fix:7:8", "posit:8:0"),
    ] {
        refused(
            &["rtl", "convert", "--format", f, "--to", t, "--out", o],
            "convert converts within one family",
        );
    }
    refused(
        &[
            "rtl", "convert", "--format", "lns:5:6", "--to", "lns:4:3", "--stages", "2", "--out", o,
        ],
        "use --stages 0..=1",
    );
    refused(
        &["cosim", "convert", "--format", "lns:5:6", "--exhaustive"],
        "convert needs --to T",
    );
    refused(
        &[
            "cosim",
            "convert",
            "--format",
            "posit:32:2",
            "--to",
            "posit:8:2",
            "--exhaustive",
        ],
        "--exhaustive is not available for convert",
    );
    let _ = std::fs::remove_dir_all(&out);
}
