//! The padded maps of every pool instance ([`HoleMaps`]): cell classes for the step, hole bytes
//! for observations, starts and goals as padded cells, and where a goal shows in a window.

use std::ops::Range;

use crate::error::EngineError;
use crate::grid::on_grid;
use crate::pool::InstancePool;
use crate::words::{pack_rc, unpack_dims, unpack_rc, POS_MASK};

/// The largest observation radius of the CPU backend: a window of 255 × 255 cells.
pub const MAX_OBS_RADIUS: u32 = 127;

/// The widest padded map whose rows are kept as single `u64` bit masks ([`HoleMaps::obs_rows`]).
pub(super) const ROW_MASK_WIDTH: usize = 64;

/// The largest radius whose `bits` windows of holes are kept whole per grid cell
/// ([`HoleMaps::hole_windows`]): the fixed-width windows of up to 15 × 15 cells.
pub(super) const HOLE_WINDOW_RADIUS: u32 = 7;

/// The most memory the windows of holes of a pool may take; a larger pool builds them row by
/// row in each step instead.
pub(super) const HOLE_WINDOW_BYTES: usize = 64 << 20;

/// The least padded width: window rows are read as 8 bytes.
pub(super) const MIN_MAP_WIDTH: usize = 8;

/// Per pool instance, two byte maps of its grid padded by `pad = max(radius, 1)` cells on every
/// side (and on the right to a width of at least [`MIN_MAP_WIDTH`]), each followed by a spare row:
/// `obs` holds 1 for holes and cells off the grid (so that each row of an observation window is
/// one copy), `class` holds [`FREE`], [`HOLE`] or [`OFF`] (so that a move's target needs one load
/// and no bounds test). The step works on cell indices into these maps ("padded cells"): the
/// engine's agent words hold them, and the instances' starts and goals are kept here as padded
/// cells too. A padded cell's row is one multiplication by the map's reciprocal width
/// ([`Maps::row_col`]), which places a goal in an observation window ([`Maps::goal_place`]).
///
/// The maps of a slot refilled with a level of another size are appended, and the old ones left
/// unused until they take as much room as the maps in use; then every map is made again
/// ([`HoleMaps::replace`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct HoleMaps {
    pub(super) obs: Vec<u8>,
    /// `bits` format only: `obs` as bits (bit `i % 8` of byte `i / 8` for padded cell `i`), each
    /// instance's followed by 8 spare bytes so that any cell's bits can be read as one unaligned
    /// `u64`.
    pub(super) obs_bits: Vec<u8>,
    /// `bits` format only, for padded widths up to 64 ([`ROW_MASK_WIDTH`]): `obs` as one `u64`
    /// per padded row (bit `c` for column `c`), spare row included; empty for wider maps.
    pub(super) obs_rows: Vec<u64>,
    /// `bits` format at radius up to [`HOLE_WINDOW_RADIUS`], for pools whose windows fit in
    /// [`HOLE_WINDOW_BYTES`]: per grid cell (row-major, not padded), the holes plane of the
    /// window around it, packed as the observation packs it; empty otherwise.
    pub(super) hole_windows: Vec<u8>,
    pub(super) class: Vec<u8>,
    /// Per instance and agent slot (`k_max` a instance): padded cells of the starts and goals.
    pub(super) starts: Vec<u32>,
    pub(super) goals: Vec<u32>,
    pub(super) index: Vec<MapIndex>,
    pub(super) pad: usize,
    /// The observation radius.
    pub(super) radius: u32,
    /// Whether the `bits` format's maps are kept.
    bits: bool,
    /// Whether the `bits` format's windows of holes are kept ([`HoleMaps::hole_windows`]).
    holes_table: bool,
    /// The longest map, slack included.
    pub(super) longest: usize,
    /// Bytes of `obs` that belong to no instance any more (maps of refilled slots).
    dead: usize,
}

/// Where one instance's maps and window table lie (ranges of the `HoleMaps` vectors), and its
/// widths: all worked out once, so that [`HoleMaps::instance`] is a few loads and slices.
#[derive(Debug, Clone)]
pub(super) struct MapIndex {
    /// In `obs` and `class`.
    pub(super) maps: Range<usize>,
    pub(super) bits: Range<usize>,
    pub(super) rows: Range<usize>,
    pub(super) holes: Range<usize>,
    /// Grid width and height.
    pub(super) w: usize,
    pub(super) h: usize,
    pub(super) mw: usize,
    /// ⌈2^40 / mw⌉: a padded cell's row is `cell · recip >> 40` ([`Maps::row_col`]).
    pub(super) recip: u64,
}

/// Map classes.
pub(super) const FREE: u8 = 0;
pub(super) const HOLE: u8 = 1;
pub(super) const OFF: u8 = 2;

/// One instance's maps.
#[derive(Clone, Copy)]
pub(crate) struct Maps<'a> {
    pub(super) obs: &'a [u8],
    /// `obs` as bits, with 8 spare bytes.
    pub(super) obs_bits: &'a [u8],
    /// `obs` as one `u64` per padded row (empty when the padded width is over 64).
    pub(super) obs_rows: &'a [u64],
    /// The holes planes of the windows around grid cells (see [`HoleMaps::hole_windows`]),
    /// or empty.
    pub(super) hole_windows: &'a [u8],
    pub(super) class: &'a [u8],
    /// Grid width.
    pub(super) w: usize,
    /// Padded width.
    pub(super) mw: usize,
    /// See [`MapIndex::recip`].
    pub(super) recip: u64,
    pub(super) pad: usize,
}

impl Maps<'_> {
    /// The packed position of a padded cell on the grid.
    pub(super) fn rc(&self, cell: usize) -> u32 {
        pack_rc((cell / self.mw - self.pad) as u32, (cell % self.mw - self.pad) as u32)
    }

    /// Where action `act` (`0..8`) takes the agent with word `ag`, given [`cell_steps`]. Branch-free:
    /// the padding makes every neighbour of a grid cell a valid index.
    #[inline(always)]
    pub(super) fn target(&self, steps: &[usize; 8], ag: u32, act: usize) -> Target {
        let here = (ag & POS_MASK) as usize;
        let there = here.wrapping_add(steps[act]);
        Target { here, there, class: self.class[there] }
    }

    /// The padded row and column of a padded cell: one multiplication, exact for every padded
    /// cell (below 2^24) of every padded width (below 2^11), since their product stays below
    /// 2^40.
    #[inline(always)]
    pub(super) fn row_col(&self, cell: usize) -> (usize, usize) {
        let row = ((cell as u64 * self.recip) >> 40) as usize;
        (row, cell - row * self.mw)
    }

    /// Where padded cell `goal` shows in the observation window of radius `r` around padded cell
    /// `cell`: its index in the window, the goal's offset from the agent clamped to ±r in rows
    /// and columns (a goal outside the window shows on its border, in its direction, as POGEMA
    /// places it).
    #[inline(always)]
    pub(super) fn goal_place(&self, cell: usize, goal: u32, r: usize) -> usize {
        let ((ar, ac), (gr, gc)) = (self.row_col(cell), self.row_col(goal as usize));
        let ri = r as isize;
        let dr = (gr as isize - ar as isize).clamp(-ri, ri) + ri;
        let dc = (gc as isize - ac as isize).clamp(-ri, ri) + ri;
        dr as usize * (2 * r + 1) + dc as usize
    }
}

/// An agent's padded cell, the padded cell its action leads to, and that cell's class.
pub(super) struct Target {
    pub(super) here: usize,
    pub(super) there: usize,
    pub(super) class: u8,
}

impl HoleMaps {
    /// The maps of every pool instance for observation radius `radius`; with `bits`, also the
    /// bit maps the `bits` observation reads (`obs_bits`, `obs_rows`; empty otherwise).
    ///
    /// # Errors
    /// A radius over [`MAX_OBS_RADIUS`], a padded map with 2^24 cells or more (agent words
    /// hold padded cells in 24 bits), or [`EngineError::TooLarge`] when the padded maps of the
    /// whole pool cannot be allocated (their size is summed and reserved before they are made).
    pub(crate) fn new(pool: &InstancePool, radius: u32, bits: bool) -> Result<Self, EngineError> {
        if radius > MAX_OBS_RADIUS {
            return Err(EngineError::Invalid(format!(
                "observation radius {radius}: the CPU backend takes at most {MAX_OBS_RADIUS}"
            )));
        }
        let pad = radius.max(1) as usize;
        let plane = 4 * crate::engine::config::obs_plane_words(radius);
        let grid_cells: usize = (0..pool.len())
            .map(|p| {
                let (w, h, _) = unpack_dims(pool.dims[p]);
                w as usize * h as usize
            })
            .sum();
        let holes_table =
            bits && radius <= HOLE_WINDOW_RADIUS && grid_cells.saturating_mul(plane) <= HOLE_WINDOW_BYTES;
        let mut maps = Self { pad, radius, bits, holes_table, ..Self::default() };
        // The padded cells of every instance (one row more below each map), reserved up front
        // for the two byte maps: an observation radius makes each map much larger than its grid.
        let padded: Option<usize> = (0..pool.len()).try_fold(0usize, |sum, p| {
            let (w, h, _) = unpack_dims(pool.dims[p]);
            let mw = (w as usize + 2 * pad).max(MIN_MAP_WIDTH);
            sum.checked_add((h as usize + 2 * pad + 1).checked_mul(mw)?)
        });
        let too_large = |bytes| crate::error::TooLarge {
            what: format!(
                "the padded maps of {} for observation radius {radius}",
                crate::error::count(pool.len() as u64, "instance", "instances")
            ),
            bytes,
        };
        let padded = padded.ok_or_else(|| too_large(None))?;
        for map in [&mut maps.class, &mut maps.obs] {
            map.try_reserve_exact(padded).map_err(|_| too_large(Some(padded)))?;
        }
        maps.starts = vec![0; pool.len() * pool.max_agents];
        maps.goals = vec![0; pool.len() * pool.max_agents];
        for p in 0..pool.len() {
            let index = maps.push_maps(pool, p)?;
            maps.index.push(index);
            maps.place_agents(pool, p);
        }
        Ok(maps)
    }

    /// The maps of slots `slots` after their levels were replaced in `pool`: written over the
    /// old ones where the grid keeps its size, else appended (and every map made again once the
    /// unused ones take as much room as those in use).
    ///
    /// # Errors
    /// As [`HoleMaps::new`] (a refilled level's padded map too large, or memory).
    pub(crate) fn replace(&mut self, pool: &InstancePool, slots: &[usize]) -> Result<(), EngineError> {
        for &p in slots {
            let (w, h, _) = unpack_dims(pool.dims[p]);
            let old = &self.index[p];
            if (old.w, old.h) == (w as usize, h as usize) {
                let at = old.clone();
                self.write_maps(pool, p, &at);
            } else {
                self.dead += old.maps.len();
                let index = self.push_maps(pool, p)?;
                self.index[p] = index;
            }
            self.place_agents(pool, p);
        }
        if self.dead > self.obs.len() - self.dead {
            let holes_table = self.holes_table;
            *self = Self::new(pool, self.radius, self.bits)?;
            // A pool made with the table keeps it (or goes without it, as its tests ask).
            if !holes_table {
                self.drop_table();
            }
        }
        Ok(())
    }

    /// Appends slot `p`'s maps; returns where they lie.
    fn push_maps(&mut self, pool: &InstancePool, p: usize) -> Result<MapIndex, EngineError> {
        let (w, h, _) = unpack_dims(pool.dims[p]);
        let (w, h, pad) = (w as usize, h as usize, self.pad);
        let mw = (w + 2 * pad).max(MIN_MAP_WIDTH);
        if (h + 2 * pad + 1) * mw > POS_MASK as usize {
            return Err(EngineError::Invalid(format!(
                "observation radius {}: instance {p}'s padded map of {w}x{h} cells is too large",
                self.radius
            )));
        }
        let len = (h + 2 * pad + 1) * mw;
        let plane = 4 * crate::engine::config::obs_plane_words(self.radius);
        let bits_len = if self.bits { len.div_ceil(8) + 8 } else { 0 };
        let rows_len = if self.bits && mw <= ROW_MASK_WIDTH { h + 2 * pad + 1 } else { 0 };
        let holes_len = if self.holes_table { w * h * plane } else { 0 };
        let grow = |v: usize, n: usize| v..v + n;
        let index = MapIndex {
            maps: grow(self.obs.len(), len),
            bits: grow(self.obs_bits.len(), bits_len),
            rows: grow(self.obs_rows.len(), rows_len),
            holes: grow(self.hole_windows.len(), holes_len),
            w,
            h,
            mw,
            recip: (1u64 << 40).div_ceil(mw as u64),
        };
        self.obs.resize(index.maps.end, 0);
        self.class.resize(index.maps.end, 0);
        self.obs_bits.resize(index.bits.end, 0);
        self.obs_rows.resize(index.rows.end, 0);
        self.hole_windows.resize(index.holes.end, 0);
        self.write_maps(pool, p, &index);
        self.longest = self.longest.max(len);
        Ok(index)
    }

    /// Writes slot `p`'s maps where `at` says (room of the right sizes).
    fn write_maps(&mut self, pool: &InstancePool, p: usize, at: &MapIndex) {
        let (w, h, mw, pad) = (at.w, at.h, at.mw, self.pad);
        let radius = self.radius as usize;
        let win = 2 * radius + 1;
        let plane = 4 * crate::engine::config::obs_plane_words(self.radius);
        let (obs, class) = (&mut self.obs[at.maps.clone()], &mut self.class[at.maps.clone()]);
        for (i, (o, c)) in obs.iter_mut().zip(class.iter_mut()).enumerate() {
            let (r, col) = ((i / mw) as i64 - pad as i64, (i % mw) as i64 - pad as i64);
            let cls = if !on_grid(w as u32, h as u32, r, col) {
                OFF
            } else if pool.is_hole(p, (r * w as i64 + col) as u32) {
                HOLE
            } else {
                FREE
            };
            *c = cls;
            *o = u8::from(cls != FREE);
        }
        let bytes = &self.obs[at.maps.clone()];
        if self.bits {
            let dst = &mut self.obs_bits[at.bits.clone()];
            dst.fill(0);
            for (d, c) in dst.iter_mut().zip(bytes.chunks(8)) {
                *d = c.iter().rev().fold(0u8, |acc, &b| acc << 1 | b);
            }
            let rows = &mut self.obs_rows[at.rows.clone()];
            for (d, c) in rows.iter_mut().zip(bytes.chunks(mw)) {
                *d = c.iter().rev().fold(0u64, |acc, &b| acc << 1 | u64::from(b));
            }
        }
        if !at.holes.is_empty() {
            let table = &mut self.hole_windows[at.holes.clone()];
            table.fill(0);
            for cell in 0..w * h {
                // The window's top-left padded cell: the grid cell's padded cell, less the
                // radius in both directions.
                let top_left = (cell / w + pad - radius) * mw + cell % w + pad - radius;
                let packed = &mut table[cell * plane..(cell + 1) * plane];
                for i in 0..win * win {
                    packed[i / 8] |= bytes[top_left + i / win * mw + i % win] << (i % 8);
                }
            }
        }
    }

    /// Slot `p`'s starts and goals as padded cells.
    fn place_agents(&mut self, pool: &InstancePool, p: usize) {
        let (k_max, pad, mw) = (pool.max_agents, self.pad, self.index[p].mw);
        let k = unpack_dims(pool.dims[p]).2 as usize;
        let cell = |rc: u32| {
            let (r, c) = unpack_rc(rc);
            ((r as usize + pad) * mw + c as usize + pad) as u32
        };
        for a in 0..k_max {
            let (start, goal) = if a < k {
                (cell(pool.starts[p * k_max + a]), cell(pool.goals[p * k_max + a]))
            } else {
                (0, 0)
            };
            self.starts[p * k_max + a] = start;
            self.goals[p * k_max + a] = goal;
        }
    }

    /// The maps of instance `p`.
    #[inline(always)]
    pub(crate) fn instance(&self, p: usize) -> Maps<'_> {
        let MapIndex { maps, bits, rows, holes, w, mw, recip, .. } = &self.index[p];
        Maps {
            obs: &self.obs[maps.clone()],
            obs_bits: &self.obs_bits[bits.clone()],
            obs_rows: &self.obs_rows[rows.clone()],
            hole_windows: &self.hole_windows[holes.clone()],
            class: &self.class[maps.clone()],
            w: *w,
            mw: *mw,
            recip: *recip,
            pad: self.pad,
        }
    }

    /// The maps of instance `p` a step reads: classes and widths only (the observation maps
    /// are left empty), for one slice instead of five.
    #[inline(always)]
    pub(crate) fn step_maps(&self, p: usize) -> Maps<'_> {
        let MapIndex { maps, w, mw, recip, .. } = &self.index[p];
        Maps {
            obs: &[],
            obs_bits: &[],
            obs_rows: &[],
            hole_windows: &[],
            class: &self.class[maps.clone()],
            w: *w,
            mw: *mw,
            recip: *recip,
            pad: self.pad,
        }
    }

    /// Drops the table of holes planes ([`HoleMaps::hole_windows`]).
    fn drop_table(&mut self) {
        self.holes_table = false;
        self.hole_windows = Vec::new();
        for i in &mut self.index {
            i.holes = 0..0;
        }
    }

    /// Drops the table of holes planes ([`HoleMaps::hole_windows`]): the `bits` observation then
    /// builds them row by row.
    #[cfg(feature = "testing")]
    pub(super) fn drop_hole_windows(&mut self) {
        self.drop_table();
    }
}

/// Padded-cell steps of the actions 0 wait, 1 up, 2 down, 3 left, 4 right on a map of padded
/// width `mw`, indexed by `action & 7` (−1 as a wrapping value).
#[inline(always)]
pub(super) fn cell_steps(mw: usize) -> [usize; 8] {
    [0, mw.wrapping_neg(), mw, usize::MAX, 1, 0, 0, 0]
}
