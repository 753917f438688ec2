//! A level sampler's settings as one JSON object ([`LevelsSpec`]). The sampler a spec names is
//! made by floe-plugin-registry (`floe_plugin_registry::levels` makes the whole driver), the one
//! factory of every plugin: this crate knows the sampler only through its trait.

use floe_plugin_api::{LevelSampler, PluginSpec};
use serde::{Deserialize, Serialize};

use crate::driver::Levels;
use crate::error::LevelsError;
use crate::space::origin::SourceSpec;
use crate::space::{LevelSource, LevelSpace};

/// Every setting of a level sampler. In JSON every field is optional:
///
/// ```json
/// {"sampler": {"name": "plr", "params": {"replay_prob": 0.8}},
///  "space": {"agents": [2, 4], "size": [5, 10], "hole_ratio": [0, 0.3], "wait_ratio": [0, 1], "solve": true},
///  "seed": 0, "update_every": 0}
/// ```
///
/// In place of `space`, `source` may name a file of levels or MovingAI maps
/// ([`SourceSpec`]): `{"source": {"file": {"path": "levels.jsonl"}}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelsSpec {
    /// The sampler: a level sampler (`uniform`, `plr`, `learnability`, or one from a Rust or C
    /// library), a curriculum designing phases (`fixed`, `difficulty-scaling`, `sec`,
    /// `frontier`, `schedule`; `phases` with a `designer` for any other, a library's included)
    /// or the environment engineer (`engineer`) \[`uniform`\].
    pub sampler: PluginSpec,
    /// Where new levels come from: the generator's space.
    pub space: LevelSpace,
    /// Where new levels come from in place of the space: a file of levels or MovingAI maps
    /// \[none\]. Phase designers draw from the generator only, and `space` is then left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceSpec>,
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
            source: None,
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

    /// The driver these settings describe, around `sampler` (the one `self.sampler` names,
    /// made by the caller's factory).
    ///
    /// # Errors
    /// A space out of range; a `source` beside a space other than the default, or one that does
    /// not read ([`LevelSource::from_spec`]).
    pub fn build_with(&self, sampler: Box<dyn LevelSampler>) -> Result<Levels, LevelsError> {
        let source = match &self.source {
            None => LevelSource::new(self.space.clone(), self.seed)?,
            Some(spec) => {
                self.source_alone()?;
                LevelSource::from_spec(spec, self.seed)?
            }
        };
        Ok(Levels::new(&self.sampler.name, sampler, source, self.update_every))
    }

    /// Refuses a `source` beside a level space of its own: the space is the generator's.
    ///
    /// # Errors
    /// [`LevelsError::Config`] naming both.
    pub fn source_alone(&self) -> Result<(), LevelsError> {
        if self.source.is_some() && self.space != LevelSpace::default() {
            return Err(LevelsError::Config(format!(
                "level sampler settings: `source` takes levels from a file or maps, and `space` ({}) is the generator's: give one of them",
                serde_json::to_string(&self.space).unwrap_or_default()
            )));
        }
        Ok(())
    }
}
