//! The strict step: the first failure in the verifier's order ends the episode and nobody moves.

use super::lanes::{actions_of, Lane, Scratch};
use super::maps::{cell_steps, Target, FREE, HOLE, OFF};
use super::step::{Step, Tally};
use crate::engine::layout::{event, AGENT_ACTIVE};
use crate::verify::FailureKind;

/// The strict step: the first failure in the verifier's order ends the episode and nobody moves.
pub(super) fn step_strict(
    s: Step<'_>,
    agents: &mut [u32],
    events: &mut [u32],
    rewards: &mut [f32],
    sc: &mut Scratch,
) -> (Option<(FailureKind, usize)>, Tally) {
    let k = agents.len();
    let Scratch { lanes, occ, count, acts, bits, .. } = sc;
    let (occ, count, bits) = (occ.as_mut_slice(), count.as_mut_slice(), bits.as_mut_slice());
    let (lanes, acts) = (&mut lanes[..k], actions_of(s.actions, s.hash, k, acts));
    let steps = cell_steps(s.maps.mw);
    for a in 0..k {
        let ag = agents[a];
        let act = acts[a] as usize & 7;
        let Target { here, there, class } = s.maps.target(&steps, ag, act);
        let active = ag & AGENT_ACTIVE != 0;
        let moving = active & (act != 0) & (class == FREE);
        let to = if class == FREE { there } else { here } as u32;
        lanes[a] = Lane { here: here as u32, there: to, ev: u8::from(moving) };
        events[a] = match (active, class) {
            (false, _) => event::INACTIVE,
            (true, OFF) => event::OFF_GRID,
            (true, HOLE) => event::HOLE,
            (true, _) => 0,
        };
    }
    let mut failure = None;
    for (a, &ev) in events.iter().enumerate() {
        if ev & event::OFF_GRID != 0 {
            failure = Some((FailureKind::OutOfBounds, a));
            break;
        }
        if ev & event::HOLE != 0 {
            failure = Some((FailureKind::Hole, a));
            break;
        }
    }
    if failure.is_none() {
        failure = strict_conflicts(agents, lanes, events, occ, count);
    }
    let moves = failure.is_none();
    for (a, l) in lanes.iter().enumerate() {
        if moves && l.moving() {
            events[a] |= event::MOVED;
            agents[a] = l.there | AGENT_ACTIVE;
        }
        if agents[a] & AGENT_ACTIVE != 0 {
            bits[if moves && l.moving() { l.there } else { l.here } as usize] = 1;
        }
    }
    let mut tally = Tally::default();
    for a in 0..k {
        (events[a], rewards[a]) = tally.finish(agents[a], events[a], s.goals[a], s.ctx.lut);
    }
    (failure, tally)
}

/// Strict conflicts: flags every agent in a swap or shared cell and returns the first in the
/// verifier's order (swaps before shared cells, lowest pair first, reported for its lower agent).
pub(super) fn strict_conflicts(
    agents: &[u32],
    lanes: &[Lane],
    events: &mut [u32],
    occ: &mut [u16],
    count: &mut [u16],
) -> Option<(FailureKind, usize)> {
    let k = lanes.len();
    let active = |a: usize| agents[a] & AGENT_ACTIVE != 0;
    for a in (0..k).filter(|&a| active(a)) {
        occ[lanes[a].here as usize] = a as u16 + 1;
    }
    let mut edge: Option<usize> = None;
    for a in (0..k).filter(|&a| lanes[a].moving()) {
        let b = occ[lanes[a].there as usize];
        if b != 0 && lanes[b as usize - 1].there == lanes[a].here {
            events[a] |= event::CONFLICT;
            edge = edge.or(Some(a));
        }
    }
    // Vertex: `count` holds 1 + the first agent targeting each cell.
    let mut vertex: Option<(usize, usize)> = None;
    for b in (0..k).filter(|&b| active(b)) {
        let t = lanes[b].there as usize;
        let first = count[t];
        if first == 0 {
            count[t] = b as u16 + 1;
        } else {
            let a = first as usize - 1;
            events[a] |= event::CONFLICT;
            events[b] |= event::CONFLICT;
            if vertex.is_none_or(|v| (a, b) < v) {
                vertex = Some((a, b));
            }
        }
    }
    for l in lanes {
        occ[l.here as usize] = 0;
        count[l.there as usize] = 0;
    }
    edge.map(|a| (FailureKind::EdgeConflict, a)).or(vertex.map(|(a, _)| (FailureKind::VertexConflict, a)))
}
