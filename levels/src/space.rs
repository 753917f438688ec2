//! Where new levels come from: the generator's space ([`LevelSpace`]: ranges of agents, map
//! sizes, hole and wait ratios), or a generator configuration per map size (a
//! [`RoundConfig`], what a curriculum or the engineer writes), drawn level by level with a
//! counter-based seed ([`LevelSource`]).
//!
//! Level `c` of a source with seed `s` is drawn from its own stream `(s, c)`: the agents, the
//! size and the hole ratio uniformly in their ranges (the hole ratio to two decimals; a map too
//! small for the agents drawn at its hole ratio holds as many as its free cells have room for,
//! two cells an agent), and
//! whether its optimal plans need a wait with probability a wait ratio drawn uniformly in its
//! range; with a configuration, the size by its data ratios, that size's hole and wait ratios,
//! and an agent count uniformly from its list. The level is then generated as `floe generate`
//! makes one (solvable, with its CBS-optimal plan), or, with `solve: false`, drawn connected but
//! not solved (faster, and possibly unsolvable as a whole). The same seed gives the same levels
//! on every machine and thread count.

use floe_core::generator::{generate, random_instance, GeneratorConfig};
use floe_core::rng::Rng;
use floe_core::Instance;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::RoundConfig;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::LevelsError;
pub mod origin;

use origin::{LevelFn, Origin, OriginKey, SourceSpec};

/// The generator's space of levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelSpace {
    /// Agents per level, `[least, most]` \[2, 2\].
    pub agents: [u32; 2],
    /// Map sides, `[least, most]` \[5, 10\].
    pub size: [u32; 2],
    /// Hole ratios, `[least, most]` \[0, 0.3\].
    pub hole_ratio: [f64; 2],
    /// Wait ratios, `[least, most]` \[0, 1\]: a level needs a wait with a probability drawn here.
    pub wait_ratio: [f64; 2],
    /// Levels solved by CBS, with their optimal plans (true), or drawn connected only (false).
    /// Solving is paid at every refill, on the caller's thread: drawing 100 levels of 6 agents
    /// on 16×16 at hole ratio 0.2 took 4.5 ms a level with it and 0.02 ms without on a 2-core
    /// machine. Set it only where a sampler or a metric reads the optima.
    pub solve: bool,
}

impl Default for LevelSpace {
    fn default() -> Self {
        LevelSpace {
            agents: [2, 2],
            size: [5, 10],
            hole_ratio: [0.0, 0.3],
            wait_ratio: [0.0, 1.0],
            solve: true,
        }
    }
}

impl LevelSpace {
    /// Checks the ranges.
    ///
    /// # Errors
    /// [`LevelsError::Config`] naming the range.
    pub fn validate(&self) -> Result<(), LevelsError> {
        let bad = |m: String| Err(LevelsError::Config(format!("level space: {m}")));
        let [a0, a1] = self.agents;
        let [s0, s1] = self.size;
        if a0 == 0 || a0 > a1 || a1 as usize > floe_core::pool::MAX_AGENTS {
            return bad(format!(
                "agents [{a0}, {a1}] must be 1 ≤ least ≤ most ≤ {}",
                floe_core::pool::MAX_AGENTS
            ));
        }
        if s0 < 2 || s0 > s1 || s1 > floe_core::generator::MAX_SIDE {
            return bad(format!(
                "size [{s0}, {s1}] must be 2 ≤ least ≤ most ≤ {}",
                floe_core::generator::MAX_SIDE
            ));
        }
        for (name, [lo, hi], top) in
            [("hole_ratio", self.hole_ratio, 0.9), ("wait_ratio", self.wait_ratio, 1.0)]
        {
            if !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= hi && hi <= top) {
                return bad(format!("{name} [{lo}, {hi}] must be 0 ≤ least ≤ most ≤ {top}"));
            }
        }
        if a0 == 1 && self.wait_ratio[1] > 0.0 {
            return bad("one agent never needs a wait: with agents from 1, wait_ratio must be [0, 0]".into());
        }
        let free = free_cells(s0, self.hole_ratio[1]);
        if u64::from(free) < 2 * u64::from(a0) {
            return bad(format!(
                "{a0} agents need {} free cells, and a {s0}x{s0} map with hole ratio {} has {free}",
                2 * a0,
                self.hole_ratio[1]
            ));
        }
        Ok(())
    }

    /// The design limits an engineer works within over this space.
    #[must_use]
    pub fn limits(&self) -> DesignLimits {
        DesignLimits {
            min_size: self.size[0],
            max_size: self.size[1],
            agents: (self.agents[0]..=self.agents[1]).collect(),
            max_hole_ratio: self.hole_ratio[1],
            max_sizes: (self.size[1] - self.size[0] + 1) as usize,
            max_replay_fraction: 0.0,
        }
    }

    /// The room a pool needs for every level of the space.
    #[must_use]
    pub fn room(&self) -> floe_core::pool::Room {
        floe_core::pool::Room { agents: self.agents[1] as usize, side: self.size[1] }
    }
}

/// The frozen cells of an `n`×`n` map with hole ratio `hole_ratio` (the generator's count).
fn free_cells(n: u32, hole_ratio: f64) -> u32 {
    let cells = n * n;
    cells.saturating_sub(GeneratorConfig::default().size(n).hole_ratio(hole_ratio).holes())
}

/// One level's generator setting, drawn from a space or a configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Draw {
    agents: u32,
    size: u32,
    hole_ratio: f64,
    needs_wait: bool,
}

/// A uniform number in `[0, 1)`.
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A uniform integer in `lo..=hi`.
fn between(rng: &mut Rng, lo: u32, hi: u32) -> u32 {
    lo + rng.below(hi - lo + 1)
}

/// Unsolved levels drawn on the caller's thread rather than the thread pool, at most.
const SERIAL_DRAWS: usize = 64;

/// The stream tag of level draws.
const TAG: u64 = 0x001e_7e15;

/// New levels, one counter-based draw each, from a space or from the configuration a sampler
/// gave last; or from a file, MovingAI maps or a host's function ([`origin`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelSource {
    space: LevelSpace,
    config: Option<RoundConfig>,
    seed: u64,
    /// Levels drawn so far (the next level's counter).
    drawn: u64,
    /// Where levels come from other than the space (a state without it is the space's).
    #[serde(default, skip_serializing_if = "Origin::is_space")]
    from: Origin,
}

impl LevelSource {
    /// A source over `space` with `seed`.
    ///
    /// # Errors
    /// A space [`LevelSpace::validate`] refuses.
    pub fn new(space: LevelSpace, seed: u64) -> Result<Self, LevelsError> {
        space.validate()?;
        Ok(LevelSource { space, config: None, seed, drawn: 0, from: Origin::default() })
    }

    /// A source of the levels `spec` names (a file's or maps'), its files read and checked now.
    ///
    /// # Errors
    /// [`LevelsError::Source`] naming the file, line or map that does not read, breaks a rule,
    /// is unsolvable or does not fit the engine; [`LevelsError::Config`] for a map source's
    /// agents out of range.
    pub fn from_spec(spec: &SourceSpec, seed: u64) -> Result<Self, LevelsError> {
        let from = Origin::from_spec(spec)?;
        Ok(LevelSource { space: LevelSpace::default(), config: None, seed, drawn: 0, from })
    }

    /// A source of a host's function `f(n, seed)`, whose levels must lie within `space`'s agents,
    /// sizes and hole ratios (`space.solve`: an optimum is solved for each that carries none, an
    /// unsolvable one refused). The space's `wait_ratio` is the generator's alone, so it must be
    /// left at its default.
    ///
    /// # Errors
    /// A space [`LevelSpace::validate`] refuses, or one with another `wait_ratio`.
    pub fn from_fn(space: LevelSpace, f: LevelFn, seed: u64) -> Result<Self, LevelsError> {
        space.validate()?;
        if space.wait_ratio != LevelSpace::default().wait_ratio {
            return Err(LevelsError::Config(format!(
                "level space: wait_ratio {:?} is read by the generator only, and a function's levels come as it makes them: leave it out",
                space.wait_ratio
            )));
        }
        let from = Origin::function(f, space.clone());
        Ok(LevelSource { space, config: None, seed, drawn: 0, from })
    }

    /// Where the levels come from other than the space: `OriginKey::Space` for the space.
    #[must_use]
    pub fn origin(&self) -> &OriginKey {
        self.from.key()
    }

    /// The room a pool needs for every level this source draws: the space's, a file's largest
    /// level, the largest map with the most agents.
    #[must_use]
    pub fn room(&self) -> floe_core::pool::Room {
        self.from.room().unwrap_or_else(|| self.space.room())
    }

    /// This source as `saved` (a state's), drawing from this one's file, maps or function.
    ///
    /// # Errors
    /// [`LevelsError::State`] when `saved` draws from elsewhere.
    pub(crate) fn restored(&self, saved: LevelSource) -> Result<LevelSource, LevelsError> {
        if saved.from != self.from {
            let json = |k: &OriginKey| serde_json::to_string(k).unwrap_or_default();
            return Err(LevelsError::State(format!(
                "the state was saved with levels from {}, and this driver draws from {}",
                json(saved.from.key()),
                json(self.from.key())
            )));
        }
        let from = saved.from.with_loaded_of(&self.from);
        Ok(LevelSource { from, ..saved })
    }

    /// The space.
    #[must_use]
    pub fn space(&self) -> &LevelSpace {
        &self.space
    }

    /// The configuration levels are drawn from now, if a sampler gave one.
    #[must_use]
    pub fn config(&self) -> Option<&RoundConfig> {
        self.config.as_ref()
    }

    /// Levels drawn so far.
    #[must_use]
    pub fn drawn(&self) -> u64 {
        self.drawn
    }

    /// Draws levels from `config` from now on; its sizes and agents must lie in the space (so
    /// that they fit the pool's room).
    ///
    /// # Errors
    /// [`LevelsError::Config`] for a size or an agent count outside the space.
    pub fn set_config(&mut self, config: RoundConfig) -> Result<(), LevelsError> {
        if !self.from.is_space() {
            return Err(LevelsError::Config(format!(
                "a phase's configuration is drawn by the generator, and this source takes its levels from {}",
                serde_json::to_string(self.from.key()).unwrap_or_default()
            )));
        }
        let [s0, s1] = self.space.size;
        let [a0, a1] = self.space.agents;
        if let Some(s) = config.sizes.iter().find(|s| s.size < s0 || s.size > s1) {
            return Err(LevelsError::Config(format!(
                "map size {} is outside the level space's [{s0}, {s1}]",
                s.size
            )));
        }
        if let Some(a) = config.agents.iter().find(|&&a| a < a0 || a > a1) {
            return Err(LevelsError::Config(format!("{a} agents is outside the level space's [{a0}, {a1}]")));
        }
        self.config = Some(config);
        Ok(())
    }

    /// Level `c`'s setting.
    fn setting(&self, c: u64) -> Draw {
        let mut rng = Rng::from_counters(&[self.seed, c, TAG]);
        let s = &self.space;
        match &self.config {
            None => {
                let agents = between(&mut rng, s.agents[0], s.agents[1]);
                let size = between(&mut rng, s.size[0], s.size[1]);
                let hole = s.hole_ratio[0] + unit(&mut rng) * (s.hole_ratio[1] - s.hole_ratio[0]);
                let wait = s.wait_ratio[0] + unit(&mut rng) * (s.wait_ratio[1] - s.wait_ratio[0]);
                let hole_ratio = (hole * 100.0).round() / 100.0;
                // A small, holey map holds fewer agents: as many as its free cells have room for.
                let agents = agents.min(free_cells(size, hole_ratio) / 2).max(s.agents[0]);
                let needs_wait = agents > 1 && unit(&mut rng) < wait;
                Draw { agents, size, hole_ratio, needs_wait }
            }
            Some(cfg) => {
                let u = unit(&mut rng);
                let mut acc = 0.0;
                let pick = cfg
                    .sizes
                    .iter()
                    .find(|sc| {
                        acc += sc.data_ratio;
                        u < acc
                    })
                    .or(cfg.sizes.iter().rev().find(|sc| sc.data_ratio > 0.0))
                    .unwrap_or(&cfg.sizes[0]);
                let agents = cfg.agents[rng.below(cfg.agents.len() as u32) as usize];
                let needs_wait = agents > 1 && unit(&mut rng) < pick.wait_ratio;
                Draw { agents, size: pick.size, hole_ratio: pick.hole_ratio, needs_wait }
            }
        }
    }

    /// The next `n` levels (generated in parallel; the same for a seed whatever the threads).
    ///
    /// # Errors
    /// [`LevelsError::Generate`] when a level's setting cannot be generated (its message names
    /// the setting); [`LevelsError::Source`] for a map level no try solves or a function's
    /// answer that does not fit; [`LevelsError::TooLarge`] for more levels than memory holds.
    pub fn draw(&mut self, n: usize) -> Result<Vec<Instance>, LevelsError> {
        // The room for them, asked for before any is made.
        drop(floe_core::error::try_with_capacity::<Instance>(n, || {
            floe_core::error::count(n as u64, "new level", "new levels")
        })?);
        let first = self.drawn;
        if let Some(made) = self.from.draw(self.seed, first, n) {
            let made = made?;
            self.drawn += n as u64;
            return Ok(made);
        }
        let one = |i: u64| -> Result<Instance, LevelsError> {
            let c = first + i;
            let d = self.setting(c);
            let cfg = GeneratorConfig {
                wait_ratio: if d.needs_wait { 1.0 } else { 0.0 },
                seed: floe_core::rng::Rng::from_counters(&[self.seed, c, TAG, 1]).next_u64(),
                ..GeneratorConfig::default()
                    .size(d.size)
                    .agents(d.agents as usize)
                    .hole_ratio(d.hole_ratio)
                    .count(1)
            };
            Ok(if self.space.solve { generate(&cfg)?.remove(0) } else { random_instance(&cfg)? })
        };
        // A few unsolved levels (a refill) are drawn on this thread: handing each to the thread
        // pool costs more than drawing it. Level c is the same either way.
        let made: Result<Vec<Instance>, LevelsError> = if !self.space.solve && n <= SERIAL_DRAWS {
            (0..n as u64).map(one).collect()
        } else {
            (0..n as u64).into_par_iter().map(one).collect()
        };
        let made = made?;
        self.drawn += n as u64;
        Ok(made)
    }

    /// `parents` each edited by its count of changes (ACCEL: `floe_core::mutate`, solved again),
    /// in parallel, each edit's draws from the source's next counter; a parent no attempt keeps
    /// solvable gets a new level drawn from the source in its place. Returns the levels and how
    /// many are edits.
    ///
    /// # Errors
    /// As [`LevelSource::draw`], for the levels drawn in place of edits.
    pub fn edit(&mut self, parents: &[(Instance, u32)]) -> Result<(Vec<Instance>, usize), LevelsError> {
        use floe_core::mutate::{mutate, MutateConfig};
        let first = self.drawn;
        let edited: Vec<Option<Instance>> = parents
            .par_iter()
            .enumerate()
            .map(|(i, (parent, edits))| {
                let seed = Rng::from_counters(&[self.seed, first + i as u64, TAG, 2]).next_u64();
                mutate(parent, &MutateConfig { edits: *edits, seed, ..MutateConfig::default() })
                    .ok()
                    .map(|m| m.instance)
            })
            .collect();
        self.drawn += parents.len() as u64;
        let count = edited.iter().flatten().count();
        let mut fresh = self.draw(parents.len() - count)?.into_iter();
        let mut levels = Vec::with_capacity(parents.len());
        for e in edited {
            // One fresh level was drawn for each edit that failed.
            levels.extend(e.or_else(|| fresh.next()));
        }
        Ok((levels, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_the_seeds_and_within_the_space() {
        let space =
            LevelSpace { agents: [2, 4], size: [5, 7], hole_ratio: [0.0, 0.2], ..LevelSpace::default() };
        let mut a = LevelSource::new(space.clone(), 3).unwrap();
        let mut b = LevelSource::new(space.clone(), 3).unwrap();
        let x = a.draw(12).unwrap();
        assert_eq!(x, [b.draw(5).unwrap(), b.draw(7).unwrap()].concat(), "drawn in parts, the same levels");
        assert!(x.iter().all(|l| (2..=4).contains(&l.num_agents()) && (5..=7).contains(&l.grid.width())));
        assert!(x.iter().all(|l| l.optimal.is_some()), "solved");
        assert!(
            x.iter().any(|l| l.needs_wait == Some(true)) && x.iter().any(|l| l.needs_wait == Some(false))
        );
        let sizes: std::collections::BTreeSet<u32> = x.iter().map(|l| l.grid.width()).collect();
        assert_eq!(sizes.len(), 3, "every size of the range: {sizes:?}");
        let other = LevelSource::new(space, 4).unwrap().draw(12).unwrap();
        assert_ne!(x, other);
    }

    #[test]
    fn a_small_holey_map_holds_as_many_agents_as_its_free_cells_have_room_for() {
        // 8 agents need 16 free cells; a 5×5 map at hole ratio 0.4 has 15, room for 7.
        let space = LevelSpace {
            agents: [2, 8],
            size: [5, 5],
            hole_ratio: [0.4, 0.4],
            solve: false,
            ..LevelSpace::default()
        };
        space.validate().unwrap();
        assert_eq!(free_cells(5, 0.4), 15);
        let levels = LevelSource::new(space, 5).unwrap().draw(200).unwrap();
        let most = levels.iter().map(Instance::num_agents).max().unwrap();
        assert_eq!(most, 7, "capped at 7, and the cap reached");
        assert!(levels.iter().all(|l| l.num_agents() >= 2));
    }

    #[test]
    fn a_configuration_steers_the_draw_and_must_fit_the_space() {
        let mut s = LevelSource::new(LevelSpace { solve: false, ..LevelSpace::default() }, 1).unwrap();
        let mut cfg = RoundConfig::round0_default();
        let e = s.set_config(cfg.clone()).unwrap_err().to_string();
        assert!(e.contains("map size 3 is outside"), "{e}");
        cfg.sizes.retain(|c| c.size >= 5);
        for c in &mut cfg.sizes {
            c.data_ratio = if c.size == 9 { 1.0 } else { 0.0 };
        }
        s.set_config(cfg).unwrap();
        let levels = s.draw(20).unwrap();
        assert!(levels.iter().all(|l| l.grid.width() == 9 && l.optimal.is_none()));
    }

    #[test]
    fn bad_spaces_are_refused_naming_the_range() {
        let err = |s: LevelSpace| s.validate().unwrap_err().to_string();
        assert!(err(LevelSpace { agents: [3, 2], ..LevelSpace::default() }).contains("agents [3, 2]"));
        assert!(err(LevelSpace { size: [1, 4], ..LevelSpace::default() }).contains("size [1, 4]"));
        assert!(
            err(LevelSpace { hole_ratio: [0.0, f64::NAN], ..LevelSpace::default() }).contains("hole_ratio")
        );
        assert!(err(LevelSpace { agents: [1, 2], ..LevelSpace::default() })
            .contains("one agent never needs a wait"));
        assert!(
            err(LevelSpace { agents: [9, 9], size: [4, 4], ..LevelSpace::default() }).contains("free cells")
        );
    }
}
