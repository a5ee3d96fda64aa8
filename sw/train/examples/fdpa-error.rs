//! Draws the relative error of an fp8 dot product against its length K (issue 49,
//! experiments/fdpa.md) from the table `scripts/fdpa-error.py --tsv` writes: one panel per
//! operand distribution, log2 K along x, the relative error on a log y axis, one colour per
//! accumulation mode, the mean solid and the 95th percentile dashed, and DeepSeek-V3's
//! published figure (about 2 % at K = 4096) as a labelled point.
//!
//!   cargo run -p lpgen-train --example fdpa-error -- TSV OUT.png
//!
//! `scripts/fdpa-error-figure.sh` runs both steps (experiments/fdpa-error.tsv, experiments/fdpa-error.png).

use std::path::Path;
use std::process::ExitCode;

use lpgen_train::chart::{self, Line, Mark, Panel};

/// DeepSeek-V3's technical report (arXiv 2412.19437, "Increasing Accumulation Precision"):
/// a maximum relative error of nearly 2 % for K = 4096 on Hopper's FP8 accumulation.
const DEEPSEEK_V3: (f64, f64) = (12.0, 0.02);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fdpa-error: {e}");
            ExitCode::from(2)
        }
    }
}

/// One row of the table: distribution, mode, K, mean, 95th percentile.
struct Row {
    dist: String,
    mode: String,
    k: f64,
    mean: f64,
    p95: f64,
}

fn parse(tsv: &str, text: &str) -> Result<Vec<Row>, String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or(format!("{tsv} is empty"))?;
    if header != "dist\tmode\tk\tmean\tp95" {
        return Err(format!(
            "{tsv}: header {header:?}, not dist, mode, k, mean, p95"
        ));
    }
    lines
        .map(|line| {
            let bad = || format!("{tsv}: row {line:?} is not dist, mode, k, mean, p95");
            let cells: Vec<&str> = line.split('\t').collect();
            let [dist, mode, k, mean, p95] = cells[..] else {
                return Err(bad());
            };
            let num = |c: &str| c.parse::<f64>().map_err(|_| bad());
            let k = num(k)?;
            if k.is_nan() || k < 1.0 {
                return Err(bad());
            }
            Ok(Row {
                dist: dist.into(),
                mode: mode.into(),
                k,
                mean: num(mean)?,
                p95: num(p95)?,
            })
        })
        .collect()
}

/// The values of `key` in their first order.
fn distinct<'a>(rows: &'a [Row], key: impl Fn(&'a Row) -> &'a str) -> Vec<&'a str> {
    let mut seen: Vec<&str> = vec![];
    for r in rows {
        if !seen.contains(&key(r)) {
            seen.push(key(r));
        }
    }
    seen
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tsv, out] = &args[..] else {
        return Err("usage: fdpa-error TSV OUT.png".into());
    };
    let text = std::fs::read_to_string(tsv).map_err(|e| format!("cannot read {tsv}: {e}"))?;
    let rows = parse(tsv, &text)?;
    if rows.is_empty() {
        return Err(format!("{tsv} has no rows"));
    }
    let modes = distinct(&rows, |r| &r.mode);
    let panels: Vec<Panel> = distinct(&rows, |r| &r.dist)
        .into_iter()
        .map(|dist| {
            let mut lines = vec![];
            for (color, mode) in modes.iter().enumerate() {
                let of = |f: fn(&Row) -> f64| -> Vec<(f64, f64)> {
                    rows.iter()
                        .filter(|r| r.dist == dist && r.mode == *mode)
                        .map(|r| (r.k.log2(), f(r)))
                        .collect()
                };
                let mut mean = Line::new(*mode, of(|r| r.mean));
                mean.color = Some(color);
                let mut p95 = Line::new("", of(|r| r.p95));
                (p95.color, p95.dashed) = (Some(color), true);
                lines.extend([mean, p95]);
            }
            Panel {
                log_y: true,
                marks: vec![Mark {
                    x: DEEPSEEK_V3.0,
                    y: DEEPSEEK_V3.1,
                    label: "DeepSeek-V3: ≈2 % (max), K = 4096".into(),
                }],
                // Between the fdpa lines above and the binary32 ones below, at small K.
                legend_at: Some((5.0, 1e-5)),
                ..Panel::new(
                    &format!("{dist} operands"),
                    "log2 K",
                    "relative error (0 not drawn)",
                    lines,
                )
            }
        })
        .collect();
    let title = "fp8:e4m3 dot products: relative error against K (solid: mean, dashed: 95th \
                 percentile)";
    chart::write(Path::new(out), title, &panels).map_err(|e| e.0)
}
