//! `floe levels`: level samplers compared for a PPO agent that learns multi-agent
//! MAPF-FrozenLake from scratch (see `floe_train::ppo::bench`): every contender trains the same
//! PPO for the same environment steps under its sampler, for several seeds; the trained policies
//! play the same held-out levels; `table.md` holds the success rates with their standard errors
//! and the paired differences from `fixed` and `uniform`, `curves.png` the learning curves and
//! `placement.png` where each sampler put its levels. The folder is floe-rounds' experiment's
//! (`experiment.json`, a run a folder, `<contender>/seed-<s>/suite-outcomes.json`, kept as each
//! run finishes); `runs.jsonl` gathers every run, and the same command with the same folder goes
//! on from there.

use std::path::PathBuf;

use floe_core::progress::{Lines, Progress, Silent};
use floe_rounds::folder::write_atomic;
use floe_train::ppo::bench::{self, BenchConfig, Budget, Comparison, CONTENDERS};

use crate::error::CliError;
use crate::render::levels::{curves_png, placement_png, spread_png, Curves, Placement, Spread};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output folder (experiment.json, a folder a run, runs.jsonl, table.md, curves.png,
    /// placement.png, spread.png); the same folder goes on where it stopped.
    #[arg(long, default_value = "out/levels")]
    out: PathBuf,
    /// `tiny` (a test's), `small` (the docs' commands; about half an hour on 2 cores) or `medium`
    /// (what tells the contenders apart).
    #[arg(long, default_value = "small")]
    budget: Budget,
    /// The contenders, comma-separated (in table order whatever the order here) [every one].
    #[arg(long, value_delimiter = ',')]
    contenders: Option<Vec<String>>,
    /// Seeds per contender, 0 to N−1 (default: the budget's, 5).
    #[arg(long, conflicts_with = "seed")]
    seeds: Option<u64>,
    /// These seeds alone, comma-separated (a shard of the runs: `floe.ray.levels` sends one run,
    /// a contender and a seed, to each task); the table is of these seeds.
    #[arg(long, value_delimiter = ',')]
    seed: Option<Vec<u64>>,
    /// Write the held-out sets these options play into this folder (`hard.jsonl`,
    /// `paper.jsonl`, `ten-<agents>.jsonl`: one instance a line, with its optimum), and nothing
    /// else: no run, no `--out` touched.
    #[arg(long)]
    held_out: Option<PathBuf>,
    /// Print the runs these options make, one JSON array `[contender, seed]` a line, and nothing
    /// else, once `--out` is found to hold no other settings' runs; nothing is written.
    #[arg(long)]
    plan: bool,
    /// Environment steps of training per run (default: the budget's).
    #[arg(long)]
    env_steps: Option<u64>,
    /// libtorch's threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn input(e: impl std::fmt::Display) -> CliError {
    CliError::Input(e.to_string())
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let mut cfg = BenchConfig::of(a.budget);
    if let Some(c) = &a.contenders {
        if c.iter().any(|c| c == "upper") {
            return Err(input(
                "contender \"upper\" is now `target` (training on the hard distribution is a reference, not \
                 an upper bound)",
            ));
        }
        if let Some(bad) = c.iter().find(|c| !CONTENDERS.contains(&c.as_str())) {
            return Err(input(format!("contender {bad:?}: one of {}", CONTENDERS.join(", "))));
        }
        cfg.contenders =
            CONTENDERS.iter().filter(|n| c.iter().any(|x| x == *n)).map(ToString::to_string).collect();
    }
    if let Some(s) = a.seeds {
        cfg.seeds = s.max(1);
    }
    if let Some(n) = a.env_steps {
        cfg.env_steps = n;
    }
    let seeds: Vec<u64> = a.seed.clone().unwrap_or_else(|| (0..cfg.seeds).collect());
    if let Some(dir) = &a.held_out {
        let held = bench::held_out(&cfg).map_err(crate::cmd::train::cli_error)?;
        std::fs::create_dir_all(dir).map_err(|e| CliError::Failed(format!("{}: {e}", dir.display())))?;
        let mut sets = vec![("hard".to_string(), &held.hard), ("paper".to_string(), &held.paper)];
        sets.extend(held.ten.iter().map(|(k, l)| (format!("ten-{k}"), l)));
        for (name, levels) in sets {
            let text: String = levels.iter().map(|l| l.to_json() + "\n").collect();
            write_atomic(&dir.join(format!("{name}.jsonl")), text.as_bytes())
                .map_err(|e| crate::cmd::train::cli_error(e.into()))?;
        }
        return Ok(());
    }
    if a.plan {
        bench::check(&cfg, &a.out).map_err(crate::cmd::train::cli_error)?;
        let mut text = String::new();
        for seed in &seeds {
            for c in &cfg.contenders {
                text.push_str(&serde_json::json!([c, seed]).to_string());
                text.push('\n');
            }
        }
        return crate::emit(None, &text);
    }
    floe_train::set_threads(a.threads);
    let progress: Box<dyn Progress> =
        if a.quiet { Box::new(Silent) } else { Box::new(Lines { prefix: "floe levels: ".into() }) };
    let Comparison { table, runs } =
        bench::experiment(&cfg, &a.out, &seeds, progress.as_ref()).map_err(crate::cmd::train::cli_error)?;
    let curves: Vec<Curves> = cfg
        .contenders
        .iter()
        .map(|c| Curves {
            name: c.clone(),
            seeds: runs.iter().filter(|r| &r.contender == c).map(|r| r.curve.clone()).collect(),
        })
        .collect();
    if curves.iter().any(|c| c.seeds.iter().any(|s| !s.is_empty())) {
        let png = curves_png(
            &format!("floe levels ({:?}): success on the hard held-out levels", cfg.budget),
            &curves,
        )
        .map_err(input)?;
        write_atomic(&a.out.join("curves.png"), &png).map_err(|e| crate::cmd::train::cli_error(e.into()))?;
    }
    let placed: Vec<Placement> = bench::placement(&runs)
        .into_iter()
        .filter(|(name, _)| cfg.contenders.contains(name))
        .map(|(name, p)| Placement {
            name,
            played: p.into_iter().map(|(s, n)| (s.size, s.agents, s.hole_percent, n)).collect(),
        })
        .collect();
    let png = placement_png(
        "floe levels: where each sampler put its levels (episodes by map size × hole ratio; by agents)",
        &placed,
    )
    .map_err(input)?;
    write_atomic(&a.out.join("placement.png"), &png).map_err(|e| crate::cmd::train::cli_error(e.into()))?;
    // Each contender's success per hard level, the mean over its seeds.
    let spread: Vec<Spread> = cfg
        .contenders
        .iter()
        .map(|c| {
            let hard: Vec<&Vec<f64>> = runs.iter().filter(|r| &r.contender == c).map(|r| &r.hard).collect();
            let n = hard.iter().map(|h| h.len()).min().unwrap_or(0);
            let levels = (0..n).map(|i| hard.iter().map(|h| h[i]).sum::<f64>() / hard.len() as f64).collect();
            Spread { name: c.clone(), levels }
        })
        .collect();
    let png = spread_png(
        &format!(
            "floe levels ({:?}): success per hard held-out level, each contender's levels from its worst",
            cfg.budget
        ),
        &spread,
    )
    .map_err(input)?;
    write_atomic(&a.out.join("spread.png"), &png).map_err(|e| crate::cmd::train::cli_error(e.into()))?;
    crate::emit(None, &table)?;
    Ok(())
}
