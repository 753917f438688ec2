//! The padded maps of every pool instance ([`HoleMaps`]): cell classes for the step, hole bytes
//! for observations, starts and goals as padded cells, and the tables that place a goal in a
//! window.

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
/// cells too. Per padded width, a table places a goal in an observation window: see
/// [`HoleMaps::window_table`].
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
    /// The window tables, one per padded width, back to back.
    pub(super) windows: Vec<u16>,
    pub(super) index: Vec<MapIndex>,
    pub(super) pad: usize,
    /// The longest map, slack included.
    pub(super) longest: usize,
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
    pub(super) window: Range<usize>,
    /// Grid width.
    pub(super) w: usize,
    pub(super) mw: usize,
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
    /// The window table of this padded width (see [`HoleMaps::window_table`]).
    pub(super) window: &'a [u16],
    /// Grid width.
    pub(super) w: usize,
    /// Padded width.
    pub(super) mw: usize,
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

    /// The place of padded cell `goal` in the observation window (width `win`) whose top-left
    /// padded cell is `start`: `(index in the window, 1)`, or `(0, 0)` outside it. Branch-free.
    #[inline(always)]
    pub(super) fn goal_in_window(&self, goal: u32, start: usize) -> (usize, u8) {
        let last = self.window.len() - 1;
        let v = self.window[(goal as usize).wrapping_sub(start).min(last)];
        (usize::from(v.saturating_sub(1)), u8::from(v != 0))
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
        let win = 2 * radius as usize + 1;
        let k_max = pool.max_agents;
        let mut maps = Self { pad, ..Self::default() };
        let mut tables = std::collections::BTreeMap::new();
        let plane = 4 * crate::engine::config::obs_plane_words(radius);
        let grid_cells: usize = (0..pool.len())
            .map(|p| {
                let (w, h, _) = unpack_dims(pool.dims[p]);
                w as usize * h as usize
            })
            .sum();
        let hole_windows =
            bits && radius <= HOLE_WINDOW_RADIUS && grid_cells.saturating_mul(plane) <= HOLE_WINDOW_BYTES;
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
        for p in 0..pool.len() {
            let (w, h, k) = unpack_dims(pool.dims[p]);
            let (w, h) = (w as usize, h as usize);
            let mw = (w + 2 * pad).max(MIN_MAP_WIDTH);
            if (h + 2 * pad + 1) * mw > POS_MASK as usize {
                return Err(EngineError::Invalid(format!(
                    "observation radius {radius}: instance {p}'s padded map of {w}x{h} cells is too large"
                )));
            }
            let window = *tables.entry(mw).or_insert_with(|| {
                let at = maps.windows.len();
                maps.windows.extend(Self::window_table(mw, win));
                at
            });
            let off = maps.obs.len();
            let (bits_off, rows_off) = (maps.obs_bits.len(), maps.obs_rows.len());
            let holes_off = maps.hole_windows.len();
            for pr in 0..h + 2 * pad {
                for pc in 0..mw {
                    let (r, c) = (pr as i64 - pad as i64, pc as i64 - pad as i64);
                    let class = if !on_grid(w as u32, h as u32, r, c) {
                        OFF
                    } else if pool.is_hole(p, (r * w as i64 + c) as u32) {
                        HOLE
                    } else {
                        FREE
                    };
                    maps.class.push(class);
                    maps.obs.push(u8::from(class != FREE));
                }
            }
            maps.obs.resize(maps.obs.len() + mw, 1);
            maps.class.resize(maps.class.len() + mw, OFF);
            if bits {
                let bytes = &maps.obs[off..];
                maps.obs_bits
                    .extend(bytes.chunks(8).map(|c| c.iter().rev().fold(0u8, |acc, &b| acc << 1 | b)));
                maps.obs_bits.extend([0u8; 8]);
                if mw <= ROW_MASK_WIDTH {
                    let rows = bytes
                        .chunks(mw)
                        .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 1 | u64::from(b)));
                    maps.obs_rows.extend(rows);
                }
            }
            if hole_windows {
                let bytes = &maps.obs[off..];
                for cell in 0..w * h {
                    // The window's top-left padded cell: the grid cell's padded cell, less the
                    // radius in both directions.
                    let top_left = (cell / w + pad - radius as usize) * mw + cell % w + pad - radius as usize;
                    let at = maps.hole_windows.len();
                    maps.hole_windows.resize(at + plane, 0);
                    let packed = &mut maps.hole_windows[at..];
                    for i in 0..win * win {
                        packed[i / 8] |= bytes[top_left + i / win * mw + i % win] << (i % 8);
                    }
                }
            }
            maps.longest = maps.longest.max(maps.obs.len() - off);
            maps.index.push(MapIndex {
                maps: off..maps.obs.len(),
                bits: bits_off..maps.obs_bits.len(),
                rows: rows_off..maps.obs_rows.len(),
                holes: holes_off..maps.hole_windows.len(),
                window: window..window + (win - 1) * mw + win + 1,
                w,
                mw,
            });
            let cell = |rc: u32| {
                let (r, c) = unpack_rc(rc);
                ((r as usize + pad) * mw + c as usize + pad) as u32
            };
            for a in 0..k_max {
                let (start, goal) = if a < k as usize {
                    (cell(pool.starts[p * k_max + a]), cell(pool.goals[p * k_max + a]))
                } else {
                    (0, 0)
                };
                maps.starts.push(start);
                maps.goals.push(goal);
            }
        }
        Ok(maps)
    }

    /// The window table of padded width `mw` and window width `win`: entry `d` (the offset of a
    /// padded cell from a window's top-left cell) is 1 + the cell's index in the window, or 0
    /// where the cell is outside it; one last 0 entry stands for every larger offset.
    pub(super) fn window_table(mw: usize, win: usize) -> Vec<u16> {
        let span = (win - 1) * mw + win;
        let mut table: Vec<u16> = (0..span)
            .map(|d| {
                let (r, c) = (d / mw, d % mw);
                // At most 255 × 255 window cells (`MAX_OBS_RADIUS`), so the entry fits.
                if c < win {
                    (r * win + c + 1) as u16
                } else {
                    0
                }
            })
            .collect();
        table.push(0);
        table
    }

    /// The maps of instance `p`.
    #[inline(always)]
    pub(crate) fn instance(&self, p: usize) -> Maps<'_> {
        let MapIndex { maps, bits, rows, holes, window, w, mw } = &self.index[p];
        Maps {
            obs: &self.obs[maps.clone()],
            obs_bits: &self.obs_bits[bits.clone()],
            obs_rows: &self.obs_rows[rows.clone()],
            hole_windows: &self.hole_windows[holes.clone()],
            class: &self.class[maps.clone()],
            window: &self.windows[window.clone()],
            w: *w,
            mw: *mw,
            pad: self.pad,
        }
    }

    /// The maps of instance `p` a step reads: classes and widths only (the observation maps
    /// are left empty), for one slice instead of six.
    #[inline(always)]
    pub(crate) fn step_maps(&self, p: usize) -> Maps<'_> {
        let MapIndex { maps, w, mw, .. } = &self.index[p];
        Maps {
            obs: &[],
            obs_bits: &[],
            obs_rows: &[],
            hole_windows: &[],
            class: &self.class[maps.clone()],
            window: &[],
            w: *w,
            mw: *mw,
            pad: self.pad,
        }
    }

    /// Drops the table of holes planes ([`HoleMaps::hole_windows`]): the `bits` observation then
    /// builds them row by row.
    #[cfg(feature = "testing")]
    pub(super) fn drop_hole_windows(&mut self) {
        self.hole_windows = Vec::new();
        for i in &mut self.index {
            i.holes = 0..0;
        }
    }
}

/// Padded-cell steps of the actions 0 wait, 1 up, 2 down, 3 left, 4 right on a map of padded
/// width `mw`, indexed by `action & 7` (−1 as a wrapping value).
#[inline(always)]
pub(super) fn cell_steps(mw: usize) -> [usize; 8] {
    [0, mw.wrapping_neg(), mw, usize::MAX, 1, 0, 0, 0]
}
