//! The low level of CBS: space-time A* for one agent under its constraints.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::constraints::{key, AgentConstraints, IntSet, MAX_TIME};
use crate::grid::{Cell, Grid, UNREACHABLE};
use crate::rules::{at, steps_conflict};

/// What the low level needs to know about one agent.
#[derive(Debug)]
pub(crate) struct AgentSearch<'a> {
    pub(crate) grid: &'a Grid,
    pub(crate) start: Cell,
    pub(crate) goal: Cell,
    /// Distances to the goal (the heuristic; exact without other agents).
    pub(crate) h: &'a [u32],
    pub(crate) allow_waits: bool,
}

/// Counts the conflicts a step would have with the other agents' current paths.
#[derive(Debug)]
pub(crate) struct ConflictTable<'a> {
    pub(crate) others: Vec<&'a [Cell]>,
}

impl ConflictTable<'_> {
    fn count(&self, from: Cell, to: Cell, t: u32) -> u32 {
        let mut n = 0;
        for p in &self.others {
            if steps_conflict((from, to), (at(p, t.saturating_sub(1)), at(p, t))) {
                n += 1;
            }
        }
        n
    }
}

#[derive(Clone, Copy)]
struct Entry {
    cell: Cell,
    t: u32,
    parent: u32,
}

impl AgentSearch<'_> {
    /// The cheapest path under `cons` whose final arrival is at most `max_cost`, ties broken by
    /// the fewest conflicts with `table`; `None` if none exists.
    pub(crate) fn plan(
        &self,
        cons: &AgentConstraints,
        table: &ConflictTable<'_>,
        max_cost: u32,
    ) -> Option<Vec<Cell>> {
        if self.h[self.start as usize] == UNREACHABLE || !cons.allows(self.start, self.start, 0) {
            return None;
        }
        // After the last constraint the agent can reach its goal in at most `cells` more steps,
        // so later arrivals never need to be searched.
        let horizon = max_cost.min(cons.last_time + self.grid.cells() + 2).min(MAX_TIME);
        let mut entries = vec![Entry { cell: self.start, t: 0, parent: u32::MAX }];
        let mut closed = IntSet::default();
        // (f, conflicts, larger t first, entry)
        let mut open = BinaryHeap::new();
        let h0 = self.h[self.start as usize];
        open.push(Reverse((h0, 0u32, Reverse(0u32), 0u32)));
        while let Some(Reverse((_, conflicts, _, idx))) = open.pop() {
            let Entry { cell, t, .. } = entries[idx as usize];
            if !closed.insert(key(t, cell, 0)) {
                continue;
            }
            if cell == self.goal && t >= cons.min_arrival {
                return Some(Self::trace(&entries, idx));
            }
            if t >= horizon {
                continue;
            }
            let nt = t + 1;
            for (_, next) in self.grid.successors(cell) {
                if next == cell && !self.allow_waits {
                    continue;
                }
                let hn = self.h[next as usize];
                if hn == UNREACHABLE || nt + hn > horizon || !cons.allows(cell, next, nt) {
                    continue;
                }
                if closed.contains(&key(nt, next, 0)) {
                    continue;
                }
                let c = conflicts + table.count(cell, next, nt);
                entries.push(Entry { cell: next, t: nt, parent: idx });
                open.push(Reverse((nt + hn, c, Reverse(nt), entries.len() as u32 - 1)));
            }
        }
        None
    }

    fn trace(entries: &[Entry], mut idx: u32) -> Vec<Cell> {
        let mut path = Vec::with_capacity(entries[idx as usize].t as usize + 1);
        while idx != u32::MAX {
            let e = entries[idx as usize];
            path.push(e.cell);
            idx = e.parent;
        }
        path.reverse();
        path
    }
}
