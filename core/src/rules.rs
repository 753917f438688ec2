//! The rules of MAPF-FrozenLake that every part of floe shares.
//!
//! - A path is the sequence of an agent's cells at times 0, 1, …, T; after its last entry the
//!   agent stays where it is, and still occupies that cell.
//! - A **vertex conflict** at time t: two agents on one cell at t.
//! - An **edge (swap) conflict** at time t: two agents exchange cells between t − 1 and t.
//!   Following (entering a cell that another agent leaves in the same step) is allowed.
//! - An agent's **cost** is the time of its last arrival on its goal: the smallest t such that
//!   it is on its goal at every time from t on. **Sum of costs** (SoC) adds them up; the
//!   **makespan** is the largest cost.
//!
//! - One **step** of an agent fails, in this order, when it leaves the grid (`out_of_bounds`),
//!   jumps more than one cell (`illegal_move`, only coordinate paths can) or lands in a hole
//!   (`hole`): [`agent_fault`]. A joint step fails when two agents' steps conflict
//!   ([`step_conflict`]); [`judge_conflicts`] finds the first such pair in the verifier's order.
//!
//! These functions are the rules' only definitions: the single verifier and the batched verifier
//! (one kernel, [`mod@crate::verify`]), the engine's strict step, CBS's conflict detection and
//! conflict table, the joint searches and the reachability search all call them. The solver's
//! successor function ([`crate::Grid::successors`]) keeps exactly the steps [`agent_fault`] lets
//! through.

use crate::failure::FailureKind;
use crate::grid::Cell;

/// The failure of one agent's step judged alone, in the verifier's order: off the grid
/// (`out_of_bounds`), then a jump of more than one cell (`illegal_move`), then a hole (`hole`);
/// `None` for a legal step. `hole` is only read when the agent stays on the grid.
#[inline(always)]
#[must_use]
pub fn agent_fault(off_grid: bool, jumps: bool, hole: bool) -> Option<FailureKind> {
    if off_grid {
        Some(FailureKind::OutOfBounds)
    } else if jumps {
        Some(FailureKind::IllegalMove)
    } else if hole {
        Some(FailureKind::Hole)
    } else {
        None
    }
}

/// Whether a step from `from` to `to` (row, col) moves more than one cell or diagonally: the
/// `jumps` of [`agent_fault`].
#[inline(always)]
#[must_use]
pub fn jumps(from: (i64, i64), to: (i64, i64)) -> bool {
    (to.0 - from.0).abs() + (to.1 - from.1).abs() > 1
}

/// How two simultaneous steps conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepConflict {
    /// They exchange cells (an edge conflict, reported first).
    Swap,
    /// They end on one cell (a vertex conflict).
    Shared,
}

/// The one conflict predicate: whether, and how, two agents stepping `a.0 → a.1` and
/// `b.0 → b.1` at the same time conflict. Ending on one cell is a vertex conflict; exchanging
/// cells is a swap; following (entering the cell the other leaves) is allowed. A staying agent
/// steps from its cell to itself. Two steps that share no cell never conflict, which
/// [`judge_conflicts`] relies on to look only at pairs that share one.
#[inline(always)]
#[must_use]
pub fn step_conflict(a: (Cell, Cell), b: (Cell, Cell)) -> Option<StepConflict> {
    #[cfg(any(test, feature = "rule-hooks"))]
    if hooks::swaps_allowed() {
        return (a.1 == b.1).then_some(StepConflict::Shared);
    }
    if a.1 == b.1 {
        Some(StepConflict::Shared)
    } else if a.0 != a.1 && a.1 == b.0 && a.0 == b.1 {
        Some(StepConflict::Swap)
    } else {
        None
    }
}

/// The first conflict of a joint step in the verifier's order, and who is in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JointJudgement {
    /// The lowest pair `(a, b)`, `a < b`, whose steps swap.
    pub swap: Option<(usize, usize)>,
    /// The lowest pair whose steps end on one cell.
    pub shared: Option<(usize, usize)>,
}

impl JointJudgement {
    /// The conflict the verifier reports: a swap before a shared cell.
    #[must_use]
    pub fn first(&self) -> Option<(StepConflict, usize, usize)> {
        self.swap
            .map(|(a, b)| (StepConflict::Swap, a, b))
            .or(self.shared.map(|(a, b)| (StepConflict::Shared, a, b)))
    }
}

/// Up to this many agents, [`judge_conflicts`] compares every pair; above it, only the pairs that
/// share a cell, found through an [`Occupancy`] (O(k) per step).
pub const PAIRWISE_MAX_AGENTS: usize = 8;

/// Per-cell scratch for [`judge_conflicts`]: 1 + the agent on a cell at the step's start, and
/// 1 + the first agent that steps onto it. All zero between calls.
#[derive(Debug, Clone, Default)]
pub struct Occupancy {
    here: Vec<u32>,
    first: Vec<u32>,
}

impl Occupancy {
    /// Room for cells `0..cells`.
    pub fn fit(&mut self, cells: usize) {
        if self.here.len() < cells {
            self.here.resize(cells, 0);
            self.first.resize(cells, 0);
        }
    }
}

/// Judges the conflicts of a joint step of `k` agents, agent `a` stepping `step(a)` (at the
/// step's start no two agents share a cell; above [`PAIRWISE_MAX_AGENTS`] agents, every cell is
/// below the size [`Occupancy::fit`] gave `occ`). Every pair is judged by
/// [`step_conflict`]; `flag(a)` is called for each agent in a conflict (more than once for some).
/// With more than [`PAIRWISE_MAX_AGENTS`] agents only pairs that share a cell are judged: each
/// agent with the agent on its target, and with the first agent that steps onto its target.
#[inline(always)]
pub fn judge_conflicts(
    k: usize,
    step: impl Fn(usize) -> (Cell, Cell),
    occ: &mut Occupancy,
    mut flag: impl FnMut(usize),
) -> JointJudgement {
    let mut out = JointJudgement::default();
    let mut judge = |a: usize, b: usize, out: &mut JointJudgement| {
        let (a, b) = (a.min(b), a.max(b));
        let slot = match step_conflict(step(a), step(b)) {
            None => return,
            Some(StepConflict::Swap) => &mut out.swap,
            Some(StepConflict::Shared) => &mut out.shared,
        };
        if slot.is_none_or(|p| (a, b) < p) {
            *slot = Some((a, b));
        }
        flag(a);
        flag(b);
    };
    if k <= PAIRWISE_MAX_AGENTS {
        for a in 0..k {
            for b in a + 1..k {
                judge(a, b, &mut out);
            }
        }
        return out;
    }
    for a in 0..k {
        occ.here[step(a).0 as usize] = a as u32 + 1;
    }
    for b in 0..k {
        let to = step(b).1 as usize;
        let on = occ.here[to];
        if on != 0 && on as usize - 1 != b {
            judge(on as usize - 1, b, &mut out);
        }
        let first = occ.first[to];
        if first == 0 {
            occ.first[to] = b as u32 + 1;
        } else {
            judge(first as usize - 1, b, &mut out);
        }
    }
    for a in 0..k {
        let (from, to) = step(a);
        occ.here[from as usize] = 0;
        occ.first[to as usize] = 0;
    }
    out
}

/// An agent's cost as its path unfolds ([`path_cost`] once the path ends on the goal): 1 + the
/// last time it was off its goal, 0 if it never was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Arrival(u32);

impl Arrival {
    /// Records whether the agent is on its goal at time `t` (times in order).
    #[inline(always)]
    pub fn at(&mut self, t: u32, on_goal: bool) {
        if !on_goal {
            self.0 = t + 1;
        }
    }

    /// The cost so far.
    #[inline(always)]
    #[must_use]
    pub fn cost(self) -> u32 {
        self.0
    }
}

/// A test hook that breaks the swap rule on the calling thread, so that a test can see every
/// judge of that rule follow it: the test `one_broken_rule_breaks_every_judge` below for the
/// verifiers and the strict step, floe-train's `a_broken_swap_rule_reaches_the_token_statuses`
/// for the tokeniser. Compiled for floe-core's own tests and with the `rule-hooks` feature,
/// which only dev-dependencies enable: no build of the `floe` binary or of libfloe has it.
#[cfg(any(test, feature = "rule-hooks"))]
#[doc(hidden)]
pub mod hooks {
    use std::cell::Cell;

    thread_local! {
        static SWAPS_ALLOWED: Cell<bool> = const { Cell::new(false) };
    }

    pub(crate) fn swaps_allowed() -> bool {
        SWAPS_ALLOWED.get()
    }

    /// Runs `f` with swaps allowed (only shared cells conflict) on this thread.
    pub fn with_swaps_allowed<T>(f: impl FnOnce() -> T) -> T {
        SWAPS_ALLOWED.set(true);
        let out = f();
        SWAPS_ALLOWED.set(false);
        out
    }
}

/// An agent's place at time `t` on its path (its last place once its path has ended): a
/// [`Cell`], or whatever a caller records per time step (coordinates that may lie off the grid,
/// `Option<Cell>` for an agent that left it).
///
/// # Panics
/// On an empty path.
#[inline]
#[must_use]
pub fn at<T: Copy>(path: &[T], t: u32) -> T {
    path[(t as usize).min(path.len() - 1)]
}

/// The cost of a path towards `goal`: the time of its last arrival; `None` if it does not end on
/// the goal.
#[must_use]
pub fn path_cost(path: &[Cell], goal: Cell) -> Option<u32> {
    if path.last() != Some(&goal) {
        return None;
    }
    let mut arrival = Arrival::default();
    for (t, &c) in path.iter().enumerate() {
        arrival.at(t as u32, c == goal);
    }
    Some(arrival.cost())
}

/// A conflict between agents `a < b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conflict {
    /// Both on `cell` at time `t`.
    Vertex { a: usize, b: usize, cell: Cell, t: u32 },
    /// `a` moves `from → to` and `b` moves `to → from` between `t − 1` and `t`.
    Edge { a: usize, b: usize, from: Cell, to: Cell, t: u32 },
}

impl Conflict {
    /// The time of the conflict.
    #[must_use]
    pub fn time(&self) -> u32 {
        match *self {
            Conflict::Vertex { t, .. } | Conflict::Edge { t, .. } => t,
        }
    }

    /// The two agents, lower index first.
    #[must_use]
    pub fn agents(&self) -> (usize, usize) {
        match *self {
            Conflict::Vertex { a, b, .. } | Conflict::Edge { a, b, .. } => (a, b),
        }
    }
}

/// Whether two agents stepping `a.0 → a.1` and `b.0 → b.1` at the same time exchange their
/// cells (an edge conflict, [`step_conflict`]). Following, entering the cell the other leaves,
/// is no swap.
#[inline]
#[must_use]
pub fn swaps(a: (Cell, Cell), b: (Cell, Cell)) -> bool {
    step_conflict(a, b) == Some(StepConflict::Swap)
}

/// Whether two simultaneous steps `a.0 → a.1` and `b.0 → b.1` conflict at all
/// ([`step_conflict`]).
#[inline]
#[must_use]
pub fn steps_conflict(a: (Cell, Cell), b: (Cell, Cell)) -> bool {
    step_conflict(a, b).is_some()
}

/// Conflicts at exactly time `t`, in the order the verifier reports them: edge conflicts first
/// (they happen during the step into `t`), then vertex conflicts, each by agent pair `(a, b)`
/// in lexicographic order.
fn conflicts_at(paths: &[impl AsRef<[Cell]>], t: u32, out: &mut Vec<Conflict>) {
    // At time 0 every agent "steps" from its start onto it.
    let step = |p: &[Cell]| (at(p, t.saturating_sub(1)), at(p, t));
    let mut shared = Vec::new();
    for (a, pa) in paths.iter().enumerate() {
        let sa = step(pa.as_ref());
        for (b, pb) in paths.iter().enumerate().skip(a + 1) {
            match step_conflict(sa, step(pb.as_ref())) {
                Some(StepConflict::Swap) => out.push(Conflict::Edge { a, b, from: sa.0, to: sa.1, t }),
                Some(StepConflict::Shared) => shared.push(Conflict::Vertex { a, b, cell: sa.1, t }),
                None => {}
            }
        }
    }
    out.append(&mut shared);
}

/// Every conflict among the paths, in time order; within a time, edge conflicts first, then
/// vertex conflicts, each by agent pair `(a, b)` in lexicographic order.
#[must_use]
pub fn all_conflicts(paths: &[impl AsRef<[Cell]>]) -> Vec<Conflict> {
    let horizon = paths.iter().map(|p| p.as_ref().len()).max().unwrap_or(0) as u32;
    let mut out = Vec::new();
    for t in 0..horizon {
        conflicts_at(paths, t, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_the_last_arrival() {
        assert_eq!(path_cost(&[0, 1, 2, 2, 2], 2), Some(2));
        assert_eq!(path_cost(&[2, 1, 2], 2), Some(2));
        assert_eq!(path_cost(&[2], 2), Some(0));
        assert_eq!(path_cost(&[0, 1], 2), None);
        // The paper's example: 1 and 2 moves give SoC 3 and makespan 2.
        assert_eq!((path_cost(&[0, 1], 1), path_cost(&[5, 4, 3], 3)), (Some(1), Some(2)));
    }

    /// The grid's successor function keeps exactly the single steps `agent_fault` lets through.
    #[test]
    fn successors_are_the_steps_without_a_fault() {
        let g = crate::Grid::from_rows(&["FFFH", "FHFF", "HFFF"]).unwrap();
        let mut kept = 0;
        for c in 0..g.cells() {
            let succ: Vec<(crate::Move, Cell)> = g.successors(c).collect();
            for m in crate::Move::ALL {
                let to = g.step(c, m);
                let fault = agent_fault(to.is_none(), false, to.is_some_and(|n| g.is_hole(n)));
                let listed = succ.iter().any(|&(sm, sn)| sm == m && Some(sn) == to);
                assert_eq!(listed, fault.is_none(), "cell {c}, move {m:?}: {fault:?}");
                kept += usize::from(listed);
            }
        }
        assert!(kept > 0 && kept < 5 * g.cells() as usize);
    }

    fn first_conflict(paths: &[Vec<Cell>]) -> Option<Conflict> {
        all_conflicts(paths).first().copied()
    }

    #[test]
    fn swaps_and_shared_cells_conflict_but_following_does_not() {
        // Swap: 0→1 and 1→0.
        assert_eq!(
            first_conflict(&[vec![0, 1], vec![1, 0]]),
            Some(Conflict::Edge { a: 0, b: 1, from: 0, to: 1, t: 1 })
        );
        // Following: 0→1→2 behind 1→2→3.
        assert_eq!(first_conflict(&[vec![0, 1, 2], vec![1, 2, 3]]), None);
        // The step predicates agree.
        assert!(swaps((0, 1), (1, 0)) && !swaps((0, 1), (1, 2)) && !swaps((3, 3), (3, 3)));
        assert!(steps_conflict((0, 1), (2, 1)) && steps_conflict((4, 4), (5, 4)));
        assert!(!steps_conflict((0, 1), (1, 2)) && !steps_conflict((0, 0), (1, 2)));
        // A finished agent still occupies its goal.
        assert_eq!(
            first_conflict(&[vec![4], vec![3, 4, 5]]),
            Some(Conflict::Vertex { a: 0, b: 1, cell: 4, t: 1 })
        );
    }

    /// `judge_conflicts` finds the same first conflicts and flags the same agents whether it
    /// compares every pair or only those an occupancy map finds.
    #[test]
    fn occupancy_and_pairwise_judging_agree() {
        let mut rng = crate::rng::Rng::from_counters(&[5]);
        let mut occ = Occupancy::default();
        occ.fit(25);
        for _ in 0..5000 {
            let k = 2 + rng.below(12) as usize;
            // Distinct cells of a 5×5 grid, then a move (or a wait) for each.
            let mut cells: Vec<Cell> = (0..25).collect();
            for i in 0..k {
                cells.swap(i, i + rng.below(25 - i as u32) as usize);
            }
            let steps: Vec<(Cell, Cell)> = cells[..k]
                .iter()
                .map(|&c| {
                    let (r, col) = ((c / 5) as i64, (c % 5) as i64);
                    let (dr, dc) = crate::Move::ALL[rng.below(5) as usize].delta();
                    let (r, col) = ((r + dr).clamp(0, 4), (col + dc).clamp(0, 4));
                    (c, (r * 5 + col) as Cell)
                })
                .collect();
            let mut pair_flags = vec![false; k];
            let mut pairwise = JointJudgement::default();
            for a in 0..k {
                for b in a + 1..k {
                    let slot = match step_conflict(steps[a], steps[b]) {
                        None => continue,
                        Some(StepConflict::Swap) => &mut pairwise.swap,
                        Some(StepConflict::Shared) => &mut pairwise.shared,
                    };
                    slot.get_or_insert((a, b));
                    (pair_flags[a], pair_flags[b]) = (true, true);
                }
            }
            let mut flags = vec![false; k];
            let judged = judge_conflicts(k, |a| steps[a], &mut occ, |a| flags[a] = true);
            assert_eq!((judged, &flags), (pairwise, &pair_flags), "{steps:?}");
            assert!(occ.here.iter().chain(&occ.first).all(|&x| x == 0), "scratch left clear");
        }
    }

    /// Breaking the swap rule in [`step_conflict`] (with the test hook) changes what the single
    /// verifier, the batched verifier and the strict step decide, for a few agents (every pair
    /// compared) and for many (pairs found through occupancy): each of them judges by it. The
    /// tokeniser, in floe-train above this crate, flips the same hook through the `rule-hooks`
    /// feature (its test `a_broken_swap_rule_reaches_the_token_statuses`).
    #[test]
    fn one_broken_rule_breaks_every_judge() {
        use std::sync::Arc;

        use crate::engine::{outcome, CollisionMode, CpuEngine, Engine, EnvConfig, StepBuffers};
        use crate::instance::{Agent, Instance};
        use crate::pool::{InstancePool, Optima};
        use crate::verify::{verify_batch, PlanBatch, VerifyOut};
        use crate::{Grid, Move, Plan, Pos};

        // Agents 0 and 1 swap (0, 0) and (0, 1); the others wait on their goals.
        let judge_all = |k: usize| {
            let grid = Grid::new(2 * k as u32, 1);
            let agents = (0..k as u32)
                .map(|a| match a {
                    0 => Agent { start: Pos::new(0, 0), goal: Pos::new(0, 1) },
                    1 => Agent { start: Pos::new(0, 1), goal: Pos::new(0, 0) },
                    _ => Agent { start: Pos::new(0, 2 * a), goal: Pos::new(0, 2 * a) },
                })
                .collect();
            let inst = Instance::new(grid, agents).expect("valid");
            let moves: Vec<Vec<Move>> =
                (0..k).map(|a| vec![[Move::Right, Move::Left, Move::Wait][a.min(2)]]).collect();
            let single = crate::verify::verify(
                &inst,
                &Plan::Moves(moves.clone()),
                crate::verify::Check::against(None),
            );
            let pool =
                Arc::new(InstancePool::new(std::slice::from_ref(&inst), Optima::AsStored).expect("pool"));
            let mut batch = PlanBatch::new(k, 1);
            batch.push(0, &moves).expect("fits");
            let mut batched = [VerifyOut::default()];
            verify_batch(&pool, &batch, &mut batched, None).expect("verifies");
            let cfg = EnvConfig { num_envs: 1, mode: CollisionMode::Strict, ..EnvConfig::default() };
            let mut engine = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
            let mut out = StepBuffers::new(&engine.sizes());
            engine.reset(0, out.view()).expect("reset");
            let actions: Vec<u8> = moves.iter().map(|m| m[0] as u8).collect();
            engine.step(&actions, out.view()).expect("steps");
            (single, batched[0], out.info[0])
        };
        // One thread, so that the hook (per thread) reaches the batch and the engine too.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
        for k in [2, PAIRWISE_MAX_AGENTS + 2] {
            let (single, batched, info) = pool.install(|| judge_all(k));
            let edge = FailureKind::EdgeConflict;
            assert_eq!(single.failure.map(|f| (f.kind, f.agent, f.time)), Some((edge, Some(0), Some(1))));
            assert_eq!((batched.kind, batched.agent, batched.time), (edge as u32, 0, 1));
            assert_eq!(
                (info.outcome, info.failure_kind, info.failure_agent),
                (outcome::FAILURE, edge as u32, 0)
            );
            let (single, batched, info) = pool.install(|| hooks::with_swaps_allowed(|| judge_all(k)));
            assert!(single.valid && single.soc == Some(2), "{single:?}");
            assert_eq!((batched.valid, batched.soc), (1, 2));
            assert_eq!((info.outcome, info.failure_kind), (outcome::SUCCESS, 0));
        }
    }
}
