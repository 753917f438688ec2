//! The protocol's error.

use thiserror::Error;

/// Why a run of rounds failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RoundsError {
    /// Bad input: a configuration, a run folder written by another run, a malformed answer set.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A plugin failed.
    #[error("plugin: {0}")]
    Plugin(#[from] floe_plugin_api::PluginError),
    /// A plugin configuration or history was invalid.
    #[error("configuration: {0}")]
    Config(#[from] floe_plugin_api::ConfigError),
    /// The instance generator failed.
    #[error("generator: {0}")]
    Generate(#[from] floe_core::GenerateError),
    /// The batched verifier rejected a batch.
    #[error("engine: {0}")]
    Engine(#[from] floe_core::engine::EngineError),
    /// The trainee failed (its own error, kept whole so that its caller can take it back).
    #[error("{0}")]
    Trainee(Box<dyn std::error::Error + Send + Sync>),
    /// The run was stopped by a test hook of the trainee's (a stand-in for a killed process).
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// The run was cancelled through [`crate::RunOptions::cancel`]; the folder holds its last
    /// saved stage, from which it resumes.
    #[error("cancelled {0}")]
    Cancelled(String),
}

impl RoundsError {
    /// An I/O error on a path.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        RoundsError::Io { path: path.into(), source }
    }
}
