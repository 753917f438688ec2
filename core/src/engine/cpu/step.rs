//! One environment's step ([`step_env`]): the collision rule of the configured mode, then goals,
//! rewards and the outcome.

use super::lanes::{Scratch, Step};
use super::soft::step_soft;
use super::strict::step_strict;
use super::{Actions, Ctx};
use crate::engine::config::{CollisionMode, HoleRule};
use crate::engine::hash::{env_seed, step_hash};
use crate::engine::records::{event, outcome, EnvInfo, NONE};
use crate::failure::FailureKind;
use crate::words::{unpack_dims, AGENT_ACTIVE};

/// Steps one environment; returns (terminated, truncated) and fills its rewards, events, info,
/// adding its rewards to the episode's return `ret`.
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
    ret: &mut f32,
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
    // The return, summed agent by agent as the GPU kernel sums it.
    *ret = rewards_k.iter().fold(*ret, |sum, &r| sum + r);
    *info = EnvInfo {
        episode_steps: env[1],
        outcome: out,
        failure_kind: kind,
        failure_agent: agent,
        instance: p as u32,
        generation: ctx.pool.generation[p],
        episode_return: *ret,
        agents_on_goal: tally.home,
    };
    (out == outcome::SUCCESS || out == outcome::FAILURE, out == outcome::TRUNCATED)
}
