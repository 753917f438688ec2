//! Multi-valued decision diagrams: for one agent under its constraints, the cells that some
//! optimal path visits at each time. A level of width one means every optimal path is there then,
//! so a conflict on it is *cardinal* for that agent (forbidding it raises the agent's cost).

use super::constraints::AgentConstraints;
use super::low_level::AgentSearch;
use crate::grid::Cell;

/// The levels 0..=cost of an agent's MDD; after `cost` the agent sits on its goal.
#[derive(Debug)]
pub(crate) struct Mdd {
    levels: Vec<Vec<Cell>>,
}

impl Mdd {
    pub(crate) fn build(search: &AgentSearch<'_>, cons: &AgentConstraints, cost: u32) -> Self {
        let n = search.grid.cells() as usize;
        let c = cost as usize;
        let mut stamp = vec![u32::MAX; n];
        let mut forward: Vec<Vec<Cell>> = Vec::with_capacity(c + 1);
        forward.push(vec![search.start]);
        for t in 1..=c {
            let mut level = Vec::new();
            for &u in &forward[t - 1] {
                for (_, v) in search.grid.successors(u) {
                    let left = (c - t) as u32;
                    if (v == u && !search.allow_waits)
                        || search.h[v as usize] > left
                        || stamp[v as usize] == t as u32
                        || !cons.allows(u, v, t as u32)
                    {
                        continue;
                    }
                    stamp[v as usize] = t as u32;
                    level.push(v);
                }
            }
            forward.push(level);
        }
        // Backward pass: keep the cells from which the goal is reached at exactly `cost`.
        let mut levels = vec![Vec::new(); c + 1];
        levels[c] = forward[c].iter().copied().filter(|&v| v == search.goal).collect();
        let mut mark = vec![false; n];
        for t in (0..c).rev() {
            for &v in &levels[t + 1] {
                mark[v as usize] = true;
            }
            levels[t] = forward[t]
                .iter()
                .copied()
                .filter(|&u| {
                    search.grid.successors(u).any(|(_, v)| {
                        mark[v as usize] && (v != u || search.allow_waits) && cons.allows(u, v, t as u32 + 1)
                    })
                })
                .collect();
            for &v in &levels[t + 1] {
                mark[v as usize] = false;
            }
        }
        Self { levels }
    }

    /// Whether every optimal path is on `cell` at time `t` (after arrival: the goal).
    pub(crate) fn is_singleton(&self, cell: Cell, t: u32) -> bool {
        let level = &self.levels[(t as usize).min(self.levels.len() - 1)];
        level.len() == 1 && level[0] == cell
    }
}
