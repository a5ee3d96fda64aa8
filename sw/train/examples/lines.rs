//! Draws one figure of a sweep table as a line chart (`lpgen_train::chart`): the rows of
//! `TSV` whose `figure` column is `FIGURE`, one line per `series`, `x` against `normalized`.
//!
//!   cargo run --release -p lpgen-train --example lines -- TSV FIGURE OUT.png \
//!       [--title T] [--x-label X] [--y-label Y] [--log-x]
//!
//! The TSV's header names the columns; `scripts/seed002-figures.sh` writes one.

use std::path::Path;
use std::process::ExitCode;

use lpgen_train::chart::{self, Line, Panel};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lines: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tsv, figure, out, rest @ ..] = &args[..] else {
        return Err(
            "usage: lines TSV FIGURE OUT.png [--title T] [--x-label X] [--y-label Y] [--log-x]"
                .into(),
        );
    };
    let (mut title, mut x_label, mut y_label, mut log_x) =
        (figure.clone(), "x".to_string(), "y".to_string(), false);
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--title" => title = value()?,
            "--x-label" => x_label = value()?,
            "--y-label" => y_label = value()?,
            "--log-x" => log_x = true,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let text = std::fs::read_to_string(tsv).map_err(|e| format!("cannot read {tsv}: {e}"))?;
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().ok_or("empty table")?.split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("{tsv} has no column {name:?}"))
    };
    let (cf, cs, cx, cy) = (
        col("figure")?,
        col("series")?,
        col("x")?,
        col("normalized")?,
    );
    let mut lines: Vec<Line> = vec![];
    for row in rows {
        let cells: Vec<&str> = row.split('\t').collect();
        if cells.get(cf) != Some(&figure.as_str()) {
            continue;
        }
        let number = |i: usize| -> Result<f64, String> {
            cells
                .get(i)
                .and_then(|c| c.parse().ok())
                .ok_or(format!("row {row:?}: column {} is not a number", header[i]))
        };
        let (x, y) = (number(cx)?, number(cy)?);
        let name = cells.get(cs).ok_or("short row")?.to_string();
        match lines.iter_mut().find(|l| l.name == name) {
            Some(l) => l.points.push((x, y)),
            None => lines.push(Line::new(name, vec![(x, y)])),
        }
    }
    if lines.is_empty() {
        return Err(format!("{tsv} has no rows of figure {figure:?}"));
    }
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let panel = Panel {
        log_x,
        ..Panel::new("", &x_label, &y_label, lines)
    };
    chart::write(Path::new(out), &title, &[panel]).map_err(|e| e.0)
}
