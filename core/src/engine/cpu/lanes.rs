//! What the strict and the soft step share: per-thread scratch memory (the soft step's arrays
//! among it), what one environment's step reads ([`Step`]), the per-agent working record of a
//! strict step ([`Lane`]), the actions of a step and the goal pass ([`Tally`]).

use std::cell::RefCell;

use super::maps::Maps;
use super::{Actions, Ctx};
use crate::engine::hash::random_action;
use crate::engine::records::event;
use crate::pool::MAX_AGENTS;
use crate::rules::Occupancy;
use crate::words::{AGENT_ACTIVE, AGENT_ARRIVED, POS_MASK};

/// A soft step's agents, one array per field, each with room for the most agents an instance
/// holds ([`MAX_AGENTS`]), so that a step needs no growing and no length test per array. `there`
/// and `ev` are indexed by 1 + the agent: slot 0 is a sentinel "agent" for cells nobody is on (it
/// moves, to no cell, so it never blocks), and there is a slot for every value of a cell word's
/// occupant byte, so that looking the occupant up needs no bounds test.
pub(crate) struct SoftArrays {
    /// Padded cells.
    pub(super) here: [u32; MAX_AGENTS],
    /// The cell an agent's action leads to (its class is then read into `class`).
    pub(super) target: [u32; MAX_AGENTS],
    pub(super) class: [u32; MAX_AGENTS],
    /// 1-based: the agent's target if it tries to move, else its own cell.
    pub(super) there: [u32; 256],
    /// 1-based: event bits so far; `MOVED` while the agent tries to move, `BLOCKED` once a
    /// contest or the fixed point stops it.
    pub(super) ev: [u32; 256],
    /// The cell word an agent marks as its occupant: its cell if it is in the episode, else its
    /// spare cell.
    pub(super) occ_at: [u32; MAX_AGENTS],
    /// The cell word an agent counts as a mover in: its target if it tries to move, else its
    /// spare cell.
    pub(super) count_at: [u32; MAX_AGENTS],
    /// The work list of agents that stay (1-based).
    pub(super) stack: [u32; MAX_AGENTS],
}

impl Default for Box<SoftArrays> {
    fn default() -> Self {
        let zero = [0; MAX_AGENTS];
        Box::new(SoftArrays {
            here: zero,
            target: zero,
            class: zero,
            there: [0; 256],
            ev: [0; 256],
            occ_at: zero,
            count_at: zero,
            stack: zero,
        })
    }
}

#[derive(Default)]
pub(crate) struct Scratch {
    /// Soft steps, per padded cell and then one spare cell per agent: see `OCC` in [`super::soft`].
    pub(super) cells: Vec<u32>,
    /// Strict steps: per padded cell, for [`crate::rules::judge_conflicts`].
    pub(super) occ: Occupancy,
    /// Strict steps: per agent, the class of its target.
    pub(super) classes: Vec<u8>,
    /// Active agents on the padded map of observations (1 on their cells): with the `bytes`
    /// observation, a step marks them at their new cells for the observation that follows,
    /// which clears them again.
    pub(super) bits: Vec<u8>,
    /// The `bits` observation: active agents as bits of padded cells (set and cleared by the
    /// observation of one environment).
    pub(super) agent_bits: Vec<u8>,
    /// The `bits` observation on maps of padded width up to 64: active agents as one `u64` per
    /// padded row (set and cleared by the observation of one environment).
    pub(super) agent_rows: Vec<u64>,
    /// The `bits` observation at radius 6 and above: one agent's three planes, being packed.
    pub(super) planes: Vec<u64>,
    /// Strict steps: per agent.
    pub(super) lanes: Vec<Lane>,
    /// Soft steps: the agents' arrays.
    pub(super) soft: Box<SoftArrays>,
    /// Random actions.
    pub(super) acts: Vec<u8>,
}

impl Scratch {
    /// Grows the arrays to `cells` cells and `k` agents.
    #[inline]
    pub(super) fn fit(&mut self, cells: usize, k: usize) {
        if self.cells.len() < cells {
            self.cells.resize(cells, 0);
            self.bits.resize(cells, 0);
            self.occ.fit(cells);
        }
        if self.lanes.len() < k {
            self.lanes.resize(k, Lane::default());
            self.classes.resize(k, 0);
        }
    }
}

thread_local! {
    pub(super) static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The actions of one environment's `k` agents: the caller's, or random ones written into `buf`
/// (a loop the compiler vectorises).
#[inline(always)]
pub(super) fn actions_of<'a>(actions: Actions<'a>, hash: u32, k: usize, buf: &'a mut Vec<u8>) -> &'a [u8] {
    match actions {
        Actions::Given(acts) => &acts[..k],
        Actions::Random => {
            if buf.len() < k {
                buf.resize(k, 0);
            }
            let buf = &mut buf[..k];
            for (a, x) in buf.iter_mut().enumerate() {
                *x = random_action(hash, a as u32);
            }
            buf
        }
    }
}

/// One agent's working record in a strict step: its padded cell, its target cell (its own cell
/// unless it moves), and its events so far (including whether it tries to move).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(16))]
pub(crate) struct Lane {
    pub(super) here: u32,
    pub(super) there: u32,
    /// Event bits: `MOVED` while the agent tries to move.
    pub(super) ev: u8,
}

impl Lane {
    /// Whether the agent tries to move.
    #[inline(always)]
    pub(super) fn moving(self) -> bool {
        self.ev & event::MOVED as u8 != 0
    }
}

/// What one environment's step reads.
#[derive(Clone, Copy)]
pub(super) struct Step<'a> {
    pub(super) ctx: Ctx<'a>,
    pub(super) maps: Maps<'a>,
    pub(super) goals: &'a [u32],
    pub(super) actions: Actions<'a>,
    pub(super) hash: u32,
}

/// What the goal pass of a step counted: agents still in the episode, and those of them on their
/// goals.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) active: u32,
    pub(super) home: u32,
}

impl Tally {
    /// Counts in an agent with word `ag` (after its move) and events `ev` (after [`at_goal`]).
    #[inline(always)]
    pub(super) fn count(&mut self, ag: u32, ev: u32) {
        self.active += ag >> 31;
        self.home += ev >> event::AT_GOAL.trailing_zeros() & 1;
    }

    /// The goal pass, for an agent after its move (agent word `ag`, events so far `ev`, which
    /// hold `INACTIVE` already for an agent out of the episode): adds `AT_GOAL` and `REACHED`,
    /// counts the agent in, and returns its word (with `AGENT_ARRIVED` once it arrived), its
    /// events and its reward.
    #[inline(always)]
    pub(super) fn finish(&mut self, ag: u32, ev: u32, goal: u32, lut: &[f32; 256]) -> (u32, u32, f32) {
        let (ag, ev) = at_goal(ag, ev, goal);
        self.count(ag, ev);
        (ag, ev, lut[(ev & 0xff) as usize])
    }
}

/// `AT_GOAL` and `REACHED` for an agent with word `ag` (after its move) on goal `goal` and events
/// `ev` so far: its word with `AGENT_ARRIVED` set when it arrived, and the events with them
/// added. `REACHED` comes only with the first arrival of the episode.
#[inline(always)]
pub(super) fn at_goal(ag: u32, ev: u32, goal: u32) -> (u32, u32) {
    let active = ag >> 31;
    let home = active & u32::from(ag & POS_MASK == goal);
    // Arriving is being home after a move (starts and goals differ) for the first time;
    // `MOVED` is bit 0.
    const { assert!(event::MOVED == 1 && AGENT_ACTIVE == 1 << 31 && AGENT_ARRIVED == 1 << 30) };
    let reached = home & ev & !(ag >> 30);
    (
        ag | (reached << 30),
        ev | (home << event::AT_GOAL.trailing_zeros()) | (reached << event::REACHED.trailing_zeros()),
    )
}
