//! The optimal solver, exact for the sum of costs: conflict-based search (CBS) over space-time
//! A*, and on small instances an A* over joint states that also proves when no plan exists.
//!
//! [`solve`] works in this order:
//! 1. Agents cut off from their goals by holes: [`SolveError::Unreachable`].
//! 2. A **small joint space** ([`joint::fits`]: at least two agents and P(n, k) · 5^k at most
//!    [`joint::MAX_WORK`], 20 million, for k agents on n free cells) goes to the joint search
//!    first. It decides at once: no plan ([`SolveError::Exhausted`]), or an optimal one; CBS
//!    then gets at most 5,000 nodes (the generator's default limit, never more than the
//!    config's), and its plan is returned if it finds one, so that the plans CBS gave before
//!    stay the same; otherwise the joint search's plan is. The joint search honours
//!    [`SolverConfig::allow_waits`], [`SolverConfig::soc_bound`] and the time limit, but not the
//!    node limit: its own caps (a million states, five million steps) bound it, and if it
//!    reaches them the solver goes on as on a large space.
//! 3. Otherwise CBS with the node and time limits. When it gives up, with waits allowed and no
//!    bound, a breadth-first search over joint configurations ([`reachability`], up to two
//!    million) still decides whether the goals can be reached at all.
//!
//! Improvements over plain CBS, each of which keeps the search exactly optimal:
//! - conflicts are classified with multi-valued decision diagrams (MDDs) and **cardinal**
//!   conflicts are split first, then semi-cardinal, then the rest (`mdd.rs`);
//! - the high level is ordered by `g + h` where `h` is the **CG heuristic**: the minimum vertex
//!   cover of the graph of cardinal conflicts, an admissible lower bound on the extra cost;
//! - **bypass**: when splitting a non-cardinal conflict yields a child with the same cost and
//!   fewer conflicts, the child's path replaces the parent's instead of branching;
//! - the low level breaks ties between equally short paths by the fewest conflicts with the
//!   other agents' current paths (a conflict-avoidance table).
//!
//! The same searches, with waits forbidden before an agent's arrival and a sum-of-costs bound,
//! decide the generator's `needs_wait` flag ([`SolverConfig::allow_waits`]).

mod cbs;
mod constraints;
pub mod joint;
mod low_level;
mod mdd;
pub mod reachability;

use std::time::{Duration, Instant};

use thiserror::Error;

use crate::grid::{Cell, Grid};
use crate::instance::{Instance, OptimalPlan};
use crate::moves::{moves_to_string, Move};

/// Limits and options of a solve.
#[derive(Debug, Clone)]
pub struct SolverConfig {
    /// Most CBS high-level (constraint-tree) nodes to expand before giving up. The joint search
    /// on small joint spaces does not count against it: it has caps of its own.
    pub max_nodes: u64,
    /// Wall-clock limit; `None` for none. A time limit makes results machine-dependent, so the
    /// generator uses only the node limit.
    pub time_limit: Option<Duration>,
    /// Whether agents may wait before their final arrival. `false` searches only wait-free
    /// plans (moving away and back is still allowed; staying on the goal after arrival is not a
    /// wait).
    pub allow_waits: bool,
    /// Only look for plans whose sum of costs is at most this; `None` for no bound.
    pub soc_bound: Option<u32>,
}

impl Default for SolverConfig {
    fn default() -> Self {
        Self { max_nodes: 200_000, time_limit: None, allow_waits: true, soc_bound: None }
    }
}

/// Why no plan came back.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SolveError {
    /// Holes cut an agent off from its goal, so no plan exists.
    #[error("unsolvable: agent {agent} cannot reach its goal {goal} from {start}")]
    Unreachable { agent: usize, start: crate::Pos, goal: crate::Pos },
    /// No plan exists (within the bound, if one was set): the search space was exhausted, or
    /// the joint configuration space shows the goals cannot be reached together.
    #[error("unsolvable: no plan exists{}", bound.map(|b| format!(" with sum of costs at most {b}")).unwrap_or_default())]
    Exhausted { bound: Option<u32> },
    /// The node limit was reached before a plan was found.
    #[error("gave up after expanding {limit} search nodes (raise the node limit)")]
    NodeLimit { limit: u64 },
    /// The time limit was reached before a plan was found.
    #[error("gave up after {millis} ms (raise the time limit)")]
    TimeLimit { millis: u64 },
}

/// Counters from one search: CBS's, or for a plan from the joint search, its own (joint states
/// expanded and joint steps generated, the other two zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SolveStats {
    /// High-level nodes (joint states) expanded.
    pub expanded: u64,
    /// High-level nodes (joint steps) generated.
    pub generated: u64,
    /// Bypasses taken.
    pub bypasses: u64,
    /// Low-level searches run.
    pub low_level_searches: u64,
}

/// An optimal plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solution {
    /// Per agent, its cells at times 0..=cost (it stays on its goal afterwards).
    pub paths: Vec<Vec<Cell>>,
    /// Sum of costs.
    pub soc: u32,
    /// Largest agent cost.
    pub makespan: u32,
    /// Search counters.
    pub stats: SolveStats,
}

impl Solution {
    /// Per-agent moves (the path's length minus one moves each).
    #[must_use]
    pub fn moves(&self, grid: &Grid) -> Vec<Vec<Move>> {
        self.paths
            .iter()
            .map(|p| {
                p.windows(2)
                    .map(|w| {
                        let (a, b) = (grid.pos(w[0]), grid.pos(w[1]));
                        Move::between(
                            (i64::from(a.row), i64::from(a.col)),
                            (i64::from(b.row), i64::from(b.col)),
                        )
                        .expect("solver paths move one cell at a time")
                    })
                    .collect()
            })
            .collect()
    }

    /// Per-agent move strings such as `"RRDW"`.
    #[must_use]
    pub fn move_strings(&self, grid: &Grid) -> Vec<String> {
        self.moves(grid).iter().map(|m| moves_to_string(m)).collect()
    }

    /// The ground-truth record stored in generated instances.
    #[must_use]
    pub fn to_optimal_plan(&self, grid: &Grid) -> OptimalPlan {
        OptimalPlan { soc: self.soc, makespan: self.makespan, moves: self.move_strings(grid) }
    }

    /// Whether some agent waits before its final arrival.
    #[must_use]
    pub fn has_wait_before_arrival(&self) -> bool {
        self.paths.iter().any(|p| p.windows(2).any(|w| w[0] == w[1]))
    }
}

/// Each agent's distances to its goal over frozen cells ([`Grid::distances_from`] its goal), in
/// agent order: what the search's heuristic reads, and the one check of whether every agent can
/// reach its goal at all.
///
/// # Errors
/// [`SolveError::Unreachable`] for the first agent holes cut off from its goal.
pub fn goal_distances(instance: &Instance) -> Result<Vec<Vec<u32>>, SolveError> {
    let mut dists = Vec::with_capacity(instance.agents.len());
    for (i, a) in instance.agents.iter().enumerate() {
        let d = instance.grid.distances_from(instance.grid.cell(a.goal));
        if d[instance.grid.cell(a.start) as usize] == crate::grid::UNREACHABLE {
            return Err(SolveError::Unreachable { agent: i, start: a.start, goal: a.goal });
        }
        dists.push(d);
    }
    Ok(dists)
}

/// An instance's optimal sum of costs: the stored plan's, else the solver's with the default
/// limits (`None` when it gives up or no plan exists).
#[must_use]
pub fn optimum(instance: &Instance) -> Option<u32> {
    instance
        .optimal
        .as_ref()
        .map(|o| o.soc)
        .or_else(|| solve(instance, &SolverConfig::default()).ok().map(|s| s.soc))
}

/// Finds a plan of minimum sum of costs.
///
/// # Errors
/// [`SolveError`]: unreachable goals, an exhausted search (no plan, or none within
/// [`SolverConfig::soc_bound`]), or a node or time limit.
pub fn solve(instance: &Instance, config: &SolverConfig) -> Result<Solution, SolveError> {
    let started = Instant::now();
    // Agents cut off from their goals are reported before any search. CBS's time limit counts
    // from here.
    let cbs = cbs::Cbs::new(instance, config)?;
    if joint::fits(instance) {
        match joint::search_capped(instance, config, started, joint::Caps::SOLVER) {
            Ok(plan) => {
                // CBS's own plan when CBS finds one within a few nodes, so that the plans stored
                // by the generator stay those of CBS; else the joint search's.
                let quick = SolverConfig {
                    max_nodes: config.max_nodes.min(CBS_FIRST_NODES),
                    time_limit: config.time_limit.map(|t| t.saturating_sub(started.elapsed())),
                    ..config.clone()
                };
                return Ok(cbs::Cbs::new(instance, &quick)?.run().unwrap_or(plan));
            }
            // A cap was reached: CBS, as on large joint spaces.
            Err(SolveError::NodeLimit { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    match cbs.run() {
        // CBS cannot prove that no plan exists; the breadth-first reachability check can, on
        // joint spaces up to its size.
        Err(e @ (SolveError::NodeLimit { .. } | SolveError::TimeLimit { .. }))
            if config.allow_waits && config.soc_bound.is_none() =>
        {
            match reachability::goals_reachable(instance, REACHABILITY_STATES) {
                Some(false) => Err(SolveError::Exhausted { bound: None }),
                _ => Err(e),
            }
        }
        other => other,
    }
}

/// Most CBS nodes spent after the joint search has found a plan: the generator's default node
/// limit, so that with a node limit up to this the plans CBS found before are still returned.
const CBS_FIRST_NODES: u64 = 5_000;

/// Largest joint space the solvability check searches after CBS gives up.
const REACHABILITY_STATES: u64 = 2_000_000;
