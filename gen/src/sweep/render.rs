//! The tables of an experiment's page, rendered from its records alone: each between
//! `<!-- sweep:table NAME -->` and `<!-- sweep:end -->` in the page (a figure's link between
//! `<!-- sweep:figure NAME -->` and the end marker), the rest of the page the author's. `--check` renders and compares, so that a number changed in the page or in
//! the records is caught.

use std::path::Path;

use serde_json::Value as Json;

use super::figure;
use super::spec::{Column, Experiment, Row, Table};
use crate::{CliError, CliResult};

/// What a column's cell holds (`Column::value`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Row,
    Options,
    Paper,
    Seeds,
    Label(String),
    /// Every epoch's figure, the mean over seeds.
    Epochs(Metric),
    /// The last epoch's figure, mean ± sd over seeds.
    Last(Metric),
    /// The last epoch's figure of each seed, in seed order.
    Each(Metric),
    /// Each run's best epoch (the highest accuracy; the lowest error or other figure), the
    /// mean over seeds (seed 003 reports best errors).
    Best(Metric),
    /// An eval's figure (`evals` of the experiment: `lpgen eval` after each run), mean ± sd
    /// over seeds.
    Eval(String, Metric),
    /// The last epoch's figure, its mean over seeds divided by that of another row (seed
    /// 002's "normalized test error": `ratio:test_error:f32`).
    Ratio(Metric, String),
}

/// A figure of the metrics' lines.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// `test_acc` (or any `*_acc` field) in percent.
    Percent(String),
    /// `test_error`: 100 · (1 − test_acc).
    Error,
    Plain(String),
}

impl Value {
    pub fn parse(s: &str) -> Result<Value, String> {
        let metric = |m: &str| -> Result<Metric, String> {
            let ok = !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(format!("{s:?}: {m:?} is not a metrics field"));
            }
            Ok(match m {
                "test_error" => Metric::Error,
                m if m.ends_with("_acc") => Metric::Percent(m.to_string()),
                m => Metric::Plain(m.to_string()),
            })
        };
        Ok(match s.split_once(':') {
            None => match s {
                "row" => Value::Row,
                "options" => Value::Options,
                "paper" => Value::Paper,
                "seeds" => Value::Seeds,
                _ => return Err(unknown(s)),
            },
            Some(("label", k)) if !k.is_empty() => Value::Label(k.to_string()),
            Some(("epochs", m)) => Value::Epochs(metric(m)?),
            Some(("last", m)) => Value::Last(metric(m)?),
            Some(("each", m)) => Value::Each(metric(m)?),
            Some(("best", m)) => Value::Best(metric(m)?),
            Some(("eval", rest)) => match rest.split_once(':') {
                Some((name, m)) if !name.is_empty() => Value::Eval(name.to_string(), metric(m)?),
                _ => return Err(unknown(s)),
            },
            Some(("ratio", rest)) => match rest.split_once(':') {
                Some((m, row)) if !row.is_empty() => Value::Ratio(metric(m)?, row.to_string()),
                _ => return Err(unknown(s)),
            },
            Some(_) => return Err(unknown(s)),
        })
    }
}

fn unknown(s: &str) -> String {
    format!(
        "column value {s:?}: expected row, options, paper, seeds, label:KEY, epochs:METRIC, \
         last:METRIC, each:METRIC, best:METRIC, eval:NAME:METRIC or ratio:METRIC:ROW"
    )
}

impl Metric {
    /// Whether a higher figure is the better (accuracies).
    fn higher_is_better(&self) -> bool {
        matches!(self, Metric::Percent(_))
    }

    /// The figure of one metrics line, in the unit it prints in.
    fn of(&self, line: &Json) -> Option<f64> {
        match self {
            Metric::Percent(f) => line[f].as_f64().map(|x| 100.0 * x),
            Metric::Error => line["test_acc"].as_f64().map(|x| 100.0 * (1.0 - x)),
            Metric::Plain(f) => line[f].as_f64(),
        }
    }

    fn percent(&self) -> bool {
        !matches!(self, Metric::Plain(_))
    }

    /// The figure's name on an axis.
    pub(super) fn label(&self) -> String {
        match self {
            Metric::Percent(f) => format!("{f} (%)"),
            Metric::Error => "test error (%)".into(),
            Metric::Plain(f) => f.clone(),
        }
    }
}

/// The records of `row` that the experiment's grid has now (same arguments), the last one
/// for each seed, in seed order.
pub(super) fn runs_of<'a>(exp: &Experiment, row: &Row, records: &'a [Json]) -> Vec<&'a Json> {
    let grid = exp
        .grid(Path::new(""), Some([row.name.clone()].into()), None)
        .unwrap_or_default();
    grid.iter()
        .filter_map(|run| {
            records.iter().rev().find(|v| {
                v["row"] == run.row.as_str()
                    && v["seed"] == run.seed
                    && v["args"] == run.args.as_str()
            })
        })
        .collect()
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// The last epoch's figure of each run.
fn last_figures(m: &Metric, row: &Row, runs: &[&Json]) -> Result<Vec<f64>, String> {
    runs.iter()
        .map(|r| {
            let ms = r["metrics"].as_array().cloned().unwrap_or_default();
            let last = ms
                .last()
                .ok_or_else(|| format!("row {:?}: a record has no epochs", row.name))?;
            m.of(last)
                .ok_or_else(|| format!("row {:?}: a record lacks {m:?}", row.name))
        })
        .collect()
}

/// Each epoch's figure, the mean over the runs, for the epochs every run has.
pub(super) fn epoch_means(m: &Metric, row: &Row, runs: &[&Json]) -> Result<Vec<f64>, String> {
    let metrics = |r: &Json| r["metrics"].as_array().cloned().unwrap_or_default();
    let epochs = runs.iter().map(|r| metrics(r).len()).min().unwrap_or(0);
    (0..epochs)
        .map(|e| {
            let xs = (runs.iter())
                .map(|r| {
                    m.of(&metrics(r)[e])
                        .ok_or_else(|| format!("row {:?}: a record lacks {m:?}", row.name))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            Ok(mean_sd(&xs).0)
        })
        .collect()
}

/// A cell; `base` is the mean a `ratio:` column divides by (`None`: its row has no runs).
fn cell(
    c: &Column,
    value: &Value,
    row: &Row,
    runs: &[&Json],
    base: Option<f64>,
) -> Result<String, String> {
    let metrics = |r: &Json| r["metrics"].as_array().cloned().unwrap_or_default();
    let figure = |m: &Metric, line: &Json| {
        m.of(line)
            .ok_or_else(|| format!("row {:?}: a record lacks {m:?}", row.name))
    };
    let digits = |m: &Metric| c.digits.unwrap_or(if m.percent() { 2 } else { 3 });
    let unit = |m: &Metric| if m.percent() { " %" } else { "" };
    // Mean ± sd over seeds (sample sd), or the figure alone for one seed.
    let summary = |m: &Metric, xs: &[f64]| {
        let ((mean, sd), d) = (mean_sd(xs), digits(m));
        match xs.len() {
            1 => format!("{mean:.d$}{}", unit(m)),
            _ => format!("{mean:.d$} ± {sd:.d$}{}", unit(m)),
        }
    };
    Ok(match value {
        Value::Row => row.name.clone(),
        Value::Options if row.options.is_empty() => String::new(),
        Value::Options => format!("`{}`", row.options),
        Value::Paper => row.paper.clone().unwrap_or_default(),
        Value::Seeds => runs.len().to_string(),
        Value::Label(k) => row
            .labels
            .get(k)
            .cloned()
            .ok_or_else(|| format!("row {:?} has no label {k:?}", row.name))?,
        Value::Eval(name, m) => {
            let xs: Option<Vec<f64>> = runs
                .iter()
                .map(|r| m.of(&r["evals"][name]["metrics"]))
                .collect();
            match xs {
                Some(xs) if !xs.is_empty() => summary(m, &xs),
                _ => String::new(),
            }
        }
        // A field no run has (the plain run's bytes exchanged): an empty cell.
        Value::Ratio(m, _) => match base {
            Some(b) => {
                let xs = last_figures(m, row, runs)?;
                format!("{:.*}", c.digits.unwrap_or(2), mean_sd(&xs).0 / b)
            }
            None => String::new(),
        },
        Value::Last(m) | Value::Epochs(m) | Value::Each(m) | Value::Best(m)
            if runs
                .iter()
                .all(|r| metrics(r).iter().all(|l| m.of(l).is_none())) =>
        {
            String::new()
        }
        Value::Epochs(m) => {
            let figs: Vec<String> = (epoch_means(m, row, runs)?.iter())
                .map(|x| format!("{x:.*}", digits(m)))
                .collect();
            format!("{}{}", figs.join(", "), unit(m))
        }
        Value::Best(m) => {
            let mut bests = vec![];
            for r in runs {
                let xs = metrics(r)
                    .iter()
                    .map(|l| figure(m, l))
                    .collect::<Result<Vec<f64>, String>>()?;
                let best = if m.higher_is_better() {
                    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                } else {
                    xs.iter().copied().fold(f64::INFINITY, f64::min)
                };
                bests.push(best);
            }
            format!("{:.*}{}", digits(m), mean_sd(&bests).0, unit(m))
        }
        Value::Each(m) => {
            let d = digits(m);
            let each: Vec<String> = last_figures(m, row, runs)?
                .iter()
                .map(|x| format!("{x:.d$}"))
                .collect();
            format!("{}{}", each.join(", "), unit(m))
        }
        Value::Last(m) => summary(m, &last_figures(m, row, runs)?),
    })
}

/// A row's last-epoch figure as a point of a figure: `last:METRIC`'s mean over seeds, or
/// `ratio:METRIC:ROW`'s quotient (`None`: the base row has no runs yet).
pub(super) fn last_mean(
    exp: &Experiment,
    v: &Value,
    row: &Row,
    runs: &[&Json],
    records: &[Json],
) -> Result<Option<f64>, String> {
    Ok(match v {
        Value::Last(m) => Some(mean_sd(&last_figures(m, row, runs)?).0),
        Value::Ratio(m, _) => match base_mean(exp, v, records)? {
            Some(b) => Some(mean_sd(&last_figures(m, row, runs)?).0 / b),
            None => None,
        },
        _ => return Err(format!("{v:?} is not a last-epoch figure")),
    })
}

/// The mean over seeds of the last figure of a `ratio:` column's base row (`None`: not a
/// ratio, or the base row has no runs yet).
fn base_mean(exp: &Experiment, v: &Value, records: &[Json]) -> Result<Option<f64>, String> {
    let Value::Ratio(m, name) = v else {
        return Ok(None);
    };
    let row = exp
        .rows
        .iter()
        .find(|r| &r.name == name)
        .ok_or_else(|| format!("ratio: {name:?} is not a row"))?;
    let runs = runs_of(exp, row, records);
    if runs.is_empty() {
        return Ok(None);
    }
    Ok(Some(mean_sd(&last_figures(m, row, &runs)?).0))
}

/// The markdown lines of table `t`: the rows with records, in the table's order.
pub fn table(exp: &Experiment, t: &Table, records: &[Json]) -> Result<String, String> {
    let values: Vec<Value> = t
        .columns
        .iter()
        .map(|c| Value::parse(&c.value))
        .collect::<Result<_, _>>()?;
    let mut lines = vec![
        format!(
            "| {} |",
            t.columns
                .iter()
                .map(|c| c.header.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        format!(
            "| {} |",
            t.columns
                .iter()
                .zip(&values)
                .map(|(c, v)| {
                    let right = match c.align.as_deref() {
                        Some(a) => a == "right",
                        None => matches!(v, Value::Last(_) | Value::Eval(..)),
                    };
                    if right {
                        "---:"
                    } else {
                        "---"
                    }
                })
                .collect::<Vec<_>>()
                .join(" | ")
        ),
    ];
    for row in exp.select(t.rows.as_deref()) {
        let runs = runs_of(exp, row, records);
        if runs.is_empty() {
            continue;
        }
        let cells = t
            .columns
            .iter()
            .zip(&values)
            .map(|(c, v)| cell(c, v, row, &runs, base_mean(exp, v, records)?))
            .collect::<Result<Vec<_>, _>>()?;
        lines.push(format!("| {} |", cells.join(" | ")));
    }
    Ok(lines.join("\n"))
}

fn marker(name: &str) -> String {
    format!("<!-- sweep:table {name} -->")
}
const END: &str = "<!-- sweep:end -->";

/// The page with every table and figure link rendered in place.
fn rendered(exp: &Experiment, records: &[Json], page: &Path, text: &str) -> CliResult<String> {
    let mut text = text.to_string();
    for t in &exp.tables {
        let fail =
            |what: String| CliError(format!("{}: table {:?}: {what}", page.display(), t.name));
        let table = table(exp, t, records).map_err(fail)?;
        replace_section(&mut text, &marker(&t.name), &table).map_err(fail)?;
    }
    for f in &exp.figures {
        let fail =
            |what: String| CliError(format!("{}: figure {:?}: {what}", page.display(), f.name));
        let open = format!("<!-- sweep:figure {} -->", f.name);
        replace_section(&mut text, &open, &figure::link(page, f)).map_err(fail)?;
    }
    Ok(text)
}

/// Replaces what lies between the marker `open` and the next end marker with `body`.
fn replace_section(text: &mut String, open: &str, body: &str) -> Result<(), String> {
    let start = text
        .find(open)
        .ok_or_else(|| format!("no marker {open} (and {END} after it) in the page"))?;
    let from = start + open.len();
    let to = from
        + text[from..]
            .find(END)
            .ok_or_else(|| format!("no {END} after its marker"))?;
    text.replace_range(from..to, &format!("\n{body}\n"));
    Ok(())
}

fn read_page(page: &Path) -> CliResult<String> {
    std::fs::read_to_string(page).map_err(|e| CliError(format!("{}: {e}", page.display())))
}

/// Renders the tables into the page (written atomically).
pub fn write(exp: &Experiment, records: &[Json], page: &Path) -> CliResult {
    let text = read_page(page)?;
    let new = rendered(exp, records, page, &text)?;
    for f in &exp.figures {
        figure::draw(exp, f, records, page)?;
    }
    if new != text {
        lpgen_tempfiles::write_atomic(page, new.as_bytes())
            .map_err(|e| CliError(format!("{}: {e}", page.display())))?;
    }
    Ok(())
}

/// The page's tables against their rendering: an error naming the first differing line.
pub fn check(exp: &Experiment, records: &[Json], page: &Path) -> CliResult {
    let text = read_page(page)?;
    let new = rendered(exp, records, page, &text)?;
    if let Some((i, (a, b))) = text
        .lines()
        .zip(new.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        return Err(CliError(format!(
            "{} line {}: the page has {a:?} where its records render {b:?} (lpgen sweep --render)",
            page.display(),
            i + 1
        )));
    }
    if text != new {
        return Err(CliError(format!(
            "{}: the page's tables differ in length from their records' rendering (lpgen sweep --render)",
            page.display()
        )));
    }
    // The figures' files are drawn by --render; their pixels are not compared.
    for f in &exp.figures {
        let file = figure::path(page, f);
        if !file.is_file() {
            return Err(CliError(format!(
                "{}: figure {:?} has no {} (lpgen sweep --render)",
                page.display(),
                f.name,
                file.display()
            )));
        }
    }
    Ok(())
}
