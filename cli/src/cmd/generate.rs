use std::path::PathBuf;

use floe_core::generator::{generate, GenerateError, GeneratorConfig};

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Agents per instance.
    #[arg(long, short = 'k')]
    agents: usize,
    /// Map side N (an N×N map).
    #[arg(long, short = 'n')]
    size: u32,
    /// Share of cells that are holes.
    #[arg(long, default_value_t = 0.1)]
    hole_ratio: f64,
    /// Share of instances whose optimal plans need a wait.
    #[arg(long, default_value_t = 0.5)]
    wait_ratio: f64,
    /// Number of instances.
    #[arg(long, short = 'c', default_value_t = 50)]
    count: usize,
    /// Seed; the same seed gives the same output on every machine.
    #[arg(long, short = 's', default_value_t = 0)]
    seed: u64,
    /// Candidates tried per instance before giving up.
    #[arg(long, default_value_t = 2_000)]
    max_attempts: u32,
    /// Solver node limit per candidate.
    #[arg(long, default_value_t = 5_000)]
    max_nodes: u64,
    /// Output file (JSON Lines); stdout if absent.
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let cfg = GeneratorConfig {
        max_attempts: a.max_attempts,
        max_nodes: a.max_nodes,
        ..GeneratorConfig::square(a.size, a.agents, a.hole_ratio, a.wait_ratio, a.count, a.seed)
    };
    let instances = generate(&cfg).map_err(|e| match e {
        GenerateError::Config(m) => CliError::Input(format!("invalid arguments: {m}")),
        other => CliError::Failed(other.to_string()),
    })?;
    let mut text = String::new();
    for inst in &instances {
        text.push_str(&inst.to_json());
        text.push('\n');
    }
    crate::emit(a.out.as_ref(), &text)
}
