//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod generate;
pub mod plugin;
pub mod prompt;
pub mod render;
pub mod solve;
pub mod suite;
pub mod verify;
