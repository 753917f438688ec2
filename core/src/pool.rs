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
    /// Per slot, how many times it was refilled ([`InstancePool::replace`]).
    pub(crate) generation: Vec<u32>,
    /// The largest side an instance may have: the largest of the instances' and the room's.
    pub(crate) side: u32,
}

/// An [`InstancePool`]'s packed arrays as saved ([`InstancePool::saved`],
/// [`InstancePool::from_saved`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SavedPool {
    pub max_agents: usize,
    pub words: usize,
    pub side: u32,
    pub dims: Vec<u32>,
    pub starts: Vec<u32>,
    pub goals: Vec<u32>,
    pub holes: Vec<u32>,
    pub optimal_soc: Vec<u32>,
    pub generation: Vec<u32>,
}

/// Room a pool keeps for the levels that will refill its slots ([`InstancePool::replace`]): its
/// agent slots per instance and hole words per instance are fixed when it is made, so an
/// instance refilled into it must have at most `agents` agents and a grid of at most `side` ×
/// `side` cells. A pool made without room has the room of its largest instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Room {
    /// Agents per instance.
    pub agents: usize,
    /// The side of the largest grid.
    pub side: u32,
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
        Self::with_room(instances, optima, Room::default())
    }

    /// Packs instances as [`InstancePool::new`] does, keeping room for refills with up to
    /// `room.agents` agents on grids of up to `room.side` × `room.side` cells (or the largest
    /// instance's, when larger).
    ///
    /// # Errors
    /// As [`InstancePool::new`]; a room over the engine's limits.
    pub fn with_room(instances: &[Instance], optima: Optima, room: Room) -> Result<Self, EngineError> {
        if instances.is_empty() {
            return Err(EngineError::EmptyPool);
        }
        if room.agents > MAX_AGENTS || room.side > MAX_SIDE {
            return Err(EngineError::Invalid(format!(
                "room for {} agents on {}x{} is over the engine's limits ({MAX_AGENTS} agents, side {MAX_SIDE})",
                room.agents, room.side, room.side
            )));
        }
        let max_agents = instances.iter().map(Instance::num_agents).max().unwrap_or(0).max(room.agents);
        let side =
            instances.iter().map(|i| i.grid.width().max(i.grid.height())).max().unwrap_or(0).max(room.side);
        let max_cells =
            instances.iter().map(|i| i.grid.cells()).max().unwrap_or(0).max(room.side * room.side) as usize;
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
            optimal_soc: try_vec(n, NONE, what("optima"))?,
            generation: try_vec(n, 0, what("generations"))?,
            side,
        };
        for (i, inst) in instances.iter().enumerate() {
            let (w, h, k) = (inst.grid.width(), inst.grid.height(), inst.num_agents());
            if k > MAX_AGENTS || w > MAX_SIDE || h > MAX_SIDE {
                return Err(EngineError::Instance {
                    index: i,
                    what: format!("{k} agents on {w}x{h} is over the engine's limits ({MAX_AGENTS} agents, side {MAX_SIDE})"),
                });
            }
            pool.dims.push(0);
            pool.write(i, inst, optima);
        }
        Ok(pool)
    }

    /// Packs `inst` into slot `i` (whose arrays have room for it).
    fn write(&mut self, i: usize, inst: &Instance, optima: Optima) {
        let (k_max, words) = (self.max_agents, self.words);
        let (w, h) = (inst.grid.width(), inst.grid.height());
        self.dims[i] = pack_dims(w, h, inst.num_agents() as u32);
        self.starts[i * k_max..(i + 1) * k_max].fill(0);
        self.goals[i * k_max..(i + 1) * k_max].fill(0);
        for (a, ag) in inst.agents.iter().enumerate() {
            self.starts[i * k_max + a] = pack_rc(ag.start.row, ag.start.col);
            self.goals[i * k_max + a] = pack_rc(ag.goal.row, ag.goal.col);
        }
        let holes = &mut self.holes[i * words..(i + 1) * words];
        holes.fill(0);
        for c in (0..inst.grid.cells()).filter(|&c| inst.grid.is_hole(c)) {
            holes[(c / 32) as usize] |= 1 << (c % 32);
        }
        self.optimal_soc[i] = match &inst.optimal {
            Some(o) => o.soc,
            None if optima == Optima::SolveMissing => {
                solve(inst, &SolverConfig::default()).map_or(NONE, |s| s.soc)
            }
            None => NONE,
        };
    }

    /// The room this pool keeps for refills: its agent slots and its largest side.
    #[must_use]
    pub fn room(&self) -> Room {
        Room { agents: self.max_agents, side: self.side }
    }

    /// Whether `inst` fits the pool's room (see [`Room`]), or why not.
    ///
    /// # Errors
    /// [`EngineError::Invalid`] naming what is too large.
    pub fn check_fits(&self, inst: &Instance) -> Result<(), EngineError> {
        let (w, h, k) = (inst.grid.width(), inst.grid.height(), inst.num_agents());
        if k > self.max_agents
            || w > self.side
            || h > self.side
            || inst.grid.cells() as usize > self.words * 32
        {
            return Err(EngineError::Invalid(format!(
                "a level of {k} agents on {w}x{h} does not fit the pool's room ({} agents, {} cells, side {}): \
                 make the pool with room for it (InstancePool::with_room)",
                self.max_agents,
                self.words * 32,
                self.side
            )));
        }
        Ok(())
    }

    /// Replaces the level in slot `i` by `inst` and counts one more generation for the slot. An
    /// engine that plays the pool refills it through [`crate::engine::Engine::refill`], which
    /// also moves the environments that play the slot.
    ///
    /// # Errors
    /// A slot out of range, or an instance that does not fit ([`InstancePool::check_fits`]);
    /// the pool is then unchanged.
    pub fn replace(&mut self, i: usize, inst: &Instance, optima: Optima) -> Result<(), EngineError> {
        if i >= self.len() {
            return Err(EngineError::Invalid(format!(
                "slot {i} is out of range: the pool has {} slots",
                self.len()
            )));
        }
        self.check_fits(inst)?;
        self.write(i, inst, optima);
        self.generation[i] = self.generation[i].wrapping_add(1);
        Ok(())
    }

    /// How many times slot `i` was refilled.
    ///
    /// # Panics
    /// `i` out of range.
    #[must_use]
    pub fn generation(&self, i: usize) -> u32 {
        self.generation[i]
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

    /// The holes of instance `i`.
    ///
    /// # Panics
    /// `i` out of range.
    #[must_use]
    pub fn holes(&self, i: usize) -> u32 {
        self.holes[i * self.words..(i + 1) * self.words].iter().map(|w| w.count_ones()).sum()
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

    /// The level in slot `i` now (its map, starts and goals; a refilled slot's new level), without
    /// its stored plan.
    ///
    /// # Errors
    /// [`EngineError::Invalid`] for a slot out of range.
    pub fn level(&self, i: usize) -> Result<Instance, EngineError> {
        if i >= self.len() {
            return Err(EngineError::Invalid(format!(
                "slot {i} is out of range: the pool has {} slots",
                self.len()
            )));
        }
        let (_, _, agents) = self.dims(i);
        let pos = |(row, col): (u32, u32)| crate::grid::Pos { row, col };
        let agents = (0..agents as usize)
            .map(|a| crate::instance::Agent { start: pos(self.start(i, a)), goal: pos(self.goal(i, a)) })
            .collect();
        Instance::new(self.grid(i), agents).map_err(|e| EngineError::Invalid(format!("slot {i}: {e}")))
    }

    /// The largest side of any instance the pool holds or has room for.
    #[must_use]
    pub fn max_side(&self) -> u32 {
        self.side
    }

    /// The pool's packed arrays, every slot's optimum and generation included (a level
    /// sampler's saved state keeps them: `floe_levels::LevelsState`); [`InstancePool::from_saved`]
    /// reads them back.
    #[must_use]
    pub fn saved(&self) -> SavedPool {
        SavedPool {
            max_agents: self.max_agents,
            words: self.words,
            side: self.side,
            dims: self.dims.clone(),
            starts: self.starts.clone(),
            goals: self.goals.clone(),
            holes: self.holes.clone(),
            optimal_soc: self.optimal_soc.clone(),
            generation: self.generation.clone(),
        }
    }

    /// The pool [`InstancePool::saved`] wrote, every slot's level checked as
    /// [`Instance::new`] checks it, its optimum and generation as saved.
    ///
    /// # Errors
    /// [`EngineError::Invalid`] naming the value: arrays whose lengths do not agree, a slot
    /// over the room or the engine's limits, a level that does not validate; as
    /// [`InstancePool::with_room`].
    pub fn from_saved(s: SavedPool) -> Result<Self, EngineError> {
        let bad = |why: String| EngineError::Invalid(format!("a saved pool: {why}"));
        let n = s.dims.len();
        if s.max_agents > MAX_AGENTS || s.side > MAX_SIDE || s.words > (MAX_SIDE as usize).pow(2).div_ceil(32)
        {
            return Err(bad(format!(
                "room for {} agents, side {} and {} hole words is over the engine's limits",
                s.max_agents, s.side, s.words
            )));
        }
        for (what, len, want) in [
            ("starts", s.starts.len(), n.checked_mul(s.max_agents)),
            ("goals", s.goals.len(), n.checked_mul(s.max_agents)),
            ("hole words", s.holes.len(), n.checked_mul(s.words)),
            ("optima", s.optimal_soc.len(), Some(n)),
            ("generations", s.generation.len(), Some(n)),
        ] {
            if want != Some(len) {
                return Err(bad(format!("{len} {what} for {n} slots")));
            }
        }
        for (i, &d) in s.dims.iter().enumerate() {
            let (w, h, k) = unpack_dims(d);
            if k as usize > s.max_agents || w > s.side || h > s.side || (w * h) as usize > s.words * 32 {
                return Err(bad(format!(
                    "slot {i} is {w}x{h} with {k} agents, over the pool's room ({} agents, side {}, {} cells)",
                    s.max_agents,
                    s.side,
                    s.words * 32
                )));
            }
        }
        let room = Room { agents: s.max_agents, side: s.side };
        let (optima, generations) = (s.optimal_soc.clone(), s.generation.clone());
        let packed = InstancePool {
            max_agents: s.max_agents,
            words: s.words,
            dims: s.dims,
            starts: s.starts,
            goals: s.goals,
            holes: s.holes,
            optimal_soc: s.optimal_soc,
            generation: s.generation,
            side: s.side,
        };
        let levels =
            (0..n).map(|i| packed.level(i).map_err(|e| bad(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
        let pool = Self::with_room(&levels, Optima::AsStored, room)?;
        let mut pool = pool;
        pool.optimal_soc = optima;
        pool.generation = generations;
        Ok(pool)
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

    #[test]
    fn a_saved_pool_reads_back_and_a_broken_one_is_refused() {
        let levels =
            generate(&GeneratorConfig::default().size(6).agents(3).hole_ratio(0.2).count(4).seed(3)).unwrap();
        let mut pool =
            InstancePool::with_room(&levels, Optima::AsStored, Room { agents: 4, side: 8 }).unwrap();
        pool.replace(2, &levels[0], Optima::AsStored).unwrap();
        let back = InstancePool::from_saved(pool.saved()).unwrap();
        assert_eq!(back.saved(), pool.saved(), "levels, optima and generations");
        assert_eq!(back.generation(2), 1);
        let refused = |edit: &dyn Fn(&mut SavedPool), says: &str| {
            let mut s = pool.saved();
            edit(&mut s);
            let e = InstancePool::from_saved(s).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        refused(&|s| s.goals.pop().map(drop).unwrap_or(()), "goals for 4 slots");
        refused(&|s| s.generation.push(0), "5 generations");
        refused(&|s| s.dims[1] = pack_dims(9, 9, 3), "slot 1 is 9x9");
        refused(&|s| s.max_agents = 300, "over the engine's limits");
        // A start moved onto a hole, or off the grid: the level does not validate.
        refused(&|s| s.starts[0] = pack_rc(40, 0), "a saved pool");
    }
}
