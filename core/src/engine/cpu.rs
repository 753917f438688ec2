//! The CPU backend, the reference: one environment at a time per thread (rayon), with scratch
//! memory per thread and no allocation per step.
//!
//! # The step, exactly
//! For each environment, with its agents' current cells and actions (0 wait, 1 up, 2 down,
//! 3 left, 4 right):
//! 1. Each active agent's target is its cell moved by its action. A target off the grid sets
//!    `OFF_GRID`; a target on a hole sets `HOLE`.
//! 2. **Strict** (the paper's rules): the first failure in the verifier's order ends the episode
//!    as a failure and nobody moves: per agent in order `out_of_bounds` then `hole`; then swaps
//!    (lowest agent pair first); then shared cells (lowest pair first). Every agent in a conflict
//!    gets `CONFLICT`.
//! 3. **Soft** (standard multi-agent RL): a target off the grid becomes a wait; an agent whose
//!    target is a hole drops out (`HOLE`, inactive from then on, its cell freed), or with
//!    [`HoleRule::Block`] stays where it is (`HOLE`). Among the other
//!    movers: all movers that target the same cell stay, both movers of a swap stay, and then,
//!    until nothing changes, a mover whose target is the cell of an agent that stays also stays
//!    (`BLOCKED`). This fixed point does not depend on agent order, and the result has no shared
//!    cell and no swap; following and rotations of three or more agents are allowed.
//! 4. `AT_GOAL` for agents on their goals, `REACHED` for those that arrived in this step; the
//!    episode terminates when every active agent is on its goal (soft: a success only if nobody
//!    dropped out) or, in soft mode, when no agent is left; it is truncated at the episode limit.
//! 5. Rewards are [`RewardWeights::reward`] of each agent's events.
//! 6. An environment whose episode ended writes its final observation to `final_obs`, then
//!    resets in the same step to the pool instance `pool_pick(seed + env, episode + 1)`; `obs`
//!    holds the new episode's first observation.

use std::cell::RefCell;

use rayon::prelude::*;

use super::hash::{env_seed, pool_pick, random_action, step_hash};
use super::layout::{
    event, obs_stride, outcome, unpack_dims, unpack_rc, CollisionMode, EnvConfig, EnvInfo, HoleRule,
    AGENT_ACTIVE, NONE, OBS_CHANNELS, POS_MASK,
};
use super::pool::{EngineError, InstancePool};
use super::StepBuffers;
use crate::verify::FailureKind;

/// Environments handled by one rayon task.
const ENVS_PER_TASK: usize = 64;

/// Engine state: per environment 4 words (dims, step, episode, pool index) and per agent one
/// word (cell and active bit). Goals and holes are read from the pool.
#[derive(Debug, Clone)]
pub struct EnvState {
    pub env: Vec<[u32; 4]>,
    pub agents: Vec<u32>,
}

/// Where a step's actions come from.
#[derive(Debug, Clone, Copy)]
pub enum Actions<'a> {
    /// Caller actions, `B·K` codes 0..=4 (padding slots are ignored).
    Given(&'a [u8]),
    /// [`random_action`] of (seed + env, episode, step, agent): for benchmarks and tests.
    Random,
}

#[derive(Default)]
pub(crate) struct Scratch {
    /// Per cell: 1 + the agent on it (0 for none).
    occ: Vec<u16>,
    /// Per cell: how many movers target it; reused as "first agent to target it".
    count: Vec<u16>,
    /// Agents on the padded map of observations.
    bits: Vec<u8>,
    /// Per agent: current cell, target cell, active, moving, staying.
    cur: Vec<u32>,
    tgt: Vec<u32>,
    active: Vec<bool>,
    moving: Vec<bool>,
    stay: Vec<bool>,
    tgt_rc: Vec<u32>,
    /// Per cell: 1 + the last mover targeting it; the work list of agents that stay.
    tocc: Vec<u16>,
    stack: Vec<u16>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Shared read-only context of a step.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub pool: &'a InstancePool,
    pub cfg: &'a EnvConfig,
    pub k_max: usize,
    pub stride: usize,
    pub maps: &'a HoleMaps,
}

pub(crate) fn reset_env(ctx: Ctx<'_>, env: &mut [u32; 4], agents: &mut [u32], pool_index: u32, episode: u32) {
    let p = pool_index as usize;
    let dims = ctx.pool.dims[p];
    let k = unpack_dims(dims).2 as usize;
    *env = [dims, 0, episode, pool_index];
    for (a, slot) in agents.iter_mut().enumerate() {
        *slot = if a < k { ctx.pool.starts[p * ctx.k_max + a] | AGENT_ACTIVE } else { 0 };
    }
}

/// Writes one environment's local observations (`K · stride` bytes).
pub(crate) fn observe_env(ctx: Ctx<'_>, env: &[u32; 4], agents: &[u32], obs: &mut [u8], bits: &mut Vec<u8>) {
    // Constant window widths turn the row copies into fixed-size moves.
    match ctx.cfg.obs_radius {
        1 => observe_with::<3>(ctx, env, agents, obs, bits, 1),
        2 => observe_with::<5>(ctx, env, agents, obs, bits, 2),
        3 => observe_with::<7>(ctx, env, agents, obs, bits, 3),
        r => observe_with::<0>(ctx, env, agents, obs, bits, r),
    }
}

/// Copies one window row: `W` bytes when `W` is known at compile time, else `win`.
#[inline(always)]
fn copy_row<const W: usize>(dst: &mut [u8], src: &[u8], win: usize) {
    let n = if W > 0 { W } else { win };
    dst[..n].copy_from_slice(&src[..n]);
}

#[inline(always)]
fn observe_with<const W: usize>(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    radius: u32,
) {
    let k = unpack_dims(env[0]).2;
    // Inactive and padding slots are all zeros; active ones get their hole and agent planes
    // written in full below, so only the goal plane and the padding need clearing.
    let win0 = 2 * radius as usize + 1;
    for (a, o) in obs.chunks_exact_mut(ctx.stride).enumerate() {
        if a < k as usize && agents[a] & AGENT_ACTIVE != 0 {
            o[2 * win0 * win0..].fill(0);
        } else {
            o.fill(0);
        }
    }
    let p = env[3] as usize;
    let r = radius as usize;
    let win = 2 * r + 1;
    let plane = win * win;
    let (hmap, mw) = ctx.maps.instance(p);
    if amap.len() < hmap.len() {
        amap.resize(hmap.len(), 0);
    }
    // Agents on a padded byte map, like the holes; cleared again at the end.
    for &ag in &agents[..k as usize] {
        if ag & AGENT_ACTIVE != 0 {
            let (rr, cc) = unpack_rc(ag & POS_MASK);
            amap[(rr as usize + r) * mw + cc as usize + r] = 1;
        }
    }
    for a in 0..k as usize {
        let ag = agents[a];
        if ag & AGENT_ACTIVE == 0 {
            continue;
        }
        let (r0, c0) = unpack_rc(ag & POS_MASK);
        let (r0, c0) = (r0 as usize, c0 as usize);
        let o = &mut obs[a * ctx.stride..a * ctx.stride + OBS_CHANNELS * plane];
        let (holes_plane, rest) = o.split_at_mut(plane);
        let agents_plane = &mut rest[..plane];
        // The window's top-left in padded coordinates is (r0, c0); its rows are `mw` apart.
        let start = r0 * mw + c0;
        let span = (win - 1) * mw + win;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        let dst = holes_plane.chunks_exact_mut(win).zip(agents_plane.chunks_exact_mut(win));
        for ((dh, da), (sh, sa)) in dst.zip(hrows.chunks(mw).zip(arows.chunks(mw))) {
            copy_row::<W>(dh, sh, win);
            copy_row::<W>(da, sa, win);
        }
        o[plane + r * win + r] = 0;
        let (gr, gc) = unpack_rc(ctx.pool.goals[p * ctx.k_max + a]);
        let (gr, gc) = ((gr as usize + r).wrapping_sub(r0), (gc as usize + r).wrapping_sub(c0));
        if gr < win && gc < win {
            o[2 * plane + gr * win + gc] = 1;
        }
    }
    for &ag in &agents[..k as usize] {
        if ag & AGENT_ACTIVE != 0 {
            let (rr, cc) = unpack_rc(ag & POS_MASK);
            amap[(rr as usize + r) * mw + cc as usize + r] = 0;
        }
    }
}

/// Per pool instance, its holes as bytes on a grid padded by the observation radius on every side
/// (cells off the grid count as holes), so that each row of an observation window is one copy.
#[derive(Debug, Clone, Default)]
pub(crate) struct HoleMaps {
    bytes: Vec<u8>,
    /// Per instance: offset into `bytes` and padded width.
    index: Vec<(usize, usize)>,
}

impl HoleMaps {
    pub(crate) fn new(pool: &InstancePool, radius: u32) -> Self {
        let r = radius as usize;
        let mut maps = Self::default();
        for p in 0..pool.len() {
            let (w, h, _) = unpack_dims(pool.dims[p]);
            let (w, h) = (w as usize, h as usize);
            let mw = w + 2 * r;
            maps.index.push((maps.bytes.len(), mw));
            for pr in 0..h + 2 * r {
                for pc in 0..mw {
                    let inside = (r..r + h).contains(&pr) && (r..r + w).contains(&pc);
                    let hole = !inside || pool.is_hole(p, ((pr - r) * w + pc - r) as u32);
                    maps.bytes.push(u8::from(hole));
                }
            }
        }
        maps
    }

    /// The padded map of instance `p` and its width.
    #[inline]
    pub(crate) fn instance(&self, p: usize) -> (&[u8], usize) {
        let (off, mw) = self.index[p];
        let end = self.index.get(p + 1).map_or(self.bytes.len(), |&(o, _)| o);
        (&self.bytes[off..end], mw)
    }
}

/// Row and column steps of the actions 0 wait, 1 up, 2 down, 3 left, 4 right (−1 as a wrapping
/// `u32`).
const DROW: [u32; 5] = [0, u32::MAX, 1, 0, 0];
const DCOL: [u32; 5] = [0, 0, 0, u32::MAX, 1];

/// The cell index of a packed position.
#[inline]
fn cell_of(rc: u32, w: u32) -> u32 {
    let (r, c) = unpack_rc(rc);
    r * w + c
}

/// Steps one environment; returns (terminated, truncated) and fills its rewards, events, info.
#[allow(clippy::too_many_arguments)]
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
    let (w, h, k) = unpack_dims(env[0]);
    let k = k as usize;
    let p = env[3] as usize;
    let goals = &ctx.pool.goals[p * ctx.k_max..p * ctx.k_max + k];
    let cells = (w * h) as usize;
    if sc.occ.len() < cells + 1 {
        sc.occ.resize(cells + 1, 0);
        sc.count.resize(cells + 1, 0);
        sc.tocc.resize(cells + 1, 0);
    }
    let seed = env_seed(ctx.cfg.seed, e);
    let hash = step_hash(seed, env[2], env[1]);
    env[1] += 1;
    if sc.cur.len() < k {
        sc.cur.resize(k, 0);
        sc.tgt.resize(k, 0);
        sc.active.resize(k, false);
        sc.moving.resize(k, false);
        sc.stay.resize(k, false);
        sc.tgt_rc.resize(k, 0);
    }
    let Scratch { occ, count, cur, tgt, active, moving, stay, tgt_rc, tocc, stack, .. } = sc;
    let (cur, tgt, active, tgt_rc) = (&mut cur[..k], &mut tgt[..k], &mut active[..k], &mut tgt_rc[..k]);
    let holes = &ctx.pool.holes[p * ctx.pool.words..(p + 1) * ctx.pool.words];
    for a in 0..k {
        let ag = agents[a];
        let (r, c) = unpack_rc(ag & POS_MASK);
        let cell = r * w + c;
        cur[a] = cell;
        active[a] = ag & AGENT_ACTIVE != 0;
        if !active[a] {
            tgt[a] = cell;
            tgt_rc[a] = ag & POS_MASK;
            events[a] = event::INACTIVE;
            continue;
        }
        let act = match actions {
            Actions::Given(acts) => acts[a],
            Actions::Random => random_action(hash, a as u32),
        } as usize;
        // Branch-free: a move off the grid wraps to a huge row or column and fails the test.
        let (nr, nc) = (r.wrapping_add(DROW[act]), c.wrapping_add(DCOL[act]));
        let on = (nr < h) & (nc < w);
        let (nr, nc) = if on { (nr, nc) } else { (r, c) };
        let t = nr * w + nc;
        let hole = (holes[(t / 32) as usize] >> (t % 32)) & 1;
        tgt[a] = t;
        tgt_rc[a] = (nr << 12) | nc;
        events[a] = (u32::from(!on) * event::OFF_GRID) | (hole * event::HOLE);
    }
    for ev in &mut events[k..] {
        *ev = event::INACTIVE;
    }
    let mut failure: Option<(FailureKind, usize)> = None;
    match ctx.cfg.mode {
        CollisionMode::Strict => {
            for (a, &ev) in events[..k].iter().enumerate() {
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
                failure = strict_conflicts(cur, tgt, active, events, occ, count);
            }
            if failure.is_none() {
                for a in (0..k).filter(|&a| active[a] && tgt[a] != cur[a]) {
                    events[a] |= event::MOVED;
                    agents[a] = tgt_rc[a] | AGENT_ACTIVE;
                }
            }
        }
        CollisionMode::Soft => {
            if ctx.cfg.holes == HoleRule::Block {
                for a in 0..k {
                    let hole = events[a] & event::HOLE != 0;
                    tgt[a] = if hole { cur[a] } else { tgt[a] };
                }
            } else {
                for a in 0..k {
                    if events[a] & event::HOLE != 0 {
                        active[a] = false;
                        agents[a] = tgt_rc[a];
                    }
                }
            }
            let lanes = Lanes { cur, tgt, tgt_rc, active, moving: &mut moving[..k], stay: &mut stay[..k] };
            soft_resolve(lanes, agents, events, occ, count, tocc, stack);
        }
    }
    // Goals, outcome, rewards.
    let (mut all_home, mut any_active, mut dropped) = (true, false, None);
    let weights = &ctx.cfg.rewards;
    for a in 0..k {
        let ag = agents[a];
        if ag & AGENT_ACTIVE == 0 {
            dropped = dropped.or(Some(a));
            events[a] |= event::INACTIVE;
        } else {
            any_active = true;
            let home = ag & POS_MASK == goals[a];
            let reached = home & (cur[a] != cell_of(goals[a], w));
            events[a] |= (u32::from(home) * event::AT_GOAL) | (u32::from(reached) * event::REACHED);
            all_home &= home;
        }
        rewards[a] = weights.reward(events[a]);
    }
    rewards[k..].fill(0.0);
    let (kind, agent, out) = if let Some((kind, a)) = failure {
        (kind as u32, a as u32, outcome::FAILURE)
    } else if !any_active || all_home {
        match dropped {
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

/// Strict conflicts: flags every agent in a swap or shared cell and returns the first in the
/// verifier's order (swaps before shared cells, lowest pair first, reported for its lower agent).
fn strict_conflicts(
    cur: &[u32],
    tgt: &[u32],
    active: &[bool],
    events: &mut [u32],
    occ: &mut [u16],
    count: &mut [u16],
) -> Option<(FailureKind, usize)> {
    let k = cur.len();
    for a in (0..k).filter(|&a| active[a]) {
        occ[cur[a] as usize] = a as u16 + 1;
    }
    let mut edge: Option<usize> = None;
    for a in (0..k).filter(|&a| active[a] && tgt[a] != cur[a]) {
        let b = occ[tgt[a] as usize];
        if b != 0 && tgt[b as usize - 1] == cur[a] {
            events[a] |= event::CONFLICT;
            edge = edge.or(Some(a));
        }
    }
    // Vertex: `count` holds 1 + the first agent targeting each cell.
    let mut vertex: Option<(usize, usize)> = None;
    for b in (0..k).filter(|&b| active[b]) {
        let t = tgt[b] as usize;
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
    for a in 0..k {
        occ[cur[a] as usize] = 0;
        count[tgt[a] as usize] = 0;
    }
    edge.map(|a| (FailureKind::EdgeConflict, a)).or(vertex.map(|(a, _)| (FailureKind::VertexConflict, a)))
}

/// Per-agent working arrays of one environment's step.
struct Lanes<'a> {
    cur: &'a [u32],
    tgt: &'a mut [u32],
    tgt_rc: &'a [u32],
    active: &'a [bool],
    moving: &'a mut [bool],
    stay: &'a mut [bool],
}

/// Soft collisions (see the module docs), then the moves: blocked movers stay, the others move.
/// Written without data-dependent branches in the passes over all agents (random actions make
/// such branches unpredictable); non-movers count into a spare cell past the grid.
fn soft_resolve(
    lanes: Lanes<'_>,
    agents: &mut [u32],
    events: &mut [u32],
    occ: &mut [u16],
    count: &mut [u16],
    tocc: &mut [u16],
    stack: &mut Vec<u16>,
) {
    let Lanes { cur, tgt, tgt_rc, active, moving, stay } = lanes;
    let k = cur.len();
    let spare = occ.len() - 1;
    for a in 0..k {
        let m = active[a] & (tgt[a] != cur[a]);
        moving[a] = m;
        stay[a] = false;
        if active[a] {
            occ[cur[a] as usize] = a as u16 + 1;
        }
        let t = if m { tgt[a] as usize } else { spare };
        count[t] += 1;
        tocc[t] = a as u16 + 1;
    }
    // Contests, swaps, and moves into the cell of an agent that does not move.
    stack.clear();
    stack.resize(k, 0);
    let mut len = 0;
    for a in 0..k {
        let t = tgt[a] as usize;
        let b = occ[t] as usize;
        // `b` is 0 (nobody there) or 1 + the agent on the target; for non-movers the target is
        // their own cell, and `moving[a]` masks them out.
        let bi = b.saturating_sub(1);
        let other = (b != 0) & (bi != a) & (!moving[bi] | (tgt[bi] == cur[a]));
        let blocked = moving[a] & ((count[t] >= 2) | other);
        stay[a] = blocked;
        stack[len] = a as u16;
        len += usize::from(blocked);
    }
    stack.truncate(len);
    // Each agent that stays blocks the single mover (if any) that targets its cell.
    while let Some(s) = stack.pop() {
        let cell = cur[s as usize] as usize;
        if count[cell] == 1 {
            let m = tocc[cell] as usize - 1;
            if !stay[m] {
                stay[m] = true;
                stack.push(m as u16);
            }
        }
    }
    count[spare] = 0;
    tocc[spare] = 0;
    for a in 0..k {
        occ[cur[a] as usize] = 0;
        let t = tgt[a] as usize;
        count[t] = 0;
        tocc[t] = 0;
        let (s, moved) = (stay[a], moving[a] & !stay[a]);
        tgt[a] = if s { cur[a] } else { tgt[a] };
        events[a] |= (u32::from(s) * event::BLOCKED) | (u32::from(moved) * event::MOVED);
        agents[a] = if moved { tgt_rc[a] | AGENT_ACTIVE } else { agents[a] };
    }
}

/// The CPU batch of environments.
#[derive(Debug)]
pub struct CpuEngine {
    pub(crate) cfg: EnvConfig,
    pub(crate) pool: std::sync::Arc<InstancePool>,
    pub(crate) state: EnvState,
    maps: HoleMaps,
}

impl CpuEngine {
    /// A batch playing instances from `pool`.
    ///
    /// # Errors
    /// Zero environments.
    pub fn new(cfg: EnvConfig, pool: std::sync::Arc<InstancePool>) -> Result<Self, EngineError> {
        if cfg.num_envs == 0 || cfg.num_envs > u32::MAX as usize {
            return Err(EngineError::Invalid(format!("num_envs {} is out of range", cfg.num_envs)));
        }
        if cfg.episode_limit == 0 {
            return Err(EngineError::Invalid("episode_limit must be at least 1".into()));
        }
        let k = pool.max_agents;
        let state = EnvState { env: vec![[0; 4]; cfg.num_envs], agents: vec![0; cfg.num_envs * k] };
        let maps = HoleMaps::new(&pool, cfg.obs_radius);
        Ok(Self { cfg, pool, state, maps })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &EnvConfig {
        &self.cfg
    }

    /// The instance pool.
    #[must_use]
    pub fn pool(&self) -> &InstancePool {
        &self.pool
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> &EnvState {
        &self.state
    }

    fn split(&mut self) -> (Ctx<'_>, &mut EnvState) {
        let ctx = Ctx {
            pool: &self.pool,
            cfg: &self.cfg,
            k_max: self.pool.max_agents,
            stride: obs_stride(self.cfg.obs_radius),
            maps: &self.maps,
        };
        (ctx, &mut self.state)
    }

    /// Starts a new episode in every environment (episode 0, instance
    /// `pool_pick(seed + env, 0)`) and writes the first observations.
    ///
    /// # Errors
    /// Output buffers of the wrong size.
    pub fn reset(&mut self, seed: u64, out: &mut StepBuffers) -> Result<(), EngineError> {
        out.check(&self.cfg, self.pool.max_agents)?;
        self.cfg.seed = seed;
        let (ctx, state) = self.split();
        let k = ctx.k_max;
        let len = ctx.pool.len() as u32;
        state
            .env
            .par_chunks_mut(ENVS_PER_TASK)
            .zip(state.agents.par_chunks_mut(ENVS_PER_TASK * k))
            .zip(out.obs.par_chunks_mut(ENVS_PER_TASK * k * ctx.stride))
            .enumerate()
            .for_each(|(chunk, ((envs, agents), obs))| {
                SCRATCH.with_borrow_mut(|sc| {
                    for (i, env) in envs.iter_mut().enumerate() {
                        let e = (chunk * ENVS_PER_TASK + i) as u32;
                        let ag = &mut agents[i * k..(i + 1) * k];
                        reset_env(ctx, env, ag, pool_pick(env_seed(seed, e), 0, len), 0);
                        observe_env(
                            ctx,
                            env,
                            ag,
                            &mut obs[i * k * ctx.stride..(i + 1) * k * ctx.stride],
                            &mut sc.bits,
                        );
                    }
                });
            });
        Ok(())
    }

    /// Resets one environment to a given pool instance (to replay an exact level) and rewrites its
    /// observation. The episode counter goes on.
    ///
    /// # Errors
    /// An environment or pool index out of range, or buffers of the wrong size.
    pub fn reset_to(
        &mut self,
        env: usize,
        pool_index: u32,
        out: &mut StepBuffers,
    ) -> Result<(), EngineError> {
        out.check(&self.cfg, self.pool.max_agents)?;
        if env >= self.cfg.num_envs || pool_index as usize >= self.pool.len() {
            return Err(EngineError::Invalid(format!(
                "reset_to(env {env}, instance {pool_index}): {} environments, {} instances",
                self.cfg.num_envs,
                self.pool.len()
            )));
        }
        let (ctx, state) = self.split();
        let k = ctx.k_max;
        let episode = state.env[env][2];
        let ag = &mut state.agents[env * k..(env + 1) * k];
        reset_env(ctx, &mut state.env[env], ag, pool_index, episode);
        SCRATCH.with_borrow_mut(|sc| {
            observe_env(
                ctx,
                &state.env[env],
                ag,
                &mut out.obs[env * k * ctx.stride..(env + 1) * k * ctx.stride],
                &mut sc.bits,
            );
        });
        Ok(())
    }

    /// One step of every environment with the caller's actions (`B·K` codes 0..=4).
    ///
    /// # Errors
    /// Wrong buffer sizes or an action code above 4.
    pub fn step(&mut self, actions: &[u8], out: &mut StepBuffers) -> Result<(), EngineError> {
        let k = self.pool.max_agents;
        if actions.len() != self.cfg.num_envs * k {
            return Err(EngineError::BufferSize {
                what: "actions",
                expected: self.cfg.num_envs * k,
                got: actions.len(),
            });
        }
        if let Some(i) = actions.iter().position(|&a| a > 4) {
            return Err(EngineError::Invalid(format!("action {} at index {i} is not 0..=4", actions[i])));
        }
        self.run_step(Actions::Given(actions), out)
    }

    /// One step of every environment with random actions (see [`Actions::Random`]).
    ///
    /// # Errors
    /// Wrong buffer sizes.
    pub fn step_random(&mut self, out: &mut StepBuffers) -> Result<(), EngineError> {
        self.run_step(Actions::Random, out)
    }

    fn run_step(&mut self, actions: Actions<'_>, out: &mut StepBuffers) -> Result<(), EngineError> {
        out.check(&self.cfg, self.pool.max_agents)?;
        let (ctx, state) = self.split();
        let (k, stride) = (ctx.k_max, ctx.stride);
        let len = ctx.pool.len() as u32;
        let per = ENVS_PER_TASK;
        state
            .env
            .par_chunks_mut(per)
            .zip(state.agents.par_chunks_mut(per * k))
            .zip(out.obs.par_chunks_mut(per * k * stride))
            .zip(out.final_obs.par_chunks_mut(per * k * stride))
            .zip(out.rewards.par_chunks_mut(per * k))
            .zip(out.events.par_chunks_mut(per * k))
            .zip(out.terminated.par_chunks_mut(per))
            .zip(out.truncated.par_chunks_mut(per))
            .zip(out.info.par_chunks_mut(per))
            .enumerate()
            .for_each(|(chunk, ((((((((envs, agents), obs), fin), rew), ev), term), trunc), info))| {
                SCRATCH.with_borrow_mut(|sc| {
                    for (i, env) in envs.iter_mut().enumerate() {
                        let e = (chunk * per + i) as u32;
                        let ag = &mut agents[i * k..(i + 1) * k];
                        let acts = match actions {
                            Actions::Given(a) => Actions::Given(&a[e as usize * k..(e as usize + 1) * k]),
                            Actions::Random => Actions::Random,
                        };
                        let (done_t, done_u) = step_env(
                            ctx,
                            e,
                            env,
                            ag,
                            acts,
                            &mut rew[i * k..(i + 1) * k],
                            &mut ev[i * k..(i + 1) * k],
                            &mut info[i],
                            sc,
                        );
                        term[i] = u8::from(done_t);
                        trunc[i] = u8::from(done_u);
                        let o = i * k * stride..(i + 1) * k * stride;
                        if done_t || done_u {
                            observe_env(ctx, env, ag, &mut fin[o.clone()], &mut sc.bits);
                            let episode = env[2] + 1;
                            reset_env(
                                ctx,
                                env,
                                ag,
                                pool_pick(env_seed(ctx.cfg.seed, e), episode, len),
                                episode,
                            );
                        }
                        observe_env(ctx, env, ag, &mut obs[o], &mut sc.bits);
                    }
                });
            });
        Ok(())
    }

    /// The global state of every environment: `B × 3 × S × S` bytes (S the pool's largest side),
    /// channel 0 holes (1) and cells outside the environment's grid (2), channel 1 agent
    /// index + 1 on its cell, channel 2 agent index + 1 on its goal.
    ///
    /// # Errors
    /// A buffer of the wrong size.
    pub fn global_state(&self, out: &mut [u8]) -> Result<(), EngineError> {
        global_state(&self.pool, &self.state, out)
    }
}

/// See [`CpuEngine::global_state`]; shared with the GPU backend (over its read-back state).
pub(crate) fn global_state(pool: &InstancePool, state: &EnvState, out: &mut [u8]) -> Result<(), EngineError> {
    let s = pool.max_side() as usize;
    let k_max = pool.max_agents;
    let per_env = 3 * s * s;
    if out.len() != state.env.len() * per_env {
        return Err(EngineError::BufferSize {
            what: "global state",
            expected: state.env.len() * per_env,
            got: out.len(),
        });
    }
    out.par_chunks_mut(per_env).enumerate().for_each(|(e, o)| {
        let env = state.env[e];
        let (w, h, k) = unpack_dims(env[0]);
        let p = env[3] as usize;
        for r in 0..s {
            for c in 0..s {
                o[r * s + c] = if r >= h as usize || c >= w as usize {
                    2
                } else {
                    u8::from(pool.is_hole(p, r as u32 * w + c as u32))
                };
                o[s * s + r * s + c] = 0;
                o[2 * s * s + r * s + c] = 0;
            }
        }
        for a in 0..k as usize {
            let ag = state.agents[e * k_max + a];
            let id = (a + 1).min(255) as u8;
            let (gr, gc) = unpack_rc(pool.goals[p * k_max + a]);
            o[2 * s * s + gr as usize * s + gc as usize] = id;
            if ag & AGENT_ACTIVE != 0 {
                let (r, c) = unpack_rc(ag & POS_MASK);
                o[s * s + r as usize * s + c as usize] = id;
            }
        }
    });
    Ok(())
}
