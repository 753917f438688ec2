//! One environment's step ([`step_env`]): the collision rule of the configured mode, then goals,
//! rewards and the outcome.

use super::lanes::Scratch;
use super::maps::Maps;
use super::soft::step_soft;
use super::strict::step_strict;
use super::{Actions, Ctx};
use crate::engine::config::{CollisionMode, HoleRule};
use crate::engine::hash::{env_seed, step_hash};
use crate::engine::records::{event, outcome, EnvInfo, NONE};
use crate::failure::FailureKind;
use crate::words::{unpack_dims, AGENT_ACTIVE, POS_MASK};

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
    /// counts the agent in, and returns its events and reward.
    #[inline(always)]
    pub(super) fn finish(&mut self, ag: u32, ev: u32, goal: u32, lut: &[f32; 256]) -> (u32, f32) {
        let ev = at_goal(ag, ev, goal);
        self.count(ag, ev);
        (ev, lut[(ev & 0xff) as usize])
    }
}

/// `AT_GOAL` and `REACHED` for an agent with word `ag` (after its move) on goal `goal` and events
/// `ev` so far: the events with them added.
#[inline(always)]
pub(super) fn at_goal(ag: u32, ev: u32, goal: u32) -> u32 {
    let active = ag >> 31;
    let home = active & u32::from(ag & POS_MASK == goal);
    // Arriving is being home after a move (starts and goals differ); `MOVED` is bit 0.
    const { assert!(event::MOVED == 1 && AGENT_ACTIVE == 1 << 31) };
    let reached = home & ev;
    ev | (home << event::AT_GOAL.trailing_zeros()) | (reached << event::REACHED.trailing_zeros())
}

/// Steps one environment; returns (terminated, truncated) and fills its rewards, events, info.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn step_env(
    ctx: Ctx<'_>,
    e: u32,
    env: &mut [u32; 4],
    agents: &mut [u32],
    actions: Actions<'_>,
    rewards: &mut [f32],
    events: &mut [u32],
    info: &mut EnvInfo,
    sc: &mut Scratch,
) -> (bool, bool) {
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let goals = &ctx.maps.goals[p * ctx.k_max..p * ctx.k_max + k];
    let maps = ctx.maps.step_maps(p);
    let hash = step_hash(env_seed(ctx.seed, e), env[2], env[1]);
    env[1] += 1;
    sc.fit(ctx.maps.longest + k, k);
    let (agents_k, agents_pad) = agents.split_at_mut(k);
    let (events_k, events_pad) = events.split_at_mut(k);
    let (rewards_k, rewards_pad) = rewards.split_at_mut(k);
    if !events_pad.is_empty() {
        events_pad.fill(event::INACTIVE);
        rewards_pad.fill(0.0);
    }
    debug_assert!(agents_pad.iter().all(|&a| a == 0));
    let step = Step { ctx, maps, goals, actions, hash };
    let (failure, tally) = match ctx.cfg.mode {
        CollisionMode::Soft => (
            None,
            match (ctx.cfg.holes == HoleRule::Drop, ctx.marks) {
                (true, true) => step_soft::<true, true>(step, agents_k, events_k, rewards_k, sc),
                (true, false) => step_soft::<true, false>(step, agents_k, events_k, rewards_k, sc),
                (false, true) => step_soft::<false, true>(step, agents_k, events_k, rewards_k, sc),
                (false, false) => step_soft::<false, false>(step, agents_k, events_k, rewards_k, sc),
            },
        ),
        CollisionMode::Strict => step_strict(step, agents_k, events_k, rewards_k, sc),
    };
    let (kind, agent, out) = if let Some((kind, a)) = failure {
        (kind as u32, a as u32, outcome::FAILURE)
    } else if tally.home == tally.active {
        // Every agent still in is home (or none is left): a success unless one dropped out.
        match agents_k.iter().position(|&ag| ag & AGENT_ACTIVE == 0) {
            Some(a) => (FailureKind::Hole as u32, a as u32, outcome::FAILURE),
            None => (0, NONE, outcome::SUCCESS),
        }
    } else if env[1] >= ctx.cfg.episode_limit {
        (0, NONE, outcome::TRUNCATED)
    } else {
        (0, NONE, outcome::RUNNING)
    };
    *info = EnvInfo { episode_steps: env[1], outcome: out, failure_kind: kind, failure_agent: agent };
    (out == outcome::SUCCESS || out == outcome::FAILURE, out == outcome::TRUNCATED)
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
