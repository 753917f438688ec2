use std::path::PathBuf;

use floe_core::progress::Progress;
use floe_core::suite::{build_suite_with_progress, write_suite, SuiteConfig};
use floe_core::text::count;

use crate::cmd::generate::generate_error;
use crate::error::CliError;
use crate::progress::Bars;

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
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
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
    config.validate().map_err(generate_error)?;
    let started = std::time::Instant::now();
    let bars = Bars::new("floe suite", a.quiet);
    bars.begin("suite", config.total() as u64);
    let built = build_suite_with_progress(&config, &bars);
    let cells = match built {
        Ok(cells) => cells,
        Err(e) => {
            bars.end("generation stopped");
            return Err(generate_error(e));
        }
    };
    write_suite(&a.out, &config, &cells)
        .map_err(|e| CliError::input(&a.out, format!("cannot write the suite: {e}")))?;
    let total: usize = cells.iter().map(|c| c.instances.len()).sum();
    bars.end(&format!(
        "wrote {} in {} to {} ({:.1} s)",
        count(total as u64, "instance", "instances"),
        count(cells.len() as u64, "file", "files"),
        a.out.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}
