//! The experiment file of `lpgen sweep` (TOML), read and checked: every field known, every
//! row and table named once, every column's value one the renderer knows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::render::Value;
use super::Run;
use crate::{CliError, CliResult};

/// An experiment: shared options, rows, seeds and the tables of its page.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// The file's stem (set on load): names the records and the results directory.
    #[serde(skip)]
    pub name: String,
    /// What the experiment asks, one line (the page's title is the page's own).
    pub title: String,
    /// The results page, relative to the experiment file.
    pub page: PathBuf,
    /// `lpgen train` options every run shares; `{datasets}` stands for `$LPGEN_DATASETS`
    /// (default `../shared/datasets`).
    pub options: String,
    /// The seeds every row runs at (`--seed`), unless a row names its own.
    #[serde(default = "one_seed")]
    pub seeds: Vec<u64>,
    pub rows: Vec<Row>,
    /// `lpgen eval` after each run, by name: its options (`--checkpoint` is the run's;
    /// `{datasets}` as above), e.g. the network evaluated in another arithmetic.
    #[serde(default)]
    pub evals: BTreeMap<String, String>,
    #[serde(default)]
    pub tables: Vec<Table>,
    #[serde(default)]
    pub figures: Vec<Figure>,
}

fn one_seed() -> Vec<u64> {
    vec![1]
}

/// A row of the grid: its options beside the shared ones.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub name: String,
    #[serde(default)]
    pub options: String,
    /// The paper's figure for this row, as the page shows it (it lives here, with the
    /// experiment, not in the program).
    #[serde(default)]
    pub paper: Option<String>,
    /// Text columns of the tables (`label:KEY`).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Seeds of this row, instead of the experiment's.
    #[serde(default)]
    pub seeds: Option<Vec<u64>>,
}

/// A table of the page, rendered between `<!-- sweep:table NAME -->` and `<!-- sweep:end -->`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// The rows it shows, in order (default: every row); a name ending in `*` stands for
    /// every row whose name begins with the rest, in file order.
    #[serde(default)]
    pub rows: Option<Vec<String>>,
}

/// A figure of the page: line charts drawn to `PAGE-NAME.png` beside the page and linked
/// between `<!-- sweep:figure NAME -->` and `<!-- sweep:end -->`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub name: String,
    /// The chart's title and the link's text.
    pub title: String,
    /// Drawn side by side.
    pub panels: Vec<FigurePanel>,
}

/// One panel. By epoch (no `x`): a line per row, its `epochs:METRIC` (the mean over seeds)
/// by epoch. By a label (`x = "label:KEY"`): each row is one point, at x its label KEY (a
/// number) and at y its `last:METRIC` or `ratio:METRIC:ROW` (the last epoch's mean over
/// seeds), joined into a line per value of the label `series` (seed 002's figures).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct FigurePanel {
    pub caption: String,
    pub value: String,
    /// The rows it draws (default: every row); a name ending in `*` stands for every row
    /// whose name begins with the rest.
    #[serde(default)]
    pub rows: Option<Vec<String>>,
    /// `label:KEY`: the rows' label KEY is the x axis.
    #[serde(default)]
    pub x: Option<String>,
    /// `label:KEY` (with `x`): a line per value of the rows' label KEY, in row order.
    #[serde(default)]
    pub series: Option<String>,
    /// The x axis' name (default: `epoch`, or the key of `x`).
    #[serde(default)]
    pub x_label: Option<String>,
    /// A logarithmic x axis.
    #[serde(default)]
    pub log_x: bool,
    /// A logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
}

impl FigurePanel {
    /// The label keys of `x` and `series` (`None`: the panel is by epoch, or has one line).
    pub fn label_keys(&self) -> Result<(Option<&str>, Option<&str>), String> {
        fn key<'a>(what: &str, v: Option<&'a str>) -> Result<Option<&'a str>, String> {
            match v {
                None => Ok(None),
                Some(v) => match v.strip_prefix("label:") {
                    Some(k) if !k.is_empty() => Ok(Some(k)),
                    _ => Err(format!("{what} {v:?}: expected label:KEY")),
                },
            }
        }
        let x = key("x", self.x.as_deref())?;
        let series = key("series", self.series.as_deref())?;
        if x.is_none() && series.is_some() {
            return Err("series needs x = \"label:KEY\"".into());
        }
        Ok((x, series))
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Column {
    pub header: String,
    /// What the cell holds: `row`, `options`, `paper`, `seeds`, `label:KEY`,
    /// `epochs:METRIC` (every epoch, mean over seeds) or `last:METRIC` (the last epoch, mean
    /// ± sd over seeds), `each:METRIC` (the last epoch of each seed), `best:METRIC` (each run's best epoch, the
    /// mean over seeds), `eval:NAME:METRIC` (the eval NAME's figure, mean ± sd over seeds) or
    /// `ratio:METRIC:ROW` (the
    /// last epoch's mean over seeds divided by ROW's); METRIC is a field of the run's metrics (`test_acc`, `train_loss`,
    /// …) or `test_error` (1 − test_acc); accuracies and errors print in percent.
    pub value: String,
    /// Decimals (default: 2 for percentages, 3 otherwise).
    #[serde(default)]
    pub digits: Option<usize>,
    /// `left` or `right` (default: right for `last:`, left otherwise).
    #[serde(default)]
    pub align: Option<String>,
}

/// Checks that `name` (a `kind`'s: row, figure) is made of letters, digits and the characters
/// of `extra`, and that it is not in `seen`; then adds it there.
fn new_name<'a>(
    file: &Path,
    kind: &str,
    name: &'a str,
    extra: &str,
    seen: &mut BTreeSet<&'a str>,
) -> CliResult {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    {
        let chars: Vec<String> = extra.chars().map(String::from).collect();
        let what = format!(
            "{kind} name {name:?}: use letters, digits, {}",
            chars.join(" ")
        );
        return Err(bad(file, what));
    }
    if !seen.insert(name) {
        return Err(bad(file, format!("{kind} {name:?} is named twice")));
    }
    Ok(())
}

fn bad(file: &Path, what: String) -> CliError {
    CliError(format!("{}: {what}", file.display()))
}

impl Experiment {
    /// Reads and checks `file`.
    pub fn load(file: &Path) -> CliResult<Experiment> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| CliError(format!("{}: {e}", file.display())))?;
        let mut exp: Experiment = toml::from_str(&text).map_err(|e| {
            let first = e.message().lines().next().unwrap_or("invalid").to_string();
            let at = e
                .span()
                .map(|s| format!(" (line {})", text[..s.start].lines().count().max(1)))
                .unwrap_or_default();
            bad(file, format!("{first}{at}"))
        })?;
        exp.name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(file, "the file needs a name".into()))?
            .to_string();
        exp.check(file)?;
        Ok(exp)
    }

    fn check(&self, file: &Path) -> CliResult {
        if self.rows.is_empty() {
            return Err(bad(file, "no rows: give at least one [[rows]]".into()));
        }
        if self.seeds.is_empty() {
            return Err(bad(file, "seeds is empty".into()));
        }
        let mut names = BTreeSet::new();
        for r in &self.rows {
            new_name(file, "row", &r.name, "-_.", &mut names)?;
            if r.seeds.as_ref().unwrap_or(&self.seeds).is_empty() {
                return Err(bad(file, format!("row {:?} has no seeds", r.name)));
            }
            for word in r.options.split_whitespace() {
                if ["--out", "--seed", "--resume"].contains(&word) {
                    return Err(bad(
                        file,
                        format!("row {:?}: {word} is the runner's to give", r.name),
                    ));
                }
            }
        }
        let mut tables = BTreeSet::new();
        for t in &self.tables {
            if !tables.insert(t.name.as_str()) {
                return Err(bad(file, format!("table {:?} is named twice", t.name)));
            }
            if let Some(name) = self.unknown_row(t.rows.as_deref()) {
                return Err(bad(
                    file,
                    format!("table {:?} shows row {name:?}, which is not a row", t.name),
                ));
            }
            for c in &t.columns {
                match Value::parse(&c.value).map_err(|e| bad(file, e))? {
                    Value::Ratio(_, base) if !names.contains(base.as_str()) => {
                        return Err(bad(
                            file,
                            format!("column {:?}: {base:?} is not a row", c.header),
                        ));
                    }
                    Value::Eval(name, _) if !self.evals.contains_key(&name) => {
                        return Err(bad(
                            file,
                            format!("column {:?}: {name:?} is not one of the evals", c.header),
                        ));
                    }
                    _ => {}
                }
                if !matches!(c.align.as_deref(), None | Some("left" | "right")) {
                    return Err(bad(
                        file,
                        format!("column {:?}: align is left or right", c.header),
                    ));
                }
            }
        }
        self.check_figures(file, &names)
    }

    fn check_figures(&self, file: &Path, rows: &BTreeSet<&str>) -> CliResult {
        let mut figures = BTreeSet::new();
        for f in &self.figures {
            new_name(file, "figure", &f.name, "-_", &mut figures)?;
            if f.panels.is_empty() {
                return Err(bad(file, format!("figure {:?} has no panels", f.name)));
            }
            for p in &f.panels {
                let fail = |what: String| bad(file, format!("figure {:?}: {what}", f.name));
                if let Some(name) = self.unknown_row(p.rows.as_deref()) {
                    let what =
                        format!("figure {:?} draws row {name:?}, which is not a row", f.name);
                    return Err(bad(file, what));
                }
                let (x, _) = p.label_keys().map_err(fail)?;
                match (x, Value::parse(&p.value)) {
                    (None, Ok(Value::Epochs(_))) => {}
                    (None, _) => {
                        let what = format!("panel value {:?}: expected epochs:METRIC", p.value);
                        return Err(fail(what));
                    }
                    (Some(_), Ok(Value::Last(_))) => {}
                    (Some(_), Ok(Value::Ratio(_, base))) if rows.contains(base.as_str()) => {}
                    (Some(_), Ok(Value::Ratio(_, base))) => {
                        return Err(fail(format!("{base:?} is not a row")));
                    }
                    (Some(_), _) => {
                        let what = format!(
                            "panel value {:?}: expected last:METRIC or ratio:METRIC:ROW",
                            p.value
                        );
                        return Err(fail(what));
                    }
                }
                if let Some(key) = x {
                    for row in self.select(p.rows.as_deref()) {
                        let number = row.labels.get(key).map(|v| v.parse::<f64>());
                        if !matches!(number, Some(Ok(_))) {
                            let what = format!("row {:?}: label {key:?} is not a number", row.name);
                            return Err(fail(what));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The rows `names` selects, in its order (a name ending in `*`: every row whose name
    /// begins with the rest, in file order); `None`: every row.
    pub fn select(&self, names: Option<&[String]>) -> Vec<&Row> {
        let Some(names) = names else {
            return self.rows.iter().collect();
        };
        let mut rows = vec![];
        for n in names {
            match n.strip_suffix('*') {
                Some(prefix) => {
                    rows.extend(self.rows.iter().filter(|r| r.name.starts_with(prefix)))
                }
                None => rows.extend(self.rows.iter().find(|r| &r.name == n)),
            }
        }
        rows
    }

    /// The first of `names` that selects no row.
    fn unknown_row<'a>(&self, names: Option<&'a [String]>) -> Option<&'a String> {
        names?
            .iter()
            .find(|n| self.select(Some(std::slice::from_ref(*n))).is_empty())
    }

    /// `NAME.runs.jsonl` beside the experiment file.
    pub fn records_path(&self, file: &Path) -> PathBuf {
        file.with_file_name(format!("{}.runs.jsonl", self.name))
    }

    pub fn page_path(&self, file: &Path) -> PathBuf {
        file.parent().unwrap_or(Path::new(".")).join(&self.page)
    }

    /// The grid, rows × their seeds, limited to `rows` and `seeds` when given.
    pub(super) fn grid(
        &self,
        results: &Path,
        rows: Option<BTreeSet<String>>,
        seeds: Option<BTreeSet<String>>,
    ) -> CliResult<Vec<Run>> {
        for name in rows.iter().flatten() {
            if !self.rows.iter().any(|r| &r.name == name) {
                return Err(CliError(format!(
                    "--rows: {name:?} is not a row of {}",
                    self.name
                )));
            }
        }
        let seeds: Option<BTreeSet<u64>> = seeds
            .map(|s| {
                s.iter()
                    .map(|x| {
                        x.parse::<u64>()
                            .map_err(|_| CliError(format!("--seeds: {x:?} is not a seed")))
                    })
                    .collect()
            })
            .transpose()?;
        let mut runs = vec![];
        for r in &self.rows {
            if rows.as_ref().is_some_and(|n| !n.contains(&r.name)) {
                continue;
            }
            for &seed in r.seeds.as_ref().unwrap_or(&self.seeds) {
                if seeds.as_ref().is_some_and(|s| !s.contains(&seed)) {
                    continue;
                }
                runs.push(Run {
                    row: r.name.clone(),
                    seed,
                    args: format!("{} {} --seed {seed}", self.options, r.options)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    dir: results.join(format!("{}-s{seed}", r.name)),
                    fresh: false,
                });
            }
        }
        Ok(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(figure: &str) -> Result<Experiment, String> {
        let text = format!(
            r#"title = "t"
page = "p.md"
options = ""
rows = [
  {{ name = "f32" }},
  {{ name = "fig2-p5", labels = {{ x = "5", series = "dyn" }} }},
  {{ name = "fig2-p6", labels = {{ x = "6", series = "dyn" }} }},
  {{ name = "fig3-u6", labels = {{ x = "six" }} }},
]
figures = [{{ name = "f", title = "t", panels = [{figure}] }}]
"#
        );
        let exp: Experiment = toml::from_str(&text).map_err(|e| e.to_string())?;
        exp.check(Path::new("e.toml")).map_err(|e| e.0)?;
        Ok(exp)
    }

    /// A name ending in `*` selects the rows it begins, in file order, beside plain names.
    #[test]
    fn patterns_select_rows_in_file_order() {
        let exp = experiment(r#"{ caption = "c", value = "epochs:test_acc" }"#).unwrap();
        let names = |sel: &[&str]| -> Vec<String> {
            let sel: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
            exp.select(Some(&sel))
                .iter()
                .map(|r| r.name.clone())
                .collect()
        };
        assert_eq!(names(&["fig2-*", "f32"]), ["fig2-p5", "fig2-p6", "f32"]);
        assert_eq!(names(&["fig*"]), ["fig2-p5", "fig2-p6", "fig3-u6"]);
        assert_eq!(exp.select(None).len(), 4);
        assert_eq!(
            exp.unknown_row(Some(&["fig4-*".into()])),
            Some(&"fig4-*".into())
        );
    }

    /// A panel by a label takes a last-epoch figure, and every row it draws has a number there.
    #[test]
    fn panels_by_label_are_checked() {
        let ok = r#"{ caption = "c", value = "ratio:test_error:f32", x = "label:x", series = "label:series", rows = ["fig2-*"] }"#;
        assert!(experiment(ok).is_ok());
        let err = |panel: &str| experiment(panel).unwrap_err();
        assert!(err(&ok.replace("fig2-*", "fig*"))
            .contains("row \"fig3-u6\": label \"x\" is not a number"));
        assert!(err(&ok.replace(", rows = [\"fig2-*\"]", "")).contains("row \"f32\": label \"x\""));
        assert!(
            err(&ok.replace("ratio:test_error:f32", "epochs:test_error"))
                .contains("expected last:METRIC or ratio")
        );
        assert!(err(&ok.replace(":f32", ":f16")).contains("\"f16\" is not a row"));
        assert!(err(&ok.replace("x = \"label:x\", ", "")).contains("series needs x"));
        assert!(err(&ok.replace("label:x", "x")).contains("x \"x\": expected label:KEY"));
        assert!(err(&ok.replace("fig2-*", "fig4-*")).contains("figure \"f\" draws row \"fig4-*\""));
    }
}
