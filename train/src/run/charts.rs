//! The run's charts: the warm start's loss (`sft_loss.png`), GRPO's reward and sampled valid
//! rate with the validation points (`grpo.png`), and the validation valid rate per map size
//! after each stage (`per_size.png`). Drawn with plotters on floe-canvas, as the CLI's pictures
//! are: the bitmap backend, text in the embedded DejaVu Sans (no system font), PNG.

use std::collections::BTreeMap;
use std::path::Path;

use floe_canvas::{self as canvas, err, Area, SANS};
use floe_rounds::{RunState, Stage};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::error::TrainError;

const INK: RGBColor = RGBColor(30, 30, 30);

/// One line of a chart.
#[derive(Debug, Clone)]
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    /// A dot at each point (for sparse series such as the validations).
    dots: bool,
}

/// A line chart: a title, the x axis's label, the y range (`None`: fitted to the data), the
/// series, and names for the integer x positions (the stages), if any.
#[derive(Debug, Clone)]
struct Chart {
    title: String,
    x_label: String,
    y_range: Option<(f64, f64)>,
    series: Vec<Series>,
    x_names: Vec<String>,
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

/// A tick's label: whole numbers on an axis that spans 10 or more, else at most two decimals.
fn tick_label(v: f64, span: f64) -> String {
    if span >= 10.0 {
        format!("{v:.0}")
    } else {
        let v = (v * 100.0).round() / 100.0;
        format!("{}", v + 0.0)
    }
}

/// Writes the run's charts into `out`.
///
/// # Errors
/// I/O errors, or a drawing failure (as an I/O error on the chart's path).
pub fn plots(out: &Path, state: &RunState) -> Result<(), TrainError> {
    if !state.sft_curve.is_empty() {
        let chart = Chart {
            title: "warm start: cross-entropy per answer token".into(),
            x_label: "step".into(),
            y_range: None,
            series: vec![Series {
                name: "loss".into(),
                points: state.sft_curve.iter().map(|&(s, l)| (s as f64, l)).collect(),
                dots: false,
            }],
            x_names: vec![],
        };
        chart.save(640, 360, &out.join("sft_loss.png"))?;
    }
    if !state.grpo_curve.is_empty() {
        let rounds: Vec<(f64, f64)> = state
            .evals
            .iter()
            .filter(|e| matches!(e.stage, Stage::WarmStart | Stage::Round(_)))
            .map(|e| (e.grpo_step as f64, e.valid))
            .collect();
        let curve = |f: fn(&(u64, f64, f64)) -> f64| {
            let points: Vec<(f64, f64)> = state.grpo_curve.iter().map(|p| (p.0 as f64, f(p))).collect();
            moving_average(&points, 16)
        };
        let chart = Chart {
            title: "GRPO: sampled reward and valid rate (moving mean of 16 steps); validation".into(),
            x_label: "GRPO step".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![
                Series { name: "reward".into(), points: curve(|p| p.1), dots: false },
                Series { name: "valid (sampled)".into(), points: curve(|p| p.2), dots: false },
                Series { name: "valid (validation)".into(), points: rounds, dots: true },
            ],
            x_names: vec![],
        };
        chart.save(720, 400, &out.join("grpo.png"))?;
    }
    if !state.evals.is_empty() {
        let mut by_size: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
        for (i, e) in state.evals.iter().enumerate() {
            for r in e.report.size_results() {
                by_size.entry(r.size).or_default().push((i as f64, r.valid_rate));
            }
        }
        let chart = Chart {
            title: "validation valid rate per map size".into(),
            x_label: "stage".into(),
            y_range: Some((0.0, 1.0)),
            series: by_size
                .into_iter()
                .map(|(s, points)| Series { name: format!("{s}x{s}"), points, dots: true })
                .collect(),
            x_names: state.evals.iter().map(|e| e.stage.short()).collect(),
        };
        chart.save(640, 360, &out.join("per_size.png"))?;
    }
    Ok(())
}

impl Chart {
    /// Draws the chart and writes it as a PNG file.
    fn save(&self, width: u32, height: u32, path: &Path) -> Result<(), TrainError> {
        let io = |e: String| TrainError::io(path, std::io::Error::other(e));
        let rgb = self.rgb(width, height).map_err(io)?;
        let png = canvas::png(width, height, &rgb).map_err(io)?;
        std::fs::write(path, png).map_err(|e| TrainError::io(path, e))
    }

    /// The x and y ranges: the finite points' (the stages' indices and a little room with
    /// stage names), the y range given, widened where they are a single value.
    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let pts = self.series.iter().flat_map(|s| s.points.iter().copied());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in pts.filter(|(x, y)| x.is_finite() && y.is_finite()) {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if !self.x_names.is_empty() {
            (x0, x1) = (-0.25, self.x_names.len() as f64 - 0.75);
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
        ((x0, x1), (y0, y1))
    }

    /// The chart's RGB picture: the title, a key of the series below it, then the axes and
    /// the series.
    fn rgb(&self, width: u32, height: u32) -> Result<Vec<u8>, String> {
        canvas::rgb(width, height, |root| {
            let head = canvas::style(16.0, INK, HPos::Left, VPos::Top);
            let title = canvas::wrap(root, &self.title, &head, width - 24, 1)?;
            canvas::text(root, title.first().map_or("", String::as_str), (12, 8), &head)?;
            let key_bottom = self.draw_key(root, width, 38)?;
            self.draw_axes_and_series(&root.margin(key_bottom + 6, 6, 6, 16))
        })
    }

    /// The key: each series' line (and dot) and name, one after the other from the top `y`,
    /// on as many rows as they need; returns the pixel row below it.
    fn draw_key(&self, root: &Area<'_>, width: u32, y: i32) -> Result<u32, String> {
        let label = canvas::style(13.0, INK, HPos::Left, VPos::Center);
        let (mut x, mut y) = (12, y);
        for (i, s) in self.series.iter().enumerate() {
            let color = floe_canvas::series(i);
            let (w, _) = root.estimate_text_size(&s.name, &label).map_err(err)?;
            let room = 24 + w as i32 + 18;
            if x > 12 && x + room > width as i32 - 12 {
                (x, y) = (12, y + 18);
            }
            root.draw(&PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))).map_err(err)?;
            if s.dots {
                root.draw(&Circle::new((x + 9, y), 3, color.filled())).map_err(err)?;
            }
            canvas::text(root, &s.name, (x + 24, y), &label)?;
            x += room;
        }
        Ok((y + 10) as u32)
    }

    fn draw_axes_and_series(&self, area: &Area<'_>) -> Result<(), String> {
        let ((x0, x1), (y0, y1)) = self.ranges();
        let mut chart = ChartBuilder::on(area)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        let names = &self.x_names;
        let stage_name = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let x_tick = |x: &f64| tick_label(*x, x1 - x0);
        let y_tick = |y: &f64| tick_label(*y, y1 - y0);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x_label.as_str())
            .label_style((SANS, 13).into_font().color(&INK))
            .axis_desc_style((SANS, 14).into_font().color(&INK))
            .bold_line_style(RGBColor(225, 225, 225))
            .light_line_style(WHITE)
            .x_label_formatter(&x_tick)
            .y_labels(6)
            .y_label_formatter(&y_tick);
        if !names.is_empty() {
            mesh.x_labels(names.len()).x_label_formatter(&stage_name);
        }
        mesh.draw().map_err(err)?;
        for (i, s) in self.series.iter().enumerate() {
            let color = floe_canvas::series(i);
            let points: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
            chart.draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2))).map_err(err)?;
            if s.dots || points.len() == 1 {
                chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_average_by_hand() {
        let p = [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)];
        assert_eq!(moving_average(&p, 2), vec![(0.0, 1.0), (1.0, 2.0), (2.0, 4.0), (3.0, 6.0)]);
        assert_eq!(moving_average(&p, 0), p.to_vec());
        assert_eq!((tick_label(96.0, 384.0), tick_label(25.0000001, 40.0)), ("96".into(), "25".into()));
        assert_eq!((tick_label(0.6000000001, 1.0), tick_label(-0.0, 1.0)), ("0.6".into(), "0".into()));
    }

    fn pixel(rgb: &[u8], width: u32, x: u32, y: u32) -> RGBColor {
        let i = 3 * (y * width + x) as usize;
        RGBColor(rgb[i], rgb[i + 1], rgb[i + 2])
    }

    /// The title and the key are written (ink where the text is), the series is drawn in its
    /// colour, and the PNG file has the chart's size.
    #[test]
    fn draws_text_series_and_a_png() {
        let chart = Chart {
            title: "valid rate".into(),
            x_label: "step".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![
                Series { name: "a".into(), points: vec![(0.0, 0.0), (10.0, 1.0)], dots: false },
                Series { name: "b".into(), points: vec![(5.0, 0.5), (f64::NAN, 0.2)], dots: true },
            ],
            x_names: vec![],
        };
        let (w, h) = (400, 260);
        let rgb = chart.rgb(w, h).unwrap();
        let dark = |x0: u32, x1: u32, y0: u32, y1: u32| {
            let mut n = 0;
            for (x, y) in (x0..x1).flat_map(|x| (y0..y1).map(move |y| (x, y))) {
                let RGBColor(r, g, b) = pixel(&rgb, w, x, y);
                n += usize::from(r < 128 && g < 128 && b < 128);
            }
            n
        };
        // The title, at the top left, has ink, and nothing is drawn to its right.
        assert!(dark(12, 120, 8, 28) > 40, "the title is written");
        assert_eq!(dark(200, w, 0, 28), 0);
        // The key's first name, "a", after a line of the first colour.
        assert!(dark(36, 50, 30, 46) > 5, "the key is written");
        let colored = |c: RGBColor| {
            (0..w)
                .flat_map(|x| (0..h).map(move |y| (x, y)))
                .filter(|&(x, y)| pixel(&rgb, w, x, y) == c)
                .count()
        };
        assert!(
            colored(floe_canvas::SERIES[0]) > 200 && colored(floe_canvas::SERIES[1]) > 40,
            "both series are drawn"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        chart.save(w, h, &path).unwrap();
        let png = std::fs::read(&path).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!((&png[16..20], &png[20..24]), (&w.to_be_bytes()[..], &h.to_be_bytes()[..]));
    }

    /// Stage names label the integer positions only.
    #[test]
    fn stages_name_their_positions() {
        let chart = Chart {
            title: "per size".into(),
            x_label: "stage".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![Series { name: "3x3".into(), points: vec![(0.0, 0.1), (1.0, 0.6)], dots: true }],
            x_names: vec!["untrained".into(), "warm".into()],
        };
        assert_eq!(chart.ranges(), ((-0.25, 1.25), (0.0, 1.0)));
        assert!(chart.rgb(300, 200).is_ok());
    }
}
