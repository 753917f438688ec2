//! The plan verifier: decides whether a plan is valid and optimal, and names its first failure.
//!
//! A plan is simulated time step by time step (t = 1, 2, …, T, where T is the longest agent's
//! plan; an agent whose plan has ended stays where it is). At each step the checks run in this
//! order, and the first one that fails is reported:
//! 1. per agent, in agent order: `out_of_bounds` (the agent left the grid), `illegal_move` (a
//!    coordinate path jumped more than one cell, or moved diagonally; a path that does not start
//!    on the agent's start cell fails this at time 0), `hole` (the agent is on a hole);
//! 2. `edge_conflict`: two agents swapped cells during the step (pairs in order, reported for the
//!    lower-numbered agent);
//! 3. `vertex_conflict`: two agents share a cell (likewise).
//!
//! After the last step, `goal_not_reached` is reported for the first agent not on its goal (time
//! T). Before any step: `parse_error` (the answer could not be read) and `wrong_agent_count` (the
//! plan covers a different number of agents than the instance has).

use serde::{Deserialize, Serialize};

use crate::grid::Cell;
use crate::instance::Instance;
use crate::plan::Plan;
use crate::rules::{conflicts_at, path_cost, Conflict};
use crate::solver::{solve, SolverConfig};

/// The kinds of failure, in the verifier's vocabulary (serialised in snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum FailureKind {
    ParseError = 1,
    WrongAgentCount = 2,
    IllegalMove = 3,
    OutOfBounds = 4,
    Hole = 5,
    VertexConflict = 6,
    EdgeConflict = 7,
    GoalNotReached = 8,
}

impl FailureKind {
    /// Every kind, in code order.
    pub const ALL: [FailureKind; 8] = [
        FailureKind::ParseError,
        FailureKind::WrongAgentCount,
        FailureKind::IllegalMove,
        FailureKind::OutOfBounds,
        FailureKind::Hole,
        FailureKind::VertexConflict,
        FailureKind::EdgeConflict,
        FailureKind::GoalNotReached,
    ];

    /// The snake-case name used in JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::ParseError => "parse_error",
            FailureKind::WrongAgentCount => "wrong_agent_count",
            FailureKind::IllegalMove => "illegal_move",
            FailureKind::OutOfBounds => "out_of_bounds",
            FailureKind::Hole => "hole",
            FailureKind::VertexConflict => "vertex_conflict",
            FailureKind::EdgeConflict => "edge_conflict",
            FailureKind::GoalNotReached => "goal_not_reached",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The first thing wrong with a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    /// The agent at fault (for conflicts, the lower-numbered of the two); `None` for
    /// `parse_error` and `wrong_agent_count`.
    pub agent: Option<usize>,
    /// The time step; `None` for `parse_error` and `wrong_agent_count`.
    pub time: Option<u32>,
    /// A sentence for people.
    pub detail: String,
}

/// The verifier's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub valid: bool,
    /// Valid, and its sum of costs equals the optimum.
    pub optimal: bool,
    pub failure: Option<Failure>,
    /// Sum of costs of a valid plan.
    pub soc: Option<u32>,
    /// Makespan of a valid plan.
    pub makespan: Option<u32>,
    /// The optimal sum of costs, when known.
    pub optimal_soc: Option<u32>,
}

impl Verdict {
    /// The verdict as `floe verify` prints it: `valid`, `optimal`, `failure` (kind name, agent,
    /// time, detail; null for a valid plan), `soc`, `makespan`, `optimal_soc`.
    #[must_use]
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::json!({
            "valid": self.valid,
            "optimal": self.optimal,
            "failure": self.failure.as_ref().map(|f| serde_json::json!({
                "kind": f.kind.name(),
                "agent": f.agent,
                "time": f.time,
                "detail": f.detail,
            })),
            "soc": self.soc,
            "makespan": self.makespan,
            "optimal_soc": self.optimal_soc,
        })
    }

    /// A verdict for a plan that failed before simulation (e.g. an unreadable answer).
    #[must_use]
    pub fn failed(kind: FailureKind, detail: String, optimal_soc: Option<u32>) -> Self {
        Self {
            valid: false,
            optimal: false,
            failure: Some(Failure { kind, agent: None, time: None, detail }),
            soc: None,
            makespan: None,
            optimal_soc,
        }
    }
}

/// Verifies `plan`, taking the optimum from the instance's stored `optimal` record or, if it has
/// none, from the solver (with its default limits; if that fails, `optimal_soc` is `None` and
/// `optimal` is false).
#[must_use]
pub fn verify(instance: &Instance, plan: &Plan) -> Verdict {
    let optimum = instance
        .optimal
        .as_ref()
        .map(|o| o.soc)
        .or_else(|| solve(instance, &SolverConfig::default()).ok().map(|s| s.soc));
    verify_with_optimum(instance, plan, optimum)
}

/// Verifies `plan` against a known optimum (or none).
#[must_use]
pub fn verify_with_optimum(instance: &Instance, plan: &Plan, optimal_soc: Option<u32>) -> Verdict {
    let k = instance.num_agents();
    if plan.num_agents() != k {
        return Verdict::failed(
            FailureKind::WrongAgentCount,
            format!(
                "the plan has {}, the instance {k}",
                crate::text::count(plan.num_agents() as u64, "agent", "agents")
            ),
            optimal_soc,
        );
    }
    match simulate(instance, plan) {
        Err(failure) => Verdict {
            valid: false,
            optimal: false,
            failure: Some(failure),
            soc: None,
            makespan: None,
            optimal_soc,
        },
        Ok(paths) => {
            let goals = instance.goal_cells();
            let costs: Vec<u32> =
                paths.iter().zip(&goals).map(|(p, &g)| path_cost(p, g).unwrap_or(0)).collect();
            let soc = costs.iter().sum();
            let makespan = costs.iter().copied().max().unwrap_or(0);
            Verdict {
                valid: true,
                optimal: optimal_soc == Some(soc),
                failure: None,
                soc: Some(soc),
                makespan: Some(makespan),
                optimal_soc,
            }
        }
    }
}

fn fail(kind: FailureKind, agent: usize, time: u32, detail: String) -> Failure {
    Failure { kind, agent: Some(agent), time: Some(time), detail }
}

/// Runs the plan; on success returns each agent's cells at times 0..=T.
fn simulate(instance: &Instance, plan: &Plan) -> Result<Vec<Vec<Cell>>, Failure> {
    let grid = &instance.grid;
    let k = instance.num_agents();
    let horizon = match plan {
        Plan::Moves(m) => m.iter().map(Vec::len).max().unwrap_or(0),
        Plan::Paths(p) => p.iter().map(|v| v.len().saturating_sub(1)).max().unwrap_or(0),
    };
    let starts: Vec<(i64, i64)> =
        instance.agents.iter().map(|a| (i64::from(a.start.row), i64::from(a.start.col))).collect();
    if let Plan::Paths(p) = plan {
        for (i, path) in p.iter().enumerate() {
            if path.first() != Some(&starts[i]) {
                let got = path.first().map_or("nothing".to_string(), |&(r, c)| format!("({r}, {c})"));
                return Err(fail(
                    FailureKind::IllegalMove,
                    i,
                    0,
                    format!(
                        "agent {i}'s path starts at {got}, not at its start {}",
                        instance.agents[i].start
                    ),
                ));
            }
        }
    }
    let mut paths: Vec<Vec<Cell>> = instance.start_cells().into_iter().map(|c| vec![c]).collect();
    let mut prev = starts.clone();
    let mut found = Vec::new();
    for t in 1..=horizon {
        for i in 0..k {
            let (r, c) = match plan {
                Plan::Paths(p) => p[i][t.min(p[i].len() - 1)],
                Plan::Moves(m) => m[i].get(t - 1).map_or(prev[i], |mv| {
                    let (dr, dc) = mv.delta();
                    (prev[i].0 + dr, prev[i].1 + dc)
                }),
            };
            if !grid.in_bounds(r, c) {
                return Err(fail(
                    FailureKind::OutOfBounds,
                    i,
                    t as u32,
                    format!("agent {i} leaves the grid at ({r}, {c})"),
                ));
            }
            let (pr, pc) = prev[i];
            if (r - pr).abs() + (c - pc).abs() > 1 {
                return Err(fail(
                    FailureKind::IllegalMove,
                    i,
                    t as u32,
                    format!("agent {i} jumps from ({pr}, {pc}) to ({r}, {c})"),
                ));
            }
            let cell = r as u32 * grid.width() + c as u32;
            if grid.is_hole(cell) {
                return Err(fail(
                    FailureKind::Hole,
                    i,
                    t as u32,
                    format!("agent {i} steps into the hole at ({r}, {c})"),
                ));
            }
            prev[i] = (r, c);
            paths[i].push(cell);
        }
        found.clear();
        conflicts_at(&paths, t as u32, &mut found);
        if let Some(conflict) = found.first() {
            return Err(match *conflict {
                Conflict::Edge { a, b, from, to, t } => fail(
                    FailureKind::EdgeConflict,
                    a,
                    t,
                    format!("agents {a} and {b} swap {} and {} at time {t}", grid.pos(from), grid.pos(to)),
                ),
                Conflict::Vertex { a, b, cell, t } => fail(
                    FailureKind::VertexConflict,
                    a,
                    t,
                    format!("agents {a} and {b} are both on {} at time {t}", grid.pos(cell)),
                ),
            });
        }
    }
    for (i, (path, goal)) in paths.iter().zip(instance.goal_cells()).enumerate() {
        let last = *path.last().expect("paths start non-empty");
        if last != goal {
            return Err(fail(
                FailureKind::GoalNotReached,
                i,
                horizon as u32,
                format!("agent {i} ends on {}, not on its goal {}", grid.pos(last), grid.pos(goal)),
            ));
        }
    }
    Ok(paths)
}
