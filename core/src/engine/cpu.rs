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
//! 5. Rewards are [`RewardWeights::reward`] of each agent's events (looked up in a table of all
//!    256 event bytes, made once per engine).
//! 6. An environment whose episode ended writes its final observation to `final_obs`, then
//!    resets in the same step to the pool instance `pool_pick(seed + env, episode + 1)`; `obs`
//!    holds the new episode's first observation.
//!
//! The engine's agent words hold cell indices into per-instance maps padded by a border of cells
//! off the grid ([`HoleMaps`]), so a move's target, its class (free, hole, off the grid) and an
//! observation window's rows are each one add and one load, with no bounds arithmetic, and a goal
//! is placed in a window by one table lookup; [`CpuEngine::state`] converts them back to the
//! packed rows and columns of the GPU backend's state.

use std::cell::RefCell;
use std::hint::select_unpredictable;

use rayon::prelude::*;

use super::hash::{env_seed, pool_pick, random_action, step_hash};
use super::layout::{
    event, obs_stride, outcome, pack_rc, unpack_dims, unpack_rc, CollisionMode, EnvConfig, EnvInfo, HoleRule,
    AGENT_ACTIVE, NONE, OBS_CHANNELS, POS_MASK,
};
use super::pool::{EngineError, InstancePool};
use super::{checks, BufferSizes, Engine, EnvState, RawState, StepBuffersMut};
use crate::verify::FailureKind;

/// Environments handled by one rayon task.
const ENVS_PER_TASK: usize = 64;

/// Where a step's actions come from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Actions<'a> {
    /// Caller actions, `K` codes 0..=4 per environment (padding slots are ignored).
    Given(&'a [u8]),
    /// [`random_action`] of (seed + env, episode, step, agent): benchmarks and tests only
    /// (feature `testing`).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    Random,
}

#[derive(Default)]
pub(crate) struct Scratch {
    /// Soft steps, per padded cell and then one spare cell per agent: see [`OCC`].
    cells: Vec<u32>,
    /// Strict steps, per padded cell: 1 + the agent on it, and 1 + the first agent to target it.
    occ: Vec<u16>,
    count: Vec<u16>,
    /// Active agents on the padded map of observations (1 on their cells): a step marks them at
    /// their new cells for the observation that follows, which clears them again.
    bits: Vec<u8>,
    /// Per agent.
    lanes: Vec<Lane>,
    /// The work list of agents that stay.
    stack: Vec<u16>,
    /// Random actions.
    acts: Vec<u8>,
}

impl Scratch {
    /// Grows the arrays to `cells` cells and `k` agents.
    fn fit(&mut self, cells: usize, k: usize) {
        if self.cells.len() < cells {
            self.cells.resize(cells, 0);
            self.bits.resize(cells, 0);
            self.occ.resize(cells, 0);
            self.count.resize(cells, 0);
        }
        if self.lanes.len() <= k {
            self.lanes.resize(k + 1, Lane::default());
            self.stack.resize(k, 0);
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Shared read-only context of a step.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub pool: &'a InstancePool,
    pub cfg: &'a EnvConfig,
    /// The seed of the last reset.
    pub seed: u64,
    pub k_max: usize,
    pub stride: usize,
    pub maps: &'a HoleMaps,
    /// The reward of every event byte.
    pub lut: &'a [f32; 256],
}

pub(crate) fn reset_env(ctx: Ctx<'_>, env: &mut [u32; 4], agents: &mut [u32], pool_index: u32, episode: u32) {
    let p = pool_index as usize;
    let dims = ctx.pool.dims[p];
    let k = unpack_dims(dims).2 as usize;
    *env = [dims, 0, episode, pool_index];
    for (a, slot) in agents.iter_mut().enumerate() {
        *slot = if a < k { ctx.maps.starts[p * ctx.k_max + a] | AGENT_ACTIVE } else { 0 };
    }
}

/// Writes one environment's local observations (`K · stride` bytes).
///
/// `marked`: the step before left every active agent marked on `bits` (see [`Scratch::bits`]);
/// otherwise they are marked here. Either way they are cleared again.
pub(crate) fn observe_env(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    bits: &mut Vec<u8>,
    marked: bool,
) {
    // Constant window widths turn the row copies into fixed-size moves.
    match ctx.cfg.obs_radius {
        1 => observe_rows::<3, { obs_stride(1) }>(ctx, env, agents, obs, bits, marked),
        2 => observe_rows::<5, { obs_stride(2) }>(ctx, env, agents, obs, bits, marked),
        3 => observe_rows::<7, { obs_stride(3) }>(ctx, env, agents, obs, bits, marked),
        r => observe_with(ctx, env, agents, obs, bits, r, marked),
    }
}

/// Marks (`on`) or clears the active agents of one environment on a padded byte map.
#[inline(always)]
fn mark_agents(amap: &mut [u8], agents: &[u32], on: u8) {
    for &ag in agents {
        if ag & AGENT_ACTIVE != 0 {
            amap[(ag & POS_MASK) as usize] = on;
        }
    }
}

/// Observations for window widths `W` of 3, 5 and 7 (stride `S`): every window row is one
/// unaligned 8-byte copy from a padded map. The rows
/// are written in order, so the bytes each copy writes past its row are overwritten by the next
/// row or plane, and the goal plane, written last, runs to the end of the stride.
#[inline(always)]
fn observe_rows<const W: usize, const S: usize>(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    marked: bool,
) {
    const { assert!(W >= 3 && W <= 8 && S >= 3 * W * W) };
    let (r, plane) = (W / 2, W * W);
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let (hmap, mw) = (maps.obs, maps.mw.min(1 << 16));
    if amap.len() < hmap.len() {
        amap.resize(hmap.len(), 0);
    }
    let amap = amap.as_mut_slice();
    let agents = &agents[..k];
    let goals = &ctx.maps.goals[p * ctx.k_max..p * ctx.k_max + k];
    if !marked {
        mark_agents(amap, agents, 1);
    }
    let (used, padding) = obs.split_at_mut(k * S);
    padding.fill(0);
    for ((o, &ag), &goal) in used.chunks_exact_mut(S).zip(agents).zip(goals) {
        let o: &mut [u8; S] = o.try_into().expect("chunks of the stride");
        if ag & AGENT_ACTIVE == 0 {
            o.fill(0);
            continue;
        }
        // The window's top-left padded cell; its rows are `mw` apart.
        let start = (ag & POS_MASK) as usize - r * mw - r;
        // Padded widths are at least 8 and the maps end with a spare row, so every row of the
        // window has 8 bytes to copy.
        // (`mw` is below 2^16, so the row offsets cannot overflow and the one length test per
        // plane covers every row.)
        let span = (W - 1) * mw + 8;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        for i in 0..W {
            o[i * W..i * W + 8].copy_from_slice(&hrows[i * mw..i * mw + 8]);
        }
        for i in 0..W {
            o[plane + i * W..plane + i * W + 8].copy_from_slice(&arows[i * mw..i * mw + 8]);
        }
        o[2 * plane..].fill(0);
        o[plane + r * W + r] = 0;
        // A goal outside the window writes its 0 over the plane's first 0.
        let (at, seen) = maps.goal_in_window(goal, start);
        o[2 * plane + at] = seen;
    }
    clear_agents(amap, agents, hmap.len());
}

/// The observation map of agents is cleared whole (a few wide stores) when it has at most this
/// many bytes per agent.
const BULK_CLEAR_BYTES_PER_AGENT: usize = 64;

/// Clears the agent marks of one environment from a padded byte map of `len` bytes.
#[inline(always)]
fn clear_agents(amap: &mut [u8], agents: &[u32], len: usize) {
    if len <= BULK_CLEAR_BYTES_PER_AGENT * agents.len() {
        amap[..len].fill(0);
    } else {
        mark_agents(amap, agents, 0);
    }
}

/// Observations for any radius, one row copy of `2r + 1` bytes at a time.
fn observe_with(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    radius: u32,
    marked: bool,
) {
    let k = unpack_dims(env[0]).2 as usize;
    let r = radius as usize;
    let win = 2 * r + 1;
    let plane = win * win;
    obs.fill(0);
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let (hmap, mw) = (maps.obs, maps.mw);
    if amap.len() < hmap.len() {
        amap.resize(hmap.len(), 0);
    }
    let amap = amap.as_mut_slice();
    if !marked {
        mark_agents(amap, &agents[..k], 1);
    }
    for a in 0..k {
        let ag = agents[a];
        if ag & AGENT_ACTIVE == 0 {
            continue;
        }
        let o = &mut obs[a * ctx.stride..a * ctx.stride + OBS_CHANNELS * plane];
        let (holes_plane, rest) = o.split_at_mut(plane);
        let agents_plane = &mut rest[..plane];
        let start = (ag & POS_MASK) as usize - r * mw - r;
        let span = (win - 1) * mw + win;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        let dst = holes_plane.chunks_exact_mut(win).zip(agents_plane.chunks_exact_mut(win));
        for ((dh, da), (sh, sa)) in dst.zip(hrows.chunks(mw).zip(arows.chunks(mw))) {
            dh.copy_from_slice(&sh[..win]);
            da.copy_from_slice(&sa[..win]);
        }
        o[plane + r * win + r] = 0;
        let (at, seen) = maps.goal_in_window(ctx.maps.goals[p * ctx.k_max + a], start);
        o[2 * plane + at] |= seen;
    }
    clear_agents(amap, &agents[..k], hmap.len());
}

/// The largest observation radius of the CPU backend: a window of 255 × 255 cells.
pub const MAX_OBS_RADIUS: u32 = 127;

/// The least padded width: window rows are read as 8 bytes.
const MIN_MAP_WIDTH: usize = 8;

/// Per pool instance, two byte maps of its grid padded by `pad = max(radius, 1)` cells on every
/// side (and on the right to a width of at least [`MIN_MAP_WIDTH`]), each followed by a spare row:
/// `obs` holds 1 for holes and cells off the grid (so that each row of an observation window is
/// one copy), `class` holds [`FREE`], [`HOLE`] or [`OFF`] (so that a move's target needs one load
/// and no bounds test). The step works on cell indices into these maps ("padded cells"): the
/// engine's agent words hold them, and the instances' starts and goals are kept here as padded
/// cells too. Per padded width, a table places a goal in an observation window: see
/// [`HoleMaps::window_table`].
#[derive(Debug, Clone, Default)]
pub(crate) struct HoleMaps {
    obs: Vec<u8>,
    class: Vec<u8>,
    /// Per instance and agent slot (`k_max` a instance): padded cells of the starts and goals.
    starts: Vec<u32>,
    goals: Vec<u32>,
    /// The window tables, one per padded width, back to back.
    windows: Vec<u16>,
    /// Window width.
    win: usize,
    index: Vec<MapIndex>,
    pad: usize,
    /// The longest map, slack included.
    longest: usize,
}

/// Where one instance's maps and window table start, and its padded width.
#[derive(Debug, Clone, Copy)]
struct MapIndex {
    off: usize,
    mw: usize,
    window: usize,
}

/// Map classes.
const FREE: u8 = 0;
const HOLE: u8 = 1;
const OFF: u8 = 2;

/// One instance's maps.
#[derive(Clone, Copy)]
pub(crate) struct Maps<'a> {
    obs: &'a [u8],
    class: &'a [u8],
    /// The window table of this padded width (see [`HoleMaps::window_table`]).
    window: &'a [u16],
    /// Padded width.
    mw: usize,
    pad: usize,
}

impl Maps<'_> {
    /// The packed position of a padded cell on the grid.
    fn rc(&self, cell: usize) -> u32 {
        pack_rc((cell / self.mw - self.pad) as u32, (cell % self.mw - self.pad) as u32)
    }

    /// Where action `act` (`0..8`) takes the agent with word `ag`, given [`cell_steps`]. Branch-free:
    /// the padding makes every neighbour of a grid cell a valid index.
    #[inline(always)]
    fn target(&self, steps: &[usize; 8], ag: u32, act: usize) -> Target {
        let here = (ag & POS_MASK) as usize;
        let there = here.wrapping_add(steps[act]);
        Target { here, there, class: self.class[there] }
    }

    /// The place of padded cell `goal` in the observation window (width `win`) whose top-left
    /// padded cell is `start`: `(index in the window, 1)`, or `(0, 0)` outside it. Branch-free.
    #[inline(always)]
    fn goal_in_window(&self, goal: u32, start: usize) -> (usize, u8) {
        let last = self.window.len() - 1;
        let v = self.window[(goal as usize).wrapping_sub(start).min(last)];
        (usize::from(v.saturating_sub(1)), u8::from(v != 0))
    }
}

/// An agent's padded cell, the padded cell its action leads to, and that cell's class.
struct Target {
    here: usize,
    there: usize,
    class: u8,
}

impl HoleMaps {
    /// The maps of every pool instance for observation radius `radius`.
    ///
    /// # Errors
    /// A radius over [`MAX_OBS_RADIUS`], or a padded map with 2^24 cells or more (agent words
    /// hold padded cells in 24 bits).
    pub(crate) fn new(pool: &InstancePool, radius: u32) -> Result<Self, EngineError> {
        if radius > MAX_OBS_RADIUS {
            return Err(EngineError::Invalid(format!(
                "observation radius {radius}: the CPU backend takes at most {MAX_OBS_RADIUS}"
            )));
        }
        let pad = radius.max(1) as usize;
        let win = 2 * radius as usize + 1;
        let k_max = pool.max_agents;
        let mut maps = Self { pad, win, ..Self::default() };
        let mut tables = std::collections::BTreeMap::new();
        for p in 0..pool.len() {
            let (w, h, k) = unpack_dims(pool.dims[p]);
            let (w, h) = (w as usize, h as usize);
            let mw = (w + 2 * pad).max(MIN_MAP_WIDTH);
            if (h + 2 * pad + 1) * mw > POS_MASK as usize {
                return Err(EngineError::Invalid(format!(
                    "observation radius {radius}: instance {p}'s padded map of {w}x{h} cells is too large"
                )));
            }
            let window = *tables.entry(mw).or_insert_with(|| {
                let at = maps.windows.len();
                maps.windows.extend(Self::window_table(mw, win));
                at
            });
            let off = maps.obs.len();
            maps.index.push(MapIndex { off, mw, window });
            for pr in 0..h + 2 * pad {
                for pc in 0..mw {
                    let inside = (pad..pad + h).contains(&pr) && (pad..pad + w).contains(&pc);
                    let class = if !inside {
                        OFF
                    } else if pool.is_hole(p, ((pr - pad) * w + pc - pad) as u32) {
                        HOLE
                    } else {
                        FREE
                    };
                    maps.class.push(class);
                    maps.obs.push(u8::from(class != FREE));
                }
            }
            maps.obs.resize(maps.obs.len() + mw, 1);
            maps.class.resize(maps.class.len() + mw, OFF);
            maps.longest = maps.longest.max(maps.obs.len() - off);
            let cell = |rc: u32| {
                let (r, c) = unpack_rc(rc);
                ((r as usize + pad) * mw + c as usize + pad) as u32
            };
            for a in 0..k_max {
                let (start, goal) = if a < k as usize {
                    (cell(pool.starts[p * k_max + a]), cell(pool.goals[p * k_max + a]))
                } else {
                    (0, 0)
                };
                maps.starts.push(start);
                maps.goals.push(goal);
            }
        }
        Ok(maps)
    }

    /// The window table of padded width `mw` and window width `win`: entry `d` (the offset of a
    /// padded cell from a window's top-left cell) is 1 + the cell's index in the window, or 0
    /// where the cell is outside it; one last 0 entry stands for every larger offset.
    fn window_table(mw: usize, win: usize) -> Vec<u16> {
        let span = (win - 1) * mw + win;
        let mut table: Vec<u16> = (0..span)
            .map(|d| {
                let (r, c) = (d / mw, d % mw);
                // At most 255 × 255 window cells (`MAX_OBS_RADIUS`), so the entry fits.
                if c < win {
                    (r * win + c + 1) as u16
                } else {
                    0
                }
            })
            .collect();
        table.push(0);
        table
    }

    /// The maps of instance `p`.
    #[inline]
    pub(crate) fn instance(&self, p: usize) -> Maps<'_> {
        let MapIndex { off, mw, window } = self.index[p];
        let end = self.index.get(p + 1).map_or(self.obs.len(), |i| i.off);
        let len = (self.win - 1) * mw + self.win + 1;
        Maps {
            obs: &self.obs[off..end],
            class: &self.class[off..end],
            window: &self.windows[window..window + len],
            mw,
            pad: self.pad,
        }
    }
}

/// Padded-cell steps of the actions 0 wait, 1 up, 2 down, 3 left, 4 right on a map of padded
/// width `mw`, indexed by `action & 7` (−1 as a wrapping value).
#[inline(always)]
fn cell_steps(mw: usize) -> [usize; 8] {
    [0, mw.wrapping_neg(), mw, usize::MAX, 1, 0, 0, 0]
}

/// The actions of one environment's `k` agents: the caller's, or random ones written into `buf`
/// (a loop the compiler vectorises).
#[inline(always)]
fn actions_of<'a>(actions: Actions<'a>, hash: u32, k: usize, buf: &'a mut Vec<u8>) -> &'a [u8] {
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

/// What the goal pass of a step counted: agents still in the episode, and those of them on their
/// goals.
#[derive(Default)]
struct Tally {
    active: u32,
    home: u32,
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
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let goals = &ctx.maps.goals[p * ctx.k_max..p * ctx.k_max + k];
    let maps = ctx.maps.instance(p);
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
        CollisionMode::Soft if ctx.cfg.holes == HoleRule::Drop => {
            (None, step_soft::<true>(step, agents_k, events_k, rewards_k, sc))
        }
        CollisionMode::Soft => (None, step_soft::<false>(step, agents_k, events_k, rewards_k, sc)),
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
struct Step<'a> {
    ctx: Ctx<'a>,
    maps: Maps<'a>,
    goals: &'a [u32],
    actions: Actions<'a>,
    hash: u32,
}

impl Tally {
    /// The goal pass, for an agent after its move (agent word `ag`, events so far `ev`, which
    /// hold `INACTIVE` already for an agent out of the episode): adds `AT_GOAL` and `REACHED`,
    /// counts the agent in, and returns its events and reward.
    #[inline(always)]
    fn finish(&mut self, ag: u32, ev: u32, goal: u32, lut: &[f32; 256]) -> (u32, f32) {
        let active = ag >> 31;
        let home = active & u32::from(ag & POS_MASK == goal);
        // Arriving is being home after a move (starts and goals differ); `MOVED` is bit 0.
        const { assert!(event::MOVED == 1 && AGENT_ACTIVE == 1 << 31) };
        let reached = home & ev;
        let ev =
            ev | (home << event::AT_GOAL.trailing_zeros()) | (reached << event::REACHED.trailing_zeros());
        self.active += active;
        self.home += home;
        (ev, lut[(ev & 0xff) as usize])
    }
}

/// Bits of a soft step's per-cell word: 1 + the agent on the cell, how many movers target it, and
/// 1 + the last mover that targets it (agent counts stay below 256).
const OCC: u32 = 0xff;
const COUNT_ONE: u32 = 0x100;
const MOVER_SHIFT: u32 = 16;

/// Soft collisions (see the module docs) in three passes over the agents: targets and marks,
/// contests, then moves and goals. The passes over all agents have no data-dependent branches
/// (random actions make such branches unpredictable); each non-mover counts into a spare cell of
/// its own past the map, and the cell words are cleared again on the way out.
fn step_soft<const DROP: bool>(
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
    let out = SoftOut { agents, events, rewards, bits: bits.as_mut_slice(), goals: &s.goals[..k] };
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
const BULK_CLEAR_CELLS_PER_AGENT: usize = 16;

/// What the last pass of a soft step writes.
struct SoftOut<'a> {
    agents: &'a mut [u32],
    events: &'a mut [u32],
    rewards: &'a mut [f32],
    bits: &'a mut [u8],
    goals: &'a [u32],
}

/// The last pass of a soft step: moves, marks for the observation, goals and rewards; with
/// `CLEAR`, also clears the cell words each agent touched.
#[inline(always)]
fn soft_moves<const CLEAR: bool>(
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
        if ag & AGENT_ACTIVE != 0 {
            o.bits[(ag & POS_MASK) as usize] = 1;
        }
        (events[a], rewards[a]) = tally.finish(ag, ev, goals[a], lut);
    }
    tally
}

/// The strict step: the first failure in the verifier's order ends the episode and nobody moves.
fn step_strict(
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
fn strict_conflicts(
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

/// One agent's working record in a step: its padded cell, its target cell (its own cell unless
/// it moves), and its events so far (including whether it tries to move).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(16))]
pub(crate) struct Lane {
    here: u32,
    there: u32,
    /// Event bits: `MOVED` while the agent tries to move; soft steps add `BLOCKED` when it
    /// stays, and `INACTIVE`, `OFF_GRID`, `HOLE` as their first pass finds them.
    ev: u8,
}

/// Lane event bit of a blocked agent.
const BLOCKED: u8 = event::BLOCKED as u8;

/// The events of a target cell's class (`FREE`, `HOLE`, `OFF`, and a spare entry).
const CLASS_EVENTS: [u8; 4] = [0, event::HOLE as u8, event::OFF_GRID as u8, 0];

impl Lane {
    /// Whether the agent tries to move.
    #[inline(always)]
    fn moving(self) -> bool {
        self.ev & event::MOVED as u8 != 0
    }
}

/// The CPU batch of environments, the reference [`Engine`].
#[derive(Debug)]
pub struct CpuEngine {
    pub(crate) cfg: EnvConfig,
    pub(crate) pool: std::sync::Arc<InstancePool>,
    /// Agent words hold padded cells here (see the module docs), not packed rows and columns.
    pub(crate) state: RawState,
    sizes: BufferSizes,
    /// The seed of the last reset; `None` before the first.
    seed: Option<u64>,
    maps: HoleMaps,
    lut: Box<[f32; 256]>,
}

impl CpuEngine {
    /// A batch playing instances from `pool`.
    ///
    /// # Errors
    /// A configuration [`EnvConfig::validate`] refuses, or a pool whose padded maps are too large
    /// for the observation radius.
    pub fn new(cfg: EnvConfig, pool: std::sync::Arc<InstancePool>) -> Result<Self, EngineError> {
        cfg.validate()?;
        let k = pool.max_agents;
        let state = RawState { env: vec![[0; 4]; cfg.num_envs], agents: vec![0; cfg.num_envs * k] };
        let maps = HoleMaps::new(&pool, cfg.obs_radius)?;
        let lut = Box::new(std::array::from_fn(|ev| cfg.rewards.reward(ev as u32)));
        let sizes = BufferSizes::new(&cfg, &pool);
        Ok(Self { cfg, pool, state, sizes, seed: None, maps, lut })
    }

    /// The number of agents of every environment's current instance, summed (no copy of the
    /// state).
    #[must_use]
    pub fn agents_in_play(&self) -> u64 {
        self.state.env.iter().map(|e| u64::from(unpack_dims(e[0]).2)).sum()
    }

    /// The state with agents' positions as packed rows and columns (as the GPU keeps them).
    fn packed_state(&self) -> RawState {
        let k = self.pool.max_agents;
        let mut agents = self.state.agents.clone();
        for (env, agents) in self.state.env.iter().zip(agents.chunks_mut(k.max(1))) {
            let maps = self.maps.instance(env[3] as usize);
            for ag in &mut agents[..unpack_dims(env[0]).2 as usize] {
                *ag = maps.rc((*ag & POS_MASK) as usize) | (*ag & AGENT_ACTIVE);
            }
        }
        RawState { env: self.state.env.clone(), agents }
    }

    fn split(&mut self) -> (Ctx<'_>, &mut RawState) {
        let ctx = Ctx {
            pool: &self.pool,
            cfg: &self.cfg,
            seed: self.seed.unwrap_or(0),
            k_max: self.pool.max_agents,
            stride: obs_stride(self.cfg.obs_radius),
            maps: &self.maps,
            lut: &self.lut,
        };
        (ctx, &mut self.state)
    }

    /// One step of every environment with random actions: [`random_action`] of
    /// (seed + env, episode, step, agent), the same on both backends. For benchmarks and tests.
    ///
    /// # Errors
    /// As [`Engine::step`], but for the actions.
    #[cfg(feature = "testing")]
    pub fn step_random(&mut self, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        if self.seed.is_none() {
            return Err(EngineError::NotReset("step_random"));
        }
        out.check(&self.sizes)?;
        self.run_step(Actions::Random, out);
        Ok(())
    }

    fn run_step(&mut self, actions: Actions<'_>, out: StepBuffersMut<'_>) {
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
                            observe_env(ctx, env, ag, &mut fin[o.clone()], &mut sc.bits, true);
                            let episode = env[2] + 1;
                            reset_env(ctx, env, ag, pool_pick(env_seed(ctx.seed, e), episode, len), episode);
                        }
                        observe_env(ctx, env, ag, &mut obs[o], &mut sc.bits, !(done_t || done_u));
                    }
                });
            });
    }
}

impl Engine for CpuEngine {
    fn backend(&self) -> String {
        "cpu".into()
    }

    fn config(&self) -> &EnvConfig {
        &self.cfg
    }

    fn pool(&self) -> &std::sync::Arc<InstancePool> {
        &self.pool
    }

    fn sizes(&self) -> BufferSizes {
        self.sizes
    }

    fn reset(&mut self, seed: u64, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::reset(&self.sizes, &out)?;
        self.seed = Some(seed);
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
                            false,
                        );
                    }
                });
            });
        Ok(())
    }

    fn reset_to(&mut self, env: usize, instance: usize, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::reset_to(&self.sizes, self.seed.is_some(), self.pool.len(), env, instance, &out)?;
        let (ctx, state) = self.split();
        let k = ctx.k_max;
        let episode = state.env[env][2];
        let ag = &mut state.agents[env * k..(env + 1) * k];
        reset_env(ctx, &mut state.env[env], ag, instance as u32, episode);
        SCRATCH.with_borrow_mut(|sc| {
            observe_env(
                ctx,
                &state.env[env],
                ag,
                &mut out.obs[env * k * ctx.stride..(env + 1) * k * ctx.stride],
                &mut sc.bits,
                false,
            );
        });
        Ok(())
    }

    fn step(&mut self, actions: &[u8], out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::step(&self.sizes, self.seed.is_some(), actions, &out)?;
        self.run_step(Actions::Given(actions), out);
        Ok(())
    }

    fn state(&self) -> Result<EnvState, EngineError> {
        Ok(self.packed_state().typed())
    }

    fn global_state(&self, out: &mut [u8]) -> Result<(), EngineError> {
        checks::global_state(&self.sizes, out)?;
        global_state(&self.pool, &self.packed_state(), out);
        Ok(())
    }
}

/// See [`Engine::global_state`]; shared with the GPU backend (over its read-back state, packed
/// positions). `out` has been checked.
pub(crate) fn global_state(pool: &InstancePool, state: &RawState, out: &mut [u8]) {
    let s = pool.max_side() as usize;
    let k_max = pool.max_agents;
    let per_env = 3 * s * s;
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
}
