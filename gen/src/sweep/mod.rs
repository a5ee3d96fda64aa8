//! `lpgen sweep experiments/NAME.toml`: an experiment as data. The file names the options
//! every run shares, the rows (each a set of `lpgen train` options), the seeds and the
//! tables of the results page; the runner runs the grid (rows × seeds) that has no record
//! yet, resumes an interrupted run from its checkpoint, appends one record per finished run
//! (its command, wall time and metrics) to `NAME.runs.jsonl` beside the file, and renders the
//! tables into the page from the records alone (`render.rs`). docs/experiments.md.

mod figure;
mod render;
mod spec;

use std::collections::{BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use clap::Args;
use serde_json::{json, Value};

use crate::{emit, CliError, CliResult};
pub use spec::Experiment;

#[derive(Args)]
pub struct SweepArgs {
    /// The experiment file (experiments/NAME.toml)
    experiment: PathBuf,
    /// Only these rows (names, comma-separated); the page still shows every row with records
    #[arg(long)]
    rows: Option<String>,
    /// Only these of the experiment's seeds (comma-separated)
    #[arg(long)]
    seeds: Option<String>,
    /// Runs at a time
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Print the commands of the runs that have no record, and run nothing
    #[arg(long)]
    dry_run: bool,
    /// Render the page from the records only, and run nothing
    #[arg(long)]
    render: bool,
    /// Compare the page's tables with their rendering from the records, and write nothing:
    /// one line and exit status 2 when they differ
    #[arg(long)]
    check: bool,
    /// Where the run directories go (default: results/NAME, from the current directory)
    #[arg(long)]
    results: Option<PathBuf>,
}

/// One run of the grid: a row at a seed.
#[derive(Clone, Debug)]
struct Run {
    row: String,
    seed: u64,
    /// `lpgen train`'s arguments as the experiment gives them (`{datasets}` unexpanded): a
    /// record counts for the run only if it holds the same.
    args: String,
    dir: PathBuf,
    /// Recorded before with other options: the directory is cleared first.
    fresh: bool,
}

pub fn run(a: &SweepArgs, out: &mut dyn Write) -> CliResult {
    let exp = Experiment::load(&a.experiment)?;
    let records_path = exp.records_path(&a.experiment);
    let page_path = exp.page_path(&a.experiment);
    if a.check {
        let records = read_records(&records_path)?;
        render::check(&exp, &records, &page_path)?;
        return emit(
            out,
            &format!("{}: the page matches its records", page_path.display()),
        );
    }
    if !a.render {
        if a.jobs == 0 || a.jobs > 64 {
            return Err(CliError(format!("--jobs {}: give 1..=64", a.jobs)));
        }
        let results = a
            .results
            .clone()
            .unwrap_or_else(|| Path::new("results").join(&exp.name));
        let runs = exp.grid(
            &results,
            list(a.rows.as_deref(), "--rows")?,
            list(a.seeds.as_deref(), "--seeds")?,
        )?;
        let records = read_records(&records_path)?;
        let mut todo: Vec<Run> = runs
            .into_iter()
            .filter(|r| !has_record(&exp, &records, r))
            .collect();
        // A run whose last record has other options (the row changed) starts over: its
        // directory holds that run's checkpoint, which `--resume` must not continue. One
        // whose last record has the same options but other evals resumes (a finished run
        // trains no more) and is evaluated.
        for r in &mut todo {
            let last = records
                .iter()
                .rev()
                .find(|v| v["row"] == r.row.as_str() && v["seed"] == r.seed);
            r.fresh = last.is_some_and(|v| v["args"] != r.args.as_str());
        }
        emit(
            out,
            &format!(
                "sweep {} ({}): {} runs to do",
                exp.name,
                exp.title,
                todo.len()
            ),
        )?;
        if a.dry_run {
            for r in &todo {
                emit(out, &command_line(&train_args(r)))?;
                for args in exp.evals.values() {
                    let at = format!("eval --checkpoint {}", r.dir.display());
                    emit(out, &command_line(&[at, expand(args).join(" ")]))?;
                }
            }
            return Ok(());
        }
        execute(&exp, todo, a.jobs, &records_path, out)?;
    }
    let records = read_records(&records_path)?;
    render::write(&exp, &records, &page_path)?;
    emit(out, &format!("{}: rendered", page_path.display()))
}

/// A comma-separated list of an option, or none.
fn list(s: Option<&str>, option: &str) -> CliResult<Option<BTreeSet<String>>> {
    let Some(s) = s else { return Ok(None) };
    let items: BTreeSet<String> = s
        .split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect();
    if items.is_empty() {
        return Err(CliError(format!(
            "{option} {s:?}: give a comma-separated list"
        )));
    }
    Ok(Some(items))
}

/// The records of `path`, one JSON object a line (none if the file does not exist).
pub(crate) fn read_records(path: &Path) -> CliResult<Vec<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(CliError(format!("{}: {e}", path.display()))),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l).map_err(|e| {
                CliError(format!(
                    "{} line {}: not a record: {e}",
                    path.display(),
                    i + 1
                ))
            })?;
            let ok = v["row"].is_string() && v["seed"].is_u64() && v["metrics"].is_array();
            if !ok {
                return Err(CliError(format!(
                    "{} line {}: a record needs row, seed and metrics",
                    path.display(),
                    i + 1
                )));
            }
            Ok(v)
        })
        .collect()
}

fn has_record(exp: &Experiment, records: &[Value], r: &Run) -> bool {
    records.iter().any(|v| {
        v["row"] == r.row.as_str()
            && v["seed"] == r.seed
            && v["args"] == r.args.as_str()
            && exp
                .evals
                .iter()
                .all(|(name, args)| v["evals"][name]["args"] == args.as_str())
    })
}

/// `{datasets}` of an experiment's options: `$LPGEN_DATASETS`, or `../shared/datasets`.
fn expand(args: &str) -> Vec<String> {
    let datasets =
        std::env::var("LPGEN_DATASETS").unwrap_or_else(|_| "../shared/datasets".to_string());
    args.replace("{datasets}", &datasets)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `lpgen train`'s argument words for run `r`, `{datasets}` expanded, `--resume` when its
/// directory holds a checkpoint.
fn train_args(r: &Run) -> Vec<String> {
    let mut words = vec!["train".to_string()];
    words.extend(expand(&r.args));
    words.extend(["--out".to_string(), r.dir.display().to_string()]);
    if !r.fresh && r.dir.join("checkpoint.lpck").is_file() {
        words.push("--resume".into());
    }
    words
}

fn command_line(words: &[String]) -> String {
    std::iter::once("lpgen")
        .chain(words.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `todo`, `jobs` at a time, appending each finished run's record; a failed run is
/// reported and the others go on (an error at the end names the failures).
fn execute(
    exp: &Experiment,
    todo: Vec<Run>,
    jobs: usize,
    records_path: &Path,
    out: &mut dyn Write,
) -> CliResult {
    let lpgen = std::env::current_exe()?;
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<Run>>());
    type Done = (f64, Vec<Value>, Value);
    let (send, done) = mpsc::channel::<(Run, Vec<String>, Result<Done, String>)>();
    let mut failed = vec![];
    std::thread::scope(|s| -> CliResult {
        for _ in 0..jobs {
            let send = send.clone();
            let (queue, lpgen) = (&queue, &lpgen);
            s.spawn(move || loop {
                let Some(r) = queue.lock().expect("queue").pop_front() else {
                    break;
                };
                let words = train_args(&r);
                let result = if r.fresh {
                    std::fs::remove_dir_all(&r.dir)
                        .or_else(|e| match e.kind() {
                            std::io::ErrorKind::NotFound => Ok(()),
                            _ => Err(e),
                        })
                        .map_err(|e| format!("{}: {e}", r.dir.display()))
                        .and_then(|()| train(lpgen, &words, &r.dir))
                } else {
                    train(lpgen, &words, &r.dir)
                };
                let result = result.and_then(|(seconds, metrics)| {
                    Ok((seconds, metrics, evaluate(lpgen, exp, &r.dir)?))
                });
                if send.send((r, words, result)).is_err() {
                    break;
                }
            });
        }
        drop(send);
        for (r, words, result) in done {
            match result {
                Ok((seconds, metrics, evals)) => {
                    let mut record = json!({
                        "row": r.row, "seed": r.seed, "args": r.args,
                        "command": command_line(&words), "wall_s": (seconds * 10.0).round() / 10.0,
                        "metrics": metrics,
                    });
                    if !exp.evals.is_empty() {
                        record["evals"] = evals;
                    }
                    append_record(records_path, &record)?;
                    emit(
                        out,
                        &format!("done {} seed {} in {seconds:.1} s", r.row, r.seed),
                    )?;
                }
                Err(e) => {
                    emit(out, &format!("FAILED {} seed {}: {e}", r.row, r.seed))?;
                    failed.push(format!("{} seed {}", r.row, r.seed));
                }
            }
        }
        Ok(())
    })?;
    if !failed.is_empty() {
        return Err(CliError(format!(
            "sweep {}: {} runs failed ({}); their logs are train.log in their directories",
            exp.name,
            failed.len(),
            failed.join(", ")
        )));
    }
    Ok(())
}

/// One `lpgen train` run; its wall time and the metrics it wrote, one object an epoch.
fn train(lpgen: &Path, words: &[String], dir: &Path) -> Result<(f64, Vec<Value>), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = std::fs::File::create(dir.join("train.log")).map_err(|e| e.to_string())?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = std::process::Command::new(lpgen)
        .args(words)
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    if !status.success() {
        let log = std::fs::read_to_string(dir.join("train.log")).unwrap_or_default();
        let last = log.lines().last().unwrap_or("no output").to_string();
        return Err(format!("{status}: {last}"));
    }
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).map_err(|e| e.to_string())?;
    let metrics = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| e.to_string()))
        .collect::<Result<Vec<Value>, String>>()?;
    Ok((seconds, metrics))
}

/// The experiment's evals of the run in `dir`, by name: each `lpgen eval` command's options,
/// command line and the figures of its last output line (a JSON object).
fn evaluate(lpgen: &Path, exp: &Experiment, dir: &Path) -> Result<Value, String> {
    let mut evals = serde_json::Map::new();
    for (name, args) in &exp.evals {
        let mut words = vec![
            "eval".to_string(),
            "--checkpoint".to_string(),
            dir.display().to_string(),
        ];
        words.extend(expand(args));
        let out = std::process::Command::new(lpgen)
            .args(&words)
            .output()
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "eval {name}: {}",
                err.lines().last().unwrap_or("failed")
            ));
        }
        let line = stdout.lines().last().unwrap_or_default();
        let metrics: Value = serde_json::from_str(line)
            .map_err(|e| format!("eval {name}: its last line is not a JSON object: {e}"))?;
        evals.insert(
            name.clone(),
            json!({"args": args, "command": command_line(&words), "metrics": metrics}),
        );
    }
    Ok(Value::Object(evals))
}

/// Appends a record: the whole file written anew, atomically, so that an interrupted sweep
/// leaves every finished run's record whole.
fn append_record(path: &Path, record: &Value) -> CliResult {
    let mut text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CliError(format!("{}: {e}", path.display()))),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(record)?);
    text.push('\n');
    lpgen_tempfiles::write_atomic(path, text.as_bytes())
        .map_err(|e| CliError(format!("{}: {e}", path.display())))
}
