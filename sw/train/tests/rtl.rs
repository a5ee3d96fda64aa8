//! Training through the simulated RTL (Verilator) ends with exactly the weights of the
//! golden model, and `--check` stops at the first differing word.

use std::path::PathBuf;

use lpgen_golden::F32;
use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, KahanPlaces, Normalize, Stages};
use lpgen_train::data::{self, Split};
use lpgen_train::machine::{Checked, Golden};
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lpgen-rtl-train-{}-{name}", std::process::id()))
}

#[test]
fn rtl_training_ends_with_the_golden_weights() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(60);
    test.truncate(20);
    let cfg = Config {
        kahan: KahanPlaces::all(),
        batch: 10,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        seed: 3,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[12], Activation::Sigmoid, 10),
            Stages::all("lns:5:6".parse().unwrap()),
        )
    };
    let plan = |name: &str| Plan {
        epochs: 2,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("g"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap(),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan("r"), &mut sink).unwrap();
    assert!(checked.ops > 100, "{} operations compared", checked.ops);
    assert_eq!(rtl.model, golden.model, "weights after 2 epochs");
    // The weights moved (a run that trains nothing would pass the comparison trivially).
    let init = lpgen_train::model::Model::init(&cfg);
    assert_ne!(rtl.model.layers[0].w, init.layers[0].w);
    for d in ["g", "r"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}

/// The rtl machine quantizes 1-bit columns on the generated `quant1` unit: the same bits,
/// means and new residuals as the golden quantizer, with and without error feedback, for fix
/// words and for posits summed in quires (13-row columns on the 16-row design; both passes).
#[test]
fn the_quant1_unit_quantizes_as_the_golden_model() {
    use lpgen_golden::onebit::Quantizer;
    use lpgen_golden::{Format, SumMode};
    use lpgen_train::machine::Machine;
    let mut rtl = Rtl::new(2, 2, 4).unwrap();
    let (rows, cols) = (13, 5);
    for f in ["fix:7:8", "posit:8:2"] {
        let f: Format = f.parse().unwrap();
        let c = f.calc();
        let g: Vec<u64> = (0..rows * cols)
            .map(|i| c.from_f64(((i * 37 % 29) as f64 - 14.0) / 8.0))
            .collect();
        let r0: Vec<u64> = (0..rows * cols)
            .map(|i| c.from_f64(((i * 11 % 7) as f64 - 3.0) / 64.0))
            .collect();
        let q = Quantizer::new(f, SumMode::Quire).unwrap();
        let mut want_r = r0.clone();
        let want = q.matrix(&g, rows, cols, Some(&mut want_r));
        let mut got_r = r0.clone();
        let got = rtl
            .quantize_1bit(f, SumMode::Quire, &g, (rows, cols), Some(&mut got_r))
            .unwrap();
        assert_eq!(got, want, "{f}: bits and means");
        assert_eq!(got_r, want_r, "{f}: residuals");
        assert_ne!(want_r, r0, "{f}: the residuals changed");
        let plain = rtl
            .quantize_1bit(f, SumMode::Quire, &g, (rows, cols), None)
            .unwrap();
        assert_eq!(plain, q.matrix(&g, rows, cols, None), "{f}: no feedback");
    }
    // Both ran on hardware (one 16-row design each), not on the host's fallback.
    assert_eq!(rtl.quant1_designs(), 2);
    // LNS has no quant1 unit: the host quantizes.
    let lns: Format = "lns:5:6".parse().unwrap();
    let g: Vec<u64> = (0..26)
        .map(|i| lns.calc().from_f64(i as f64 - 12.0))
        .collect();
    let host = rtl
        .quantize_1bit(lns, SumMode::Naive, &g, (13, 2), None)
        .unwrap();
    assert_eq!(
        host,
        Quantizer::new(lns, SumMode::Naive)
            .unwrap()
            .matrix(&g, 13, 2, None)
    );
    assert_eq!(rtl.quant1_designs(), 2);
}

/// Seed 003's codecs on the generated `q8-enc` and `q8-dec` units inside training: a fix:7:8
/// run with 8-bit gradients and activations under `--check` (every codec operation compared
/// with the golden word rule, bit for bit) ends with the golden run's weights, and the codecs
/// ran on their units (one encoder and one decoder built).
#[test]
fn compressed_rtl_training_checks_the_q8_units() {
    use lpgen_golden::q8::Q8Type;
    use lpgen_train::compress::Compression;
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(40);
    test.truncate(10);
    let cfg = Config {
        compression: Compression {
            grad: Some(Q8Type::DynamicTree),
            act: Some(Q8Type::DynamicTree),
        },
        batch: 10,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        seed: 5,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[8], Activation::Sigmoid, 10),
            Stages::all("fix:7:8".parse().unwrap()),
        )
    };
    let plan = |name: &str| Plan {
        epochs: 1,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("q8g"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap(),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan("q8r"), &mut sink).unwrap();
    assert_eq!(rtl.model, golden.model, "weights after 1 epoch");
    assert_eq!(checked.dut.q8_designs(), 2, "q8-enc and q8-dec built");
    assert!(checked.ops > 50, "{} operations compared", checked.ops);
    for d in ["q8g", "q8r"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}

/// The rtl machine's codec gives the golden rule's words: every posit:8:2 word (NaR, zero
/// and the extremes included) with an exponent-offset type, whose scale word is 10 × the
/// unit, and fix:7:8 tensors with the dynamic tree, whose absmax word the vector unit finds
/// (the most negative word included, whose magnitude saturates); LNS words take the f32 rule
/// on the host, and empty tensors build nothing.
#[test]
fn the_q8_units_give_the_golden_words() {
    use lpgen_golden::q8::Q8Type;
    use lpgen_golden::{Format, PositFormat};
    use lpgen_train::compress::through_codec;
    use lpgen_train::machine::Machine;
    let mut rtl = Rtl::new(2, 2, 4).unwrap();
    let codec = Q8Type::Mantissa;
    let lns: Format = "lns:5:6".parse().unwrap();
    let g: Vec<u64> = (0..20)
        .map(|i| lns.calc().from_f64(i as f64 - 9.5))
        .collect();
    assert_eq!(
        rtl.through_q8(codec, lns, &g, 4.0).unwrap(),
        through_codec(codec, lns, &g, 4.0).unwrap()
    );
    let p = PositFormat::draft(8, 2);
    let f = Format::Posit(p);
    assert!(rtl.through_q8(codec, f, &[], 4.0).unwrap().is_empty());
    assert_eq!(rtl.q8_designs(), 0);
    let mut words: Vec<u64> = (0..256).filter(|&w| w != p.nar()).collect();
    words.push(p.nar());
    for unit in [1.0, 20.0] {
        let got = rtl.through_q8(codec, f, &words, unit).unwrap();
        assert_eq!(
            got,
            through_codec(codec, f, &words, unit).unwrap(),
            "unit {unit}"
        );
    }
    assert_eq!(rtl.q8_designs(), 2);
    let fix: Format = "fix:7:8".parse().unwrap();
    let spread: Vec<u64> = (0..37u64).map(|i| (i * 0x2b1d) & 0xffff).collect();
    let small: Vec<u64> = (0..9u64).map(|i| i * 3).collect();
    for words in [spread, small, vec![0x8000, 0x0100, 0x7f00], vec![0]] {
        let got = rtl
            .through_q8(Q8Type::DynamicTree, fix, &words, 10.0)
            .unwrap();
        let want = through_codec(Q8Type::DynamicTree, fix, &words, 10.0).unwrap();
        assert_eq!(got, want, "{words:x?}");
    }
    assert_eq!(rtl.q8_designs(), 4);
}

/// Seed 002 with exact products on the rtl backend: every dense product of a dfix storage run
/// runs on the generated `array --pe dfix` (read-out shift from the groups' scales, overflow
/// flags counted into them), checked word for word and count for count against the golden
/// `DfixFormat::dot`, and the run ends with the golden machine's weights and scales.
#[test]
fn dfix_products_run_on_the_dfix_array() {
    use lpgen_golden::dfix::DfixFormat;
    use lpgen_golden::Format;
    use lpgen_train::storage::{DfixConfig, StorageConfig};
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(40);
    test.truncate(20);
    let storage = StorageConfig::Dfix(DfixConfig {
        propagation: DfixFormat::new(8).unwrap(),
        update: DfixFormat::new(12).unwrap(),
        scale_every: 20,
        max_overflow: 0.01,
        radix_point: None,
        exact_products: true,
    });
    let cfg = Config {
        storage: Some(storage),
        batch: 10,
        momentum: 0.5,
        seed: 5,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[6], Activation::Relu, 10),
            Stages::all(Format::F32(F32)),
        )
    };
    let plan = |name: &str| Plan {
        epochs: 2,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("dg"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap(),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan("dr"), &mut sink).unwrap();
    assert_eq!(
        checked.dut.dfix_designs(),
        1,
        "the dfix array was built and used"
    );
    assert_eq!(rtl.model, golden.model);
    assert_eq!(rtl.storage, golden.storage);
    // Exact products differ from f32 products rounded as stored.
    let mut f32_products = cfg.clone();
    if let Some(StorageConfig::Dfix(s)) = &mut f32_products.storage {
        s.exact_products = false;
    }
    let other = trainer::run(
        &mut Golden::default(),
        &f32_products,
        &train,
        &test,
        &plan("df"),
        &mut sink,
    )
    .unwrap();
    assert_ne!(other.model, golden.model);
    for d in ["dg", "dr", "df"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}

/// Matrix products on deeper arrays (`with_array_stages`) equal the golden machine's, word
/// for word: lns-kahan at stages 5 (four accumulations interleaved, so several output tiles
/// stream at once, with K shorter and longer than the `last` spacing), posit quires at 8
/// and fix at 3, 4 and 6 (registers around the loop, one accumulation), and takum quires
/// (`takum-quire`) at 8 on the 2×2 array `verif/tests/cosim_takum.rs` co-simulates (one
/// Verilator build for both).
#[test]
fn deeper_arrays_give_the_golden_products() {
    use lpgen_golden::Format;
    use lpgen_train::machine::{Accumulate, Golden, Machine, Mat};
    for (f, acc, stages, cols) in [
        ("lns:5:6", Accumulate::Kahan, 5, 3),
        ("posit:8:2", Accumulate::Exact, 8, 3),
        ("fix:7:8", Accumulate::Exact, 3, 3),
        ("fix:7:8", Accumulate::Exact, 4, 3),
        ("fix:7:8", Accumulate::Exact, 6, 3),
        ("fix:7:8", Accumulate::Exact, 7, 3),
        ("fix:7:8", Accumulate::Exact, 9, 3),
        ("takum:8", Accumulate::Exact, 8, 2),
    ] {
        let f: Format = f.parse().unwrap();
        let c = f.calc();
        let mut rtl = Rtl::new(2, cols, 4).unwrap().with_array_stages(stages);
        let mut golden = Golden::new("golden", None);
        // 7×5 outputs: 4×2 tiles of 2×3 (4×3 of 2×2), the last ones padded; K = 2
        // (< R + C − 1) and 9.
        for k in [2, 9] {
            let word = |i: usize| c.from_f64(((i * 37 % 23) as f64 - 11.0) / 8.0);
            let a = Mat {
                rows: 7,
                cols: k,
                data: (0..7 * k).map(word).collect(),
            };
            let b = Mat {
                rows: k,
                cols: 5,
                data: (0..k * 5).map(|i| word(i + 5)).collect(),
            };
            let got = rtl.matmul(f, acc, a.view(), b.view()).unwrap();
            let want = golden.matmul(f, acc, a.view(), b.view()).unwrap();
            assert_eq!(got, want, "{f} stages {stages} K {k}");
        }
    }
    // A PE kind that does not take the stages is refused in one line naming the option.
    let f: Format = "fix:7:8".parse().unwrap();
    let mut rtl = Rtl::new(2, 3, 4).unwrap().with_array_stages(10);
    let a = Mat::filled(2, 2, 0);
    let e = rtl
        .matmul(f, Accumulate::Exact, a.view(), a.view())
        .unwrap_err();
    assert_eq!(e.0, "--array-stages 10: this run's fix PEs take at most 9");
}

/// Float formats (every matrix product on the `float` array PE with exact accumulation,
/// `--quire`; lanes and conversions on the float `vector` unit) train word for word as the
/// golden machine does.
#[test]
fn float_training_on_the_float_array_gives_the_golden_words() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(40);
    test.truncate(10);
    for f in ["bf16", "fp8:e5m2"] {
        let cfg = Config {
            quire: true,
            batch: 10,
            momentum: 0.5,
            normalize: Normalize::PerPixel,
            seed: 3,
            ..Config::new(
                Arch::mlp((1, 28, 28), &[8], Activation::Sigmoid, 10),
                Stages::all(f.parse().unwrap()),
            )
        };
        let plan = Plan {
            epochs: 1,
            max_steps: None,
            out: tmp(&format!("float-{f}")),
            resume: false,
            progress: false,
        };
        let mut sink = |_: &str| Ok(());
        let mut checked = Checked {
            dut: Rtl::new(2, 2, 4).unwrap().with_array_stages(2),
            reference: Golden::default(),
            ops: 0,
        };
        let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan, &mut sink).unwrap();
        assert!(
            checked.ops > 100,
            "{f}: {} operations compared",
            checked.ops
        );
        let init = lpgen_train::model::Model::init(&cfg);
        assert_ne!(
            rtl.model.layers[0].w, init.layers[0].w,
            "{f}: nothing trained"
        );
        let _ = std::fs::remove_dir_all(tmp(&format!("float-{f}")));
    }
}

/// `--format mx:fp8:e4m3` on the rtl backend: every layer product (forward, ∇W, input error;
/// training and test passes) on the generated `array --pe mx` (3×2 PEs, 2 stages), checked in
/// lockstep against the golden MX product, ends with the golden run's weights, bit for bit.
/// The 784 inputs make 25 blocks of 32, the last 16 long (padded with code 0 on the array).
#[test]
fn mx_rtl_training_ends_with_the_golden_weights() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(30);
    test.truncate(10);
    let cfg = Config {
        mx: Some("mx:fp8:e4m3".parse().unwrap()),
        batch: 10,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        seed: 5,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[12], Activation::Relu, 10),
            Stages::all(lpgen_golden::Format::F32(F32)),
        )
    };
    let plan = |name: &str| Plan {
        epochs: 2,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("mx-g"),
        &mut sink,
    )
    .unwrap();
    let mut checked = Checked {
        dut: Rtl::new(3, 2, 4).unwrap().with_array_stages(2),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(&mut checked, &cfg, &train, &test, &plan("mx-r"), &mut sink).unwrap();
    // 3 training steps an epoch, each 2 forward products, 2 ∇W and 1 input error, and the
    // test pass's forward products: all on the array.
    assert!(
        checked.dut.mx_products() >= 30,
        "{}",
        checked.dut.mx_products()
    );
    assert_eq!(checked.dut.mx_designs(), 1);
    assert_eq!(rtl.model, golden.model, "weights after 2 epochs");
    let init = lpgen_train::model::Model::init(&cfg);
    assert_ne!(rtl.model.layers[0].w, init.layers[0].w);
    for d in ["mx-g", "mx-r"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}

/// `--accumulate matmul=fdpa:32:13:rz-e8m13:promote64` (Hopper's fp8 chunking) on bf16 on
/// the rtl backend (issue 49): every layer product on the generated `array --pe fdpa` (2×2
/// PEs, 2 stages), checked in lockstep against the golden fdpa product, ends with the golden
/// run's weights, bit for bit; and those weights are not the ones without promotion (the
/// mode matters to this run). The 784 inputs make 24 chunks of 32 and a last one of 16
/// (padded with +0 words on the array), 12 promotion intervals of 64 and a short last one;
/// ∇W's K = 20 is one short chunk.
#[test]
fn fdpa_rtl_training_ends_with_the_golden_weights() {
    let ds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist-300");
    let mut train = data::load(&ds, Split::Train).unwrap();
    let mut test = data::load(&ds, Split::Test).unwrap();
    train.truncate(40);
    test.truncate(10);
    let cfg = Config {
        quire: true,
        accumulate: lpgen_train::placement::AccumulatePlaces::parse(
            "matmul=fdpa:32:13:rz-e8m13:promote64",
        )
        .unwrap(),
        lr: 0.05,
        momentum: 0.5,
        normalize: Normalize::PerPixel,
        ..Config::new(
            Arch::mlp((1, 28, 28), &[8], Activation::Sigmoid, 10),
            Stages::all("bf16".parse().unwrap()),
        )
    };
    let plan = |name: &str| Plan {
        epochs: 1,
        max_steps: None,
        out: tmp(name),
        resume: false,
        progress: false,
    };
    let mut sink = |_: &str| Ok(());
    let golden = trainer::run(
        &mut Golden::default(),
        &cfg,
        &train,
        &test,
        &plan("fdpa-g"),
        &mut sink,
    )
    .unwrap();
    let unpromoted = Config {
        accumulate: lpgen_train::placement::AccumulatePlaces::parse("matmul=fdpa:32:13:rz-e8m13")
            .unwrap(),
        ..cfg.clone()
    };
    let other = trainer::run(
        &mut Golden::default(),
        &unpromoted,
        &train,
        &test,
        &plan("fdpa-u"),
        &mut sink,
    )
    .unwrap();
    assert!(
        other.model != golden.model,
        "promotion changes nothing here"
    );
    let mut checked = Checked {
        dut: Rtl::new(2, 2, 4).unwrap().with_array_stages(2),
        reference: Golden::default(),
        ops: 0,
    };
    let rtl = trainer::run(
        &mut checked,
        &cfg,
        &train,
        &test,
        &plan("fdpa-r"),
        &mut sink,
    )
    .unwrap();
    assert!(checked.ops > 20, "{} operations compared", checked.ops);
    assert_eq!(checked.dut.fdpa_designs(), 1);
    assert!(
        rtl.model == golden.model,
        "the weights after an epoch differ"
    );
    let init = lpgen_train::model::Model::init(&cfg);
    assert!(rtl.model.layers[0].w != init.layers[0].w, "nothing trained");
    for d in ["fdpa-g", "fdpa-u", "fdpa-r"] {
        let _ = std::fs::remove_dir_all(tmp(d));
    }
}
