//! # floe-plugin-registry
//!
//! The plugin registry: resolves a [`PluginSpec`] (a built-in name, or a library path and a
//! name, plus parameters as JSON) into a plugin behind the api's traits. The CLI, the trainer's
//! callers and the C API all resolve plugins here, so a configuration means the same thing
//! everywhere.
//!
//! Built-ins are `floe-plugins`' catalog (rewards `tiered`, `shaped`; curricula `fixed`,
//! `difficulty-scaling`, `plr`, `sec`, `frontier`, `schedule`; engineer `rules`; level samplers
//! `uniform`, `plr`, `learnability`, and every curriculum and the engineer designing phases of
//! level sampling: [`level_sampler`], [`levels`]) and the
//! language-model engineers of `floe-llm` (`endpoint`, and `embedded` when built with the
//! `embedded` feature). A spec with
//! `library` loads that library ([`floe_plugin_host::load`]) and asks it for the named plugin; the plugin
//! keeps what it needs of the library loaded (a C instance holds its library; abi_stable
//! libraries are never unloaded).
//!
//! Engines open here too ([`open_engine`]): an engine spec may name a step-reward plugin, which
//! floe-core carries but cannot load.
//!
//! The registry sits above the host, which only loads libraries, and above the built-ins and the
//! language-model engineers it names: every arrow between these crates points down.

mod levels;
pub mod phases;

pub use levels::{designs_phases, level_sampler, levels};

use floe_plugin_api::catalog::{new_curriculum, new_engineer, new_reward};
use floe_plugin_api::{
    Capabilities, Curriculum, Entry, EnvEngineer, PluginError, PluginKind, PluginSpec, Plugins, RewardFn,
};
use std::sync::Arc;

use floe_core::engine::{Engine, EngineSpec as CoreSpec, InstancePool, OpenError};
use floe_plugin_api::stepping::RewardedEngine;
use thiserror::Error;

use floe_plugin_host::{Library, LoadError};

/// Why a spec could not be resolved.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The spec's library did not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The plugin is unknown, or its constructor refused its parameters.
    #[error("{kind} `{name}`: {source}")]
    Plugin {
        /// The kind asked for.
        kind: PluginKind,
        /// The plugin's name.
        name: String,
        /// Why.
        #[source]
        source: PluginError,
    },
    /// The engine did not open.
    #[error(transparent)]
    Engine(#[from] OpenError),
    /// A level sampler's driver could not be made (its level space out of range).
    #[error(transparent)]
    Levels(#[from] floe_levels::LevelsError),
    /// A reward that scores only whole plans was named as an engine's step reward.
    #[error(
        "reward `{name}` scores whole verified plans, not steps: an engine's step_reward needs a reward \
         that scores step outcomes, such as `shaped`"
    )]
    PlanOnlyReward {
        /// The reward's name.
        name: String,
    },
    /// A reward that scores only steps was asked to score whole plans.
    #[error(
        "reward `{name}` rewards only steps (step outcomes of the batched engine), but GRPO on plans scores \
         whole verified plans: use a reward that scores verdicts, such as `tiered`"
    )]
    StepOnlyReward {
        /// The reward's name.
        name: String,
    },
}

fn plugin_error(kind: PluginKind, spec: &PluginSpec) -> impl Fn(PluginError) -> RegistryError + '_ {
    move |source| RegistryError::Plugin { kind, name: spec.name.clone(), source }
}

/// What the plugin `name` of `kind` declared, in a library or among the built-ins.
fn declared(lib: Option<&Library>, kind: PluginKind, name: &str) -> Capabilities {
    let info = match lib {
        Some(l) => l.info(kind, name).cloned(),
        None => floe_plugins::catalog().iter().find(|e| e.kind() == kind && e.name == name).map(Entry::info),
    };
    // A plugin that was just made is listed; `NONE` only if a library lists it under no name.
    info.map_or(Capabilities::NONE, |i| i.capabilities)
}

/// Makes the plugin of `kind` a spec names, with what it declared: from the spec's library
/// (`from_library`), or from the built-ins (`built_in`).
fn resolve<T: ?Sized>(
    spec: &PluginSpec,
    kind: PluginKind,
    from_library: impl FnOnce(&Library, &str, &str) -> Result<Box<T>, PluginError>,
    built_in: impl FnOnce(&[Entry], &str, &str) -> Result<Box<T>, PluginError>,
) -> Result<(Box<T>, Capabilities), RegistryError> {
    let err = plugin_error(kind, spec);
    let params = spec.params_text();
    let (made, lib) = match &spec.library {
        Some(path) => {
            let lib = floe_plugin_host::load(path)?;
            (from_library(&lib, &spec.name, &params).map_err(err)?, Some(lib))
        }
        None => (built_in(&floe_plugins::catalog(), &spec.name, &params).map_err(err)?, None),
    };
    Ok((made, declared(lib.as_ref(), kind, &spec.name)))
}

/// Makes the reward function a spec names, with what it declared.
fn resolve_reward(spec: &PluginSpec) -> Result<(Box<dyn RewardFn>, Capabilities), RegistryError> {
    resolve(spec, PluginKind::Reward, |lib, name, params| lib.new_reward(name, params), new_reward)
}

/// Makes the curriculum a spec names, with what it declared.
fn resolve_curriculum(spec: &PluginSpec) -> Result<(Box<dyn Curriculum>, Capabilities), RegistryError> {
    resolve(
        spec,
        PluginKind::Curriculum,
        |lib, name, params| lib.new_curriculum(name, params),
        new_curriculum,
    )
}

/// Makes the reward function a spec names.
///
/// # Errors
/// A library that does not load, an unknown name, parameters the plugin refuses.
pub fn reward(spec: &PluginSpec) -> Result<Box<dyn RewardFn>, RegistryError> {
    resolve_reward(spec).map(|(r, _)| r)
}

/// Makes the reward function a spec names, for scoring whole plans (plan-level GRPO): as
/// [`reward`], and the plugin must declare [`Capabilities::SCORES_PLANS`], so that a reward
/// which scores only steps is refused here, when the configuration is read, rather than at the
/// first GRPO step.
///
/// # Errors
/// As [`reward`]; [`RegistryError::StepOnlyReward`] for a reward that does not score plans.
pub fn plan_reward(spec: &PluginSpec) -> Result<Box<dyn RewardFn>, RegistryError> {
    let (r, capabilities) = resolve_reward(spec)?;
    if !capabilities.contains(Capabilities::SCORES_PLANS) {
        return Err(RegistryError::StepOnlyReward { name: spec.name.clone() });
    }
    Ok(r)
}

/// Makes the reward function a spec names, for scoring an engine's steps: as [`reward`], and
/// the plugin must declare [`Capabilities::SCORES_STEPS`].
///
/// # Errors
/// As [`reward`]; [`RegistryError::PlanOnlyReward`] for a reward that does not score steps.
pub fn step_reward(spec: &PluginSpec) -> Result<Box<dyn RewardFn>, RegistryError> {
    let (r, capabilities) = resolve_reward(spec)?;
    if !capabilities.contains(Capabilities::SCORES_STEPS) {
        return Err(RegistryError::PlanOnlyReward { name: spec.name.clone() });
    }
    Ok(r)
}

/// An engine to open, with the reward plugin that may score its steps: floe-core's
/// [`CoreSpec`] (backend and configuration) and `step_reward`. In JSON, one object: floe-core's
/// fields and `"step_reward"` (a [`PluginSpec`]: `{"name": …, "params": …, "library": …}`),
/// all optional; unknown fields are errors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineSpec {
    /// The engine itself.
    pub engine: CoreSpec,
    /// A reward plugin that scores every step in place of the configuration's reward weights:
    /// called once per step batch with one step outcome per agent in play.
    pub step_reward: Option<PluginSpec>,
}

impl EngineSpec {
    /// Reads a spec from a JSON value, which must be an object.
    ///
    /// # Errors
    /// [`OpenError::Config`]: what floe-core's [`CoreSpec::from_json`] refuses, or a
    /// `step_reward` that is not a plugin spec.
    pub fn from_json(mut value: serde_json::Value) -> Result<Self, OpenError> {
        let step_reward = match value.as_object_mut().and_then(|o| o.remove("step_reward")) {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(serde_json::from_value(v).map_err(|e| {
                OpenError::Config(format!(
                    "step_reward: {e} (a plugin spec: {{\"name\": ..., \"params\": ..., \"library\": ...}})"
                ))
            })?),
        };
        Ok(Self { engine: CoreSpec::from_json(value)?, step_reward })
    }

    /// Reads a spec from JSON text (see [`EngineSpec::from_json`]).
    ///
    /// # Errors
    /// [`OpenError::Config`]: text that is not JSON, or what [`EngineSpec::from_json`] refuses.
    pub fn from_json_text(text: &str) -> Result<Self, OpenError> {
        let value = floe_core::json::from_str(text)
            .map_err(|e| OpenError::Config(format!("engine configuration: {e}")))?;
        Self::from_json(value)
    }

    /// The spec as one JSON object, every field written (the inverse of
    /// [`EngineSpec::from_json`]).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.engine.to_json();
        if let (Some(o), Some(r)) = (v.as_object_mut(), &self.step_reward) {
            o.insert("step_reward".into(), serde_json::to_value(r).unwrap_or_default());
        }
        v
    }
}

/// Opens the engine `spec` describes, playing `pool`'s instances: floe-core's
/// [`open`](floe_core::engine::open()), and with a `step_reward` the plugin it names (through
/// [`step_reward`]) scoring every step ([`RewardedEngine`]). The C API and Python open engines
/// here.
///
/// # Errors
/// [`RegistryError::Engine`] for what floe-core refuses; as [`step_reward`] for the plugin.
pub fn open_engine(spec: &EngineSpec, pool: Arc<InstancePool>) -> Result<Box<dyn Engine>, RegistryError> {
    let Some(reward_spec) = &spec.step_reward else {
        return Ok(floe_core::engine::open(&spec.engine, pool)?);
    };
    let reward = step_reward(reward_spec)?;
    let inner = floe_core::engine::open(&spec.engine, pool)?;
    Ok(Box::new(RewardedEngine::new(inner, reward)))
}

/// Makes the curriculum a spec names.
///
/// # Errors
/// As [`reward`].
pub fn curriculum(spec: &PluginSpec) -> Result<Box<dyn Curriculum>, RegistryError> {
    resolve_curriculum(spec).map(|(c, _)| c)
}

/// Makes the curriculum a spec names, with whether it declared that it chooses instances to
/// replay.
///
/// # Errors
/// As [`reward`].
pub fn curriculum_with_replays(spec: &PluginSpec) -> Result<(Box<dyn Curriculum>, bool), RegistryError> {
    resolve_curriculum(spec).map(|(c, caps)| (c, caps.contains(Capabilities::REPLAYS)))
}

/// Makes the environment engineer a spec names.
///
/// # Errors
/// As [`reward`].
pub fn engineer(spec: &PluginSpec) -> Result<Box<dyn EnvEngineer>, RegistryError> {
    let err = plugin_error(PluginKind::EnvEngineer, spec);
    match &spec.library {
        Some(path) => {
            floe_plugin_host::load(path)?.new_engineer(&spec.name, &spec.params_text()).map_err(err)
        }
        None => match floe_llm::new_engineer(&spec.name, &spec.params_text()) {
            Some(made) => made.map_err(err),
            None => new_engineer(&floe_plugins::catalog(), &spec.name, &spec.params_text()).map_err(err),
        },
    }
}

/// The plugins of a training run from its specs (`rounds.reward`, `rounds.curriculum`,
/// `rounds.engineer`): the reward through [`plan_reward`], so it must score plans, and the
/// curriculum with whether it declared that it replays. A run's rounds resolve theirs through
/// [`rounds_plugins`].
///
/// # Errors
/// What [`plan_reward`], [`curriculum`] or [`engineer`] refuses.
pub fn plugins(
    reward: &PluginSpec,
    curriculum_spec: Option<&PluginSpec>,
    engineer_spec: Option<&PluginSpec>,
) -> Result<Plugins, RegistryError> {
    let reward = plan_reward(reward)?;
    let curriculum = curriculum_spec.map(resolve_curriculum).transpose()?;
    let curriculum_replays = curriculum.as_ref().is_some_and(|(_, c)| c.contains(Capabilities::REPLAYS));
    Ok(Plugins {
        reward,
        curriculum: curriculum.map(|(c, _)| c),
        curriculum_replays,
        engineer: engineer_spec.map(engineer).transpose()?,
    })
}

/// The plugins a run's rounds name (`reward`, `curriculum` and `engineer` of a
/// [`floe_rounds::RoundsConfig`]), resolved by [`plugins`]. `floe train`, `floe experiment`, the
/// C API and the tests resolve a run's plugins here, so a configuration means the same plugins
/// everywhere.
///
/// # Errors
/// What [`plugins`] refuses.
pub fn rounds_plugins(rounds: &floe_rounds::RoundsConfig) -> Result<Plugins, RegistryError> {
    plugins(&rounds.reward, rounds.curriculum.as_ref(), rounds.engineer.as_ref())
}

#[cfg(test)]
mod tests {
    use floe_plugin_api::VerdictRecord;

    use super::*;

    #[test]
    fn builtins_resolve_and_step_rewards_are_refused_for_plans() {
        let mut t = plan_reward(&PluginSpec::builtin("tiered")).unwrap();
        let mut out = [0.0];
        let rec = VerdictRecord {
            failure: 0,
            optimal: 1,
            reserved: [0; 2],
            num_agents: 3,
            agents_on_goal: 3,
            legal_steps: 4,
            horizon: 4,
            soc: 9,
            optimal_soc: 9,
        };
        t.verdict_rewards(&[rec], &mut out).unwrap();
        assert_eq!(out[0], 1.0);
        reward(&PluginSpec::builtin("shaped")).unwrap();
        let e = plan_reward(&PluginSpec::builtin("shaped")).err().unwrap();
        assert!(matches!(e, RegistryError::StepOnlyReward { .. }));
        assert!(e.to_string().contains("rewards only steps"), "{e}");
        curriculum(&PluginSpec::builtin("plr")).unwrap();
        // A run's curriculum comes with what it declared.
        let run =
            |c: &str| plugins(&PluginSpec::builtin("tiered"), Some(&PluginSpec::builtin(c)), None).unwrap();
        assert!(run("plr").curriculum_replays && run("fixed").curriculum_replays);
        assert!(!run("sec").curriculum_replays && !run("difficulty-scaling").curriculum_replays);
        assert!(!plugins(&PluginSpec::builtin("tiered"), None, None).unwrap().curriculum_replays);
        engineer(&PluginSpec::builtin("rules")).unwrap();
        let e = curriculum(&PluginSpec::builtin("tiered")).err().unwrap();
        assert!(e.to_string().starts_with("curriculum `tiered`"), "{e}");
        let bad = PluginSpec { params: serde_json::json!({"no_such_knob": 1}), ..PluginSpec::builtin("sec") };
        assert!(matches!(curriculum(&bad), Err(RegistryError::Plugin { .. })));
        let missing = PluginSpec { library: Some("/no/such/lib.so".into()), ..PluginSpec::builtin("x") };
        assert!(matches!(reward(&missing), Err(RegistryError::Load(_))));
    }

    #[test]
    fn an_engine_spec_names_its_step_reward() {
        use floe_core::engine::{InstancePool, Optima, StepBuffers};
        use floe_core::generator::{generate, GeneratorConfig};

        let levels =
            generate(&GeneratorConfig::default().size(5).agents(3).hole_ratio(0.2).count(4).seed(2)).unwrap();
        let pool = Arc::new(InstancePool::new(&levels, Optima::AsStored).unwrap());
        let spec = |extra: &str| {
            EngineSpec::from_json_text(&format!(r#"{{"num_envs": 4, "mode": "soft"{extra}}}"#)).unwrap()
        };
        let run = |spec: &EngineSpec| {
            let mut env = open_engine(spec, Arc::clone(&pool)).unwrap();
            let mut out = StepBuffers::new(&env.sizes());
            env.reset(1, out.view()).unwrap();
            let mut rewards = Vec::new();
            for t in 0..6u8 {
                let actions: Vec<u8> = (0..out.rewards.len() as u8).map(|i| (i + t) % 5).collect();
                env.step(&actions, out.view()).unwrap();
                rewards.extend_from_slice(&out.rewards);
            }
            (rewards, out.events)
        };
        let (own, own_events) = run(&spec(""));
        let (shaped, shaped_events) = run(&spec(r#", "step_reward": {"name": "shaped"}"#));
        let (goal, _) = run(&spec(r#", "step_reward": {"name": "shaped", "params": {"step_cost": 0.5}}"#));
        assert_eq!(own_events, shaped_events, "the step itself is the engine's");
        assert_ne!(own, shaped);
        assert_ne!(shaped, goal, "the plugin's parameters reach it");
        // Every shaped reward is a sum of the plugin's terms: 0.1 per cell of progress, -0.01 a
        // step, the event weights; none is the engine's own -0.0625 step.
        assert!(shaped.iter().all(|&r| (r + 0.0625).abs() > 1e-6), "{shaped:?}");

        let refused = |extra: &str| open_engine(&spec(extra), Arc::clone(&pool)).err().unwrap();
        let e = refused(r#", "step_reward": {"name": "tiered"}"#);
        assert!(matches!(e, RegistryError::PlanOnlyReward { .. }) && e.to_string().contains("shaped"), "{e}");
        let e = refused(r#", "step_reward": {"name": "nope"}"#);
        assert!(matches!(e, RegistryError::Plugin { source: PluginError::UnknownPlugin(_), .. }), "{e}");
        let e = refused(r#", "step_reward": {"name": "shaped", "params": {"gamma": 2}}"#);
        // The spec reads and writes its step reward beside floe-core's fields.
        let rewarded = spec(r#", "step_reward": {"name": "shaped", "params": {"goal": 2}}"#);
        assert_eq!(rewarded.step_reward.as_ref().map(|r| r.name.as_str()), Some("shaped"));
        assert_eq!(EngineSpec::from_json(rewarded.to_json()).unwrap(), rewarded);
        assert_eq!(EngineSpec::from_json_text(r#"{"step_reward": null}"#).unwrap(), EngineSpec::default());
        for bad in
            [r#"{"step_reward": "shaped"}"#, r#"{"step_reward": {"nam": "shaped"}}"#, r#"{"num_env": 1}"#]
        {
            assert!(matches!(EngineSpec::from_json_text(bad), Err(OpenError::Config(_))), "{bad}");
        }
        assert!(matches!(e, RegistryError::Plugin { source: PluginError::Config(_), .. }), "{e}");
        let e = open_engine(
            &EngineSpec::from_json_text(r#"{"num_envs": 0, "step_reward": {"name": "shaped"}}"#).unwrap(),
            Arc::clone(&pool),
        )
        .err()
        .unwrap();
        assert!(matches!(e, RegistryError::Engine(OpenError::Config(_))), "{e}");
    }
}
