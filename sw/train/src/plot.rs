//! A PNG plot of the metrics history, drawn with `plotters`: the run's title across the top,
//! then two panels, cross-entropy on the left and accuracy (%) on the right, each with axes,
//! tick numbers, axis labels and a train/test legend; epochs along the x axes.
//!
//! Text is rendered from DejaVu Sans bundled in the binary (the `dejavu` crate, through
//! plotters' `ab_glyph` feature), so no system font, fontconfig or FreeType is needed. The
//! pixels are encoded by the `png` crate.

use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::TrainError;

pub(crate) const W: u32 = 1200;
pub(crate) const H: u32 = 520;
const TRAIN: RGBColor = RGBColor(31, 119, 180);
const TEST: RGBColor = RGBColor(255, 127, 14);

/// Per-epoch (train loss, test loss, train accuracy, test accuracy), accuracies in 0..=1.
/// Non-finite values are left out of the plot.
pub struct Series {
    /// Names the format, the backend and the network.
    pub title: String,
    pub train_loss: Vec<f64>,
    pub test_loss: Vec<f64>,
    pub train_acc: Vec<f64>,
    pub test_acc: Vec<f64>,
}

/// Makes DejaVu Sans the "sans-serif" family of plotters' text renderer (once per process).
pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a well-formed TrueType file: this cannot fail.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Writes the plot to `path` atomically (`lpgen_tempfiles::write_atomic`).
pub fn write(path: &Path, s: &Series) -> Result<(), TrainError> {
    let err = |e: String| TrainError(format!("cannot write plot {}: {e}", path.display()));
    let rgb = render(s).map_err(err)?;
    let png = encode(&rgb).map_err(|e| err(e.to_string()))?;
    lpgen_tempfiles::write_atomic(path, &png).map_err(|e| err(e.to_string()))
}

/// An 8-bit RGB PNG of W × H pixels.
pub(crate) fn encode(rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = vec![];
    let mut enc = png::Encoder::new(&mut out, W, H);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header()?;
    w.write_image_data(rgb)?;
    w.finish()?;
    Ok(out)
}

/// The picture, W × H RGB bytes.
fn render(s: &Series) -> Result<Vec<u8>, String> {
    register_fonts();
    let mut buf = vec![255u8; (W * H * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let body = root
            .titled(&s.title, ("sans-serif", 24).into_font().color(&BLACK))
            .map_err(|e| e.to_string())?;
        let panels = body.split_evenly((1, 2));
        let epochs = [&s.train_loss, &s.test_loss, &s.train_acc, &s.test_acc]
            .iter()
            .map(|v| v.len())
            .max()
            .unwrap_or(0);
        let pct = |v: &[f64]| v.iter().map(|a| a * 100.0).collect::<Vec<f64>>();
        let (train_pct, test_pct) = (pct(&s.train_acc), pct(&s.test_acc));
        panel(
            &panels[0],
            "loss",
            "cross-entropy",
            epochs,
            loss_range(&[&s.train_loss, &s.test_loss]),
            &[&s.train_loss, &s.test_loss],
            SeriesLabelPosition::UpperRight,
        )?;
        panel(
            &panels[1],
            "accuracy",
            "accuracy (%)",
            epochs,
            percent_range(&[&train_pct, &test_pct]),
            &[&train_pct, &test_pct],
            SeriesLabelPosition::LowerRight,
        )?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

/// The finite values of the series.
fn finite<'a>(series: &'a [&'a [f64]]) -> impl Iterator<Item = f64> + 'a {
    series
        .iter()
        .flat_map(|s| s.iter().copied())
        .filter(|v| v.is_finite())
}

/// 0 up to a little above the largest loss.
fn loss_range(series: &[&[f64]]) -> Range<f64> {
    let hi = finite(series).fold(0.0, f64::max);
    0.0..if hi > 0.0 { hi * 1.08 } else { 1.0 }
}

/// The accuracies' span widened to multiples of 5 inside 0..=100, at least 10 wide.
fn percent_range(series: &[&[f64]]) -> Range<f64> {
    let (lo, hi) = finite(series).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if lo > hi {
        return 0.0..100.0;
    }
    let mut lo = ((lo - 2.0) / 5.0).floor() * 5.0;
    let mut hi = ((hi + 2.0) / 5.0).ceil() * 5.0;
    if hi - lo < 10.0 {
        lo -= 5.0;
        hi += 5.0;
    }
    lo.max(0.0)..hi.min(100.0)
}

/// Epoch tick positions: 1..=n in steps of 1, 2, 5, 10, 20, 50, … so that at most 12 show.
fn epoch_ticks(n: usize) -> Vec<f64> {
    let n = n.max(1);
    let step = (0..)
        .map(|k| [1, 2, 5][k % 3] * 10usize.pow(k as u32 / 3))
        .find(|step| n / step < 12)
        .unwrap_or(1);
    let first = if step == 1 { 1 } else { step };
    let mut t: Vec<f64> = (first..=n).step_by(step).map(|e| e as f64).collect();
    if step >= 5 {
        t.insert(0, 1.0);
    }
    t
}

/// The x axis: epochs 1..=n with half an epoch of room either side, ticks at whole epochs.
struct EpochAxis {
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for EpochAxis {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn range(&self) -> Range<f64> {
        0.5..self.hi
    }

    fn map(&self, v: &f64, (lo, hi): (i32, i32)) -> i32 {
        let f = (v - 0.5) / (self.hi - 0.5);
        lo + (f * (hi - lo) as f64).round() as i32
    }

    fn key_points<K: KeyPointHint>(&self, hint: K) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            self.ticks.clone()
        }
    }
}

/// One panel: `series[0]` is train, `series[1]` test, value i at epoch i + 1.
fn panel(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    caption: &str,
    y_desc: &str,
    epochs: usize,
    y: Range<f64>,
    series: &[&[f64]; 2],
    legend: SeriesLabelPosition,
) -> Result<(), String> {
    let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
    let x = EpochAxis {
        hi: epochs.max(1) as f64 + 0.5,
        ticks: epoch_ticks(epochs),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| {
            let s = format!("{v:.3}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            s.to_string()
        })
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(e)?;
    // Markers on every point while they stay apart; always on a point without neighbours.
    let marked = epochs <= 40;
    for (values, (name, color)) in series.iter().zip([("train", TRAIN), ("test", TEST)]) {
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1) as f64, *v))
            .collect();
        let mut runs: Vec<Vec<(f64, f64)>> = vec![];
        let mut run = vec![];
        for p in points {
            if p.1.is_finite() {
                run.push(p);
            } else if !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
        let style = color.stroke_width(2);
        let mut labelled = false;
        for run in &runs {
            let line = chart
                .draw_series(LineSeries::new(run.iter().copied(), style))
                .map_err(e)?;
            if !labelled {
                line.label(name).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                });
                labelled = true;
            }
            if marked || run.len() == 1 {
                chart
                    .draw_series(
                        run.iter()
                            .map(|&p| Circle::new(p, 4, color.filled()).into_dyn()),
                    )
                    .map_err(e)?;
            }
        }
    }
    chart
        .configure_series_labels()
        .position(legend)
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(150, 150, 150))
        .margin(12)
        .draw()
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Width, height and RGB bytes of a PNG written by `write`.
    fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(std::fs::File::open(path).unwrap());
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn dark(px: &[u8]) -> bool {
        px.iter().all(|&c| c < 96)
    }

    fn check(s: &Series, name: &str) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("lpgen-plot-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plot.png");
        write(&path, s).unwrap();
        let (w, h, rgb) = decode(&path);
        assert_eq!((w, h), (W, H));
        assert_eq!(rgb.len(), (W * H * 3) as usize);
        // Nothing but the plot is left in the folder (no temporary).
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(files.len(), 1);
        let pixels: Vec<&[u8]> = rgb.chunks(3).collect();
        // Not blank: plenty of non-white pixels, and some of both series colours.
        let ink = pixels.iter().filter(|p| p.iter().any(|&c| c < 250)).count();
        assert!(ink > 5000, "{ink} inked pixels");
        for c in [TRAIN, TEST] {
            let n = pixels.iter().filter(|p| **p == [c.0, c.1, c.2]).count();
            assert!(n > 20, "{n} pixels of {c:?}");
        }
        // The title was drawn: dark pixels in the strip across the top, centred.
        let title = (0..30)
            .flat_map(|y| (0..W).map(move |x| (x, y)))
            .filter(|&(x, y)| dark(pixels[(y * W + x) as usize]))
            .count();
        assert!(title > 300, "{title} dark pixels in the title strip");
        // Tick numbers and axis labels: dark pixels below the left panel's plotting area.
        let below = (H - 60..H)
            .flat_map(|y| (0..W / 2).map(move |x| (x, y)))
            .filter(|&(x, y)| dark(pixels[(y * W + x) as usize]))
            .count();
        assert!(below > 200, "{below} dark pixels under the left panel");
        std::fs::remove_dir_all(&dir).unwrap();
        rgb
    }

    #[test]
    fn plots_several_epochs_and_one() {
        let title = "posit:8:2 with quires, golden backend, 784-512-10 sigmoid MLP".to_string();
        let s = Series {
            title: title.clone(),
            train_loss: vec![1.9, 0.9, 0.6, f64::NAN, 0.41, 0.38],
            test_loss: vec![1.2, 0.8, 0.62, 0.55, 0.52, 0.5],
            train_acc: vec![0.45, 0.78, 0.85, 0.88, f64::INFINITY, 0.905],
            test_acc: vec![0.6, 0.8, 0.84, 0.86, 0.87, 0.875],
        };
        let many = check(&s, "many");
        if let Some(out) = std::env::var_os("LPGEN_PLOT_CHECK") {
            write(Path::new(&out), &s).unwrap();
        }
        let one = Series {
            title,
            train_loss: vec![0.7],
            test_loss: vec![0.65],
            train_acc: vec![0.8],
            test_acc: vec![0.82],
        };
        let single = check(&one, "one");
        assert_ne!(many, single);
        if let Some(out) = std::env::var_os("LPGEN_PLOT_CHECK_ONE") {
            write(Path::new(&out), &one).unwrap();
        }
        // All values missing still gives a picture with axes and a title.
        let none = Series {
            title: "empty".into(),
            train_loss: vec![f64::NAN],
            test_loss: vec![],
            train_acc: vec![f64::NAN],
            test_acc: vec![],
        };
        let path = std::env::temp_dir().join(format!("lpgen-plot-{}-none.png", std::process::id()));
        write(&path, &none).unwrap();
        assert_eq!(decode(&path).0, W);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn an_unwritable_path_is_an_error_and_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("lpgen-plot-{}-bad", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A folder where the file should go: the rename fails.
        let path = dir.join("plot.png");
        std::fs::create_dir_all(path.join("x")).unwrap();
        let s = Series {
            title: "t".into(),
            train_loss: vec![1.0],
            test_loss: vec![1.0],
            train_acc: vec![0.5],
            test_acc: vec![0.5],
        };
        assert!(write(&path, &s).is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["plot.png"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn epoch_ticks_stay_few_and_whole() {
        assert_eq!(epoch_ticks(1), [1.0]);
        assert_eq!(epoch_ticks(5), [1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(epoch_ticks(30), [1.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
        assert!(epoch_ticks(1000).len() <= 12);
    }
}
