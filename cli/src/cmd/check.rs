use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use floe_core::generator::needs_wait;
use floe_core::verify::{verify, Check};
use floe_core::{solve, Instance, Plan, SolverConfig};

use floe_core::progress::Progress;
use floe_core::text::count;

use crate::error::CliError;
use crate::input::read_instances;
use crate::progress::Bars;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Suite folder (every *.jsonl file in it, as `floe suite` writes) or a single instance
    /// file; `--suite` and `--input` are the same option.
    #[arg(long, short = 'i', visible_alias = "suite", value_name = "SUITE")]
    input: PathBuf,
    /// Solver node limit per instance.
    #[arg(long, default_value_t = 1_000_000)]
    max_nodes: u64,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Default)]
struct Row {
    count: usize,
    holes: f64,
    needs_wait: usize,
    soc: u64,
    solved: usize,
    agree: usize,
    solve_secs: f64,
}

fn files(input: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !input.is_dir() {
        return Ok(vec![input.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(|e| CliError::input(input, format!("cannot list: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(CliError::input(input, "no .jsonl files in the folder"));
    }
    Ok(out)
}

/// Checks one instance: the solver finds the stored optimum, the stored plan verifies as optimal, and the
/// stored `needs_wait` flag is recomputed. Returns (agrees, solve seconds, problems).
fn check_one(inst: &Instance, config: &SolverConfig) -> (bool, f64, Vec<String>) {
    let mut problems = Vec::new();
    let started = Instant::now();
    let solution = solve(inst, config);
    let secs = started.elapsed().as_secs_f64();
    let solution = match solution {
        Ok(s) => s,
        Err(e) => return (false, secs, vec![format!("not solved: {e}")]),
    };
    if let Some(stored) = &inst.optimal {
        if stored.soc != solution.soc {
            problems.push(format!("stored optimum {} but the solver finds {}", stored.soc, solution.soc));
        }
        match Plan::from_move_strings(&stored.moves) {
            Ok(plan) => {
                let v = verify(inst, &plan, Check::against(Some(solution.soc)));
                if !v.optimal {
                    problems.push(format!("stored plan is not optimal: {:?}", v.failure.map(|f| f.detail)));
                }
            }
            Err(e) => problems.push(format!("stored plan unreadable: {e}")),
        }
    }
    let plan = Plan::from_move_strings(&solution.move_strings(&inst.grid)).expect("solver moves are letters");
    if !verify(inst, &plan, Check::against(Some(solution.soc))).optimal {
        problems.push("the solver's own plan does not verify".into());
    }
    if let Some(flag) = inst.needs_wait {
        match needs_wait(inst, &solution, config.max_nodes) {
            Ok((f, _)) if f == flag => {}
            Ok((f, _)) => problems.push(format!("stored needs_wait {flag}, recomputed {f}")),
            Err(e) => problems.push(format!("needs_wait not decided: {e}")),
        }
    }
    (problems.is_empty(), secs, problems)
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let config = SolverConfig { max_nodes: a.max_nodes, ..SolverConfig::default() };
    let mut rows: BTreeMap<(usize, u32, String), Row> = BTreeMap::new();
    let mut failures = Vec::new();
    let started = Instant::now();
    let mut inputs = Vec::new();
    for file in files(&a.input)? {
        let instances = read_instances(&file)?;
        inputs.push((file, instances));
    }
    let bars = Bars::new("floe check", a.quiet);
    bars.begin("check", inputs.iter().map(|(_, v)| v.len() as u64).sum());
    for (file, instances) in &inputs {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for (n, inst) in instances.iter().enumerate() {
            bars.advance(1, "");
            let key = (inst.num_agents(), inst.grid.width().max(inst.grid.height()), name.clone());
            let row = rows.entry(key).or_default();
            row.count += 1;
            row.holes += f64::from(inst.grid.hole_count()) / f64::from(inst.grid.cells());
            row.needs_wait += usize::from(inst.needs_wait == Some(true));
            let (ok, secs, problems) = check_one(inst, &config);
            row.solve_secs += secs;
            if problems.iter().all(|p| !p.starts_with("not solved")) {
                row.solved += 1;
                row.soc += u64::from(inst.optimal.as_ref().map_or(0, |o| o.soc));
            }
            row.agree += usize::from(ok);
            for p in problems {
                failures.push(format!("{}: instance {}: {p}", file.display(), n + 1));
            }
        }
    }
    let mut out = String::from(
        "| file | agents | size | instances | hole % | needs wait % | mean optimal SoC | solved | checks pass | solve ms |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let (mut total, mut solved, mut agree, mut secs) = (0, 0, 0, 0.0);
    for ((k, size, name), r) in &rows {
        let n = r.count as f64;
        out.push_str(&format!(
            "| {name} | {k} | {size}x{size} | {} | {:.1} | {:.1} | {:.2} | {} | {} | {:.1} |\n",
            r.count,
            100.0 * r.holes / n,
            100.0 * r.needs_wait as f64 / n,
            r.soc as f64 / r.solved.max(1) as f64,
            r.solved,
            r.agree,
            1e3 * r.solve_secs
        ));
        total += r.count;
        solved += r.solved;
        agree += r.agree;
        secs += r.solve_secs;
    }
    let summary = format!(
        "{}: {solved} solved optimally in {:.2} s of solver time; {agree} pass every check ({:.1} s in all)",
        count(total as u64, "instance", "instances"),
        secs,
        started.elapsed().as_secs_f64()
    );
    bars.end(&format!("checked {}", count(total as u64, "instance", "instances")));
    out.push_str(&format!("\n{summary}\n"));
    crate::emit(None, &out)?;
    if failures.is_empty() {
        Ok(())
    } else {
        for f in failures.iter().take(20) {
            eprintln!("floe: {f}");
        }
        Err(CliError::Failed(format!(
            "{} of {} failed a check",
            total - agree,
            count(total as u64, "instance", "instances")
        )))
    }
}
