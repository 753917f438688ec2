//! The CPU backend, the reference: one environment at a time per thread (rayon), with scratch
//! memory per thread and no allocation per step. Each rayon task runs compiled for the
//! instruction set chosen when the engine is made ([`CpuEngine::isa`]: AVX2 where the CPU has
//! it), with the same results either way.
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
//!    [`crate::engine::HoleRule::Block`] stays where it is (`HOLE`). Among the other
//!    movers: all movers that target the same cell stay, both movers of a swap stay, and then,
//!    until nothing changes, a mover whose target is the cell of an agent that stays also stays
//!    (`BLOCKED`). This fixed point does not depend on agent order, and the result has no shared
//!    cell and no swap; following and rotations of three or more agents are allowed.
//! 4. `AT_GOAL` for agents on their goals, `REACHED` for those that arrived in this step for the
//!    first time in the episode (the agent word's `AGENT_ARRIVED` bit, set then, remembers it, so
//!    a goal is paid once per agent and episode; a reset clears it); the
//!    episode terminates when every active agent is on its goal (soft: a success only if nobody
//!    dropped out) or, in soft mode, when no agent is left; it is truncated at the episode limit.
//! 5. Rewards are [`crate::engine::RewardWeights::reward`] of each agent's events (looked up in a table of all
//!    256 event bytes, made once per engine).
//! 6. An environment whose episode ended writes its final observation to `final_obs`, then
//!    resets in the same step to the pool instance `level_pick(seed + env, episode + 1)` (with
//!    the sampling weights, if set: [`crate::engine::levels`]); `obs` holds the new episode's
//!    first observation. `info` describes the episode that ended, its return included (every
//!    agent's rewards, summed agent by agent and step by step).
//!
//! The engine's agent words hold cell indices into per-instance maps padded by a border of cells
//! off the grid (`HoleMaps`), so a move's target, its class (free, hole, off the grid) and an
//! observation window's rows are each one add and one load, with no bounds arithmetic, and a goal
//! is placed in a window by one table lookup; [`CpuEngine::state`] converts them back to the
//! packed rows and columns of the GPU backend's state.
//!
//! # Files
//! | file | job |
//! |---|---|
//! | `mod.rs` | [`CpuEngine`]: reset, the parallel loop over environments, state, global state |
//! | `maps.rs` | `HoleMaps`, the padded maps, and a move's target on them |
//! | `lanes.rs` | per-thread scratch memory, `Lane` (one agent in a strict step), actions |
//! | `observe.rs` | observations |
//! | `step.rs` | one environment's step: mode, goals, rewards, outcome |
//! | `soft.rs` | the soft step (3), over arrays of agents |
//! | `strict.rs` | the strict step (2) |

mod lanes;
mod maps;
mod observe;
mod soft;
mod step;
mod strict;

use rayon::iter::Either;
use rayon::prelude::*;

use crate::engine::config::{EnvConfig, ObsFormat};
use crate::engine::hash::env_seed;
use crate::engine::levels::{level_pick, LevelWeights};
use crate::engine::{
    check_env_outputs, checks, running_info, BufferSizes, Engine, EngineId, EnvState, Expected, RawState,
    Refilled, StepBuffersMut,
};
use crate::error::{count, try_vec, EngineError};
use crate::instance::Instance;
use crate::pool::InstancePool;
use crate::words::{unpack_dims, unpack_rc, AGENT_ACTIVE, POS_MASK};

use lanes::SCRATCH;
pub(crate) use maps::HoleMaps;
pub use maps::MAX_OBS_RADIUS;
use observe::observe_env;
use step::step_env;

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

/// Shared read-only context of a step.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub pool: &'a InstancePool,
    pub cfg: &'a EnvConfig,
    /// The seed of the last reset.
    pub seed: u64,
    pub k_max: usize,
    pub stride: usize,
    /// The step marks agents on [`lanes::Scratch::bits`] for the observation (`bytes` format).
    pub marks: bool,
    pub maps: &'a HoleMaps,
    /// The reward of every event byte.
    pub lut: &'a [f32; 256],
    /// The alias table of the sampling weights (empty: every slot alike).
    pub table: &'a [[u32; 2]],
}

impl<'a> Ctx<'a> {
    /// The context of an engine's parts.
    fn of(
        cfg: &'a EnvConfig,
        pool: &'a InstancePool,
        sizes: &BufferSizes,
        seed: Option<u64>,
        maps: &'a HoleMaps,
        lut: &'a [f32; 256],
        weights: Option<&'a LevelWeights>,
    ) -> Self {
        Ctx {
            pool,
            cfg,
            seed: seed.unwrap_or(0),
            k_max: pool.max_agents,
            stride: sizes.obs_stride,
            marks: cfg.obs_format == ObsFormat::Bytes,
            maps,
            lut,
            table: weights.map_or(&[], LevelWeights::table),
        }
    }

    /// The pool slot episode `episode` of environment `env` plays.
    #[inline(always)]
    pub(crate) fn pick(&self, env: u32, episode: u32) -> u32 {
        level_pick(env_seed(self.seed, env), episode, self.pool.len() as u32, self.table)
    }
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

/// Pieces of `chunk` bytes of an observation buffer, for a parallel zip with `n` pieces of the
/// state; with the `none` format (`chunk` 0, an empty buffer) `n` empty pieces.
fn obs_chunks(buf: &mut [u8], chunk: usize, n: usize) -> impl IndexedParallelIterator<Item = &mut [u8]> {
    if chunk == 0 {
        Either::Right((0..n).into_par_iter().map(|_| <&mut [u8]>::default()))
    } else {
        Either::Left(buf.par_chunks_mut(chunk))
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
    /// Per environment, the running episode's return.
    returns: Vec<f32>,
    /// The sampling weights of the pool's slots, if set.
    weights: Option<LevelWeights>,
    maps: HoleMaps,
    lut: Box<[f32; 256]>,
    /// The instruction set the step's loops run compiled for (see [`CpuEngine::isa`]);
    /// `Arch::Scalar` for the build's baseline.
    isa: pulp::Arch,
    id: EngineId,
}

impl CpuEngine {
    /// A batch playing instances from `pool`.
    ///
    /// # Errors
    /// A configuration [`EnvConfig::validate`] refuses, a pool whose padded maps are too large
    /// for the observation radius, or [`EngineError::TooLarge`] when the state or the maps
    /// cannot be allocated (their sizes are checked before any memory is asked for).
    pub fn new(cfg: EnvConfig, pool: std::sync::Arc<InstancePool>) -> Result<Self, EngineError> {
        cfg.validate()?;
        let sizes = BufferSizes::checked(&cfg, &pool)?;
        let b = cfg.num_envs;
        let envs = || count(b as u64, "environment", "environments");
        let state = RawState {
            env: try_vec(b, [0; 4], || format!("the state of {}", envs()))?,
            agents: try_vec(sizes.agents, 0, || {
                format!("the agents of {} of {} slots", envs(), pool.max_agents)
            })?,
        };
        let returns = try_vec(b, 0.0, || format!("the returns of {}", envs()))?;
        let maps = HoleMaps::new(&pool, cfg.obs_radius, cfg.obs_format == ObsFormat::Bits)?;
        let lut = Box::new(std::array::from_fn(|ev| cfg.rewards.reward(ev as u32)));
        Ok(Self {
            cfg,
            pool,
            state,
            sizes,
            seed: None,
            returns,
            weights: None,
            maps,
            lut,
            isa: pulp::Arch::new(),
            id: EngineId::next(),
        })
    }

    /// The number of agents of every environment's current instance, summed (no copy of the
    /// state).
    #[must_use]
    pub fn agents_in_play(&self) -> u64 {
        self.state.env.iter().map(|e| u64::from(unpack_dims(e[0]).2)).sum()
    }

    /// The instruction set the step runs compiled for, chosen when the engine is made: `avx2`
    /// (x86-64-v3: AVX2, BMI2, FMA) on x86-64 CPUs that have it, `neon` on 64-bit ARM ones that
    /// have it, else `baseline` (the build's target). All give identical results.
    #[must_use]
    pub fn isa(&self) -> &'static str {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            pulp::Arch::V3(_) => "avx2",
            #[cfg(target_arch = "aarch64")]
            pulp::Arch::Neon(_) => "neon",
            _ => "baseline",
        }
    }

    /// Steps with the loops compiled for the build's baseline instruction set only, whatever the
    /// CPU has: for tests that compare the two.
    #[cfg(feature = "testing")]
    pub fn force_baseline(&mut self) {
        self.isa = pulp::Arch::Scalar;
    }

    /// Builds the `bits` holes planes row by row in each step, as for a pool too large for the
    /// table of them: for tests that compare the two.
    #[cfg(feature = "testing")]
    pub fn drop_hole_windows(&mut self) {
        self.maps.drop_hole_windows();
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

    fn split(&mut self) -> (Ctx<'_>, &mut RawState, &mut [f32]) {
        let Self { cfg, pool, state, sizes, seed, returns, weights, maps, lut, .. } = self;
        (Ctx::of(cfg, pool, sizes, *seed, maps, lut, weights.as_ref()), state, returns)
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx::of(&self.cfg, &self.pool, &self.sizes, self.seed, &self.maps, &self.lut, self.weights.as_ref())
    }

    /// Checks the outputs of the environments `envs` against the state (see
    /// [`Engine::check_outputs`]); `returns`: the running returns to compare, or `None` to leave
    /// them out.
    fn check_envs(
        &self,
        envs: &[usize],
        out: &StepBuffersMut<'_>,
        returns: Option<&[f32]>,
    ) -> Result<(), EngineError> {
        let ctx = self.ctx();
        let k = ctx.k_max;
        let per_env = k * ctx.stride;
        envs.par_chunks(ENVS_PER_TASK).try_for_each(|chunk| {
            SCRATCH.with_borrow_mut(|sc| {
                let mut obs = vec![0u8; per_env];
                for &e in chunk {
                    let env = &self.state.env[e];
                    let ag = &self.state.agents[e * k..(e + 1) * k];
                    observe_env(ctx, env, ag, &mut obs, sc, false);
                    let [dims, step, _, p] = *env;
                    let running = (step > 0).then(|| {
                        let goals = &self.maps.goals[p as usize * k..];
                        let home = ag[..unpack_dims(dims).2 as usize]
                            .iter()
                            .zip(goals)
                            .filter(|&(&w, &goal)| w & AGENT_ACTIVE != 0 && w & POS_MASK == goal)
                            .count() as u32;
                        let ret = returns.map_or(0.0, |r| r[e]);
                        running_info(step, p, self.pool.generation(p as usize), ret, home)
                    });
                    let expected = Expected { obs: &obs, running, return_checked: returns.is_some() };
                    check_env_outputs(e, &expected, out, per_env)?;
                }
                Ok(())
            })
        })
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
        let isa = self.isa;
        let (ctx, state, returns) = self.split();
        let (k, stride) = (ctx.k_max, ctx.stride);
        let per = ENVS_PER_TASK;
        let n = state.env.len().div_ceil(per);
        state
            .env
            .par_chunks_mut(per)
            .zip(returns.par_chunks_mut(per))
            .zip(state.agents.par_chunks_mut(per * k))
            .zip(obs_chunks(out.obs, per * k * stride, n))
            .zip(obs_chunks(out.final_obs, per * k * stride, n))
            .zip(out.rewards.par_chunks_mut(per * k))
            .zip(out.events.par_chunks_mut(per * k))
            .zip(out.terminated.par_chunks_mut(per))
            .zip(out.truncated.par_chunks_mut(per))
            .zip(out.info.par_chunks_mut(per))
            .enumerate()
            .for_each(
                |(chunk, (((((((((envs, ret), agents), obs), fin), rew), ev), term), trunc), info))| {
                    SCRATCH.with_borrow_mut(|sc| {
                        let chunk = StepChunk {
                            ctx,
                            actions,
                            first: chunk * per,
                            envs,
                            ret,
                            agents,
                            obs,
                            fin,
                            rew,
                            ev,
                            term,
                            trunc,
                            info,
                            sc,
                        };
                        isa.dispatch(chunk);
                    });
                },
            );
    }
}

/// One rayon task of a step: environments `first..` and their pieces of the state and the
/// output buffers.
struct StepChunk<'a, 'c> {
    ctx: Ctx<'c>,
    actions: Actions<'c>,
    first: usize,
    envs: &'a mut [[u32; 4]],
    ret: &'a mut [f32],
    agents: &'a mut [u32],
    obs: &'a mut [u8],
    fin: &'a mut [u8],
    rew: &'a mut [f32],
    ev: &'a mut [u32],
    term: &'a mut [u8],
    trunc: &'a mut [u8],
    info: &'a mut [crate::engine::EnvInfo],
    sc: &'a mut lanes::Scratch,
}

impl StepChunk<'_, '_> {
    /// Steps the chunk's environments, resets those whose episodes ended and writes the
    /// observations. Inlined whole into [`pulp::WithSimd::with_simd`], so that its loops are
    /// compiled for the instruction set chosen there.
    #[inline(always)]
    fn run(self) {
        let Self { ctx, actions, first, envs, ret, agents, obs, fin, rew, ev, term, trunc, info, sc } = self;
        let (k, stride) = (ctx.k_max, ctx.stride);
        for (i, env) in envs.iter_mut().enumerate() {
            let e = (first + i) as u32;
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
                &mut ret[i],
                sc,
            );
            term[i] = u8::from(done_t);
            trunc[i] = u8::from(done_u);
            let o = i * k * stride..(i + 1) * k * stride;
            if done_t || done_u {
                observe_env(ctx, env, ag, &mut fin[o.clone()], sc, true);
                let episode = env[2] + 1;
                reset_env(ctx, env, ag, ctx.pick(e, episode), episode);
                ret[i] = 0.0;
            }
            observe_env(ctx, env, ag, &mut obs[o], sc, !(done_t || done_u));
        }
    }
}

impl pulp::WithSimd for StepChunk<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        self.run();
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
        let (ctx, state, returns) = self.split();
        returns.fill(0.0);
        let k = ctx.k_max;
        let n = state.env.len().div_ceil(ENVS_PER_TASK);
        state
            .env
            .par_chunks_mut(ENVS_PER_TASK)
            .zip(state.agents.par_chunks_mut(ENVS_PER_TASK * k))
            .zip(obs_chunks(out.obs, ENVS_PER_TASK * k * ctx.stride, n))
            .enumerate()
            .for_each(|(chunk, ((envs, agents), obs))| {
                SCRATCH.with_borrow_mut(|sc| {
                    for (i, env) in envs.iter_mut().enumerate() {
                        let e = (chunk * ENVS_PER_TASK + i) as u32;
                        let ag = &mut agents[i * k..(i + 1) * k];
                        reset_env(ctx, env, ag, ctx.pick(e, 0), 0);
                        observe_env(
                            ctx,
                            env,
                            ag,
                            &mut obs[i * k * ctx.stride..(i + 1) * k * ctx.stride],
                            sc,
                            false,
                        );
                    }
                });
            });
        Ok(())
    }

    fn reset_to(&mut self, env: usize, instance: usize, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::reset_to(&self.sizes, self.seed.is_some(), self.pool.len(), env, instance, &out)?;
        let (ctx, state, returns) = self.split();
        returns[env] = 0.0;
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
                sc,
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

    fn set_weights(&mut self, weights: Option<&[f64]>) -> Result<(), EngineError> {
        self.weights = weights.map(|w| LevelWeights::new(w, self.pool.len())).transpose()?;
        Ok(())
    }

    fn weights(&self) -> Option<&[f64]> {
        self.weights.as_ref().map(LevelWeights::weights)
    }

    fn refill(
        &mut self,
        slots: &[usize],
        levels: &[Instance],
        mut out: StepBuffersMut<'_>,
    ) -> Result<Refilled, EngineError> {
        checks::refill(&self.sizes, self.seed.is_some(), &self.pool, slots, levels, &out)?;
        let moves = crate::engine::refill_moves(&self.state.env, self.pool.len(), slots);
        let moved: Vec<usize> = moves.iter().map(|m| m.env).collect();
        self.check_envs(&moved, &out, None)?;
        let pool = std::sync::Arc::make_mut(&mut self.pool);
        for (&slot, level) in slots.iter().zip(levels) {
            pool.replace(slot, level, crate::pool::Optima::AsStored)?;
        }
        self.maps.replace(&self.pool, slots)?;
        let per_env = self.pool.max_agents * self.sizes.obs_stride;
        let mut done = Refilled::default();
        let (ctx, state, returns) = self.split();
        let k = ctx.k_max;
        SCRATCH.with_borrow_mut(|sc| {
            for m in moves {
                let e = m.env;
                let [_, _, episode, instance] = state.env[e];
                let ag = &mut state.agents[e * k..(e + 1) * k];
                if m.cut {
                    crate::engine::cut_episode(&mut out, e, per_env);
                    reset_env(ctx, &mut state.env[e], ag, ctx.pick(e as u32, episode + 1), episode + 1);
                    done.truncated += 1;
                } else {
                    reset_env(ctx, &mut state.env[e], ag, instance, episode);
                    done.restarted += 1;
                }
                returns[e] = 0.0;
                observe_env(ctx, &state.env[e], ag, &mut out.obs[e * per_env..(e + 1) * per_env], sc, false);
            }
        });
        Ok(done)
    }

    fn id(&self) -> EngineId {
        self.id
    }

    fn was_reset(&self) -> bool {
        self.seed.is_some()
    }

    fn check_outputs(&self, out: &StepBuffersMut<'_>, returns: Option<&[f32]>) -> Result<(), EngineError> {
        checks::outputs(&self.sizes, self.seed.is_some(), out, returns)?;
        let all: Vec<usize> = (0..self.sizes.num_envs).collect();
        self.check_envs(&all, out, Some(returns.unwrap_or(&self.returns)))
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
