//! What the driver's tests share: a level space, a reset CPU engine over it, a sampler's spec,
//! and random steps.
#![allow(dead_code)]

use std::sync::Arc;

use floe_core::engine::{CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers};
use floe_core::rng::Rng;
use floe_levels::{LevelSource, LevelSpace, Levels, LevelsSpec};
use floe_plugin_api::PluginSpec;
use floe_plugin_registry::RegistryError;

pub fn space() -> LevelSpace {
    LevelSpace { agents: [2, 3], size: [5, 7], hole_ratio: [0.0, 0.2], wait_ratio: [0.0, 0.5], solve: false }
}

/// An engine of `envs` environments over `slots` levels of the space, reset.
pub fn engine(envs: usize, slots: usize) -> (CpuEngine, StepBuffers) {
    let levels = LevelSource::new(space(), 99).unwrap().draw(slots).unwrap();
    let pool = Arc::new(InstancePool::with_room(&levels, Optima::AsStored, space().room()).unwrap());
    let cfg =
        EnvConfig { num_envs: envs, mode: CollisionMode::Soft, episode_limit: 8, ..EnvConfig::default() };
    let mut e = CpuEngine::new(cfg, pool).unwrap();
    let mut out = StepBuffers::new(&e.sizes());
    e.reset(1, out.view()).unwrap();
    (e, out)
}

pub fn spec(name: &str, params: serde_json::Value, update_every: u32) -> LevelsSpec {
    LevelsSpec {
        sampler: PluginSpec { name: name.into(), params, library: None },
        space: space(),
        source: None,
        seed: 5,
        update_every,
    }
}

pub fn run(levels: &mut Levels, env: &mut CpuEngine, out: &mut StepBuffers, steps: usize) {
    let mut rng = Rng::from_counters(&[7]);
    for _ in 0..steps {
        let actions: Vec<u8> = (0..out.rewards.len()).map(|_| rng.below(5) as u8).collect();
        env.step(&actions, out.view()).unwrap();
        levels.after_step(env, out.view()).unwrap();
    }
}

/// A spec's driver, made by the registry as every host makes it.
pub trait Make {
    fn levels(&self) -> Levels;
    fn levels_err(&self) -> RegistryError;
}

impl Make for LevelsSpec {
    fn levels(&self) -> Levels {
        floe_plugin_registry::levels(self).unwrap()
    }

    fn levels_err(&self) -> RegistryError {
        floe_plugin_registry::levels(self).expect_err("the registry refuses the spec")
    }
}
