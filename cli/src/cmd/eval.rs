//! `floe eval`: a checkpoint's greedy answers on a suite, as the paper's tables.

use std::path::PathBuf;

use floe_core::progress::Progress;
use floe_core::Instance;

use crate::cmd::train::cli_error;
use crate::error::CliError;
use crate::input::read_instances;
use crate::render::heatmap::{self, RateCell};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A checkpoint written by `floe train` (checkpoint.safetensors, round-N.safetensors or
    /// reference.safetensors).
    #[arg(long)]
    checkpoint: PathBuf,
    /// Suite folder (every *.jsonl file in it, as `floe suite` writes) or one instance file.
    #[arg(long)]
    suite: PathBuf,
    /// Also write the report as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write each instance's outcome here, as JSON Lines in the suite's order (files by
    /// name, then their order in the file): file, instance (numbered from 1 in its file), agents,
    /// size, valid, optimal. Two checkpoints' files on one suite pair up line by line.
    #[arg(long)]
    outcomes: Option<PathBuf>,
    /// Also draw the valid and optimal rates as a PNG heat map here: two panels, agent count ×
    /// map size, the percentage in each cell and the mean over map sizes per agent count.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    print_json: bool,
    /// Sequences decoded together.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// libtorch threads (0: one per core this process may use).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn suite_files(dir: &std::path::Path) -> Result<Vec<PathBuf>, CliError> {
    if !dir.is_dir() {
        if !dir.exists() {
            return Err(CliError::input(dir, "no such file or folder"));
        }
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::input(dir, format!("cannot list: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(CliError::input(dir, "no .jsonl files in the folder"));
    }
    Ok(out)
}

pub fn run(a: &Args) -> Result<(), CliError> {
    if a.batch == 0 {
        return Err(CliError::Input("--batch must be at least 1".into()));
    }
    floe_train::set_threads(a.threads);
    if !a.checkpoint.is_file() {
        return Err(CliError::input(&a.checkpoint, "no such checkpoint file"));
    }
    let policy = floe_train::load_policy(&a.checkpoint).map_err(cli_error)?;
    let mut instances: Vec<Instance> = Vec::new();
    let mut origin: Vec<(String, usize)> = Vec::new();
    for f in suite_files(&a.suite)? {
        let read = read_instances(&f)?;
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        origin.extend((0..read.len()).map(|i| (name.clone(), i)));
        instances.extend(read);
    }
    for (i, inst) in instances.iter().enumerate() {
        policy.config.layout.check(inst).map_err(|e| {
            let (file, line) = &origin[i];
            CliError::Input(format!("{file}: instance {}: {e}", line + 1))
        })?;
    }
    let refs: Vec<&Instance> = instances.iter().collect();
    let bars = crate::progress::Bars::new("floe eval", a.quiet);
    let started = std::time::Instant::now();
    bars.begin("evaluation", refs.len() as u64);
    let evaluated = floe_train::evaluate_each(&policy, &refs, a.batch, &bars);
    bars.end(&format!(
        "{} answered in {:.0} s",
        floe_core::text::count(refs.len() as u64, "instance", "instances"),
        started.elapsed().as_secs_f64()
    ));
    let (report, each) = evaluated.map_err(cli_error)?;
    if let Some(p) = &a.outcomes {
        let mut text = String::new();
        for ((inst, (file, line)), o) in instances.iter().zip(&origin).zip(&each) {
            let row = serde_json::json!({
                "file": file, "instance": line + 1, "agents": inst.num_agents(),
                "size": inst.grid.width().max(inst.grid.height()),
                "valid": o.valid, "optimal": o.optimal,
            });
            text.push_str(&row.to_string());
            text.push('\n');
        }
        std::fs::write(p, text).map_err(|e| CliError::input(p, format!("cannot write: {e}")))?;
    }
    let json = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n";
    if let Some(p) = &a.json {
        std::fs::write(p, &json).map_err(|e| CliError::input(p, format!("cannot write: {e}")))?;
    }
    if let Some(p) = &a.png {
        let cells: Vec<RateCell> = report
            .cells
            .iter()
            .map(|c| RateCell {
                agents: c.agents,
                size: c.size,
                instances: c.instances,
                valid: c.valid_rate(),
                optimal: c.optimal_rate(),
            })
            .collect();
        let title = format!(
            "floe eval: {} on {}, {}",
            a.checkpoint.display(),
            a.suite.display(),
            floe_core::text::count(refs.len() as u64, "instance", "instances")
        );
        let png = heatmap::png(&title, &cells)
            .map_err(|e| CliError::Failed(format!("{}: drawing the heat map: {e}", p.display())))?;
        std::fs::write(p, png).map_err(|e| CliError::input(p, format!("cannot write: {e}")))?;
    }
    crate::emit(None, &if a.print_json { json } else { report.to_markdown() })
}
