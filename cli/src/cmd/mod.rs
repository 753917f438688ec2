//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod engineer;
#[cfg(feature = "train")]
pub mod eval;
#[cfg(feature = "train")]
pub mod experiment;
pub mod generate;
#[cfg(feature = "train")]
pub mod levels;
pub mod plugin;
pub mod prompt;
pub mod render;
pub mod solve;
pub mod suite;
#[cfg(feature = "train")]
pub mod train;
pub mod verify;
