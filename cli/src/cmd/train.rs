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
    /// Use an OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8080/v1) as the
    /// environment engineer: sets `base_url` of the configuration's `endpoint` engineer, keeping
    /// its other parameters (`timeout_s`, `retries`, `api_key_env`, …), or makes `rounds.engineer`
    /// the `endpoint` engineer with its defaults: the key read from $OPENAI_API_KEY, 120 s a
    /// request.
    #[arg(long)]
    engineer_endpoint: Option<String>,
    /// The model name the endpoint expects: sets `model` of the `endpoint` engineer
    /// [default: the configuration's, else `default`].
    #[arg(long)]
    engineer_model: Option<String>,
    /// Seconds one request to the endpoint may take, connecting and reading included: sets
    /// `timeout_s` of the `endpoint` engineer [default: the configuration's, else 120]. A request
    /// that times out is tried again (`http_retries`, 3) and the engineer asks again on no reply
    /// (`retries`, 2): with those defaults a silent server holds a round up to 12 times this long.
    #[arg(long, value_name = "SECONDS", value_parser = crate::cmd::engineer::seconds)]
    engineer_timeout: Option<f64>,
    /// Use this GGUF chat model, run in process by llama.cpp, as the environment engineer: sets
    /// `model` of the configuration's `embedded` engineer, or makes `rounds.engineer` the
    /// `embedded` engineer with `model` set to it.
    #[arg(long, conflicts_with = "engineer_endpoint")]
    engineer_gguf: Option<PathBuf>,
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

/// The plugins a configuration names, resolved by the registry; the reward must score plans.
///
/// # Errors
/// What the registry refuses (an unknown plugin, bad parameters, a library that does not load, a
/// reward that scores only steps).
pub fn plugins(cfg: &TrainConfig) -> Result<floe_train::Plugins, floe_plugin_registry::RegistryError> {
    let r = &cfg.rounds;
    floe_plugin_registry::plugins(&r.reward, r.curriculum.as_ref(), r.engineer.as_ref())
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
    let flags = crate::cmd::engineer::Flags {
        endpoint: a.engineer_endpoint.as_deref(),
        model: a.engineer_model.as_deref(),
        timeout_s: a.engineer_timeout,
        gguf: a.engineer_gguf.as_deref(),
    };
    cfg.rounds.engineer = flags.apply(cfg.rounds.engineer.take())?;
    cfg.validate().map_err(|e| match &a.config {
        Some(p) => CliError::input(p, e),
        None => cli_error(e),
    })?;
    if a.print_config {
        return crate::emit(None, &(serde_json::to_string_pretty(&cfg).unwrap_or_default() + "\n"));
    }
    let what = a.config.as_ref().map_or("the configuration".to_string(), |p| p.display().to_string());
    let plugins = plugins(&cfg).map_err(|e| CliError::Input(format!("{what}: {e}")))?;
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
