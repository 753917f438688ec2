//! [`LevelsState`]: a level sampler's whole state, saved between runs, as jaxued saves its
//! sampler with the train state: the sampler's own (scores, staleness, plays, each per slot and
//! generation; [`floe_plugin_api::LevelSampler::save`]), the driver's (the episodes kept for the
//! sampler's next call, the first-play marks, the counts), the source of new levels (its level
//! space, the configuration a phase gave, the levels drawn) and the engine's pool (every slot's
//! level, optimum and generation) with its weights.
//!
//! ```text
//! let state = levels.save(&engine)?;  std::fs::write(path, state.to_json())?;
//! // later, in a new process:
//! let state = LevelsState::from_json(&std::fs::read_to_string(path)?)?;
//! let engine = CpuEngine::new(cfg, Arc::new(state.pool()?))?;   // the saved pool
//! let mut levels = floe_plugin_registry::levels(&spec)?;          // the same spec
//! levels.load(state)?;
//! engine.reset(seed, out);  levels.start(&mut engine, out);       // the saved weights, no call
//! ```
//!
//! The text is versioned ([`STATE_VERSION`]): a state of another version, of another sampler,
//! parameters, level space or `update_every`, or an engine whose pool is not the saved one, is
//! refused with an error naming the value, and nothing changes.

use floe_core::engine::{Engine, InstancePool};
use floe_plugin_api::EpisodeRecord;
use serde::{Deserialize, Serialize};

use super::{Applied, Shape};
use crate::error::LevelsError;
use crate::space::LevelSource;

/// The version of the saved form this floe writes and reads.
pub const STATE_VERSION: u32 = 1;

/// A level sampler's whole state ([`crate::Levels::save`], [`crate::Levels::load`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelsState {
    pub(crate) version: u32,
    /// The sampler's name.
    pub(crate) sampler: String,
    /// What the sampler saved of itself (its own JSON text).
    pub(crate) sampler_state: String,
    pub(crate) update_every: u32,
    pub(crate) source: LevelSource,
    pub(crate) driver: DriverState,
    pub(crate) pool: SavedPool,
}

/// The driver's own state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DriverState {
    pub(crate) steps: u64,
    pub(crate) clock: u64,
    pub(crate) pending: Vec<EpisodeRecord>,
    pub(crate) pending_first: Vec<bool>,
    pub(crate) pending_env: Vec<u32>,
    pub(crate) pending_step: Vec<u64>,
    pub(crate) first_end: Vec<Option<(u32, u64)>>,
    pub(crate) first_play: Vec<bool>,
    pub(crate) edited: u64,
    pub(crate) edits_failed: u64,
    pub(crate) played: Vec<(Shape, u64)>,
    pub(crate) totals: Applied,
}

/// An engine's pool and weights, as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedPool {
    /// Its packed arrays: every slot's level, optimum and generation.
    pub(crate) pool: floe_core::pool::SavedPool,
    /// The weights the engine drew by, if any were set.
    pub(crate) weights: Option<Vec<f64>>,
}

impl SavedPool {
    /// `engine`'s pool and weights.
    pub(crate) fn of(engine: &dyn Engine) -> Self {
        SavedPool { pool: engine.pool().saved(), weights: engine.weights().map(<[f64]>::to_vec) }
    }

    /// The pool, checked.
    pub(crate) fn pool(&self) -> Result<InstancePool, LevelsError> {
        let pool =
            InstancePool::from_saved(self.pool.clone()).map_err(|e| LevelsError::State(e.to_string()))?;
        if let Some(w) = &self.weights {
            floe_core::engine::levels::check_weights(w, pool.len())
                .map_err(|e| LevelsError::State(format!("the saved weights: {e}")))?;
        }
        Ok(pool)
    }
}

impl LevelsState {
    /// The state as JSON text (one line).
    ///
    /// # Errors
    /// [`LevelsError::State`] when it cannot be written (a value JSON has no form for).
    pub fn to_json(&self) -> Result<String, LevelsError> {
        serde_json::to_string(self)
            .map_err(|e| LevelsError::State(format!("writing a level sampler's state: {e}")))
    }

    /// A state read from JSON text [`LevelsState::to_json`] wrote.
    ///
    /// # Errors
    /// [`LevelsError::State`] naming the value: text that does not read, a version other than
    /// [`STATE_VERSION`] (said before anything else is read).
    pub fn from_json(text: &str) -> Result<Self, LevelsError> {
        let unread =
            |e: serde_json::Error| LevelsError::State(format!("a level sampler's state does not read: {e}"));
        let value: serde_json::Value = serde_json::from_str(text).map_err(unread)?;
        check_version(value.get("version").and_then(serde_json::Value::as_u64))?;
        serde_json::from_value(value).map_err(unread)
    }

    /// The engine's pool as it was saved, every slot's level, optimum and generation: the pool
    /// to make an engine with in a new process ([`crate::Levels::start`] refuses an engine whose
    /// pool is not this one).
    ///
    /// # Errors
    /// [`LevelsError::State`] for a saved level, optimum, generation or weight that does not
    /// check.
    pub fn pool(&self) -> Result<InstancePool, LevelsError> {
        self.pool.pool()
    }
}

/// Refuses a saved form of another version (`None`: none given).
pub(crate) fn check_version(version: Option<u64>) -> Result<(), LevelsError> {
    match version {
        Some(v) if v == u64::from(STATE_VERSION) => Ok(()),
        Some(v) => Err(LevelsError::State(format!(
            "a level sampler's state of version {v}; this floe reads version {STATE_VERSION}"
        ))),
        None => Err(LevelsError::State(format!(
            "a level sampler's state names no version; this floe reads version {STATE_VERSION}"
        ))),
    }
}

/// Why `pool` is not the saved pool `saved` (slot by slot: level, optimum, generation).
pub(crate) fn check_same_pool(pool: &InstancePool, saved: &InstancePool) -> Result<(), LevelsError> {
    let other = |why: String| {
        LevelsError::State(format!(
            "the engine's pool is not the saved one: {why} (make the engine with the state's pool: LevelsState::pool)"
        ))
    };
    if pool.len() != saved.len() {
        return Err(other(format!("it has {} slots, the saved pool {}", pool.len(), saved.len())));
    }
    for i in 0..pool.len() {
        if pool.generation(i) != saved.generation(i) {
            return Err(other(format!(
                "slot {i} is at generation {}, the saved slot at {}",
                pool.generation(i),
                saved.generation(i)
            )));
        }
        if pool.optimal_soc(i) != saved.optimal_soc(i) || pool.level(i)? != saved.level(i)? {
            return Err(other(format!("slot {i} holds another level")));
        }
    }
    Ok(())
}
