//! A level sampler's settings as one JSON object ([`LevelsSpec`]), and the sampler a name makes
//! ([`sampler`]): the built-ins and library plugins through the registry, and the samplers over
//! generator configurations, which live here because they need floe-rounds' context.

use floe_plugin_api::{LevelSampler, PluginSpec};
use floe_rounds::context::ContextOptions;
use serde::{Deserialize, Serialize};

use crate::driver::Levels;
use crate::error::LevelsError;
use crate::phases::{Designer, PhaseSampler};
use crate::space::{LevelSource, LevelSpace};

/// The samplers that redesign the generator configuration between phases ([`crate::phases`]).
pub const PHASE_SAMPLERS: [&str; 3] = ["frontier", "difficulty-scaling", "engineer"];

/// Every setting of a level sampler. In JSON every field is optional:
///
/// ```json
/// {"sampler": {"name": "plr", "params": {"replay_prob": 0.8}},
///  "space": {"agents": [2, 4], "size": [5, 10], "hole_ratio": [0, 0.3], "wait_ratio": [0, 1], "solve": true},
///  "seed": 0, "update_every": 0}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelsSpec {
    /// The sampler: `uniform`, `plr`, `learnability`, `frontier`, `difficulty-scaling`,
    /// `engineer`, or one from a library (Rust or C) \[`uniform`\].
    pub sampler: PluginSpec,
    /// Where new levels come from.
    pub space: LevelSpace,
    /// The seed of new levels \[0\].
    pub seed: u64,
    /// Steps between the sampler's calls when the host leaves them to the driver (0: only when
    /// the host calls) \[0\].
    pub update_every: u32,
}

impl Default for LevelsSpec {
    fn default() -> Self {
        LevelsSpec {
            sampler: PluginSpec::builtin("uniform"),
            space: LevelSpace::default(),
            seed: 0,
            update_every: 0,
        }
    }
}

impl LevelsSpec {
    /// Reads a spec from JSON text (an object; unknown fields are errors).
    ///
    /// # Errors
    /// [`LevelsError::Config`] with serde's reason.
    pub fn from_json(text: &str) -> Result<Self, LevelsError> {
        floe_core::json::from_str(text)
            .map_err(|e| LevelsError::Config(format!("level sampler settings: {e}")))
    }

    /// The driver these settings describe.
    ///
    /// # Errors
    /// A space out of range, or a sampler that cannot be made ([`sampler`]).
    pub fn build(&self) -> Result<Levels, LevelsError> {
        let source = LevelSource::new(self.space.clone(), self.seed)?;
        let sampler = sampler(&self.sampler, &self.space)?;
        Ok(Levels::new(&self.sampler.name, sampler, source, self.update_every))
    }
}

/// The parameters of the samplers over generator configurations.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseParams {
    /// Ended episodes a phase.
    #[serde(default = "default_phase_episodes")]
    phase_episodes: u32,
    /// Phases a run is planned to have (the engineer's module T says it).
    #[serde(default = "default_phases")]
    phases: u32,
    /// `frontier`, `difficulty-scaling`: the curriculum's own parameters.
    #[serde(default)]
    curriculum: serde_json::Value,
    /// `engineer`: the engineer (a plugin spec) \[the embedded model\].
    #[serde(default)]
    engineer: Option<PluginSpec>,
    /// `engineer`: how its context is assembled.
    #[serde(default)]
    context: Option<ContextOptions>,
}

fn default_phase_episodes() -> u32 {
    1024
}

fn default_phases() -> u32 {
    8
}

/// The sampler `spec` names, over `space` (the engineer's design limits are the space's).
///
/// # Errors
/// [`LevelsError::Config`] for parameters a phase sampler refuses, [`LevelsError::Registry`] for
/// an unknown name, parameters the plugin refuses, or a library that does not load.
pub fn sampler(spec: &PluginSpec, space: &LevelSpace) -> Result<Box<dyn LevelSampler>, LevelsError> {
    if spec.library.is_some() || !PHASE_SAMPLERS.contains(&spec.name.as_str()) {
        return Ok(floe_plugin_registry::level_sampler(spec)?);
    }
    let params = if spec.params.is_null() { serde_json::json!({}) } else { spec.params.clone() };
    let p: PhaseParams = serde_json::from_value(params)
        .map_err(|e| LevelsError::Config(format!("level sampler `{}`: {e}", spec.name)))?;
    let misplaced = |what: &str| {
        LevelsError::Config(format!("level sampler `{}` takes no `{what}` (only `engineer` does)", spec.name))
    };
    let designer = if spec.name == "engineer" {
        if !p.curriculum.is_null() {
            return Err(LevelsError::Config("level sampler `engineer` takes no `curriculum`".into()));
        }
        let engineer = p.engineer.unwrap_or_else(|| PluginSpec::builtin("embedded"));
        let context = p.context.unwrap_or_else(|| ContextOptions {
            history_json: engineer.name == "rules" && engineer.library.is_none(),
            ..ContextOptions::default()
        });
        context
            .check_reader(&engineer)
            .map_err(|e| LevelsError::Config(format!("level sampler `engineer`: {e}")))?;
        context.validate().map_err(|e| LevelsError::Config(format!("level sampler `engineer`: {e}")))?;
        Designer::Engineer { engineer: floe_plugin_registry::engineer(&engineer)?, context }
    } else {
        if p.engineer.is_some() {
            return Err(misplaced("engineer"));
        }
        if p.context.is_some() {
            return Err(misplaced("context"));
        }
        let curriculum = PluginSpec { name: spec.name.clone(), params: p.curriculum, library: None };
        Designer::Curriculum(floe_plugin_registry::curriculum(&curriculum)?)
    };
    let phases = PhaseSampler::new(designer, space.limits(), p.phase_episodes, p.phases)
        .map_err(|e| LevelsError::Config(format!("level sampler `{}`: {e}", spec.name)))?;
    Ok(Box::new(phases))
}
