//! Constraints of the constraint tree and their per-agent lookup tables.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::grid::Cell;

/// A fast hasher for packed integer keys (the keys are already well spread by [`key`]).
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = crate::rng::mix64(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = crate::rng::mix64(x);
    }
}

pub(crate) type IntSet = HashSet<u64, BuildHasherDefault<IntHasher>>;

/// A map from packed integer keys.
pub(crate) type IntMap<V> = HashMap<u64, V, BuildHasherDefault<IntHasher>>;

/// Latest time step the search represents (times are packed into 16 bits).
pub(crate) const MAX_TIME: u32 = u16::MAX as u32;

/// Packs (time, cell) or (time, from, to) into one key. Cells fit in 24 bits (grids are at most
/// 4096×4096) and times in 16 ([`MAX_TIME`]).
#[inline]
pub(crate) fn key(t: u32, a: Cell, b: Cell) -> u64 {
    debug_assert!(t <= MAX_TIME && a < 1 << 24 && b < 1 << 24);
    (u64::from(t) << 48) | (u64::from(a) << 24) | u64::from(b)
}

/// A constraint on one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Constraint {
    /// The agent may not be on `cell` at time `t`.
    Vertex { agent: usize, cell: Cell, t: u32 },
    /// The agent may not move `from → to` between `t − 1` and `t`.
    Edge { agent: usize, from: Cell, to: Cell, t: u32 },
}

impl Constraint {
    pub(crate) fn agent(&self) -> usize {
        match *self {
            Constraint::Vertex { agent, .. } | Constraint::Edge { agent, .. } => agent,
        }
    }
}

/// The constraints on one agent, indexed for the low-level search.
#[derive(Debug, Default)]
pub(crate) struct AgentConstraints {
    vertex: IntSet,
    edge: IntSet,
    /// The agent's final arrival must be at this time or later (one past the last vertex
    /// constraint on its goal).
    pub(crate) min_arrival: u32,
    /// The latest time of any constraint.
    pub(crate) last_time: u32,
}

impl AgentConstraints {
    pub(crate) fn new(agent: usize, goal: Cell, all: &[Constraint]) -> Self {
        let mut out = Self::default();
        for c in all.iter().filter(|c| c.agent() == agent) {
            match *c {
                Constraint::Vertex { cell, t, .. } => {
                    out.vertex.insert(key(t, cell, 0));
                    if cell == goal {
                        out.min_arrival = out.min_arrival.max(t + 1);
                    }
                    out.last_time = out.last_time.max(t);
                }
                Constraint::Edge { from, to, t, .. } => {
                    out.edge.insert(key(t, from, to));
                    out.last_time = out.last_time.max(t);
                }
            }
        }
        out
    }

    /// Whether moving `from → to`, arriving at time `t`, breaks no constraint.
    #[inline]
    pub(crate) fn allows(&self, from: Cell, to: Cell, t: u32) -> bool {
        !self.vertex.contains(&key(t, to, 0)) && (from == to || !self.edge.contains(&key(t, from, to)))
    }
}
