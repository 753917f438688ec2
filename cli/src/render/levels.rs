//! `floe levels`' pictures: the learning curves (success on the hard held-out levels against
//! environment steps, the mean over seeds with a band of ±1 standard error across seeds, one
//! colour per contender), and where each sampler put its levels (a heat map per contender of the
//! episodes it played by map size × hole ratio, and a bar row by agent count), and the spread of
//! success over the hard held-out levels (each contender's levels sorted from its worst: the
//! left end is the tail CVaR reads).

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{self, err, SANS};

/// One contender's curves, one per seed: (environment steps, success rate 0 to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Curves {
    pub name: String,
    pub seeds: Vec<Vec<(u64, f64)>>,
}

/// A chart of the line pictures: f64 by f64, on the canvas' bitmap.
type Chart<'a, 'b> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// `root` with `title` written at its top, and the area below it.
fn titled<'b>(root: &canvas::Area<'b>, title: &str) -> Result<canvas::Area<'b>, String> {
    let head = canvas::style(19.0, BLACK, HPos::Left, VPos::Center);
    canvas::text(root, title, (16, 20), &head)?;
    Ok(root.margin(40, 8, 8, 8))
}

/// A line chart over `body` spanning `x` by `y`, its axes' labels left to the caller's mesh.
fn line_chart<'a, 'b: 'a>(
    body: &'a canvas::Area<'b>,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<Chart<'a, 'b>, String> {
    ChartBuilder::on(body)
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)
        .map_err(err)
}

/// One series' line, in `col`, with its name in the legend.
fn labelled_line<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    points: impl IntoIterator<Item = (f64, f64)>,
    col: RGBColor,
    name: &str,
) -> Result<(), String> {
    chart
        .draw_series(LineSeries::new(points, col.stroke_width(2)))
        .map_err(err)?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(3)));
    Ok(())
}

/// The legend of the series drawn, in the chart's upper left corner.
fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((SANS, 14))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

/// Points of a band: (environment steps, mean, standard error).
type Band = Vec<(f64, f64, f64)>;

/// The mean and standard error over seeds at each point the seeds share (by index).
fn band(seeds: &[Vec<(u64, f64)>]) -> Band {
    let points = seeds.iter().map(Vec::len).min().unwrap_or(0);
    (0..points)
        .map(|i| {
            let xs: Vec<f64> = seeds.iter().map(|s| s[i].1).collect();
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let var =
                if n > 1.0 { xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
            (seeds[0][i].0 as f64, mean, (var / n).sqrt())
        })
        .collect()
}

/// The learning curves' PNG.
///
/// # Errors
/// No curve, or a drawing failure; as text.
pub fn curves_png(title: &str, rows: &[Curves]) -> Result<Vec<u8>, String> {
    let (w, h) = (1000u32, 620u32);
    let lines: Vec<(usize, &Curves, Band)> = rows
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c, band(&c.seeds)))
        .filter(|(_, _, b)| !b.is_empty())
        .collect();
    if lines.is_empty() {
        return Err("no learning curve to draw".into());
    }
    let x_max = lines.iter().flat_map(|(_, _, b)| b.iter().map(|p| p.0)).fold(1.0, f64::max);
    let y_max =
        lines.iter().flat_map(|(_, _, b)| b.iter().map(|p| p.1 + p.2)).fold(0.05, f64::max).min(1.0) * 100.0;
    let rgb = canvas::rgb(w, h, |root| {
        let body = titled(root, title)?;
        let mut chart = line_chart(&body, 0.0..x_max, 0.0..(y_max * 1.1).max(1.0))?;
        chart
            .configure_mesh()
            .x_desc("environment steps (millions)")
            .y_desc("success on the hard held-out levels (%)")
            .x_label_formatter(&|x: &f64| format!("{:.1}", x / 1e6))
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 15))
            .draw()
            .map_err(err)?;
        for (i, c, b) in &lines {
            let col = floe_canvas::series(*i);
            let upper: Vec<(f64, f64)> = b.iter().map(|p| (p.0, 100.0 * (p.1 + p.2))).collect();
            let lower: Vec<(f64, f64)> =
                b.iter().rev().map(|p| (p.0, 100.0 * (p.1 - p.2).max(0.0))).collect();
            let area: Vec<(f64, f64)> = upper.into_iter().chain(lower).collect();
            chart.draw_series(std::iter::once(Polygon::new(area, col.mix(0.18).filled()))).map_err(err)?;
            labelled_line(&mut chart, b.iter().map(|p| (p.0, 100.0 * p.1)), col, &c.name)?;
        }
        legend(&mut chart)
    })?;
    canvas::png(w, h, &rgb)
}

/// One contender's success on each held-out level (0 to 1; the mean over its seeds).
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub name: String,
    pub levels: Vec<f64>,
}

/// The spread's PNG: per contender, its levels' success sorted from the lowest, against the share
/// of levels (the quantile function of the per-level success).
///
/// # Errors
/// No levels, or a drawing failure; as text.
pub fn spread_png(title: &str, rows: &[Spread]) -> Result<Vec<u8>, String> {
    let (w, h) = (1000u32, 620u32);
    let rows: Vec<(usize, &Spread)> = rows.iter().enumerate().filter(|(_, r)| !r.levels.is_empty()).collect();
    if rows.is_empty() {
        return Err("no held-out level to draw".into());
    }
    let rgb = canvas::rgb(w, h, |root| {
        let body = titled(root, title)?;
        let mut chart = line_chart(&body, 0.0..100.0, 0.0..100.0)?;
        chart
            .configure_mesh()
            .x_desc("share of the hard held-out levels, from each contender's worst (%)")
            .y_desc("success on the level (%)")
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 15))
            .draw()
            .map_err(err)?;
        for (i, r) in &rows {
            let col = floe_canvas::series(*i);
            let mut sorted = r.levels.clone();
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len() as f64;
            // A step a level: from its start to its end along the share axis.
            let points = sorted.iter().enumerate().flat_map(|(k, &v)| {
                [(100.0 * k as f64 / n, 100.0 * v), (100.0 * (k + 1) as f64 / n, 100.0 * v)]
            });
            labelled_line(&mut chart, points, col, &r.name)?;
        }
        legend(&mut chart)
    })?;
    canvas::png(w, h, &rgb)
}

/// One contender's placement: episodes by (map size, agents, hole percent, episodes).
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub name: String,
    pub played: Vec<(u32, u32, u32, u64)>,
}

/// The hole-ratio buckets of the heat maps: 0–4 %, 5–9 %, … (width 5 points).
const BUCKET: u32 = 5;

/// The placement heat maps' PNG: per contender, a panel of map size (columns) × hole ratio
/// (rows, 5-point buckets) with the share of its episodes in each cell (darker: more), and below
/// it the share by agent count.
///
/// # Errors
/// Nothing to draw, or a drawing failure; as text.
pub fn placement_png(title: &str, rows: &[Placement]) -> Result<Vec<u8>, String> {
    let rows: Vec<&Placement> = rows.iter().filter(|p| p.played.iter().any(|x| x.3 > 0)).collect();
    if rows.is_empty() {
        return Err("no episodes to place".into());
    }
    let sizes: Vec<u32> = {
        let mut s: Vec<u32> = rows.iter().flat_map(|p| p.played.iter().map(|x| x.0)).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let agents: Vec<u32> = {
        let mut a: Vec<u32> = rows.iter().flat_map(|p| p.played.iter().map(|x| x.1)).collect();
        a.sort_unstable();
        a.dedup();
        a
    };
    let buckets = rows.iter().flat_map(|p| p.played.iter().map(|x| x.2 / BUCKET)).max().unwrap_or(0) + 1;
    let cell = 22u32;
    let panel_w = 70 + cell * sizes.len() as u32;
    let panel_h = 40 + cell * buckets + 30 + cell + 30;
    let cols = rows.len().min(3) as u32;
    let lines = (rows.len() as u32).div_ceil(cols);
    let (w, h) = ((panel_w + 20) * cols + 20, 50 + (panel_h + 20) * lines);
    let rgb = canvas::rgb(w, h, |root| {
        let head = canvas::style(19.0, BLACK, HPos::Left, VPos::Center);
        canvas::text(root, title, (16, 22), &head)?;
        let small = canvas::style(12.0, BLACK, HPos::Center, VPos::Center);
        let label = canvas::style(14.0, BLACK, HPos::Left, VPos::Center);
        for (i, p) in rows.iter().enumerate() {
            let (cx, cy) = (20 + (i as u32 % cols) * (panel_w + 20), 50 + (i as u32 / cols) * (panel_h + 20));
            let total: u64 = p.played.iter().map(|x| x.3).sum::<u64>().max(1);
            canvas::text(
                root,
                &format!("{} ({} episodes)", p.name, total),
                (cx as i32, cy as i32 + 10),
                &label,
            )?;
            let grid_y = cy + 30;
            let mut by_cell = vec![0u64; sizes.len() * buckets as usize];
            let mut by_agents = vec![0u64; agents.len()];
            for &(size, k, hole, n) in &p.played {
                let (Some(si), Some(ai)) =
                    (sizes.iter().position(|&s| s == size), agents.iter().position(|&a| a == k))
                else {
                    continue;
                };
                by_cell[(hole / BUCKET) as usize * sizes.len() + si] += n;
                by_agents[ai] += n;
            }
            let most = *by_cell.iter().max().unwrap_or(&1).max(&1) as f64;
            for b in 0..buckets {
                let y = grid_y + (buckets - 1 - b) * cell;
                canvas::text(
                    root,
                    &format!("{}%", b * BUCKET),
                    (cx as i32 + 40, (y + cell / 2) as i32),
                    &canvas::style(11.0, BLACK, HPos::Right, VPos::Center),
                )?;
                for si in 0..sizes.len() {
                    let v = by_cell[b as usize * sizes.len() + si] as f64 / most;
                    let shade = (255.0 - 215.0 * v) as u8;
                    let x = cx + 50 + si as u32 * cell;
                    root.draw(&Rectangle::new(
                        [(x as i32, y as i32), ((x + cell - 1) as i32, (y + cell - 1) as i32)],
                        RGBColor(shade, shade, 255).filled(),
                    ))
                    .map_err(err)?;
                }
            }
            let axis_y = grid_y + buckets * cell + 10;
            for (si, s) in sizes.iter().enumerate() {
                canvas::text(
                    root,
                    &s.to_string(),
                    ((cx + 50 + si as u32 * cell + cell / 2) as i32, axis_y as i32),
                    &small,
                )?;
            }
            let bar_y = axis_y + 18;
            let most_a = *by_agents.iter().max().unwrap_or(&1).max(&1) as f64;
            for (ai, a) in agents.iter().enumerate() {
                let v = by_agents[ai] as f64 / most_a;
                let shade = (255.0 - 215.0 * v) as u8;
                let x = cx + 50 + ai as u32 * cell;
                root.draw(&Rectangle::new(
                    [(x as i32, bar_y as i32), ((x + cell - 1) as i32, (bar_y + cell - 1) as i32)],
                    RGBColor(255, shade, shade).filled(),
                ))
                .map_err(err)?;
                canvas::text(
                    root,
                    &a.to_string(),
                    ((x + cell / 2) as i32, (bar_y + cell + 8) as i32),
                    &small,
                )?;
            }
            canvas::text(
                root,
                "agents",
                (cx as i32 + 2, (bar_y + cell / 2) as i32),
                &canvas::style(11.0, BLACK, HPos::Left, VPos::Center),
            )?;
        }
        Ok(())
    })?;
    canvas::png(w, h, &rgb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pictures_draw_and_refuse_nothing_to_draw() {
        let curves = [
            Curves {
                name: "uniform".into(),
                seeds: vec![vec![(1000, 0.1), (2000, 0.3)], vec![(1000, 0.2), (2000, 0.4)]],
            },
            Curves { name: "plr".into(), seeds: vec![vec![(1000, 0.2), (2000, 0.5)]] },
        ];
        let png = curves_png("test", &curves).expect("drawn");
        assert_eq!(&png[1..4], b"PNG");
        assert!(curves_png("test", &[]).is_err());
        let b = band(&curves[0].seeds);
        assert!((b[1].1 - 0.35).abs() < 1e-12 && (b[1].2 - 0.05).abs() < 1e-12, "{b:?}");
        let placed = [Placement { name: "plr".into(), played: vec![(5, 2, 0, 10), (16, 8, 40, 3)] }];
        let png = placement_png("test", &placed).expect("drawn");
        assert_eq!(&png[1..4], b"PNG");
        assert!(placement_png("test", &[Placement { name: "x".into(), played: vec![] }]).is_err());
        let spread = [Spread { name: "plr".into(), levels: vec![0.0, 0.25, 1.0] }];
        assert_eq!(&spread_png("test", &spread).expect("drawn")[1..4], b"PNG");
        assert!(spread_png("test", &[Spread { name: "x".into(), levels: vec![] }]).is_err());
    }
}
