//! The soft step: collisions resolved by the fixed point of the module docs, in three passes.

use std::hint::select_unpredictable;

use super::lanes::{actions_of, Lane, Scratch, BLOCKED, CLASS_EVENTS};
use super::maps::{cell_steps, Target, FREE, HOLE};
use super::step::{Step, Tally};
use crate::engine::layout::{event, AGENT_ACTIVE, POS_MASK};

/// Bits of a soft step's per-cell word: 1 + the agent on the cell, how many movers target it, and
/// 1 + the last mover that targets it (agent counts stay below 256).
pub(super) const OCC: u32 = 0xff;
pub(super) const COUNT_ONE: u32 = 0x100;
pub(super) const MOVER_SHIFT: u32 = 16;

/// Soft collisions (see the module docs) in three passes over the agents: targets and marks,
/// contests, then moves and goals. The passes over all agents have no data-dependent branches
/// (random actions make such branches unpredictable); each non-mover counts into a spare cell of
/// its own past the map, and the cell words are cleared again on the way out.
pub(super) fn step_soft<const DROP: bool>(
    s: Step<'_>,
    agents: &mut [u32],
    events: &mut [u32],
    rewards: &mut [f32],
    sc: &mut Scratch,
) -> Tally {
    let k = agents.len();
    let Scratch { cells, lanes, stack, acts, bits, .. } = sc;
    // Slices, not vectors, from here on: their pointers and lengths then stay in registers.
    let cells = cells.as_mut_slice();
    // Lanes are 1-based, as the cell words' agents are: lane 0 is a sentinel that moves to no
    // cell, so an empty target's "occupant" never blocks.
    let (lanes, acts) = (&mut lanes[..=k], actions_of(s.actions, s.hash, k, acts));
    lanes[0] = Lane { here: u32::MAX, there: u32::MAX, ev: event::MOVED as u8 };
    // Agent `a`'s spare cell is `spare + a`.
    let spare = s.ctx.maps.longest;
    let steps = cell_steps(s.maps.mw);
    for a in 0..k {
        let ag = agents[a];
        let act = acts[a] as usize & 7;
        let Target { here, there, class } = s.maps.target(&steps, ag, act);
        let was_active = ag & AGENT_ACTIVE != 0;
        let dropped = DROP & was_active & (class == HOLE);
        let active = was_active & !dropped;
        let moving = active & (class == FREE) & (act != 0);
        if DROP {
            // Dropping out leaves the agent, inactive, on the hole.
            agents[a] = if dropped { there as u32 } else { ag };
        }
        // `MOVED` here means "tries to move"; the contests add `BLOCKED`, and the last pass
        // clears `MOVED` from the blocked.
        let ev = select_unpredictable(was_active, CLASS_EVENTS[usize::from(class)], event::INACTIVE as u8)
            | (u8::from(dropped) << event::INACTIVE.trailing_zeros())
            | u8::from(moving);
        if active {
            cells[here] |= a as u32 + 1;
        }
        let t = select_unpredictable(moving, there, spare + a);
        let w = cells[t];
        cells[t] = ((w + COUNT_ONE) & 0xffff) | ((a as u32 + 1) << MOVER_SHIFT);
        lanes[a + 1] =
            Lane { here: here as u32, there: select_unpredictable(moving, there, here) as u32, ev };
    }
    // Contests, swaps, and moves into the cell of an agent that does not move. `stack[..len]` is
    // the work list of lanes (each enters it at most once).
    let stack = &mut stack[..k];
    let mut len = 0;
    for a in 1..=k {
        let l = lanes[a];
        // A mover's target, or the cell of one that does not move (which is then not blocked).
        let w = cells[l.there as usize];
        // The lane of the agent on the target (0, the sentinel, if nobody is there).
        let o = lanes[(w & OCC) as usize];
        let other = !o.moving() | (o.there == l.here);
        let blocked = l.moving() & ((w >> 8 & 0xff >= 2) | other);
        lanes[a].ev |= u8::from(blocked) << 1;
        stack[len] = a as u16;
        len += usize::from(blocked);
    }
    // Each agent that stays blocks the single mover (if any) that targets its cell.
    while len > 0 {
        len -= 1;
        let w = cells[lanes[stack[len] as usize].here as usize];
        if w >> 8 & 0xff == 1 {
            let m = (w >> MOVER_SHIFT) as usize;
            if lanes[m].ev & BLOCKED == 0 {
                lanes[m].ev |= BLOCKED;
                stack[len] = m as u16;
                len += 1;
            }
        }
    }
    // Clearing the cell words: whole when the map is small for the agents (a few wide stores),
    // else the two words each agent touched.
    let map = s.maps.class.len();
    let out = SoftOut {
        agents,
        events,
        rewards,
        bits: bits.as_mut_slice(),
        mark: s.ctx.marks,
        goals: &s.goals[..k],
    };
    if map <= BULK_CLEAR_CELLS_PER_AGENT * k {
        let tally = soft_moves::<false>(out, &lanes[1..], cells, spare, s.ctx.lut);
        cells[..map].fill(0);
        cells[spare..spare + k].fill(0);
        tally
    } else {
        soft_moves::<true>(out, &lanes[1..], cells, spare, s.ctx.lut)
    }
}

/// A soft step clears its cell words all at once when the padded map has at most this many
/// cells per agent.
pub(super) const BULK_CLEAR_CELLS_PER_AGENT: usize = 16;

/// What the last pass of a soft step writes.
pub(super) struct SoftOut<'a> {
    pub(super) agents: &'a mut [u32],
    pub(super) events: &'a mut [u32],
    pub(super) rewards: &'a mut [f32],
    pub(super) bits: &'a mut [u8],
    /// Whether to mark agents on `bits` (only the `bytes` observation reads the marks).
    pub(super) mark: bool,
    pub(super) goals: &'a [u32],
}

/// The last pass of a soft step: moves, marks for the observation, goals and rewards; with
/// `CLEAR`, also clears the cell words each agent touched.
#[inline(always)]
pub(super) fn soft_moves<const CLEAR: bool>(
    o: SoftOut<'_>,
    lanes: &[Lane],
    cells: &mut [u32],
    spare: usize,
    lut: &[f32; 256],
) -> Tally {
    let k = o.agents.len();
    let (lanes, events, rewards, goals) =
        (&lanes[..k], &mut o.events[..k], &mut o.rewards[..k], &o.goals[..k]);
    let mut tally = Tally::default();
    for a in 0..k {
        let l = lanes[a];
        if CLEAR {
            cells[l.here as usize] = 0;
            cells[select_unpredictable(l.moving(), l.there as usize, spare + a)] = 0;
        }
        // A blocked agent tried to move and did not.
        let ev = u32::from(l.ev & !(l.ev >> 1 & 1));
        let ag = select_unpredictable(ev & event::MOVED != 0, l.there | AGENT_ACTIVE, o.agents[a]);
        o.agents[a] = ag;
        if o.mark & (ag & AGENT_ACTIVE != 0) {
            o.bits[(ag & POS_MASK) as usize] = 1;
        }
        (events[a], rewards[a]) = tally.finish(ag, ev, goals[a], lut);
    }
    tally
}
