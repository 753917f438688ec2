//! The high level of CBS: a best-first search over constraint trees.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::time::Instant;

use super::constraints::{AgentConstraints, Constraint};
use super::low_level::{AgentSearch, ConflictTable};
use super::mdd::Mdd;
use super::{Solution, SolveError, SolveStats, SolverConfig};
use crate::grid::Cell;
use crate::instance::Instance;
use crate::rules::{all_conflicts, path_cost, Conflict};

/// How a conflict constrains the agents' costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Cardinal,
    SemiCardinal,
    NonCardinal,
}

/// Generated nodes by id (taken out when expanded), each with the conflict it will split.
type NodeStore = Vec<Option<(Node, Option<(Conflict, Class)>)>>;

#[derive(Debug, Clone)]
struct Node {
    constraints: Vec<Constraint>,
    paths: Vec<Rc<Vec<Cell>>>,
    costs: Vec<u32>,
    soc: u32,
    /// Lower bound on the extra cost over `soc` (the CG heuristic).
    h: u32,
    conflicts: Vec<Conflict>,
    mdds: Vec<Option<Rc<Mdd>>>,
}

pub(crate) struct Cbs<'a> {
    instance: &'a Instance,
    config: &'a SolverConfig,
    goals: Vec<Cell>,
    starts: Vec<Cell>,
    dists: Vec<Vec<u32>>,
    stats: SolveStats,
    started: Instant,
}

impl<'a> Cbs<'a> {
    pub(crate) fn new(instance: &'a Instance, config: &'a SolverConfig) -> Result<Self, SolveError> {
        let dists = super::goal_distances(instance)?;
        let (starts, goals) = (instance.start_cells(), instance.goal_cells());
        Ok(Self {
            instance,
            config,
            goals,
            starts,
            dists,
            stats: SolveStats::default(),
            started: Instant::now(),
        })
    }

    fn search(&self, agent: usize) -> AgentSearch<'_> {
        AgentSearch {
            grid: &self.instance.grid,
            start: self.starts[agent],
            goal: self.goals[agent],
            h: &self.dists[agent],
            allow_waits: self.config.allow_waits,
        }
    }

    /// Replans `agent` in `node` under the node's constraints; false when no path fits the bound.
    fn replan(&mut self, node: &mut Node, agent: usize) -> bool {
        self.stats.low_level_searches += 1;
        let cons = AgentConstraints::new(agent, self.goals[agent], &node.constraints);
        let others_soc = node.soc - node.costs[agent];
        let max_cost = self.config.soc_bound.map_or(u32::MAX, |b| b.saturating_sub(others_soc));
        let table = ConflictTable {
            others: (0..node.paths.len()).filter(|&j| j != agent).map(|j| node.paths[j].as_slice()).collect(),
        };
        let Some(path) = self.search(agent).plan(&cons, &table, max_cost) else {
            return false;
        };
        let cost = path_cost(&path, self.goals[agent]).expect("low-level paths end on the goal");
        node.soc = others_soc + cost;
        node.costs[agent] = cost;
        node.paths[agent] = Rc::new(path);
        node.mdds[agent] = None;
        true
    }

    fn mdd(&self, node: &mut Node, agent: usize) -> Rc<Mdd> {
        if let Some(m) = &node.mdds[agent] {
            return Rc::clone(m);
        }
        let cons = AgentConstraints::new(agent, self.goals[agent], &node.constraints);
        let m = Rc::new(Mdd::build(&self.search(agent), &cons, node.costs[agent]));
        node.mdds[agent] = Some(Rc::clone(&m));
        m
    }

    fn classify(&self, node: &mut Node, c: &Conflict) -> Class {
        let (a, b) = c.agents();
        let (ma, mb) = (self.mdd(node, a), self.mdd(node, b));
        let (ca, cb) = match *c {
            Conflict::Vertex { cell, t, .. } => (ma.is_singleton(cell, t), mb.is_singleton(cell, t)),
            Conflict::Edge { from, to, t, .. } => (
                ma.is_singleton(from, t - 1) && ma.is_singleton(to, t),
                mb.is_singleton(to, t - 1) && mb.is_singleton(from, t),
            ),
        };
        match (ca, cb) {
            (true, true) => Class::Cardinal,
            (false, false) => Class::NonCardinal,
            _ => Class::SemiCardinal,
        }
    }

    /// Finds the conflicts of `node`, picks the one to split (cardinal first, then
    /// semi-cardinal, then the earliest) and sets the CG heuristic.
    fn evaluate(&self, node: &mut Node) -> Option<(Conflict, Class)> {
        node.conflicts = all_conflicts(&node.paths.iter().map(|p| p.as_slice()).collect::<Vec<_>>());
        let conflicts = node.conflicts.clone();
        let mut best: Option<(Conflict, Class)> = None;
        let mut cardinal_pairs = Vec::new();
        for c in &conflicts {
            let class = self.classify(node, c);
            if class == Class::Cardinal {
                cardinal_pairs.push(c.agents());
            }
            if best.is_none_or(|(_, b)| class < b) {
                best = Some((*c, class));
            }
        }
        node.h = min_vertex_cover(node.paths.len(), &cardinal_pairs);
        best
    }

    fn check_limits(&self) -> Result<(), SolveError> {
        if self.stats.expanded >= self.config.max_nodes {
            return Err(SolveError::NodeLimit { limit: self.config.max_nodes });
        }
        if let Some(limit) = self.config.time_limit {
            let elapsed = self.started.elapsed();
            if elapsed >= limit {
                return Err(SolveError::TimeLimit { millis: elapsed.as_millis() as u64 });
            }
        }
        Ok(())
    }

    pub(crate) fn run(mut self) -> Result<Solution, SolveError> {
        let k = self.instance.num_agents();
        let mut root = Node {
            constraints: Vec::new(),
            paths: self.starts.iter().map(|&s| Rc::new(vec![s])).collect(),
            costs: vec![0; k],
            soc: 0,
            h: 0,
            conflicts: Vec::new(),
            mdds: vec![None; k],
        };
        for agent in 0..k {
            if !self.replan(&mut root, agent) {
                return Err(SolveError::Exhausted { bound: self.config.soc_bound });
            }
        }
        let mut nodes: NodeStore = Vec::new();
        let mut open = BinaryHeap::new();
        let split = self.evaluate(&mut root);
        self.push(&mut nodes, &mut open, root, split);

        while let Some(Reverse((_, _, id))) = open.pop() {
            let (mut node, split) = nodes[id].take().expect("each node is popped once");
            let Some((conflict, class)) = split else {
                let (soc, makespan) = (node.soc, node.costs.iter().copied().max().unwrap_or(0));
                return Ok(Solution {
                    paths: node.paths.iter().map(|p| p.as_ref().clone()).collect(),
                    soc,
                    makespan,
                    stats: self.stats,
                });
            };
            self.check_limits()?;
            self.stats.expanded += 1;

            let mut children = Vec::with_capacity(2);
            let mut bypassed = false;
            for constraint in split_constraints(&conflict) {
                let agent = constraint.agent();
                let mut child = node.clone();
                child.constraints.push(constraint);
                if !self.replan(&mut child, agent) {
                    continue;
                }
                if self.config.soc_bound.is_some_and(|b| child.soc > b) {
                    continue;
                }
                let child_split = self.evaluate(&mut child);
                if class != Class::Cardinal
                    && child.soc == node.soc
                    && child.conflicts.len() < node.conflicts.len()
                {
                    // Bypass: adopt the child's path in the parent, which stays unexpanded.
                    self.stats.bypasses += 1;
                    node.paths[agent] = Rc::clone(&child.paths[agent]);
                    node.costs[agent] = child.costs[agent];
                    node.mdds[agent] = None;
                    let node_split = self.evaluate(&mut node);
                    self.push(&mut nodes, &mut open, node.clone(), node_split);
                    bypassed = true;
                    break;
                }
                children.push((child, child_split));
            }
            if !bypassed {
                for (child, child_split) in children {
                    self.push(&mut nodes, &mut open, child, child_split);
                }
            }
        }
        Err(SolveError::Exhausted { bound: self.config.soc_bound })
    }

    fn push(
        &mut self,
        nodes: &mut NodeStore,
        open: &mut BinaryHeap<Reverse<(u32, usize, usize)>>,
        node: Node,
        split: Option<(Conflict, Class)>,
    ) {
        if self.config.soc_bound.is_some_and(|b| node.soc + node.h > b) {
            return;
        }
        self.stats.generated += 1;
        let key = (node.soc + node.h, node.conflicts.len(), nodes.len());
        nodes.push(Some((node, split)));
        open.push(Reverse(key));
    }
}

/// The two constraints that resolve a conflict, one per agent.
fn split_constraints(c: &Conflict) -> [Constraint; 2] {
    match *c {
        Conflict::Vertex { a, b, cell, t } => {
            [Constraint::Vertex { agent: a, cell, t }, Constraint::Vertex { agent: b, cell, t }]
        }
        Conflict::Edge { a, b, from, to, t } => {
            [Constraint::Edge { agent: a, from, to, t }, Constraint::Edge { agent: b, from: to, to: from, t }]
        }
    }
}

/// Size of a minimum vertex cover of the graph on `k` agents with the given edges: exact by
/// enumeration for up to 10 agents, else the size of a greedy maximal matching (a lower bound),
/// so the heuristic stays admissible either way.
fn min_vertex_cover(k: usize, edges: &[(usize, usize)]) -> u32 {
    if edges.is_empty() {
        return 0;
    }
    if k <= 10 {
        let mut best = u32::MAX;
        for mask in 0u32..(1 << k) {
            let size = mask.count_ones();
            if size < best && edges.iter().all(|&(a, b)| mask >> a & 1 == 1 || mask >> b & 1 == 1) {
                best = size;
            }
        }
        best
    } else {
        let mut used = vec![false; k];
        let mut matching = 0;
        for &(a, b) in edges {
            if !used[a] && !used[b] {
                used[a] = true;
                used[b] = true;
                matching += 1;
            }
        }
        matching
    }
}

#[cfg(test)]
mod tests {
    use super::min_vertex_cover;

    #[test]
    fn vertex_cover_sizes() {
        assert_eq!(min_vertex_cover(3, &[]), 0);
        assert_eq!(min_vertex_cover(3, &[(0, 1), (1, 2)]), 1);
        assert_eq!(min_vertex_cover(3, &[(0, 1), (1, 2), (0, 2)]), 2);
        assert_eq!(min_vertex_cover(4, &[(0, 1), (2, 3)]), 2);
    }
}
