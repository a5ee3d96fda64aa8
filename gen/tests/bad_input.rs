//! The findings of issue 15, one case each: bad input that once panicked, aborted, hung, ate
//! memory, printed two lines or was silently accepted. Every case must end with exit status
//! 2, exactly one line on stderr, no "panicked", within a few seconds.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A case may take this long; the slowest legitimate refusal reads a small dataset.
const DEADLINE: Duration = Duration::from_secs(10);

/// A fresh directory of this run, removed when dropped (at the end of the case that made it).
struct Tmp(PathBuf);

impl std::ops::Deref for Tmp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Tmp {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-bad-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Tmp(d)
}

/// Runs lpgen with `args` (and `stdin`), killing it at the deadline: (status, stdout, stderr).
fn run(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lpgen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lpgen");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    // A writer thread, so a child that exits early does not block us on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lpgen {args:?} still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts the contract for bad input, and that the message contains `needle`.
fn refused(args: &[&str], stdin: &[u8], needle: &str) {
    let (code, _, err) = run(args, stdin);
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    assert_eq!(code, Some(2), "lpgen {shown:?}: status {code:?}: {err}");
    assert_eq!(err.lines().count(), 1, "lpgen {shown:?}: {err}");
    assert!(!err.contains("panicked"), "lpgen {shown:?}: {err}");
    assert!(
        err.contains(needle),
        "lpgen {shown:?}: {err:?} lacks {needle:?}"
    );
}

/// An IDX split: `n` images of `rows` × `cols` (header as given; the body holds
/// `body` bytes of pixels), labels 0..=9.
fn split(dir: &Path, name: &str, dims: [u32; 3], body: usize) {
    let mut img = vec![0, 0, 8, 3];
    for d in dims {
        img.extend(d.to_be_bytes());
    }
    img.extend((0..body).map(|i| (i * 37 % 256) as u8));
    let mut lab = vec![0, 0, 8, 1];
    lab.extend(dims[0].to_be_bytes());
    lab.extend((0..dims[0]).map(|i| (i % 10) as u8));
    std::fs::write(dir.join(format!("{name}-images-idx3-ubyte")), img).unwrap();
    std::fs::write(dir.join(format!("{name}-labels-idx1-ubyte")), lab).unwrap();
}

/// A dataset with train and test images of the given dimensions.
fn dataset(tag: &str, train: [u32; 3], test: [u32; 3]) -> Tmp {
    let dir = tmp(tag);
    let size = |d: [u32; 3]| {
        d.iter()
            .map(|&x| x as usize)
            .product::<usize>()
            .min(1 << 20)
    };
    split(&dir, "train", train, size(train));
    split(&dir, "t10k", test, size(test));
    dir
}

fn train_args<'a>(ds: &'a str, out: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["train", "--backend", "f32", "--dataset", ds, "--out", out];
    for (option, default) in [("--epochs", "1"), ("--hidden", "4")] {
        if !more.contains(&option) {
            a.extend([option, default]);
        }
    }
    a.extend(more);
    a
}

#[test]
fn finding_1_idx_shapes_that_differ_or_are_degenerate() {
    let out = tmp("out1");
    let o = out.to_str().unwrap();
    for (tag, train, test, needle) in [
        (
            "shape",
            [40, 28, 28],
            [20, 14, 14],
            "training images are 28x28 but test images 14x14",
        ),
        (
            "nonsquare",
            [40, 28, 29],
            [20, 28, 28],
            "both splits need one shape",
        ),
        ("zero-rows", [200, 0, 28], [20, 0, 28], "include a zero"),
        ("zero-pixels", [40, 0, 0], [20, 0, 0], "include a zero"),
        ("no-samples", [0, 28, 28], [20, 28, 28], "include a zero"),
    ] {
        let ds = dataset(tag, train, test);
        refused(&train_args(ds.to_str().unwrap(), o, &[]), b"", needle);
    }
    // 4 × 2^31 × 2^31 with an empty body: the product wraps to 0 in 64 bits.
    let ds = tmp("wraps");
    split(&ds, "train", [4, 1 << 31, 1 << 31], 0);
    split(&ds, "t10k", [4, 1 << 31, 1 << 31], 0);
    refused(
        &train_args(ds.to_str().unwrap(), o, &[]),
        b"",
        "header dimensions 4x2147483648x2147483648 do not match the 0 bytes",
    );
    // Odd but valid shapes train.
    for (tag, dims) in [("one-pixel", [40, 1, 1]), ("28x29", [40, 28, 29])] {
        let ds = dataset(tag, dims, [20, dims[1], dims[2]]);
        let (code, _, err) = run(&train_args(ds.to_str().unwrap(), o, &[]), b"");
        assert_eq!(code, Some(0), "{tag}: {err}");
    }
}

#[test]
fn finding_2_sizes_have_limits_checked_before_any_work() {
    let ds = dataset("sizes", [40, 4, 4], [20, 4, 4]);
    let d = ds.to_str().unwrap();
    let out = tmp("out2");
    let o = out.to_str().unwrap();
    refused(
        &train_args(d, o, &["--hidden", "99999999999"]),
        b"",
        "expected widths of 1..=65536",
    );
    refused(
        &train_args(d, o, &["--hidden", "65536,65536"]),
        b"",
        "over the limit of 67108864",
    );
    for (args, needle) in [
        (
            vec!["array", "--format", "posit:8:0", "--rows", "1000"],
            "--rows 1000 is over the limit of 64: ",
        ),
        (
            vec!["array", "--format", "posit:8:0", "--cols", "4294967295"],
            "--cols 4294967295 is over the limit of 64",
        ),
        (
            vec!["vector", "--format", "posit:8:0", "--lanes", "1000000"],
            "--lanes 1000000 is over the limit of 64",
        ),
        (
            vec!["array", "--format", "posit:8:0", "--rows", "0"],
            "--rows 0: must be at least 1",
        ),
        (
            vec!["quant1", "--format", "fix:7:8", "--rows", "65537"],
            "--rows 65537 is over the limit of 65536: ",
        ),
        (
            vec!["quant1", "--format", "fix:7:8", "--rows", "0"],
            "--rows 0: must be at least 1",
        ),
        (
            vec!["quant1", "--format", "lns:5:6", "--rows", "4"],
            "quant1 is built for fix and posit formats",
        ),
    ] {
        let mut a = vec!["rtl"];
        a.extend(args);
        a.extend(["--out", o]);
        refused(&a, b"", needle);
    }
    // An exhaustive quant1 run too large to enumerate is refused before any build.
    refused(
        &[
            "cosim",
            "quant1",
            "--format",
            "fix:2:2",
            "--rows",
            "3",
            "--exhaustive",
        ],
        b"",
        "--exhaustive is not available for quant1 on fix:2:2",
    );
    // --out is checked before the design is generated (an lns-kahan 16x16 takes seconds).
    let file = out.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let under_file = file.join("rtl");
    refused(
        &[
            "rtl",
            "array",
            "--format",
            "lns:5:6",
            "--rows",
            "16",
            "--cols",
            "16",
            "--out",
            under_file.to_str().unwrap(),
        ],
        b"",
        "cannot create output directory",
    );
    // The rtl backend refuses its sizes before reading data or building a design, and
    // names the option that is wrong.
    for (opt, needle) in [
        ("--lanes", "--lanes 0: must be at least 1"),
        ("--rows", "--rows 0: must be at least 1"),
    ] {
        let a = [
            "train",
            "--format",
            "lns:5:6",
            "--backend",
            "rtl",
            "--dataset",
            d,
            "--out",
            o,
            opt,
            "0",
        ];
        refused(&a, b"", needle);
    }
}

#[test]
fn finding_3_a_huge_decimal_operand_is_refused_at_once() {
    // Through --stdin: one argument of a command line is limited to 128 KiB by Linux.
    let mut line = "1".repeat(4_000_000).into_bytes();
    line.extend(b" 2\n");
    let start = Instant::now();
    refused(
        &["golden", "posit:16:1", "add", "--stdin"],
        &line,
        "stdin line 1: a decimal operand of 4000000 characters is over the limit of 4096",
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_format_whose_sizes_overflow_is_refused() {
    // Found by gen/tests/fuzz.rs: I + F wrapped in u32 and panicked.
    refused(
        &["golden", "fix:4294967295:16", "neg", "1"],
        b"",
        "1+I+F must be at most 32 bits",
    );
}

#[test]
fn finding_4_input_echoed_into_an_error_stays_on_one_line() {
    refused(&["golden", "lns:5\n:6", "add", "1", "2"], b"", "lns:5\\n:6");
    refused(&["golden", "lns:5:6", "add", "1\n2", "2"], b"", "1\\n2");
    refused(
        &["golden", "lns:5:6", "frob\nnicate", "1"],
        b"",
        "frob\\nnicate",
    );
    refused(
        &["rtl", "lns\nmul", "--format", "lns:5:6", "--out", "x"],
        b"",
        "lns\\nmul",
    );
    refused(
        &[
            "train",
            "--format",
            "lns:5:6",
            "--dataset",
            "no\nsuch",
            "--activation",
            "x\ny",
        ],
        b"",
        "x\\ny",
    );
}

#[test]
fn finding_5_an_empty_test_or_train_set_is_refused() {
    let ds = dataset("limits", [40, 4, 4], [20, 4, 4]);
    let out = tmp("out5");
    let (d, o) = (ds.to_str().unwrap(), out.to_str().unwrap());
    refused(
        &train_args(d, o, &["--test-limit", "0"]),
        b"",
        "--test-limit 0 leaves no samples",
    );
    refused(
        &train_args(d, o, &["--train-limit", "0"]),
        b"",
        "--train-limit 0 leaves no samples",
    );
    assert!(!out.join("metrics.jsonl").exists());
}

/// FNV-1a 64, as the checkpoint's digest line.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The checkpoint text with `from` replaced by `to` and its digest recomputed.
fn forged(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?}");
    let body = text.replacen(from, to, 1);
    let body = &body[..body.rfind("end ").unwrap()];
    format!("{body}end {:016x}\n", fnv1a64(body.as_bytes()))
}

#[test]
fn finding_6_resume_holds_the_run_to_its_data_and_distrusts_the_checkpoint() {
    let ds = dataset("resume", [40, 4, 4], [20, 4, 4]);
    let other = dataset("resume-other", [40, 4, 4], [20, 4, 4]);
    // The other dataset differs in one label.
    let lab = other.join("train-labels-idx1-ubyte");
    let mut l = std::fs::read(&lab).unwrap();
    l[8] = 9;
    std::fs::write(&lab, l).unwrap();
    let out = tmp("out6");
    let (d, o) = (ds.to_str().unwrap(), out.to_str().unwrap());
    let (code, _, err) = run(&train_args(d, o, &[]), b"");
    assert_eq!(code, Some(0), "{err}");
    let resume = |more: &[&str], d: &str, needle: &str| {
        let mut a = train_args(d, o, &["--epochs", "2", "--resume"]);
        a.extend(more);
        refused(&a, b"", needle);
    };
    resume(&[], other.to_str().unwrap(), "another configuration");
    resume(&["--train-limit", "30"], d, "another configuration");
    let ck = out.join("checkpoint.lpck");
    let good = std::fs::read_to_string(&ck).unwrap();
    let lr = format!("lr {:x}", 0.1f64.to_bits());
    for (from, to, needle) in [
        (
            "layers 2\n",
            "layers 0\n",
            "0 layers, the configuration has 2",
        ),
        (
            "\nw 64\n",
            "\nw 4000000000000\n",
            "array w of 4000000000000 words",
        ),
        (lr.as_str(), "lr 7ff8000000000000", "learning rate NaN"),
    ] {
        std::fs::write(&ck, forged(&good, from, to)).unwrap();
        resume(&[], d, needle);
    }
    std::fs::write(&ck, &good).unwrap();
    let mut a = train_args(d, o, &["--epochs", "2", "--resume"]);
    a.push("--lr");
    a.push("NaN");
    refused(&a, b"", "--lr must be positive");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn finding_7_gzip_members_and_trailing_data() {
    let ds = dataset("gzip", [40, 4, 4], [20, 4, 4]);
    let out = tmp("out7");
    let (d, o) = (ds.to_str().unwrap(), out.to_str().unwrap());
    // Every file as two gzip members (as `cat a.gz b.gz` makes): a valid dataset.
    for name in [
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ] {
        let raw = std::fs::read(ds.join(name)).unwrap();
        let (a, b) = raw.split_at(raw.len() / 2);
        let mut two = gzip(a);
        two.extend(gzip(b));
        std::fs::write(ds.join(format!("{name}.gz")), two).unwrap();
        std::fs::remove_file(ds.join(name)).unwrap();
    }
    let (code, _, err) = run(&train_args(d, o, &[]), b"");
    assert_eq!(code, Some(0), "{err}");
    let p = ds.join("t10k-labels-idx1-ubyte.gz");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.extend(b"trailing garbage");
    std::fs::write(&p, bytes).unwrap();
    refused(&train_args(d, o, &[]), b"", "16 bytes of trailing data");
}

#[test]
fn finding_8_leftovers_of_killed_runs_and_bad_bytes() {
    // A temporary of an `rtl` run that was killed (its pid is gone) is removed by the next.
    let out = tmp("out8");
    let stale = out.join(".lns_mul_lns5_6_s0.v.tmp4194304999");
    std::fs::write(&stale, b"half a file").unwrap();
    let (code, _, err) = run(
        &[
            "rtl",
            "lns-mul",
            "--format",
            "lns:5:6",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(!stale.exists(), "stale temporary left in place");
    // Invalid UTF-8 on --stdin names the line.
    refused(
        &["golden", "lns:5:6", "add", "--stdin"],
        b"1 2\n3 \xff\n",
        "stdin line 2: not UTF-8 text",
    );
}

#[test]
fn array_stages_beyond_every_pe_or_off_the_rtl_backend_are_refused() {
    let ds = dataset("stages", [40, 4, 4], [20, 4, 4]);
    let out = tmp("out-stages");
    let (d, o) = (ds.to_str().unwrap(), out.to_str().unwrap());
    refused(
        &train_args(d, o, &["--array-stages", "2"]),
        b"",
        "--array-stages is for --backend rtl, not f32",
    );
    let rtl = ["train", "--backend", "rtl", "--dataset", d, "--out", o];
    let args: Vec<&str> = rtl
        .iter()
        .copied()
        .chain(["--array-stages", "10"])
        .collect();
    refused(&args, b"", "more than any array PE takes (at most 9)");
    assert!(!out.join("metrics.jsonl").exists());
}
