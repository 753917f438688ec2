//! What floe's pictures share, whichever crate draws them (the CLI's boards, heat maps and
//! charts, the trainer's learning curves): the embedded font, an RGB buffer that plotters draws
//! into with its bitmap backend, text that wraps, and PNG encoding. The text uses DejaVu Sans
//! embedded in the binary (ab_glyph), so no system font is needed at run time.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A picture being drawn, in pixel coordinates.
pub type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// DejaVu Sans (Bitstream Vera license: canvas/assets/DejaVuSans-LICENSE.txt).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family name the embedded font is registered under.
pub const SANS: &str = "sans-serif";

/// Colours for the series of a chart (learning curves, contenders), in order.
pub const SERIES: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Series `i`'s colour, the palette repeating after its end.
#[must_use]
pub fn series(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// A drawing error as text.
pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Draws a `width` × `height` picture with `paint` on a white ground and returns its RGB bytes
/// (row by row, three bytes a pixel).
pub fn rgb(
    width: u32,
    height: u32,
    paint: impl FnOnce(&Area<'_>) -> Result<(), String>,
) -> Result<Vec<u8>, String> {
    plotters::style::register_font(SANS, FontStyle::Normal, FONT)
        .map_err(|_| "the embedded font does not load".to_string())?;
    let mut buf = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        paint(&root)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// The PNG file of an RGB picture.
pub fn png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(err)?;
    w.write_image_data(rgb).map_err(err)?;
    w.finish().map_err(err)?;
    Ok(out)
}

/// The text style of `size` pixels in `color`, anchored at `h` / `v`.
pub fn style(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (SANS, size).into_font().color(&color).pos(Pos::new(h, v))
}

/// Writes `text` at `at` (the anchor's pixel).
pub fn text(area: &Area<'_>, text: &str, at: (i32, i32), style: &TextStyle<'_>) -> Result<(), String> {
    area.draw_text(text, style, at).map_err(err)
}

/// `text` broken at spaces into lines at most `width` pixels wide (a word wider than that gets a
/// line of its own), and at most `max_lines` of them: the last one kept ends with "…" when the
/// text goes on.
pub fn wrap(
    area: &Area<'_>,
    text: &str,
    style: &TextStyle<'_>,
    width: u32,
    max_lines: usize,
) -> Result<Vec<String>, String> {
    let fits = |s: &str| area.estimate_text_size(s, style).map(|(w, _)| w <= width).map_err(err);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let longer = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if line.is_empty() || fits(&longer)? {
            line = longer;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            while !last.is_empty() && !fits(&format!("{last} …"))? {
                last.pop();
            }
            last.push_str(" …");
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded font draws text (ink where it is written, none elsewhere), and the PNG
    /// decodes to the same pixels.
    #[test]
    fn text_is_drawn_and_the_png_decodes() {
        let (w, h) = (120, 40);
        let rgb = rgb(w, h, |a| text(a, "floe", (4, 20), &style(18.0, BLACK, HPos::Left, VPos::Center)))
            .expect("drawn");
        let ink = |x0: u32, x1: u32| {
            (x0..x1)
                .flat_map(|x| (0..h).map(move |y| (x, y)))
                .filter(|&(x, y)| {
                    let i = 3 * (y * w + x) as usize;
                    rgb[i..i + 3].iter().all(|&c| c < 100)
                })
                .count()
        };
        assert!(ink(0, 60) > 30, "text is drawn");
        assert_eq!(ink(80, w), 0);
        let bytes = png(w, h, &rgb).expect("encoded");
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
        let mut back = vec![0; reader.output_buffer_size().expect("a size")];
        reader.next_frame(&mut back).expect("a frame");
        assert_eq!(back, rgb);
    }
}
