//! Grids of frozen cells (`F`) and holes (`H`), addressed by (row, col) or by a `u32` cell index
//! `row * width + col`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::error::InstanceError;
use crate::moves::Move;

/// A cell index: `row * width + col`.
pub type Cell = u32;

/// Distance value for cells that cannot be reached.
pub const UNREACHABLE: u32 = u32::MAX;

/// Largest grid side floe accepts.
pub const MAX_SIDE: usize = 4096;

/// A (row, col) position, 0-based from the top-left; serialised as `[row, col]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "[u32; 2]", into = "[u32; 2]")]
pub struct Pos {
    pub row: u32,
    pub col: u32,
}

impl Pos {
    #[must_use]
    pub const fn new(row: u32, col: u32) -> Self {
        Self { row, col }
    }
}

impl From<[u32; 2]> for Pos {
    fn from([row, col]: [u32; 2]) -> Self {
        Self { row, col }
    }
}

impl From<Pos> for [u32; 2] {
    fn from(p: Pos) -> Self {
        [p.row, p.col]
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.row, self.col)
    }
}

/// Whether a signed (row, col) lies on a grid `width` × `height`: the bounds rule, used by
/// [`Grid::in_bounds`], the verification kernel and the engine's padded maps.
#[inline(always)]
#[must_use]
pub fn on_grid(width: u32, height: u32, row: i64, col: i64) -> bool {
    (0..i64::from(height)).contains(&row) && (0..i64::from(width)).contains(&col)
}

/// A W×H grid whose holes are a bit set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grid {
    width: u32,
    height: u32,
    holes: Vec<u64>,
}

impl Grid {
    /// An all-frozen grid.
    ///
    /// # Panics
    /// If a side is zero or larger than [`MAX_SIDE`].
    #[must_use]
    pub fn new(width: u32, height: u32) -> Self {
        assert!(width > 0 && height > 0 && width as usize <= MAX_SIDE && height as usize <= MAX_SIDE);
        let cells = (width * height) as usize;
        Self { width, height, holes: vec![0; cells.div_ceil(64)] }
    }

    /// Parses rows of `F`/`H` (top to bottom).
    ///
    /// # Errors
    /// Empty or ragged grids, oversize grids and characters other than `F` and `H`.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Result<Self, InstanceError> {
        let height = rows.len();
        let width = rows.first().map_or(0, |r| r.as_ref().chars().count());
        if height == 0 || width == 0 {
            return Err(InstanceError::EmptyGrid);
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(InstanceError::GridTooLarge { width, height, max: MAX_SIDE });
        }
        let mut grid = Grid::new(width as u32, height as u32);
        for (row, line) in rows.iter().enumerate() {
            let line = line.as_ref();
            let len = line.chars().count();
            if len != width {
                return Err(InstanceError::RaggedGrid { row, len, expected: width });
            }
            for (col, ch) in line.chars().enumerate() {
                match ch {
                    'F' => {}
                    'H' => grid.set_hole(grid.cell(Pos::new(row as u32, col as u32)), true),
                    _ => return Err(InstanceError::BadCell { row, col, ch }),
                }
            }
        }
        Ok(grid)
    }

    /// The rows as `F`/`H` strings.
    #[must_use]
    pub fn to_rows(&self) -> Vec<String> {
        (0..self.height)
            .map(|r| {
                (0..self.width)
                    .map(|c| if self.is_hole(self.cell(Pos::new(r, c))) { 'H' } else { 'F' })
                    .collect()
            })
            .collect()
    }

    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of cells, W·H.
    #[must_use]
    pub fn cells(&self) -> u32 {
        self.width * self.height
    }

    /// Number of holes.
    #[must_use]
    pub fn hole_count(&self) -> u32 {
        self.holes.iter().map(|w| w.count_ones()).sum()
    }

    #[must_use]
    pub fn cell(&self, p: Pos) -> Cell {
        debug_assert!(p.row < self.height && p.col < self.width);
        p.row * self.width + p.col
    }

    #[must_use]
    pub fn pos(&self, c: Cell) -> Pos {
        Pos::new(c / self.width, c % self.width)
    }

    /// Whether a signed (row, col) lies on the grid ([`on_grid`]).
    #[must_use]
    pub fn in_bounds(&self, row: i64, col: i64) -> bool {
        on_grid(self.width, self.height, row, col)
    }

    #[must_use]
    pub fn is_hole(&self, c: Cell) -> bool {
        (self.holes[(c / 64) as usize] >> (c % 64)) & 1 == 1
    }

    pub fn set_hole(&mut self, c: Cell, hole: bool) {
        let (w, b) = ((c / 64) as usize, c % 64);
        if hole {
            self.holes[w] |= 1 << b;
        } else {
            self.holes[w] &= !(1 << b);
        }
    }

    /// The cell reached from `c` by `m`, or `None` when the move leaves the grid. Holes are not
    /// checked here.
    #[must_use]
    pub fn step(&self, c: Cell, m: Move) -> Option<Cell> {
        let p = self.pos(c);
        let (dr, dc) = m.delta();
        let (r, col) = (i64::from(p.row) + dr, i64::from(p.col) + dc);
        self.in_bounds(r, col).then(|| r as u32 * self.width + col as u32)
    }

    /// The frozen cells reachable from `c` in one step, waiting included, in action-code order:
    /// on the grid and not a hole, exactly the steps that `rules::agent_fault` lets through (a
    /// test of `rules` holds the two together).
    pub fn successors(&self, c: Cell) -> impl Iterator<Item = (Move, Cell)> + '_ {
        Move::ALL
            .into_iter()
            .filter_map(move |m| self.step(c, m).filter(|&n| !self.is_hole(n)).map(|n| (m, n)))
    }

    /// Breadth-first distances (in moves) from `source` to every cell over frozen cells;
    /// [`UNREACHABLE`] for holes and cut-off cells. The distance is symmetric, so this is also the
    /// distance *to* `source`.
    #[must_use]
    pub fn distances_from(&self, source: Cell) -> Vec<u32> {
        let mut dist = vec![UNREACHABLE; self.cells() as usize];
        if self.is_hole(source) {
            return dist;
        }
        dist[source as usize] = 0;
        let mut queue = VecDeque::from([source]);
        while let Some(c) = queue.pop_front() {
            let d = dist[c as usize] + 1;
            for (_, n) in self.successors(c) {
                if dist[n as usize] == UNREACHABLE {
                    dist[n as usize] = d;
                    queue.push_back(n);
                }
            }
        }
        dist
    }

    /// The cells of the largest region of frozen cells joined by moves, in ascending order; of
    /// regions of equal size, the one with the lowest cell. One pass over the grid: each region
    /// is visited once.
    #[must_use]
    pub fn largest_region(&self) -> Vec<Cell> {
        let (w, h, n) = (self.width, self.height, self.cells());
        // Each cell's region, numbered in the order regions are found (UNREACHABLE: none yet).
        let mut region = vec![UNREACHABLE; n as usize];
        let mut stack = Vec::new();
        let (mut best, mut best_len, mut count) = (UNREACHABLE, 0, 0);
        for c in 0..n {
            if region[c as usize] != UNREACHABLE || self.is_hole(c) {
                continue;
            }
            region[c as usize] = count;
            stack.push(c);
            let mut len = 1;
            while let Some(x) = stack.pop() {
                let (r, col) = (x / w, x % w);
                // The four neighbours on the grid (a wait stays in the region).
                for (on, y) in [
                    (r > 0, x.wrapping_sub(w)),
                    (r + 1 < h, x + w),
                    (col > 0, x.wrapping_sub(1)),
                    (col + 1 < w, x + 1),
                ] {
                    if on && region[y as usize] == UNREACHABLE && !self.is_hole(y) {
                        region[y as usize] = count;
                        stack.push(y);
                        len += 1;
                    }
                }
            }
            if len > best_len {
                (best, best_len) = (count, len);
            }
            count += 1;
        }
        let mut cells = Vec::with_capacity(best_len);
        if best_len > 0 {
            cells.extend((0..n).filter(|&c| region[c as usize] == best));
        }
        cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest region as found by a flood fill from each unvisited frozen cell, over every
    /// cell each time: the plain form `largest_region` must agree with.
    fn largest_region_by_distances(g: &Grid) -> Vec<Cell> {
        let n = g.cells();
        let mut seen = vec![false; n as usize];
        let mut best = Vec::new();
        for c in 0..n {
            if g.is_hole(c) || seen[c as usize] {
                continue;
            }
            let dist = g.distances_from(c);
            let members: Vec<Cell> = (0..n).filter(|&x| dist[x as usize] != UNREACHABLE).collect();
            for &m in &members {
                seen[m as usize] = true;
            }
            if members.len() > best.len() {
                best = members;
            }
        }
        best
    }

    #[test]
    fn the_largest_region_is_the_flood_fills_on_any_grid() {
        let mut rng = crate::rng::Rng::from_counters(&[41]);
        for t in 0..2000u32 {
            let (w, h) = (1 + rng.below(12), 1 + rng.below(12));
            let mut g = Grid::new(w, h);
            let ratio = rng.below(100);
            for c in 0..g.cells() {
                g.set_hole(c, rng.below(100) < ratio);
            }
            assert_eq!(g.largest_region(), largest_region_by_distances(&g), "grid {t}: {:?}", g.to_rows());
        }
        let ties = Grid::from_rows(&["FHF", "HHH", "FHF"]).unwrap();
        assert_eq!(ties.largest_region(), vec![0], "of equal regions, the lowest cell's");
        assert!(Grid::from_rows(&["HH"]).unwrap().largest_region().is_empty());
    }

    #[test]
    fn rows_round_trip_and_bad_cells_are_named() {
        let g = Grid::from_rows(&["FFH", "HFF"]).expect("valid grid");
        assert_eq!((g.width(), g.height(), g.hole_count()), (3, 2, 2));
        assert_eq!(g.to_rows(), vec!["FFH", "HFF"]);
        assert!(g.is_hole(g.cell(Pos::new(1, 0))));
        assert_eq!(Grid::from_rows(&["FF", "FX"]), Err(InstanceError::BadCell { row: 1, col: 1, ch: 'X' }));
        assert_eq!(
            Grid::from_rows(&["FF", "F"]),
            Err(InstanceError::RaggedGrid { row: 1, len: 1, expected: 2 })
        );
        assert_eq!(Grid::from_rows::<&str>(&[]), Err(InstanceError::EmptyGrid));
    }

    #[test]
    fn steps_stop_at_the_border_and_distances_avoid_holes() {
        let g = Grid::from_rows(&["FHF", "FHF", "FFF"]).expect("valid grid");
        assert_eq!(g.step(0, Move::Up), None);
        assert_eq!(g.step(0, Move::Right), Some(1));
        let d = g.distances_from(0);
        assert_eq!(d[2], 6);
        assert_eq!(d[1], UNREACHABLE);
        let succ: Vec<_> = g.successors(0).map(|(m, _)| m).collect();
        assert_eq!(succ, vec![Move::Wait, Move::Down]);
    }
}
