//! The trainer's error: its own (bad model or checkpoint input, libtorch) beside the protocol's
//! ([`RoundsError`]), which it holds as it was.

use thiserror::Error;

pub use floe_rounds::RoundsError;

/// Why training, evaluation or a checkpoint operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TrainError {
    /// Bad input of the trainer's own: a configuration, an instance the model cannot read, a
    /// malformed checkpoint.
    #[error("{0}")]
    Input(String),
    /// libtorch reported an error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// The protocol's error: a file that could not be read or written, a plugin, a plugin
    /// configuration, the generator or the batched engine that failed, a run folder written by
    /// another run, a run cancelled through [`crate::RunOptions::cancel`]
    /// ([`RoundsError::Cancelled`]; the folder holds its last checkpoint, from which it resumes)
    /// or stopped by the test hook of feature `testing` ([`RoundsError::Interrupted`]).
    #[error(transparent)]
    Rounds(RoundsError),
}

impl TrainError {
    /// An I/O error on a path (the protocol's [`RoundsError::Io`]).
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        TrainError::Rounds(RoundsError::io(path, source))
    }
}

impl From<RoundsError> for TrainError {
    /// The protocol's error as the trainer's: a trainer's error that the protocol carried as a
    /// trainee's ([`RoundsError::Trainee`]) comes back as it was; any other is held as it is.
    fn from(e: RoundsError) -> Self {
        match e {
            RoundsError::Trainee(e) => match e.downcast::<TrainError>() {
                Ok(e) => *e,
                Err(e) => TrainError::Rounds(RoundsError::Trainee(e)),
            },
            other => TrainError::Rounds(other),
        }
    }
}

impl From<TrainError> for RoundsError {
    /// The trainer's error inside the protocol: the protocol's own as it was (a cancel or an
    /// interruption included), the trainer's own kept whole as a trainee's.
    fn from(e: TrainError) -> Self {
        match e {
            TrainError::Rounds(e) => e,
            other => RoundsError::Trainee(Box::new(other)),
        }
    }
}

/// The errors the protocol's own variants stand for, as the trainer's (through [`RoundsError`]).
macro_rules! through_rounds {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for TrainError {
            fn from(e: $t) -> Self {
                TrainError::Rounds(RoundsError::from(e))
            }
        }
    )*};
}

through_rounds!(
    floe_plugin_api::PluginError,
    floe_plugin_api::ConfigError,
    floe_core::GenerateError,
    floe_core::engine::EngineError,
);
