//! A reference optimal search over joint states, written independently of the CBS solver.
//!
//! A state is every agent's cell plus the set of agents that have *committed*: an agent on its
//! goal may commit (at no cost), after which it stays there for ever. One time step moves every
//! uncommitted agent at once and costs one per uncommitted agent, so an agent's total cost is the
//! time it commits: the time of its final arrival. A* over these states with the sum of the
//! uncommitted agents' distances as heuristic (consistent: each agent's distance drops by at most
//! one per step) gives the optimal sum of costs. With `allow_waits = false`, uncommitted agents
//! must move at every step, which is exactly "no wait before an agent's final arrival".

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use floe_core::grid::UNREACHABLE;
use floe_core::{Grid, Instance, Move};

/// The outcome of a joint search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointResult {
    /// The optimal sum of costs.
    Optimal(u32),
    /// The whole reachable joint space was searched: no plan exists.
    Unsolvable,
    /// More states than allowed were generated.
    Limit,
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct State {
    cells: Vec<u32>,
    committed: u32,
}

/// Optimal sum of costs by A* over joint states.
#[must_use]
pub fn joint_optimal_soc(instance: &Instance, allow_waits: bool, max_states: usize) -> JointResult {
    let grid = &instance.grid;
    let k = instance.num_agents();
    let goals: Vec<u32> = instance.agents.iter().map(|a| grid.cell(a.goal)).collect();
    let dist: Vec<Vec<u32>> = goals.iter().map(|&g| bfs(grid, g)).collect();
    let all = (1u32 << k) - 1;
    let h = |s: &State| -> Option<u32> {
        let mut sum = 0;
        for i in 0..k {
            if s.committed >> i & 1 == 0 {
                let d = dist[i][s.cells[i] as usize];
                if d == UNREACHABLE {
                    return None;
                }
                sum += d;
            }
        }
        Some(sum)
    };
    let start = State { cells: instance.agents.iter().map(|a| grid.cell(a.start)).collect(), committed: 0 };
    let Some(h0) = h(&start) else {
        return JointResult::Unsolvable;
    };
    let mut best: HashMap<State, u32> = HashMap::new();
    best.insert(start.clone(), 0);
    let mut open = BinaryHeap::new();
    open.push(Reverse((h0, 0u32, start)));
    while let Some(Reverse((_, g, s))) = open.pop() {
        if best.get(&s).is_some_and(|&b| b < g) {
            continue;
        }
        if s.committed == all {
            return JointResult::Optimal(g);
        }
        if best.len() > max_states {
            return JointResult::Limit;
        }
        let mut push = |n: State, ng: u32, open: &mut BinaryHeap<_>| {
            if best.get(&n).is_none_or(|&b| ng < b) {
                if let Some(hn) = h(&n) {
                    best.insert(n.clone(), ng);
                    open.push(Reverse((ng + hn, ng, n)));
                }
            }
        };
        // Commit moves: free.
        for (i, &goal) in goals.iter().enumerate() {
            if s.committed >> i & 1 == 0 && s.cells[i] == goal {
                let mut n = s.clone();
                n.committed |= 1 << i;
                push(n, g, &mut open);
            }
        }
        // One joint step.
        let cost = k as u32 - s.committed.count_ones();
        let mut next = s.cells.clone();
        joint_moves(grid, &s, allow_waits, 0, &mut next, &mut |cells| {
            push(State { cells: cells.to_vec(), committed: s.committed }, g + cost, &mut open);
        });
    }
    JointResult::Unsolvable
}

/// Enumerates every conflict-free joint step (no shared cells, no swaps).
fn joint_moves(
    grid: &Grid,
    s: &State,
    allow_waits: bool,
    i: usize,
    next: &mut Vec<u32>,
    emit: &mut dyn FnMut(&[u32]),
) {
    if i == s.cells.len() {
        emit(next);
        return;
    }
    let from = s.cells[i];
    let options: Vec<u32> = if s.committed >> i & 1 == 1 {
        vec![from]
    } else {
        Move::ALL
            .iter()
            .filter(|&&m| allow_waits || m != Move::Wait)
            .filter_map(|&m| neighbour(grid, from, m))
            .collect()
    };
    for to in options {
        let clash = (0..i).any(|j| next[j] == to || (next[j] == from && s.cells[j] == to && to != from));
        if clash {
            continue;
        }
        next[i] = to;
        joint_moves(grid, s, allow_waits, i + 1, next, emit);
    }
    next[i] = s.cells[i];
}

/// The cell one move away, if on the grid and frozen (written here, not taken from the core).
fn neighbour(grid: &Grid, cell: u32, m: Move) -> Option<u32> {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let (r, c) = (cell as i64 / w, cell as i64 % w);
    let (dr, dc) = match m {
        Move::Wait => (0, 0),
        Move::Up => (-1, 0),
        Move::Down => (1, 0),
        Move::Left => (0, -1),
        Move::Right => (0, 1),
    };
    let (nr, nc) = (r + dr, c + dc);
    if nr < 0 || nc < 0 || nr >= h || nc >= w {
        return None;
    }
    let n = (nr * w + nc) as u32;
    (!grid.is_hole(n)).then_some(n)
}

fn bfs(grid: &Grid, source: u32) -> Vec<u32> {
    let mut d = vec![UNREACHABLE; grid.cells() as usize];
    d[source as usize] = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(c) = queue.pop_front() {
        for m in [Move::Up, Move::Down, Move::Left, Move::Right] {
            if let Some(n) = neighbour(grid, c, m) {
                if d[n as usize] == UNREACHABLE {
                    d[n as usize] = d[c as usize] + 1;
                    queue.push_back(n);
                }
            }
        }
    }
    d
}
