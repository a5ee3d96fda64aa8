//! Line charts of named (x, y) series, drawn with `plotters` like the training plot
//! (`plot.rs`, whose fonts and PNG encoding they share): the figures of `lpgen sweep`'s
//! experiment pages, the scale history of dynamic fixed-point runs (`scales.png`) and
//! the fdpa error against K (`examples/fdpa-error.rs`, experiments/fdpa-error.png).

use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::plot::{encode, register_fonts, H, W};
use crate::TrainError;

/// One line: its legend name and points (non-finite points are left out).
pub struct Line {
    /// Its legend entry; an empty name has none.
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed instead of solid.
    pub dashed: bool,
    /// Its colour, an index into the palette; `None`: the line's own index in the panel.
    pub color: Option<usize>,
}

impl Line {
    /// A solid line in the colour of its index.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Line {
        Line {
            name: name.into(),
            points,
            dashed: false,
            color: None,
        }
    }
}

/// A labelled point drawn over a panel's lines (a published figure beside the measured ones).
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// One panel of a chart.
pub struct Panel {
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// A logarithmic x axis (positive x only).
    pub log_x: bool,
    /// A logarithmic y axis (positive y only: a point at y <= 0 is left out).
    pub log_y: bool,
    pub lines: Vec<Line>,
    pub marks: Vec<Mark>,
    /// The legend's top left corner, in the panel's (x, y); `None`: the upper right corner.
    pub legend_at: Option<(f64, f64)>,
}

impl Panel {
    /// A panel with linear axes and no marks.
    pub fn new(caption: &str, x_label: &str, y_label: &str, lines: Vec<Line>) -> Panel {
        Panel {
            caption: caption.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: false,
            log_y: false,
            lines,
            marks: vec![],
            legend_at: None,
        }
    }
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
    let marks = p.marks.iter().map(|m| (m.x, m.y));
    let points = || {
        p.lines
            .iter()
            .flat_map(|l| l.points.iter().copied())
            .chain(marks.clone())
    };
    // A log axis is drawn as log10(v), labelled back in v (log10 of v <= 0 is not finite:
    // such a point is left out).
    let tx = |x: f64| if p.log_x { x.log10() } else { x };
    let ty = |y: f64| if p.log_y { y.log10() } else { y };
    let (x0, x1) = span(points().map(|(x, _)| tx(x)));
    let (y0, y1) = span(points().map(|(_, y)| ty(y)));
    let mut chart = ChartBuilder::on(area)
        .caption(&p.caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let (log_x, log_y) = (p.log_x, p.log_y);
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&|v| tick_label(*v, log_x))
        .y_label_formatter(&|v| tick_label(*v, log_y))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(e)?;
    for (i, line) in p.lines.iter().enumerate() {
        let color = PALETTE[line.color.unwrap_or(i) % PALETTE.len()];
        let pts: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (tx(x), ty(y)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let style = color.stroke_width(2);
        let drawn = if line.dashed {
            chart.draw_series(DashedLineSeries::new(pts.iter().copied(), 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), style))
        }
        .map_err(e)?;
        if !line.name.is_empty() {
            let dashed = line.dashed;
            drawn.label(line.name.as_str()).legend(move |(x, y)| {
                let ends = vec![(x, y), (x + 20, y)];
                if dashed {
                    DashedPathElement::new(ends, 6, 3, style).into_dyn()
                } else {
                    PathElement::new(ends, style).into_dyn()
                }
            });
        }
        chart
            .draw_series(pts.iter().map(|&q| Circle::new(q, 3, color.filled())))
            .map_err(e)?;
    }
    // Marks: a black cross with its label to the left of it, on a light box over the lines.
    let font = ("sans-serif", 14).into_font().color(&BLACK);
    let left = font.pos(Pos::new(HPos::Right, VPos::Center));
    for m in &p.marks {
        let at = (tx(m.x), ty(m.y));
        if !(at.0.is_finite() && at.1.is_finite()) {
            continue;
        }
        let (w, h) = chart
            .plotting_area()
            .estimate_text_size(&m.label, &left)
            .map_err(e)?;
        let (w, h) = (w as i32, h as i32);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(at)
                    + Rectangle::new(
                        [(-16 - w, -h / 2 - 3), (-8, h / 2 + 3)],
                        WHITE.mix(0.85).filled(),
                    )
                    + Cross::new((0, 0), 7, BLACK.stroke_width(3))
                    + Text::new(m.label.clone(), (-12, 0), left.clone()),
            ))
            .map_err(e)?;
    }
    let legend = match p.legend_at {
        Some((x, y)) => {
            let (px, py) = chart.backend_coord(&(tx(x), ty(y)));
            let (ox, oy) = chart.plotting_area().get_base_pixel();
            SeriesLabelPosition::Coordinate(px - ox, py - oy)
        }
        None => SeriesLabelPosition::UpperRight,
    };
    if p.lines.iter().any(|l| !l.name.is_empty()) {
        chart
            .configure_series_labels()
            .position(legend)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(150, 150, 150))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// A tick's label: on a log axis (v = log10 of the value) decades only, as 1e-3, a tick
/// between two left blank; else the value to two decimals, trailing zeros dropped.
fn tick_label(v: f64, log: bool) -> String {
    if !log {
        let s = format!("{v:.2}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if (v - v.round()).abs() < 1e-9 {
        return format!("1e{}", v.round());
    }
    // Between powers of ten (an axis within a decade or two): the value to two significant
    // digits.
    let x = 10f64.powf(v);
    let digits = (1 - x.log10().floor() as i32).max(0) as usize;
    if (1e-3..1e5).contains(&x) {
        format!("{x:.digits$}")
    } else {
        format!("{x:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_are_labelled_in_the_values() {
        let at = |x: f64| tick_label(x.log10(), true);
        assert_eq!(at(10.0), "1e1");
        assert_eq!(at(1e-4), "1e-4");
        assert_eq!(at(15.85), "16");
        assert_eq!(at(1.585), "1.6");
        assert_eq!(at(0.0063), "0.0063");
        assert_eq!(at(2e-7), "2.0e-7");
        assert_eq!(tick_label(2.50, false), "2.5");
    }

    #[test]
    fn draws_lines_in_panels_with_a_log_axis() {
        let dir = std::env::temp_dir().join(format!("lpgen-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.png");
        let line = |name: &str, k: f64| {
            Line::new(
                name,
                (1..8).map(|i| (10f64.powi(-i), k * i as f64)).collect(),
            )
        };
        let panel = |log_x| Panel {
            log_x,
            ..Panel::new("c", "x", "y", vec![line("a", 1.0), line("b", 2.0)])
        };
        write(&path, "t", &[panel(true), panel(false)]).unwrap();
        let buf = pixels(&path);
        // Both lines' colours were drawn.
        for c in &PALETTE[..2] {
            let n = count(&buf, *c);
            assert!(n > 50, "{n} pixels of {c:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn pixels(path: &Path) -> Vec<u8> {
        let dec = png::Decoder::new(std::fs::File::open(path).unwrap());
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        buf
    }

    fn count(rgb: &[u8], c: RGBColor) -> usize {
        rgb.chunks(3).filter(|p| *p == [c.0, c.1, c.2]).count()
    }

    #[test]
    fn draws_a_log_y_axis_dashed_lines_chosen_colours_and_marks() {
        let dir = std::env::temp_dir().join(format!("lpgen-chart-logy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let draw = |dashed: bool, marks: bool| {
            // Errors spanning eight decades, one of them 0 (left out on the log axis).
            let pts = |k: f64| (0..8).map(|i| (i as f64, k * 10f64.powi(-i))).collect();
            let mut zero = Line::new("zero at 0", pts(1.0));
            zero.points[3].1 = 0.0;
            zero.color = Some(2);
            let mut other = Line::new("", pts(3.0));
            other.color = Some(2);
            other.dashed = dashed;
            let panel = Panel {
                log_y: true,
                marks: match marks {
                    true => vec![Mark {
                        x: 4.0,
                        y: 0.02,
                        label: "a published figure".into(),
                    }],
                    false => vec![],
                },
                ..Panel::new("c", "log2 K", "relative error", vec![zero, other])
            };
            let path = dir.join(format!("{dashed}-{marks}.png"));
            write(&path, "t", &[panel]).unwrap();
            pixels(&path)
        };
        let (solid, dashed, marked) = (draw(false, false), draw(true, false), draw(true, true));
        // Both lines take the colour asked for, none the colours of their indices.
        assert!(count(&solid, PALETTE[2]) > 200);
        assert_eq!(count(&solid, PALETTE[0]) + count(&solid, PALETTE[1]), 0);
        // A dashed line leaves gaps.
        let (s, d) = (count(&solid, PALETTE[2]), count(&dashed, PALETTE[2]));
        assert!(d < s - 100, "dashed {d} pixels, solid {s}");
        // The mark and its label are black ink the unmarked chart lacks.
        let black = |rgb: &[u8]| count(rgb, BLACK);
        assert!(black(&marked) > black(&dashed) + 100);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
