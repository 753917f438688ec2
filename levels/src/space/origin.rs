//! Levels from elsewhere than the generator's space: a file of instances, MovingAI maps with
//! starts and goals drawn on them, or a host's function `(n, seed) -> levels`
//! ([`SourceSpec`], [`LevelFn`]). A [`crate::LevelSource`] draws from one of these in place of
//! its space; level `c` is still a function of the seed and `c` alone (for a function, of the
//! seed it is handed).
//!
//! - **A file** (JSON Lines, a JSON array, or one object, as `floe_core::parse_instances` reads)
//!   is read and checked whole when the source is made: a malformed line, or an instance that is
//!   unsolvable (`solve`: by CBS, which also stores the optimum of each instance that carries
//!   none; else each agent's goal reachable from its start), refuses the file, naming the line.
//!   Its levels are played in passes, each pass over every level once in an order shuffled by
//!   the seed and the pass.
//! - **MovingAI maps** (`.map`: `.` frozen, every other cell a hole) are read when the source is
//!   made; a map over the engine's side ([`floe_core::pool::MAX_SIDE`]) or too small to hold the
//!   agents is refused, naming it. Level `c` is a map drawn uniformly, an agent count uniformly in
//!   `agents`, and starts and goals drawn among the cells of the map's largest frozen region;
//!   with `solve`, drawn again (up to [`MAP_ATTEMPTS`] times) until CBS solves it, its optimum
//!   stored.
//! - **A function** is handed `n` and a seed drawn from the source's seed and its count of
//!   levels drawn; it answers `n` levels that fit the level space's agents, sizes and hole
//!   ratios (with `solve`, an optimum is solved for each that carries none), or the draw is
//!   refused naming the level.

use std::path::PathBuf;
use std::sync::Arc;

use floe_core::generator::place_agents;
use floe_core::grid::{Cell, Grid};
use floe_core::instance::parse_instances;
use floe_core::pool::Room;
use floe_core::rng::Rng;
use floe_core::solver::{goal_distances, solve, SolverConfig};
use floe_core::Instance;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::LevelSpace;
use crate::error::LevelsError;

/// Tries a map level's starts and goals are drawn before the draw is refused.
pub const MAP_ATTEMPTS: u32 = 100;

/// A source of levels other than the generator's space, as a spec names it:
///
/// ```json
/// {"file": {"path": "levels.jsonl", "solve": true}}
/// {"maps": {"files": ["maps/room.map"], "agents": [2, 4], "solve": true}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SourceSpec {
    /// The levels of a file of instances.
    File(FileSource),
    /// MovingAI maps with starts and goals drawn.
    Maps(MapsSource),
}

/// A file of instances.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSource {
    /// Its path.
    pub path: PathBuf,
    /// Every instance solved by CBS when the file is read, its optimum stored where it has none,
    /// an unsolvable one refused (true); or only each goal's reachability checked (false) \[true\].
    #[serde(default = "yes")]
    pub solve: bool,
}

/// MovingAI maps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapsSource {
    /// Their paths.
    pub files: Vec<PathBuf>,
    /// Agents per level, `[least, most]` \[2, 2\].
    #[serde(default = "two_agents")]
    pub agents: [u32; 2],
    /// Each level solved by CBS, its optimum stored (true), or its starts and goals drawn in one
    /// region only (false) \[true\].
    #[serde(default = "yes")]
    pub solve: bool,
}

fn yes() -> bool {
    true
}

fn two_agents() -> [u32; 2] {
    [2, 2]
}

/// A host's source of levels: `f(n, seed)` answers `n` levels (or why not).
pub type LevelFn = Arc<dyn Fn(usize, u64) -> Result<Vec<Instance>, String> + Send + Sync>;

/// Where a source's levels come from, as saved: what a state is checked against when it is
/// loaded (the levels themselves are the source's made from the same spec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum OriginKey {
    /// The generator over the level space.
    #[default]
    Space,
    /// A file: its path, its levels and a digest of them.
    File { path: PathBuf, levels: usize, digest: u64, solve: bool },
    /// Maps: their paths, a digest of their grids, the agents and `solve`.
    Maps { files: Vec<PathBuf>, digest: u64, agents: [u32; 2], solve: bool },
    /// A host's function.
    Function,
}

/// A map's grid with the cells of its largest frozen region.
#[derive(Debug)]
struct Map {
    name: String,
    grid: Grid,
    region: Vec<Cell>,
}

/// What a source other than the space draws from.
enum Loaded {
    File(FileLevels),
    Maps { maps: Vec<Map>, agents: [u32; 2], solve: bool },
    Function { f: LevelFn, space: LevelSpace },
}

/// A pass's order of a file's levels, with the `(seed, pass)` it is of.
type PassOrder = (u64, u64, Arc<Vec<u32>>);

/// A file's levels, with the order of the pass drawn from last.
struct FileLevels {
    levels: Vec<Instance>,
    /// `(seed, pass)` and that pass's order: shuffled once a pass, not once a draw.
    order: std::sync::Mutex<Option<PassOrder>>,
}

impl FileLevels {
    /// Pass `pass`'s order of the levels with `seed`.
    fn order(&self, seed: u64, pass: u64, tag: u64) -> Arc<Vec<u32>> {
        let mut cached = self.order.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*cached {
            Some((s, p, o)) if (*s, *p) == (seed, pass) => Arc::clone(o),
            _ => {
                let mut o: Vec<u32> = (0..self.levels.len() as u32).collect();
                Rng::from_counters(&[seed, pass, tag]).shuffle(&mut o);
                let o = Arc::new(o);
                *cached = Some((seed, pass, Arc::clone(&o)));
                o
            }
        }
    }
}

/// A source's origin: its key, and what it draws from (absent in a state read back, which
/// takes the loading driver's).
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Origin {
    key: OriginKey,
    #[serde(skip)]
    loaded: Option<Arc<Loaded>>,
}

impl PartialEq for Origin {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.key.fmt(f)
    }
}

/// A digest of bytes (FNV-1a), to tell two files apart in a saved state.
fn digest(parts: impl IntoIterator<Item = impl AsRef<[u8]>>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for &b in p.as_ref() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn read(path: &std::path::Path, what: &str) -> Result<String, LevelsError> {
    std::fs::read_to_string(path).map_err(|e| LevelsError::Source(format!("{what} {}: {e}", path.display())))
}

/// Solves `level` where it carries no optimum (`solve`), or checks its goals reachable.
fn checked(mut level: Instance, solve_it: bool) -> Result<Instance, String> {
    if solve_it {
        if level.optimal.is_none() {
            let plan = solve(&level, &SolverConfig::default()).map_err(|e| e.to_string())?;
            level.optimal = Some(plan.to_optimal_plan(&level.grid));
        }
        return Ok(level);
    }
    goal_distances(&level).map_err(|e| e.to_string())?;
    Ok(level)
}

impl Origin {
    /// The origin a spec names, its files read and checked.
    ///
    /// # Errors
    /// [`LevelsError::Source`] naming the file (and line, or map) that does not read, breaks a
    /// rule, is unsolvable, too large for the engine, or too small for the agents.
    pub(crate) fn from_spec(spec: &SourceSpec) -> Result<Self, LevelsError> {
        match spec {
            SourceSpec::File(f) => {
                let text = read(&f.path, "level file")?;
                let levels = parse_instances(&text).map_err(|(line, e)| {
                    LevelsError::Source(format!("level file {}, line {line}: {e}", f.path.display()))
                })?;
                let too_large = |l: &Instance| {
                    l.num_agents() > floe_core::pool::MAX_AGENTS
                        || l.grid.width().max(l.grid.height()) > floe_core::pool::MAX_SIDE
                };
                if let Some(i) = levels.iter().position(too_large) {
                    let l = &levels[i];
                    return Err(LevelsError::Source(format!(
                        "level file {}, instance {}: {} agents on {}x{} is over the engine's limits ({} agents, side {})",
                        f.path.display(),
                        i + 1,
                        l.num_agents(),
                        l.grid.width(),
                        l.grid.height(),
                        floe_core::pool::MAX_AGENTS,
                        floe_core::pool::MAX_SIDE
                    )));
                }
                let levels: Vec<Instance> = levels
                    .into_par_iter()
                    .enumerate()
                    .map(|(i, l)| {
                        checked(l, f.solve).map_err(|why| {
                            LevelsError::Source(format!(
                                "level file {}, instance {}: {why}",
                                f.path.display(),
                                i + 1
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?;
                let key = OriginKey::File {
                    path: f.path.clone(),
                    levels: levels.len(),
                    digest: digest(levels.iter().map(Instance::to_json)),
                    solve: f.solve,
                };
                let file = FileLevels { levels, order: std::sync::Mutex::new(None) };
                Ok(Origin { key, loaded: Some(Arc::new(Loaded::File(file))) })
            }
            SourceSpec::Maps(m) => {
                let [a0, a1] = m.agents;
                if a0 == 0 || a0 > a1 || a1 as usize > floe_core::pool::MAX_AGENTS {
                    return Err(LevelsError::Config(format!(
                        "map source: agents [{a0}, {a1}] must be 1 ≤ least ≤ most ≤ {}",
                        floe_core::pool::MAX_AGENTS
                    )));
                }
                if m.files.is_empty() {
                    return Err(LevelsError::Config("map source: `files` names no map".into()));
                }
                let mut maps = Vec::with_capacity(m.files.len());
                let mut texts = Vec::with_capacity(m.files.len());
                for path in &m.files {
                    let text = read(path, "map")?;
                    let grid = floe_core::movingai::parse_map(&text)
                        .map_err(|e| LevelsError::Source(format!("map {}: {e}", path.display())))?;
                    let side = grid.width().max(grid.height());
                    if side > floe_core::pool::MAX_SIDE {
                        return Err(LevelsError::Source(format!(
                            "map {} is {}x{}, over the engine's side of {}",
                            path.display(),
                            grid.width(),
                            grid.height(),
                            floe_core::pool::MAX_SIDE
                        )));
                    }
                    let region = grid.largest_region();
                    if region.len() < 2 * a0 as usize {
                        return Err(LevelsError::Source(format!(
                            "map {}: its largest frozen region has {} cells, and {a0} agents need {}",
                            path.display(),
                            region.len(),
                            2 * a0
                        )));
                    }
                    let name =
                        path.file_stem().map_or_else(|| "map".into(), |s| s.to_string_lossy().into_owned());
                    maps.push(Map { name, grid, region });
                    texts.push(text);
                }
                let key = OriginKey::Maps {
                    files: m.files.clone(),
                    digest: digest(&texts),
                    agents: m.agents,
                    solve: m.solve,
                };
                let loaded = Loaded::Maps { maps, agents: m.agents, solve: m.solve };
                Ok(Origin { key, loaded: Some(Arc::new(loaded)) })
            }
        }
    }

    /// A host's function as the origin, its levels bounded by `space`.
    pub(crate) fn function(f: LevelFn, space: LevelSpace) -> Self {
        Origin { key: OriginKey::Function, loaded: Some(Arc::new(Loaded::Function { f, space })) }
    }

    /// The generator's space.
    pub(crate) fn is_space(&self) -> bool {
        self.key == OriginKey::Space
    }

    pub(crate) fn key(&self) -> &OriginKey {
        &self.key
    }

    /// This origin, with what it draws from taken from `made` (the same key, made from the
    /// spec), for a state read back.
    pub(crate) fn with_loaded_of(self, made: &Origin) -> Origin {
        Origin { key: self.key, loaded: made.loaded.clone() }
    }

    /// The room a pool needs for every level (not for the space, whose room is its own).
    pub(crate) fn room(&self) -> Option<Room> {
        match self.loaded.as_deref()? {
            Loaded::File(file) => Some(Room {
                agents: file.levels.iter().map(Instance::num_agents).max().unwrap_or(0),
                side: file.levels.iter().map(|l| l.grid.width().max(l.grid.height())).max().unwrap_or(0),
            }),
            Loaded::Maps { maps, agents, .. } => Some(Room {
                agents: maps.iter().map(|m| m.region.len() / 2).max().unwrap_or(0).min(agents[1] as usize),
                side: maps.iter().map(|m| m.grid.width().max(m.grid.height())).max().unwrap_or(0),
            }),
            Loaded::Function { space, .. } => Some(space.room()),
        }
    }

    /// Levels `first..first + n` of this origin with `seed`; `None` for the space.
    pub(crate) fn draw(&self, seed: u64, first: u64, n: usize) -> Option<Result<Vec<Instance>, LevelsError>> {
        const TAG: u64 = 0x0071_6147;
        let loaded = match &self.loaded {
            Some(l) => l,
            None if self.is_space() => return None,
            None => {
                return Some(Err(LevelsError::Source(
                    "this source's levels were not loaded: make the driver from its spec".into(),
                )))
            }
        };
        if n == 0 {
            // A function is not asked for no levels.
            return Some(Ok(Vec::new()));
        }
        Some(match &**loaded {
            Loaded::File(file) => {
                let len = file.levels.len() as u64;
                let mut order = file.order(seed, first / len, TAG);
                Ok((first..first + n as u64)
                    .map(|c| {
                        if c % len == 0 && c > first {
                            order = file.order(seed, c / len, TAG);
                        }
                        file.levels[order[(c % len) as usize] as usize].clone()
                    })
                    .collect())
            }
            Loaded::Maps { maps, agents, solve: solve_it } => (first..first + n as u64)
                .into_par_iter()
                .map(|c| map_level(maps, *agents, *solve_it, &mut Rng::from_counters(&[seed, c, TAG, 1]), c))
                .collect(),
            Loaded::Function { f, space } => {
                let call_seed = Rng::from_counters(&[seed, first, TAG, 2]).next_u64();
                function_levels(f, space, n, call_seed)
            }
        })
    }
}

/// Level `c` of maps: a map, an agent count, and starts and goals in its largest region.
fn map_level(
    maps: &[Map],
    agents: [u32; 2],
    solve_it: bool,
    rng: &mut Rng,
    c: u64,
) -> Result<Instance, LevelsError> {
    let map = &maps[rng.below(maps.len() as u32) as usize];
    let most = agents[1].min((map.region.len() / 2) as u32);
    let k = (agents[0] + rng.below(most - agents[0] + 1)) as usize;
    let mut cells = map.region.clone();
    for _ in 0..MAP_ATTEMPTS {
        let Some(mut level) = place_agents(map.grid.clone(), &mut cells, k, rng) else { continue };
        level.id = Some(format!("{}_{k}ag_{c}", map.name));
        if !solve_it {
            return Ok(level);
        }
        if let Ok(plan) = solve(&level, &SolverConfig::default()) {
            level.optimal = Some(plan.to_optimal_plan(&level.grid));
            return Ok(level);
        }
    }
    Err(LevelsError::Source(format!(
        "map {}: no draw of {k} agents' starts and goals was solved in {MAP_ATTEMPTS} tries",
        map.name
    )))
}

/// A host function's `n` levels with `seed`, checked against `space`.
fn function_levels(
    f: &LevelFn,
    space: &LevelSpace,
    n: usize,
    seed: u64,
) -> Result<Vec<Instance>, LevelsError> {
    let refuse = |m: String| Err(LevelsError::Source(format!("the level function: {m}")));
    let levels = match f(n, seed) {
        Ok(l) => l,
        Err(why) => return refuse(format!("failed for {n} levels with seed {seed}: {why}")),
    };
    if levels.len() != n {
        return refuse(format!("asked for {n} levels, answered {}", levels.len()));
    }
    let [a0, a1] = space.agents;
    let [s0, s1] = space.size;
    let [h0, h1] = space.hole_ratio;
    for (i, l) in levels.iter().enumerate() {
        let (w, h, k) = (l.grid.width(), l.grid.height(), l.num_agents() as u32);
        let ratio = f64::from(l.grid.hole_count()) / f64::from(l.grid.cells());
        if !(a0..=a1).contains(&k) || !(s0..=s1).contains(&w.max(h)) {
            return refuse(format!(
                "level {i} has {k} agents on {w}x{h}, outside the level space's agents [{a0}, {a1}] and size [{s0}, {s1}]"
            ));
        }
        // The generator rounds a hole count to the nearest cell; a level written by hand may too.
        let slack = 0.5 / f64::from(l.grid.cells());
        if ratio < h0 - slack || ratio > h1 + slack {
            return refuse(format!(
                "level {i} has hole ratio {ratio:.3}, outside the level space's hole_ratio [{h0}, {h1}]"
            ));
        }
    }
    levels
        .into_par_iter()
        .enumerate()
        .map(|(i, l)| {
            checked(l, space.solve)
                .map_err(|why| LevelsError::Source(format!("the level function: level {i}: {why}")))
        })
        .collect()
}
