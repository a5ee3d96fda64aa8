//! The figures of an experiment's page: line charts of its rows' figures by epoch (the mean
//! over seeds, as an `epochs:METRIC` column gives them), drawn from the records alone to
//! `PAGE-NAME.png` beside the page with the training plots' `chart`.

use std::path::{Path, PathBuf};

use lpgen_train::chart::{self, Line, Panel};
use serde_json::Value as Json;

use super::render::{epoch_means, runs_of, Value};
use super::spec::{Experiment, Figure};
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

/// The panels of figure `f`: a line per row that has records, its figure by epoch.
fn panels(exp: &Experiment, f: &Figure, records: &[Json]) -> Result<Vec<Panel>, String> {
    let mut panels = vec![];
    for p in &f.panels {
        let Ok(Value::Epochs(m)) = Value::parse(&p.value) else {
            return Err(format!("{:?} is not epochs:METRIC", p.value));
        };
        let mut lines = vec![];
        for row in &exp.rows {
            if p.rows.as_ref().is_some_and(|r| !r.contains(&row.name)) {
                continue;
            }
            let runs = runs_of(exp, row, records);
            if runs.is_empty() {
                continue;
            }
            let means = epoch_means(&m, row, &runs)?;
            let points = (1..).map(f64::from).zip(means).collect();
            lines.push(Line::new(row.name.clone(), points));
        }
        let mut panel = Panel::new(&p.caption, "epoch", &m.label(), lines);
        panel.log_y = p.log_y;
        panels.push(panel);
    }
    Ok(panels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            let args = exp
                .grid(Path::new(""), Some([row.to_string()].into()), None)
                .unwrap()[seed as usize - 1]
                .args
                .clone();
            let metrics: Vec<Json> = (accs.iter())
                .map(|a| json!({"test_acc": a, "train_loss": 2.0 * a}))
                .collect();
            json!({"row": row, "seed": seed, "args": args, "metrics": metrics})
        };
        let records = vec![
            record("a", 1, [0.5, 0.75]),
            record("a", 2, [0.25, 0.75]),
            record("b", 1, [0.5, 0.5]),
            record("b", 2, [0.5, 1.0]),
        ];
        let panels = panels(&exp, &exp.figures[0], &records).unwrap();
        let lines = |p: &Panel| -> Vec<(String, Vec<(f64, f64)>)> {
            p.lines
                .iter()
                .map(|l| (l.name.clone(), l.points.clone()))
                .collect()
        };
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
}
