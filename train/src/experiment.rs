//! The paper's comparison: which environment design gives the most per round of GRPO, when the
//! policy's demonstrations cover 2-agent boards only and the evaluation is on 3, 4 and 5 agents.
//!
//! Every contender starts from one shared warm start (supervised, on 2-agent boards), gets the
//! same rounds, the same round 0 (floe's default scaled to the design limits: the paper's
//! "GRPO (random)"), the same prompts a round and the same seeds; only the design of rounds
//! 1, 2, … differs: `fixed` (round 0's configuration every round, the baseline),
//! `difficulty-scaling`, `plr` (level replay), `sec` (a bandit over sizes) and `engineer` (an
//! LLM environment engineer, the embedded model unless an endpoint is given). The final
//! checkpoints answer one held-out suite of the paper's shape (3 agents on 3×3…10×10, 4 on
//! 4×4…10×10, 5 on 5×5…10×10, wait ratios 0.25 / 0.5 / 0.75), and the table gives valid /
//! optimal rates per agent count and per map size (means over seeds, with their standard
//! errors), the warm start as a row, and each contender's paired difference from `fixed`: over
//! every (seed, instance) pair, the mean of the difference in outcome, with its standard error
//! (every standard error clustered by seed and by instance: `clustered`), marked resolved when
//! it is more than [`RESOLVED_SE`] standard errors from 0. `fixed` is
//! also paired with the warm start: the rounds do measurable work when it beats it by more than
//! [`ROUNDS_WORK_SE`] standard errors.
//!
//! The protocol: the warm start is short (40 supervised steps on 2-agent boards) and stands for
//! the paper's base model; the GRPO rounds, on 2-agent boards too, are the main training.
//!
//! Everything lives in one folder: `warm/` (the warm start's run), `<contender>/seed-<s>/` (each
//! run, with `suite-outcomes.json` once evaluated), `table.md`. Re-running the same command
//! resumes: finished runs and evaluations are kept, an interrupted run resumes from its
//! checkpoint.

use std::path::Path;

use floe_core::progress::Progress;
use floe_core::suite::{build_suite_with_progress, SuiteConfig};
use floe_core::Instance;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{PluginSpec, RoundConfig, SizeConfig};
use serde::{Deserialize, Serialize};

pub use floe_rounds::stats::{paired_difference, Outcomes, TableSetup, RESOLVED_SE, ROUNDS_WORK_SE};

use crate::config::{TrainConfig, ValidationConfig};
use crate::error::TrainError;
use crate::eval::{evaluate_each, Outcome};
use crate::run::{self, load_policy, Plugins, RunOptions};

/// How much to spend (times on an idle 2-core machine, build excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// About half an hour: a short warm start, 3 rounds, 2 seeds, a small paper-shaped suite.
    Small,
    /// About two hours: 10 seeds, so that the paired standard error of the "all" valid rate,
    /// clustered by seed, comes near 1.5 points (the seeds' spread dominates it: a design's
    /// final rate moved by 1.4–6 points between seeds in a 3-seed run).
    Medium,
    /// Hours more: longer rounds, more seeds, a larger suite.
    Full,
}

impl Budget {
    /// Every budget, cheapest first.
    pub const ALL: [Budget; 3] = [Budget::Small, Budget::Medium, Budget::Full];

    /// The budget's name, as written in files and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Budget::Small => "small",
            Budget::Medium => "medium",
            Budget::Full => "full",
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Budget {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Budget::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("{s}: not a budget; use {}", Budget::ALL.map(Budget::name).join(", ")))
    }
}

/// What a budget sets.
#[derive(Debug, Clone, Copy)]
struct Spend {
    rounds: u32,
    prompts: usize,
    seeds: u64,
    validation_per_cell: usize,
    suite_per_cell: usize,
}

impl Budget {
    fn spend(self) -> Spend {
        match self {
            Budget::Small => {
                Spend { rounds: 3, prompts: 128, seeds: 2, validation_per_cell: 10, suite_per_cell: 2 }
            }
            Budget::Medium => {
                Spend { rounds: 3, prompts: 384, seeds: 10, validation_per_cell: 20, suite_per_cell: 15 }
            }
            Budget::Full => {
                Spend { rounds: 4, prompts: 768, seeds: 10, validation_per_cell: 50, suite_per_cell: 30 }
            }
        }
    }
}

/// Supervised steps of the shared warm start (batches of 64 optimal plans of 2-agent boards):
/// enough that the policy writes readable plans (about half of the 2-agent validation set
/// valid), short enough that the GRPO rounds carry most of the gain, as in the paper, where the
/// base model is weak.
pub const WARM_STEPS: usize = 40;

/// Optimal plans the warm start draws its batches from (one epoch of 40 batches of 64).
pub const WARM_SAMPLES: usize = 2560;

/// The GRPO learning rate of the experiment's rounds: from the short warm start, 2e-4 gained
/// where 5e-5 (the default) moved little (docs/training-results.md).
pub const ROUNDS_LR: f64 = 2e-4;

/// The rounds' learning rate decays along a half cosine over the run's GRPO prompts to this
/// share of [`ROUNDS_LR`]. At a constant rate the last steps moved each design's final valid
/// rate by points of its own, so the paired differences from `fixed` varied between seeds with
/// a standard deviation of 4.0–5.8 points at `medium`; with the decay, 2.2–3.6, for a fifth less
/// gain from the rounds (docs/training-results.md).
pub const ROUNDS_MIN_LR_RATIO: f64 = 0.1;

/// A contender's name: which design of rounds after round 0. Written in `experiment.json` and
/// as the folder of its runs by the names of [`ContenderName::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContenderName {
    /// Round 0's configuration every round: the baseline.
    Fixed,
    /// The `difficulty-scaling` curriculum.
    DifficultyScaling,
    /// Prioritized level replay (the `plr` curriculum).
    Plr,
    /// A bandit over sizes (the `sec` curriculum).
    Sec,
    /// The LLM environment engineer.
    Engineer,
}

impl ContenderName {
    /// Every contender, in table order.
    pub const ALL: [ContenderName; 5] = [
        ContenderName::Fixed,
        ContenderName::DifficultyScaling,
        ContenderName::Plr,
        ContenderName::Sec,
        ContenderName::Engineer,
    ];

    /// The name, as written in files, folder names, tables and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ContenderName::Fixed => "fixed",
            ContenderName::DifficultyScaling => "difficulty-scaling",
            ContenderName::Plr => "plr",
            ContenderName::Sec => "sec",
            ContenderName::Engineer => "engineer",
        }
    }
}

impl std::fmt::Display for ContenderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ContenderName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        ContenderName::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            format!("{s}: not a contender; use {}", ContenderName::ALL.map(ContenderName::name).join(", "))
        })
    }
}

/// One contender: the design of rounds after round 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contender {
    pub name: ContenderName,
    pub curriculum: Option<PluginSpec>,
    pub engineer: Option<PluginSpec>,
}

/// The whole experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// The warm start's run (rounds 0); each contender's run is built from it.
    pub base: TrainConfig,
    /// GRPO rounds per contender (round 0 included).
    pub rounds: u32,
    pub seeds: Vec<u64>,
    pub contenders: Vec<Contender>,
    pub suite: SuiteConfig,
}

impl Experiment {
    /// The experiment at a budget, with `engineer` as the LLM contender's engineer.
    #[must_use]
    pub fn new(budget: Budget, engineer: PluginSpec) -> Self {
        let spend = budget.spend();
        let sizes: Vec<u32> = (3..=10).collect();
        let limits = DesignLimits {
            min_size: 3,
            max_size: 10,
            agents: vec![2],
            max_sizes: sizes.len(),
            ..DesignLimits::default()
        };
        let round0 = RoundConfig {
            sizes: sizes
                .iter()
                .map(|&size| SizeConfig {
                    size,
                    data_ratio: 1.0 / sizes.len() as f64,
                    hole_ratio: 0.2,
                    wait_ratio: 0.5,
                })
                .collect(),
            agents: vec![2],
            replay_fraction: 0.0,
        };
        let mut base = TrainConfig::default();
        base.warm_start.data = round0.clone();
        // The warm start is the same short one at every budget: the "base model".
        base.warm_start.samples = WARM_SAMPLES;
        base.warm_start.steps = WARM_STEPS;
        base.validation = ValidationConfig {
            sizes: sizes.clone(),
            agents: vec![2],
            per_cell: spend.validation_per_cell,
            ..ValidationConfig::default()
        };
        base.grpo.lr = ROUNDS_LR;
        base.grpo.min_lr_ratio = ROUNDS_MIN_LR_RATIO;
        base.rounds.rounds = 0;
        base.rounds.epochs = 1;
        base.rounds.samples = spend.prompts;
        base.rounds.round0 = Some(round0.clone());
        base.rounds.design_limits = limits;
        let spec = |name: &str, params: serde_json::Value| {
            Some(PluginSpec { name: name.into(), params, library: None })
        };
        let contenders = vec![
            Contender {
                name: ContenderName::Fixed,
                curriculum: spec("fixed", serde_json::json!({"config": round0})),
                engineer: None,
            },
            Contender {
                name: ContenderName::DifficultyScaling,
                curriculum: spec(
                    "difficulty-scaling",
                    serde_json::json!({"start_sizes": sizes, "agents": [2], "max_size": 10,
                                       "entry_hole_ratio": 0.2, "entry_wait_ratio": 0.5}),
                ),
                engineer: None,
            },
            Contender {
                name: ContenderName::Plr,
                curriculum: spec("plr", serde_json::json!({"base": round0, "replay_fraction": 0.5})),
                engineer: None,
            },
            Contender {
                name: ContenderName::Sec,
                curriculum: spec("sec", serde_json::json!({"base": round0})),
                engineer: None,
            },
            Contender { name: ContenderName::Engineer, curriculum: None, engineer: Some(engineer) },
        ];
        Experiment {
            base,
            rounds: spend.rounds,
            seeds: (0..spend.seeds).collect(),
            contenders,
            suite: SuiteConfig {
                agents: vec![3, 4, 5],
                max_size: 10,
                wait_ratios: vec![0.25, 0.5, 0.75],
                per_cell: spend.suite_per_cell,
                seed: 0x5e7,
                ..SuiteConfig::default()
            },
        }
    }

    /// The configuration of one contender's run with one seed.
    #[must_use]
    pub fn run_config(&self, c: &Contender, seed: u64, warm: &Path) -> TrainConfig {
        let mut cfg = self.base.clone();
        cfg.seed = seed;
        cfg.init_checkpoint = Some(warm.join("reference.safetensors"));
        cfg.warm_start.steps = 0;
        cfg.rounds.rounds = self.rounds;
        cfg.rounds.curriculum = c.curriculum.clone();
        cfg.rounds.engineer = c.engineer.clone();
        cfg
    }
}

fn outcomes_of(
    checkpoint: &Path,
    file: &Path,
    suite: &[&Instance],
    batch: usize,
    progress: &dyn Progress,
) -> Result<Vec<Outcome>, TrainError> {
    if let Ok(text) = std::fs::read_to_string(file) {
        if let Ok(o) = serde_json::from_str::<Vec<Outcome>>(&text) {
            if o.len() == suite.len() {
                return Ok(o);
            }
        }
    }
    let policy = load_policy(checkpoint)?;
    progress.begin("suite evaluation", suite.len() as u64);
    let (_, outcomes) = evaluate_each(&policy, suite, batch, progress)?;
    progress.end(&format!("suite evaluation of {}", checkpoint.display()));
    std::fs::write(file, serde_json::to_string(&outcomes).unwrap_or_default())
        .map_err(|e| TrainError::io(file, e))?;
    Ok(outcomes)
}

/// Runs (or resumes) the experiment in `out` and returns the table as Markdown.
///
/// # Errors
/// What a run, the suite's generation or an evaluation returns; plugins `resolve` refuses.
pub fn run_experiment(
    x: &Experiment,
    out: &Path,
    resolve: &dyn Fn(&TrainConfig) -> Result<Plugins, TrainError>,
    progress: &dyn Progress,
) -> Result<String, TrainError> {
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    let write_json = |name: &str, v: &dyn erased::Json| {
        let p = out.join(name);
        std::fs::write(&p, v.json()).map_err(|e| TrainError::io(&p, e))
    };
    // Resuming is only sound for the same experiment: finished runs and suite outcomes are
    // reused. The seeds may differ: every (contender, seed) run stands alone, so more seeds
    // extend an experiment and fewer give the table of those alone.
    let recorded = out.join("experiment.json");
    if let Ok(text) = std::fs::read_to_string(&recorded) {
        let same = serde_json::from_str::<Experiment>(&text)
            .is_ok_and(|r| Experiment { seeds: x.seeds.clone(), ..r } == *x);
        if !same {
            return Err(TrainError::Input(format!(
                "{} holds another experiment (a different budget or contenders): resume it with the same \
                 command (any --seeds), or give a new output folder",
                out.display()
            )));
        }
    }
    write_json("experiment.json", &x)?;
    let warm = out.join("warm");
    let opts = |dir: &Path| RunOptions { resume: true, ..RunOptions::new(dir) };
    // The suite first: a suite configuration that gives nothing is refused before any training.
    let cells = build_suite_with_progress(&x.suite, progress)?;
    progress.line("experiment: the shared warm start");
    run::run_with_progress(&x.base, &opts(&warm), resolve(&x.base)?, progress)?;
    let suite: Vec<&Instance> = cells.iter().flat_map(|c| c.instances.iter()).collect();
    let batch = x.base.eval_batch;
    let warm_out = outcomes_of(
        &warm.join("reference.safetensors"),
        &warm.join("suite-outcomes.json"),
        &suite,
        batch,
        progress,
    )?;
    let mut rows: Vec<(String, Outcomes)> = vec![("warm start".into(), vec![warm_out])];
    // Seed by seed, every contender: an interrupted experiment has as many finished runs of
    // each, and its finished seeds give a table (`--seeds`).
    let mut per_contender: Vec<Outcomes> = vec![Vec::new(); x.contenders.len()];
    for &seed in &x.seeds {
        for (c, per_seed) in x.contenders.iter().zip(&mut per_contender) {
            let dir = out.join(c.name.name()).join(format!("seed-{seed}"));
            let cfg = x.run_config(c, seed, &warm);
            progress.line(&format!("experiment: {} with seed {seed}", c.name));
            run::run_with_progress(&cfg, &opts(&dir), resolve(&cfg)?, progress)?;
            per_seed.push(outcomes_of(
                &dir.join("checkpoint.safetensors"),
                &dir.join("suite-outcomes.json"),
                &suite,
                batch,
                progress,
            )?);
        }
    }
    rows.extend(x.contenders.iter().map(|c| c.name.to_string()).zip(per_contender));
    let table = table(x, &suite, &rows);
    let p = out.join("table.md");
    std::fs::write(&p, &table).map_err(|e| TrainError::io(&p, e))?;
    Ok(table)
}

mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
        }
    }
}

/// The paper-style table of an experiment's rows.
#[must_use]
pub fn table(x: &Experiment, suite: &[&Instance], rows: &[(String, Outcomes)]) -> String {
    let setup = TableSetup {
        suite: x.suite.clone(),
        seeds: x.seeds.len(),
        rounds: x.rounds,
        samples: x.base.rounds.samples,
    };
    floe_rounds::stats::table(&setup, suite, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in files are serde's, the names on the command line [`FromStr`]'s: the same.
    #[test]
    fn names_in_files_are_the_names_on_the_command_line() {
        for c in ContenderName::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), serde_json::json!(c.name()));
            assert_eq!(c.name().parse::<ContenderName>(), Ok(c));
        }
        for b in Budget::ALL {
            assert_eq!(serde_json::to_value(b).unwrap(), serde_json::json!(b.name()));
            assert_eq!(b.name().parse::<Budget>(), Ok(b));
        }
        let names: Vec<&str> = ContenderName::ALL.map(ContenderName::name).to_vec();
        assert_eq!(names, ["fixed", "difficulty-scaling", "plr", "sec", "engineer"]);
        let e = "PLR".parse::<ContenderName>().unwrap_err();
        assert!(e.contains("not a contender") && e.contains("difficulty-scaling"), "{e}");
        assert!("huge".parse::<Budget>().unwrap_err().contains("small, medium, full"));
        // An experiment's file names its contenders as before.
        let x = Experiment::new(Budget::Small, PluginSpec::builtin("rules"));
        let json = serde_json::to_value(&x).unwrap();
        let written: Vec<&str> =
            json["contenders"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(written, names);
        let back: Experiment = serde_json::from_value(json).unwrap();
        assert_eq!(back, x);
    }
}
