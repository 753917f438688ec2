//! `floe experiment`'s chart, `<out>/experiment.png`: each contender's paired difference from
//! `fixed` on the whole suite ("all"), in percentage points, the valid rate in the top panel and
//! the optimal rate below: a bar for the mean difference and whiskers of ±2 standard errors (the
//! table's "resolved" threshold), green where the difference is resolved better, red where
//! resolved worse, blue-grey where not resolved; the warm start, paired the same way, in light
//! grey (how far `fixed`'s rounds took it). The numbers are the table's
//! (`floe_train::experiment::paired_difference`): the mean over every (seed, instance) pair of
//! the difference in outcome, and its standard error clustered by seed and by instance.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{self, err, Area, SANS};

/// The picture's size in pixels.
pub const WIDTH: u32 = 1100;
pub const HEIGHT: u32 = 760;

/// Whiskers reach this many standard errors either side (the table's `RESOLVED_SE`).
pub const WHISKER_SE: f64 = 2.0;

/// One bar pair of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub name: String,
    /// The valid rate's paired difference from `fixed`: mean and standard error, in points.
    pub valid: (f64, f64),
    /// The optimal rate's.
    pub optimal: (f64, f64),
    /// A reference row (the warm start), not a contender.
    pub reference: bool,
}

/// A bar's colour: a reference row, not resolved, resolved better or resolved worse.
fn color(reference: bool, (mean, se): (f64, f64)) -> RGBColor {
    if reference {
        RGBColor(185, 185, 185)
    } else if mean.abs() <= WHISKER_SE * se {
        RGBColor(120, 144, 170)
    } else if mean > 0.0 {
        RGBColor(44, 160, 44)
    } else {
        RGBColor(214, 39, 40)
    }
}

/// The chart's PNG, `title` above it.
///
/// # Errors
/// No rows, a difference that is not a finite number, or a drawing failure; as text.
pub fn png(title: &str, rows: &[Difference]) -> Result<Vec<u8>, String> {
    if rows.is_empty() {
        return Err("no contender to compare with fixed".into());
    }
    if let Some(d) =
        rows.iter().find(|d| ![d.valid.0, d.valid.1, d.optimal.0, d.optimal.1].iter().all(|x| x.is_finite()))
    {
        return Err(format!("{}: the difference is not a number", d.name));
    }
    let rgb = canvas::rgb(WIDTH, HEIGHT, |root| {
        let head = canvas::style(20.0, BLACK, HPos::Left, VPos::Center);
        let line = canvas::wrap(root, title, &head, WIDTH - 32, 1)?;
        canvas::text(root, line.first().map_or("", String::as_str), (16, 22), &head)?;
        let note = canvas::style(14.0, RGBColor(80, 80, 80), HPos::Left, VPos::Center);
        canvas::text(
            root,
            "bars: mean paired difference from fixed over every (seed, instance); whiskers: ±2 standard errors; \
             green / red: resolved better / worse; grey: the warm start",
            (16, 50),
            &note,
        )?;
        let body = root.margin(66, 6, 6, 6);
        let panels = body.split_evenly((2, 1));
        panel(&panels[0], rows, "valid rate on all: contender − fixed (percentage points)", |d| d.valid)?;
        panel(&panels[1], rows, "optimal rate on all: contender − fixed (percentage points)", |d| d.optimal)
    })?;
    canvas::png(WIDTH, HEIGHT, &rgb)
}

fn panel(
    area: &Area<'_>,
    rows: &[Difference],
    caption: &str,
    of: fn(&Difference) -> (f64, f64),
) -> Result<(), String> {
    let reach = rows
        .iter()
        .map(|d| {
            let (m, se) = of(d);
            m.abs() + WHISKER_SE * se
        })
        .fold(0.0, f64::max);
    let top = (reach * 1.3).max(1.0);
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (SANS, 17))
        .margin(8)
        .margin_right(20)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, -top..top)
        .map_err(err)?;
    let name_at = |x: &f64| -> String {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            rows[i as usize].name.clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(RGBColor(215, 215, 215).stroke_width(1))
        .light_line_style(RGBColor(248, 248, 248).stroke_width(1))
        .x_labels(n + 1)
        .y_labels(9)
        .x_label_formatter(&name_at)
        .y_label_formatter(&|y: &f64| if y.abs() < 1e-9 { "0".into() } else { format!("{y:+.1}") })
        .label_style((SANS, 15))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 0.0), (n as f64 - 0.5, 0.0)],
            BLACK.stroke_width(1),
        )))
        .map_err(err)?;
    for (i, d) in rows.iter().enumerate() {
        let x = i as f64;
        let (m, se) = of(d);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x - 0.28, 0.0), (x + 0.28, m)],
                color(d.reference, (m, se)).filled(),
            )))
            .map_err(err)?;
        let (lo, hi) = (m - WHISKER_SE * se, m + WHISKER_SE * se);
        let whisker = BLACK.stroke_width(2);
        chart
            .draw_series([
                PathElement::new(vec![(x, lo), (x, hi)], whisker),
                PathElement::new(vec![(x - 0.08, lo), (x + 0.08, lo)], whisker),
                PathElement::new(vec![(x - 0.08, hi), (x + 0.08, hi)], whisker),
            ])
            .map_err(err)?;
        // The numbers beyond the whisker's far end.
        let (y, v, dy) = if m >= 0.0 { (hi, VPos::Bottom, -4) } else { (lo, VPos::Top, 4) };
        let label = canvas::style(14.0, BLACK, HPos::Center, v);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, y)) + Text::new(format!("{m:+.2} ± {se:.2}"), (0, dy), label),
            ))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut buf).expect("a frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn rows() -> Vec<Difference> {
        vec![
            Difference {
                name: "warm start".into(),
                valid: (-20.0, 2.0),
                optimal: (-5.0, 1.0),
                reference: true,
            },
            Difference {
                name: "difficulty-scaling".into(),
                valid: (6.0, 1.5),
                optimal: (1.0, 1.0),
                reference: false,
            },
            Difference { name: "engineer".into(), valid: (-1.0, 1.5), optimal: (0.5, 0.8), reference: false },
        ]
    }

    fn count(rgb: &[u8], c: RGBColor) -> usize {
        rgb.chunks_exact(3).filter(|p| p == &[c.0, c.1, c.2]).count()
    }

    #[test]
    fn the_chart_has_its_size_and_a_bar_per_row_in_its_colour() {
        let (w, h, rgb) = decode(&png("floe experiment: test", &rows()).expect("drawn"));
        assert_eq!((w, h), (WIDTH, HEIGHT));
        // The warm start's bar (grey), difficulty-scaling's (resolved better: green), the
        // engineer's (not resolved: blue-grey); no red bar.
        for (c, what) in [
            (RGBColor(185, 185, 185), "the warm start's grey"),
            (RGBColor(44, 160, 44), "resolved better's green"),
            (RGBColor(120, 144, 170), "not resolved's blue-grey"),
        ] {
            assert!(count(&rgb, c) > 200, "{what} is missing");
        }
        assert_eq!(count(&rgb, RGBColor(214, 39, 40)), 0);
    }

    #[test]
    fn other_differences_give_other_pixels() {
        let (_, _, a) = decode(&png("t", &rows()).expect("drawn"));
        let mut changed = rows();
        changed[2].valid = (-9.0, 1.5);
        let (_, _, b) = decode(&png("t", &changed).expect("drawn"));
        assert_ne!(a, b);
        // Now resolved worse: a red bar.
        assert!(count(&b, RGBColor(214, 39, 40)) > 200);
        assert!(png("t", &[]).is_err());
        changed[1].optimal.1 = f64::INFINITY;
        assert!(png("t", &changed).unwrap_err().contains("difficulty-scaling"));
    }
}
