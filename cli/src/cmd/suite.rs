use std::path::PathBuf;

use floe_core::suite::{build_suite, write_suite, SuiteConfig};

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output folder: one JSONL file per (agents, size, wait ratio) cell and suite.json.
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Agent counts.
    #[arg(long, value_delimiter = ',', default_values_t = [3usize, 4, 5])]
    agents: Vec<usize>,
    /// Smallest map side; 0: the agent count (sizes start at the larger of the two).
    #[arg(long, default_value_t = 0)]
    min_size: u32,
    /// Largest map side; sizes run from the agent count (or --min-size) up to this.
    #[arg(long, default_value_t = 10)]
    max_size: u32,
    /// Wait-ratio subsets.
    #[arg(long, value_delimiter = ',', default_values_t = [0.25, 0.5, 0.75])]
    wait_ratios: Vec<f64>,
    /// Instances per cell.
    #[arg(long, default_value_t = 50)]
    per_cell: usize,
    /// Hole ratio of every map.
    #[arg(long, default_value_t = 0.1)]
    hole_ratio: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let config = SuiteConfig {
        agents: a.agents.clone(),
        min_size: a.min_size,
        max_size: a.max_size,
        wait_ratios: a.wait_ratios.clone(),
        per_cell: a.per_cell,
        hole_ratio: a.hole_ratio,
        seed: a.seed,
    };
    let started = std::time::Instant::now();
    let cells = build_suite(&config).map_err(|e| CliError::Failed(e.to_string()))?;
    write_suite(&a.out, &config, &cells)
        .map_err(|e| CliError::input(&a.out, format!("cannot write the suite: {e}")))?;
    let total: usize = cells.iter().map(|c| c.instances.len()).sum();
    eprintln!(
        "wrote {total} instances in {} files to {} ({:.1} s)",
        cells.len(),
        a.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
