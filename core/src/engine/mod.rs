//! The batched engine: B environments of up to K agents each stepped together, and N plans
//! verified together, on the CPU ([`cpu`], the reference) and, with the `gpu` feature, in wgpu
//! compute shaders (`gpu`, WGSL in `shaders/`). Both backends give identical integer outputs
//! (and bit-identical rewards).
//!
//! # Conventions (Gymnasium vector-env / EnvPool style)
//! | what | choice |
//! |---|---|
//! | actions | per agent `u8`: 0 wait, 1 up, 2 down, 3 left, 4 right; `B·K` of them, padding slots ignored |
//! | observation | per agent, 3 channels × (2r+1)² `u8`: holes (cells off the grid count as holes), other agents, own goal; padded to a multiple of 4 bytes ([`obs_stride`]) |
//! | global state | [`CpuEngine::global_state`]: `B × 3 × S × S` bytes |
//! | rewards | per agent `f32`, [`RewardWeights::reward`] of its events |
//! | terminated | every active agent on its goal, or (strict) a failure, or (soft) nobody left |
//! | truncated | the episode reached `episode_limit` steps without terminating |
//! | auto-reset | **same step**: an environment whose episode ended writes its final observation into `final_obs` (valid only where `terminated` or `truncated` is set), resets, and returns the new episode's first observation in `obs`; `info` describes the episode that ended |
//! | seeds | environment `e` uses `seed + e`; episode `n` plays pool instance `pool_pick(seed + e, n)`, a counter-based hash, so results do not depend on backend, batch size or threads |
//! | replay | [`CpuEngine::reset_to`] puts an environment on an exact pool instance |
//! | memory | per agent one `u32` (cell and active bit); per environment 4 `u32` (dims, step, episode, pool instance); goals and hole bits are read from the instance pool |
//!
//! The caller owns every output buffer ([`StepBuffers`]); a step allocates nothing.
//!
//! ```
//! use std::sync::Arc;
//! use floe_core::engine::{CollisionMode, CpuEngine, EnvConfig, InstancePool, StepBuffers};
//! use floe_core::generator::{generate, GeneratorConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let levels = generate(&GeneratorConfig::square(5, 3, 0.1, 0.5, 8, 7))?;
//! let pool = Arc::new(InstancePool::new(&levels, false)?);
//! let cfg = EnvConfig { num_envs: 16, mode: CollisionMode::Soft, ..EnvConfig::default() };
//! let mut env = CpuEngine::new(cfg.clone(), Arc::clone(&pool))?;
//! let mut out = StepBuffers::new(&cfg, pool.max_agents);
//! env.reset(42, &mut out)?;
//! let actions = vec![0u8; cfg.num_envs * pool.max_agents]; // everybody waits
//! env.step(&actions, &mut out)?;
//! assert!(out.events.iter().all(|&e| e & floe_core::engine::event::MOVED == 0));
//! env.reset_to(0, 3, &mut out)?;
//! # Ok(())
//! # }
//! ```

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod hash;
pub mod layout;
pub mod pool;
pub mod shaders;
pub mod verify_batch;

pub use cpu::{Actions, CpuEngine, EnvState, MAX_OBS_RADIUS};
pub use layout::{
    event, obs_stride, outcome, CollisionMode, EnvConfig, EnvInfo, HoleRule, RewardWeights, VerifyOut, NONE,
};
pub use pool::{EngineError, InstancePool};
pub use verify_batch::{verify_batch_cpu, PlanBatch};

/// Caller-owned outputs of a step, sized once for a configuration.
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
    /// Buffers for `cfg` with `max_agents` agent slots per environment.
    #[must_use]
    pub fn new(cfg: &EnvConfig, max_agents: usize) -> Self {
        let (b, k, s) = (cfg.num_envs, max_agents, obs_stride(cfg.obs_radius));
        Self {
            obs: vec![0; b * k * s],
            final_obs: vec![0; b * k * s],
            rewards: vec![0.0; b * k],
            events: vec![0; b * k],
            terminated: vec![0; b],
            truncated: vec![0; b],
            info: vec![EnvInfo::default(); b],
        }
    }

    pub(crate) fn check(&self, cfg: &EnvConfig, max_agents: usize) -> Result<(), EngineError> {
        let (b, k, s) = (cfg.num_envs, max_agents, obs_stride(cfg.obs_radius));
        for (what, got, expected) in [
            ("obs", self.obs.len(), b * k * s),
            ("final_obs", self.final_obs.len(), b * k * s),
            ("rewards", self.rewards.len(), b * k),
            ("events", self.events.len(), b * k),
            ("terminated", self.terminated.len(), b),
            ("truncated", self.truncated.len(), b),
            ("info", self.info.len(), b),
        ] {
            if got != expected {
                return Err(EngineError::BufferSize { what, expected, got });
            }
        }
        Ok(())
    }
}
