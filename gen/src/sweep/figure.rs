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

/// Draws figure `f` from the records (written atomically); a row without records has no
/// line.
pub fn draw(exp: &Experiment, f: &Figure, records: &[Json], page: &Path) -> CliResult {
    let fail = |what: String| CliError(format!("{}: figure {:?}: {what}", page.display(), f.name));
    let mut panels = vec![];
    for p in &f.panels {
        let Ok(Value::Epochs(m)) = Value::parse(&p.value) else {
            return Err(fail(format!("{:?} is not epochs:METRIC", p.value)));
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
            let means = epoch_means(&m, row, &runs).map_err(fail)?;
            let points = (1..).map(f64::from).zip(means).collect();
            lines.push(Line::new(row.name.clone(), points));
        }
        let mut panel = Panel::new(&p.caption, "epoch", &m.label(), lines);
        panel.log_y = p.log_y;
        panels.push(panel);
    }
    chart::write(&path(page, f), &f.title, &panels).map_err(|e| fail(e.0))
}
