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
    /// The sampler could not be made.
    #[error(transparent)]
    Registry(#[from] floe_plugin_registry::RegistryError),
    /// The engine refused a call (bad input, a device error).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// New levels could not be generated.
    #[error("new levels: {0}")]
    Generate(#[from] GenerateError),
    /// More new levels than memory can hold were asked for.
    #[error(transparent)]
    TooLarge(#[from] floe_core::TooLarge),
}
