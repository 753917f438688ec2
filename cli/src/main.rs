//! `floe`: generate, solve, verify, prompt and render MAPF-FrozenLake instances.
//!
//! Exit codes: 0 success; 1 the work could not be done (an unsolvable instance, a search limit, a
//! wait ratio that could not be reached, a disagreement found by `check`); 2 bad input (a
//! malformed file or argument), always with a one-line message naming the file and the problem.

mod cmd;
mod error;
mod input;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "floe",
    version,
    about = "MAPF-FrozenLake: generate, solve, verify and render multi-agent path finding instances"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate solvable instances with their optimal plans, as JSON Lines.
    Generate(cmd::generate::Args),
    /// Generate the benchmark suite (agents × map sizes × wait ratios) into a folder.
    Suite(cmd::suite::Args),
    /// Solve instances optimally (sum of costs) with conflict-based search.
    Solve(cmd::solve::Args),
    /// Verify a plan: valid, optimal, and the first failure.
    Verify(cmd::verify::Args),
    /// Print the paper-style text prompt of an instance.
    Prompt(cmd::prompt::Args),
    /// Print an instance's grid, and a plan step by step.
    Render(cmd::render::Args),
    /// Re-solve a suite or instance file, check every stored plan and print a summary table.
    Check(cmd::check::Args),
    /// Measure agent-steps and plans verified per second (JSON lines).
    Bench(cmd::bench::Args),
    /// Inspect plugin libraries (Rust abi_stable or C).
    Plugin(cmd::plugin::Args),
    /// Train a planner policy: warm start, then GRPO rounds redesigned by a curriculum.
    #[cfg(feature = "train")]
    Train(cmd::train::Args),
    /// Evaluate a trained checkpoint on a suite: valid / optimal rate per agent count x map size.
    #[cfg(feature = "train")]
    Eval(cmd::eval::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Generate(a) => cmd::generate::run(&a),
        Command::Suite(a) => cmd::suite::run(&a),
        Command::Solve(a) => cmd::solve::run(&a),
        Command::Verify(a) => cmd::verify::run(&a),
        Command::Prompt(a) => cmd::prompt::run(&a),
        Command::Render(a) => cmd::render::run(&a),
        Command::Check(a) => cmd::check::run(&a),
        Command::Bench(a) => cmd::bench::run(&a),
        Command::Plugin(a) => cmd::plugin::run(&a),
        #[cfg(feature = "train")]
        Command::Train(a) => cmd::train::run(&a),
        #[cfg(feature = "train")]
        Command::Eval(a) => cmd::eval::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floe: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Writes `text` to `path`, or to stdout when `path` is `None`.
fn emit(path: Option<&PathBuf>, text: &str) -> Result<(), CliError> {
    use std::io::Write;
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| CliError::input(p, format!("cannot write: {e}"))),
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth reporting.
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            Ok(())
        }
    }
}
