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

impl From<floe_rounds::RoundsError> for TrainError {
    /// The protocol's error as the trainer's: a trainee's own error comes back as it was.
    fn from(e: floe_rounds::RoundsError) -> Self {
        use floe_rounds::RoundsError as R;
        match e {
            R::Input(m) => TrainError::Input(m),
            R::Io { path, source } => TrainError::Io { path, source },
            R::Plugin(e) => TrainError::Plugin(e),
            R::Config(e) => TrainError::Config(e),
            R::Generate(e) => TrainError::Generate(e),
            R::Engine(e) => TrainError::Engine(e),
            R::Interrupted(m) => TrainError::Interrupted(m),
            R::Cancelled(m) => TrainError::Cancelled(m),
            R::Trainee(e) => match e.downcast::<TrainError>() {
                Ok(e) => *e,
                Err(e) => TrainError::Input(e.to_string()),
            },
            other => TrainError::Input(other.to_string()),
        }
    }
}

impl From<TrainError> for floe_rounds::RoundsError {
    /// The trainer's error inside the protocol: kept whole (a cancel or an interruption as the
    /// protocol's own).
    fn from(e: TrainError) -> Self {
        use floe_rounds::RoundsError as R;
        match e {
            TrainError::Cancelled(m) => R::Cancelled(m),
            TrainError::Interrupted(m) => R::Interrupted(m),
            other => R::Trainee(Box::new(other)),
        }
    }
}
