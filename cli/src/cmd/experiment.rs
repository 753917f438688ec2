//! `floe experiment`: the paper's comparison of environment designs (see
//! `floe_train::experiment`): one shared warm start on 2-agent boards, the same GRPO budget under
//! each curriculum and the LLM engineer, several seeds, one held-out suite of 3, 4 and 5 agents,
//! and a paper-style table. Re-running the same command resumes.

use std::path::PathBuf;

use floe_plugin_host::PluginSpec;
use floe_train::experiment::{run_experiment, Budget, Experiment, CONTENDERS};
use floe_train::TrainError;

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output folder (runs, suite outcomes, table.md); the same folder resumes.
    #[arg(long, default_value = "out/experiment")]
    out: PathBuf,
    /// `small` (about half an hour on 2 cores), `medium` (about two hours) or `full` (hours
    /// more).
    #[arg(long, default_value = "small")]
    budget: String,
    /// The contenders, comma-separated, from fixed, difficulty-scaling, plr, sec, engineer.
    #[arg(long, value_delimiter = ',', default_value = "fixed,difficulty-scaling,plr,sec,engineer")]
    contenders: Vec<String>,
    /// Seeds per contender (default: the budget's).
    #[arg(long)]
    seeds: Option<u64>,
    /// The LLM contender asks this OpenAI-compatible endpoint instead of the embedded model.
    #[arg(long)]
    engineer_endpoint: Option<String>,
    /// With --engineer-endpoint: the model name.
    #[arg(long, default_value = "default")]
    engineer_model: String,
    /// The LLM contender runs this GGUF chat model in process (the `embedded` engineer, as by
    /// default, on another model).
    #[arg(long, conflicts_with = "engineer_endpoint")]
    engineer_gguf: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let budget = match a.budget.as_str() {
        "small" => Budget::Small,
        "medium" => Budget::Medium,
        "full" => Budget::Full,
        b => return Err(CliError::Input(format!("--budget {b}: use small, medium or full"))),
    };
    if let Some(c) = a.contenders.iter().find(|c| !CONTENDERS.contains(&c.as_str())) {
        return Err(CliError::Input(format!("--contenders: {c} is not one of {}", CONTENDERS.join(", "))));
    }
    let engineer = match (&a.engineer_endpoint, &a.engineer_gguf) {
        (Some(url), _) => PluginSpec {
            name: "endpoint".into(),
            params: serde_json::json!({"base_url": url, "model": a.engineer_model}),
            library: None,
        },
        (None, Some(path)) => crate::cmd::engineer::gguf_spec(path)?,
        (None, None) => PluginSpec::builtin("embedded"),
    };
    let mut x = Experiment::new(budget, engineer);
    x.contenders.retain(|c| a.contenders.contains(&c.name));
    if let Some(n) = a.seeds {
        if n == 0 {
            return Err(CliError::Input("--seeds must be at least 1".into()));
        }
        x.seeds = (0..n).collect();
    }
    let resolve = |cfg: &floe_train::TrainConfig| {
        crate::cmd::train::plugins(cfg).map_err(|e| TrainError::Input(e.to_string()))
    };
    let bars = crate::progress::Bars::new("floe experiment", a.quiet);
    let table = run_experiment(&x, &a.out, &resolve, &bars).map_err(crate::cmd::train::cli_error)?;
    crate::emit(None, &table)
}
