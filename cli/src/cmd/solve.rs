use std::time::Duration;

use floe_core::solver::{solve, SolverConfig};

use crate::error::CliError;
use crate::input::InstanceSource;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: InstanceSource,
    /// High-level search nodes to expand before giving up.
    #[arg(long, default_value_t = 1_000_000)]
    max_nodes: u64,
    /// Seconds before giving up (per instance); none by default.
    #[arg(long)]
    time_limit: Option<f64>,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let time_limit = match a.time_limit {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(CliError::Input(format!(
                "--time-limit must be a positive number of seconds, not {s}"
            )))
        }
        s => s.map(Duration::from_secs_f64),
    };
    if a.max_nodes == 0 {
        return Err(CliError::Input("--max-nodes must be at least 1".into()));
    }
    let instances = a.source.load()?;
    let config = SolverConfig { max_nodes: a.max_nodes, time_limit, ..SolverConfig::default() };
    for (n, inst) in instances.iter().enumerate() {
        let solution = solve(inst, &config).map_err(|e| {
            let which = inst
                .id
                .as_deref()
                .map_or(format!("instance {}", n + 1), |id| format!("instance {} ({id})", n + 1));
            CliError::Failed(format!("{}: {which}: {e}", a.source.describe()))
        })?;
        let line = serde_json::json!({
            "soc": solution.soc,
            "makespan": solution.makespan,
            "moves": solution.move_strings(&inst.grid),
        });
        crate::emit(None, &format!("{line}\n"))?;
    }
    Ok(())
}
