//! `floe levels`: the comparison of level samplers for a PPO agent learning from scratch. Each
//! contender trains the same PPO ([`super::Ppo`]) for the same environment steps on the same
//! training space, its levels steered by its sampler, for several seeds; every trained policy
//! then plays the same held-out levels (seeds never trained on). The table gives each held-out
//! set's success rate per contender with its standard error, the paired differences from `fixed`
//! (the paper's question: a designed distribution against round 0's left alone) and from
//! `uniform`, clustered by seed and by level (floe-rounds' `stats::clustered`), the CVaR of the
//! success rate over the worst 10 % and 25 % of levels, the cost over the CBS optimum, and each
//! contender's wall time.
//!
//! | contender | sampler |
//! |---|---|
//! | `uniform` | domain randomisation: a new level from the training space after every episode's level was played once (`max_plays` 1) |
//! | `fixed` | round 0's configuration (the engineer's first phase), never redesigned: the same phases, the pool refilled from it at each |
//! | `plr` | robust PLR (PLR⊥), scored with the PPO's positive value loss of each episode; the PPO learns from replayed levels alone |
//! | `accel` | ACCEL: robust PLR whose replayed levels are also edited (5 changes each, solved again) into the buffer's lowest slots |
//! | `learnability` | SFL: p·(1−p) of each level's recent successes |
//! | `frontier` | generator configurations per map size redesigned between phases |
//! | `engineer` | the embedded environment engineer over the same phases |
//! | `target` | a reference, not a bound: `uniform` on the hard held-out set's own space |

use std::path::{Path, PathBuf};
use std::time::Instant;

use floe_core::generator::GeneratorConfig;
use floe_core::progress::Progress;
use floe_core::suite::{build_suite, SuiteConfig};
use floe_core::Instance;
use floe_levels::{LevelSource, LevelSpace, LevelsSpec, Shape};
use floe_plugin_api::PluginSpec;
use floe_rounds::experiment::{self, Design, Entry, Trials};
use serde::{Deserialize, Serialize};

use super::eval::{cvar, evaluate, summary, Actor, LevelResult};
use super::{Ppo, PpoConfig};
use crate::error::TrainError;

/// Every contender, in the table's order.
pub const CONTENDERS: [&str; 8] =
    ["uniform", "fixed", "plr", "accel", "learnability", "frontier", "engineer", "target"];

/// How much a comparison runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// For tests: a few thousand steps, tiny held-out sets.
    Tiny,
    /// What the docs' commands reproduce, within half an hour on 2 cores.
    Small,
    /// What tells the contenders apart.
    Medium,
}

impl std::str::FromStr for Budget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tiny" => Ok(Budget::Tiny),
            "small" => Ok(Budget::Small),
            "medium" => Ok(Budget::Medium),
            other => Err(format!("budget {other:?}: tiny, small or medium")),
        }
    }
}

/// A comparison's settings: a budget's, which the command line may change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// The budget these settings came from.
    pub budget: Budget,
    /// Contenders to run (a subset of [`CONTENDERS`], in that order).
    pub contenders: Vec<String>,
    /// Seeds per contender.
    pub seeds: u64,
    /// Environment steps of training per run.
    pub env_steps: u64,
    /// Levels in the engine's pool.
    pub pool: usize,
    /// The PPO.
    pub ppo: PpoConfig,
    /// The training space.
    pub space: LevelSpace,
    /// The hard held-out set's space (the top of the training space, cut back).
    pub hard: LevelSpace,
    /// Held-out levels of the hard set, and plays of each.
    pub hard_levels: usize,
    pub repeats: u32,
    /// The paper's evaluation shape (3, 4 and 5 agents on 10×10 at wait ratios .25, .5, .75):
    /// levels per cell.
    pub paper_per_cell: usize,
    /// The PPO's own figure: held-out 10×10 boards (hole ratio 0.2) with 2, 4 and 8 agents, this
    /// many levels each.
    pub ten_levels: usize,
    /// Updates between the learning-curve evaluations (0: none), and the hard levels they play.
    pub curve_every: usize,
    pub curve_levels: usize,
    /// Ended episodes a phase, for `frontier` and `engineer`.
    pub phase_episodes: u32,
    /// The engineer (a plugin spec).
    pub engineer: PluginSpec,
}

impl BenchConfig {
    /// A budget's settings.
    #[must_use]
    pub fn of(budget: Budget) -> Self {
        let space = LevelSpace {
            agents: [2, 8],
            size: [5, 16],
            hole_ratio: [0.0, 0.4],
            wait_ratio: [0.0, 1.0],
            solve: false,
        };
        // The top of the training space (its largest maps), cut back in agents (8 to 6) and holes
        // (0.4 to 0.2) until uniform's trained policy solves about a quarter of it (a 4 M-step
        // calibration run solved 0.5 % of 8 agents on 16×16 at 0.4, 18.8 % at 0.2, 27.3 % with 6
        // agents at 0.2: docs/levels.md).
        let hard = LevelSpace {
            agents: [6, 6],
            size: [16, 16],
            hole_ratio: [0.2, 0.2],
            wait_ratio: [0.0, 1.0],
            solve: true,
        };
        let base = BenchConfig {
            budget,
            contenders: CONTENDERS.iter().map(ToString::to_string).collect(),
            seeds: 5,
            env_steps: 0,
            pool: 2048,
            ppo: PpoConfig::default(),
            space,
            hard,
            hard_levels: 500,
            repeats: 2,
            paper_per_cell: 20,
            ten_levels: 200,
            curve_every: 0,
            curve_levels: 100,
            phase_episodes: 4096,
            engineer: PluginSpec::builtin("embedded"),
        };
        match budget {
            Budget::Tiny => BenchConfig {
                seeds: 2,
                env_steps: 4096,
                pool: 64,
                ppo: PpoConfig { envs: 64, rollout: 16, hidden: 32, ..PpoConfig::default() },
                space: LevelSpace {
                    agents: [2, 3],
                    size: [5, 7],
                    hole_ratio: [0.0, 0.2],
                    ..base.space.clone()
                },
                hard: LevelSpace {
                    agents: [3, 3],
                    size: [7, 7],
                    hole_ratio: [0.2, 0.2],
                    ..base.hard.clone()
                },
                hard_levels: 12,
                repeats: 1,
                paper_per_cell: 1,
                ten_levels: 4,
                curve_every: 2,
                curve_levels: 6,
                phase_episodes: 64,
                engineer: PluginSpec { name: "rules".into(), params: serde_json::Value::Null, library: None },
                ..base
            },
            // About 3 phases a run for frontier and the engineer (a run ends about 60,000 episodes):
            // the embedded engineer's answer takes 20 to 60 s on 2 cores, and small must fit in
            // 30 minutes.
            Budget::Small => BenchConfig {
                env_steps: 600_000,
                curve_every: 10,
                phase_episodes: 20_000,
                hard_levels: 400,
                repeats: 1,
                ten_levels: 100,
                ..base
            },
            // About 5 phases a run (a run ends about 200,000 episodes); 5 seeds of the 6
            // contenders in about 100 minutes on 2 cores.
            // Each hard level played 16 times, so that a level's rate is seldom 0 or 1 and CVaR
            // reads a tail.
            Budget::Medium => BenchConfig {
                env_steps: 2_000_000,
                curve_every: 20,
                phase_episodes: 40_000,
                hard_levels: 1000,
                repeats: 16,
                ..base
            },
        }
    }

    /// The levels spec of a contender and seed.
    ///
    /// # Errors
    /// An unknown contender.
    pub fn spec(&self, contender: &str, seed: u64) -> Result<LevelsSpec, TrainError> {
        let phase = serde_json::json!({"phase_episodes": self.phase_episodes, "phases": 8});
        let (name, params, space) = match contender {
            "uniform" => ("uniform", serde_json::json!({"max_plays": 1}), self.space.clone()),
            "plr" => ("plr", serde_json::Value::Null, self.space.clone()),
            "accel" => ("accel", serde_json::Value::Null, self.space.clone()),
            "learnability" => ("learnability", serde_json::Value::Null, self.space.clone()),
            "fixed" => ("fixed", phase, self.space.clone()),
            "frontier" => ("frontier", phase, self.space.clone()),
            "engineer" => {
                let mut p = phase;
                p["engineer"] = serde_json::to_value(&self.engineer).unwrap_or_default();
                ("engineer", p, self.space.clone())
            }
            "target" => (
                "uniform",
                serde_json::json!({"max_plays": 1}),
                LevelSpace { solve: false, ..self.hard.clone() },
            ),
            "upper" => {
                return Err(TrainError::Input(
                    "contender \"upper\" is now `target` (training on the hard distribution is a reference, \
                     not an upper bound)"
                        .into(),
                ))
            }
            other => return Err(TrainError::Input(format!("contender {other:?}: one of {CONTENDERS:?}"))),
        };
        Ok(LevelsSpec {
            sampler: PluginSpec { name: name.into(), params, library: None },
            space,
            source: None,
            seed: seed.wrapping_mul(0x9e37_79b9).wrapping_add(0x1e7e15),
            update_every: 0,
        })
    }
}

/// One trained run's held-out results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub contender: String,
    pub seed: u64,
    /// Wall time of the whole run, and of its training alone (the curve's evaluations left out).
    pub seconds: f64,
    pub train_seconds: f64,
    pub env_steps: u64,
    /// Per held-out level of each set: its success rate.
    pub hard: Vec<f64>,
    pub paper: Vec<f64>,
    /// Success rate and mean cost over the optimum on each set; CVaR10 on the hard set.
    pub hard_success: f64,
    pub hard_cost: Option<f64>,
    pub hard_cvar10: f64,
    /// CVaR25 on the hard set (0 in runs recorded before it was kept).
    #[serde(default)]
    pub hard_cvar25: f64,
    pub paper_success: f64,
    pub paper_cost: Option<f64>,
    /// CVaR10 on the paper-shaped set.
    #[serde(default)]
    pub paper_cvar10: f64,
    /// CVaR25 on the paper-shaped set.
    #[serde(default)]
    pub paper_cvar25: f64,
    /// Success on held-out 10×10 boards with 2, 4 and 8 agents.
    pub ten: Vec<(usize, f64)>,
    /// The learning curve: (environment steps, success on the curve's hard levels).
    pub curve: Vec<(u64, f64)>,
    /// Where its episodes were played: (size, agents, hole percent, episodes).
    pub played: Vec<(u32, u32, u32, u64)>,
    /// A phase sampler's designs: each phase's configuration, rationale and notes.
    #[serde(default)]
    pub designs: Vec<floe_plugin_api::PhaseDesign>,
    /// Whether the PPO learned from replayed levels alone (robust PLR; false in runs recorded
    /// before `plr` was robust).
    #[serde(default)]
    pub robust: bool,
    /// An editing sampler's (ACCEL's) levels made by edits, and those drawn new in place of an
    /// edit no attempt kept solvable.
    #[serde(default)]
    pub edited: [u64; 2],
}

/// Whether a recorded run is one `cfg`'s contender would make now: a `plr` run recorded before
/// `plr` was robust PLR is not. A run of a contender no longer made (`upper`) is left as it is:
/// no table shows it.
///
/// # Errors
/// A spec the registry refuses.
pub fn current(cfg: &BenchConfig, run: &RunResult) -> Result<bool, TrainError> {
    let Ok(spec) = cfg.spec(&run.contender, run.seed) else {
        return Ok(true);
    };
    Ok(super::levels_of(&spec)?.robust() == run.robust)
}

/// The held-out sets, drawn with seeds no training run uses.
#[derive(Debug, Clone)]
pub struct HeldOut {
    pub hard: Vec<Instance>,
    pub paper: Vec<Instance>,
    /// Per agent count (2, 4, 8): held-out 10×10 levels.
    pub ten: Vec<(usize, Vec<Instance>)>,
}

/// The held-out levels of a configuration.
///
/// # Errors
/// Levels that cannot be generated.
pub fn held_out(cfg: &BenchConfig) -> Result<HeldOut, TrainError> {
    let mut hard = LevelSource::new(cfg.hard.clone(), 0xd0_0d1e).map_err(super::levels_error)?;
    let hard = hard.draw(cfg.hard_levels).map_err(super::levels_error)?;
    let suite = SuiteConfig {
        agents: vec![3, 4, 5],
        min_size: 10,
        max_size: 10,
        wait_ratios: vec![0.25, 0.5, 0.75],
        per_cell: cfg.paper_per_cell,
        hole_ratio: 0.1,
        seed: 0x05e1_d0ff,
    };
    let paper = build_suite(&suite)?.into_iter().flat_map(|c| c.instances).collect();
    let ten = [2usize, 4, 8]
        .into_iter()
        .map(|k| {
            let space = LevelSpace {
                agents: [k as u32, k as u32],
                size: [10, 10],
                hole_ratio: [0.2, 0.2],
                wait_ratio: [0.0, 1.0],
                solve: true,
            };
            let levels =
                LevelSource::new(space, 0x7e_0000 + k as u64).and_then(|mut s| s.draw(cfg.ten_levels));
            levels.map(|l| (k, l)).map_err(super::levels_error)
        })
        .collect::<Result<_, _>>()?;
    Ok(HeldOut { hard, paper, ten })
}

/// A contender's run, trained: its PPO and what its training recorded.
pub struct Trained {
    contender: String,
    seed: u64,
    ppo: Ppo,
    started: Instant,
    train_seconds: f64,
    curve: Vec<(u64, f64)>,
}

impl std::fmt::Debug for Trained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trained")
            .field("contender", &self.contender)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

/// `floe levels`' runs as floe-rounds' [`Trials`]: each contender's PPO trained under its sampler,
/// its policy playing the held-out sets.
#[derive(Debug)]
pub struct LevelsTrials<'a> {
    pub cfg: &'a BenchConfig,
    pub held: &'a HeldOut,
}

impl Trials for LevelsTrials<'_> {
    type Model = Trained;
    type Outcome = RunResult;
    type Error = TrainError;

    fn train(
        &mut self,
        c: usize,
        seed: u64,
        _: &Path,
        progress: &dyn Progress,
    ) -> Result<Trained, TrainError> {
        let cfg = self.cfg;
        let contender = cfg.contenders.get(c).ok_or_else(|| TrainError::Input(format!("contender {c}")))?;
        progress.line(&format!("{contender}, seed {seed}: training for {} environment steps", cfg.env_steps));
        let started = Instant::now();
        let levels = super::levels_of(&cfg.spec(contender, seed)?)?;
        let mut ppo = Ppo::new(cfg.ppo.clone(), levels, cfg.pool, seed)?;
        let curve_levels = &self.held.hard[..cfg.curve_levels.min(self.held.hard.len())];
        let mut curve = Vec::new();
        let mut updates = 0usize;
        let mut error = None;
        let mut eval_seconds = 0.0;
        let t_train = Instant::now();
        ppo.train(cfg.env_steps, |p, r| {
            updates += 1;
            if cfg.curve_every > 0 && updates.is_multiple_of(cfg.curve_every) && error.is_none() {
                let t_eval = Instant::now();
                let got = evaluate(Actor::Policy(p.policy()), curve_levels, 1, &cfg.ppo, 4096, 7);
                eval_seconds += t_eval.elapsed().as_secs_f64();
                match got {
                    Ok(res) => {
                        let (s, _) = summary(&res);
                        curve.push((r.env_steps, s));
                        progress.line(&format!(
                            "{contender} seed {seed}: {} steps, training success {:.3}, hard {:.3}, entropy {:.3}",
                            r.env_steps, r.success, s, r.entropy
                        ));
                    }
                    Err(e) => error = Some(e),
                }
            }
        })?;
        let train_seconds = t_train.elapsed().as_secs_f64() - eval_seconds;
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Trained { contender: contender.clone(), seed, ppo, started, train_seconds, curve })
    }

    fn answer(&mut self, t: Trained, progress: &dyn Progress) -> Result<RunResult, TrainError> {
        let (cfg, held, ppo) = (self.cfg, self.held, &t.ppo);
        let hard = evaluate(Actor::Policy(ppo.policy()), &held.hard, cfg.repeats, &cfg.ppo, 4096, 11)?;
        let paper = evaluate(Actor::Policy(ppo.policy()), &held.paper, cfg.repeats, &cfg.ppo, 4096, 13)?;
        let (hard_success, hard_cost) = summary(&hard);
        let (paper_success, paper_cost) = summary(&paper);
        let mut ten = Vec::new();
        for (k, levels) in &held.ten {
            ten.push((
                *k,
                summary(&evaluate(Actor::Policy(ppo.policy()), levels, cfg.repeats, &cfg.ppo, 4096, 17)?).0,
            ));
        }
        let played =
            ppo.levels().played().iter().map(|(s, &n)| (s.size, s.agents, s.hole_percent, n)).collect();
        let r = RunResult {
            contender: t.contender,
            seed: t.seed,
            seconds: t.started.elapsed().as_secs_f64(),
            train_seconds: t.train_seconds,
            env_steps: ppo.env_steps(),
            hard: hard.iter().map(LevelResult::success_rate).collect(),
            paper: paper.iter().map(LevelResult::success_rate).collect(),
            hard_success,
            hard_cost,
            hard_cvar10: cvar(&hard, 0.1),
            hard_cvar25: cvar(&hard, 0.25),
            paper_success,
            paper_cost,
            paper_cvar10: cvar(&paper, 0.1),
            paper_cvar25: cvar(&paper, 0.25),
            ten,
            curve: t.curve,
            played,
            designs: ppo.levels().designs().to_vec(),
            robust: ppo.levels().robust(),
            edited: ppo.levels().edited().into(),
        };
        progress.line(&format!(
            "{}, seed {}: hard {:.1} % (CVaR10 {:.1} %), paper shape {:.1} %, {:.0} s",
            r.contender,
            r.seed,
            100.0 * r.hard_success,
            100.0 * r.hard_cvar10,
            100.0 * r.paper_success,
            r.seconds
        ));
        Ok(r)
    }

    fn current(&mut self, _: usize, _: u64, run: &RunResult) -> Result<bool, TrainError> {
        current(self.cfg, run)
    }
}

/// What [`experiment`] returns: the table, and the runs it was made of (the chosen contenders'
/// and the references', `fixed` and `uniform`, where the folder has them).
#[derive(Debug, Clone)]
pub struct Comparison {
    pub table: String,
    pub runs: Vec<RunResult>,
}

/// The settings an experiment folder of `cfg` records ([`experiment::RECORD`]): all but the
/// contenders and seeds, which only pick the runs, so that a folder's runs may come from several
/// invocations (or from shards on other machines, their run folders put together).
fn record(cfg: &BenchConfig) -> Result<serde_json::Value, TrainError> {
    let settings = BenchConfig { contenders: Vec::new(), seeds: 0, ..cfg.clone() };
    serde_json::to_value(&settings).map_err(|e| TrainError::Input(e.to_string()))
}

/// Checks that `out` may hold `cfg`'s runs, writing nothing ([`experiment::check`]).
///
/// # Errors
/// A folder of other settings.
pub fn check(cfg: &BenchConfig, out: &Path) -> Result<(), TrainError> {
    Ok(experiment::check(out, &record(cfg)?)?)
}

/// The folder's results before runs had folders of their own: `config.json` and `runs.jsonl`.
const OLD_CONFIG: &str = "config.json";

/// A folder written before `floe levels` ran on floe-rounds' experiment (its settings in
/// [`OLD_CONFIG`], its runs in `runs.jsonl`, one line each): each run moved into its own folder
/// (the last line of a contender and seed wins, as it did), the settings checked as they were.
/// Nothing changes in a folder that is refused.
fn import_old(cfg: &BenchConfig, out: &Path) -> Result<(), TrainError> {
    let old = out.join(OLD_CONFIG);
    let Ok(text) = std::fs::read_to_string(&old) else {
        return Ok(());
    };
    if out.join(experiment::RECORD).exists() {
        return Ok(());
    }
    let same = match serde_json::from_str::<BenchConfig>(&text) {
        Ok(old) => record(&old)? == record(cfg)?,
        Err(_) => false,
    };
    if !same {
        return Err(TrainError::Input(format!(
            "{} holds runs of other settings ({}): use another --out",
            out.display(),
            old.display()
        )));
    }
    let path = results_path(out);
    let mut runs: Vec<RunResult> = Vec::new();
    for (i, line) in std::fs::read_to_string(&path).unwrap_or_default().lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: RunResult = serde_json::from_str(line)
            .map_err(|e| TrainError::Input(format!("{} line {}: {e}", path.display(), i + 1)))?;
        runs.retain(|x| (x.contender.as_str(), x.seed) != (r.contender.as_str(), r.seed));
        runs.push(r);
    }
    for r in &runs {
        let file = experiment::run_dir(out, &r.contender, r.seed).join(experiment::OUTCOMES);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        }
        let text = serde_json::to_string(r).map_err(|e| TrainError::Input(e.to_string()))?;
        floe_rounds::folder::write_atomic(&file, text.as_bytes())?;
    }
    experiment::open(out, &record(cfg)?)?;
    std::fs::remove_file(&old).map_err(|e| TrainError::io(&old, e))
}

/// Runs (or resumes) `floe levels`' comparison of `cfg`'s contenders with `seeds` in `out` on
/// floe-rounds' experiment
/// ([`experiment::run_trials`]): the folder's record ([`experiment::RECORD`]: the settings but
/// the contenders and seeds), each contender and seed in `<contender>/seed-<s>/` with its
/// [`RunResult`] ([`experiment::OUTCOMES`]), trained once; then the table ([`table`], in
/// [`experiment::TABLE`]) and `runs.jsonl`, every run of the folder a line, both written whole.
/// A recorded run whose sampler has changed since (`plr` before robust PLR) is run again.
///
/// # Errors
/// A folder of other settings, levels that cannot be generated, I/O and the runs' errors.
pub fn experiment(
    cfg: &BenchConfig,
    out: &Path,
    seeds: &[u64],
    progress: &dyn Progress,
) -> Result<Comparison, TrainError> {
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    import_old(cfg, out)?;
    experiment::open(out, &record(cfg)?)?;
    let held = held_out(cfg)?;
    progress.line(&format!(
        "{} hard held-out levels ({}), {} of the paper's shape",
        held.hard.len(),
        describe(&cfg.hard),
        held.paper.len()
    ));
    let entries: Vec<Entry> =
        cfg.contenders.iter().map(|n| Entry { name: n.clone(), design: Design::Own }).collect();
    let mut trials = LevelsTrials { cfg, held: &held };
    let mut runs: Vec<RunResult> =
        experiment::run_trials(&mut trials, out, &entries, seeds, progress)?.into_iter().flatten().collect();
    // The references every row is paired with, where the folder has their runs of these seeds.
    for name in ["fixed", "uniform"] {
        if cfg.contenders.iter().any(|c| c == name) {
            continue;
        }
        for &seed in seeds {
            if let Some(r) = experiment::recorded::<RunResult>(&experiment::run_dir(out, name, seed)) {
                if current(cfg, &r)? {
                    runs.push(r);
                }
            }
        }
    }
    let random = random_baseline(cfg, &held)?;
    let table = table(cfg, &runs, &random);
    floe_rounds::folder::write_atomic(&out.join(experiment::TABLE), table.as_bytes())?;
    let mut lines = String::new();
    for name in CONTENDERS {
        for seed in experiment::recorded_seeds(out, name) {
            if let Some(r) = experiment::recorded::<RunResult>(&experiment::run_dir(out, name, seed)) {
                lines.push_str(&serde_json::to_string(&r).map_err(|e| TrainError::Input(e.to_string()))?);
                lines.push('\n');
            }
        }
    }
    floe_rounds::folder::write_atomic(&results_path(out), lines.as_bytes())?;
    Ok(Comparison { table, runs })
}

/// The random policy's results on the held-out sets (the floor).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Random {
    pub hard: f64,
    pub paper: f64,
    pub ten: Vec<(usize, f64)>,
}

/// The random policy's results on the held-out sets.
///
/// # Errors
/// Levels the engine refuses.
pub fn random_baseline(cfg: &BenchConfig, held: &HeldOut) -> Result<Random, TrainError> {
    let hard = evaluate(Actor::Random, &held.hard, cfg.repeats, &cfg.ppo, 4096, 11)?;
    let paper = evaluate(Actor::Random, &held.paper, cfg.repeats, &cfg.ppo, 4096, 13)?;
    let mut ten = Vec::new();
    for (k, levels) in &held.ten {
        ten.push((*k, summary(&evaluate(Actor::Random, levels, cfg.repeats, &cfg.ppo, 4096, 17)?).0));
    }
    Ok(Random { hard: summary(&hard).0, paper: summary(&paper).0, ten })
}

/// Mean and standard error of per-seed, per-level values (clustered by seed and level).
fn clustered(x: &[Vec<f64>]) -> (f64, f64) {
    let (m, se) = floe_rounds::stats::clustered(x);
    (100.0 * m, 100.0 * se)
}

/// The comparison's table (markdown) from every run's results.
#[must_use]
pub fn table(cfg: &BenchConfig, runs: &[RunResult], random: &Random) -> String {
    let by = |c: &str| runs.iter().filter(|r| r.contender == c).collect::<Vec<_>>();
    let (fixed, uniform) = (by("fixed"), by("uniform"));
    let mut s =
        "| contender | seeds | hard success % | vs fixed | vs uniform | hard CVaR10 % | hard CVaR25 % | \
                 hard cost / optimum | paper shape success % | vs fixed | vs uniform | paper CVaR10 % | \
                 paper CVaR25 % | paper cost / optimum | wall time per run |\n\
                 |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
            .to_string();
    for c in &cfg.contenders {
        let rs = by(c);
        if rs.is_empty() {
            continue;
        }
        let hard: Vec<Vec<f64>> = rs.iter().map(|r| r.hard.clone()).collect();
        let paper: Vec<Vec<f64>> = rs.iter().map(|r| r.paper.clone()).collect();
        // Paired by seed and level: every run of this contender against the reference's run of the
        // same seed, the differences clustered by seed and by level (floe-rounds' statistics).
        let diff = |base: &[&RunResult], name: &str, a: &[Vec<f64>], f: &dyn Fn(&RunResult) -> &Vec<f64>| {
            let pairs: Option<Vec<Vec<f64>>> =
                rs.iter().map(|r| base.iter().find(|u| u.seed == r.seed).map(|u| f(u).clone())).collect();
            match pairs.filter(|_| c != name).map(|b| floe_rounds::stats::paired_rates(a, &b)) {
                Some(Ok((m, se))) => floe_rounds::stats::format_paired(m, se),
                _ => "—".to_string(),
            }
        };
        let (hm, hse) = clustered(&hard);
        let (pm, pse) = clustered(&paper);
        let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let pct =
            |f: &dyn Fn(&RunResult) -> f64| format!("{:.2}", 100.0 * mean(rs.iter().map(|r| f(r)).collect()));
        let cost = |v: Vec<Option<f64>>| {
            let known: Vec<f64> = v.into_iter().flatten().collect();
            if known.is_empty() {
                "—".into()
            } else {
                format!("{:.3}", mean(known))
            }
        };
        let secs = mean(rs.iter().map(|r| r.seconds).collect());
        let wall = if secs < 60.0 {
            format!("{secs:.1} s")
        } else {
            format!("{} min {:02} s", (secs / 60.0).floor(), (secs % 60.0).round() as u32 % 60)
        };
        s.push_str(&format!(
            "| {c} | {} | {hm:.2} ± {hse:.2} | {} | {} | {} | {} | {} | {pm:.2} ± {pse:.2} | {} | {} | {} | {} | {} | \
             {wall} |\n",
            rs.len(),
            diff(&fixed, "fixed", &hard, &|r| &r.hard),
            diff(&uniform, "uniform", &hard, &|r| &r.hard),
            pct(&|r| r.hard_cvar10),
            pct(&|r| r.hard_cvar25),
            cost(rs.iter().map(|r| r.hard_cost).collect()),
            diff(&fixed, "fixed", &paper, &|r| &r.paper),
            diff(&uniform, "uniform", &paper, &|r| &r.paper),
            pct(&|r| r.paper_cvar10),
            pct(&|r| r.paper_cvar25),
            cost(rs.iter().map(|r| r.paper_cost).collect()),
        ));
    }
    s.push_str(&format!(
        "| random actions | — | {:.2} | — | — | — | — | — | {:.2} | — | — | — | — | — | — |\n",
        100.0 * random.hard,
        100.0 * random.paper
    ));
    // The PPO's own figure: held-out 10×10 boards with 2, 4 and 8 agents, and the speed.
    s.push_str("\n| contender | 10×10, 2 agents % | 4 agents % | 8 agents % | training environment steps / s |\n|---|---|---|---|---|\n");
    for c in &cfg.contenders {
        let rs = by(c);
        if rs.is_empty() {
            continue;
        }
        let at = |k: usize| {
            let v: Vec<f64> =
                rs.iter().filter_map(|r| r.ten.iter().find(|t| t.0 == k).map(|t| t.1)).collect();
            let n = v.len().max(1) as f64;
            let mean = v.iter().sum::<f64>() / n;
            let se = if v.len() > 1 {
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt()
            } else {
                0.0
            };
            format!("{:.1} ± {:.1}", 100.0 * mean, 100.0 * se)
        };
        let speed =
            rs.iter().map(|r| r.env_steps as f64 / r.train_seconds.max(1e-9)).sum::<f64>() / rs.len() as f64;
        s.push_str(&format!("| {c} | {} | {} | {} | {speed:.0} |\n", at(2), at(4), at(8)));
    }
    let r = |k: usize| {
        random.ten.iter().find(|t| t.0 == k).map_or("—".to_string(), |t| format!("{:.1}", 100.0 * t.1))
    };
    s.push_str(&format!("| random actions | {} | {} | {} | — |\n", r(2), r(4), r(8)));
    // What the phase designers wrote: how often a phase's design repeats the one before (the only
    // design the engineer's context shows it), and how often the engineer's reply went unused.
    let phased: Vec<&String> =
        cfg.contenders.iter().filter(|c| by(c).iter().any(|r| r.designs.len() > 1)).collect();
    if !phased.is_empty() {
        s.push_str(
            "\n| contender | phases designed | same as the phase before % | engineer's replies not used % |\n|---|---|---|---|\n",
        );
        for c in phased {
            let (mut designed, mut same, mut unused) = (0usize, 0usize, 0usize);
            for r in by(c) {
                for w in r.designs.windows(2) {
                    designed += 1;
                    same += usize::from(w[1].config == w[0].config);
                    unused += usize::from(w[1].rationale.is_none());
                }
            }
            let pct = |n: usize| 100.0 * n as f64 / designed.max(1) as f64;
            let unused = if c == "engineer" {
                format!("{:.1}", pct(unused))
            } else {
                "— (a curriculum)".to_string()
            };
            s.push_str(&format!("| {c} | {designed} | {:.1} | {unused} |\n", pct(same)));
        }
    }
    s
}

/// Where each contender put its levels: per contender, episodes by (size, hole percent bucket)
/// and by agents, summed over seeds.
#[must_use]
pub fn placement(runs: &[RunResult]) -> Vec<(String, Vec<(Shape, u64)>)> {
    let mut out: Vec<(String, Vec<(Shape, u64)>)> = Vec::new();
    for r in runs {
        let entry = match out.iter_mut().find(|(c, _)| *c == r.contender) {
            Some(e) => e,
            None => {
                out.push((r.contender.clone(), Vec::new()));
                out.last_mut().expect("just pushed")
            }
        };
        for &(size, agents, hole_percent, n) in &r.played {
            let key = Shape { size, agents, hole_percent };
            match entry.1.iter_mut().find(|(s, _)| *s == key) {
                Some((_, m)) => *m += n,
                None => entry.1.push((key, n)),
            }
        }
    }
    out
}

/// The folder's results: every run, a line each (written by [`experiment`] from the runs'
/// folders).
#[must_use]
pub fn results_path(dir: &Path) -> PathBuf {
    dir.join("runs.jsonl")
}

/// A level of the hard set's space as a generator setting, for reports.
#[must_use]
pub fn describe(space: &LevelSpace) -> String {
    let g = GeneratorConfig::default().size(space.size[0]);
    format!(
        "{}–{} agents on {}×{}–{}×{}, hole ratio {}–{} ({} holes on the smallest), wait ratio {}–{}",
        space.agents[0],
        space.agents[1],
        space.size[0],
        space.size[0],
        space.size[1],
        space.size[1],
        space.hole_ratio[0],
        space.hole_ratio[1],
        g.hole_ratio(space.hole_ratio[1]).holes(),
        space.wait_ratio[0],
        space.wait_ratio[1]
    )
}
