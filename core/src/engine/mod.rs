//! The batched engine: B environments of up to K agents each stepped together, and N plans
//! verified together, on the CPU ([`cpu`], the reference) and, with the `gpu` feature, in wgpu
//! compute shaders (`gpu`, WGSL in `shaders/`). Both backends give identical integer outputs
//! (and bit-identical rewards).
//!
//! # Conventions (Gymnasium vector-env / EnvPool style)
//! | what | choice |
//! |---|---|
//! | actions | per agent `u8`: 0 wait, 1 up, 2 down, 3 left, 4 right; `B·K` of them, padding slots ignored |
//! | observation | per agent, 3 channels × (2r+1)² cells: holes (cells off the grid count as holes), other agents, own goal; as bytes padded to a multiple of 4 ([`obs_stride`]), as bits packed into `u32` words per plane, or not at all ([`ObsFormat`], `EnvConfig::obs_format`) |
//! | global state | [`Engine::global_state`]: `B × 3 × S × S` bytes |
//! | rewards | per agent `f32`, [`RewardWeights::reward`] of its events |
//! | terminated | every active agent on its goal, or (strict) a failure, or (soft) nobody left |
//! | truncated | the episode reached `episode_limit` steps without terminating |
//! | auto-reset | **same step**: an environment whose episode ended writes its final observation into `final_obs` (valid only where `terminated` or `truncated` is set), resets, and returns the new episode's first observation in `obs`; `info` describes the episode that ended |
//! | seeds | [`Engine::reset`]`(seed)`: environment `e` uses `seed + e`; episode `n` plays pool instance `level_pick(seed + e, n)`, a counter-based hash, so results do not depend on backend, batch size or threads |
//! | level sampling | [`Engine::set_weights`]: per-slot weights every draw follows (uniform when unset, exactly as before weights existed); [`Engine::refill`]: new levels in pool slots between steps, the episodes playing them truncated; [`levels`] defines the draw |
//! | replay | [`Engine::reset_to`] puts an environment on an exact pool instance |
//! | memory | per agent one `u32` (cell, active bit, and whether it has arrived on its goal in the episode); per environment 4 `u32` (dims, step, episode, pool instance) and the episode's return; goals and hole bits are read from the instance pool |
//! | info | per environment an [`EnvInfo`]: steps, outcome, failure kind and agent, pool slot and its generation, return, agents on their goals: what a level sampler scores by |
//!
//! The caller owns every output buffer: a step writes into a [`StepBuffersMut`], a view of seven
//! slices the caller allocated (sizes from [`BufferSizes`]); [`StepBuffers`] is an owned
//! convenience that lends such a view. A CPU step allocates nothing.
//!
//! Both backends implement [`Engine`]; code written against it runs on either, and the same
//! misuse gets the same [`EngineError`] from both (the checks are shared: [`checks`]).
//!
//! ```
//! use std::sync::Arc;
//! use floe_core::engine::{CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers};
//! use floe_core::generator::{generate, GeneratorConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let levels = generate(&GeneratorConfig::default().size(5).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(8).seed(7))?;
//! let pool = Arc::new(InstancePool::new(&levels, Optima::AsStored)?);
//! let cfg = EnvConfig { num_envs: 16, mode: CollisionMode::Soft, ..EnvConfig::default() };
//! let mut env = CpuEngine::new(cfg.clone(), Arc::clone(&pool))?;
//! let mut out = StepBuffers::new(&env.sizes());
//! env.reset(42, out.view())?;
//! let actions = vec![0u8; cfg.num_envs * pool.max_agents()]; // everybody waits
//! env.step(&actions, out.view())?;
//! assert!(out.events.iter().all(|&e| e & floe_core::engine::event::MOVED == 0));
//! env.reset_to(0, 3, out.view())?;
//! assert_eq!(env.state()?.envs[0].instance, 3);
//! # Ok(())
//! # }
//! ```

pub mod config;
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod hash;
pub mod levels;
pub mod open;
pub mod records;
pub mod shaders;

use std::sync::Arc;

pub use crate::error::EngineError;
use crate::error::{checked_count, try_vec, TooLarge};
use crate::instance::Instance;
pub use crate::pool::{InstancePool, Optima, Room};
pub use config::{
    obs_plane_words, obs_stride, unpack_bits, CollisionMode, EnvConfig, HoleRule, ObsFormat, RewardWeights,
};
pub use cpu::{CpuEngine, MAX_OBS_RADIUS};
pub use levels::LevelWeights;
pub use open::{open, Backend, EngineSpec, OpenError};
pub use records::{event, outcome, AgentRecord, EnvInfo, EnvRecord, NONE};

/// A batch of environments: what every backend implements.
///
/// # For the author of a backend
/// - Construction takes an [`EnvConfig`] and an `Arc<InstancePool>`, and calls
///   [`EnvConfig::validate`] before any limit of its own.
/// - Every method starts with the matching function of [`checks`], so that misuse gets the same
///   error on every backend, and changes nothing when a check fails.
/// - [`Engine::step`] and [`Engine::reset_to`] before the first [`Engine::reset`] are
///   [`EngineError::NotReset`].
/// - Outputs must be bit-identical to [`CpuEngine`]'s, the reference (`floe-tests`'
///   `engine_gpu.rs` shows how that is tested): the step, the observation and the auto-reset
///   are defined in [`cpu`]'s module docs, the randomness in [`hash`].
/// - The caller's configuration is never changed: `config()` returns what was passed in.
pub trait Engine: Send + std::fmt::Debug {
    /// The backend's name and device, for reports (`cpu`, or the GPU adapter).
    fn backend(&self) -> String;

    /// The configuration the engine was made with, unchanged.
    fn config(&self) -> &EnvConfig;

    /// The instances the environments play.
    fn pool(&self) -> &Arc<InstancePool>;

    /// The size of every buffer the caller provides.
    fn sizes(&self) -> BufferSizes {
        BufferSizes::new(self.config(), self.pool())
    }

    /// Starts episode 0 in every environment: environment `e` plays pool instance
    /// `pool_pick(seed + e, 0)`. Writes the first observations into `out.obs`; the other
    /// outputs are left as they were.
    ///
    /// # Errors
    /// Buffers of the wrong size ([`checks::reset`]), or a device error.
    fn reset(&mut self, seed: u64, out: StepBuffersMut<'_>) -> Result<(), EngineError>;

    /// Puts environment `env` on pool instance `instance` (to replay an exact level), step 0,
    /// with the episode counter going on, and writes that environment's observation into its
    /// part of `out.obs`; nothing else of `out` is written.
    ///
    /// # Errors
    /// Not reset yet, an index out of range, buffers of the wrong size ([`checks::reset_to`]),
    /// or a device error.
    fn reset_to(&mut self, env: usize, instance: usize, out: StepBuffersMut<'_>) -> Result<(), EngineError>;

    /// One step of every environment with `B·K` action codes 0..=4 (padding slots are ignored),
    /// with the same-step auto-reset; writes every output.
    ///
    /// # Errors
    /// Not reset yet, buffers of the wrong size, an action code above 4 ([`checks::step`]), or
    /// a device error.
    fn step(&mut self, actions: &[u8], out: StepBuffersMut<'_>) -> Result<(), EngineError>;

    /// Every environment's and agent's state (zeros before the first reset).
    ///
    /// # Errors
    /// A device error.
    fn state(&self) -> Result<EnvState, EngineError>;

    /// Sets the sampling weights of the pool's slots: from now on every draw of a level (each
    /// auto-reset, and [`Engine::reset`]) picks slot `i` with probability `weights[i] / Σ
    /// weights`, by the counter-based draw [`levels`] defines, the same on every backend. `None`,
    /// or equal weights, draws exactly as an engine without weights. The weights stay until
    /// replaced, refills included (they are the slots', not the levels').
    ///
    /// # Errors
    /// What [`levels::check_weights`] refuses (a length other than the pool's, a negative, NaN
    /// or infinite weight, all weights zero), naming the value; nothing changes then.
    fn set_weights(&mut self, weights: Option<&[f64]>) -> Result<(), EngineError>;

    /// The sampling weights set, if any.
    fn weights(&self) -> Option<&[f64]>;

    /// Replaces the levels of pool slots `slots` by `levels` (one each, with their stored optima),
    /// between steps, without rebuilding the engine: SFL and PLR replace part of their buffer
    /// with new levels, ACCEL adds edited ones. Each slot counts one more generation
    /// ([`EnvInfo::generation`]). Pass the outputs of the last step (or reset) in `out`: an
    /// environment that plays a refilled slot
    /// - at the first step of its episode (it has not moved yet) is put on the slot's new level,
    ///   its observation written into `out.obs`;
    /// - later in its episode has that episode truncated in `out`, as if the step had truncated
    ///   it: `truncated` set, `final_obs` the observation it ended with (its `obs`), `info` its
    ///   record with the outcome [`outcome::TRUNCATED`]; then it starts its next episode on a
    ///   level drawn as every auto-reset draws, its first observation in `out.obs`.
    ///
    /// The engine's pool ([`Engine::pool`]) is its own copy from the first refill on: the pool
    /// it was made with is left as it was.
    ///
    /// What it reads of `out`: the environments that play a refilled slot are checked as
    /// [`Engine::check_outputs`] checks them (their `obs`; for those past their first step, the
    /// flags and the running `info`, all but its return, which a wrapper may pay in rewards of
    /// its own); the other buffers and environments only for their lengths.
    ///
    /// # Errors
    /// Not reset yet, a slot out of range or named twice, a level count other than the slot
    /// count, a level that does not fit the pool's room ([`InstancePool::check_fits`]), buffers of
    /// the wrong size ([`checks::refill`]), or buffers that do not hold the last step's outputs
    /// for the environments it moves; nothing changes then. A device error.
    fn refill(
        &mut self,
        slots: &[usize],
        levels: &[Instance],
        out: StepBuffersMut<'_>,
    ) -> Result<Refilled, EngineError>;

    /// This engine's identity in the process ([`EngineId`]): a level sampler binds to the engine
    /// it first runs with, and refuses another by it.
    fn id(&self) -> EngineId;

    /// Whether [`Engine::reset`] has been called: before it, [`Engine::step`],
    /// [`Engine::reset_to`] and [`Engine::refill`] are [`EngineError::NotReset`].
    fn was_reset(&self) -> bool;

    /// Checks that `out` holds what the engine wrote last (by a step, a reset, `reset_to` or a
    /// refill), as a host that passes its outputs on to the engine again must: every
    /// environment's `obs` is the observation of its current state, and every environment whose
    /// episode is under way (past its first step) has `terminated` and `truncated` 0 and its
    /// running `info` record, field for field. `returns` gives the running episodes' returns
    /// when a wrapper pays rewards of its own (`None`: the engine's). `rewards`, `events` and
    /// `final_obs` are only checked for their lengths (nothing the engine keeps says what they
    /// held), and so are the `info` and flags of environments at the first step of an episode
    /// (they describe an episode that ended, or nothing after a reset). Reads only.
    ///
    /// # Errors
    /// Not reset yet, a buffer (or `returns`) of the wrong length, or [`EngineError::Invalid`]
    /// naming the first environment and field that differ; a device error.
    fn check_outputs(&self, out: &StepBuffersMut<'_>, returns: Option<&[f32]>) -> Result<(), EngineError>;

    /// The global state of every environment: `B × 3 × S × S` bytes (S the pool's largest side),
    /// channel 0 holes (1) and cells outside the environment's grid (2), channel 1 agent
    /// index + 1 on its cell, channel 2 agent index + 1 on its goal (indices over 254 saturate
    /// at 255).
    ///
    /// # Errors
    /// A buffer of the wrong size ([`checks::global_state`]), or a device error.
    fn global_state(&self, out: &mut [u8]) -> Result<(), EngineError>;
}

/// An engine's identity, unique among the engines made in the process (a counter, never
/// reused): what a level sampler binds to ([`Engine::id`]). A wrapper around an engine has the
/// identity of the engine it wraps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EngineId(u64);

impl EngineId {
    /// A new identity, one more than the last made.
    #[must_use]
    pub fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// Its number (1 for the first engine of the process).
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for EngineId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "engine #{}", self.0)
    }
}

/// What [`Engine::refill`] did to the environments that played a refilled slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refilled {
    /// Environments whose running episode was truncated.
    pub truncated: usize,
    /// Environments at the first step of an episode, put on their slot's new level.
    pub restarted: usize,
}

/// An environment that plays a refilled slot: `cut` when its episode had begun.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moved {
    pub(crate) env: usize,
    pub(crate) cut: bool,
}

/// The environments (state words `env`) that play one of `slots` (of a pool of `pool_len`),
/// after [`checks::refill`].
pub(crate) fn refill_moves(env: &[[u32; 4]], pool_len: usize, slots: &[usize]) -> Vec<Moved> {
    let mut refilled = vec![false; pool_len];
    for &s in slots {
        refilled[s] = true;
    }
    env.iter()
        .enumerate()
        .filter(|(_, w)| refilled[w[3] as usize])
        .map(|(e, &[_, step, _, _])| Moved { env: e, cut: step > 0 })
        .collect()
}

/// What an environment's outputs must hold ([`Engine::check_outputs`]): its observation, and
/// for an episode under way its running `info` record (with `return_checked` false, its return
/// is not compared: a refill does not read it).
pub(crate) struct Expected<'a> {
    pub(crate) obs: &'a [u8],
    pub(crate) running: Option<EnvInfo>,
    pub(crate) return_checked: bool,
}

/// Compares environment `e`'s part of `out` (`per_env` observation bytes an environment) with
/// what the engine wrote last.
pub(crate) fn check_env_outputs(
    e: usize,
    expected: &Expected<'_>,
    out: &StepBuffersMut<'_>,
    per_env: usize,
) -> Result<(), EngineError> {
    let differs = |what: &str, got: String, want: String| {
        EngineError::Invalid(format!(
            "environment {e}: the buffers' {what} is {got}, but the engine wrote {want}: pass the outputs of \
             the last step (or reset), unchanged"
        ))
    };
    if per_env > 0 && out.obs[e * per_env..(e + 1) * per_env] != *expected.obs {
        return Err(differs("obs", "another observation".into(), "the observation of its state".into()));
    }
    let Some(want) = expected.running else { return Ok(()) };
    for (what, got) in [("terminated", out.terminated[e]), ("truncated", out.truncated[e])] {
        if got != 0 {
            return Err(differs(what, got.to_string(), "0 (its episode goes on)".into()));
        }
    }
    let got = out.info[e];
    let fields = [
        ("info.episode_steps", got.episode_steps, want.episode_steps),
        ("info.outcome", got.outcome, want.outcome),
        ("info.failure_kind", got.failure_kind, want.failure_kind),
        ("info.failure_agent", got.failure_agent, want.failure_agent),
        ("info.instance", got.instance, want.instance),
        ("info.generation", got.generation, want.generation),
        ("info.agents_on_goal", got.agents_on_goal, want.agents_on_goal),
    ];
    for (what, g, w) in fields {
        if g != w {
            return Err(differs(what, g.to_string(), w.to_string()));
        }
    }
    if expected.return_checked && got.episode_return.to_bits() != want.episode_return.to_bits() {
        return Err(differs(
            "info.episode_return",
            format!("{:?}", got.episode_return),
            format!("{:?}", want.episode_return),
        ));
    }
    Ok(())
}

/// A running episode's `info` as a step writes it.
pub(crate) fn running_info(step: u32, instance: u32, generation: u32, ret: f32, home: u32) -> EnvInfo {
    EnvInfo {
        episode_steps: step,
        outcome: outcome::RUNNING,
        failure_kind: 0,
        failure_agent: NONE,
        instance,
        generation,
        episode_return: ret,
        agents_on_goal: home,
    }
}

/// Truncates environment `e`'s episode in a step's outputs (see [`Engine::refill`]): the
/// observation it ended with becomes its final one.
pub(crate) fn cut_episode(out: &mut StepBuffersMut<'_>, e: usize, obs_per_env: usize) {
    let span = e * obs_per_env..(e + 1) * obs_per_env;
    out.final_obs[span.clone()].copy_from_slice(&out.obs[span]);
    out.terminated[e] = 0;
    out.truncated[e] = 1;
    let info = &mut out.info[e];
    info.outcome = outcome::TRUNCATED;
    info.failure_kind = 0;
    info.failure_agent = NONE;
}

/// Every environment's and agent slot's state: `B` environments and `B·K` agent slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvState {
    pub envs: Vec<EnvRecord>,
    pub agents: Vec<AgentRecord>,
}

/// The raw state words both backends keep: per environment (dims, step, episode, pool index),
/// per agent the packed position (rows and columns) and the active bit.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawState {
    pub(crate) env: Vec<[u32; 4]>,
    pub(crate) agents: Vec<u32>,
}

impl RawState {
    pub(crate) fn typed(&self) -> EnvState {
        let envs = self
            .env
            .iter()
            .map(|&[dims, step, episode, instance]| {
                let (width, height, agents) = crate::words::unpack_dims(dims);
                EnvRecord { width, height, agents, step, episode, instance }
            })
            .collect();
        let agents = self
            .agents
            .iter()
            .map(|&w| {
                let (row, col) = crate::words::unpack_rc(w & crate::words::POS_MASK);
                AgentRecord { row, col, active: u32::from(w & crate::words::AGENT_ACTIVE != 0) }
            })
            .collect();
        EnvState { envs, agents }
    }
}

/// The length of every buffer of a step, in elements, for a configuration and pool. The C API
/// hands out this struct itself: `floe_buffer_sizes` of `floe_types.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferSizes {
    /// B, environments.
    pub num_envs: usize,
    /// K, agent slots per environment.
    pub max_agents: usize,
    /// Bytes of one agent's observation (0 with the observation format "none").
    pub obs_stride: usize,
    /// `B·K` action codes for a step.
    pub actions: usize,
    /// `B·K·obs_stride` bytes of `obs` and of `final_obs`.
    pub obs: usize,
    /// `B·K`: `rewards`, `events`, and the agent records of the state.
    pub agents: usize,
    /// `B`: `terminated`, `truncated`, `info`, and the environment records of the state.
    pub envs: usize,
    /// S, the pool's largest side: the side of one global-state plane.
    pub global_side: usize,
    /// `B·3·S·S` bytes of the global state.
    pub global_state: usize,
}

impl BufferSizes {
    /// The sizes for `cfg` playing `pool`.
    ///
    /// # Panics
    /// When a size overflows a `usize`, which no configuration [`EnvConfig::validate`] accepts
    /// does on a 64-bit machine; [`BufferSizes::checked`] returns that as an error.
    #[must_use]
    pub fn new(cfg: &EnvConfig, pool: &InstancePool) -> Self {
        Self::checked(cfg, pool).expect("buffer sizes fit a usize")
    }

    /// The sizes for `cfg` playing `pool`, computed with checked arithmetic.
    ///
    /// # Errors
    /// [`TooLarge`] naming the buffer whose size overflows a `usize`.
    pub fn checked(cfg: &EnvConfig, pool: &InstancePool) -> Result<Self, TooLarge> {
        let (b, k, s) = (cfg.num_envs, pool.max_agents(), cfg.obs_format.stride(cfg.obs_radius));
        let side = pool.max_side() as usize;
        let of = |what: &str, factors: &[usize]| {
            checked_count(factors, || format!("{what} of {b} environments of {k} agent slots"))
        };
        let agents = of("the agent slots", &[b, k])?;
        Ok(Self {
            num_envs: b,
            max_agents: k,
            obs_stride: s,
            actions: agents,
            obs: of("the observations", &[agents, s])?,
            agents,
            envs: b,
            global_side: side,
            global_state: of("the global state", &[b, 3, side, side])?,
        })
    }
}

/// A step's outputs in memory the caller owns (EnvPool / PufferLib style): seven slices, each of
/// the length [`BufferSizes`] gives.
#[derive(Debug)]
pub struct StepBuffersMut<'a> {
    /// `B·K·obs_stride` bytes: agent `a` of environment `e` at `(e·K + a)·obs_stride`.
    pub obs: &'a mut [u8],
    /// Like `obs`; the final observation of environments whose episode ended in this step
    /// (valid only where `terminated` or `truncated` is set).
    pub final_obs: &'a mut [u8],
    /// `B·K` rewards.
    pub rewards: &'a mut [f32],
    /// `B·K` [`event`] flags.
    pub events: &'a mut [u32],
    /// `B`, 0 or 1.
    pub terminated: &'a mut [u8],
    /// `B`, 0 or 1.
    pub truncated: &'a mut [u8],
    /// `B`.
    pub info: &'a mut [EnvInfo],
}

impl StepBuffersMut<'_> {
    /// The same buffers lent again for one call, so that they can be read after it (an engine
    /// that wraps another passes them on this way).
    pub fn reborrow(&mut self) -> StepBuffersMut<'_> {
        StepBuffersMut {
            obs: self.obs,
            final_obs: self.final_obs,
            rewards: self.rewards,
            events: self.events,
            terminated: self.terminated,
            truncated: self.truncated,
            info: self.info,
        }
    }

    /// Checks every length against `sizes`.
    ///
    /// # Errors
    /// [`EngineError::BufferSize`] for the first buffer of the wrong length.
    pub fn check(&self, sizes: &BufferSizes) -> Result<(), EngineError> {
        for (what, got, expected) in [
            ("obs", self.obs.len(), sizes.obs),
            ("final_obs", self.final_obs.len(), sizes.obs),
            ("rewards", self.rewards.len(), sizes.agents),
            ("events", self.events.len(), sizes.agents),
            ("terminated", self.terminated.len(), sizes.envs),
            ("truncated", self.truncated.len(), sizes.envs),
            ("info", self.info.len(), sizes.envs),
        ] {
            if got != expected {
                return Err(EngineError::BufferSize { what, expected, got });
            }
        }
        Ok(())
    }
}

/// Owned outputs of a step, sized once; [`StepBuffers::view`] lends them to an [`Engine`].
#[derive(Debug, Clone, PartialEq)]
pub struct StepBuffers {
    /// `B · K · obs_stride` bytes.
    pub obs: Vec<u8>,
    /// Like `obs`; holds the final observation of environments whose episode just ended.
    pub final_obs: Vec<u8>,
    /// `B · K`.
    pub rewards: Vec<f32>,
    /// `B · K` [`event`] flags.
    pub events: Vec<u32>,
    /// `B`, 0 or 1.
    pub terminated: Vec<u8>,
    /// `B`, 0 or 1.
    pub truncated: Vec<u8>,
    /// `B`.
    pub info: Vec<EnvInfo>,
}

impl StepBuffers {
    /// Buffers of the given sizes, zeroed, or [`TooLarge`] naming the first that cannot be
    /// allocated (as [`StepBuffers::new`], which aborts there).
    ///
    /// # Errors
    /// [`TooLarge`].
    pub fn try_new(sizes: &BufferSizes) -> Result<Self, TooLarge> {
        let what = |name: &'static str| move || format!("the step buffer {name}");
        Ok(Self {
            obs: try_vec(sizes.obs, 0, what("obs"))?,
            final_obs: try_vec(sizes.obs, 0, what("final_obs"))?,
            rewards: try_vec(sizes.agents, 0.0, what("rewards"))?,
            events: try_vec(sizes.agents, 0, what("events"))?,
            terminated: try_vec(sizes.envs, 0, what("terminated"))?,
            truncated: try_vec(sizes.envs, 0, what("truncated"))?,
            info: try_vec(sizes.envs, EnvInfo::default(), what("info"))?,
        })
    }

    /// Buffers of the given sizes (from [`Engine::sizes`] or [`BufferSizes::new`]), zeroed.
    #[must_use]
    pub fn new(sizes: &BufferSizes) -> Self {
        Self {
            obs: vec![0; sizes.obs],
            final_obs: vec![0; sizes.obs],
            rewards: vec![0.0; sizes.agents],
            events: vec![0; sizes.agents],
            terminated: vec![0; sizes.envs],
            truncated: vec![0; sizes.envs],
            info: vec![EnvInfo::default(); sizes.envs],
        }
    }

    /// A view for one call.
    pub fn view(&mut self) -> StepBuffersMut<'_> {
        StepBuffersMut {
            obs: &mut self.obs,
            final_obs: &mut self.final_obs,
            rewards: &mut self.rewards,
            events: &mut self.events,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
            info: &mut self.info,
        }
    }
}

/// The argument checks of [`Engine`]'s methods, shared by every backend so that the same misuse
/// gets the same error. Each runs before a method changes anything.
pub mod checks {
    use super::{BufferSizes, EngineError, StepBuffersMut};

    /// [`super::Engine::reset`]: the buffers' sizes.
    ///
    /// # Errors
    /// A buffer of the wrong length.
    pub fn reset(sizes: &BufferSizes, out: &StepBuffersMut<'_>) -> Result<(), EngineError> {
        out.check(sizes)
    }

    /// [`super::Engine::reset_to`]: reset first, indices in range, the buffers' sizes.
    ///
    /// # Errors
    /// [`EngineError::NotReset`], an index out of range, a buffer of the wrong length.
    pub fn reset_to(
        sizes: &BufferSizes,
        was_reset: bool,
        pool_len: usize,
        env: usize,
        instance: usize,
        out: &StepBuffersMut<'_>,
    ) -> Result<(), EngineError> {
        if !was_reset {
            return Err(EngineError::NotReset("reset_to"));
        }
        if env >= sizes.num_envs || instance >= pool_len {
            return Err(EngineError::Invalid(format!(
                "reset_to(env {env}, instance {instance}): there are {} environments and {pool_len} instances",
                sizes.num_envs
            )));
        }
        out.check(sizes)
    }

    /// [`super::Engine::step`]: reset first, the buffers' sizes, `B·K` actions, each 0..=4.
    ///
    /// # Errors
    /// [`EngineError::NotReset`], a buffer of the wrong length, an action code above 4.
    pub fn step(
        sizes: &BufferSizes,
        was_reset: bool,
        actions: &[u8],
        out: &StepBuffersMut<'_>,
    ) -> Result<(), EngineError> {
        if !was_reset {
            return Err(EngineError::NotReset("step"));
        }
        out.check(sizes)?;
        if actions.len() != sizes.actions {
            return Err(EngineError::BufferSize {
                what: "actions",
                expected: sizes.actions,
                got: actions.len(),
            });
        }
        if let Some(i) = actions.iter().position(|&a| a > 4) {
            return Err(EngineError::Invalid(format!("action {} at index {i} is not 0..=4", actions[i])));
        }
        Ok(())
    }

    /// [`super::Engine::refill`]: reset first, as many levels as slots, slots in range and
    /// distinct, every level fitting the pool's room, the buffers' sizes.
    ///
    /// # Errors
    /// [`EngineError::NotReset`], a slot or level that breaks these rules, a buffer of the
    /// wrong length.
    pub fn refill(
        sizes: &BufferSizes,
        was_reset: bool,
        pool: &crate::pool::InstancePool,
        slots: &[usize],
        levels: &[crate::instance::Instance],
        out: &StepBuffersMut<'_>,
    ) -> Result<(), EngineError> {
        if !was_reset {
            return Err(EngineError::NotReset("refill"));
        }
        if slots.len() != levels.len() {
            return Err(EngineError::Invalid(format!(
                "refill: {} slots but {} levels: give one level per slot",
                slots.len(),
                levels.len()
            )));
        }
        let mut seen = std::collections::HashSet::with_capacity(slots.len());
        for (&slot, level) in slots.iter().zip(levels) {
            if slot >= pool.len() {
                return Err(EngineError::Invalid(format!(
                    "refill: slot {slot} is out of range: the pool has {} slots",
                    pool.len()
                )));
            }
            if !seen.insert(slot) {
                return Err(EngineError::Invalid(format!("refill: slot {slot} is named twice")));
            }
            pool.check_fits(level).map_err(|e| EngineError::Invalid(format!("refill: slot {slot}: {e}")))?;
        }
        out.check(sizes)
    }

    /// [`super::Engine::check_outputs`]: reset first, the buffers' sizes, one return per
    /// environment when given.
    ///
    /// # Errors
    /// [`EngineError::NotReset`], a buffer of the wrong length.
    pub fn outputs(
        sizes: &BufferSizes,
        was_reset: bool,
        out: &StepBuffersMut<'_>,
        returns: Option<&[f32]>,
    ) -> Result<(), EngineError> {
        if !was_reset {
            return Err(EngineError::NotReset("check_outputs"));
        }
        out.check(sizes)?;
        match returns {
            Some(r) if r.len() != sizes.num_envs => {
                Err(EngineError::BufferSize { what: "returns", expected: sizes.num_envs, got: r.len() })
            }
            _ => Ok(()),
        }
    }

    /// [`super::Engine::global_state`]: the buffer's size.
    ///
    /// # Errors
    /// A buffer of the wrong length.
    pub fn global_state(sizes: &BufferSizes, out: &[u8]) -> Result<(), EngineError> {
        if out.len() != sizes.global_state {
            return Err(EngineError::BufferSize {
                what: "global state",
                expected: sizes.global_state,
                got: out.len(),
            });
        }
        Ok(())
    }
}
