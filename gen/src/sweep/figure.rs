//! The figures of an experiment's page: line charts of its rows' figures by epoch (the mean
//! over seeds, as an `epochs:METRIC` column gives them) or of their last-epoch figures against
//! a numeric label (seed 002's figures), drawn from the records alone to `PAGE-NAME.png`
//! beside the page with the training plots' `chart`.

use std::path::{Path, PathBuf};

use lpgen_train::chart::{self, Line, Panel};
use serde_json::Value as Json;

use super::render::{epoch_means, last_mean, runs_of, Value};
use super::spec::{Experiment, Figure, FigurePanel};
use crate::{CliError, CliResult};

/// The file of figure `f` of `page`: `STEM-NAME.png` beside the page.
pub fn path(page: &Path, f: &Figure) -> PathBuf {
    let stem = page.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
    page.with_file_name(format!("{stem}-{}.png", f.name))
}

/// What the page holds for `f`: an image link to its file.
pub fn link(page: &Path, f: &Figure) -> String {
    let file = path(page, f);
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    format!("![{}]({name})", f.title)
}

/// Draws figure `f` from the records (written atomically).
pub fn draw(exp: &Experiment, f: &Figure, records: &[Json], page: &Path) -> CliResult {
    let fail = |what: String| CliError(format!("{}: figure {:?}: {what}", page.display(), f.name));
    let panels = panels(exp, f, records).map_err(fail)?;
    chart::write(&path(page, f), &f.title, &panels).map_err(|e| fail(e.0))
}

/// The panels of figure `f`: by epoch, a line per row that has records; by a label, a line
/// per series of the rows that have records.
fn panels(exp: &Experiment, f: &Figure, records: &[Json]) -> Result<Vec<Panel>, String> {
    let mut panels = vec![];
    for p in &f.panels {
        let mut panel = match p.label_keys()? {
            (None, _) => by_epoch(exp, p, records)?,
            (Some(x), series) => by_label(exp, p, x, series, records)?,
        };
        if let Some(l) = &p.x_label {
            panel.x_label = l.clone();
        }
        panel.log_x = p.log_x;
        panel.log_y = p.log_y;
        panels.push(panel);
    }
    Ok(panels)
}

/// A line per row: its `epochs:METRIC` by epoch.
fn by_epoch(exp: &Experiment, p: &FigurePanel, records: &[Json]) -> Result<Panel, String> {
    let Ok(Value::Epochs(m)) = Value::parse(&p.value) else {
        return Err(format!("{:?} is not epochs:METRIC", p.value));
    };
    let mut lines = vec![];
    for row in exp.select(p.rows.as_deref()) {
        let runs = runs_of(exp, row, records);
        if runs.is_empty() {
            continue;
        }
        let means = epoch_means(&m, row, &runs)?;
        let points = (1..).map(f64::from).zip(means).collect();
        lines.push(Line::new(row.name.clone(), points));
    }
    Ok(Panel::new(&p.caption, "epoch", &m.label(), lines))
}

/// A point per row, at its label `x` and its last-epoch figure, a line per value of its
/// label `series` (one line, the caption's, without).
fn by_label(
    exp: &Experiment,
    p: &FigurePanel,
    x: &str,
    series: Option<&str>,
    records: &[Json],
) -> Result<Panel, String> {
    let value = Value::parse(&p.value)?;
    let y_label = match &value {
        Value::Last(m) => m.label(),
        Value::Ratio(m, base) => {
            let name = m.label().trim_end_matches(" (%)").to_string();
            format!("{name} / {base}'s {name}")
        }
        _ => {
            return Err(format!(
                "{:?} is not last:METRIC or ratio:METRIC:ROW",
                p.value
            ))
        }
    };
    let mut lines: Vec<Line> = vec![];
    for row in exp.select(p.rows.as_deref()) {
        let runs = runs_of(exp, row, records);
        if runs.is_empty() {
            continue;
        }
        let Some(y) = last_mean(exp, &value, row, &runs, records)? else {
            continue;
        };
        let label = |k: &str| {
            row.labels
                .get(k)
                .ok_or_else(|| format!("row {:?} has no label {k:?}", row.name))
        };
        let at = label(x)?
            .parse::<f64>()
            .map_err(|_| format!("row {:?}: label {x:?} is not a number", row.name))?;
        let name = match series {
            Some(k) => label(k)?.clone(),
            None => p.caption.clone(),
        };
        match lines.iter_mut().find(|l| l.name == name) {
            Some(line) => line.points.push((at, y)),
            None => lines.push(Line::new(name, vec![(at, y)])),
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(Panel::new(&p.caption, x, &y_label, lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A record of `row` at `seed` with the grid's arguments and these metrics lines.
    fn record(exp: &Experiment, row: &str, seed: u64, metrics: Vec<Json>) -> Json {
        let grid = exp
            .grid(Path::new(""), Some([row.to_string()].into()), None)
            .unwrap();
        let args = grid.iter().find(|r| r.seed == seed).unwrap().args.clone();
        json!({"row": row, "seed": seed, "args": args, "metrics": metrics})
    }

    /// A panel's lines as (name, points).
    fn lines(p: &Panel) -> Vec<(String, Vec<(f64, f64)>)> {
        (p.lines.iter())
            .map(|l| (l.name.clone(), l.points.clone()))
            .collect()
    }

    /// A panel has a line per row with records (of the rows it names), each point an epoch's
    /// mean over the row's seeds, in percent for an error.
    #[test]
    fn a_panel_draws_each_rows_mean_by_epoch() {
        let exp: Experiment = toml::from_str(
            r#"title = "t"
page = "p.md"
options = "--epochs 2"
seeds = [1, 2]
rows = [{ name = "a" }, { name = "b", options = "--lr 1" }, { name = "c" }]
figures = [{ name = "f", title = "t", panels = [
  { caption = "all", value = "epochs:test_error" },
  { caption = "b", value = "epochs:train_loss", rows = ["b"] },
] }]
"#,
        )
        .unwrap();
        let record = |row: &str, seed: u64, accs: [f64; 2]| {
            let metrics = (accs.iter())
                .map(|a| json!({"test_acc": a, "train_loss": 2.0 * a}))
                .collect();
            record(&exp, row, seed, metrics)
        };
        let records = vec![
            record("a", 1, [0.5, 0.75]),
            record("a", 2, [0.25, 0.75]),
            record("b", 1, [0.5, 0.5]),
            record("b", 2, [0.5, 1.0]),
        ];
        let panels = panels(&exp, &exp.figures[0], &records).unwrap();
        assert_eq!(
            lines(&panels[0]),
            vec![
                ("a".into(), vec![(1.0, 62.5), (2.0, 25.0)]),
                ("b".into(), vec![(1.0, 50.0), (2.0, 25.0)]),
            ]
        );
        assert_eq!(
            lines(&panels[1]),
            vec![("b".into(), vec![(1.0, 1.0), (2.0, 1.5)])]
        );
        assert_eq!(panels[0].y_label, "test error (%)");
    }

    /// A panel by a label: a point per row with records at its label's number and its ratio
    /// to the base row, a line per series, sorted by x.
    #[test]
    fn a_panel_by_label_draws_each_rows_last_figure() {
        let exp: Experiment = toml::from_str(
            r#"title = "t"
page = "p.md"
options = "--epochs 2"
rows = [
  { name = "base", seeds = [1, 2] },
  { name = "d8", labels = { x = "8", s = "dyn" } },
  { name = "d6", labels = { x = "6", s = "dyn" } },
  { name = "f6", labels = { x = "6", s = "fix" } },
  { name = "f7", labels = { x = "7", s = "fix" } },
]
figures = [{ name = "f", title = "t", panels = [
  { caption = "c", value = "ratio:test_error:base", x = "label:x", series = "label:s", rows = ["d*", "f*"], x_label = "bits", log_x = true },
  { caption = "one", value = "last:test_acc", x = "label:x", rows = ["d6"] },
] }]
"#,
        )
        .unwrap();
        let record = |row: &str, seed: u64, accs: [f64; 2]| {
            let metrics = accs.iter().map(|a| json!({ "test_acc": a })).collect();
            record(&exp, row, seed, metrics)
        };
        let records = vec![
            record("base", 1, [0.5, 0.875]),
            record("base", 2, [0.5, 0.625]),
            record("d8", 1, [0.0, 0.75]),
            record("d6", 1, [0.0, 0.5]),
            record("f6", 1, [0.0, 0.0]),
        ];
        let panels = panels(&exp, &exp.figures[0], &records).unwrap();
        // The base's error is 25 %: d8's 25 % is 1, d6's 50 % is 2, f6's 100 % is 4.
        assert_eq!(
            lines(&panels[0]),
            vec![
                ("dyn".into(), vec![(6.0, 2.0), (8.0, 1.0)]),
                ("fix".into(), vec![(6.0, 4.0)]),
            ]
        );
        assert_eq!(
            (panels[0].x_label.as_str(), panels[0].y_label.as_str()),
            ("bits", "test error / base's test error")
        );
        assert!(panels[0].log_x && !panels[0].log_y);
        assert_eq!(lines(&panels[1]), vec![("one".into(), vec![(6.0, 50.0)])]);
        assert_eq!(panels[1].x_label, "x");
    }
}
