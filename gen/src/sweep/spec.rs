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
    /// The rows it shows, in order (default: every row).
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

/// One panel: a line per row, its `epochs:METRIC` (the mean over seeds) by epoch.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct FigurePanel {
    pub caption: String,
    pub value: String,
    /// The rows it draws (default: every row).
    #[serde(default)]
    pub rows: Option<Vec<String>>,
    /// A logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
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
            for name in t.rows.iter().flatten() {
                if !names.contains(name.as_str()) {
                    return Err(bad(
                        file,
                        format!("table {:?} shows row {name:?}, which is not a row", t.name),
                    ));
                }
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
                if !matches!(Value::parse(&p.value), Ok(Value::Epochs(_))) {
                    return Err(bad(
                        file,
                        format!(
                            "figure {:?}: panel value {:?}: expected epochs:METRIC",
                            f.name, p.value
                        ),
                    ));
                }
                if let Some(name) = p.rows.iter().flatten().find(|n| !rows.contains(n.as_str())) {
                    return Err(bad(
                        file,
                        format!("figure {:?} draws row {name:?}, which is not a row", f.name),
                    ));
                }
            }
        }
        Ok(())
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
