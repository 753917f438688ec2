//! `floe levels`: level samplers compared for a PPO agent that learns multi-agent
//! MAPF-FrozenLake from scratch (see `floe_train::ppo::bench`): every contender trains the same
//! PPO for the same environment steps under its sampler, for several seeds; the trained policies
//! play the same held-out levels; `table.md` holds the success rates with their standard errors
//! and the paired differences from `uniform`, `curves.png` the learning curves and
//! `placement.png` where each sampler put its levels. Runs are appended to `runs.jsonl` as they
//! finish, and the same command with the same folder goes on from there.

use std::io::Write;
use std::path::PathBuf;

use floe_train::ppo::bench::{self, BenchConfig, Budget, RunResult, CONTENDERS};

use crate::error::CliError;
use crate::render::levels::{curves_png, placement_png, Curves, Placement};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output folder (runs.jsonl, table.md, curves.png, placement.png, config.json); the same
    /// folder goes on where it stopped.
    #[arg(long, default_value = "out/levels")]
    out: PathBuf,
    /// `tiny` (a test's), `small` (the docs' commands; about half an hour on 2 cores) or `medium`
    /// (what tells the contenders apart).
    #[arg(long, default_value = "small")]
    budget: Budget,
    /// The contenders, comma-separated (in table order whatever the order here) [every one].
    #[arg(long, value_delimiter = ',')]
    contenders: Option<Vec<String>>,
    /// Seeds per contender (default: the budget's, 5).
    #[arg(long)]
    seeds: Option<u64>,
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
    floe_train::set_threads(a.threads);
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::Failed(format!("{}: {e}", a.out.display())))?;
    // The contenders and seeds only pick which runs to make: a folder's runs may come from several
    // invocations (or from shards on other machines, their runs.jsonl put together) as long as
    // everything else is the same.
    let config_path = a.out.join("config.json");
    let config_text = serde_json::to_string_pretty(&cfg).map_err(input)?;
    let runs_of = |c: &BenchConfig| BenchConfig { contenders: Vec::new(), seeds: 0, ..c.clone() };
    match std::fs::read_to_string(&config_path) {
        Ok(old) => {
            let same =
                serde_json::from_str::<BenchConfig>(&old).is_ok_and(|old| runs_of(&old) == runs_of(&cfg));
            if !same {
                return Err(input(format!(
                    "{} holds runs of other settings ({}): use another --out",
                    a.out.display(),
                    config_path.display()
                )));
            }
        }
        Err(_) => std::fs::write(&config_path, &config_text).map_err(|e| CliError::Failed(e.to_string()))?,
    }
    let log = |m: &str| {
        if !a.quiet {
            eprintln!("floe levels: {m}");
        }
    };
    let held = bench::held_out(&cfg).map_err(crate::cmd::train::cli_error)?;
    log(&format!(
        "{} hard held-out levels ({}), {} of the paper's shape",
        held.hard.len(),
        bench::describe(&cfg.hard),
        held.paper.len()
    ));
    let path = bench::results_path(&a.out);
    let mut runs: Vec<RunResult> = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(|e| input(format!("{}: {e}", path.display())))?;
    // Runs whose sampler has changed since they were recorded (plr before robust PLR) are run
    // again; their lines stay in runs.jsonl, unused.
    let mut stale = Vec::new();
    for r in std::mem::take(&mut runs) {
        if bench::current(&cfg, &r).map_err(crate::cmd::train::cli_error)? {
            runs.push(r);
        } else {
            stale.push(format!("{} seed {}", r.contender, r.seed));
        }
    }
    if !stale.is_empty() {
        log(&format!(
            "run again, recorded before the sampler changed (plr is robust PLR now): {}",
            stale.join(", ")
        ));
    }
    for seed in 0..cfg.seeds {
        for c in &cfg.contenders {
            if runs.iter().any(|r| &r.contender == c && r.seed == seed) {
                continue;
            }
            log(&format!("{c}, seed {seed}: training for {} environment steps", cfg.env_steps));
            let r = bench::run_one(&cfg, &held, c, seed, &log).map_err(crate::cmd::train::cli_error)?;
            log(&format!(
                "{c}, seed {seed}: hard {:.1} % (CVaR10 {:.1} %), paper shape {:.1} %, {:.0} s",
                100.0 * r.hard_success,
                100.0 * r.hard_cvar10,
                100.0 * r.paper_success,
                r.seconds
            ));
            let line = serde_json::to_string(&r).map_err(input)?;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
            writeln!(f, "{line}").map_err(|e| CliError::Failed(e.to_string()))?;
            runs.push(r);
        }
    }
    let random = bench::random_baseline(&cfg, &held).map_err(crate::cmd::train::cli_error)?;
    let table = bench::table(&cfg, &runs, &random);
    std::fs::write(a.out.join("table.md"), &table).map_err(|e| CliError::Failed(e.to_string()))?;
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
        std::fs::write(a.out.join("curves.png"), png).map_err(|e| CliError::Failed(e.to_string()))?;
    }
    let placed: Vec<Placement> = bench::placement(&runs)
        .into_iter()
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
    std::fs::write(a.out.join("placement.png"), png).map_err(|e| CliError::Failed(e.to_string()))?;
    crate::emit(None, &table)?;
    Ok(())
}
