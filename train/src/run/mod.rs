//! The closed loop, in typed stages: an evaluation of the untrained policy, the supervised warm
//! start ([`warm_start`]), then per round (1) the round's configuration from the curriculum or
//! the environment engineer ([`design`]), (2) its training set, newly generated and replayed
//! ([`replay`]), (3) `epochs` passes of GRPO over it ([`round`], sampling in [`rollouts`]), (4)
//! greedy validation on the fixed set, whose failures by kind per map size (5) go into the
//! history the next design reads. Checkpoints and resume are in [`persist`], charts in
//! [`charts`].
//!
//! # Files in the output folder
//! | file | what |
//! |---|---|
//! | `checkpoint.safetensors` | the policy (`model.*`), AdamW's moments (`adam.*`), and as metadata the configuration and the run state; written atomically after the warm start and after every round |
//! | `reference.safetensors` | the policy after the warm start (GRPO's KL reference) |
//! | `round-<r>.safetensors` | the policy after round r |
//! | `steps.jsonl` | one line per optimizer step (loss, KL, reward, entropy, sampled valid/optimal rates, …) |
//! | `rounds.jsonl` | one line per evaluation stage (untrained or initial checkpoint, warm start, each round): rates, failures per size, configuration |
//! | `engineer/round-<r>/` | with an engineer: the context it was given for round r, its raw replies, the configuration applied, its rationale, and the log of what was clamped or why the previous configuration stood |
//! | `eval.md`, `eval.json` | the last validation as the paper's tables |
//! | `sft_loss.png`, `grpo.png`, `per_size.png` | learning curves and validation valid rate per map size |
//!
//! # Resuming
//! With `resume`, a run continues from `checkpoint.safetensors`: finished stages stay as they
//! are, the metrics files are cut back to their length at that checkpoint, the curriculum is
//! replayed on the recorded history (so a stateful one is where it was), the replay pool is
//! regenerated from the recorded configurations, and the unfinished round starts again from its
//! beginning. Every random choice is keyed by (seed, stage, step), so the resumed run computes
//! what the uninterrupted one would have (an engineer that is a language model on a remote
//! endpoint may answer differently the second time).
//!
//! # Stopping
//! [`RunOptions::cancel`] is checked between stages and before every GRPO step; when set, the
//! run ends with [`TrainError::Cancelled`] and the folder holds the last checkpoint, from which
//! `resume` continues.

pub mod charts;
mod data;
pub mod design;
pub mod persist;
pub mod replay;
mod rollouts;
mod round;
mod warm_start;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use floe_core::progress::{Progress, Silent};
use floe_core::Instance;
use floe_plugin_api::History;
use serde::{Deserialize, Serialize};

use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::eval::EvalReport;
use crate::metrics::JsonLines;
use crate::model::Policy;
use crate::optim::AdamW;
use crate::workers::Workers;

pub use charts::plots;
pub use data::validation_set;
pub use persist::{load_policy, saved_run, FORMAT};

pub(crate) const TAG_SFT: u64 = 0x5f7;
pub(crate) const TAG_ROUND: u64 = 0x40d;
pub(crate) const TAG_GRPO: u64 = 0x6290;
pub(crate) const TAG_REPLAY: u64 = 0x4e91;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output folder (created if missing).
    pub out_dir: PathBuf,
    /// Continue from the folder's checkpoint, if there is one.
    pub resume: bool,
    /// When another thread sets it, the run stops between stages or before the next GRPO step
    /// with [`TrainError::Cancelled`], leaving the folder resumable from its last checkpoint.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Stop with [`TrainError::Interrupted`] before GRPO step `n` (counted over the whole run):
    /// a stand-in for a killed process, for tests (feature `testing`).
    #[cfg(feature = "testing")]
    pub stop_before_grpo_step: Option<u64>,
}

impl RunOptions {
    /// A fresh run into `out_dir`: no resume, no cancel flag.
    #[must_use]
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        RunOptions { out_dir: out_dir.into(), ..RunOptions::default() }
    }
}

/// The plugins a run uses ([`floe_plugin_api::Plugins`]), resolved by the caller from the
/// configuration's specs (`floe-plugin-host`'s `registry::plugins` does it for the CLI, the C API
/// and the tests). The run checks that they match the configuration: a curriculum exactly when
/// `rounds.curriculum` names one, an engineer exactly when `rounds.engineer` does.
pub use floe_plugin_api::Plugins;

/// A stage of a run that ends with an evaluation. In files (`rounds.jsonl`, the checkpoint's
/// state) it is written as its display text: `untrained`, `initial checkpoint`, `warm start`,
/// `warm start @<step>`, `round <r>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Stage {
    /// The policy before any training, from a random initialisation.
    Untrained,
    /// The policy loaded from `init_checkpoint`, before any training.
    InitialCheckpoint,
    /// The end of the warm start.
    WarmStart,
    /// Within the warm start, after this many steps.
    WarmStartAt(u64),
    /// After GRPO round r.
    Round(u32),
}

impl Stage {
    /// A short name for chart axes.
    #[must_use]
    pub fn short(self) -> String {
        match self {
            Stage::Untrained | Stage::InitialCheckpoint => "init".into(),
            Stage::WarmStart => "sft".into(),
            Stage::WarmStartAt(n) => n.to_string(),
            Stage::Round(r) => format!("r{r}"),
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Untrained => f.write_str("untrained"),
            Stage::InitialCheckpoint => f.write_str("initial checkpoint"),
            Stage::WarmStart => f.write_str("warm start"),
            Stage::WarmStartAt(n) => write!(f, "warm start @{n}"),
            Stage::Round(r) => write!(f, "round {r}"),
        }
    }
}

impl From<Stage> for String {
    fn from(s: Stage) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for Stage {
    type Error = String;
    fn try_from(s: String) -> Result<Stage, String> {
        let num = |t: &str| t.parse().map_err(|_| format!("unknown stage {s:?}"));
        Ok(match s.as_str() {
            "untrained" => Stage::Untrained,
            "initial checkpoint" => Stage::InitialCheckpoint,
            "warm start" => Stage::WarmStart,
            _ => match (s.strip_prefix("warm start @"), s.strip_prefix("round ")) {
                (Some(n), _) => Stage::WarmStartAt(num(n)?),
                (_, Some(r)) => Stage::Round(num(r)? as u32),
                _ => return Err(format!("unknown stage {s:?}")),
            },
        })
    }
}

/// One evaluation of the validation set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEval {
    pub stage: Stage,
    pub valid: f64,
    pub optimal: f64,
    /// GRPO steps taken before it.
    pub grpo_step: u64,
    /// Seconds of training (warm start and GRPO, not evaluation) before it.
    pub train_s: f64,
    pub report: EvalReport,
}

/// Where a run stands; saved in every checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub warm_start_done: bool,
    pub rounds_done: u32,
    pub history: History,
    pub evals: Vec<StageEval>,
    /// (step, loss) of the warm start.
    pub sft_curve: Vec<(u64, f64)>,
    /// (step, mean reward, sampled valid rate) of GRPO.
    pub grpo_curve: Vec<(u64, f64, f64)>,
    pub sft_steps: u64,
    pub grpo_steps: u64,
    /// Seconds spent training (warm start and GRPO), over every resumption.
    pub train_s: f64,
    /// Bytes of `steps.jsonl` and `rounds.jsonl` at this checkpoint.
    pub steps_len: u64,
    pub rounds_len: u64,
    /// How each finished round's configuration came about.
    #[serde(default)]
    pub designs: Vec<design::Design>,
    /// The statistics of every generated training instance played so far (the replay pool).
    #[serde(default)]
    pub replay: replay::PoolStats,
}

/// A run in progress: the policy, optimizer, state and files.
pub(crate) struct Run<'a> {
    pub(crate) cfg: &'a TrainConfig,
    pub(crate) opts: &'a RunOptions,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) policy: Policy,
    pub(crate) opt: AdamW,
    pub(crate) state: RunState,
    pub(crate) steps: JsonLines,
    pub(crate) rounds: JsonLines,
    pub(crate) validation: Vec<Instance>,
    pub(crate) started: Instant,
    /// `state.train_s` when this process started.
    pub(crate) train_s0: f64,
    /// Seconds of training in this process.
    pub(crate) trained: f64,
    /// With more than one thread, the workers that run the parts of each training step.
    pub(crate) workers: Option<Workers>,
}

impl Run<'_> {
    pub(crate) fn say(&self, line: &str) {
        self.progress.line(line);
    }

    pub(crate) fn train_s(&self) -> f64 {
        self.train_s0 + self.trained
    }

    /// [`TrainError::Cancelled`] once the cancel flag is set.
    pub(crate) fn check_cancel(&self, at: &str) -> Result<(), TrainError> {
        match &self.opts.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(TrainError::Cancelled(at.to_string())),
            _ => Ok(()),
        }
    }

    /// The test hook of feature `testing`: [`TrainError::Interrupted`] before GRPO step `n`.
    #[cfg(feature = "testing")]
    pub(crate) fn check_stop(&self) -> Result<(), TrainError> {
        if self.opts.stop_before_grpo_step == Some(self.state.grpo_steps) {
            return Err(TrainError::Interrupted(format!("before GRPO step {}", self.state.grpo_steps)));
        }
        Ok(())
    }

    #[cfg(not(feature = "testing"))]
    #[allow(clippy::unused_self, clippy::unnecessary_wraps)]
    pub(crate) fn check_stop(&self) -> Result<(), TrainError> {
        Ok(())
    }
}

/// Checks that the plugins handed to a run are the ones its configuration names.
fn check_plugins(cfg: &TrainConfig, plugins: &Plugins) -> Result<(), TrainError> {
    let r = &cfg.rounds;
    let mismatch = |what: &str, named: bool| {
        TrainError::Input(format!(
            "rounds.{what} {} but the run was {} one",
            if named { "names a plugin" } else { "is absent" },
            if named { "not given" } else { "given" }
        ))
    };
    if r.curriculum.is_some() != plugins.curriculum.is_some() {
        return Err(mismatch("curriculum", r.curriculum.is_some()));
    }
    if r.engineer.is_some() != plugins.engineer.is_some() {
        return Err(mismatch("engineer", r.engineer.is_some()));
    }
    Ok(())
}

/// Runs (or, with `opts.resume`, continues) the loop silently; returns the final state.
/// [`run_with_progress`] reports its stages (one line per stage with
/// [`floe_core::progress::Lines`], bars in the CLI).
///
/// # Errors
/// Bad configurations, plugins that do not match the configuration, plugin and generator
/// failures, I/O errors; a resumed run whose checkpoint was written with another configuration;
/// [`TrainError::Cancelled`] when `opts.cancel` is set.
pub fn run(cfg: &TrainConfig, opts: &RunOptions, plugins: Plugins) -> Result<RunState, TrainError> {
    run_with_progress(cfg, opts, plugins, &Silent)
}

/// As [`run`], reporting progress to `progress`.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    cfg: &TrainConfig,
    opts: &RunOptions,
    mut plugins: Plugins,
    progress: &dyn Progress,
) -> Result<RunState, TrainError> {
    cfg.validate()?;
    check_plugins(cfg, &plugins)?;
    let started = Instant::now();
    let out = &opts.out_dir;
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    crate::set_threads(cfg.threads);
    let (policy, opt, state, resuming) = persist::start(cfg, opts)?;
    let keep = |len| resuming.then_some(len);
    let mut run = Run {
        cfg,
        opts,
        progress,
        steps: JsonLines::open(&out.join("steps.jsonl"), keep(state.steps_len))?,
        rounds: JsonLines::open(&out.join("rounds.jsonl"), keep(state.rounds_len))?,
        train_s0: state.train_s,
        policy,
        opt,
        state,
        validation: data::validation_set_with_progress(cfg, progress)?,
        started,
        trained: 0.0,
        workers: Some(crate::thread_count(cfg.threads)).filter(|&n| n > 1).map(Workers::start),
    };
    run.say(&format!(
        "{} parameters, {} validation instances, output in {}{}",
        run.policy.num_parameters(),
        run.validation.len(),
        out.display(),
        if resuming { " (resumed)" } else { "" }
    ));
    run.check_cancel("before the first stage")?;
    if !run.state.warm_start_done {
        if run.state.evals.is_empty() {
            let stage =
                if cfg.init_checkpoint.is_some() { Stage::InitialCheckpoint } else { Stage::Untrained };
            run.evaluate(stage)?;
        }
        if cfg.warm_start.steps > 0 {
            run.warm_start()?;
            run.evaluate(Stage::WarmStart)?;
        }
        run.state.warm_start_done = true;
        persist::save_model(&out.join("reference.safetensors"), &run.policy)?;
        run.checkpoint()?;
        plots(out, &run.state)?;
    }
    let reference = if cfg.grpo.beta > 0.0 && cfg.rounds.rounds > run.state.rounds_done {
        Some(load_policy(&out.join("reference.safetensors"))?)
    } else {
        None
    };
    let mut designer = design::Designer::new(cfg, &mut plugins);
    designer.catch_up(&run.state)?;
    let mut pool = replay::Pool::rebuild(&run, &run.state.replay, &run.state.history)?;
    for r in run.state.rounds_done..cfg.rounds.rounds {
        run.check_cancel(&format!("before round {r}"))?;
        let config = designer.next(&mut run, r)?;
        run.round(r, config, reference.as_ref(), plugins.reward.as_mut(), &mut pool, &mut designer)?;
    }
    if let Some(last) = run.state.evals.last() {
        let report = &last.report;
        let md = format!("# Validation after {}\n\n{}", last.stage, report.to_markdown());
        let write = |name: &str, text: String| {
            let p = out.join(name);
            std::fs::write(&p, text).map_err(|e| TrainError::io(&p, e))
        };
        write("eval.md", md)?;
        write("eval.json", serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n")?;
    }
    plots(out, &run.state)?;
    run.say(&format!(
        "done: {:.0} s of training, {:.0} s in all",
        run.train_s(),
        started.elapsed().as_secs_f64()
    ));
    Ok(run.state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_read_back_what_they_write() {
        for s in [
            Stage::Untrained,
            Stage::InitialCheckpoint,
            Stage::WarmStart,
            Stage::WarmStartAt(800),
            Stage::Round(2),
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Stage>(&json).unwrap(), s);
        }
        assert_eq!(serde_json::to_string(&Stage::Round(3)).unwrap(), "\"round 3\"");
        assert!(serde_json::from_str::<Stage>("\"round x\"").is_err());
        assert!(serde_json::from_str::<Stage>("\"lunch\"").is_err());
    }
}
