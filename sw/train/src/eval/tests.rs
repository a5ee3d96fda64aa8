use super::*;
use crate::arch::{Arch, ArchOptions, ModelKind};
use crate::compress::Compression;
use crate::config::{
    parse_precision, Activation, AdaGradAt, KahanPlaces, Optimizer, Schedule, Stages,
};
use crate::storage::{DfixConfig, FloatConfig, StorageConfig};
use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::q8::Q8Type;

fn options(kind: ModelKind, hidden: &[usize], dropout: &[f64]) -> ArchOptions {
    ArchOptions {
        kind,
        hidden: hidden.to_vec(),
        activation: Activation::Relu,
        maxout_pieces: 5,
        dropout: dropout.to_vec(),
    }
}

/// Configurations covering every field the fingerprint prints, each read back from its
/// fingerprint (with the data digests and a data-parallel suffix) as itself.
#[test]
fn fingerprints_read_back_as_the_configuration_that_printed_them() {
    let mut configs = vec![];
    let mut c = crate::net::tests::cfg("lns:5:6");
    c.kahan = KahanPlaces::parse("matmul,softmax").unwrap();
    c.keep_bits = Some(4);
    configs.push(c.clone());
    c.stages = parse_precision("O16-L12-FBG8q").unwrap().0;
    c.kahan = KahanPlaces::default();
    c.keep_bits = None;
    c.arch = Arch::build(
        &options(ModelKind::Lenet5, &[], &[0.0, 0.5, 0.25]),
        (1, 28, 28),
        10,
    )
    .unwrap();
    c.optimizer = Optimizer::AdaGrad {
        eps: 1e-8,
        at: AdaGradAt::Momentum,
    };
    c.compression = Compression {
        grad: Some(Q8Type::Mantissa),
        act: Some(Q8Type::DynamicTree),
    };
    c.schedule = Schedule::Step { every: 3 };
    c.normalize = Normalize::Global;
    c.max_norm = Some(1.9365);
    c.accumulate = crate::config::AccumulatePlaces::parse("matmul=pairwise,update=kahan").unwrap();
    c.lr = 0.0123;
    configs.push(c.clone());
    let mut sr = crate::net::tests::cfg("bf16");
    sr.rounding = lpgen_golden::Rounding::Stochastic(8);
    sr.quire = true;
    configs.push(sr.clone());
    // Issue 46: Adam and AdamW, with non-default figures, and the cosine schedule.
    sr.optimizer = Optimizer::parse("adam").unwrap();
    configs.push(sr.clone());
    sr.optimizer = Optimizer::Adam {
        beta1: 0.85,
        beta2: 0.995,
        eps: 1e-6,
        weight_decay: 0.1,
        decoupled: true,
    };
    sr.schedule = Schedule::Cosine {
        warmup: 7,
        total: 1200,
        min: 1e-5,
    };
    configs.push(sr);
    c.stages = Stages::all("f32".parse().unwrap());
    c.arch = Arch::build(
        &options(ModelKind::Maxout, &[24, 12], &[0.2, 0.5]),
        (1, 28, 28),
        10,
    )
    .unwrap();
    c.optimizer = Optimizer::parse("rmsprop").unwrap();
    c.schedule = Schedule::Halving {
        hold: 8,
        threshold: 0.001,
    };
    // Fixed point takes no --scale-every (its scales never move): the default stays.
    for (radix_point, exact_products, scale_every) in [(None, false, 2000), (Some(5), true, 10_000)]
    {
        c.storage = Some(StorageConfig::Dfix(DfixConfig {
            propagation: DfixFormat::new(10).unwrap(),
            update: DfixFormat::new(12).unwrap(),
            scale_every,
            max_overflow: 1e-4,
            radix_point,
            exact_products,
        }));
        configs.push(c.clone());
    }
    // Float storage: named formats, a float:E:M with suffixes, P != U.
    for spec in ["f16", "bf16/f32", "fp8:e4m3/float:6:9:sat:ftz"] {
        c.storage = Some(StorageConfig::Float(FloatConfig::parse(spec).unwrap()));
        configs.push(c.clone());
    }
    for cfg in configs {
        for suffix in ["", " workers=2 exchange=1bit double_buffer=true"] {
            let fp = format!(
                "{} train=00000000000000ab test=0123456789abcdef{suffix}",
                cfg.fingerprint()
            );
            let run = parse_fingerprint(&fp).unwrap_or_else(|e| panic!("{fp}: {e}"));
            assert_eq!(run.cfg.fingerprint(), cfg.fingerprint());
            assert_eq!(run.cfg.arch.layers, cfg.arch.layers);
            assert_eq!(run.cfg.storage, cfg.storage);
            assert_eq!(
                (run.train_digest, run.test_digest),
                (0xab, 0x0123_4567_89ab_cdef)
            );
        }
    }
    // A damaged line is refused in one line.
    let fp = crate::net::tests::cfg("lns:5:6").fingerprint() + " train=1 test=2";
    for (from, to) in [
        ("kahan=matmul,", "kahan=most,"),
        (", sigmoid,", ", tanh,"),
        ("O=lns:5:6", "O=lns:5"),
        (" batch=2", " batch=two"),
    ] {
        let damaged = fp.replacen(from, to, 1);
        assert_ne!(damaged, fp);
        let e = parse_fingerprint(&damaged).unwrap_err().0;
        assert!(
            e.contains("cannot be read back") && !e.contains('\n'),
            "{to}: {e}"
        );
    }
}

/// Every word of every layer, converted between formats, is the golden encoding in the
/// target of the golden decoding in the source.
#[test]
fn each_converted_word_is_the_golden_encoding_of_its_decoded_value() {
    let fmts = [
        "f32",
        "posit:8:2",
        "posit:6:1",
        "lns:5:6",
        "fix:7:8",
        "float:4:3",
    ];
    for from in fmts {
        let from: Format = from.parse().unwrap();
        let mut cfg = crate::net::tests::cfg("f32");
        cfg.stages = Stages::all(from);
        cfg.arch = Arch::build(&options(ModelKind::Mlp, &[7], &[]), (1, 3, 3), 4).unwrap();
        let mut model: Model<u64> = Model::init(&cfg);
        // Nonzero biases, and the last (zero-initialised) layer's weights filled too.
        let c = from.calc();
        for (i, l) in model.layers.iter_mut().enumerate() {
            for (j, b) in l.b.iter_mut().enumerate() {
                *b = c.from_f64((j as f64 - 3.0) * 0.37 + i as f64);
            }
            if i == 1 {
                for (j, w) in l.w.data.iter_mut().enumerate() {
                    *w = c.from_f64((j as f64 - 14.0) / 9.0);
                }
            }
        }
        for to in fmts {
            let to: Format = to.parse().unwrap();
            let got = convert_params(&model, from, to);
            for (a, b) in model.layers.iter().zip(&got.layers) {
                assert_eq!((a.w.rows, a.w.cols), (b.w.rows, b.w.cols));
                for (x, y) in a.w.data.iter().chain(&a.b).zip(b.w.data.iter().chain(&b.b)) {
                    assert_eq!(
                        *y,
                        to.calc().from_f64(from.calc().to_f64(*x)),
                        "{from} -> {to}"
                    );
                }
                assert_eq!(b.w.data.len() + b.b.len(), a.w.data.len() + a.b.len());
            }
        }
    }
}

/// Against values worked by hand from the formats' definitions: f32 0.3 is 0.3125 in
/// posit(8,2) (regime 01, exponent 10, fraction 010: 2^−2·1.25; 0.28125 is farther) and in
/// posit(6,1) (regime 01, exponent 0, fraction 01); posit(8,2) 0.3125 in fix:7:8 is 80/256.
/// A format converted to itself keeps every word.
#[test]
fn conversion_rounds_to_nearest_and_keeps_a_formats_own_words() {
    let one = |from: &str, to: &str, w: u64| -> u64 {
        let (from, to): (Format, Format) = (from.parse().unwrap(), to.parse().unwrap());
        let model = Model {
            layers: vec![Params {
                w: Mat {
                    rows: 1,
                    cols: 1,
                    data: vec![w],
                },
                b: vec![],
                vw: vec![],
                vb: vec![],
                rw: vec![],
                rb: vec![],
                cw: vec![],
                cb: vec![],
            }],
            updates: 0,
        };
        convert_params(&model, from, to).layers[0].w.data[0]
    };
    let f03 = 0.3f32.to_bits() as u64;
    assert_eq!(one("f32", "posit:8:2", f03), 0b0011_0010);
    assert_eq!(one("f32", "posit:6:1", f03), 0b00_1001);
    assert_eq!(one("posit:8:2", "fix:7:8", 0b0011_0010), 80);
    assert_eq!(
        one("posit:8:2", "f32", 0b0011_0010),
        0.3125f32.to_bits() as u64
    );
    for f in [
        "posit:8:2",
        "posit:6:1:u",
        "lns:5:6",
        "fix:4:3",
        "float:4:3",
    ] {
        let n: Format = f.parse().unwrap();
        for w in 0..1u64 << n.width() {
            let v = n.calc().to_f64(w);
            if v.is_nan() {
                continue; // one NaN word per family: the encoding of NaN
            }
            assert_eq!(one(f, f, w), w, "{f} word {w:#x} ({v})");
        }
    }
}

/// The checkpoint of `cfg`'s initial model in a fresh directory named `name`, as a run writes
/// it (the fingerprint with its data digests); returns its path and text.
fn written(name: &str, cfg: &Config) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("lpgen-eval-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("checkpoint.lpck");
    let fp = format!(
        "{} train=00000000000000ab test=0123456789abcdef",
        cfg.fingerprint()
    );
    let state: State<u64> = State {
        epochs_done: 1,
        lr: 0.1,
        halving: false,
        prev_ce: None,
        history: vec![],
        model: Model::init(cfg),
        storage: None,
        stream: None,
        scales: None,
    };
    checkpoint::save(&p, &fp, &state).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    (p, text)
}

/// `text` with `from` replaced by `to` once and its `end` digest recomputed to match.
fn redigest(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?}");
    let text = text.replacen(from, to, 1);
    let body = &text[..text.rfind("end ").unwrap()];
    format!("{body}end {:016x}\n", checkpoint::fnv1a64(body.bytes()))
}

/// Issue 48: `lpgen eval` built the network of an unverified header and allocated it (an
/// abort for `dense 400000000`, a panic for a width of 2^64 − 1 or batch 0). The digest is
/// checked first, and a header re-digested to match is refused in one line when its sizes
/// exceed the limits or what the file can hold, or its batch is 0, before any allocation of
/// their size.
#[test]
fn a_damaged_header_is_refused_before_anything_of_its_size_is_allocated() {
    let cfg = crate::net::tests::cfg("f32");
    let (p, text) = written("header", &cfg);
    let ck = read_checkpoint(&p).unwrap();
    assert_eq!(ck.state.model, Model::init(&cfg));
    // Damage behind a stale digest: refused by the digest, whatever it says.
    for (from, to) in [
        ("dense 3,", "dense 400000000,"),
        ("dense 3,", "dense 18446744073709551615,"),
    ] {
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
        let e = read_checkpoint(&p).unwrap_err().0;
        assert!(e.contains("digest mismatch"), "{to}: {e}");
    }
    // Damage under a digest recomputed to match.
    for (from, to, why) in [
        ("dense 3,", "dense 4000000,", "more parameters than its"),
        ("[1x2x2:", "[1x28000x28000:", "more parameters than its"),
        (
            "dense 3,",
            "dense 400000000,",
            "a size of 400000000, not in",
        ),
        (
            "dense 3,",
            "dense 18446744073709551615,",
            "a size of 18446744073709551615",
        ),
        ("dense 3,", "dense 0,", "a size of 0"),
        ("[1x2x2:", "[1x65537x65536:", "an input of more than"),
        (
            "dense 3, sigmoid,",
            "conv 3x16777216x16777216 pad 16777215, sigmoid,",
            "a kernel of more than",
        ),
        (" batch=2 ", " batch=0 ", "batch 0"),
    ] {
        std::fs::write(&p, redigest(&text, from, to)).unwrap();
        let e = read_checkpoint(&p).unwrap_err().0;
        assert!(e.contains(why) && !e.contains('\n'), "{to}: {e}");
    }
    let _ = std::fs::remove_dir_all(p.parent().unwrap());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The checkpoint of a small adaptive-optimizer MLP with its momenta filled (so that every
    /// array holds words other than zero), its path, text and state.
    fn sample(name: &str) -> (std::path::PathBuf, Vec<u8>, Checkpoint) {
        let mut cfg = crate::net::tests::cfg("posit:8:2");
        cfg.optimizer = Optimizer::parse("adagrad").unwrap();
        let (p, _) = written(name, &cfg);
        let ck = read_checkpoint(&p).unwrap();
        (p.clone(), std::fs::read(&p).unwrap(), ck)
    }

    /// `n` cases, or `PROPTEST_CASES` for a longer run.
    fn cases(n: u32) -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(n)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: cases(256),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Issue 48: any byte of a checkpoint flipped (any nonzero xor) is refused in one line,
        /// or the file reads back as the same words (a flip the digest line's trailing
        /// whitespace absorbs).
        #[test]
        fn a_flipped_byte_is_refused_or_reads_the_same_words(at in any::<prop::sample::Index>(), xor in 1u8..) {
            let (p, bytes, ck) = sample("flip");
            let mut damaged = bytes.clone();
            let i = at.index(damaged.len());
            damaged[i] ^= xor;
            std::fs::write(&p, &damaged).unwrap();
            match read_checkpoint(&p) {
                Ok(got) => {
                    prop_assert_eq!(&got.state, &ck.state);
                    prop_assert_eq!(&got.run, &ck.run);
                }
                Err(e) => prop_assert!(!e.0.contains('\n'), "{}", e.0),
            }
        }

        /// The same damage under a digest recomputed to match (an edited file): refused in one
        /// line or read, never a panic or an allocation beyond the file.
        #[test]
        fn a_flipped_byte_under_a_fresh_digest_never_panics(at in any::<prop::sample::Index>(), xor in 1u8..) {
            let (p, bytes, _) = sample("flip-redigest");
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let end = text.rfind("end ").unwrap();
            let mut body = text.as_bytes()[..end].to_vec();
            let i = at.index(body.len());
            body[i] ^= xor;
            let digest = checkpoint::fnv1a64(body.iter().copied());
            body.extend(format!("end {digest:016x}\n").bytes());
            std::fs::write(&p, &body).unwrap();
            if let Err(e) = read_checkpoint(&p) {
                prop_assert!(!e.0.contains('\n'), "{}", e.0);
            }
        }
    }
}
