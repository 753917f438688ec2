//! The instance generator: solvable MAPF-FrozenLake instances with their CBS-optimal plans, a
//! hole density close to `hole_ratio`, and exactly `round(wait_ratio · count)` instances that
//! need a wait.
//!
//! `needs_wait` is defined exactly: the optimal sum of costs over plans with no wait before an
//! agent's final arrival is larger than the optimal sum of costs over all plans (or no wait-free
//! plan exists). It is decided by a second, wait-free CBS bounded by the optimum.
//!
//! Each instance slot `i` draws candidates from its own counter-based stream
//! `(seed, W, H, k, i, attempt)` and keeps the first one whose `needs_wait` is the flag the slot
//! asks for, so the output depends only on the configuration, never on threads or machines.

use rayon::prelude::*;
use thiserror::Error;

use crate::error::{count, try_with_capacity, TooLarge};
use crate::grid::{Cell, Grid, UNREACHABLE};
use crate::instance::{Agent, Instance};
use crate::rng::Rng;
use crate::solver::{solve, Solution, SolveError, SolverConfig};

/// The largest map side the generator makes.
pub const MAX_SIDE: u32 = 256;

/// What to generate. Build one from [`GeneratorConfig::default`] with the named setters:
///
/// ```
/// use floe_core::generator::{generate, GeneratorConfig};
/// let cfg = GeneratorConfig::default().size(5).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(4).seed(7);
/// assert_eq!(generate(&cfg).unwrap().len(), 4);
/// ```
///
/// In JSON every field is optional (the defaults: one 2-agent instance on 4×4, no holes, no
/// waits, seed 0, 2,000 attempts, 5,000 search nodes).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GeneratorConfig {
    pub width: u32,
    pub height: u32,
    /// Agents per instance.
    pub agents: usize,
    /// Share of cells that are holes (rounded to a whole number of holes per map).
    pub hole_ratio: f64,
    /// Share of instances whose optimal plans need a wait.
    pub wait_ratio: f64,
    pub count: usize,
    pub seed: u64,
    /// Candidates tried per instance before giving up.
    pub max_attempts: u32,
    /// High-level node limit for each solve; candidates over it are skipped.
    pub max_nodes: u64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        Self {
            width: 4,
            height: 4,
            agents: 2,
            hole_ratio: 0.0,
            wait_ratio: 0.0,
            count: 1,
            seed: 0,
            max_attempts: 2_000,
            max_nodes: 5_000,
        }
    }
}

impl GeneratorConfig {
    /// A square map of side `side` (width and height).
    #[must_use]
    pub fn size(mut self, side: u32) -> Self {
        (self.width, self.height) = (side, side);
        self
    }

    /// Agents per instance.
    #[must_use]
    pub fn agents(mut self, agents: usize) -> Self {
        self.agents = agents;
        self
    }

    /// The share of cells that are holes.
    #[must_use]
    pub fn hole_ratio(mut self, ratio: f64) -> Self {
        self.hole_ratio = ratio;
        self
    }

    /// The share of instances whose optimal plans need a wait.
    #[must_use]
    pub fn wait_ratio(mut self, ratio: f64) -> Self {
        self.wait_ratio = ratio;
        self
    }

    /// How many instances.
    #[must_use]
    pub fn count(mut self, count: usize) -> Self {
        self.count = count;
        self
    }

    /// The seed: the same configuration and seed give the same instances.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Number of holes per map.
    #[must_use]
    pub fn holes(&self) -> u32 {
        (self.hole_ratio * f64::from(self.width * self.height)).round() as u32
    }

    /// Number of instances that need a wait.
    #[must_use]
    pub fn wait_count(&self) -> usize {
        (self.wait_ratio * self.count as f64).round() as usize
    }

    fn setting(&self) -> String {
        format!(
            "{} agents on {}x{}, hole_ratio {}, wait_ratio {}",
            self.agents, self.width, self.height, self.hole_ratio, self.wait_ratio
        )
    }

    /// Checks the setting without generating anything: what [`generate`] refuses up front.
    ///
    /// # Errors
    /// [`GenerateError::Config`] naming the setting.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let bad = |m: String| Err(GenerateError::Config(m));
        if self.width == 0 || self.height == 0 || self.width > MAX_SIDE || self.height > MAX_SIDE {
            return bad(format!("map size {}x{} is outside 1..={MAX_SIDE}", self.width, self.height));
        }
        if self.agents == 0 {
            return bad("at least one agent is needed".into());
        }
        if !(0.0..1.0).contains(&self.hole_ratio) {
            return bad(format!("hole_ratio {} is outside [0, 1)", self.hole_ratio));
        }
        if !(0.0..=1.0).contains(&self.wait_ratio) {
            return bad(format!("wait_ratio {} is outside [0, 1]", self.wait_ratio));
        }
        let free = self.width * self.height - self.holes();
        if (self.agents * 2) as u32 > free {
            return bad(format!(
                "{} need {} distinct free cells; a {}x{} map with {} has {free}",
                count(self.agents as u64, "agent", "agents"),
                self.agents * 2,
                self.width,
                self.height,
                count(self.holes(), "hole", "holes")
            ));
        }
        if self.agents == 1 && self.wait_count() > 0 {
            return bad("a single agent never needs to wait: use wait_ratio 0 with one agent".into());
        }
        Ok(())
    }
}

/// Why a batch could not be generated.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum GenerateError {
    /// The configuration is out of range.
    #[error("invalid generator setting: {0}")]
    Config(String),
    /// The memory `count` instances need cannot be had.
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    /// No candidate with the requested `needs_wait` flag was found in time.
    #[error("could not reach the requested wait ratio for {setting}: no instance with needs_wait = {needs_wait} in {attempts} attempts (instance {} of {count}); lower wait_ratio or hole_ratio, or use a larger map", slot + 1)]
    Unreachable { setting: String, needs_wait: bool, attempts: u32, slot: usize, count: usize },
}

/// Decides `needs_wait` for an instance given one of its optimal plans. Returns the flag and, when
/// a wait-free optimal plan exists, that plan.
///
/// # Errors
/// The wait-free search hit the node limit.
pub fn needs_wait(
    instance: &Instance,
    optimal: &Solution,
    max_nodes: u64,
) -> Result<(bool, Option<Solution>), SolveError> {
    if !optimal.has_wait_before_arrival() {
        return Ok((false, Some(optimal.clone())));
    }
    let config =
        SolverConfig { max_nodes, time_limit: None, allow_waits: false, soc_bound: Some(optimal.soc) };
    match solve(instance, &config) {
        Ok(s) => Ok((false, Some(s))),
        Err(SolveError::Exhausted { .. } | SolveError::Unreachable { .. }) => Ok((true, None)),
        Err(e) => Err(e),
    }
}

/// Draws one candidate map with its agents: exactly `holes` holes, 2k distinct free cells for
/// starts and goals, every goal reachable from its start. `None` if the draw is disconnected.
fn draw(cfg: &GeneratorConfig, rng: &mut Rng) -> Option<Instance> {
    let mut grid = Grid::new(cfg.width, cfg.height);
    let n = grid.cells();
    let mut cells: Vec<Cell> = (0..n).collect();
    // Partial Fisher-Yates: the first `holes` cells become holes, the next 2k starts and goals.
    let picks = cfg.holes() as usize + 2 * cfg.agents;
    for i in 0..picks {
        let j = i + rng.below(n - i as u32) as usize;
        cells.swap(i, j);
    }
    for &c in &cells[..cfg.holes() as usize] {
        grid.set_hole(c, true);
    }
    let ends = &cells[cfg.holes() as usize..picks];
    let mut agents = Vec::with_capacity(cfg.agents);
    for a in 0..cfg.agents {
        let (s, g) = (ends[2 * a], ends[2 * a + 1]);
        if grid.distances_from(g)[s as usize] == UNREACHABLE {
            return None;
        }
        agents.push(Agent { start: grid.pos(s), goal: grid.pos(g) });
    }
    Instance::new(grid, agents).ok()
}

/// Holes as in [`draw`], then 2k distinct cells of the largest frozen region for starts and goals.
fn draw_connected(cfg: &GeneratorConfig, rng: &mut Rng) -> Option<Instance> {
    let mut grid = Grid::new(cfg.width, cfg.height);
    let n = grid.cells();
    let mut cells: Vec<Cell> = (0..n).collect();
    let holes = cfg.holes() as usize;
    for i in 0..holes {
        let j = i + rng.below(n - i as u32) as usize;
        cells.swap(i, j);
    }
    for &c in &cells[..holes] {
        grid.set_hole(c, true);
    }
    let mut best = grid.largest_region();
    place_agents(grid, &mut best, cfg.agents, rng)
}

/// `k` agents on `grid` with starts and goals drawn among `cells` (a region of frozen cells: the
/// largest, [`Grid::largest_region`]): a partial Fisher-Yates of `cells` (left in its shuffled
/// order), agent `a` starting on the `2a`-th and heading for the `2a+1`-th. `None` when the cells
/// cannot hold `k` agents.
pub fn place_agents(grid: Grid, cells: &mut [Cell], k: usize, rng: &mut Rng) -> Option<Instance> {
    if cells.len() < 2 * k {
        return None;
    }
    for i in 0..2 * k {
        let j = i + rng.below((cells.len() - i) as u32) as usize;
        cells.swap(i, j);
    }
    let agents =
        (0..k).map(|a| Agent { start: grid.pos(cells[2 * a]), goal: grid.pos(cells[2 * a + 1]) }).collect();
    Instance::new(grid, agents).ok()
}

/// Random instances for stepping benchmarks and tests: exactly `round(hole_ratio · W·H)` holes and
/// k agents with distinct starts and distinct goals in the largest frozen region, but **not
/// solved**: the instances may be unsolvable as a whole and carry no optimum.
///
/// # Errors
/// An out-of-range configuration, or no connected draw in `max_attempts` tries for a slot.
pub fn random_instances(cfg: &GeneratorConfig) -> Result<Vec<Instance>, GenerateError> {
    GeneratorConfig { wait_ratio: 0.0, ..cfg.clone() }.validate()?;
    let out = instances_room(cfg.count)?;
    collect_slots(
        out,
        (0..cfg.count).into_par_iter().map(|slot| {
            (0..cfg.max_attempts)
                .find_map(|attempt| {
                    draw_connected(cfg, &mut candidate_stream(cfg, slot, attempt, Some(0x5eed)))
                })
                .ok_or(GenerateError::Unreachable {
                    setting: cfg.setting(),
                    needs_wait: false,
                    attempts: cfg.max_attempts,
                    slot,
                    count: cfg.count,
                })
        }),
    )
}

/// One instance as [`random_instances`] makes its slot 0 of `cfg` (its `count` aside), on the
/// caller's thread: for a few levels at a time (a refill), where handing each to the thread pool
/// costs more than drawing it.
///
/// # Errors
/// As [`random_instances`].
pub fn random_instance(cfg: &GeneratorConfig) -> Result<Instance, GenerateError> {
    let cfg = GeneratorConfig { wait_ratio: 0.0, count: 1, ..cfg.clone() };
    cfg.validate()?;
    (0..cfg.max_attempts)
        .find_map(|attempt| draw_connected(&cfg, &mut candidate_stream(&cfg, 0, attempt, Some(0x5eed))))
        .ok_or(GenerateError::Unreachable {
            setting: cfg.setting(),
            needs_wait: false,
            attempts: cfg.max_attempts,
            slot: 0,
            count: 1,
        })
}

/// Room for `n` instances, asked for before any is made.
fn instances_room(n: usize) -> Result<Vec<Instance>, TooLarge> {
    try_with_capacity(n, || format!("{} (their records alone)", count(n as u64, "instance", "instances")))
}

/// The slots' instances in order into `out` (which has room for them all), or the first error.
fn collect_slots(
    mut out: Vec<Instance>,
    slots: impl IndexedParallelIterator<Item = Result<Instance, GenerateError>>,
) -> Result<Vec<Instance>, GenerateError> {
    // As rayon's own collect of results: stop at an error and keep one.
    let error = std::sync::Mutex::new(None);
    let made = slots.map(|r| match r {
        Ok(inst) => Some(inst),
        Err(e) => {
            error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
            None
        }
    });
    out.par_extend(made.while_some());
    match error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The random stream of one candidate: (seed, W, H, k, slot, attempt) and an optional tag that
/// keeps other uses of the same settings apart.
fn candidate_stream(cfg: &GeneratorConfig, slot: usize, attempt: u32, tag: Option<u64>) -> Rng {
    let words = [
        cfg.seed,
        u64::from(cfg.width),
        u64::from(cfg.height),
        cfg.agents as u64,
        slot as u64,
        u64::from(attempt),
        tag.unwrap_or(0),
    ];
    Rng::from_counters(&words[..if tag.is_some() { 7 } else { 6 }])
}

/// Generates one instance for slot `slot`, wanting the given `needs_wait` flag.
fn generate_slot(cfg: &GeneratorConfig, slot: usize, want_wait: bool) -> Result<Instance, GenerateError> {
    let solver = SolverConfig { max_nodes: cfg.max_nodes, ..SolverConfig::default() };
    for attempt in 0..cfg.max_attempts {
        let Some(mut inst) = draw(cfg, &mut candidate_stream(cfg, slot, attempt, None)) else {
            continue;
        };
        let Ok(solution) = solve(&inst, &solver) else {
            continue;
        };
        // A plan with no waits settles the flag without a second search.
        if want_wait && !solution.has_wait_before_arrival() {
            continue;
        }
        let Ok((flag, wait_free)) = needs_wait(&inst, &solution, cfg.max_nodes) else {
            continue;
        };
        if flag != want_wait {
            continue;
        }
        let stored = wait_free.as_ref().unwrap_or(&solution);
        inst.optimal = Some(stored.to_optimal_plan(&inst.grid));
        inst.needs_wait = Some(flag);
        inst.id = Some(format!(
            "{}ag_{}x{}_hr{}_wr{}_{slot:03}",
            cfg.agents, cfg.width, cfg.height, cfg.hole_ratio, cfg.wait_ratio
        ));
        return Ok(inst);
    }
    Err(GenerateError::Unreachable {
        setting: cfg.setting(),
        needs_wait: want_wait,
        attempts: cfg.max_attempts,
        slot,
        count: cfg.count,
    })
}

/// Which slots must need a wait: exactly `wait_count` of them, spread by a seeded shuffle.
fn slot_flags(cfg: &GeneratorConfig) -> Result<Vec<bool>, TooLarge> {
    let mut flags = try_with_capacity(cfg.count, || {
        format!("the wait flags of {}", count(cfg.count as u64, "instance", "instances"))
    })?;
    flags.extend((0..cfg.count).map(|i| i < cfg.wait_count()));
    Rng::from_counters(&[cfg.seed, 0x5107, cfg.count as u64]).shuffle(&mut flags);
    Ok(flags)
}

/// Generates `count` instances (in parallel; the output does not depend on the thread count).
///
/// # Errors
/// An out-of-range configuration, or a wait ratio that could not be reached.
pub fn generate(cfg: &GeneratorConfig) -> Result<Vec<Instance>, GenerateError> {
    generate_with_progress(cfg, &crate::progress::Silent)
}

/// As [`generate`], advancing `progress` by one for each instance as it is finished (from the
/// worker threads, in any order). The caller begins and ends the stage.
///
/// # Errors
/// As [`generate`].
pub fn generate_with_progress(
    cfg: &GeneratorConfig,
    progress: &dyn crate::progress::Progress,
) -> Result<Vec<Instance>, GenerateError> {
    generate_slots_with_progress(cfg, 0..cfg.count, progress)
}

/// The instances of slots `slots` only: exactly `generate(cfg)[slots]`, since every slot draws
/// from its own stream and the slots that need a wait are chosen over the whole `count`. Shards
/// of one configuration can so be generated apart (on other machines) and concatenated.
///
/// # Errors
/// As [`generate`], or a range outside `0..count`.
pub fn generate_slots(
    cfg: &GeneratorConfig,
    slots: std::ops::Range<usize>,
) -> Result<Vec<Instance>, GenerateError> {
    generate_slots_with_progress(cfg, slots, &crate::progress::Silent)
}

fn generate_slots_with_progress(
    cfg: &GeneratorConfig,
    slots: std::ops::Range<usize>,
    progress: &dyn crate::progress::Progress,
) -> Result<Vec<Instance>, GenerateError> {
    cfg.validate()?;
    if slots.start > slots.end || slots.end > cfg.count {
        return Err(GenerateError::Config(format!(
            "slots {}..{} are not within the {} instances",
            slots.start, slots.end, cfg.count
        )));
    }
    let out = instances_room(slots.len())?;
    let flags = slot_flags(cfg)?;
    collect_slots(
        out,
        flags[slots.clone()].par_iter().zip(slots.into_par_iter()).map(|(&want, slot)| {
            let inst = generate_slot(cfg, slot, want);
            progress.advance(1, "");
            inst
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_random_instance_is_the_batchs_first() {
        for (side, agents, holes, seed) in [(5, 2, 0.2, 1), (9, 4, 0.3, 7), (12, 3, 0.0, 11), (4, 1, 0.5, 3)]
        {
            let cfg =
                GeneratorConfig::default().size(side).agents(agents).hole_ratio(holes).seed(seed).count(1);
            assert_eq!(random_instance(&cfg).unwrap(), random_instances(&cfg).unwrap().remove(0), "{cfg:?}");
        }
    }

    #[test]
    fn a_configuration_in_json_takes_the_defaults_for_what_it_leaves_out() {
        let cfg: GeneratorConfig = serde_json::from_str(r#"{"agents": 3, "width": 6, "height": 6}"#).unwrap();
        assert_eq!(cfg, GeneratorConfig::default().size(6).agents(3));
        let round_trip: GeneratorConfig =
            serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(round_trip, cfg);
        assert!(serde_json::from_str::<GeneratorConfig>(r#"{"agent": 3}"#).is_err());
        GeneratorConfig::default().validate().unwrap();
    }

    #[test]
    fn shards_of_slots_concatenate_to_the_whole() {
        let cfg =
            GeneratorConfig::default().size(5).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(9).seed(11);
        let whole = generate(&cfg).unwrap();
        let mut parts = Vec::new();
        for r in [0..4, 4..4, 4..7, 7..9] {
            parts.extend(generate_slots(&cfg, r).unwrap());
        }
        assert_eq!(parts, whole);
        assert!(matches!(generate_slots(&cfg, 8..10), Err(GenerateError::Config(_))));
    }
}
