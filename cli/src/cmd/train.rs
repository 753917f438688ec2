//! `floe train`: the closed loop of GRPO rounds (floe-train), on the default configuration or a
//! JSON file of changes to it.

use std::path::PathBuf;

use floe_rounds::RoundsError;
use floe_train::{TrainConfig, TrainError};

use crate::cmd::engineer::EngineerFlags;
use crate::error::CliError;
use crate::input::read_text;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Configuration (JSON; absent fields take their defaults, see --print-config).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output folder: checkpoints, metrics (JSONL), plots (PNG), the final evaluation.
    #[arg(long, default_value = "out/train")]
    out: PathBuf,
    /// Continue the run in --out from its last checkpoint (finished rounds are kept; an
    /// unfinished round starts again). Without --config, the checkpoint's configuration is used.
    #[arg(long)]
    resume: bool,
    /// Overrides the configuration's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the configuration (defaults merged with --config) and exit.
    #[arg(long)]
    print_config: bool,
    /// No progress on stderr (by default: bars on a terminal, one line per stage in a log).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten, next_help_heading = "Engineer flags, over the configuration's `rounds.engineer`")]
    engineer: EngineerFlags,
}

/// Maps a trainer error to the CLI's: bad input (configurations, files, checkpoints) is exit 2.
pub fn cli_error(e: TrainError) -> CliError {
    match e {
        TrainError::Input(_)
        | TrainError::Rounds(RoundsError::Input(_) | RoundsError::Config(_) | RoundsError::Io { .. }) => {
            CliError::Input(e.to_string())
        }
        _ => CliError::Failed(e.to_string()),
    }
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let saved = if a.resume { floe_train::run::saved_run(&a.out).map_err(cli_error)? } else { None };
    let mut cfg = match (&a.config, &saved) {
        // Read, not yet validated: the engineer flags may supply what the file lacks.
        (Some(p), _) => {
            serde_json::from_str::<TrainConfig>(&read_text(p)?).map_err(|e| CliError::input(p, e))?
        }
        (None, Some((c, _))) => c.clone(),
        (None, None) => TrainConfig::default(),
    };
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    cfg.rounds.engineer = a.engineer.apply(cfg.rounds.engineer.take())?;
    cfg.validate().map_err(|e| match &a.config {
        Some(p) => CliError::input(p, e),
        None => cli_error(e),
    })?;
    if a.print_config {
        return crate::emit(None, &(serde_json::to_string_pretty(&cfg).unwrap_or_default() + "\n"));
    }
    let what = a.config.as_ref().map_or("the configuration".to_string(), |p| p.display().to_string());
    let plugins = floe_plugin_registry::rounds_plugins(&cfg.rounds)
        .map_err(|e| CliError::Input(format!("{what}: {e}")))?;
    let opts = floe_train::RunOptions { resume: a.resume, ..floe_train::RunOptions::new(&a.out) };
    let bars = crate::progress::Bars::new("floe train", a.quiet);
    let state = floe_train::run_with_progress(&cfg, &opts, plugins, &bars).map_err(cli_error)?;
    let mut out = String::from("| stage | valid % | optimal % | training s |\n|---|---|---|---|\n");
    for e in &state.evals {
        out.push_str(&format!(
            "| {} | {:.2} | {:.2} | {:.0} |\n",
            e.stage,
            100.0 * e.valid,
            100.0 * e.optimal,
            e.train_s
        ));
    }
    if let Some(last) = state.evals.last() {
        out.push_str(&format!("\nValidation after {}:\n\n{}", last.stage, last.report.to_markdown()));
    }
    crate::emit(None, &out)
}
