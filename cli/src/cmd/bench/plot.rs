//! `sweep.png`: one column per swept factor, agent-steps/s in the top row and bytes per
//! agent-step in the bottom one. Drawn with plotters on floe-canvas (an RGB buffer, the embedded
//! font, PNG), so no system font is needed.

use floe_canvas::{self as canvas, SANS};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One measured point: the swept factor's value, agent-steps/s, bytes per agent-step.
pub type Point = (f64, f64, f64);

/// One column of the picture: a swept factor, named by its key (`envs`, …) and its axis label,
/// on a log2 axis or not, and its points.
pub struct Column {
    pub key: &'static str,
    pub label: &'static str,
    pub log2: bool,
    pub points: Vec<Point>,
}

/// The picture's size in pixels.
pub const WIDTH: u32 = 1600;
pub const HEIGHT: u32 = 900;

/// The PNG file of the sweep's plot.
pub fn png(title: &str, columns: &[Column]) -> Result<Vec<u8>, String> {
    let rgb = canvas::rgb(WIDTH, HEIGHT, |root| {
        let root = root.titled(title, (canvas::SANS, 24)).map_err(canvas::err)?;
        let cols = columns.len().max(1);
        let panels = root.split_evenly((2, cols));
        for (i, column) in columns.iter().enumerate() {
            panel(&panels[i], column, Row::Rate)?;
            panel(&panels[cols + i], column, Row::Bytes)?;
        }
        Ok(())
    })?;
    canvas::png(WIDTH, HEIGHT, &rgb)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    Rate,
    Bytes,
}

/// A number with an SI suffix and at most three significant digits: 1.5M, 250k, 12.
fn si(v: f64) -> String {
    let (scaled, suffix) = match v.abs() {
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if scaled.abs() >= 100.0 || scaled == scaled.round() {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{scaled:.digits$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    format!("{text}{suffix}")
}

fn panel(area: &DrawingArea<BitMapBackend<'_>, Shift>, column: &Column, row: Row) -> Result<(), String> {
    let points = &column.points;
    let x_of = |v: f64| if column.log2 { v.max(1e-9).log2() } else { v };
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|&(v, rate, bytes)| (x_of(v), if row == Row::Rate { rate } else { bytes }))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let (lo, hi) = xy.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.0), h.max(p.0)));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.04).max(0.3);
    let (x0, x1) = (lo - pad, hi + pad);
    let ymax = xy.iter().map(|p| p.1).fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.12 } else { 1.0 };
    let (caption, y_desc, color) = match row {
        Row::Rate => (format!("agent-steps/s by {}", column.key), "agent-steps/s", BLUE),
        Row::Bytes => (format!("bytes per agent-step by {}", column.key), "bytes per agent-step", RED),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (SANS, 20))
        .margin(10)
        .margin_right(22)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, 0f64..ymax)
        .map_err(|e| e.to_string())?;
    // One key point per integer of the axis (a power of two on a log2 axis); labels only at the
    // measured values, every `stride`-th of them so that they do not run into each other.
    let ticks = (x1.floor() - x0.ceil()) as usize + 1;
    let stride = xy.len().div_ceil(6).max(1);
    let x_label = |x: &f64| -> String {
        points
            .iter()
            .enumerate()
            .find(|(_, p)| (x_of(p.0) - x).abs() < 0.02)
            .filter(|(i, _)| i % stride == 0 || *i + 1 == points.len())
            .map(|(_, p)| format!("{}", p.0))
            .unwrap_or_default()
    };
    let y_label = |y: &f64| si(*y);
    let x_desc =
        if column.log2 { format!("{} (log2 scale)", column.label) } else { column.label.to_string() };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(RGBColor(205, 205, 205).stroke_width(1))
        .light_line_style(RGBColor(240, 240, 240).stroke_width(1))
        .x_labels(ticks.max(2))
        .y_labels(6)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((SANS, 15))
        .axis_desc_style((SANS, 16))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(LineSeries::new(xy.iter().copied(), color.stroke_width(2)))
        .map_err(|e| e.to_string())?;
    chart.draw_series(xy.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(|e| e.to_string())?;
    Ok(())
}
