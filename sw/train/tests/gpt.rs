//! `--model gpt` through the trainer: a tiny gpt learns a repeated text in f32 (its test
//! bits per character fall far below the text's order-0 entropy), resumes from its
//! checkpoint word for word, and trains on the golden machine in posit:16:1 and bf16.

use std::path::{Path, PathBuf};

use lpgen_train::arch::Arch;
use lpgen_train::config::{Config, Stages};
use lpgen_train::float::Float;
use lpgen_train::machine::{Golden, Machine};
use lpgen_train::trainer::{self, Plan};
use lpgen_train::transformer::{text, Gpt, Task};

const TEXT: &str = "the quick brown fox jumps over the lazy dog. ";

fn tiny() -> Gpt {
    Gpt {
        layers: 1,
        heads: 2,
        dim: 16,
        context: 8,
        vocab: 256,
        task: Task::Text,
    }
}

fn config(f: &str) -> Config {
    Config {
        batch: 8,
        lr: 0.01,
        momentum: 0.9,
        seed: 3,
        ..Config::new(Arch::gpt(tiny()).unwrap(), Stages::all(f.parse().unwrap()))
    }
}

fn out(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lpgen-gpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Trains `cfg` for `epochs` of at most `steps` batches on the repeated text; returns the
/// test bpc of every epoch and the final model.
fn train<M: Machine + Send>(
    m: &mut M,
    cfg: &Config,
    (epochs, steps): (u32, usize),
    dir: &Path,
    resume: bool,
) -> (Vec<f64>, lpgen_train::model::Model<M::Word>) {
    let bytes = TEXT.repeat(60);
    let (train, test) = text::split(bytes.as_bytes(), tiny().context).unwrap();
    let plan = Plan {
        epochs,
        max_steps: Some(steps),
        out: dir.to_path_buf(),
        resume,
        progress: false,
    };
    let state = trainer::run(m, cfg, &train, &test, &plan, &mut |_| Ok(())).unwrap();
    let bpc = state
        .history
        .iter()
        .map(|h| h.test_bpc.expect("a gpt reports test_bpc"))
        .collect();
    (bpc, state.model)
}

#[test]
fn a_tiny_gpt_learns_a_repeated_text_in_f32_and_resumes_word_for_word() {
    let cfg = config("f32");
    let entropy = text::entropy(TEXT.as_bytes());
    let dir = out("f32");
    let (bpc, model) = train(&mut Float { threads: 1 }, &cfg, (4, 40), &dir, false);
    assert!(
        bpc[3] < bpc[0] && bpc[3] < entropy - 2.0,
        "bpc {bpc:?}, order-0 entropy {entropy}"
    );
    // Two epochs, then two more from the checkpoint: the same words.
    let dir2 = out("f32-resume");
    train(&mut Float { threads: 1 }, &cfg, (2, 40), &dir2, false);
    let (again, resumed) = train(&mut Float { threads: 1 }, &cfg, (4, 40), &dir2, true);
    assert_eq!(resumed, model);
    // The history comes back through the checkpoint's JSON lines (serde_json reads a float
    // back to within an ulp, not always exactly).
    for (a, b) in again.iter().zip(&bpc) {
        assert!((a - b).abs() <= 1e-12 * b, "{again:?} vs {bpc:?}");
    }
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert!(metrics.lines().all(|l| l.contains("\"test_bpc\":")));
    for d in [dir, dir2] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_golden_machine_trains_a_tiny_gpt_in_posit16_and_bf16() {
    for f in ["posit:16:1", "bf16"] {
        let cfg = config(f);
        let dir = out(f.replace(':', "-").as_str());
        let (bpc, _) = train(&mut Golden::default(), &cfg, (2, 25), &dir, false);
        assert!(bpc[1] < 4.0 && bpc[1] < bpc[0], "{f}: bpc {bpc:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
