//! `floe`: generate, solve, verify, prompt and render MAPF-FrozenLake instances; with the
//! `train` feature, train and evaluate planner policies.
//!
//! Exit codes (the table in docs/cli.md): 0 success; 1 the work could not be done or a check failed
//! (an unsolvable instance, a search limit, a wait ratio that could not be reached, an invalid
//! plan in `verify`, a disagreement found by `check`, a plugin library that does not load,
//! training that fails); 2 bad input (a malformed file or argument, a setting that cannot give
//! anything, a command this build lacks), always with a one-line message naming the file or
//! the setting and the problem.

mod cmd;
mod error;
mod input;
mod progress;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
    /// Print an instance's grid, and a plan step by step; or draw them (--png, --gif).
    Render(cmd::render::Args),
    /// Re-solve a suite or instance file, check every stored plan and print a summary table.
    Check(cmd::check::Args),
    /// Measure agent-steps and plans verified per second (JSON lines).
    Bench(cmd::bench::Args),
    /// Inspect plugin libraries (Rust abi_stable or C).
    Plugin(cmd::plugin::Args),
    /// Show what a run's environment engineer was given and answered; --ask sends it again.
    Engineer(cmd::engineer::Args),
    /// Train a planner policy: warm start, then GRPO rounds redesigned by a curriculum.
    #[cfg(feature = "train")]
    Train(cmd::train::Args),
    /// Evaluate a trained checkpoint on a suite: valid / optimal rate per agent count x map size.
    #[cfg(feature = "train")]
    Eval(cmd::eval::Args),
    /// Compare environment designs (curricula, the LLM engineer) from one warm start.
    #[cfg(feature = "train")]
    Experiment(cmd::experiment::Args),
    /// Compare level samplers for a PPO agent learning from scratch on held-out levels.
    #[cfg(feature = "train")]
    Levels(cmd::levels::Args),
    /// Train a planner policy (not in this build: it needs `--features train`).
    #[cfg(not(feature = "train"))]
    Train(NotBuilt),
    /// Evaluate a trained checkpoint (not in this build: it needs `--features train`).
    #[cfg(not(feature = "train"))]
    Eval(NotBuilt),
    /// Compare environment designs (not in this build: it needs `--features train`).
    #[cfg(not(feature = "train"))]
    Experiment(NotBuilt),
    /// Compare level samplers (not in this build: it needs `--features train`).
    #[cfg(not(feature = "train"))]
    Levels(NotBuilt),
}

/// The arguments of a command this build lacks: taken whole, so that the error says how to get
/// the command rather than what is wrong with its arguments.
#[cfg(not(feature = "train"))]
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
struct NotBuilt {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<std::ffi::OsString>,
}

#[cfg(not(feature = "train"))]
fn not_built(name: &str) -> Result<(), CliError> {
    Err(CliError::Input(format!(
        "`floe {name}` is not in this build: it links libtorch. In the floe source folder run \
         `bash scripts/setup.sh`, then `LIBTORCH=$PWD/third_party/libtorch cargo install --path cli \
         --features train` (or `cargo build --release -p floe-cli --features train`)"
    )))
}

/// Every (sub)command takes negative numbers as values (`--hole-ratio -0.1`), so that the range
/// checks, not the flag parser, say what is wrong with them.
fn allow_negative_numbers(cmd: clap::Command) -> clap::Command {
    cmd.allow_negative_numbers(true).mut_subcommands(allow_negative_numbers)
}

/// libtorch's OpenMP runtime reads its settings once, when the program is loaded. Without
/// `OMP_WAIT_POLICY=PASSIVE` its idle threads spin, and on a machine where anything else runs a
/// training step can stall for seconds; so `floe train` and `floe eval` start themselves again
/// with it set, unless the caller chose a policy or a spin count (the caller's setting wins).
#[cfg(feature = "train")]
fn relaunch_with_passive_openmp() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OMP_WAIT_POLICY").is_some() || std::env::var_os("GOMP_SPINCOUNT").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .exec();
    // Only reached when the exec failed: go on with the default policy.
    eprintln!("floe: could not restart with OMP_WAIT_POLICY=PASSIVE ({err}); going on without it");
}

fn main() -> ExitCode {
    let matches = allow_negative_numbers(Cli::command()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    #[cfg(feature = "train")]
    if matches!(
        cli.command,
        Command::Train(_) | Command::Eval(_) | Command::Experiment(_) | Command::Levels(_)
    ) {
        relaunch_with_passive_openmp();
    }
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
        Command::Engineer(a) => cmd::engineer::run(&a),
        #[cfg(feature = "train")]
        Command::Train(a) => cmd::train::run(&a),
        #[cfg(feature = "train")]
        Command::Eval(a) => cmd::eval::run(&a),
        #[cfg(feature = "train")]
        Command::Experiment(a) => cmd::experiment::run(&a),
        #[cfg(feature = "train")]
        Command::Levels(a) => cmd::levels::run(&a),
        #[cfg(not(feature = "train"))]
        Command::Train(_) => not_built("train"),
        #[cfg(not(feature = "train"))]
        Command::Eval(_) => not_built("eval"),
        #[cfg(not(feature = "train"))]
        Command::Experiment(_) => not_built("experiment"),
        #[cfg(not(feature = "train"))]
        Command::Levels(_) => not_built("levels"),
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
