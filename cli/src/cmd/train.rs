//! `floe train`: the closed loop of GRPO rounds (floe-train), on the default configuration or a
//! JSON file of changes to it.

use std::path::PathBuf;

use floe_train::{TrainConfig, TrainError};

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
}

/// Maps a trainer error to the CLI's: bad input (configurations, files, checkpoints) is exit 2.
pub fn cli_error(e: TrainError) -> CliError {
    match e {
        TrainError::Input(_) | TrainError::Config(_) | TrainError::Io { .. } => {
            CliError::Input(e.to_string())
        }
        _ => CliError::Failed(e.to_string()),
    }
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let saved = if a.resume { floe_train::rounds::saved_run(&a.out).map_err(cli_error)? } else { None };
    let mut cfg = match (&a.config, &saved) {
        (Some(p), _) => TrainConfig::from_json(&read_text(p)?).map_err(|e| CliError::input(p, e))?,
        (None, Some((c, _))) => c.clone(),
        (None, None) => TrainConfig::default(),
    };
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    cfg.validate().map_err(cli_error)?;
    if a.print_config {
        return crate::emit(None, &(serde_json::to_string_pretty(&cfg).unwrap_or_default() + "\n"));
    }
    let opts = floe_train::RunOptions {
        out_dir: a.out.clone(),
        resume: a.resume,
        progress: !a.quiet,
        stop_before_grpo_step: None,
    };
    let bars = crate::progress::Bars::new("floe train", a.quiet);
    let state = floe_train::run_with_progress(&cfg, &opts, &bars).map_err(cli_error)?;
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
