//! The strict step: the first failure in the verifier's order ends the episode and nobody moves.
//! Failures are judged by the rules' own functions ([`agent_fault`], [`judge_conflicts`]), as in
//! the verifiers.

use super::lanes::{actions_of, Lane, Scratch, Step, Tally};
use super::maps::{cell_steps, Target, FREE, HOLE, OFF};
use crate::engine::records::event;
use crate::failure::FailureKind;
use crate::rules::{agent_fault, judge_conflicts, StepConflict};
use crate::words::{AGENT_ACTIVE, POS_MASK};

/// The strict step: the first failure in the verifier's order ends the episode and nobody moves.
#[inline(always)]
pub(super) fn step_strict(
    s: Step<'_>,
    agents: &mut [u32],
    events: &mut [u32],
    rewards: &mut [f32],
    sc: &mut Scratch,
) -> (Option<(FailureKind, usize)>, Tally) {
    let k = agents.len();
    let Scratch { lanes, occ, acts, bits, classes, .. } = sc;
    let bits = bits.as_mut_slice();
    let (lanes, acts) = (&mut lanes[..k], actions_of(s.actions, s.hash, k, acts));
    let classes = &mut classes[..k];
    let steps = cell_steps(s.maps.mw);
    for a in 0..k {
        let ag = agents[a];
        let act = acts[a] as usize & 7;
        let Target { here, there, class } = s.maps.target(&steps, ag, act);
        let active = ag & AGENT_ACTIVE != 0;
        let moving = active & (act != 0) & (class == FREE);
        let to = if class == FREE { there } else { here } as u32;
        lanes[a] = Lane { here: here as u32, there: to, ev: u8::from(moving) };
        classes[a] = class;
        events[a] = match (active, class) {
            (false, _) => event::INACTIVE,
            (true, OFF) => event::OFF_GRID,
            (true, HOLE) => event::HOLE,
            (true, _) => 0,
        };
    }
    // Strict agents never drop out, so every one of the `k` is active.
    debug_assert!(agents.iter().all(|&ag| ag & AGENT_ACTIVE != 0));
    let mut failure = classes
        .iter()
        .enumerate()
        .find_map(|(a, &class)| agent_fault(class == OFF, false, class == HOLE).map(|kind| (kind, a)));
    if failure.is_none() {
        let judged = judge_conflicts(
            k,
            |a| (lanes[a].here, lanes[a].there),
            occ,
            |a| {
                events[a] |= event::CONFLICT;
            },
        );
        failure = judged.first().map(|(conflict, a, _)| match conflict {
            StepConflict::Swap => (FailureKind::EdgeConflict, a),
            StepConflict::Shared => (FailureKind::VertexConflict, a),
        });
    }
    let moves = failure.is_none();
    for (a, l) in lanes.iter().enumerate() {
        if moves && l.moving() {
            events[a] |= event::MOVED;
            agents[a] = l.there | (agents[a] & !POS_MASK);
        }
        if s.ctx.marks & (agents[a] & AGENT_ACTIVE != 0) {
            bits[if moves && l.moving() { l.there } else { l.here } as usize] = 1;
        }
    }
    let mut tally = Tally::default();
    for a in 0..k {
        (agents[a], events[a], rewards[a]) = tally.finish(agents[a], events[a], s.goals[a], s.ctx.lut);
    }
    (failure, tally)
}
