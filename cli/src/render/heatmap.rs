//! `floe eval --png FILE`: the valid and the optimal rate per agent count × map size as two heat
//! maps side by side, the percentage written in each cell, with the unweighted mean over map
//! sizes per agent count as a last column (as the evaluation's table). Rows are agent counts
//! (fewest at the top), columns map sizes (smallest at the left); a darker blue is a higher rate;
//! a cell without instances is grey with a dash.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{self, err, Area};

/// One agent count × map size cell of an evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateCell {
    pub agents: u32,
    /// N of an N×N map.
    pub size: u32,
    pub instances: u32,
    /// Share of the instances answered validly, 0 to 1.
    pub valid: f64,
    /// Share answered optimally, 0 to 1.
    pub optimal: f64,
}

/// The side of a cell in pixels.
pub const CELL: u32 = 64;
const MARGIN: u32 = 16;
const TITLE: u32 = 44;
/// A panel's caption and its column labels.
const CAPTION: u32 = 30;
const COLUMN_LABELS: u32 = 24;
/// The row labels' width.
const ROW_LABELS: u32 = 80;
/// The gap before the mean column.
const GAP: u32 = 10;
const BOTTOM: u32 = 30;

/// The picture's size in pixels for `agents` agent counts and `sizes` map sizes: two panels of
/// `sizes` + 1 columns (the mean) and `agents` rows of [`CELL`] pixels, with labels.
#[must_use]
pub fn picture_size(agents: usize, sizes: usize) -> (u32, u32) {
    let panel = ROW_LABELS + (sizes as u32 + 1) * CELL + GAP;
    (2 * panel + 3 * MARGIN, TITLE + CAPTION + COLUMN_LABELS + agents as u32 * CELL + BOTTOM)
}

/// The "Blues" scale from white (0) to dark blue (1).
fn shade(rate: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] =
        [(247, 251, 255), (198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 48, 107)];
    let x = rate.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The agent counts and the map sizes present, ascending.
fn axes(cells: &[RateCell]) -> (Vec<u32>, Vec<u32>) {
    let mut agents: Vec<u32> = cells.iter().map(|c| c.agents).collect();
    let mut sizes: Vec<u32> = cells.iter().map(|c| c.size).collect();
    agents.sort_unstable();
    agents.dedup();
    sizes.sort_unstable();
    sizes.dedup();
    (agents, sizes)
}

/// The PNG of the heat maps, `title` above them.
///
/// # Errors
/// No cells, a rate that is not a number from 0 to 1, two cells for one agent count and map
/// size, or a drawing failure; as text.
pub fn png(title: &str, cells: &[RateCell]) -> Result<Vec<u8>, String> {
    if cells.is_empty() {
        return Err("no evaluation cells to draw".into());
    }
    for c in cells {
        if ![c.valid, c.optimal].iter().all(|r| (0.0..=1.0).contains(r)) {
            return Err(format!("{} agents on {}×{}: rates must lie from 0 to 1", c.agents, c.size, c.size));
        }
        if cells.iter().filter(|d| d.agents == c.agents && d.size == c.size).count() > 1 {
            return Err(format!("{} agents on {}×{}: more than one cell", c.agents, c.size, c.size));
        }
    }
    let (agents, sizes) = axes(cells);
    let (width, height) = picture_size(agents.len(), sizes.len());
    let rgb = canvas::rgb(width, height, |area| {
        let head = canvas::style(20.0, BLACK, HPos::Left, VPos::Center);
        let line = canvas::wrap(area, title, &head, width - 2 * MARGIN, 1)?;
        canvas::text(
            area,
            line.first().map_or("", String::as_str),
            (MARGIN as i32, (TITLE / 2) as i32),
            &head,
        )?;
        let panel = ROW_LABELS + (sizes.len() as u32 + 1) * CELL + GAP;
        for (k, (name, rate)) in
            [("valid %", (|c: &RateCell| c.valid) as fn(&RateCell) -> f64), ("optimal %", |c| c.optimal)]
                .into_iter()
                .enumerate()
        {
            let left = MARGIN + k as u32 * (panel + MARGIN);
            draw_panel(area, cells, &agents, &sizes, (left, TITLE), name, rate)?;
        }
        let note = canvas::style(13.0, RGBColor(90, 90, 90), HPos::Left, VPos::Center);
        let y = (height - BOTTOM / 2) as i32;
        canvas::text(
            area,
            "% of each cell's instances; mean: unweighted over map sizes; grey: no instances",
            (MARGIN as i32, y),
            &note,
        )
    })?;
    canvas::png(width, height, &rgb)
}

fn draw_panel(
    area: &Area<'_>,
    cells: &[RateCell],
    agents: &[u32],
    sizes: &[u32],
    (left, top): (u32, u32),
    name: &str,
    rate: fn(&RateCell) -> f64,
) -> Result<(), String> {
    let (left, top) = (left as i32, top as i32);
    let cell = CELL as i32;
    let grid_left = left + ROW_LABELS as i32;
    let grid_top = top + (CAPTION + COLUMN_LABELS) as i32;
    let caption = canvas::style(17.0, BLACK, HPos::Left, VPos::Center);
    canvas::text(area, name, (grid_left, top + CAPTION as i32 / 2), &caption)?;
    let label = canvas::style(14.0, RGBColor(50, 50, 50), HPos::Center, VPos::Center);
    let column_x = |j: usize| {
        let gap = if j == sizes.len() { GAP as i32 } else { 0 };
        grid_left + j as i32 * cell + gap
    };
    let label_y = grid_top - COLUMN_LABELS as i32 / 2;
    for (j, z) in sizes.iter().enumerate() {
        canvas::text(area, &format!("{z}×{z}"), (column_x(j) + cell / 2, label_y), &label)?;
    }
    canvas::text(area, "mean", (column_x(sizes.len()) + cell / 2, label_y), &label)?;
    let row_label = canvas::style(14.0, RGBColor(50, 50, 50), HPos::Right, VPos::Center);
    for (i, &k) in agents.iter().enumerate() {
        let y = grid_top + i as i32 * cell;
        let agents_word = if k == 1 { "agent" } else { "agents" };
        canvas::text(area, &format!("{k} {agents_word}"), (grid_left - 8, y + cell / 2), &row_label)?;
        let row: Vec<&RateCell> = cells.iter().filter(|c| c.agents == k && c.instances > 0).collect();
        let mean = (!row.is_empty()).then(|| row.iter().map(|c| rate(c)).sum::<f64>() / row.len() as f64);
        let values = sizes
            .iter()
            .map(|&z| row.iter().find(|c| c.size == z).map(|c| rate(c)))
            .chain(std::iter::once(mean));
        for (j, value) in values.enumerate() {
            let x = column_x(j);
            let rect = [(x + 1, y + 1), (x + cell - 1, y + cell - 1)];
            match value {
                Some(v) => {
                    area.draw(&Rectangle::new(rect, shade(v).filled())).map_err(err)?;
                    let ink = if v > 0.55 { WHITE } else { BLACK };
                    let number = canvas::style(15.0, ink, HPos::Center, VPos::Center);
                    canvas::text(area, &format!("{:.1}", 100.0 * v), (x + cell / 2, y + cell / 2), &number)?;
                }
                None => {
                    area.draw(&Rectangle::new(rect, RGBColor(225, 225, 225).filled())).map_err(err)?;
                    canvas::text(area, "–", (x + cell / 2, y + cell / 2), &label)?;
                }
            }
        }
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
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// The paper's shape: 3 agents on 3×3…5×5, 4 agents on 4×4…5×5.
    fn table() -> Vec<RateCell> {
        let mut cells = Vec::new();
        for agents in 3..=4 {
            for size in agents..=5 {
                let f = f64::from(size - agents + 1) / 4.0;
                cells.push(RateCell { agents, size, instances: 8, valid: f, optimal: f / 2.0 });
            }
        }
        cells
    }

    /// The colour of the pixel at (x, y).
    fn pixel(rgb: &[u8], width: u32, (x, y): (u32, u32)) -> [u8; 3] {
        let i = (y * width + x) as usize * 3;
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    }

    #[test]
    fn the_heat_map_has_its_size_and_shows_its_rates() {
        let cells = table();
        let bytes = png("floe eval: test", &cells).expect("drawn");
        let (w, h, rgb) = decode(&bytes);
        // Two panels of 3 sizes + the mean: 2·(80 + 4·64 + 10) + 3·16 wide; 2 agent counts:
        // 44 + 30 + 24 + 2·64 + 30 high.
        assert_eq!((w, h), picture_size(2, 3));
        assert_eq!((w, h), (740, 256));
        // The cell of 4 agents on 3×3 has no instances: grey, at row 1, column 0 of the first
        // panel (a pixel near its corner, clear of the dash).
        let grid_left = MARGIN + ROW_LABELS;
        let grid_top = TITLE + CAPTION + COLUMN_LABELS;
        assert_eq!(pixel(&rgb, w, (grid_left + 4, grid_top + CELL + 4)), [225, 225, 225]);
        // 3 agents on 5×5 is valid at 3/4: its shade, in the first panel; optimal at 3/8 in the
        // second.
        let panel = ROW_LABELS + 4 * CELL + GAP;
        let corner = |k: u32, col: u32, row: u32| {
            (grid_left + k * (panel + MARGIN) + col * CELL + 4, grid_top + row * CELL + 4)
        };
        let RGBColor(r, g, b) = shade(0.75);
        assert_eq!(pixel(&rgb, w, corner(0, 2, 0)), [r, g, b]);
        let RGBColor(r, g, b) = shade(0.375);
        assert_eq!(pixel(&rgb, w, corner(1, 2, 0)), [r, g, b]);
        // The mean column of 4 agents: (2/4 + 1/4) / 2 valid.
        let RGBColor(r, g, b) = shade(0.375);
        assert_eq!(pixel(&rgb, w, (corner(0, 3, 1).0 + GAP, corner(0, 3, 1).1)), [r, g, b]);
    }

    #[test]
    fn other_rates_give_other_pixels_and_more_rows_a_taller_picture() {
        let cells = table();
        let (_, _, a) = decode(&png("t", &cells).expect("drawn"));
        let mut changed = cells.clone();
        changed[0].valid = 0.0;
        let (_, _, b) = decode(&png("t", &changed).expect("drawn"));
        assert_ne!(a, b, "one rate changed, the picture did not");
        let mut more = cells.clone();
        more.push(RateCell { agents: 5, size: 5, instances: 3, valid: 1.0, optimal: 1.0 });
        let (w, h, _) = decode(&png("t", &more).expect("drawn"));
        assert_eq!((w, h), picture_size(3, 3));
        assert_eq!(h, 256 + CELL);
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(png("t", &[]).unwrap_err().contains("no evaluation cells"));
        let mut cells = table();
        cells[1].optimal = f64::NAN;
        assert!(png("t", &cells).unwrap_err().contains("rates must lie from 0 to 1"));
        let mut cells = table();
        cells.push(cells[0]);
        assert!(png("t", &cells).unwrap_err().contains("more than one cell"));
    }

    #[test]
    fn the_scale_runs_from_white_to_dark_blue() {
        assert_eq!(shade(0.0), RGBColor(247, 251, 255));
        assert_eq!(shade(1.0), RGBColor(8, 48, 107));
        assert_eq!(shade(0.5), RGBColor(107, 174, 214));
        let sum = |c: RGBColor| u32::from(c.0) + u32::from(c.1) + u32::from(c.2);
        assert!((0..10).all(|i| sum(shade(f64::from(i) / 10.0)) > sum(shade(f64::from(i + 1) / 10.0))));
    }
}
