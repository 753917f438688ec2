//! Instance pools: the levels a batch of environments plays and a batch of plans is verified
//! against, packed as flat arrays for the engine and the batched verifier.

use crate::error::{checked_count, try_vec, try_with_capacity, EngineError};
use crate::failure::NONE;
use crate::grid::Grid;
use crate::instance::Instance;
use crate::solver::{solve, SolverConfig};
use crate::words::{pack_dims, pack_rc, unpack_dims, unpack_rc};

/// The largest agent count per environment.
pub const MAX_AGENTS: usize = 255;
/// The largest grid side.
pub const MAX_SIDE: u32 = 1024;

/// Instances packed as flat arrays for the engine: per instance its dims word, `K` start and goal
/// positions (rows and columns packed in one word, padded), its hole bits (`words` `u32` words, cell `i` at bit `i % 32`
/// of word `i / 32`) and its optimal sum of costs (or [`NONE`] if unknown).
///
/// A pool is built only by [`InstancePool::new`], from validated [`Instance`]s, so every pool the
/// engines see is consistent: the arrays have matching lengths, every position is on its grid and
/// on a frozen cell, starts and goals are distinct. The packed arrays are read through methods.
#[derive(Debug, Clone)]
pub struct InstancePool {
    /// Agent slots per instance (the largest agent count).
    pub(crate) max_agents: usize,
    /// Hole words per instance (enough for the largest grid).
    pub(crate) words: usize,
    pub(crate) dims: Vec<u32>,
    pub(crate) starts: Vec<u32>,
    pub(crate) goals: Vec<u32>,
    pub(crate) holes: Vec<u32>,
    pub(crate) optimal_soc: Vec<u32>,
}

/// Where a pool's optimal sums of costs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Optima {
    /// From each instance's stored plan; an instance without one has an unknown optimum.
    #[default]
    AsStored,
    /// As stored, and the instances without one are solved.
    SolveMissing,
}

impl Optima {
    /// [`Optima::SolveMissing`] when `solve` is true, else [`Optima::AsStored`]: for a flag that
    /// comes from a caller (a C argument, a Python keyword).
    #[must_use]
    pub fn solve_missing(solve: bool) -> Self {
        if solve {
            Self::SolveMissing
        } else {
            Self::AsStored
        }
    }
}

impl InstancePool {
    /// Packs instances, their optimal sums of costs as `optima` says.
    ///
    /// # Errors
    /// An empty list, an instance over the engine's limits ([`MAX_AGENTS`], [`MAX_SIDE`]), or
    /// [`EngineError::TooLarge`] when the packed arrays cannot be allocated (every instance takes
    /// the room of the largest: its agent count and its grid).
    pub fn new(instances: &[Instance], optima: Optima) -> Result<Self, EngineError> {
        let solve_missing = optima == Optima::SolveMissing;
        if instances.is_empty() {
            return Err(EngineError::EmptyPool);
        }
        let max_agents = instances.iter().map(Instance::num_agents).max().unwrap_or(0);
        let max_cells = instances.iter().map(|i| i.grid.cells()).max().unwrap_or(0) as usize;
        let words = max_cells.div_ceil(32);
        let n = instances.len();
        let what = |field: &'static str| {
            move || {
                format!("the packed {field} of {}", crate::error::count(n as u64, "instance", "instances"))
            }
        };
        let slots = checked_count(&[n, max_agents], what("agents"))?;
        let mut pool = Self {
            max_agents,
            words,
            dims: try_with_capacity(n, what("sizes"))?,
            starts: try_vec(slots, 0, what("starts"))?,
            goals: try_vec(slots, 0, what("goals"))?,
            holes: try_vec(checked_count(&[n, words], what("holes"))?, 0, what("holes"))?,
            optimal_soc: try_with_capacity(n, what("optima"))?,
        };
        for (i, inst) in instances.iter().enumerate() {
            let (w, h, k) = (inst.grid.width(), inst.grid.height(), inst.num_agents());
            if k > MAX_AGENTS || w > MAX_SIDE || h > MAX_SIDE {
                return Err(EngineError::Instance {
                    index: i,
                    what: format!("{k} agents on {w}x{h} is over the engine's limits ({MAX_AGENTS} agents, side {MAX_SIDE})"),
                });
            }
            pool.dims.push(pack_dims(w, h, k as u32));
            for (a, ag) in inst.agents.iter().enumerate() {
                pool.starts[i * max_agents + a] = pack_rc(ag.start.row, ag.start.col);
                pool.goals[i * max_agents + a] = pack_rc(ag.goal.row, ag.goal.col);
            }
            for c in 0..inst.grid.cells() {
                if inst.grid.is_hole(c) {
                    pool.holes[i * words + (c / 32) as usize] |= 1 << (c % 32);
                }
            }
            let opt = match &inst.optimal {
                Some(o) => o.soc,
                None if solve_missing => solve(inst, &SolverConfig::default()).map_or(NONE, |s| s.soc),
                None => NONE,
            };
            pool.optimal_soc.push(opt);
        }
        Ok(pool)
    }

    /// Number of instances.
    #[must_use]
    pub fn len(&self) -> usize {
        self.dims.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.dims.is_empty()
    }

    /// Agent slots per environment: the largest agent count of any instance, K.
    #[must_use]
    pub fn max_agents(&self) -> usize {
        self.max_agents
    }

    /// Instance `i`'s (width, height, agents).
    ///
    /// # Panics
    /// `i` out of range.
    #[must_use]
    pub fn dims(&self, i: usize) -> (u32, u32, u32) {
        unpack_dims(self.dims[i])
    }

    /// Instance `i`'s optimal sum of costs, or [`NONE`] if unknown.
    ///
    /// # Panics
    /// `i` out of range.
    #[must_use]
    pub fn optimal_soc(&self, i: usize) -> u32 {
        self.optimal_soc[i]
    }

    /// Agent `a`'s start on instance `i`, as (row, col).
    ///
    /// # Panics
    /// `i` or `a` out of range.
    #[must_use]
    pub fn start(&self, i: usize, a: usize) -> (u32, u32) {
        assert!(a < self.max_agents, "agent {a} of {}", self.max_agents);
        unpack_rc(self.starts[i * self.max_agents + a])
    }

    /// Agent `a`'s goal on instance `i`, as (row, col).
    ///
    /// # Panics
    /// `i` or `a` out of range.
    #[must_use]
    pub fn goal(&self, i: usize, a: usize) -> (u32, u32) {
        assert!(a < self.max_agents, "agent {a} of {}", self.max_agents);
        unpack_rc(self.goals[i * self.max_agents + a])
    }

    /// Whether cell `c` of instance `i` is a hole.
    #[inline]
    #[must_use]
    pub fn is_hole(&self, i: usize, c: u32) -> bool {
        (self.holes[i * self.words + (c / 32) as usize] >> (c % 32)) & 1 == 1
    }

    /// Instance `i`'s grid, holes included: the map itself, for what reads it whole, such as
    /// distances to a goal ([`Grid::distances_from`]).
    ///
    /// # Panics
    /// `i` out of range.
    #[must_use]
    pub fn grid(&self, i: usize) -> Grid {
        let (w, h, _) = self.dims(i);
        let mut grid = Grid::new(w, h);
        for c in (0..w * h).filter(|&c| self.is_hole(i, c)) {
            grid.set_hole(c, true);
        }
        grid
    }

    /// The largest side of any instance.
    #[must_use]
    pub fn max_side(&self) -> u32 {
        self.dims.iter().map(|&d| (d & 0xfff).max((d >> 12) & 0xfff)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{generate, GeneratorConfig};

    #[test]
    fn a_pools_grids_are_its_instances_grids() {
        let levels =
            generate(&GeneratorConfig::default().size(6).agents(2).hole_ratio(0.3).count(4).seed(5)).unwrap();
        let pool = InstancePool::new(&levels, Optima::AsStored).unwrap();
        for (i, inst) in levels.iter().enumerate() {
            assert_eq!(pool.grid(i), inst.grid, "instance {i}");
        }
        assert!(levels.iter().any(|l| l.grid.hole_count() > 0));
    }
}
