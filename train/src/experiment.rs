//! The paper's comparison: which environment design gives the most per round of GRPO, when the
//! policy's demonstrations cover 2-agent boards only.
//!
//! Every contender starts from one shared warm start (supervised, on 2-agent boards), gets the
//! same rounds, the same round 0 (uniform over the sizes 3…10), the same prompts a round and the
//! same seeds; only the design of rounds 1, 2, … differs: `fixed` (round 0's configuration every
//! round, the baseline), `fixed-random` (the paper's "GRPO (random)": a configuration drawn per
//! seed, from round 0 on), `difficulty-scaling`, `plr` (level replay), `sec` (a bandit over
//! sizes), `frontier` (data where valid × (1 − valid) is highest), `engineer` (an LLM environment
//! engineer, the embedded model unless an endpoint is given) and `best-of-n` (the upper
//! reference, a hindsight search). The trainee is the planner or, with [`Inputs::Map`], the one
//! that reads only the map. The final checkpoints answer one held-out suite (the planner's of the
//! paper's shape: 3 agents on 3×3…10×10, 4 on 4×4…10×10, 5 on 5×5…10×10; the map trainee's 2 and
//! 3 agents; wait ratios 0.25 / 0.5 / 0.75), and the table gives valid /
//! optimal rates per agent count and per map size (means over seeds, with their standard
//! errors), the warm start as a row, and each contender's paired difference from `fixed`: over
//! every (seed, instance) pair, the mean of the difference in outcome, with its standard error
//! (every standard error clustered by seed and by instance: `clustered`), marked resolved when
//! it is more than [`RESOLVED_SE`] standard errors from 0. `fixed` is
//! also paired with the warm start: the rounds do measurable work when it beats it by more than
//! [`ROUNDS_WORK_SE`] standard errors.
//!
//! The protocol: the warm start is short (40 supervised steps on 2-agent boards for the planner,
//! [`MAP_WARM_STEPS`] for the map trainee) and stands for the paper's base model; the GRPO rounds, on 2-agent boards too, are the main training.
//!
//! The loop and the folder are floe-rounds' ([`floe_rounds::experiment`]): `warm/` (the warm
//! start's run), `<contender>/seed-<s>/` (each run, with `suite-outcomes.json` once evaluated),
//! `table.md`. Re-running the same command resumes: finished runs and evaluations are kept, an
//! interrupted run resumes from its checkpoint.

use std::path::Path;

use floe_core::progress::Progress;
use floe_core::suite::SuiteConfig;
use floe_core::Instance;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{Curriculum, PluginSpec, RoundConfig};
use floe_rounds::experiment::{ContestRun, Design, Entry};
use serde::{Deserialize, Serialize};

pub use floe_rounds::design::random_config;
pub use floe_rounds::experiment::{Choice, BEST_OF};

pub use floe_rounds::stats::{paired_difference, Outcomes, TableSetup, RESOLVED_SE, ROUNDS_WORK_SE};

use crate::config::{RoundsConfig, TrainConfig, ValidationConfig};
use crate::error::TrainError;
use crate::eval::{evaluate_each, Outcome};
use crate::run::{self, load_policy, Plugins, RunOptions};
use crate::tokens::Inputs;

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

impl Budget {
    /// The contenders a budget runs unless told otherwise: every one, the upper reference
    /// (`best-of-n`, [`BEST_OF`] times a contender's rounds) from `medium` on.
    #[must_use]
    pub fn contenders(self) -> Vec<ContenderName> {
        ContenderName::ALL
            .into_iter()
            .filter(|&c| c != ContenderName::BestOfN || self != Budget::Small)
            .collect()
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

/// Supervised steps of the `map` trainee's warm start ([`Inputs::Map`]): chosen so that the
/// "base model" has a frontier over map sizes, as the paper's has (docs/training-results.md).
pub const MAP_WARM_STEPS: usize = 600;

/// The GRPO learning rate of the `map` trainee's rounds (decaying as [`ROUNDS_MIN_LR_RATIO`]
/// says): of the settings tried from its warm start, none moved its validation by more than
/// the noise; 5e-5 without partial credit moved it least badly (docs/training-results.md).
pub const MAP_ROUNDS_LR: f64 = 5e-5;

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
    /// Round 0's configuration (uniform over the sizes) every round: the baseline.
    Fixed,
    /// A configuration drawn from the design limits per seed ([`random_config`]), kept every
    /// round: the paper's "GRPO (random)".
    FixedRandom,
    /// The `difficulty-scaling` curriculum.
    DifficultyScaling,
    /// Prioritized level replay (the `plr` curriculum).
    Plr,
    /// A bandit over sizes (the `sec` curriculum).
    Sec,
    /// The guideline followed literally (the `frontier` curriculum): data where
    /// valid × (1 − valid) is highest.
    Frontier,
    /// The LLM environment engineer.
    Engineer,
    /// The upper reference: each round, [`BEST_OF`] designs tried for the round from the same
    /// checkpoint, the one with the best validation kept (a hindsight search).
    BestOfN,
}

impl ContenderName {
    /// Every contender, in table order.
    pub const ALL: [ContenderName; 8] = [
        ContenderName::Fixed,
        ContenderName::FixedRandom,
        ContenderName::DifficultyScaling,
        ContenderName::Plr,
        ContenderName::Sec,
        ContenderName::Frontier,
        ContenderName::Engineer,
        ContenderName::BestOfN,
    ];

    /// The name, as written in files, folder names, tables and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ContenderName::Fixed => "fixed",
            ContenderName::FixedRandom => "fixed-random",
            ContenderName::DifficultyScaling => "difficulty-scaling",
            ContenderName::Plr => "plr",
            ContenderName::Sec => "sec",
            ContenderName::Frontier => "frontier",
            ContenderName::Engineer => "engineer",
            ContenderName::BestOfN => "best-of-n",
        }
    }
}

impl ContenderName {
    /// How its rounds are designed: `fixed-random` and `best-of-n` by floe-rounds'
    /// experiment itself, the others by their curriculum or engineer.
    #[must_use]
    pub fn design(self) -> Design {
        match self {
            ContenderName::FixedRandom => Design::FixedRandom,
            ContenderName::BestOfN => Design::BestOfN,
            _ => Design::Own,
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
    /// The experiment at a budget, with `engineer` as the LLM contender's engineer, for the
    /// trainee of `inputs` (the `map` trainee gets its own, longer warm start,
    /// [`MAP_WARM_STEPS`]). Every contender of [`ContenderName::ALL`] is in it.
    #[must_use]
    pub fn new(budget: Budget, engineer: PluginSpec, inputs: Inputs) -> Self {
        let spend = budget.spend();
        let sizes: Vec<u32> = (3..=10).collect();
        let limits = DesignLimits {
            min_size: 3,
            max_size: 10,
            agents: vec![2],
            max_sizes: sizes.len(),
            ..DesignLimits::default()
        };
        // floe's round-0 default: uniform over the sizes 3…10, 2 agents.
        let round0 = RoundConfig::round0_default();
        let mut base = TrainConfig::default();
        base.warm_start.data = round0.clone();
        // The warm start is the same short one at every budget: the "base model".
        base.model.layout.inputs = inputs;
        base.warm_start.steps = match inputs {
            Inputs::Planner => WARM_STEPS,
            Inputs::Map => MAP_WARM_STEPS,
        };
        // One epoch of optimal plans.
        base.warm_start.samples = WARM_SAMPLES.max(base.warm_start.steps * base.warm_start.batch_size);
        base.validation = ValidationConfig {
            sizes: sizes.clone(),
            agents: vec![2],
            per_cell: spend.validation_per_cell,
            ..ValidationConfig::default()
        };
        base.grpo.lr = ROUNDS_LR;
        base.grpo.min_lr_ratio = ROUNDS_MIN_LR_RATIO;
        if inputs == Inputs::Map {
            base.grpo.lr = MAP_ROUNDS_LR;
        }
        if inputs == Inputs::Planner {
            // The reward the planner's tables were measured with (docs/training-results.md);
            // the `map` trainee gets `floe train`'s default, without partial credit, which a
            // weak policy cannot farm.
            base.rounds.reward = PluginSpec {
                name: "tiered".into(),
                params: serde_json::json!({"prefix_credit": 0.2, "goal_credit": 0.2}),
                library: None,
            };
        }
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
            Contender {
                name: ContenderName::Frontier,
                curriculum: spec("frontier", serde_json::json!({"base": round0})),
                engineer: None,
            },
            Contender { name: ContenderName::Engineer, curriculum: None, engineer: Some(engineer) },
            // Their rounds are designed by floe-rounds' experiment ([`ContenderName::design`]).
            Contender { name: ContenderName::FixedRandom, curriculum: None, engineer: None },
            Contender { name: ContenderName::BestOfN, curriculum: None, engineer: None },
        ];
        let mut contenders = contenders;
        contenders.sort_by_key(|c| ContenderName::ALL.iter().position(|&n| n == c.name));
        Experiment {
            base,
            rounds: spend.rounds,
            seeds: (0..spend.seeds).collect(),
            contenders,
            // The planner carries over to 5 agents; the `map` trainee writes few valid 4-agent
            // plans at all, so its suite is the boards it trains on and the first step beyond.
            suite: SuiteConfig {
                agents: match inputs {
                    Inputs::Planner => vec![3, 4, 5],
                    Inputs::Map => vec![2, 3],
                },
                // 2-agent boards from 3×3 (the trainee's own sizes); 0 for the planner: from the
                // agent count, as its recorded experiments were.
                min_size: if inputs == Inputs::Map { 3 } else { 0 },
                max_size: 10,
                wait_ratios: vec![0.25, 0.5, 0.75],
                per_cell: spend.suite_per_cell,
                seed: 0x5e7,
                ..SuiteConfig::default()
            },
        }
    }

    /// The rounds of contender `c`'s runs: the experiment's, with its own designers.
    #[must_use]
    pub fn rounds_of(&self, c: &Contender) -> RoundsConfig {
        RoundsConfig {
            rounds: self.rounds,
            curriculum: c.curriculum.clone(),
            engineer: c.engineer.clone(),
            ..self.base.rounds.clone()
        }
    }

    /// The configuration of one run with `seed` under `rounds`, from the warm start's
    /// checkpoint in `warm`.
    #[must_use]
    pub fn run_config(&self, rounds: &RoundsConfig, seed: u64, warm: &Path) -> TrainConfig {
        let mut cfg = self.base.clone();
        cfg.seed = seed;
        cfg.init_checkpoint = Some(warm.join("reference.safetensors"));
        cfg.warm_start.steps = 0;
        cfg.rounds = rounds.clone();
        cfg
    }
}

/// floe's policy in an experiment: its runs, and its checkpoints' answers to the suite.
struct PolicyContest<'a> {
    x: &'a Experiment,
    resolve: &'a dyn Fn(&TrainConfig) -> Result<Plugins, TrainError>,
    warm: std::path::PathBuf,
}

impl floe_rounds::experiment::Contest for PolicyContest<'_> {
    /// A checkpoint.
    type Model = std::path::PathBuf;
    type Error = TrainError;

    fn start(&mut self, dir: &Path, progress: &dyn Progress) -> Result<std::path::PathBuf, TrainError> {
        let opts = RunOptions { resume: true, ..RunOptions::new(dir) };
        run::run_with_progress(&self.x.base, &opts, (self.resolve)(&self.x.base)?, progress)?;
        Ok(dir.join("reference.safetensors"))
    }

    fn rounds(&mut self, contender: usize, _seed: u64) -> Result<RoundsConfig, TrainError> {
        Ok(self.x.rounds_of(&self.x.contenders[contender]))
    }

    fn train(
        &mut self,
        r: &ContestRun<'_>,
        progress: &dyn Progress,
    ) -> Result<std::path::PathBuf, TrainError> {
        let cfg = self.x.run_config(r.rounds, r.seed, &self.warm);
        let opts = RunOptions { resume: true, stop_after: r.stop_after, ..RunOptions::new(r.dir) };
        run::run_with_progress(&cfg, &opts, (self.resolve)(&cfg)?, progress)?;
        Ok(r.dir.join("checkpoint.safetensors"))
    }

    fn record(&mut self, r: &ContestRun<'_>) -> Result<serde_json::Value, TrainError> {
        serde_json::to_value(self.x.run_config(r.rounds, r.seed, &self.warm))
            .map_err(|e| TrainError::Input(e.to_string()))
    }

    fn curriculum(&mut self, spec: &PluginSpec) -> Result<Box<dyn Curriculum>, TrainError> {
        let mut cfg = self.x.base.clone();
        cfg.rounds.curriculum = Some(spec.clone());
        cfg.rounds.engineer = None;
        (self.resolve)(&cfg)?
            .curriculum
            .ok_or_else(|| TrainError::Input(format!("the curriculum {} did not resolve", spec.name)))
    }

    fn outcomes(
        &mut self,
        checkpoint: std::path::PathBuf,
        suite: &[&Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<Outcome>, TrainError> {
        let policy = load_policy(&checkpoint)?;
        progress.begin("suite evaluation", suite.len() as u64);
        let (_, outcomes) = evaluate_each(&policy, suite, self.x.base.eval_batch, progress)?;
        progress.end(&format!("suite evaluation of {}", checkpoint.display()));
        Ok(outcomes)
    }
}

/// Runs (or resumes) the experiment in `out` (floe-rounds' loop,
/// [`floe_rounds::experiment::run`]) and returns the table as Markdown and its rows.
///
/// # Errors
/// What a run, the suite's generation or an evaluation returns; plugins `resolve` refuses; a
/// folder holding another experiment (a different budget or contenders; the seeds may differ).
pub fn run_experiment(
    x: &Experiment,
    out: &Path,
    resolve: &dyn Fn(&TrainConfig) -> Result<Plugins, TrainError>,
    progress: &dyn Progress,
) -> Result<floe_rounds::experiment::Results, TrainError> {
    let entries: Vec<Entry> =
        x.contenders.iter().map(|c| Entry { name: c.name.to_string(), design: c.name.design() }).collect();
    let plan = floe_rounds::experiment::Plan {
        record: serde_json::to_value(x).map_err(|e| TrainError::Input(e.to_string()))?,
        contenders: &entries,
        seeds: &x.seeds,
        suite: x.suite.clone(),
        rounds: x.rounds,
        samples: x.base.rounds.samples,
    };
    let mut contest = PolicyContest { x, resolve, warm: out.join(floe_rounds::experiment::START) };
    floe_rounds::experiment::run(&mut contest, out, &plan, progress)
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
        assert_eq!(
            names,
            [
                "fixed",
                "fixed-random",
                "difficulty-scaling",
                "plr",
                "sec",
                "frontier",
                "engineer",
                "best-of-n"
            ]
        );
        assert!(!Budget::Small.contenders().contains(&ContenderName::BestOfN));
        assert_eq!(Budget::Medium.contenders(), ContenderName::ALL.to_vec());
        let e = "PLR".parse::<ContenderName>().unwrap_err();
        assert!(e.contains("not a contender") && e.contains("difficulty-scaling"), "{e}");
        assert!("huge".parse::<Budget>().unwrap_err().contains("small, medium, full"));
        // An experiment's file names its contenders as before.
        let x = Experiment::new(Budget::Small, PluginSpec::builtin("rules"), Inputs::Planner);
        let json = serde_json::to_value(&x).unwrap();
        let written: Vec<&str> =
            json["contenders"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(written, names);
        let back: Experiment = serde_json::from_value(json).unwrap();
        assert_eq!(back, x);
    }
}
