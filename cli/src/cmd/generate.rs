use std::path::PathBuf;

use floe_core::generator::{generate_with_progress, GenerateError, GeneratorConfig};
use floe_core::progress::Progress;
use floe_core::text::count;

use crate::error::CliError;
use crate::progress::Bars;

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
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// The generator's refusals of a setting are bad input (exit 2); a ratio it could not reach in
/// time is work that could not be done (exit 1).
pub fn generate_error(e: GenerateError) -> CliError {
    match e {
        GenerateError::Config(m) => CliError::Input(format!("invalid arguments: {m}")),
        other => CliError::Failed(other.to_string()),
    }
}

pub fn run(a: &Args) -> Result<(), CliError> {
    if a.count == 0 {
        return Err(CliError::Input("invalid arguments: --count must be at least 1".into()));
    }
    if a.max_attempts == 0 || a.max_nodes == 0 {
        return Err(CliError::Input(
            "invalid arguments: --max-attempts and --max-nodes must be at least 1".into(),
        ));
    }
    let cfg = GeneratorConfig {
        max_attempts: a.max_attempts,
        max_nodes: a.max_nodes,
        ..GeneratorConfig::default()
            .size(a.size)
            .agents(a.agents)
            .hole_ratio(a.hole_ratio)
            .wait_ratio(a.wait_ratio)
            .count(a.count)
            .seed(a.seed)
    };
    cfg.validate().map_err(generate_error)?;
    let bars = Bars::new("floe generate", a.quiet);
    let started = std::time::Instant::now();
    bars.begin("generate", a.count as u64);
    let generated = generate_with_progress(&cfg, &bars);
    // A summary line only for a run long enough to have wanted one.
    let secs = started.elapsed().as_secs_f64();
    bars.end_quietly_if(
        secs < 2.0,
        &match &generated {
            Ok(v) => format!("generated {} in {secs:.1} s", count(v.len() as u64, "instance", "instances")),
            Err(_) => "generation stopped".into(),
        },
    );
    let instances = generated.map_err(generate_error)?;
    let mut text = String::new();
    for inst in &instances {
        text.push_str(&inst.to_json());
        text.push('\n');
    }
    crate::emit(a.out.as_ref(), &text)
}
