//! A PNG plot of the metrics history: loss on the left, accuracy on the right, train in blue
//! and test in orange, epochs along the x axes. No text: the numbers are in the JSON lines.

use std::path::Path;

use crate::TrainError;

const W: usize = 800;
const H: usize = 360;
const PANEL: usize = W / 2;
const MARGIN: usize = 24;

struct Canvas {
    px: Vec<[u8; 3]>,
}

impl Canvas {
    fn new() -> Canvas {
        Canvas {
            px: vec![[255, 255, 255]; W * H],
        }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if (0..W as i64).contains(&x) && (0..H as i64).contains(&y) {
            self.px[y as usize * W + x as usize] = c;
        }
    }

    /// A line from (x0, y0) to (x1, y1), 2 pixels wide (Bresenham).
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3]) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.set(x, y, c);
            self.set(x, y + 1, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// One panel: axes and the series (values in lo..=hi) against epochs 1..=n.
    fn panel(&mut self, left: usize, series: &[(&[f64], [u8; 3])], lo: f64, hi: f64) {
        let (x0, x1) = ((left + MARGIN) as i64, (left + PANEL - MARGIN / 2) as i64);
        let (y0, y1) = ((H - MARGIN) as i64, (MARGIN / 2) as i64);
        let grey = [160, 160, 160];
        self.line((x0, y0), (x1, y0), grey);
        self.line((x0, y0), (x0, y1), grey);
        let n = series.iter().map(|(s, _)| s.len()).max().unwrap_or(0);
        let span = if hi > lo { hi - lo } else { 1.0 };
        let at = |i: usize, v: f64| -> (i64, i64) {
            let fx = if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.5
            };
            let fy = ((v - lo) / span).clamp(0.0, 1.0);
            (
                x0 + (fx * (x1 - x0) as f64) as i64,
                y0 - (fy * (y0 - y1) as f64) as i64,
            )
        };
        for (s, c) in series {
            for i in 0..s.len() {
                let p = at(i, s[i]);
                let q = if i + 1 < s.len() {
                    at(i + 1, s[i + 1])
                } else {
                    p
                };
                self.line(p, q, *c);
            }
        }
    }
}

/// Per-epoch (train loss, test loss, train accuracy, test accuracy), accuracies in 0..=1.
pub struct Series {
    pub train_loss: Vec<f64>,
    pub test_loss: Vec<f64>,
    pub train_acc: Vec<f64>,
    pub test_acc: Vec<f64>,
}

/// Writes the plot to `path` (through a temporary file and a rename).
pub fn write(path: &Path, s: &Series) -> Result<(), TrainError> {
    let mut c = Canvas::new();
    let (blue, orange) = ([31, 119, 180], [255, 127, 14]);
    let finite = |v: &[f64]| {
        v.iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
    };
    let top = finite(&s.train_loss).max(finite(&s.test_loss)) * 1.05;
    c.panel(
        0,
        &[(&s.train_loss, blue), (&s.test_loss, orange)],
        0.0,
        top,
    );
    c.panel(
        PANEL,
        &[(&s.train_acc, blue), (&s.test_acc, orange)],
        0.0,
        1.0,
    );
    let err = |e: String| TrainError(format!("cannot write plot {}: {e}", path.display()));
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let file = std::fs::File::create(&tmp).map_err(|e| err(e.to_string()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), W as u32, H as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let data: Vec<u8> = c.px.iter().flatten().copied().collect();
    enc.write_header()
        .and_then(|mut w| w.write_image_data(&data))
        .map_err(|e| err(e.to_string()))?;
    std::fs::rename(&tmp, path).map_err(|e| err(e.to_string()))
}
