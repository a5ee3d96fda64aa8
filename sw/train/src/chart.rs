//! Line charts of named (x, y) series, drawn with `plotters` like the training plot
//! (`plot.rs`, whose fonts and PNG encoding they share): the sweeps of the seeds' figures
//! (`examples/lines.rs`) and the scale history of dynamic fixed-point runs (`scales.png`).

use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::plot::{encode, register_fonts, H, W};
use crate::TrainError;

/// One line: its legend name and points (non-finite points are left out).
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel of a chart.
pub struct Panel {
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// A logarithmic x axis (positive x only).
    pub log_x: bool,
    pub lines: Vec<Line>,
}

/// Colours of successive lines (matplotlib's tab10).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Writes a chart of `panels` side by side under `title` to `path`, atomically.
pub fn write(path: &Path, title: &str, panels: &[Panel]) -> Result<(), TrainError> {
    let err = |e: String| TrainError(format!("cannot write plot {}: {e}", path.display()));
    let rgb = render(title, panels).map_err(err)?;
    let png = encode(&rgb).map_err(|e| err(e.to_string()))?;
    lpgen_tempfiles::write_atomic(path, &png).map_err(|e| err(e.to_string()))
}

/// The span of `values` with a margin of 5 % either side (a unit either side when flat).
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo == hi {
        return (lo - 1.0, hi + 1.0);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

fn render(title: &str, panels: &[Panel]) -> Result<Vec<u8>, String> {
    register_fonts();
    let mut buf = vec![255u8; (W * H * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let body = root
            .titled(title, ("sans-serif", 22).into_font().color(&BLACK))
            .map_err(|e| e.to_string())?;
        let areas = body.split_evenly((1, panels.len().max(1)));
        for (area, panel) in areas.iter().zip(panels) {
            draw_panel(area, panel)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    p: &Panel,
) -> Result<(), String> {
    let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
    let points = || p.lines.iter().flat_map(|l| l.points.iter().copied());
    // A log axis is drawn as log10(x), labelled back in x.
    let tx = |x: f64| if p.log_x { x.log10() } else { x };
    let (x0, x1) = span(points().map(|(x, _)| tx(x)));
    let (y0, y1) = span(points().map(|(_, y)| y));
    let mut chart = ChartBuilder::on(area)
        .caption(&p.caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let log_x = p.log_x;
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&|v| {
            if log_x {
                // Decades only: a tick between two is left blank.
                if (v - v.round()).abs() < 1e-9 {
                    format!("1e{}", v.round())
                } else {
                    String::new()
                }
            } else {
                let s = format!("{v:.2}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        })
        .y_label_formatter(&|v| {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        })
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(e)?;
    for (i, line) in p.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (tx(x), y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(e)?
            .label(line.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&q| Circle::new(q, 3, color.filled())))
            .map_err(e)?;
    }
    if !p.lines.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(150, 150, 150))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_lines_in_panels_with_a_log_axis() {
        let dir = std::env::temp_dir().join(format!("lpgen-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.png");
        let line = |name: &str, k: f64| Line {
            name: name.into(),
            points: (1..8).map(|i| (10f64.powi(-i), k * i as f64)).collect(),
        };
        let panel = |log_x| Panel {
            caption: "c".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x,
            lines: vec![line("a", 1.0), line("b", 2.0)],
        };
        write(&path, "t", &[panel(true), panel(false)]).unwrap();
        let dec = png::Decoder::new(std::fs::File::open(&path).unwrap());
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        // Both lines' colours were drawn.
        for c in &PALETTE[..2] {
            let n = buf.chunks(3).filter(|p| *p == [c.0, c.1, c.2]).count();
            assert!(n > 50, "{n} pixels of {c:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
