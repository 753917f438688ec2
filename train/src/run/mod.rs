//! `floe train`: the planner policy as a [`Trainee`] of floe-rounds' protocol. The protocol
//! (the stages, the designers, the data, the validation and its count, the run folder) is
//! `floe_rounds::run`; here is what is the policy's own: its supervised warm start
//! ([`warm_start`]), a round's `epochs` passes of GRPO ([`round`], sampling in [`rollouts`]),
//! its greedy answers, and its checkpoints ([`persist`]) and charts ([`charts`]).
//!
//! # Files the policy adds to the run folder
//! | file | what |
//! |---|---|
//! | `checkpoint.safetensors` | the policy (`model.*`), AdamW's moments (`adam.*`), and as metadata the configuration and the run state; written atomically after the warm start and after every round, before `state.json` |
//! | `reference.safetensors` | the policy after the warm start (GRPO's KL reference) |
//! | `round-<r>.safetensors` | the policy after round r |
//! | `sft_loss.png`, `grpo.png`, `per_size.png` | learning curves and validation valid rate per map size |
//!
//! The rest of the folder (`config.json`, `state.json`, `steps.jsonl`, `rounds.jsonl`,
//! `engineer/round-<r>/`, `validation/`, `eval.md`, `eval.json`) is the protocol's:
//! [`floe_rounds::folder`].
//!
//! # Resuming
//! The checkpoint holds the policy, AdamW's state and the run state together, so a resumed run
//! continues from the checkpoint's state (not `state.json`, which a run killed between the two
//! writes leaves one stage behind). Every random choice is keyed by (seed, stage, step), so the
//! resumed run computes what the uninterrupted one would have.

pub mod charts;
pub mod persist;
mod rollouts;
mod round;
mod warm_start;

use floe_core::progress::{Progress, Silent};
use floe_core::Instance;
use floe_rounds::design::Designers;
use floe_rounds::{Answer, Protocol, RoundData, RoundsError, RunFolder, Session, Trained, Trainee};

use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::model::Policy;
use crate::optim::AdamW;
use crate::workers::Workers;

pub use charts::plots;
pub use floe_plugin_api::Plugins;
pub use floe_rounds::data::{TAG_GRPO, TAG_ROUND, TAG_SFT};
pub use floe_rounds::design::{Design, Source};
pub use floe_rounds::replay;
/// How to run: floe-rounds' options (the folder, resume, cancel, stop after a round). A run that
/// does not resume starts anew in a folder that holds a run whatever `overwrite` says
/// ([`run_with_progress`]).
pub use floe_rounds::RunOptions;
pub use floe_rounds::{RunState, Stage, StageEval};
pub use persist::{load_policy, saved_run, FORMAT};

/// The validation set of a configuration.
///
/// # Errors
/// A setting the generator cannot meet.
pub fn validation_set(cfg: &TrainConfig) -> Result<Vec<Instance>, TrainError> {
    Ok(floe_rounds::data::validation_set(&cfg.validation)?)
}

/// The policy as a trainee: its model, optimizer, reward and workers.
pub(crate) struct PolicyTrainee<'a> {
    pub(crate) cfg: &'a TrainConfig,
    pub(crate) policy: Policy,
    pub(crate) opt: AdamW,
    pub(crate) reward: Box<dyn floe_plugin_api::RewardFn>,
    /// GRPO's KL reference (the policy after the warm start), loaded for the first round.
    pub(crate) reference: Option<Policy>,
    /// With more than one thread, the workers that run the parts of each training step.
    pub(crate) workers: Option<Workers>,
    /// The test hook of feature `testing` ([`run_interrupted`]): stop before this GRPO step.
    #[cfg(feature = "testing")]
    pub(crate) stop_before_grpo_step: Option<u64>,
}

impl PolicyTrainee<'_> {
    /// The test hook of feature `testing`: [`RoundsError::Interrupted`] before GRPO step `n`.
    #[cfg(feature = "testing")]
    pub(crate) fn check_stop(&self, step: u64) -> Result<(), TrainError> {
        if self.stop_before_grpo_step == Some(step) {
            return Err(TrainError::Rounds(RoundsError::Interrupted(format!("before GRPO step {step}"))));
        }
        Ok(())
    }

    #[cfg(not(feature = "testing"))]
    #[allow(clippy::unused_self, clippy::unnecessary_wraps)]
    pub(crate) fn check_stop(&self, _step: u64) -> Result<(), TrainError> {
        Ok(())
    }
}

impl Trainee for PolicyTrainee<'_> {
    fn describe(&self) -> String {
        format!("{} parameters", self.policy.num_parameters())
    }

    fn first_stage(&self) -> Stage {
        if self.cfg.init_checkpoint.is_some() {
            Stage::InitialCheckpoint
        } else {
            Stage::Untrained
        }
    }

    fn restore(
        &mut self,
        folder: &RunFolder,
        _saved: Option<RunState>,
    ) -> Result<Option<RunState>, RoundsError> {
        Ok(persist::restore(self, folder.root())?)
    }

    fn warm_start(&mut self, session: &mut Session<'_>) -> Result<bool, RoundsError> {
        if self.cfg.warm_start.steps == 0 {
            return Ok(false);
        }
        self.run_warm_start(session)?;
        Ok(true)
    }

    fn train(&mut self, round: &RoundData<'_>, session: &mut Session<'_>) -> Result<Trained, RoundsError> {
        Ok(self.grpo_round(round, session)?)
    }

    fn answer(
        &mut self,
        instances: &[Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<Answer>, RoundsError> {
        let refs: Vec<&Instance> = instances.iter().collect();
        Ok(crate::eval::answers(&self.policy, &refs, self.cfg.eval_batch, progress)?)
    }

    fn save(&mut self, stage: Stage, folder: &RunFolder, state: &RunState) -> Result<(), RoundsError> {
        let out = folder.root();
        if let Stage::Round(_) = stage {
            persist::checkpoint(self, out, state)?;
            // After the checkpoint: a round's file on disk means the checkpoint holds that round.
            let name = floe_rounds::folder::stage_name(stage).unwrap_or_default();
            persist::save_model(&out.join(format!("{name}.safetensors")), &self.policy)?;
        } else {
            persist::save_model(&out.join("reference.safetensors"), &self.policy)?;
            persist::checkpoint(self, out, state)?;
        }
        plots(out, state)?;
        Ok(())
    }

    fn details(&self) -> serde_json::Value {
        serde_json::json!({"grpo": self.cfg.grpo, "adam": self.cfg.adam})
    }
}

/// Runs (or, with `opts.resume`, continues) the loop silently; returns the final state.
/// [`run_with_progress`] reports its stages (one line per stage with
/// [`floe_core::progress::Lines`], bars in the CLI).
///
/// # Errors
/// Bad configurations, plugins that do not match the configuration, plugin and generator
/// failures, I/O errors; a resumed run whose folder was written with other settings, or whose
/// checkpoint holds another model; [`RoundsError::Cancelled`] (as [`TrainError::Rounds`]) when
/// `opts.cancel` is set.
pub fn run(cfg: &TrainConfig, opts: &RunOptions, plugins: Plugins) -> Result<RunState, TrainError> {
    run_with_progress(cfg, opts, plugins, &Silent)
}

/// As [`run`], reporting progress to `progress`.
///
/// A run that does not resume starts anew in `opts.out_dir` even when the folder holds a run:
/// `opts.overwrite` is taken as set, as `floe train` has always done (only `opts.resume` keeps
/// what the folder holds).
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    cfg: &TrainConfig,
    opts: &RunOptions,
    plugins: Plugins,
    progress: &dyn Progress,
) -> Result<RunState, TrainError> {
    let (mut trainee, designers) = trainee(cfg, plugins)?;
    drive(&mut trainee, designers, opts, progress)
}

/// As [`run`], stopped with [`RoundsError::Interrupted`] (as [`TrainError::Rounds`]) before GRPO
/// step `step` (counted over the whole run): a stand-in for a killed process, for the resume
/// tests (feature `testing`).
///
/// # Errors
/// As [`run`]; [`RoundsError::Interrupted`] when the run reaches GRPO step `step`.
#[cfg(feature = "testing")]
pub fn run_interrupted(
    cfg: &TrainConfig,
    opts: &RunOptions,
    plugins: Plugins,
    step: u64,
) -> Result<RunState, TrainError> {
    let (mut trainee, designers) = trainee(cfg, plugins)?;
    trainee.stop_before_grpo_step = Some(step);
    drive(&mut trainee, designers, opts, &Silent)
}

/// A validated configuration's fresh policy as a trainee, and the designers of its rounds.
fn trainee(cfg: &TrainConfig, plugins: Plugins) -> Result<(PolicyTrainee<'_>, Designers), TrainError> {
    cfg.validate()?;
    crate::set_threads(cfg.threads);
    let (policy, opt) = persist::fresh(cfg)?;
    let (designers, reward) = Designers::split(plugins);
    let trainee = PolicyTrainee {
        cfg,
        policy,
        opt,
        reward,
        reference: None,
        workers: Some(crate::thread_count(cfg.threads)).filter(|&n| n > 1).map(Workers::start),
        #[cfg(feature = "testing")]
        stop_before_grpo_step: None,
    };
    Ok((trainee, designers))
}

/// The trainee through floe-rounds' protocol, starting anew in a folder that holds a run unless
/// it resumes.
fn drive(
    trainee: &mut PolicyTrainee<'_>,
    designers: Designers,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunState, TrainError> {
    let cfg = trainee.cfg;
    let protocol = Protocol {
        seed: cfg.seed,
        rounds: cfg.rounds.clone(),
        validation: cfg.validation.clone(),
        settings: serde_json::to_value(cfg).unwrap_or_default(),
    };
    let opts = RunOptions { overwrite: true, ..opts.clone() };
    Ok(floe_rounds::run(trainee, &protocol, designers, &opts, progress)?)
}
