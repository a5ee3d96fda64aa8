//! `lpgen sweep` as a user meets it: an experiment's grid runs once (rows × seeds), a rerun
//! runs nothing, an interrupted run resumes from its checkpoint, each run leaves a record
//! with its command, wall time and metrics, the page's tables render from the records alone
//! (checked against the runs' own metrics files, computed here), `--check` catches a number
//! changed in the page or in the records, and bad experiment files get one line and exit 2.
//! The committed experiments (experiments/*.toml) render to their pages.

mod common;

use std::path::{Path, PathBuf};

use common::{lpgen, refused};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-sweep-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PAGE: &str = "# A small experiment\n\nProse the runner keeps.\n\n<!-- sweep:table t -->\n\
                    <!-- sweep:end -->\n\nMore prose.\n\n<!-- sweep:figure acc -->\n\
                    <!-- sweep:end -->\n";

/// An experiment of two rows at seeds 1 and 2 on 100 bundled images, in `dir`.
fn experiment(dir: &Path) -> PathBuf {
    let data = root().join("data/mnist-300");
    let toml = format!(
        r#"title = "two rows"
page = "small.md"
options = "--dataset {} --hidden 8 --epochs 2 --train-limit 100 --test-limit 50 --threads 1"
seeds = [1, 2]

[evals]
f32 = "--format f32 --dataset {} --train-limit 100 --test-limit 50 --threads 1"

[[rows]]
name = "f32"
options = "--backend f32"
paper = "1.5 %"

[[rows]]
name = "posit8"
options = "--format posit:8:2"

[[tables]]
name = "t"
columns = [
  {{ header = "row", value = "row" }},
  {{ header = "options", value = "options" }},
  {{ header = "paper", value = "paper" }},
  {{ header = "seeds", value = "seeds" }},
  {{ header = "accuracy by epoch", value = "epochs:test_acc" }},
  {{ header = "error", value = "last:test_error" }},
  {{ header = "train loss", value = "last:train_loss", digits = 4 }},
  {{ header = "error by seed", value = "each:test_error", digits = 3 }},
  {{ header = "error / f32", value = "ratio:test_error:f32", digits = 3 }},
  {{ header = "best error", value = "best:test_error" }},
  {{ header = "error in f32", value = "eval:f32:test_error" }},
]

[[figures]]
name = "acc"
title = "accuracy by epoch"
panels = [{{ caption = "both rows", value = "epochs:test_acc" }}, {{ caption = "posit", value = "epochs:train_loss", rows = ["posit8"], log_y = true }}]
"#,
        data.display(),
        data.display()
    );
    let file = dir.join("small.toml");
    std::fs::write(&file, toml).unwrap();
    std::fs::write(dir.join("small.md"), PAGE).unwrap();
    file
}

fn sweep(file: &Path, results: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "sweep",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = lpgen(&args);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn metrics(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The mean over seeds 1 and 2 of `row`'s last test error, in percent.
fn mean_error(results: &Path, row: &str) -> f64 {
    [1, 2]
        .iter()
        .map(|s| {
            let m = metrics(&results.join(format!("{row}-s{s}")));
            50.0 * (1.0 - m.last().unwrap()["test_acc"].as_f64().unwrap())
        })
        .sum()
}

/// `row`'s test error evaluated in f32 (`lpgen eval`, run here), mean ± sd over seeds 1, 2.
fn eval_error(results: &Path, row: &str) -> String {
    let data = root().join("data/mnist-300");
    let errs: Vec<f64> = [1, 2]
        .iter()
        .map(|s| {
            let dir = results.join(format!("{row}-s{s}"));
            let out = lpgen(&[
                "eval",
                "--checkpoint",
                dir.to_str().unwrap(),
                "--format",
                "f32",
                "--dataset",
                data.to_str().unwrap(),
                "--train-limit",
                "100",
                "--test-limit",
                "50",
            ]);
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
            100.0 * (1.0 - v["test_acc"].as_f64().unwrap())
        })
        .collect();
    let mean = (errs[0] + errs[1]) / 2.0;
    let sd = ((errs[0] - mean).powi(2) + (errs[1] - mean).powi(2)).sqrt();
    format!("{mean:.2} ± {sd:.2} %")
}

/// The table line of `row`, computed here from the run directories' metrics.
fn expected_line(results: &Path, row: &str, options: &str, paper: &str) -> String {
    let runs: Vec<Vec<Value>> = [1, 2]
        .iter()
        .map(|s| metrics(&results.join(format!("{row}-s{s}"))))
        .collect();
    let ratio = mean_error(results, row) / mean_error(results, "f32");
    let best = runs
        .iter()
        .map(|r| {
            let acc = r.iter().map(|l| l["test_acc"].as_f64().unwrap());
            100.0 * (1.0 - acc.fold(f64::NEG_INFINITY, f64::max)) / 2.0
        })
        .sum::<f64>();
    let f = |m: &Value, k: &str| m[k].as_f64().unwrap();
    let by_epoch: Vec<String> = (0..2)
        .map(|e| {
            format!(
                "{:.2}",
                50.0 * (f(&runs[0][e], "test_acc") + f(&runs[1][e], "test_acc"))
            )
        })
        .collect();
    let stats = |xs: [f64; 2]| {
        let mean = (xs[0] + xs[1]) / 2.0;
        (
            mean,
            ((xs[0] - mean).powi(2) + (xs[1] - mean).powi(2)).sqrt(),
        )
    };
    let (err, err_sd) = stats([0, 1].map(|i| 100.0 * (1.0 - f(&runs[i][1], "test_acc"))));
    let (loss, loss_sd) = stats([0, 1].map(|i| f(&runs[i][1], "train_loss")));
    let each = [0, 1].map(|i| format!("{:.3}", 100.0 * (1.0 - f(&runs[i][1], "test_acc"))));
    format!(
        "| {row} | `{options}` | {paper} | 2 | {} % | {err:.2} ± {err_sd:.2} % | {loss:.4} ± {loss_sd:.4} | {} % | {ratio:.3} | {best:.2} % | {} |",
        by_epoch.join(", "),
        each.join(", "),
        eval_error(results, row)
    )
}

#[test]
fn the_grid_runs_once_resumes_and_renders_from_its_records() {
    let dir = tmp("grid");
    let file = experiment(&dir);
    let results = dir.join("results");
    let first = sweep(&file, &results, &[]);
    assert!(first.contains("4 runs to do"), "{first}");
    let records_path = dir.join("small.runs.jsonl");
    let records: Vec<Value> = std::fs::read_to_string(&records_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4);
    for r in &records {
        assert!(r["command"]
            .as_str()
            .unwrap()
            .starts_with("lpgen train --dataset"));
        assert!(r["command"]
            .as_str()
            .unwrap()
            .contains(&format!("--seed {}", r["seed"])));
        assert!(r["wall_s"].as_f64().unwrap() >= 0.0);
        // The eval after the run: its command on the run's checkpoint, and its figures.
        let e = &r["evals"]["f32"];
        assert!(e["command"]
            .as_str()
            .unwrap()
            .starts_with("lpgen eval --checkpoint "));
        assert!(e["metrics"]["test_acc"].as_f64().is_some());
        assert_eq!(r["metrics"].as_array().unwrap().len(), 2);
    }
    // The seeds differ, so the sd is not zero and the mean is a mean.
    assert_ne!(
        metrics(&results.join("posit8-s1")),
        metrics(&results.join("posit8-s2"))
    );
    let page = std::fs::read_to_string(dir.join("small.md")).unwrap();
    let lines: Vec<&str> = page.lines().collect();
    assert!(page.starts_with("# A small experiment\n\nProse the runner keeps."));
    assert!(
        page.ends_with(
            "<!-- sweep:end -->\n\nMore prose.\n\n<!-- sweep:figure acc -->\n\
             ![accuracy by epoch](small-acc.png)\n<!-- sweep:end -->\n"
        ),
        "{page}"
    );
    let at = lines.iter().position(|l| l.starts_with("| row |")).unwrap();
    assert_eq!(
        lines[at + 1],
        "| --- | --- | --- | --- | --- | ---: | ---: | --- | --- | --- | ---: |"
    );
    assert_eq!(
        lines[at + 2],
        expected_line(&results, "f32", "--backend f32", "1.5 %")
    );
    assert_eq!(
        lines[at + 3],
        expected_line(&results, "posit8", "--format posit:8:2", "")
    );

    // A rerun runs nothing and changes nothing.
    let again = sweep(&file, &results, &[]);
    assert!(again.contains("0 runs to do"), "{again}");
    assert_eq!(std::fs::read_to_string(dir.join("small.md")).unwrap(), page);
    sweep(&file, &results, &["--check"]);

    // A run whose record is lost (interrupted after training) resumes from its checkpoint:
    // nothing is trained again, and the record is the same run's.
    let kept: Vec<String> = std::fs::read_to_string(&records_path)
        .unwrap()
        .lines()
        .filter(|l| !(l.contains("\"row\":\"posit8\"") && l.contains("\"seed\":2")))
        .map(str::to_string)
        .collect();
    assert_eq!(kept.len(), 3);
    std::fs::write(&records_path, kept.join("\n") + "\n").unwrap();
    let dry = sweep(&file, &results, &["--dry-run"]);
    assert!(
        dry.contains("1 runs to do") && dry.contains("--resume"),
        "{dry}"
    );
    let resumed = sweep(&file, &results, &["--rows", "posit8", "--seeds", "2"]);
    assert!(resumed.contains("1 runs to do"), "{resumed}");
    assert_eq!(std::fs::read_to_string(dir.join("small.md")).unwrap(), page);
    sweep(&file, &results, &["--check"]);

    // A changed row runs again from scratch (not resumed from the old checkpoint), and the
    // page shows the new runs.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "\"--format posit:8:2\"",
            "\"--format posit:8:2 --batch 10\"",
        ),
    )
    .unwrap();
    let dry = sweep(&file, &results, &["--dry-run"]);
    assert!(
        dry.contains("2 runs to do") && !dry.contains("--resume"),
        "{dry}"
    );
    sweep(&file, &results, &[]);
    let page2 = std::fs::read_to_string(dir.join("small.md")).unwrap();
    assert!(
        page2.contains("| posit8 | `--format posit:8:2 --batch 10` |"),
        "{page2}"
    );
    assert_eq!(
        page2.lines().find(|l| l.starts_with("| posit8 |")).unwrap(),
        expected_line(&results, "posit8", "--format posit:8:2 --batch 10", "")
    );

    // An eval added later: every run is to do again, resumed from its finished checkpoint
    // (nothing trained again), to be evaluated.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "[evals]\n",
            "[evals]\nagain = \"--format f32 --test-limit 10\"\n",
        ),
    )
    .unwrap();
    let dry = sweep(&file, &results, &["--dry-run"]);
    assert!(
        dry.contains("4 runs to do")
            && dry.matches("--resume").count() == 4
            && dry.matches("lpgen eval --checkpoint").count() == 8,
        "{dry}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_catches_a_changed_number() {
    let dir = tmp("check");
    let file = experiment(&dir);
    let results = dir.join("results");
    sweep(&file, &results, &[]);
    let page = std::fs::read_to_string(dir.join("small.md")).unwrap();
    let records = std::fs::read_to_string(dir.join("small.runs.jsonl")).unwrap();
    // A figure of the page changed by one unit in its last place.
    let line = page.lines().find(|l| l.starts_with("| f32 |")).unwrap();
    let cells: Vec<&str> = line.split(" | ").collect();
    let loss = cells[6].split(' ').next().unwrap();
    let last = loss.chars().last().unwrap().to_digit(10).unwrap();
    let changed = format!("{}{}", &loss[..loss.len() - 1], (last + 1) % 10);
    std::fs::write(dir.join("small.md"), page.replacen(loss, &changed, 1)).unwrap();
    let out = lpgen(&["sweep", file.to_str().unwrap(), "--check"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("small.md line") && err.contains(&changed),
        "{err}"
    );
    // Restored page, changed record: a run's accuracy moved.
    std::fs::write(dir.join("small.md"), &page).unwrap();
    sweep(&file, &results, &["--check"]);
    // The figure: linked in the page, drawn beside it; a missing drawing is refused.
    assert!(
        page.contains("![accuracy by epoch](small-acc.png)"),
        "{page}"
    );
    let png = std::fs::read(dir.join("small-acc.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 1000);
    std::fs::remove_file(dir.join("small-acc.png")).unwrap();
    refused(
        &["sweep", file.to_str().unwrap(), "--check"],
        "figure \"acc\" has no",
    );
    sweep(&file, &results, &["--render"]);
    sweep(&file, &results, &["--check"]);
    let acc = records.split("\"test_acc\":").nth(1).unwrap();
    let acc = &acc[..acc.find([',', '}']).unwrap()];
    let moved = records.replacen(&format!("\"test_acc\":{acc}"), "\"test_acc\":0.01", 1);
    std::fs::write(dir.join("small.runs.jsonl"), moved).unwrap();
    refused(
        &["sweep", file.to_str().unwrap(), "--check"],
        "small.md line",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_experiments_get_one_line() {
    let dir = tmp("bad");
    let file = experiment(&dir);
    let text = std::fs::read_to_string(&file).unwrap();
    let f = file.to_str().unwrap();
    let with = |edit: &dyn Fn(&str) -> String| std::fs::write(&file, edit(&text)).unwrap();
    with(&|t| t.replace("seeds = [1, 2]", "seeds = [1, 2]\nepochs = 3"));
    refused(&["sweep", f], "unknown field `epochs`");
    with(&|t| t.replace("name = \"posit8\"", "name = \"f32\""));
    refused(&["sweep", f], "row \"f32\" is named twice");
    with(&|t| t.replace("--format posit:8:2", "--format posit:8:2 --seed 3"));
    refused(&["sweep", f], "--seed is the runner's to give");
    with(&|t| t.replace("last:train_loss", "final:train_loss"));
    refused(&["sweep", f], "column value \"final:train_loss\"");
    with(&|t| t.replace("eval:f32:test_error", "eval:lns:test_error"));
    refused(&["sweep", f], "\"lns\" is not one of the evals");
    with(&|t| t.replace("ratio:test_error:f32", "ratio:test_error:f16"));
    refused(&["sweep", f], "\"f16\" is not a row");
    with(&|t| t.replace("ratio:test_error:f32", "ratio:test_error"));
    refused(&["sweep", f], "column value \"ratio:test_error\"");
    with(&|t| {
        t.replace(
            "value = \"epochs:test_acc\" }, {",
            "value = \"last:test_acc\" }, {",
        )
    });
    refused(&["sweep", f], "expected epochs:METRIC");
    with(&|t| t.replace("rows = [\"posit8\"]", "rows = [\"posit16\"]"));
    refused(&["sweep", f], "figure \"acc\" draws row \"posit16\"");
    with(&|t| t.replace("seeds = [1, 2]", "seeds = []"));
    refused(&["sweep", f], "seeds is empty");
    with(&|t| t.to_string());
    refused(
        &["sweep", f, "--rows", "nope", "--dry-run"],
        "\"nope\" is not a row",
    );
    refused(&["sweep", f, "--jobs", "0"], "--jobs 0");
    std::fs::write(dir.join("small.md"), "no markers\n").unwrap();
    refused(
        &["sweep", f, "--render"],
        "no marker <!-- sweep:table t -->",
    );
    refused(
        &["sweep", dir.join("none.toml").to_str().unwrap()],
        "none.toml",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_committed_experiments_render_to_their_pages() {
    let dir = root().join("experiments");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let out = lpgen(&["sweep", path.to_str().unwrap(), "--check"]);
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            n += 1;
        }
    }
    assert!(n >= 1, "no experiments in {}", dir.display());
}
