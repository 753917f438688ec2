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
//!
//! One entry point per shape:
//! - a single plan, or a written answer read first: [`verify`], with a [`Check`] that says which
//!   optimum to compare with and whether to report [`PartialCredit`]; the answer is a
//!   [`Verdict`];
//! - a batch on the CPU: [`verify_batch`], one [`VerifyOut`] record per plan (and partial credit
//!   when a slice is given for it);
//! - a batch on either backend: the [`Verifier`] trait, implemented by [`CpuVerifier`] and the
//!   GPU's `engine::gpu::GpuVerifier`, which give the same records.
//!
//! The simulation is the verification kernel's (`verify/kernel.rs`), which the batched verifier
//! runs too; the checks are the rules' own ([`crate::rules::agent_fault`],
//! [`crate::rules::judge_conflicts`]). The same run also yields the plan's [`PartialCredit`].

use serde::{Deserialize, Serialize};

pub mod batch;
pub(crate) mod kernel;

#[cfg(feature = "testing")]
pub use batch::verification_workload;
pub use batch::{verify_batch, CpuVerifier, PlanBatch, Verifier, VerifyOut};

use crate::failure::{Failure, FailureKind, NONE};
use crate::instance::Instance;
use crate::plan::Plan;
use crate::reader::{read_plan, PlanForm};
use crate::rules::Occupancy;
use crate::solver::{solve, SolverConfig};

/// What [`verify`] reads: a plan, or a written answer that it reads first ([`read_plan`]: the
/// same forms and reasons everywhere). A text that is not a plan for the instance is a verdict
/// of kind `parse_error` (or `wrong_agent_count`) whose detail says why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer<'a> {
    /// A plan.
    Plan(&'a Plan),
    /// A written plan and the form to read it in (free text, JSON, or [`PlanForm::Auto`]).
    Written(&'a str, PlanForm),
}

impl<'a> From<&'a Plan> for Answer<'a> {
    fn from(plan: &'a Plan) -> Self {
        Answer::Plan(plan)
    }
}

/// Which optimum a verdict compares the plan's sum of costs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Optimum {
    /// The instance's stored `optimal` record or, if it has none, the solver's (default limits;
    /// if that fails, the optimum is unknown and no plan is optimal).
    #[default]
    Find,
    /// This one (`None`: unknown, and no plan is optimal).
    Given(Option<u32>),
}

/// What [`verify`] works out besides validity: the optimum to compare with, and whether to say
/// how far the plan got ([`Verdict::credit`]). `Check::default()` finds the optimum and leaves
/// the credit out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Check {
    pub optimum: Optimum,
    /// Report [`PartialCredit`] in the verdict.
    pub credit: bool,
}

impl Check {
    /// Against a known optimum (or none), without credit.
    #[must_use]
    pub fn against(optimal_soc: Option<u32>) -> Self {
        Check { optimum: Optimum::Given(optimal_soc), credit: false }
    }

    /// The same check, with the plan's partial credit in the verdict.
    #[must_use]
    pub fn with_credit(self) -> Self {
        Check { credit: true, ..self }
    }
}

/// The verifier's answer for one plan.
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
    /// How far the plan got, when the [`Check`] asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<PartialCredit>,
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

    /// A verdict for a plan that failed before simulation (an unreadable answer, or one for
    /// another number of agents), without credit.
    #[must_use]
    pub fn failed(kind: FailureKind, detail: String, optimal_soc: Option<u32>) -> Self {
        Self {
            valid: false,
            optimal: false,
            failure: Some(Failure { kind, agent: None, time: None, detail }),
            soc: None,
            makespan: None,
            optimal_soc,
            credit: None,
        }
    }
}

/// Verifies one plan, or one written answer, with the [`Check`] asked for.
///
/// ```
/// use floe_core::verify::{verify, Answer, Check};
/// use floe_core::{Instance, Plan, PlanForm};
/// let inst = Instance::from_json(
///     r#"{"grid": ["FF", "FF"], "agents": [{"start": [0, 0], "goal": [0, 1]}]}"#,
/// ).unwrap();
/// let plan = Plan::from_move_strings(&["R"]).unwrap();
/// assert!(verify(&inst, &plan, Check::default()).optimal);
/// let v = verify(&inst, Answer::Written("Agent 0: RIGHT", PlanForm::Auto), Check::against(Some(1)).with_credit());
/// assert!(v.optimal && v.credit.unwrap().agents_on_goal == 1);
/// ```
#[must_use]
pub fn verify<'a>(instance: &Instance, answer: impl Into<Answer<'a>>, check: Check) -> Verdict {
    let optimum = match check.optimum {
        Optimum::Given(o) => o,
        Optimum::Find => instance
            .optimal
            .as_ref()
            .map(|o| o.soc)
            .or_else(|| solve(instance, &SolverConfig::default()).ok().map(|s| s.soc)),
    };
    let (mut verdict, credit) = match answer.into() {
        Answer::Plan(plan) => verify_plan(instance, plan, optimum),
        Answer::Written(text, form) => match read_plan(text, form, instance) {
            Ok(plan) => verify_plan(instance, &plan, optimum),
            Err(e) => (Verdict::failed(e.kind(), e.to_string(), optimum), PartialCredit::default()),
        },
    };
    verdict.credit = check.credit.then_some(credit);
    verdict
}

/// Simulates a plan and judges it against `optimal_soc`; the verdict comes without its credit,
/// which is returned beside it.
fn verify_plan(instance: &Instance, plan: &Plan, optimal_soc: Option<u32>) -> (Verdict, PartialCredit) {
    let k = instance.num_agents();
    if plan.num_agents() != k {
        let verdict = Verdict::failed(
            FailureKind::WrongAgentCount,
            format!(
                "the plan has {}, the instance {k}",
                crate::error::count(plan.num_agents() as u64, "agent", "agents")
            ),
            optimal_soc,
        );
        return (verdict, PartialCredit::default());
    }
    let horizon = plan.horizon() as u32;
    let (failure, outcome) = match simulate(instance, plan, horizon) {
        Err(failure) => (Some(failure), None),
        Ok(outcome) => (outcome.fault.map(|f| describe(instance, &f)), Some(outcome)),
    };
    let credit = PartialCredit::new(
        failure.as_ref().map(|f| (f.kind, f.time.unwrap_or(0))),
        horizon,
        outcome.map_or(0, |o| o.on_goal),
        k as u32,
    );
    let verdict = match (failure, outcome) {
        (None, Some(o)) => Verdict {
            valid: true,
            optimal: optimal_soc == Some(o.soc),
            failure: None,
            soc: Some(o.soc),
            makespan: Some(o.makespan),
            optimal_soc,
            credit: None,
        },
        (failure, _) => Verdict {
            valid: false,
            optimal: false,
            failure,
            soc: None,
            makespan: None,
            optimal_soc,
            credit: None,
        },
    };
    (verdict, credit)
}

/// How far a plan got, for partial credit: agents on their goals at its end, legal steps, its
/// length. Filled by the verification kernel for both shapes ([`verify`] with
/// [`Check::with_credit`], [`verify_batch`] with a credit slice); [`NONE`] marks what is not
/// known.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable, Serialize, Deserialize)]
pub struct PartialCredit {
    /// Agents on their goals at the end of the plan: all of them for a valid plan, the count for
    /// `goal_not_reached`; unknown when a failure stopped the plan earlier.
    pub agents_on_goal: u32,
    /// Time steps before the first failure (the legal prefix): the whole plan when valid or when
    /// only `goal_not_reached` failed, `t − 1` for a failure at step `t` (0 at time 0), 0 for
    /// `parse_error` and `wrong_agent_count`.
    pub legal_steps: u32,
    /// The plan's length in steps (its longest agent's); unknown for `parse_error` and
    /// `wrong_agent_count`.
    pub horizon: u32,
}

impl Default for PartialCredit {
    /// The credit of a plan that was not simulated (`parse_error`, `wrong_agent_count`).
    fn default() -> Self {
        Self { agents_on_goal: NONE, legal_steps: 0, horizon: NONE }
    }
}

impl PartialCredit {
    /// The credit of a plan that was simulated: `failure` its first failure's kind and time,
    /// `on_goal` the agents on their goals at its end (read only when it ran to its end).
    #[must_use]
    pub fn new(failure: Option<(FailureKind, u32)>, horizon: u32, on_goal: u32, agents: u32) -> Self {
        match failure {
            None => Self { agents_on_goal: agents, legal_steps: horizon, horizon },
            Some((FailureKind::ParseError | FailureKind::WrongAgentCount, _)) => Self::default(),
            Some((FailureKind::GoalNotReached, t)) => {
                Self { agents_on_goal: on_goal, legal_steps: t, horizon }
            }
            Some((_, t)) => Self { agents_on_goal: NONE, legal_steps: t.saturating_sub(1), horizon },
        }
    }
}

fn fail(kind: FailureKind, agent: usize, time: u32, detail: String) -> Failure {
    Failure { kind, agent: Some(agent), time: Some(time), detail }
}

/// A plan as the kernel reads it.
impl kernel::Steps for Plan {
    const JUMPS: bool = true;

    #[inline]
    fn next(&self, a: usize, t: u32, row: i64, col: i64) -> Option<(i64, i64)> {
        let t = t as usize;
        match self {
            Plan::Paths(p) => p[a].get(t).copied(),
            Plan::Moves(m) => m[a].get(t - 1).map(|mv| {
                let (dr, dc) = mv.delta();
                (row + dr, col + dc)
            }),
        }
    }
}

/// Runs the plan through the kernel, after checking that paths start on the starts.
fn simulate(instance: &Instance, plan: &Plan, horizon: u32) -> Result<kernel::Outcome, Failure> {
    let grid = &instance.grid;
    if let Plan::Paths(p) = plan {
        for (i, path) in p.iter().enumerate() {
            let start = instance.agents[i].start;
            if path.first() != Some(&(i64::from(start.row), i64::from(start.col))) {
                let got = path.first().map_or("nothing".to_string(), |&(r, c)| format!("({r}, {c})"));
                return Err(fail(
                    FailureKind::IllegalMove,
                    i,
                    0,
                    format!("agent {i}'s path starts at {got}, not at its start {start}"),
                ));
            }
        }
    }
    let mut lanes: Vec<kernel::Lane> = instance
        .agents
        .iter()
        .map(|a| kernel::Lane::new(a.start.row, a.start.col, grid.width(), grid.cell(a.goal)))
        .collect();
    let mut occ = Occupancy::default();
    if lanes.len() > crate::rules::PAIRWISE_MAX_AGENTS {
        occ.fit(grid.cells() as usize);
    }
    let board = kernel::Board { width: grid.width(), height: grid.height(), is_hole: |c| grid.is_hole(c) };
    Ok(kernel::run(&board, plan, horizon, &mut lanes, &mut occ))
}

/// The verifier's failure for a fault the kernel found, with its sentence.
fn describe(instance: &Instance, f: &kernel::Fault) -> Failure {
    let (i, t) = (f.agent, f.time);
    let ((pr, pc), (r, c)) = (f.from, f.to);
    let pos = |(r, c): (i64, i64)| crate::grid::Pos::new(r as u32, c as u32);
    let detail = match f.kind {
        FailureKind::OutOfBounds => format!("agent {i} leaves the grid at ({r}, {c})"),
        FailureKind::IllegalMove => format!("agent {i} jumps from ({pr}, {pc}) to ({r}, {c})"),
        FailureKind::Hole => format!("agent {i} steps into the hole at ({r}, {c})"),
        FailureKind::EdgeConflict => {
            format!("agents {i} and {} swap {} and {} at time {t}", f.other, pos(f.from), pos(f.to))
        }
        FailureKind::VertexConflict => {
            format!("agents {i} and {} are both on {} at time {t}", f.other, pos(f.to))
        }
        FailureKind::GoalNotReached => {
            format!("agent {i} ends on {}, not on its goal {}", pos(f.to), instance.agents[i].goal)
        }
        FailureKind::ParseError | FailureKind::WrongAgentCount => unreachable!("not found by simulation"),
    };
    fail(f.kind, i, t, detail)
}

#[cfg(test)]
mod tests {
    use super::{verify, Answer, Check, FailureKind, Instance, PartialCredit, Plan, PlanForm, Verdict};

    #[test]
    fn one_entry_point_for_plans_and_written_answers() {
        let inst = Instance::from_json(
            r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#,
        )
        .unwrap();
        let plan = Plan::from_move_strings(&["RR", "RR"]).unwrap();
        // The default check finds the optimum (the solver's, here) and leaves the credit out.
        let found = verify(&inst, &plan, Check::default());
        assert!(found.optimal && found.optimal_soc == Some(4) && found.credit.is_none(), "{found:?}");
        let given = verify(&inst, &plan, Check::against(Some(3)));
        assert!(given.valid && !given.optimal);
        // A written answer is read, then judged as the plan it reads to; credit when asked.
        let text = "Agent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT";
        let written =
            verify(&inst, Answer::Written(text, PlanForm::Text), Check::against(Some(4)).with_credit());
        assert_eq!(Verdict { credit: None, ..written.clone() }, found);
        assert_eq!(written.credit, Some(PartialCredit { agents_on_goal: 2, legal_steps: 2, horizon: 2 }));
        let unread = verify(
            &inst,
            Answer::Written("go around", PlanForm::Auto),
            Check::against(Some(4)).with_credit(),
        );
        assert_eq!(unread.failure.as_ref().map(|f| f.kind), Some(FailureKind::ParseError));
        assert!(unread.failure.unwrap().detail.starts_with("read as a text answer: "));
        assert_eq!(unread.credit, Some(PartialCredit::default()));
    }

    #[test]
    fn failure_codes_decode_to_their_kinds_and_nothing_else() {
        assert_eq!(FailureKind::from_code(0), None);
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::from_code(kind as u32), Some(kind));
        }
        assert_eq!(FailureKind::from_code(9), None);
        assert_eq!(FailureKind::from_code(u32::MAX), None);
    }
}
