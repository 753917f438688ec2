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
    /// environment engineer instead of the configuration's: `rounds.engineer` becomes the
    /// `endpoint` engineer; its key is read from $OPENAI_API_KEY.
    #[arg(long)]
    engineer_endpoint: Option<String>,
    /// With --engineer-endpoint: the model name the server expects.
    #[arg(long, default_value = "default")]
    engineer_model: String,
    /// Use this GGUF chat model, run in process by llama.cpp, as the environment engineer:
    /// `rounds.engineer` becomes the `embedded` engineer with `model` set to it.
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
pub fn plugins(cfg: &TrainConfig) -> Result<floe_train::Plugins, floe_plugin_host::RegistryError> {
    let r = &cfg.rounds;
    floe_plugin_host::registry::plugins(&r.reward, r.curriculum.as_ref(), r.engineer.as_ref())
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let saved = if a.resume { floe_train::run::saved_run(&a.out).map_err(cli_error)? } else { None };
    let mut cfg = match (&a.config, &saved) {
        (Some(p), _) => TrainConfig::from_json(&read_text(p)?).map_err(|e| CliError::input(p, e))?,
        (None, Some((c, _))) => c.clone(),
        (None, None) => TrainConfig::default(),
    };
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    if let Some(url) = &a.engineer_endpoint {
        cfg.rounds.engineer = Some(floe_plugin_host::PluginSpec {
            name: "endpoint".into(),
            params: serde_json::json!({"base_url": url, "model": a.engineer_model}),
            library: None,
        });
    }
    if let Some(path) = &a.engineer_gguf {
        cfg.rounds.engineer = Some(crate::cmd::engineer::gguf_spec(path)?);
    }
    cfg.validate().map_err(cli_error)?;
    if a.print_config {
        return crate::emit(None, &(serde_json::to_string_pretty(&cfg).unwrap_or_default() + "\n"));
    }
    let what = a.config.as_ref().map_or("the configuration".to_string(), |p| p.display().to_string());
    let plugins = plugins(&cfg).map_err(|e| CliError::Input(format!("{what}: {e}")))?;
    let opts = floe_train::RunOptions {
        resume: a.resume,
        progress: !a.quiet,
        ..floe_train::RunOptions::new(&a.out)
    };
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
