//! Exact search over joint states, for instances whose joint space is small.
//!
//! A state is every agent's cell plus the set of agents that have **committed**: an agent on its
//! goal may commit, after which it stays there for ever and its cost stops growing. One step moves
//! all agents at once, with no two of them in conflict ([`crate::rules::steps_conflict`]);
//! it costs one per agent that is still uncommitted after it, so an agent's cost is the time it
//! commits, which in an optimal plan is its last arrival on its goal. A* with the sum of the
//! uncommitted agents' goal distances (consistent: a step lowers each distance by at most one)
//! returns a plan of minimum sum of costs, and when its open list runs dry no plan exists.
//!
//! With waits forbidden an uncommitted agent must leave its cell at every step (staying on the
//! goal is then a commit); with a sum-of-costs bound, states whose `g + h` exceeds it are pruned.
//! So the search answers exactly the question CBS answers, for every [`SolverConfig`], and unlike
//! CBS it also proves that no plan exists.
//!
//! The solver starts this search only on small joint spaces ([`fits`]) and caps its work (a
//! million stored states, five million generated steps: about a second at most); when a cap is
//! reached it falls back to CBS. A plan from this search carries its counters in [`SolveStats`]: joint states expanded
//! and joint steps generated.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use super::constraints::IntMap;
use super::reachability::joint_steps;
use super::{Solution, SolveError, SolveStats, SolverConfig};
use crate::grid::{Cell, UNREACHABLE};
use crate::instance::Instance;
use crate::rules::path_cost;

/// Largest joint work ([`work`]) on which the solver starts the joint search: 20 million, that is
/// 2 agents on up to 894 free cells, 3 on up to 55, 4 on up to 14, 5 on up to 7. On random and
/// hand-made instances of this size (open, with holes, corridors with a pocket; solvable,
/// unsolvable, with and without waits and bounds) the search generated at most about 550,000
/// joint steps and took at most about 20 ms (30 to 200 ns a step).
pub const MAX_WORK: u64 = 20_000_000;

/// Limits on one joint search; reaching one gives up, with [`SolveError::NodeLimit`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Caps {
    /// Most joint states stored (about 50 bytes each).
    pub(super) states: usize,
    /// Most joint steps generated (successors, duplicates included): the search's time.
    pub(super) steps: u64,
}

impl Caps {
    /// The solver's caps: a million states (50 MB) and five million steps (a second at most),
    /// far above what the instances measured within [`MAX_WORK`] needed.
    pub(super) const SOLVER: Caps = Caps { states: 1_000_000, steps: 5_000_000 };
}

/// The joint work of an instance: the ordered placements of its k agents on its n free cells,
/// P(n, k) = n!/(n − k)!, times the 5^k joint moves from each; `None` beyond `u64`.
#[must_use]
pub fn work(instance: &Instance) -> Option<u64> {
    let grid = &instance.grid;
    let n = u64::from(grid.cells() - grid.hole_count());
    let k = instance.num_agents() as u32;
    let placements = (0..u64::from(k)).try_fold(1u64, |acc, i| acc.checked_mul(n.checked_sub(i)?))?;
    placements.checked_mul(5u64.checked_pow(k)?)
}

/// Whether the solver should start the joint search on `instance`: at least two agents (CBS
/// solves one agent at its root), joint work at most [`MAX_WORK`], and states (n^k cell choices
/// and 2^k committed sets) that pack into a `u64`.
#[must_use]
pub fn fits(instance: &Instance) -> bool {
    instance.num_agents() >= 2 && packs(instance) && work(instance).is_some_and(|w| w <= MAX_WORK)
}

/// Whether a joint state (n^k cell choices and 2^k committed sets) packs into a `u64`.
fn packs(instance: &Instance) -> bool {
    let grid = &instance.grid;
    let n = u64::from(grid.cells() - grid.hole_count());
    let k = instance.num_agents() as u32;
    k < 64 && n.checked_pow(k).and_then(|p| p.checked_mul(1u64 << k)).is_some()
}

/// Packs joint states (cells and committed set) into a `u64`.
struct Codec {
    free: Vec<Cell>,
    index: Vec<u32>,
    k: usize,
}

impl Codec {
    fn encode(&self, cells: &[Cell], committed: u64) -> u64 {
        let radix = self.free.len() as u64;
        let pos = cells.iter().rev().fold(0u64, |acc, &c| acc * radix + u64::from(self.index[c as usize]));
        (pos << self.k) | committed
    }

    fn decode(&self, code: u64, cells: &mut Vec<Cell>) -> u64 {
        let radix = self.free.len() as u64;
        let committed = code & ((1 << self.k) - 1);
        let mut pos = code >> self.k;
        cells.clear();
        for _ in 0..self.k {
            cells.push(self.free[(pos % radix) as usize]);
            pos /= radix;
        }
        committed
    }
}

#[derive(Clone, Copy)]
struct Node {
    code: u64,
    parent: u32,
    g: u32,
}

/// A plan of minimum sum of costs by A* over joint states, under the config's waits rule, bound
/// and time limit (not its node limit), with the solver's caps (a million stored states, five
/// million generated steps). [`crate::solve`] calls it on instances that [`fit`](fits); it
/// is public for tests and comparisons.
///
/// # Errors
/// [`SolveError::Exhausted`] when no plan exists (within the bound; also for an agent cut off
/// from its goal), [`SolveError::NodeLimit`] when a cap was reached or the instance is too large
/// for joint states to be packed into 64 bits, [`SolveError::TimeLimit`].
pub fn search(instance: &Instance, config: &SolverConfig) -> Result<Solution, SolveError> {
    search_capped(instance, config, Instant::now(), Caps::SOLVER)
}

/// [`search`] with explicit caps and the time limit counted from `started`.
///
/// # Errors
/// As [`search`]; a cap gives [`SolveError::NodeLimit`] with the state cap as its limit.
pub(super) fn search_capped(
    instance: &Instance,
    config: &SolverConfig,
    started: Instant,
    caps: Caps,
) -> Result<Solution, SolveError> {
    if !packs(instance) {
        return Err(SolveError::NodeLimit { limit: caps.states as u64 });
    }
    let grid = &instance.grid;
    let k = instance.num_agents();
    let free: Vec<Cell> = (0..grid.cells()).filter(|&c| !grid.is_hole(c)).collect();
    let mut index = vec![u32::MAX; grid.cells() as usize];
    for (i, &c) in free.iter().enumerate() {
        index[c as usize] = i as u32;
    }
    let codec = Codec { free, index, k };
    let goals = instance.goal_cells();
    let dists: Vec<Vec<u32>> = goals.iter().map(|&g| grid.distances_from(g)).collect();
    let h = |cells: &[Cell], committed: u64| -> Option<u32> {
        (0..k).filter(|&i| committed >> i & 1 == 0).try_fold(0u32, |sum, i| {
            let d = dists[i][cells[i] as usize];
            (d != UNREACHABLE).then_some(sum + d)
        })
    };
    let bound = config.soc_bound.unwrap_or(u32::MAX);
    let exhausted = SolveError::Exhausted { bound: config.soc_bound };

    let start = instance.start_cells();
    let Some(h0) = h(&start, 0).filter(|&h0| h0 <= bound) else {
        return Err(exhausted);
    };
    let mut nodes = vec![Node { code: codec.encode(&start, 0), parent: u32::MAX, g: 0 }];
    let mut best: IntMap<u32> = IntMap::default();
    best.insert(nodes[0].code, 0);
    // (f, larger g first, first generated first)
    let mut open = BinaryHeap::from([Reverse((h0, Reverse(0u32), 0u32))]);
    let mut stats = SolveStats::default();

    let (mut cur, mut next) = (Vec::with_capacity(k), vec![0; k]);
    let mut targets: Vec<Vec<Cell>> = vec![Vec::with_capacity(5); k];
    let mut steps: Vec<(u64, u32, u32)> = Vec::new();
    while let Some(Reverse((f, Reverse(g), id))) = open.pop() {
        let node = nodes[id as usize];
        if best.get(&node.code) != Some(&id) {
            continue; // a cheaper way to this state was found after this entry was queued
        }
        if f == g {
            // Every uncommitted agent is on its goal: all commit now, at no further cost.
            return Ok(trace(&codec, &nodes, id, &goals, stats));
        }
        if stats.expanded % 1024 == 0 {
            if let Some(limit) = config.time_limit {
                let elapsed = started.elapsed();
                if elapsed >= limit {
                    return Err(SolveError::TimeLimit { millis: elapsed.as_millis() as u64 });
                }
            }
        }
        stats.expanded += 1;

        let committed = codec.decode(node.code, &mut cur);
        for (i, t) in targets.iter_mut().enumerate() {
            t.clear();
            let from = cur[i];
            if committed >> i & 1 == 1 {
                t.push(from);
            } else {
                // Without waits an agent stays only to commit on its goal.
                let may_stay = config.allow_waits || from == goals[i];
                t.extend(grid.successors(from).map(|(_, to)| to).filter(|&to| to != from || may_stay));
            }
        }
        steps.clear();
        joint_steps(&cur, &targets, &mut next, &mut |next| {
            let uncommitted = (0..k).filter(|&i| committed >> i & 1 == 0);
            // Uncommitted agents that stay on their goal: each may commit (or, with waits
            // allowed, wait there at a cost of one).
            let stayers = uncommitted.clone().filter(|&i| next[i] == cur[i] && cur[i] == goals[i]);
            let stayers: u64 = stayers.fold(0, |m, i| m | 1 << i);
            let Some(hn) = h(next, committed) else { return };
            let paying = uncommitted.count() as u32;
            if config.allow_waits {
                // Every subset of the stayers commits.
                let mut sub = stayers;
                loop {
                    steps.push((codec.encode(next, committed | sub), paying - sub.count_ones(), hn));
                    if sub == 0 {
                        break;
                    }
                    sub = (sub - 1) & stayers;
                }
            } else {
                steps.push((codec.encode(next, committed | stayers), paying - stayers.count_ones(), hn));
            }
        });
        stats.generated += steps.len() as u64;
        for &(code, cost, hn) in &steps {
            let ng = g + cost;
            if ng + hn > bound {
                continue;
            }
            let known = best.get(&code).copied();
            if known.is_some_and(|j| nodes[j as usize].g <= ng) {
                continue;
            }
            let nid = nodes.len() as u32;
            nodes.push(Node { code, parent: id, g: ng });
            best.insert(code, nid);
            open.push(Reverse((ng + hn, Reverse(ng), nid)));
        }
        if nodes.len() > caps.states || stats.generated > caps.steps {
            return Err(SolveError::NodeLimit { limit: caps.states as u64 });
        }
    }
    Err(exhausted)
}

/// The plan ending at node `id`: each agent's cells up to its last arrival.
fn trace(codec: &Codec, nodes: &[Node], mut id: u32, goals: &[Cell], stats: SolveStats) -> Solution {
    let g = nodes[id as usize].g;
    let mut states = Vec::new();
    while id != u32::MAX {
        let mut cells = Vec::new();
        codec.decode(nodes[id as usize].code, &mut cells);
        states.push(cells);
        id = nodes[id as usize].parent;
    }
    states.reverse();
    let paths: Vec<Vec<Cell>> = (0..goals.len())
        .map(|i| {
            let full: Vec<Cell> = states.iter().map(|s| s[i]).collect();
            let cost = path_cost(&full, goals[i]).expect("the search ends with every agent on its goal");
            full[..=cost as usize].to_vec()
        })
        .collect();
    let costs: Vec<u32> = paths.iter().map(|p| p.len() as u32 - 1).collect();
    let soc = costs.iter().sum();
    debug_assert_eq!(soc, g, "an optimal joint plan pays only until each agent's last arrival");
    Solution { paths, soc, makespan: costs.iter().copied().max().unwrap_or(0), stats }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{all_conflicts, path_cost};

    fn instance(rows: &[&str], agents: &[([u32; 2], [u32; 2])]) -> Instance {
        let grid = crate::Grid::from_rows(rows).expect("valid grid");
        let agents = agents.iter().map(|&(s, g)| crate::Agent { start: s.into(), goal: g.into() }).collect();
        Instance::new(grid, agents).expect("valid instance")
    }

    /// The plan is conflict-free, runs from the starts to the goals one step at a time, and its
    /// costs are the rules' costs.
    fn check_plan(inst: &Instance, sol: &Solution, allow_waits: bool) {
        let (starts, goals) = (inst.start_cells(), inst.goal_cells());
        for (i, p) in sol.paths.iter().enumerate() {
            assert_eq!((p[0], *p.last().expect("non-empty")), (starts[i], goals[i]));
            for w in p.windows(2) {
                assert!(inst.grid.successors(w[0]).any(|(_, to)| to == w[1]), "{p:?}");
            }
        }
        assert!(all_conflicts(&sol.paths).is_empty(), "{:?}", sol.paths);
        let costs: Vec<u32> =
            sol.paths.iter().zip(&goals).map(|(p, &g)| path_cost(p, g).expect("on goal")).collect();
        assert_eq!((costs.iter().sum(), costs.iter().copied().max().unwrap_or(0)), (sol.soc, sol.makespan));
        if !allow_waits {
            assert!(!sol.has_wait_before_arrival(), "{:?}", sol.paths);
        }
    }

    const WAIT_FREE: SolverConfig =
        SolverConfig { max_nodes: 0, time_limit: None, allow_waits: false, soc_bound: None };

    #[test]
    fn a_corridor_swap_is_unsolvable() {
        let inst = instance(&["FFFFFF"], &[([0, 0], [0, 5]), ([0, 5], [0, 0])]);
        assert!(fits(&inst));
        assert_eq!(work(&inst), Some(6 * 5 * 25));
        let exhausted = |bound| Err(SolveError::Exhausted { bound });
        assert_eq!(search(&inst, &SolverConfig::default()), exhausted(None));
        assert_eq!(search(&inst, &WAIT_FREE), exhausted(None));
        assert_eq!(search(&inst, &SolverConfig { soc_bound: Some(40), ..WAIT_FREE }), exhausted(Some(40)));
    }

    #[test]
    fn a_side_pocket_makes_the_swap_possible() {
        // Agent 0 ducks into the pocket below column 2 at time 3 as agent 1 follows it into
        // column 2, and comes out behind agent 1: agent 1 goes straight (5 moves), agent 0 takes
        // 7 (a detour of 2). No plan avoids a detour of 2 by one of them.
        let inst = instance(&["FFFFFF", "HHFHHH"], &[([0, 0], [0, 5]), ([0, 5], [0, 0])]);
        let sol = search(&inst, &SolverConfig::default()).expect("solvable");
        check_plan(&inst, &sol, true);
        assert_eq!(sol.soc, 12);
        // Within the optimum as a bound the cost is the same; below it there is no plan.
        let bounded = SolverConfig { soc_bound: Some(12), ..SolverConfig::default() };
        assert_eq!(search(&inst, &bounded).map(|s| s.soc), Ok(12));
        let below = SolverConfig { soc_bound: Some(11), ..SolverConfig::default() };
        assert_eq!(search(&inst, &below), Err(SolveError::Exhausted { bound: Some(11) }));
        // That plan needs no wait.
        let wait_free = search(&inst, &SolverConfig { soc_bound: Some(12), ..WAIT_FREE }).expect("wait-free");
        check_plan(&inst, &wait_free, false);
        assert_eq!(wait_free.soc, 12);
    }

    #[test]
    fn agents_on_their_goals_cost_nothing_and_leave_only_to_make_way() {
        // Agent 0 starts on its goal above a pocket; agent 1 passes through it.
        let inst = instance(&["FFF", "HFH"], &[([0, 1], [0, 1]), ([0, 0], [0, 2])]);
        for config in [SolverConfig::default(), WAIT_FREE] {
            let sol = search(&inst, &config).expect("solvable");
            check_plan(&inst, &sol, config.allow_waits);
            // Agent 0 steps into the pocket as agent 1 follows it, and back as agent 1 leaves:
            // its cost is its last arrival, 2.
            assert_eq!(sol.paths, vec![vec![1, 4, 1], vec![0, 1, 2]]);
            assert_eq!((sol.soc, sol.makespan), (4, 2));
        }
        // Alone, it commits at once, at no cost.
        let alone = instance(&["FFF", "HFH"], &[([0, 1], [0, 1]), ([0, 2], [0, 2])]);
        let sol = search(&alone, &WAIT_FREE).expect("solvable");
        assert_eq!((sol.soc, sol.paths), (0, vec![vec![1], vec![2]]));
        // Without the pocket the corridor has no room to make way.
        let line = instance(&["FFF"], &[([0, 1], [0, 1]), ([0, 0], [0, 2])]);
        assert_eq!(search(&line, &SolverConfig::default()), Err(SolveError::Exhausted { bound: None }));
    }

    #[test]
    fn the_caps_stop_the_search() {
        let inst = instance(&["FFFFFF", "HHFHHH"], &[([0, 0], [0, 5]), ([0, 5], [0, 0])]);
        let tiny = Caps { states: 10, steps: u64::MAX };
        let got = search_capped(&inst, &SolverConfig::default(), Instant::now(), tiny);
        assert_eq!(got, Err(SolveError::NodeLimit { limit: 10 }));
        let few_steps = Caps { states: usize::MAX, steps: 10 };
        assert!(matches!(
            search_capped(&inst, &SolverConfig::default(), Instant::now(), few_steps),
            Err(SolveError::NodeLimit { .. })
        ));
    }

    #[test]
    fn only_small_joint_spaces_fit() {
        let one = instance(&["FFFF"], &[([0, 0], [0, 3])]);
        assert!(!fits(&one), "CBS solves a single agent at its root");
        // 14 agents on an open 4x4 map: 16!/2! placements.
        let grid = crate::Grid::new(4, 4);
        let agents =
            (0..14).map(|i| crate::Agent { start: grid.pos(i), goal: grid.pos((i + 1) % 16) }).collect();
        let crowded = Instance::new(grid, agents).expect("valid");
        assert!(!fits(&crowded));
        // Its states do not even pack into 64 bits: the search declines.
        assert_eq!(
            search(&crowded, &SolverConfig::default()),
            Err(SolveError::NodeLimit { limit: 1_000_000 })
        );
        // 3 agents on 55 free cells fit, on 56 they do not; 4 agents on 14 and 15.
        let open = |w, h, k: u32| {
            let grid = crate::Grid::new(w, h);
            let agents = (0..k).map(|i| crate::Agent { start: grid.pos(i), goal: grid.pos(i) }).collect();
            Instance::new(grid, agents).expect("valid")
        };
        assert!(fits(&open(11, 5, 3)) && !fits(&open(8, 7, 3)));
        assert!(fits(&open(7, 2, 4)) && !fits(&open(5, 3, 4)));
    }
}
