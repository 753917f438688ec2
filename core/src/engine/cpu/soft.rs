//! The soft step: collisions resolved by the fixed point of the module docs.
//!
//! The agents are held as arrays (one per field, [`SoftArrays`]), so that the per-agent
//! arithmetic runs in loops the compiler vectorises, and only the reads and writes of cell words
//! are loops of single loads and stores: targets (vector), target classes (loads), events and
//! moves (vector), marking the cells (stores), contests (loads), the fixed point (a work list),
//! moves and goals (vector), rewards (loads). Below [`VECTOR_MIN_AGENTS`] agents the same
//! per-agent functions run in fused loops instead. No loop over all agents branches on the data.

use std::hint::select_unpredictable;

use super::lanes::{actions_of, at_goal, Scratch, SoftArrays, Step, Tally};
use super::maps::{FREE, HOLE, OFF};
use crate::engine::records::event;
use crate::words::{AGENT_ACTIVE, POS_MASK};

/// Bits of a soft step's per-cell word: 1 + the agent on the cell, how many movers target it, and
/// 1 + the last mover that targets it (agent counts stay below 256).
pub(super) const OCC: u32 = 0xff;
pub(super) const COUNT_ONE: u32 = 0x100;
pub(super) const MOVER_SHIFT: u32 = 16;

/// The padded-cell step of an action code (0..=4): arithmetic, not a table, so that the target
/// loop vectorises.
#[inline(always)]
fn step_of(act: u32, mw: u32) -> u32 {
    // Random actions make every one of these choices unpredictable: selects, not branches.
    let v = select_unpredictable(act == 2, mw, 0u32.wrapping_sub(mw));
    let h = select_unpredictable(act == 4, 1, u32::MAX);
    select_unpredictable(act == 0, 0, select_unpredictable(act <= 2, v, h))
}

/// What the first pass decides for one agent.
struct Start {
    /// The agent's word, changed only by dropping out (inactive, on the hole).
    agent: u32,
    /// Events so far, with `MOVED` if the agent tries to move.
    ev: u32,
    /// Its target if it tries to move, else its own cell.
    there: u32,
    /// The cell word it marks as its occupant, and the one it counts as a mover in.
    occ_at: u32,
    count_at: u32,
}

/// The first pass for one agent: word `ag`, action `act`, on padded cell `here` with target
/// `target` of class `class`; `spare` is its spare cell.
#[inline(always)]
fn start<const DROP: bool>(ag: u32, act: u8, here: u32, target: u32, class: u32, spare: u32) -> Start {
    let was_active = ag & AGENT_ACTIVE != 0;
    let dropped = DROP & was_active & (class == u32::from(HOLE));
    let active = was_active & !dropped;
    let moving = active & (class == u32::from(FREE)) & (act != 0);
    let class_ev = (u32::from(class == u32::from(HOLE)) * event::HOLE)
        | (u32::from(class == u32::from(OFF)) * event::OFF_GRID);
    Start {
        // Dropping out leaves the agent, inactive, on the hole.
        agent: if DROP { select_unpredictable(dropped, target, ag) } else { ag },
        ev: select_unpredictable(was_active, class_ev, event::INACTIVE)
            | (u32::from(dropped) * event::INACTIVE)
            | u32::from(moving),
        there: select_unpredictable(moving, target, here),
        occ_at: select_unpredictable(active, here, spare),
        count_at: select_unpredictable(moving, target, spare),
    }
}

/// Marks agent `id` (1-based) on the cell words: as the occupant of `occ_at`, as a mover
/// into `count_at`.
#[inline(always)]
fn mark_cells(cells: &mut [u32], id: u32, occ_at: u32, count_at: u32) {
    cells[occ_at as usize] |= id;
    let t = count_at as usize;
    let w = cells[t];
    cells[t] = ((w + COUNT_ONE) & 0xffff) | (id << MOVER_SHIFT);
}

/// The move of an agent with word `ag` and final events `ev` (`BLOCKED` set if it stays):
/// its new word (its flags kept), and its events with `MOVED` only if it did move.
#[inline(always)]
fn moved(ag: u32, ev: u32, there: u32) -> (u32, u32) {
    // A blocked agent tried to move and did not.
    let e = ev & !(ev >> 1 & 1);
    (select_unpredictable(e & event::MOVED != 0, there | (ag & !POS_MASK), ag), e)
}

/// From this many agents on, the soft step runs its per-agent work in separate loops the
/// compiler vectorises; below, in fused loops (fewer loop overheads per environment).
pub(super) const VECTOR_MIN_AGENTS: usize = 8;

/// Soft collisions (see the module docs): `DROP` for [`crate::engine::HoleRule::Drop`], `MARK`
/// to mark the agents' new cells on `Scratch::bits` for the `bytes` observation.
#[inline(always)]
pub(super) fn step_soft<const DROP: bool, const MARK: bool>(
    s: Step<'_>,
    agents: &mut [u32],
    events: &mut [u32],
    rewards: &mut [f32],
    sc: &mut Scratch,
) -> Tally {
    let k = agents.len();
    let Scratch { cells, acts, bits, soft, .. } = sc;
    let SoftArrays { here, target, class, there, ev, occ_at, count_at, stack } = &mut **soft;
    // Slices of exactly `k` (or `k + 1`) elements: their bounds tests fold away and the loops
    // vectorise.
    let acts = actions_of(s.actions, s.hash, k, acts);
    let (here, target, class) = (&mut here[..k], &mut target[..k], &mut class[..k]);
    let (occ_at, count_at, stack) = (&mut occ_at[..k], &mut count_at[..k], &mut stack[..k]);
    let (events, rewards, goals) = (&mut events[..k], &mut rewards[..k], &s.goals[..k]);
    there[0] = u32::MAX;
    ev[0] = event::MOVED;
    let cells = cells.as_mut_slice();
    let (mw, map_class) = (s.maps.mw as u32, s.maps.class);
    // Agent `a`'s spare cell, past the map: `spare + a`.
    let spare = s.ctx.maps.longest as u32;
    let vector = k >= VECTOR_MIN_AGENTS;

    // Targets, classes, events, and the cell words.
    if vector {
        for a in 0..k {
            let h = agents[a] & POS_MASK;
            here[a] = h;
            target[a] = h.wrapping_add(step_of(u32::from(acts[a]), mw));
        }
        for a in 0..k {
            class[a] = u32::from(map_class[target[a] as usize]);
        }
        let (there, ev) = (&mut there[1..=k], &mut ev[1..=k]);
        for a in 0..k {
            let st = start::<DROP>(agents[a], acts[a], here[a], target[a], class[a], spare + a as u32);
            (agents[a], ev[a], there[a], occ_at[a], count_at[a]) =
                (st.agent, st.ev, st.there, st.occ_at, st.count_at);
        }
        for a in 0..k {
            mark_cells(cells, a as u32 + 1, occ_at[a], count_at[a]);
        }
    } else {
        for a in 0..k {
            let h = agents[a] & POS_MASK;
            let t = h.wrapping_add(step_of(u32::from(acts[a]), mw));
            let st =
                start::<DROP>(agents[a], acts[a], h, t, u32::from(map_class[t as usize]), spare + a as u32);
            (here[a], agents[a], ev[a + 1], there[a + 1]) = (h, st.agent, st.ev, st.there);
            (occ_at[a], count_at[a]) = (st.occ_at, st.count_at);
            mark_cells(cells, a as u32 + 1, st.occ_at, st.count_at);
        }
    }
    // Contests, swaps, and moves into the cell of an agent that does not move.
    let mut len = 0;
    for a in 0..k {
        let (l_there, l_ev) = (there[a + 1], ev[a + 1]);
        // A mover's target, or the cell of one that does not move (which is then not blocked).
        let w = cells[l_there as usize];
        // The agent on the target (0, the sentinel, if nobody is there).
        let o = (w & OCC) as usize;
        let other = (ev[o] & event::MOVED == 0) | (there[o] == here[a]);
        let blocked = (l_ev & event::MOVED != 0) & ((w >> 8 & 0xff >= 2) | other);
        ev[a + 1] = l_ev | u32::from(blocked) << 1;
        stack[len] = a as u32 + 1;
        len += usize::from(blocked);
    }
    // Each agent that stays blocks the single mover (if any) that targets its cell.
    while len > 0 {
        len -= 1;
        let w = cells[here[stack[len] as usize - 1] as usize];
        if w >> 8 & 0xff == 1 {
            let m = (w >> MOVER_SHIFT) as usize;
            if ev[m] & event::BLOCKED == 0 {
                ev[m] |= event::BLOCKED;
                stack[len] = m as u32;
                len += 1;
            }
        }
    }
    // Moves, goals, events and rewards.
    let mut tally = Tally::default();
    let lut = s.ctx.lut;
    let (there, ev) = (&there[1..=k], &ev[1..=k]);
    if vector {
        for a in 0..k {
            (agents[a], events[a]) = moved(agents[a], ev[a], there[a]);
        }
        for a in 0..k {
            (agents[a], events[a]) = at_goal(agents[a], events[a], goals[a]);
        }
        for a in 0..k {
            tally.count(agents[a], events[a]);
        }
        for a in 0..k {
            rewards[a] = lut[(events[a] & 0xff) as usize];
        }
    } else {
        for a in 0..k {
            let (ag, e) = moved(agents[a], ev[a], there[a]);
            (agents[a], events[a], rewards[a]) = tally.finish(ag, e, goals[a], lut);
        }
    }
    if MARK {
        let bits = bits.as_mut_slice();
        for &ag in agents.iter() {
            if ag & AGENT_ACTIVE != 0 {
                bits[(ag & POS_MASK) as usize] = 1;
            }
        }
    }
    // Clearing the cell words: whole when the map is small for the agents (a few wide stores),
    // else the two words each agent touched.
    let map = s.maps.class.len();
    if map <= BULK_CLEAR_CELLS_PER_AGENT * k {
        cells[..map].fill(0);
        cells[spare as usize..spare as usize + k].fill(0);
    } else {
        for a in 0..k {
            cells[occ_at[a] as usize] = 0;
            cells[count_at[a] as usize] = 0;
        }
    }
    tally
}

/// A soft step clears its cell words all at once when the padded map has at most this many
/// cells per agent.
pub(super) const BULK_CLEAR_CELLS_PER_AGENT: usize = 16;
