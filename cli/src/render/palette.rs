//! The GIF's palette: a frame's colours, at most 256, and its pixels as indices into them
//! (`floe render --gif`, [`super::board`]).

use std::collections::HashMap;

/// A GIF frame's palette (RGB, at most 256 colours) and its pixels as indices into it. A
/// picture is mostly flat colours, with few pixels of the blends at the edges of text and
/// discs: the palette is the picture's 256 most frequent colours, exact, and any other colour
/// takes the nearest of them. (A quantiser such as NeuQuant would shift the flat colours and
/// could give a blend the failure's red.)
pub fn palette_and_indices(rgb: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut counts: HashMap<[u8; 3], u32> = HashMap::new();
    for p in rgb.chunks_exact(3) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    let mut by_count: Vec<([u8; 3], u32)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let palette: Vec<[u8; 3]> = by_count.iter().take(256).map(|&(c, _)| c).collect();
    let mut index: HashMap<[u8; 3], u8> = palette.iter().enumerate().map(|(i, &c)| (c, i as u8)).collect();
    let nearest = |c: [u8; 3]| -> u8 {
        let d = |p: &[u8; 3]| (0..3).map(|k| (i32::from(p[k]) - i32::from(c[k])).pow(2)).sum::<i32>();
        palette.iter().enumerate().min_by_key(|(_, p)| d(p)).map_or(0, |(i, _)| i as u8)
    };
    let pixels = rgb
        .chunks_exact(3)
        .map(|p| {
            let c = [p[0], p[1], p[2]];
            *index.entry(c).or_insert_with(|| nearest(c))
        })
        .collect();
    (palette.concat(), pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixels(colors: &[[u8; 3]]) -> Vec<u8> {
        colors.concat()
    }

    /// Up to 256 colours, each is kept exactly, most frequent first, and every pixel indexes its
    /// own colour.
    #[test]
    fn few_colours_are_kept_exactly() {
        let (ice, ink, red) = ([214, 234, 248], [40, 40, 40], [220, 20, 60]);
        let rgb = pixels(&[ice, ink, ice, red, ice, ink]);
        let (palette, idx) = palette_and_indices(&rgb);
        assert_eq!(palette, pixels(&[ice, ink, red]));
        assert_eq!(idx, vec![0, 1, 0, 2, 0, 1]);
        // Equal counts: by colour, so the palette does not depend on the hash map's order.
        let (palette, _) = palette_and_indices(&pixels(&[[9, 9, 9], [1, 1, 1]]));
        assert_eq!(palette, pixels(&[[1, 1, 1], [9, 9, 9]]));
        assert_eq!(palette_and_indices(&[]), (vec![], vec![]));
    }

    /// Beyond 256 colours the 256 most frequent stay exact and each rarer colour takes the
    /// nearest of them.
    #[test]
    fn rare_colours_take_the_nearest_frequent_one() {
        // 256 grey levels twice each, then two rare colours once each.
        let mut colors: Vec<[u8; 3]> = (0..=255u8).flat_map(|g| [[g, g, g]; 2]).collect();
        colors.push([250, 0, 0]);
        colors.push([3, 5, 4]);
        let (palette, idx) = palette_and_indices(&pixels(&colors));
        assert_eq!(palette.len(), 256 * 3);
        for (i, c) in colors[..512].iter().enumerate() {
            assert_eq!(&palette[3 * idx[i] as usize..][..3], c, "pixel {i}");
        }
        let nearest = |i: usize| palette[3 * idx[i] as usize..][..3].to_vec();
        // (250, 0, 0) is nearest the grey (83, 83, 83); (3, 5, 4) is nearest (4, 4, 4).
        assert_eq!(nearest(512), vec![83, 83, 83]);
        assert_eq!(nearest(513), vec![4, 4, 4]);
    }
}
