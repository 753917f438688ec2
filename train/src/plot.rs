//! Line charts as PNG files, drawn on an RGB raster with an 8×8 bitmap font (font8x8), so no
//! system font or graphics library is needed: the learning curves and the per-map-size
//! validation rates of a run.

use std::path::Path;

use crate::error::TrainError;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// Colours for series, in order.
pub const PALETTE: [Rgb; 8] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
];

const BLACK: Rgb = [0, 0, 0];
const GREY: Rgb = [220, 220, 220];

/// A raster.
#[derive(Debug, Clone)]
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Canvas {
    /// A white canvas.
    #[must_use]
    pub fn new(width: u32, height: u32) -> Self {
        Canvas { width, height, pixels: vec![255; (width * height * 3) as usize] }
    }

    /// Sets a pixel (outside the canvas: nothing).
    pub fn put(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            let i = ((y as u32 * self.width + x as u32) * 3) as usize;
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    /// The pixel at (x, y).
    #[must_use]
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        let i = ((y * self.width + x) * 3) as usize;
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }

    /// A line `thick` pixels wide (Bresenham, thickened by a square brush).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: Rgb, thick: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            for ox in 0..thick {
                for oy in 0..thick {
                    self.put(x + ox - thick / 2, y + oy - thick / 2, c);
                }
            }
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

    /// A filled square of side `2r + 1` centred on (x, y).
    pub fn dot(&mut self, x: i64, y: i64, r: i64, c: Rgb) {
        for ox in -r..=r {
            for oy in -r..=r {
                self.put(x + ox, y + oy, c);
            }
        }
    }

    /// Text in the 8×8 font (ASCII; other characters as `?`), top-left at (x, y).
    pub fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb) {
        for (i, ch) in s.chars().enumerate() {
            let code = if ch.is_ascii() { ch as usize } else { '?' as usize };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        self.put(x + i as i64 * 8 + col, y + row as i64, c);
                    }
                }
            }
        }
    }

    /// Writes the canvas as an 8-bit RGB PNG.
    ///
    /// # Errors
    /// I/O or encoding errors, with the path.
    pub fn save_png(&self, path: &Path) -> Result<(), TrainError> {
        let io = |e: std::io::Error| TrainError::io(path, e);
        let enc = |e: png::EncodingError| TrainError::io(path, std::io::Error::other(e.to_string()));
        let file = std::fs::File::create(path).map_err(io)?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(enc)?;
        writer.write_image_data(&self.pixels).map_err(enc)?;
        writer.finish().map_err(enc)
    }
}

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw a dot at each point (for sparse series such as per-round evaluations).
    pub dots: bool,
}

/// A line chart: a title, axis labels, the y range (`None`: fitted to the data), the series,
/// and optional names for integer x positions (e.g. evaluation stages).
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_range: Option<(f64, f64)>,
    pub series: Vec<Series>,
    pub x_names: Vec<String>,
}

/// A tick label: whole numbers on axes that span 10 or more, two decimals otherwise.
fn tick_label(v: f64, span: f64) -> String {
    if span >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The trailing moving average of `points` over `window` points (the first ones average what
/// there is).
#[must_use]
pub fn moving_average(points: &[(f64, f64)], window: usize) -> Vec<(f64, f64)> {
    let w = window.max(1);
    let mut sum = 0.0;
    let mut out = Vec::with_capacity(points.len());
    for (i, &(x, y)) in points.iter().enumerate() {
        sum += y;
        if i >= w {
            sum -= points[i - w].1;
        }
        out.push((x, sum / (i + 1).min(w) as f64));
    }
    out
}

impl Chart {
    /// Draws the chart on a `width` × `height` canvas.
    #[must_use]
    pub fn draw(&self, width: u32, height: u32) -> Canvas {
        let mut cv = Canvas::new(width, height);
        let (left, right, top, bottom) = (64i64, 16i64, 28i64, 44i64);
        let (pw, ph) = (i64::from(width) - left - right, i64::from(height) - top - bottom);
        let pts = self.series.iter().flat_map(|s| s.points.iter().copied());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in pts.filter(|(x, y)| x.is_finite() && y.is_finite()) {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if let Some((a, b)) = self.y_range {
            (y0, y1) = (a, b);
        }
        if x1 - x0 < 1e-12 {
            x1 = x0 + 1.0;
        }
        if y1 - y0 < 1e-12 {
            (y0, y1) = (y0 - 0.5, y1 + 0.5);
        }
        let sx = |x: f64| left + ((x - x0) / (x1 - x0) * pw as f64).round() as i64;
        let sy = |y: f64| top + ph - ((y - y0) / (y1 - y0) * ph as f64).round() as i64;
        // Grid, ticks and labels.
        for i in 0..=4 {
            let y = y0 + (y1 - y0) * f64::from(i) / 4.0;
            cv.line((left, sy(y)), (left + pw, sy(y)), GREY, 1);
            let label = tick_label(y, y1 - y0);
            cv.text(left - 6 - 8 * label.len() as i64, sy(y) - 4, &label, BLACK);
        }
        if self.x_names.is_empty() {
            for i in 0..=4 {
                let x = x0 + (x1 - x0) * f64::from(i) / 4.0;
                let label = tick_label(x, x1 - x0);
                cv.line((sx(x), top + ph), (sx(x), top + ph + 4), BLACK, 1);
                cv.text(sx(x) - 4 * label.len() as i64, top + ph + 8, &label, BLACK);
            }
        } else {
            for (i, name) in self.x_names.iter().enumerate() {
                let x = sx(i as f64);
                cv.line((x, top + ph), (x, top + ph + 4), BLACK, 1);
                cv.text(x - 4 * name.len() as i64, top + ph + 8, name, BLACK);
            }
        }
        cv.line((left, top), (left, top + ph), BLACK, 1);
        cv.line((left, top + ph), (left + pw, top + ph), BLACK, 1);
        cv.text(left, 8, &self.title, BLACK);
        let xl = &self.x_label;
        cv.text(left + pw / 2 - 4 * xl.len() as i64, i64::from(height) - 14, xl, BLACK);
        // Series and legend.
        for (i, s) in self.series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let p: Vec<(i64, i64)> = s
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| (sx(x), sy(y)))
                .collect();
            for w in p.windows(2) {
                cv.line(w[0], w[1], c, 2);
            }
            if s.dots || p.len() == 1 {
                for &(x, y) in &p {
                    cv.dot(x, y, 3, c);
                }
            }
            let ly = top + 6 + 12 * i as i64;
            let lx = left + pw - 8 * s.name.len() as i64 - 24;
            cv.line((lx, ly + 4), (lx + 14, ly + 4), c, 3);
            cv.text(lx + 18, ly, &s.name, c);
        }
        cv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_average_by_hand() {
        let p = [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)];
        assert_eq!(moving_average(&p, 2), vec![(0.0, 1.0), (1.0, 2.0), (2.0, 4.0), (3.0, 6.0)]);
        assert_eq!(tick_label(96.0, 384.0), "96");
        assert_eq!(tick_label(0.25, 1.0), "0.25");
    }

    #[test]
    fn draws_series_text_and_a_readable_png() {
        let chart = Chart {
            title: "valid rate".into(),
            x_label: "step".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![Series { name: "a".into(), points: vec![(0.0, 0.0), (10.0, 1.0)], dots: true }],
            x_names: vec![],
        };
        let cv = chart.draw(320, 200);
        // The diagonal from the bottom-left to the top-right corner of the plot area is blue.
        let (left, top, pw, ph) = (64, 28, 320 - 64 - 16, 200 - 28 - 44);
        assert_eq!(cv.get(left + pw / 2, top + ph / 2), PALETTE[0]);
        assert_eq!(cv.get(left + 3, top + 3), [255, 255, 255]);
        // The title's first letter 'v' has ink in its 8×8 cell.
        assert!((0..8).any(|dx| (8..16).any(|dy| cv.get(64 + dx, dy) == BLACK)));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        cv.save_png(&path).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (320, 200));
    }
}
