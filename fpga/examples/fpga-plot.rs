//! Draws the units of docs/fpga.md as a PNG: per device, one row per unit, format and
//! `--stages` depth, with the area (logic cells) on the left and Fmax on the right.
//!
//! ```sh
//! cargo run --release -p lpgen-fpga --example fpga-plot -- docs/fpga-runs.jsonl docs/fpga-units.png
//! ```
//!
//! The records are those of scripts/fpga-sweep.sh (one JSON object a line); failures (records
//! with an "error") and arrays are left out. Text comes from DejaVu Sans bundled in the binary,
//! so no system font is needed.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Deserialize;

/// The fields of a run record that the picture needs; the others are ignored.
#[derive(Deserialize)]
struct Run {
    target: String,
    unit: String,
    format: String,
    stages: u32,
    lc: u64,
    #[serde(default)]
    dsp: u64,
    #[serde(default)]
    bram: u64,
    fmax_mhz: Option<f64>,
}

/// Whether a record is a failure: `{"key", "error"}`.
#[derive(Deserialize)]
struct Outcome {
    error: Option<String>,
}

/// Same order as the tables of docs/fpga.md (scripts/fpga-render.py).
const UNIT_ORDER: [&str; 7] = [
    "posit-add",
    "posit-mul",
    "posit-mac",
    "lns-add",
    "lns-mul",
    "lns-kahan",
    "fix-mac",
];
const FORMAT_ORDER: [&str; 8] = [
    "posit:8:1",
    "posit:16:1",
    "posit:32:2",
    "posit:8",
    "posit:16",
    "lns:5:6",
    "lns:4:4",
    "fix:7:8",
];
/// Units that only the MX table of docs/fpga.md shows (scripts/fpga-render.py's MX_UNITS):
/// dozens of block sizes and element types would crowd the picture.
const OWN_TABLE: [&str; 3] = ["mx-dot", "mx-enc", "q8-enc"];
const TARGET_ORDER: [&str; 3] = ["ice40-up5k", "ice40-hx8k", "ecp5-85k"];

/// One colour per unit (the "tab10" palette).
const COLORS: [RGBColor; 7] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

const W: u32 = 1500;
const ROW: u32 = 17;
const BLOCK_EXTRA: u32 = 150;
const TITLE: u32 = 50;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: fpga-plot RUNS.jsonl OUT.png");
        std::process::exit(2);
    }
    if let Err(e) = run(Path::new(&args[0]), Path::new(&args[1])) {
        eprintln!("fpga-plot: {e}");
        std::process::exit(1);
    }
}

fn run(runs: &Path, out: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(runs)
        .map_err(|e| format!("cannot read {}: {e}", runs.display()))?;
    // Per device (known ones first, in the tables' order), the runs in the tables' order.
    let mut by_target: BTreeMap<(usize, String), Vec<Run>> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: serde_json::Error| format!("{}:{}: {e}", runs.display(), n + 1);
        let value: serde_json::Value = serde_json::from_str(line).map_err(at)?;
        if Outcome::deserialize(&value).map_err(at)?.error.is_some() {
            continue;
        }
        let r = Run::deserialize(&value).map_err(at)?;
        if r.unit != "array" && !OWN_TABLE.contains(&r.unit.as_str()) {
            let t = (order(&TARGET_ORDER, &r.target), r.target.clone());
            by_target.entry(t).or_default().push(r);
        }
    }
    let mut blocks: Vec<(String, Vec<Run>)> = vec![];
    for ((_, target), mut rs) in by_target {
        rs.sort_by(|a, b| {
            let k = |r: &Run| {
                (
                    order(&UNIT_ORDER, &r.unit),
                    r.unit.clone(),
                    order(&FORMAT_ORDER, &r.format),
                    r.format.clone(),
                    r.stages,
                )
            };
            k(a).cmp(&k(b))
        });
        blocks.push((target, rs));
    }
    if blocks.is_empty() {
        return Err(format!("{}: no unit runs", runs.display()));
    }
    let h = TITLE + blocks.iter().map(|(_, rs)| block_height(rs)).sum::<u32>();
    let mut buf = vec![255u8; (W * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, h)).into_drawing_area();
        draw(&root, &blocks).map_err(|e| format!("cannot draw: {e}"))?;
        root.present().map_err(|e| format!("cannot draw: {e}"))?;
    }
    write_png(out, W, h, &buf).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

fn order(list: &[&str], name: &str) -> usize {
    list.iter().position(|x| *x == name).unwrap_or(list.len())
}

fn block_height(rs: &[Run]) -> u32 {
    rs.len() as u32 * ROW + BLOCK_EXTRA
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw(root: &Area<'_>, blocks: &[(String, Vec<Run>)]) -> DrawResult {
    root.fill(&WHITE)?;
    let _ =
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    let (title, mut rest) = root.split_vertically(TITLE);
    title.draw(&Text::new(
        "lpgen units: area and Fmax per unit, format and pipeline depth S (serial wrapper, seed 1)",
        (20, 16),
        ("sans-serif", 22).into_font().color(&BLACK),
    ))?;
    for (target, rs) in blocks {
        let (block, below) = rest.split_vertically(block_height(rs));
        rest = below;
        draw_block(&block, target, rs)?;
    }
    Ok(())
}

/// The rows' y axis: row i (from the top) at value n - 1 - i, one tick per row.
struct Rows {
    n: usize,
}

impl Ranged for Rows {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn range(&self) -> Range<f64> {
        -0.5..self.n as f64 - 0.5
    }

    fn map(&self, v: &f64, (lo, hi): (i32, i32)) -> i32 {
        let f = (v + 0.5) / self.n as f64;
        lo + (f * (hi - lo) as f64).round() as i32
    }

    fn key_points<K: KeyPointHint>(&self, hint: K) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            (0..self.n).map(|i| i as f64).collect()
        }
    }
}

fn draw_block(area: &Area<'_>, target: &str, rs: &[Run]) -> DrawResult {
    let n = rs.len();
    let y_of = |i: usize| (n - 1 - i) as f64;
    let labels: Vec<String> = rs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let first = i == 0 || rs[i - 1].unit != r.unit || rs[i - 1].format != r.format;
            if first {
                format!("{}  {}  S{}", r.unit, r.format, r.stages)
            } else {
                format!("S{}", r.stages)
            }
        })
        .collect();
    let label_of = move |v: &f64| {
        let i = n as i64 - 1 - v.round() as i64;
        usize::try_from(i)
            .ok()
            .and_then(|i| labels.get(i).cloned())
            .unwrap_or_default()
    };
    let (left, right) = area.split_horizontally(W * 54 / 100);
    let lc_max = rs.iter().map(|r| r.lc).max().unwrap_or(1) as f64;
    let f_max = rs.iter().filter_map(|r| r.fmax_mhz).fold(1.0, f64::max);
    let panels: [(&Area<'_>, String, Range<f64>); 2] = [
        (&left, format!("{target}: area"), 0.0..lc_max * 1.3),
        (&right, format!("{target}: Fmax"), 0.0..f_max * 1.15),
    ];
    for (k, (panel, caption, x)) in panels.into_iter().enumerate() {
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 20))
            .margin(10)
            .margin_right(20)
            .x_label_area_size(40)
            .top_x_label_area_size(46)
            .y_label_area_size(175)
            .build_cartesian_2d(x, Rows { n })?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(match k {
            0 if target.starts_with("ecp5") => "LUT4s",
            0 => "logic cells (LC)",
            _ => "Fmax (MHz)",
        })
        .y_label_formatter(&label_of)
        .x_label_formatter(&|v| {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        })
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(228, 228, 228))
        .disable_y_mesh();
        mesh.draw()?;
        // A light band behind every other unit/format group.
        let mut shade = false;
        for (i, r) in rs.iter().enumerate() {
            if i > 0 && (rs[i - 1].unit != r.unit || rs[i - 1].format != r.format) {
                shade = !shade;
            }
            if shade {
                let x1 = chart.x_range().end;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y_of(i) - 0.5), (x1, y_of(i) + 0.5)],
                    RGBColor(243, 243, 243).filled(),
                )))?;
            }
        }
        for (i, r) in rs.iter().enumerate() {
            let color = COLORS[order(&UNIT_ORDER, &r.unit) % COLORS.len()];
            let (value, text) = if k == 0 {
                let mut t = r.lc.to_string();
                if r.dsp > 0 {
                    t += &format!(" +{} DSP", r.dsp);
                }
                if r.bram > 0 {
                    t += &format!(" +{} BRAM", r.bram);
                }
                (r.lc as f64, t)
            } else {
                match r.fmax_mhz {
                    Some(f) => (f, format!("{f:.2}")),
                    None => (0.0, "–".to_string()),
                }
            };
            let y = y_of(i);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.36), (value, y + 0.36)],
                color.filled(),
            )))?;
            let style = ("sans-serif", 12)
                .into_font()
                .color(&RGBColor(40, 40, 40))
                .pos(Pos::new(HPos::Left, VPos::Center));
            chart.draw_series(std::iter::once(
                EmptyElement::at((value, y)) + Text::new(text, (5, 0), style),
            ))?;
        }
    }
    Ok(())
}

fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("png.tmp{}", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut wr = enc.write_header()?;
        wr.write_image_data(rgb)?;
        wr.finish()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
