//! The verification kernel: one plan simulated step by step under the rules of [`crate::rules`],
//! stopping at the first failure. The single verifier ([`super::verify`]) and the
//! batched verifier ([`crate::verify::verify_batch`]) both run it; they differ only in how
//! they read a plan ([`Steps`]) and the grid.

use crate::failure::FailureKind;
use crate::grid::{on_grid, Cell};
use crate::rules::{agent_fault, judge_conflicts, jumps, Arrival, Occupancy, StepConflict};

/// How the kernel reads a plan.
pub(crate) trait Steps {
    /// Whether a step may move more than one cell (coordinate paths), so that jumps are checked.
    const JUMPS: bool;

    /// Agent `a`'s (row, col) at time `t` ≥ 1, given its (row, col) at `t − 1`; `None` once its
    /// plan has ended (it stays where it is).
    fn next(&self, a: usize, t: u32, row: i64, col: i64) -> Option<(i64, i64)>;
}

/// The grid as the kernel reads it.
pub(crate) struct Board<H> {
    pub width: u32,
    pub height: u32,
    pub is_hole: H,
}

/// One agent's state in the kernel.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lane {
    row: i64,
    col: i64,
    cell: Cell,
    prev: Cell,
    goal: Cell,
    arrival: Arrival,
}

impl Lane {
    /// An agent at `(row, col)` (on the grid) with goal cell `goal`, on a grid `width` wide.
    #[inline(always)]
    pub(crate) fn new(row: u32, col: u32, width: u32, goal: Cell) -> Self {
        let cell = row * width + col;
        let mut arrival = Arrival::default();
        arrival.at(0, cell == goal);
        Self { row: row.into(), col: col.into(), cell, prev: cell, goal, arrival }
    }
}

/// The first failure: its kind, the agent at fault (for a conflict the lower-numbered one, and
/// `other` the second), the time, and the agent's step (row, col before and after; for
/// `goal_not_reached` its last cell twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    pub kind: FailureKind,
    pub agent: usize,
    pub other: usize,
    pub time: u32,
    pub from: (i64, i64),
    pub to: (i64, i64),
}

/// What the kernel found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub fault: Option<Fault>,
    /// Agents on their goals at the end of the plan (0 when a failure stopped it earlier).
    pub on_goal: u32,
    /// Sum of costs and makespan (of a valid plan).
    pub soc: u32,
    pub makespan: u32,
}

/// Runs a plan of `horizon` steps for the agents in `lanes` (made by [`Lane::new`]) on `board`.
/// `occ` is scratch for [`judge_conflicts`], sized for the board's cells when there are more
/// than [`crate::rules::PAIRWISE_MAX_AGENTS`] agents.
#[inline(always)]
pub(crate) fn run<S: Steps>(
    board: &Board<impl Fn(Cell) -> bool>,
    steps: &S,
    horizon: u32,
    lanes: &mut [Lane],
    occ: &mut Occupancy,
) -> Outcome {
    let w = i64::from(board.width);
    let fail = |kind, agent, other, time, from, to| Outcome {
        fault: Some(Fault { kind, agent, other, time, from, to }),
        on_goal: 0,
        soc: 0,
        makespan: 0,
    };
    for t in 1..=horizon {
        for (a, l) in lanes.iter_mut().enumerate() {
            l.prev = l.cell;
            let Some((r, c)) = steps.next(a, t, l.row, l.col) else { continue };
            let off_grid = !on_grid(board.width, board.height, r, c);
            let jumps = S::JUMPS && jumps((l.row, l.col), (r, c));
            let cell = if off_grid { 0 } else { (r * w + c) as Cell };
            if let Some(kind) = agent_fault(off_grid, jumps, !off_grid && (board.is_hole)(cell)) {
                return fail(kind, a, a, t, (l.row, l.col), (r, c));
            }
            (l.row, l.col, l.cell) = (r, c, cell);
        }
        let judged = judge_conflicts(lanes.len(), |a| (lanes[a].prev, lanes[a].cell), occ, |_| {});
        if let Some((conflict, a, b)) = judged.first() {
            let kind = match conflict {
                StepConflict::Swap => FailureKind::EdgeConflict,
                StepConflict::Shared => FailureKind::VertexConflict,
            };
            let rc = |cell: Cell| (i64::from(cell / board.width), i64::from(cell % board.width));
            return fail(kind, a, b, t, rc(lanes[a].prev), rc(lanes[a].cell));
        }
        for l in lanes.iter_mut() {
            l.arrival.at(t, l.cell == l.goal);
        }
    }
    let mut out = Outcome { fault: None, on_goal: 0, soc: 0, makespan: 0 };
    for (a, l) in lanes.iter().enumerate() {
        if l.cell == l.goal {
            out.on_goal += 1;
        } else if out.fault.is_none() {
            let at = (l.row, l.col);
            out.fault = Some(Fault {
                kind: FailureKind::GoalNotReached,
                agent: a,
                other: a,
                time: horizon,
                from: at,
                to: at,
            });
        }
        out.soc += l.arrival.cost();
        out.makespan = out.makespan.max(l.arrival.cost());
    }
    out
}
