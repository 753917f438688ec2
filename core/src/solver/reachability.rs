//! Exact solvability for small instances: breadth-first search over joint configurations.
//!
//! With waits allowed, an instance is solvable exactly when the goal configuration can be reached
//! from the start configuration by conflict-free joint steps, whatever their cost. CBS alone
//! cannot prove unsolvability (its constraint tree is infinite), so when it runs out of nodes the
//! solver asks this search, whose state space (free cells to the power k) is small on the maps
//! where such cases arise in practice.

use std::collections::{HashSet, VecDeque};

use crate::grid::Cell;
use crate::instance::Instance;
use crate::rules::steps_conflict;

/// `Some(true)` if the goals can be reached, `Some(false)` if they cannot, `None` if the joint
/// space has more than `max_states` configurations.
#[must_use]
pub fn goals_reachable(instance: &Instance, max_states: u64) -> Option<bool> {
    let grid = &instance.grid;
    let free: Vec<Cell> = (0..grid.cells()).filter(|&c| !grid.is_hole(c)).collect();
    let k = instance.num_agents() as u32;
    let size = (free.len() as u64).checked_pow(k)?;
    if size > max_states {
        return None;
    }
    let mut index = vec![u32::MAX; grid.cells() as usize];
    for (i, &c) in free.iter().enumerate() {
        index[c as usize] = i as u32;
    }
    let radix = free.len() as u64;
    let encode =
        |cells: &[Cell]| cells.iter().rev().fold(0u64, |acc, &c| acc * radix + u64::from(index[c as usize]));
    let decode = |mut code: u64, out: &mut Vec<Cell>| {
        out.clear();
        for _ in 0..k {
            out.push(free[(code % radix) as usize]);
            code /= radix;
        }
    };
    let start = encode(&instance.start_cells());
    let goal = encode(&instance.goal_cells());
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    let (mut cur, mut next) = (Vec::new(), vec![0; k as usize]);
    let mut targets: Vec<Vec<Cell>> = vec![Vec::with_capacity(5); k as usize];
    while let Some(code) = queue.pop_front() {
        if code == goal {
            return Some(true);
        }
        decode(code, &mut cur);
        for (t, &from) in targets.iter_mut().zip(&cur) {
            t.clear();
            t.extend(grid.successors(from).map(|(_, to)| to));
        }
        joint_steps(&cur, &targets, &mut next, &mut |cells| {
            let c = encode(cells);
            if seen.insert(c) {
                queue.push_back(c);
            }
        });
    }
    Some(false)
}

/// Calls `emit` with every joint step from `cur` in which each agent `i` moves to one of
/// `targets[i]` and no two agents conflict ([`steps_conflict`]). `next` is scratch space of
/// `cur`'s length.
pub(super) fn joint_steps(
    cur: &[Cell],
    targets: &[Vec<Cell>],
    next: &mut [Cell],
    emit: &mut dyn FnMut(&[Cell]),
) {
    if cur.is_empty() {
        emit(next);
        return;
    }
    assign(0, cur, targets, next, emit);
}

fn assign(i: usize, cur: &[Cell], targets: &[Vec<Cell>], next: &mut [Cell], emit: &mut dyn FnMut(&[Cell])) {
    let last = i + 1 == cur.len();
    for &to in &targets[i] {
        if (0..i).any(|j| steps_conflict((cur[j], next[j]), (cur[i], to))) {
            continue;
        }
        next[i] = to;
        if last {
            emit(next);
        } else {
            assign(i + 1, cur, targets, next, emit);
        }
    }
}
