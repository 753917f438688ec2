//! The errors of level sampling.

use floe_core::engine::EngineError;
use floe_core::generator::GenerateError;
use floe_plugin_api::PluginError;
use thiserror::Error;

/// Why level sampling could not go on; the engine is left as it was unless the variant says
/// otherwise.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LevelsError {
    /// A setting out of range or a spec that does not read.
    #[error("{0}")]
    Config(String),
    /// The sampler failed, or its plan is refused (a plugin's panic or garbage included).
    #[error("level sampler `{name}`: {source}")]
    Sampler {
        /// The sampler's name.
        name: String,
        /// Why.
        #[source]
        source: PluginError,
    },
    /// The host's buffers hold records no step writes (flags other than 0 or 1, or both set; an
    /// outcome that does not match them; a slot outside the pool); nothing was kept.
    #[error("level sampling: {0}")]
    Input(String),
    /// The sampler runs with another engine: a sampler binds to the engine it first runs with.
    #[error(
        "level sampler `{name}` runs with {bound}, and was given {given}: make one sampler per engine \
         (shards of one pool share a sampler's decisions: Levels::decide and Levels::apply)"
    )]
    OtherEngine {
        /// The sampler's name.
        name: String,
        /// The engine it is bound to.
        bound: floe_core::engine::EngineId,
        /// The engine it was given.
        given: floe_core::engine::EngineId,
    },
    /// The engine refused a call (bad input, a device error).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// New levels could not be generated.
    #[error("new levels: {0}")]
    Generate(#[from] GenerateError),
    /// A saved state that does not read or does not fit: another version, sampler, level space,
    /// or an engine whose pool is not the saved one ([`crate::LevelsState`]); nothing changed.
    #[error("level sampler state: {0}")]
    State(String),
    /// A source of levels other than the space that does not read or fit: a level file with a
    /// malformed or unsolvable instance, a map too large for the engine or too small for the
    /// agents, a host function's answer of another count or outside the level space.
    #[error("level source: {0}")]
    Source(String),
    /// More new levels than memory can hold were asked for.
    #[error(transparent)]
    TooLarge(#[from] floe_core::TooLarge),
}
