//! The round driver: the paper's protocol over any [`Trainee`].
//!
//! A run: an evaluation of the trainee before training, its warm start (when it has one) and
//! the warm start's evaluation, then per round (1) the round's configuration from the
//! curriculum or the environment engineer ([`crate::design`]), (2) its training set, newly
//! generated from the round's seed and replayed from the pool ([`crate::replay`]), (3) the
//! trainee's training on it, (4) greedy answers to the fixed validation set, verified and
//! counted by kind per agent count × map size ([`crate::report`]), which (5) go into the history
//! the next design reads; after every stage the trainee saves its model and the driver the run
//! state ([`crate::folder`]).
//!
//! # Resuming
//! With [`RunOptions::resume`], a run continues from the last stage it saved: finished stages
//! stay as they are, the metrics files are cut back to their lengths then, the curriculum is
//! replayed on the recorded history (so a stateful one is where it was), the replay pool is
//! regenerated from the recorded configurations, and the unfinished round starts again from its
//! beginning. Every random choice of the protocol is keyed by (seed, stage, step)
//! ([`crate::data`]), so the resumed run computes what the uninterrupted one would have, as far
//! as the trainee's own training does (an engineer that is a language model on a remote
//! endpoint may answer differently the second time).
//!
//! # Stopping
//! [`RunOptions::cancel`] is checked between stages, and by the trainee through
//! [`Session::check_cancel`] within them; when set, the run ends with
//! [`RoundsError::Cancelled`] and the folder holds the last saved stage, from which a resumed
//! run continues.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use floe_core::progress::Progress;
use floe_core::rng::hash;
use floe_core::Instance;
use floe_plugin_api::{ReplayRequest, RoundConfig, RoundRecord};
use serde_json::json;

use crate::config::{RoundsConfig, ValidationConfig};
use crate::data::{generate_all, round_seed, validation_set_with_progress, TAG_REPLAY};
use crate::design::{Designer, Designers};
use crate::error::RoundsError;
use crate::folder::RunFolder;
use crate::metrics::JsonLines;
use crate::replay::Pool;
use crate::report::{count, EvalReport};
use crate::state::{RunState, Stage, StageEval};
use crate::verdicts::{verdicts, Answer};

/// One round's training set, as the trainee receives it.
#[derive(Debug)]
pub struct RoundData<'a> {
    /// The round.
    pub round: u32,
    /// Its configuration.
    pub config: &'a RoundConfig,
    /// Its instances: newly generated, then replayed.
    pub instances: &'a [Instance],
    /// How many of them are replayed (the last ones).
    pub replayed: usize,
    /// The seed its new instances were generated from ([`round_seed`]); a trainer of its own
    /// takes [`RoundData::trainer_seed`].
    pub seed: u64,
}

impl RoundData<'_> {
    /// The seed of the round's trainer ([`crate::data::trainer_seed`] of the data's).
    #[must_use]
    pub fn trainer_seed(&self) -> u64 {
        crate::data::trainer_seed(self.seed)
    }
}

/// What a trainee reports of a round's training.
#[derive(Debug, Clone, Default)]
pub struct Trained {
    /// Every sampled answer it was rewarded for: (index into the round's instances, reward,
    /// valid). The replay pool's statistics are made of them.
    pub samples: Vec<(u32, f32, bool)>,
    /// Per map size, the sum of |advantage| over the answers trained on and their count (the
    /// history's `mean_abs_advantage`); empty when the trainee does not say.
    pub abs_advantage: BTreeMap<u32, (f64, u32)>,
    /// Figures of its own for the round's line of `rounds.jsonl` (steps/s, tokens/s, …).
    pub figures: serde_json::Map<String, serde_json::Value>,
}

/// A policy the protocol trains: floe's planner on libtorch, a language model in TRL or verl,
/// or a researcher's own.
pub trait Trainee {
    /// One line on what is trained ("812,000 parameters"), said when a run starts.
    fn describe(&self) -> String;

    /// The stage of the trainee before any training.
    fn first_stage(&self) -> Stage {
        Stage::Untrained
    }

    /// Brings the trainee back to where a resumed run stands. `saved` is the state in
    /// `state.json`, if the folder has one. A trainee that saves its model and the run state
    /// together (atomically) loads both and returns its own; one that does not loads the model
    /// that it saved after `saved`'s last stage and returns `saved`. `None`: nothing to resume,
    /// the run starts anew.
    ///
    /// # Errors
    /// A saved model that cannot be loaded, or one written with other settings.
    fn restore(
        &mut self,
        folder: &RunFolder,
        saved: Option<RunState>,
    ) -> Result<Option<RunState>, RoundsError>;

    /// The warm start (supervised training on optimal plans before the rounds), evaluating
    /// within it through [`Session::evaluate`] when it wants to; false when it has none.
    ///
    /// # Errors
    /// Its own; [`RoundsError::Cancelled`] from [`Session::check_cancel`].
    fn warm_start(&mut self, session: &mut Session<'_>) -> Result<bool, RoundsError>;

    /// Trains on one round's instances, writing its steps through [`Session::step_line`].
    ///
    /// # Errors
    /// Its own; [`RoundsError::Cancelled`] from [`Session::check_cancel`].
    fn train(&mut self, round: &RoundData<'_>, session: &mut Session<'_>) -> Result<Trained, RoundsError>;

    /// Greedy answers to `instances`, advancing `progress` by the instances answered.
    ///
    /// # Errors
    /// Its own.
    fn answer(&mut self, instances: &[Instance], progress: &dyn Progress)
        -> Result<Vec<Answer>, RoundsError>;

    /// Saves the model as it is after `stage`, with `state` (what `state.json` will hold once
    /// it returns) for a trainee that keeps the two together.
    ///
    /// # Errors
    /// I/O errors.
    fn save(&mut self, stage: Stage, folder: &RunFolder, state: &RunState) -> Result<(), RoundsError>;

    /// What the engineer's module T reports of the trainee beside the round and epochs (its
    /// hyperparameters, with the `full` training details).
    fn details(&self) -> serde_json::Value;
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The run folder (created if missing).
    pub out_dir: PathBuf,
    /// Continue the run in the folder, if there is one.
    pub resume: bool,
    /// Start anew in a folder that holds a run (without it, such a folder is refused).
    pub overwrite: bool,
    /// When another thread sets it, the run stops between stages or when the trainee next
    /// checks, with [`RoundsError::Cancelled`], leaving the folder resumable.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Stop once round `r` is finished and saved (the run returns its state; a later run with
    /// `resume` goes on from there). A branch of a run ([`RunFolder::fork`]) trains one round
    /// this way.
    pub stop_after: Option<u32>,
}

impl RunOptions {
    /// A fresh run into `out_dir`: no resume, no cancel flag, an existing run refused.
    #[must_use]
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        RunOptions { out_dir: out_dir.into(), ..RunOptions::default() }
    }
}

/// What a run is: the seed, the rounds, the validation set, and the settings it is recorded
/// with (`config.json`; a resumed run must have the same).
#[derive(Debug, Clone)]
pub struct Protocol {
    pub seed: u64,
    pub rounds: RoundsConfig,
    pub validation: ValidationConfig,
    /// The driver's whole configuration, as it was given (the trainee's settings included).
    pub settings: serde_json::Value,
}

/// A run in progress, as the trainee sees it.
pub struct Session<'a> {
    protocol: &'a Protocol,
    folder: RunFolder,
    progress: &'a dyn Progress,
    cancel: Option<Arc<AtomicBool>>,
    /// Where the run stands: the trainee may add to its curves and step counts.
    pub state: RunState,
    steps: JsonLines,
    rounds: JsonLines,
    validation: Arc<Vec<Instance>>,
    started: Instant,
    /// `state.train_s` when this process started, and seconds of training since.
    train_s0: f64,
    trained: f64,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("folder", &self.folder)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Session<'_> {
    /// The run's seed.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.protocol.seed
    }

    /// The rounds' settings.
    #[must_use]
    pub fn rounds(&self) -> &RoundsConfig {
        &self.protocol.rounds
    }

    /// The run folder.
    #[must_use]
    pub fn folder(&self) -> &RunFolder {
        &self.folder
    }

    /// Where progress goes.
    #[must_use]
    pub fn progress(&self) -> &dyn Progress {
        self.progress
    }

    /// The fixed validation set.
    #[must_use]
    pub fn validation(&self) -> Arc<Vec<Instance>> {
        Arc::clone(&self.validation)
    }

    /// Says one line.
    pub fn say(&self, line: &str) {
        self.progress.line(line);
    }

    /// [`RoundsError::Cancelled`] once the cancel flag is set.
    ///
    /// # Errors
    /// As above; `at` says where the run stopped.
    pub fn check_cancel(&self, at: &str) -> Result<(), RoundsError> {
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(RoundsError::Cancelled(at.to_string())),
            _ => Ok(()),
        }
    }

    /// Appends one line to `steps.jsonl`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn step_line(&mut self, line: &serde_json::Value) -> Result<(), RoundsError> {
        self.steps.write(line)
    }

    /// Counts `seconds` more of training.
    pub fn add_training(&mut self, seconds: f64) {
        self.trained += seconds;
    }

    /// Seconds of training over the whole run, every resumption included.
    #[must_use]
    pub fn train_s(&self) -> f64 {
        self.train_s0 + self.trained
    }

    /// The trainee's greedy answers to the validation set, counted: the stage's [`StageEval`]
    /// (kept in the state), a line of `rounds.jsonl` (with `extra`'s fields), and the tables.
    ///
    /// # Errors
    /// The trainee's; I/O errors.
    pub fn evaluate(&mut self, trainee: &mut dyn Trainee, stage: Stage) -> Result<EvalReport, RoundsError> {
        self.evaluate_with(trainee, stage, serde_json::Map::new())
    }

    fn evaluate_with(
        &mut self,
        trainee: &mut dyn Trainee,
        stage: Stage,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> Result<EvalReport, RoundsError> {
        let validation = self.validation();
        let refs: Vec<&Instance> = validation.iter().collect();
        let t0 = Instant::now();
        self.progress.begin("validation", refs.len() as u64);
        let scored = trainee.answer(&validation, self.progress).and_then(|answers| {
            let records = verdicts(&refs, &answers)?;
            let (report, outcomes) = count(&refs, &records);
            Ok((report, answers, records, outcomes))
        });
        let (report, answers, records, outcomes) = match scored {
            Ok(scored) => scored,
            Err(e) => {
                self.progress.end(&format!("{stage}: validation stopped: {e}"));
                return Err(e);
            }
        };
        let seconds = t0.elapsed().as_secs_f64();
        let (valid, optimal) = report.overall();
        let e = StageEval {
            stage,
            valid,
            optimal,
            grpo_step: self.state.grpo_steps,
            train_s: self.train_s(),
            report: report.clone(),
        };
        let mut line = json!({
            "stage": stage, "valid_rate": valid, "optimal_rate": optimal, "grpo_step": e.grpo_step,
            "train_s": e.train_s, "elapsed_s": self.started.elapsed().as_secs_f64(),
            "per_size": report.size_results(), "report": report.to_json(), "validation_s": seconds,
            "answers": RunFolder::answers_path(stage),
        });
        if let (Stage::Round(r), Some(last)) = (stage, self.state.history.last()) {
            line["round"] = last.round.into();
            line["config"] = serde_json::to_value(&last.config).unwrap_or_default();
            if let Some(d) = self.state.designs.iter().find(|d| d.round == r) {
                line["design"] = serde_json::to_value(d).unwrap_or_default();
            }
        }
        if let Some(o) = line.as_object_mut() {
            o.extend(extra);
        }
        self.rounds.write(&line)?;
        self.folder.write_eval(stage, &report)?;
        self.folder.write_answers(stage, &refs, &answers, &records, &outcomes)?;
        self.progress.end(&format!(
            "{stage}: validation valid {:.1}%, optimal {:.1}% ({} instances, {:.0} s)",
            100.0 * valid,
            100.0 * optimal,
            refs.len(),
            seconds
        ));
        self.state.evals.push(e);
        Ok(report)
    }

    /// The trainee saves its model after `stage`, then `state.json` records the run as it
    /// stands.
    fn save(&mut self, trainee: &mut dyn Trainee, stage: Stage) -> Result<(), RoundsError> {
        self.state.steps_len = self.steps.flushed_len()?;
        self.state.rounds_len = self.rounds.flushed_len()?;
        self.state.train_s = self.train_s();
        trainee.save(stage, &self.folder, &self.state)?;
        self.folder.write_state(&self.state)
    }
}

/// Runs (or, with `opts.resume`, continues) the protocol with `trainee`, `plugins` designing
/// the rounds; returns the final state.
///
/// # Errors
/// Bad settings, plugins that do not match them, plugin, generator and trainee failures, I/O
/// errors; a resumed run whose folder was written with other settings;
/// [`RoundsError::Cancelled`] when `opts.cancel` is set.
pub fn run(
    trainee: &mut dyn Trainee,
    protocol: &Protocol,
    plugins: Designers,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunState, RoundsError> {
    protocol.rounds.validate()?;
    protocol.validation.validate()?;
    check_plugins(&protocol.rounds, &plugins)?;
    let started = Instant::now();
    let folder = RunFolder::new(&opts.out_dir);
    std::fs::create_dir_all(folder.root()).map_err(|e| RoundsError::io(folder.root(), e))?;
    let state = if opts.resume { trainee.restore(&folder, folder.read_state()?)? } else { None };
    let resuming = state.is_some();
    let (steps, rounds) = folder.open(&protocol.settings, state.as_ref(), opts.overwrite || opts.resume)?;
    let state = state.unwrap_or_default();
    let mut s = Session {
        protocol,
        folder,
        progress,
        cancel: opts.cancel.clone(),
        train_s0: state.train_s,
        state,
        steps,
        rounds,
        validation: Arc::new(validation_set_with_progress(&protocol.validation, progress)?),
        started,
        trained: 0.0,
    };
    s.say(&format!(
        "{}, {} validation instances, output in {}{}",
        trainee.describe(),
        s.validation.len(),
        opts.out_dir.display(),
        if resuming { " (resumed)" } else { "" }
    ));
    s.check_cancel("before the first stage")?;
    if !s.state.warm_start_done {
        let first = trainee.first_stage();
        if s.state.evals.is_empty() {
            s.evaluate(trainee, first)?;
        }
        let stage = if trainee.warm_start(&mut s)? {
            s.evaluate(trainee, Stage::WarmStart)?;
            Stage::WarmStart
        } else {
            first
        };
        s.state.warm_start_done = true;
        s.save(trainee, stage)?;
    }
    let mut designer = Designer::new(&protocol.rounds, plugins);
    designer.catch_up(&s.state)?;
    let mut pool = Pool::rebuild(protocol.seed, &s.state.replay, &s.state.history, progress)?;
    let end = opts.stop_after.map_or(protocol.rounds.rounds, |r| (r + 1).min(protocol.rounds.rounds));
    for r in s.state.rounds_done..end {
        s.check_cancel(&format!("before round {r}"))?;
        let config = designer.next(&mut s.state, &s.folder, s.progress, r, &trainee.details())?;
        round(&mut s, trainee, r, config, &mut pool, &mut designer)?;
    }
    s.say(&format!(
        "done: {:.0} s of training, {:.0} s in all",
        s.train_s(),
        started.elapsed().as_secs_f64()
    ));
    Ok(s.state)
}

/// Checks that the designers handed to a run are the ones its settings name.
fn check_plugins(r: &RoundsConfig, plugins: &Designers) -> Result<(), RoundsError> {
    let mismatch = |what: &str, named: bool| {
        RoundsError::Input(format!(
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

/// Round `r`'s training set: `samples` prompts, of which `round(replay_fraction · samples)`
/// are replayed from the pool (as many as were played before, at most) and the rest newly
/// generated from `data_seed` and added to the pool. Returns the instances, their pool ids and how many were
/// replayed.
fn round_data(
    s: &Session<'_>,
    r: u32,
    data_seed: u64,
    config: &RoundConfig,
    pool: &mut Pool,
    designer: &mut Designer,
) -> Result<(Vec<Instance>, Vec<usize>, usize), RoundsError> {
    let seed = s.seed();
    let (mut fresh, wanted) = config.split_budget(s.rounds().samples);
    let mut replayed = Vec::new();
    if wanted > 0 {
        let count = wanted.min(pool.played());
        if count < wanted {
            s.say(&format!(
                "round {r}: {wanted} replays asked for, {count} instances played before: {} generated new instead",
                wanted - count
            ));
            fresh += wanted - count;
        }
        if count > 0 {
            let request =
                ReplayRequest { round: r, count: count as u32, seed: hash(&[seed, TAG_REPLAY, r.into()]) };
            replayed = designer.sample_replay(&pool.records(), &request)?;
            fresh += count - replayed.len();
        }
    }
    let mut train =
        generate_all(&config.generator_configs(fresh, data_seed), &format!("round {r} data"), s.progress)?;
    let mut ids = pool.add(r, &train);
    for &id in &replayed {
        train.push(pool.instances[id as usize].clone());
        ids.push(id as usize);
    }
    s.say(&format!(
        "round {r}: {} training instances ({} new, {} replayed), configuration {}",
        train.len(),
        train.len() - replayed.len(),
        replayed.len(),
        config.to_json()
    ));
    Ok((train, ids, replayed.len()))
}

/// One round: its data, the trainee's training, the validation, the records, the save.
fn round(
    s: &mut Session<'_>,
    trainee: &mut dyn Trainee,
    r: u32,
    config: RoundConfig,
    pool: &mut Pool,
    designer: &mut Designer,
) -> Result<(), RoundsError> {
    let seed = round_seed(s.seed(), r);
    let (train, ids, replayed) = round_data(s, r, seed, &config, pool, designer)?;
    let data = RoundData { round: r, config: &config, instances: &train, replayed, seed };
    let trained = trainee.train(&data, s)?;
    for &(i, reward, valid) in &trained.samples {
        let id = *ids.get(i as usize).ok_or_else(|| {
            RoundsError::Input(format!(
                "round {r}: the trainee reported a sample of instance {i} of {}",
                ids.len()
            ))
        })?;
        pool.record(id, r, reward, valid);
    }
    // The round's record first, so that the evaluation line carries its configuration.
    s.state.history.rounds.push(RoundRecord { round: r, config, results: Vec::new() });
    let mut line = trained.figures;
    line.insert("data_seed".into(), seed.into());
    line.insert("replayed".into(), replayed.into());
    let report = s.evaluate_with(trainee, Stage::Round(r), line)?;
    let mut results = report.size_results();
    for res in &mut results {
        if let Some(&(sum, n)) = trained.abs_advantage.get(&res.size) {
            res.mean_abs_advantage = Some(sum / f64::from(n.max(1)));
        }
    }
    if let Some(last) = s.state.history.rounds.last_mut() {
        last.results = results;
    }
    s.state.history.validate()?;
    s.state.rounds_done = r + 1;
    s.state.replay = pool.stats.clone();
    s.save(trainee, Stage::Round(r))
}
