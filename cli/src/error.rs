//! The CLI's error: a one-line message and an exit code.

use std::fmt;
use std::path::Path;

#[derive(Debug)]
pub enum CliError {
    /// Malformed input: exit code 2.
    Input(String),
    /// The work could not be done: exit code 1.
    Failed(String),
}

impl CliError {
    /// Bad input in a file.
    pub fn input(path: &Path, problem: impl fmt::Display) -> Self {
        CliError::Input(format!("{}: {problem}", path.display()))
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Failed(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::Failed(m) => f.write_str(m),
        }
    }
}
