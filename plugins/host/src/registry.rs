//! The plugin registry: resolves a [`PluginSpec`] (a built-in name, or a library path and a
//! name, plus parameters as JSON) into a plugin behind the api's traits. The CLI, the trainer's
//! callers and the C API all resolve plugins here, so a configuration means the same thing
//! everywhere.
//!
//! Built-ins are `floe-plugins`' catalog (rewards `tiered`, `shaped`; curricula `fixed`,
//! `difficulty-scaling`, `plr`, `sec`; engineer `rules`) and the language-model engineers of
//! `floe-llm` (`endpoint`, and `embedded` when built with the `embedded` feature). A spec with
//! `library` loads that library ([`crate::load`]) and asks it for the named plugin; the plugin
//! keeps what it needs of the library loaded (a C instance holds its library; abi_stable
//! libraries are never unloaded).

use floe_plugin_api::catalog::{new_curriculum, new_engineer, new_reward};
use floe_plugin_api::{
    Curriculum, EnvEngineer, PluginError, PluginKind, PluginSpec, Plugins, RewardFn, VerdictRecord,
};
use thiserror::Error;

use crate::LoadError;

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

/// Makes the reward function a spec names.
///
/// # Errors
/// A library that does not load, an unknown name, parameters the plugin refuses.
pub fn reward(spec: &PluginSpec) -> Result<Box<dyn RewardFn>, RegistryError> {
    let err = plugin_error(PluginKind::Reward, spec);
    match &spec.library {
        Some(path) => crate::load(path)?.new_reward(&spec.name, &spec.params_text()).map_err(err),
        None => new_reward(&floe_plugins::catalog(), &spec.name, &spec.params_text()).map_err(err),
    }
}

/// Makes the reward function a spec names, for scoring whole plans (plan-level GRPO): as
/// [`reward`], and the plugin is asked once for the reward of one valid, optimal 2-agent plan,
/// so that a reward which scores only steps is refused here, when the configuration is read,
/// rather than at the first GRPO step.
///
/// # Errors
/// As [`reward`]; [`RegistryError::StepOnlyReward`] for a reward without verdict rewards, and the
/// plugin's error if the probe fails otherwise.
pub fn plan_reward(spec: &PluginSpec) -> Result<Box<dyn RewardFn>, RegistryError> {
    let mut r = reward(spec)?;
    let probe = VerdictRecord {
        failure: 0,
        optimal: 1,
        reserved: [0; 2],
        num_agents: 2,
        agents_on_goal: 2,
        legal_steps: 3,
        horizon: 3,
        soc: 5,
        optimal_soc: 5,
    };
    let mut out = [0.0f32];
    match r.verdict_rewards(&[probe], &mut out) {
        Ok(()) => Ok(r),
        Err(PluginError::Unsupported(_)) => Err(RegistryError::StepOnlyReward { name: spec.name.clone() }),
        Err(e) => Err(plugin_error(PluginKind::Reward, spec)(e)),
    }
}

/// Makes the curriculum a spec names.
///
/// # Errors
/// As [`reward`].
pub fn curriculum(spec: &PluginSpec) -> Result<Box<dyn Curriculum>, RegistryError> {
    let err = plugin_error(PluginKind::Curriculum, spec);
    match &spec.library {
        Some(path) => crate::load(path)?.new_curriculum(&spec.name, &spec.params_text()).map_err(err),
        None => new_curriculum(&floe_plugins::catalog(), &spec.name, &spec.params_text()).map_err(err),
    }
}

/// Makes the environment engineer a spec names.
///
/// # Errors
/// As [`reward`].
pub fn engineer(spec: &PluginSpec) -> Result<Box<dyn EnvEngineer>, RegistryError> {
    let err = plugin_error(PluginKind::EnvEngineer, spec);
    match &spec.library {
        Some(path) => crate::load(path)?.new_engineer(&spec.name, &spec.params_text()).map_err(err),
        None => match floe_llm::new_engineer(&spec.name, &spec.params_text()) {
            Some(made) => made.map_err(err),
            None => new_engineer(&floe_plugins::catalog(), &spec.name, &spec.params_text()).map_err(err),
        },
    }
}

/// The plugins of a training run from its specs (`rounds.reward`, `rounds.curriculum`,
/// `rounds.engineer`): the reward through [`plan_reward`], so it must score plans. `floe train`,
/// the C API and the tests resolve a run's plugins here.
///
/// # Errors
/// What [`plan_reward`], [`curriculum`] or [`engineer`] refuses.
pub fn plugins(
    reward: &PluginSpec,
    curriculum_spec: Option<&PluginSpec>,
    engineer_spec: Option<&PluginSpec>,
) -> Result<Plugins, RegistryError> {
    Ok(Plugins {
        reward: plan_reward(reward)?,
        curriculum: curriculum_spec.map(curriculum).transpose()?,
        engineer: engineer_spec.map(engineer).transpose()?,
    })
}

#[cfg(test)]
mod tests {
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
        engineer(&PluginSpec::builtin("rules")).unwrap();
        let e = curriculum(&PluginSpec::builtin("tiered")).err().unwrap();
        assert!(e.to_string().starts_with("curriculum `tiered`"), "{e}");
        let bad = PluginSpec { params: serde_json::json!({"no_such_knob": 1}), ..PluginSpec::builtin("sec") };
        assert!(matches!(curriculum(&bad), Err(RegistryError::Plugin { .. })));
        let missing = PluginSpec { library: Some("/no/such/lib.so".into()), ..PluginSpec::builtin("x") };
        assert!(matches!(reward(&missing), Err(RegistryError::Load(_))));
    }
}
