//! The trainer's error.

use thiserror::Error;

/// Why training, evaluation or a checkpoint operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TrainError {
    /// Bad input: a configuration, an instance the model cannot read, a malformed checkpoint.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// libtorch reported an error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// A plugin failed.
    #[error("plugin: {0}")]
    Plugin(#[from] floe_plugin_api::PluginError),
    /// A plugin configuration or history was invalid.
    #[error("configuration: {0}")]
    Config(#[from] floe_plugin_api::ConfigError),
    /// The instance generator failed.
    #[error("generator: {0}")]
    Generate(#[from] floe_core::GenerateError),
    /// The batched engine rejected a batch.
    #[error("engine: {0}")]
    Engine(#[from] floe_core::engine::EngineError),
    /// The run was stopped by its test hook (`RunOptions::stop_before_grpo_step`, feature
    /// `testing`).
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// The run was cancelled through [`crate::RunOptions::cancel`]; the folder holds its last
    /// checkpoint, from which it resumes.
    #[error("cancelled {0}")]
    Cancelled(String),
}

impl TrainError {
    /// An I/O error on a path.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        TrainError::Io { path: path.into(), source }
    }
}
