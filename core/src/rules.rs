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
//! Holes, leaving the grid and jumps are per-agent checks that live in the verifier and in the
//! solver's successor function ([`crate::Grid::successors`]).

use crate::grid::Cell;

/// An agent's cell at time `t` (its last cell once its path has ended).
///
/// # Panics
/// On an empty path.
#[inline]
#[must_use]
pub fn at(path: &[Cell], t: u32) -> Cell {
    path[(t as usize).min(path.len() - 1)]
}

/// The cost of a path towards `goal`: the time of its last arrival; `None` if it does not end on
/// the goal.
#[must_use]
pub fn path_cost(path: &[Cell], goal: Cell) -> Option<u32> {
    if path.last() != Some(&goal) {
        return None;
    }
    let stay = path.iter().rev().take_while(|&&c| c == goal).count();
    Some((path.len() - stay) as u32)
}

/// Sum of costs and makespan of paths that all end on their goals.
#[must_use]
pub fn soc_and_makespan(paths: &[Vec<Cell>], goals: &[Cell]) -> Option<(u32, u32)> {
    let mut soc = 0;
    let mut makespan = 0;
    for (p, &g) in paths.iter().zip(goals) {
        let c = path_cost(p, g)?;
        soc += c;
        makespan = makespan.max(c);
    }
    Some((soc, makespan))
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
/// cells (an edge conflict). Following, entering the cell the other leaves, is no swap.
#[inline]
#[must_use]
pub fn swaps(a: (Cell, Cell), b: (Cell, Cell)) -> bool {
    a.0 != a.1 && a.1 == b.0 && a.0 == b.1
}

/// Whether two simultaneous steps `a.0 → a.1` and `b.0 → b.1` conflict: they end on one cell (a
/// vertex conflict) or they swap ([`swaps`]). A staying agent steps from its cell to itself.
#[inline]
#[must_use]
pub fn steps_conflict(a: (Cell, Cell), b: (Cell, Cell)) -> bool {
    a.1 == b.1 || swaps(a, b)
}

/// Conflicts at exactly time `t`, in the order the verifier reports them: edge conflicts first
/// (they happen during the step into `t`), then vertex conflicts, each by agent pair `(a, b)`
/// in lexicographic order.
pub fn conflicts_at(paths: &[impl AsRef<[Cell]>], t: u32, out: &mut Vec<Conflict>) {
    if t > 0 {
        for (a, pa) in paths.iter().enumerate() {
            let (from, to) = (at(pa.as_ref(), t - 1), at(pa.as_ref(), t));
            if from == to {
                continue;
            }
            for (b, pb) in paths.iter().enumerate().skip(a + 1) {
                if swaps((from, to), (at(pb.as_ref(), t - 1), at(pb.as_ref(), t))) {
                    out.push(Conflict::Edge { a, b, from, to, t });
                }
            }
        }
    }
    for (a, pa) in paths.iter().enumerate() {
        let cell = at(pa.as_ref(), t);
        for (b, pb) in paths.iter().enumerate().skip(a + 1) {
            if at(pb.as_ref(), t) == cell {
                out.push(Conflict::Vertex { a, b, cell, t });
            }
        }
    }
}

/// Every conflict among the paths, in time order (and within a time, as [`conflicts_at`]).
#[must_use]
pub fn all_conflicts(paths: &[impl AsRef<[Cell]>]) -> Vec<Conflict> {
    let horizon = paths.iter().map(|p| p.as_ref().len()).max().unwrap_or(0) as u32;
    let mut out = Vec::new();
    for t in 0..horizon {
        conflicts_at(paths, t, &mut out);
    }
    out
}

/// The first conflict in time order, if any.
#[must_use]
pub fn first_conflict(paths: &[impl AsRef<[Cell]>]) -> Option<Conflict> {
    let horizon = paths.iter().map(|p| p.as_ref().len()).max().unwrap_or(0) as u32;
    let mut out = Vec::new();
    for t in 0..horizon {
        conflicts_at(paths, t, &mut out);
        if let Some(&c) = out.first() {
            return Some(c);
        }
    }
    None
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
        assert_eq!(soc_and_makespan(&[vec![0, 1], vec![5, 4, 3]], &[1, 3]), Some((3, 2)));
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
}
