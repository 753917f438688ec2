//! [`Levels`]: what a host calls around an engine's steps to let a level sampler steer it. Every
//! host (Rust, the C API, Python's `VectorEnv` and PettingZoo environment, Ray shards) calls
//! this one driver; none copies the sampling logic.
//!
//! ```text
//! engine.reset(seed, out);   levels.start(engine, out);      // the sampler's first weights
//! loop {
//!     engine.step(actions, out);
//!     levels.after_step(engine, out);   // ended episodes kept; every `update_every` steps:
//! }                                     // the sampler called, its plan applied
//! levels.update(engine, Some(&episodes), Some(&scores), out);   // or the host's own scores
//! ```
//!
//! Applying a plan: the weights go to the engine ([`Engine::set_weights`]); the slots to refill
//! get new levels from the [`LevelSource`] (from the plan's configuration, when it gives one),
//! which [`Engine::refill`] puts in place, truncating the episodes that played them in `out`,
//! as a step would have. The plan and the new levels are checked before the engine is touched:
//! a sampler that fails, panics or answers garbage is an error, and the engine is as it was.
//!
//! Every call that acts on an engine checks all of its arguments before it changes anything:
//! the engine reset ([`LevelsError::Engine`] with [`EngineError::NotReset`]), the sampler's own
//! engine (a sampler binds to the engine it first runs with: [`LevelsError::OtherEngine`]), the
//! seven buffers' lengths, the ended episodes' records (flags 0 or 1 and not both, an outcome
//! that matches them, a slot of the pool and a generation it has had:
//! [`LevelsError::Input`]), and, before the sampler is called, that the buffers hold the
//! engine's last outputs ([`Engine::check_outputs`]). A refused call leaves the engine, its pool,
//! the source of new levels and the kept episodes as they were, so a retry with the right
//! arguments gives the sampler each episode once.
//!
//! **First plays and replays.** Each step the driver sees ([`Levels::record`],
//! [`Levels::after_step`]) marks every environment's episode as a *first play* of its level or a
//! *replay*: a replay when an episode on the same level (slot and generation) ended before this
//! one began, a first play otherwise (so several environments that start on a new level before
//! any of them ends all play it first). [`Levels::first_play`] gives the marks of the last step,
//! one per environment, and [`Levels::pending_first_play`] those of the kept episodes. A sampler
//! that asks for it ([`Levels::robust`]: robust PLR) wants the trainer to learn from replays
//! alone.

use std::collections::BTreeMap;

use floe_core::engine::{outcome, Engine, EngineError, EngineId, InstancePool, StepBuffersMut};
use floe_plugin_api::levels::check_update;
use floe_plugin_api::{EpisodeRecord, LevelRecord, LevelSampler, PhaseDesign, PluginError};
use serde::{Deserialize, Serialize};

use crate::error::LevelsError;
use crate::space::LevelSource;
pub mod state;

use state::{check_same_pool, check_version, DriverState, LevelsState, SavedPool, STATE_VERSION};

/// What one call of the sampler did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Episodes the sampler was given.
    pub episodes: usize,
    /// Whether it set new weights.
    pub weights: bool,
    /// Slots refilled with new levels.
    pub refilled: usize,
    /// Episodes truncated by the refills.
    pub truncated: usize,
}

/// A sampler's decision, ready to apply to an engine (or to every shard of one pool).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The slots' new weights, or `None` to keep them.
    pub weights: Option<Vec<f64>>,
    /// The slots to refill.
    pub refill: Vec<usize>,
    /// Their new levels, one per slot, in order.
    pub levels: Vec<floe_core::Instance>,
    /// Episodes the sampler was given.
    pub episodes: usize,
}

impl Decision {
    /// The decision as JSON text, to send to the shards of one pool: `{"weights": [...] or null,
    /// "refill": [slots], "levels": [instances], "episodes": n}`.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "weights": self.weights,
            "refill": self.refill,
            "levels": self.levels.iter().map(floe_core::Instance::to_value).collect::<Vec<_>>(),
            "episodes": self.episodes,
        })
        .to_string()
    }

    /// A decision [`Decision::to_json`] wrote, every level checked as an instance is; its
    /// weights and slots are checked against the pool when it is applied ([`Levels::apply`]).
    ///
    /// # Errors
    /// [`LevelsError::Input`] naming the value: text that does not read, a field missing or of
    /// another type, a level that does not validate, a count of levels other than of slots.
    pub fn from_json(text: &str) -> Result<Self, LevelsError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            weights: Option<Vec<f64>>,
            refill: Vec<usize>,
            levels: Vec<serde_json::Value>,
            episodes: usize,
        }
        let bad = |why: String| LevelsError::Input(format!("a level sampler's decision: {why}"));
        let raw: Raw = serde_json::from_str(text).map_err(|e| bad(format!("does not read: {e}")))?;
        if raw.refill.len() != raw.levels.len() {
            return Err(bad(format!(
                "{} refill slots but {} levels: one level per slot",
                raw.refill.len(),
                raw.levels.len()
            )));
        }
        let levels = raw
            .levels
            .iter()
            .enumerate()
            .map(|(i, v)| {
                floe_core::Instance::from_json(&v.to_string()).map_err(|e| bad(format!("level {i}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Decision { weights: raw.weights, refill: raw.refill, levels, episodes: raw.episodes })
    }
}

/// Where a run's episodes were played: per level shape, the episodes that ended on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shape {
    /// The map's side (the larger of width and height).
    pub size: u32,
    /// Its agents.
    pub agents: u32,
    /// Its hole share of the cells, in whole percent.
    pub hole_percent: u32,
}

/// The level sampler of a batched engine, with the source of its new levels.
pub struct Levels {
    name: String,
    sampler: Box<dyn LevelSampler>,
    source: LevelSource,
    update_every: u32,
    steps: u64,
    pending: Vec<EpisodeRecord>,
    /// Per kept episode: whether it was its level's first play.
    pending_first: Vec<bool>,
    /// Per kept episode: the environment it ran in and the step it ended in (the driver's count
    /// of recorded steps before it).
    pending_env: Vec<u32>,
    pending_step: Vec<u64>,
    /// Steps recorded ([`Levels::record`], [`Levels::after_step`]): the index of the next one.
    clock: u64,
    /// Per slot: the generation whose first episode ended, and the step it ended in.
    first_end: Vec<Option<(u32, u64)>>,
    /// Per environment: whether its episode in the last recorded step is a first play.
    first_play: Vec<bool>,
    /// Levels put into the pool as edits of others (ACCEL), and those drawn new in place of an
    /// edit no attempt kept solvable.
    edited: u64,
    edits_failed: u64,
    played: BTreeMap<Shape, u64>,
    totals: Applied,
    /// The engine it runs with, from its first call that succeeded.
    engine: Option<EngineId>,
    /// A loaded state's pool and weights, put into the engine by the next [`Levels::start`].
    resume: Option<(InstancePool, Option<Vec<f64>>)>,
}

impl std::fmt::Debug for Levels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Levels")
            .field("sampler", &self.name)
            .field("source", &self.source)
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl Levels {
    /// The sampler `sampler` (named `name` in messages) drawing new levels from `source`, called
    /// by [`Levels::after_step`] every `update_every` steps (0: only when the host calls
    /// [`Levels::update`]).
    #[must_use]
    pub fn new(name: &str, sampler: Box<dyn LevelSampler>, source: LevelSource, update_every: u32) -> Self {
        Levels {
            name: name.to_string(),
            sampler,
            source,
            update_every,
            steps: 0,
            pending: Vec::new(),
            pending_first: Vec::new(),
            pending_env: Vec::new(),
            pending_step: Vec::new(),
            clock: 0,
            first_end: Vec::new(),
            first_play: Vec::new(),
            edited: 0,
            edits_failed: 0,
            played: BTreeMap::new(),
            totals: Applied::default(),
            engine: None,
            resume: None,
        }
    }

    /// The whole state of the sampler, this driver and its source, with `engine`'s pool and
    /// weights ([`LevelsState`]), for [`Levels::load`] in a later run. Reads only.
    ///
    /// # Errors
    /// [`LevelsError::Sampler`] with [`PluginError::Unsupported`] for a sampler that keeps no
    /// saved form (a loaded library's, the phase designers'); [`LevelsError::OtherEngine`];
    /// [`LevelsError::State`] for a loaded state not yet put into an engine by
    /// [`Levels::start`]; a device error.
    pub fn save(&self, engine: &dyn Engine) -> Result<LevelsState, LevelsError> {
        self.restored()?;
        if let Some(bound) = self.engine.filter(|&b| b != engine.id()) {
            return Err(LevelsError::OtherEngine { name: self.name.clone(), bound, given: engine.id() });
        }
        let sampler_state =
            self.sampler.save().map_err(|source| LevelsError::Sampler { name: self.name.clone(), source })?;
        Ok(LevelsState {
            version: STATE_VERSION,
            sampler: self.name.clone(),
            sampler_state,
            update_every: self.update_every,
            source: self.source.clone(),
            driver: DriverState {
                steps: self.steps,
                clock: self.clock,
                pending: self.pending.clone(),
                pending_first: self.pending_first.clone(),
                pending_env: self.pending_env.clone(),
                pending_step: self.pending_step.clone(),
                first_end: self.first_end.clone(),
                first_play: self.first_play.clone(),
                edited: self.edited,
                edits_failed: self.edits_failed,
                played: self.played.iter().map(|(&s, &n)| (s, n)).collect(),
                totals: self.totals,
            },
            pool: SavedPool::of(engine),
        })
    }

    /// Puts back a state [`Levels::save`] wrote (of a driver made from the same spec): the
    /// sampler's, this driver's and the source's now; the pool and weights at the next
    /// [`Levels::start`], which takes an engine made with the saved pool
    /// ([`LevelsState::pool`], or the engine the state was saved from) in place of the
    /// sampler's first call. The driver is then bound to no engine. Calls other than `start`
    /// and `load` are refused until then.
    ///
    /// # Errors
    /// [`LevelsError::State`] naming the value for a state of another version, sampler,
    /// `update_every` or level space, or one whose parts do not agree;
    /// [`LevelsError::Sampler`] for a sampler state the sampler refuses (another sampler's or
    /// parameters) or a sampler that keeps no saved form. Nothing changes then.
    pub fn load(&mut self, state: LevelsState) -> Result<(), LevelsError> {
        check_version(Some(u64::from(state.version)))?;
        let refuse = |what: &str, saved: String, here: String| {
            Err(LevelsError::State(format!(
                "the state was saved with {what} {saved}, and this driver has {here}"
            )))
        };
        if state.sampler != self.name {
            return refuse("the sampler", format!("`{}`", state.sampler), format!("`{}`", self.name));
        }
        if state.update_every != self.update_every {
            return refuse("update_every", state.update_every.to_string(), self.update_every.to_string());
        }
        if state.source.space() != self.source.space() {
            let json = |s: &crate::LevelSpace| serde_json::to_string(s).unwrap_or_default();
            return refuse("the level space", json(state.source.space()), json(self.source.space()));
        }
        let source = self.source.restored(state.source.clone())?;
        let mut check = LevelSource::new(state.source.space().clone(), 0)?;
        if let Some(c) = source.config() {
            check
                .set_config(c.clone())
                .map_err(|e| LevelsError::State(format!("the saved configuration: {e}")))?;
        }
        let pool = state.pool.pool()?;
        let d = &state.driver;
        let slots = pool.len();
        let n = d.pending.len();
        if [d.pending_first.len(), d.pending_env.len(), d.pending_step.len()] != [n; 3]
            || d.first_end.len() > slots
        {
            return Err(LevelsError::State(format!(
                "the saved driver keeps {n} episodes with {} first-play marks, {} environments and {} end steps, \
                 and {} slots' first ends, for a pool of {slots} slots",
                d.pending_first.len(),
                d.pending_env.len(),
                d.pending_step.len(),
                d.first_end.len()
            )));
        }
        if let Some((i, why)) =
            d.pending.iter().enumerate().find_map(|(i, e)| check_episode(&pool, e).err().map(|w| (i, w)))
        {
            return Err(LevelsError::State(format!("the saved episode {i}: {why}")));
        }
        self.sampler
            .restore(&state.sampler_state)
            .map_err(|source| LevelsError::Sampler { name: self.name.clone(), source })?;
        let d = state.driver;
        self.source = source;
        self.steps = d.steps;
        self.clock = d.clock;
        self.pending = d.pending;
        self.pending_first = d.pending_first;
        self.pending_env = d.pending_env;
        self.pending_step = d.pending_step;
        self.first_end = d.first_end;
        self.first_play = d.first_play;
        (self.edited, self.edits_failed) = (d.edited, d.edits_failed);
        self.played = d.played.into_iter().collect();
        self.totals = d.totals;
        self.engine = None;
        self.resume = Some((pool, state.pool.weights));
        Ok(())
    }

    /// The pool of a state [`Levels::load`] put back, until [`Levels::start`] finds it in an
    /// engine: the pool to make that engine with (the C API's and Python's hosts read it here).
    #[must_use]
    pub fn loaded_pool(&self) -> Option<&InstancePool> {
        self.resume.as_ref().map(|(pool, _)| pool)
    }

    /// Keeps a recorded step's ended episodes with their marks, environments and end step.
    fn hold(&mut self, ended: Vec<EpisodeRecord>, marks: &Marks) {
        self.pending.extend(ended);
        self.pending_first.extend(&marks.ended);
        self.pending_env.extend(&marks.ended_env);
        self.pending_step.extend(std::iter::repeat_n(self.clock, marks.ended_env.len()));
    }

    /// Drops the kept episodes from the `kept`-th on, and what is kept of each.
    fn drop_pending_from(&mut self, kept: usize) {
        self.pending.truncate(kept);
        self.pending_first.truncate(kept);
        self.pending_env.truncate(kept);
        self.pending_step.truncate(kept);
    }

    /// Drops the kept episodes and what is kept of each.
    fn clear_pending(&mut self) {
        self.drop_pending_from(0);
    }

    /// Refuses a call while a loaded state waits for [`Levels::start`].
    fn restored(&self) -> Result<(), LevelsError> {
        if self.resume.is_some() {
            return Err(LevelsError::State(format!(
                "level sampler `{}` holds a loaded state that start puts into the engine: call start first",
                self.name
            )));
        }
        Ok(())
    }

    /// Whether the sampler wants the trainer to learn from replays alone (robust PLR,
    /// [`LevelSampler::robust`]): a trainer then takes no gradient from the steps
    /// [`Levels::first_play`] marks.
    #[must_use]
    pub fn robust(&self) -> bool {
        self.sampler.robust()
    }

    /// Per environment, whether its episode in the last recorded step plays its level for the
    /// first time (see the module's notes); empty before the first step is recorded.
    #[must_use]
    pub fn first_play(&self) -> &[bool] {
        &self.first_play
    }

    /// Per kept episode ([`Levels::pending`], in its order), whether it was its level's first
    /// play.
    #[must_use]
    pub fn pending_first_play(&self) -> &[bool] {
        &self.pending_first
    }

    /// Per kept episode ([`Levels::pending`], in its order), the environment it ran in: with
    /// [`Levels::pending_end_steps`], the key a host scores an episode by, whatever the order
    /// its own loops run in.
    #[must_use]
    pub fn pending_envs(&self) -> &[u32] {
        &self.pending_env
    }

    /// Per kept episode ([`Levels::pending`], in its order), the step it ended in, counted as
    /// [`Levels::steps_recorded`] counts (the step recorded first after the driver was made is
    /// step 0).
    #[must_use]
    pub fn pending_end_steps(&self) -> &[u64] {
        &self.pending_step
    }

    /// The steps recorded so far ([`Levels::record`], [`Levels::after_step`]): the index the
    /// next recorded step will have.
    #[must_use]
    pub fn steps_recorded(&self) -> u64 {
        self.clock
    }

    /// Levels put into the pool as edits of others (an editing sampler's, ACCEL), and those drawn
    /// new in their place because no attempt kept the edited level solvable.
    #[must_use]
    pub fn edited(&self) -> (u64, u64) {
        (self.edited, self.edits_failed)
    }

    /// The source of new levels.
    #[must_use]
    pub fn source(&self) -> &LevelSource {
        &self.source
    }

    /// The engine the sampler is bound to (the first it ran with), if any.
    #[must_use]
    pub fn engine(&self) -> Option<EngineId> {
        self.engine
    }

    /// The next `n` levels of the source (for the pool an engine is made with: give it the
    /// source's room, [`LevelSource::room`]).
    ///
    /// # Errors
    /// [`LevelsError::Generate`].
    pub fn draw(&mut self, n: usize) -> Result<Vec<floe_core::Instance>, LevelsError> {
        self.source.draw(n)
    }

    /// The episodes kept since the sampler's last call, in the order it will get them.
    #[must_use]
    pub fn pending(&self) -> &[EpisodeRecord] {
        &self.pending
    }

    /// Per level shape, the episodes that ended on it (what the sampler did with its levels).
    #[must_use]
    pub fn played(&self) -> &BTreeMap<Shape, u64> {
        &self.played
    }

    /// Every call's work added up.
    #[must_use]
    pub fn totals(&self) -> Applied {
        self.totals
    }

    /// The generator configurations the sampler designed, one per phase, with their rationales
    /// and notes (none for a sampler that designs no phases).
    #[must_use]
    pub fn designs(&self) -> &[PhaseDesign] {
        self.sampler.designs()
    }

    /// Each pool slot's statistics as the sampler keeps them, as of its last call
    /// ([`LevelSampler::slot_stats`]: plays, staleness, score and the sampler's own figure, each
    /// with the generation it belongs to); none for a sampler that keeps none.
    #[must_use]
    pub fn slot_stats(&self) -> Vec<floe_plugin_api::SlotStats> {
        self.sampler.slot_stats()
    }

    /// The engine's pool slots as the sampler sees them, with the environments playing each.
    ///
    /// # Errors
    /// The engine's state cannot be read (a device error).
    pub fn levels(engine: &dyn Engine) -> Result<Vec<LevelRecord>, LevelsError> {
        let pool = engine.pool();
        let mut in_play = vec![0u32; pool.len()];
        for e in engine.state()?.envs {
            if let Some(n) = in_play.get_mut(e.instance as usize) {
                *n += 1;
            }
        }
        Ok((0..pool.len())
            .map(|i| {
                let (width, height, agents) = pool.dims(i);
                LevelRecord {
                    slot: i as u32,
                    generation: pool.generation(i),
                    width,
                    height,
                    agents,
                    holes: pool.holes(i),
                    optimal_soc: pool.optimal_soc(i),
                    in_play: in_play[i],
                }
            })
            .collect())
    }

    /// The checks of every call that acts on `engine`, before anything changes: the engine
    /// reset, the sampler's own engine, the buffers' lengths.
    fn admit(
        &self,
        engine: &dyn Engine,
        out: &StepBuffersMut<'_>,
        call: &'static str,
    ) -> Result<(), LevelsError> {
        if !engine.was_reset() {
            return Err(EngineError::NotReset(call).into());
        }
        if let Some(bound) = self.engine {
            if bound != engine.id() {
                return Err(LevelsError::OtherEngine { name: self.name.clone(), bound, given: engine.id() });
            }
        }
        out.check(&engine.sizes())?;
        Ok(())
    }

    /// The episodes that ended in a step (its outputs `out`, of an engine playing `pool`), each
    /// checked: flags 0 or 1 and not both, the outcome they mean, a slot of the pool and a
    /// generation it has had.
    fn ended(pool: &InstancePool, out: &StepBuffersMut<'_>) -> Result<Vec<EpisodeRecord>, LevelsError> {
        let mut ended = Vec::new();
        for (e, info) in out.info.iter().enumerate() {
            let (term, trunc) = (out.terminated[e], out.truncated[e]);
            if term > 1 || trunc > 1 || term + trunc > 1 {
                return Err(LevelsError::Input(format!(
                    "environment {e}: terminated {term} and truncated {trunc}: a step sets at most one of them, to 1"
                )));
            }
            if term + trunc == 0 {
                continue;
            }
            let outcomes: &[u32] =
                if term == 1 { &[outcome::SUCCESS, outcome::FAILURE] } else { &[outcome::TRUNCATED] };
            if !outcomes.contains(&info.outcome) {
                let flag = if term == 1 { "terminated" } else { "truncated" };
                return Err(LevelsError::Input(format!(
                    "environment {e}: {flag}, but its info's outcome is {}, which a {flag} episode does not have",
                    info.outcome
                )));
            }
            let record = EpisodeRecord::from(*info);
            check_episode(pool, &record)
                .map_err(|why| LevelsError::Input(format!("environment {e}: {why}")))?;
            ended.push(record);
        }
        Ok(ended)
    }

    /// The shapes of the levels `episodes` played (before any refill changes them).
    fn shapes(pool: &InstancePool, episodes: &[EpisodeRecord]) -> Vec<Shape> {
        episodes
            .iter()
            .map(|e| {
                let i = e.instance as usize;
                let (w, h, agents) = pool.dims(i);
                let hole_percent =
                    (f64::from(pool.holes(i)) * 100.0 / f64::from((w * h).max(1))).round() as u32;
                Shape { size: w.max(h), agents, hole_percent }
            })
            .collect()
    }

    fn count_played(&mut self, shapes: Vec<Shape>) {
        for shape in shapes {
            *self.played.entry(shape).or_default() += 1;
        }
    }

    /// The first-play marks of a step's outputs `out`, the step to be recorded as the
    /// `clock`-th: per environment and per ended episode, and the levels whose first episode
    /// ended. An episode of `n` steps so far began in step `clock + 1 − n`; it replays its level
    /// when an episode on the same slot and generation ended in an earlier step.
    fn marks(&self, out: &StepBuffersMut<'_>) -> Marks {
        let t = self.clock;
        let first_end = &self.first_end;
        let first_play: Vec<bool> = out
            .info
            .iter()
            .map(|info| {
                let began = (t + 1).saturating_sub(u64::from(info.episode_steps));
                let ended_before = first_end
                    .get(info.instance as usize)
                    .copied()
                    .flatten()
                    .is_some_and(|(generation, step)| generation == info.generation && step < began);
                !ended_before
            })
            .collect();
        let mut ended = Vec::new();
        let mut ended_env = Vec::new();
        let mut levels = Vec::new();
        for (e, info) in out.info.iter().enumerate() {
            if out.terminated[e] != 0 || out.truncated[e] != 0 {
                ended.push(first_play[e]);
                ended_env.push(e as u32);
                levels.push((info.instance as usize, info.generation));
            }
        }
        Marks { first_play, ended, ended_env, levels }
    }

    /// Keeps a recorded step's ended episodes (of an engine whose pool has `slots` slots), their
    /// marks and shapes.
    fn keep(&mut self, slots: usize, ended: Vec<EpisodeRecord>, marks: Marks, shapes: Vec<Shape>) {
        self.hold(ended, &marks);
        self.advance(slots, marks, shapes);
    }

    /// Counts a recorded step once its episodes are kept (or given to the sampler): the levels
    /// whose first episode ended in it, its marks, the shapes played.
    fn advance(&mut self, slots: usize, marks: Marks, shapes: Vec<Shape>) {
        self.first_end.resize(slots, None);
        for (slot, generation) in marks.levels {
            if let Some(end) = self.first_end.get_mut(slot) {
                if end.is_none_or(|(g, _)| g < generation) {
                    *end = Some((generation, self.clock));
                }
            }
        }
        self.first_play = marks.first_play;
        self.clock += 1;
        self.count_played(shapes);
    }

    /// The sampler's first call, with no episodes, after the engine's reset: its first weights,
    /// and any refill it asks for (written into `out`, the reset's outputs: their `obs` is read
    /// and rewritten for the environments moved, the other buffers only checked for length).
    /// Drops the kept episodes once it succeeds.
    ///
    /// # Errors
    /// As [`Levels::update`].
    pub fn start(
        &mut self,
        engine: &mut dyn Engine,
        out: StepBuffersMut<'_>,
    ) -> Result<Applied, LevelsError> {
        self.admit(engine, &out, "a level sampler's start")?;
        engine.check_outputs(&out, None)?;
        if let Some((pool, weights)) = &self.resume {
            check_same_pool(engine.pool(), pool)?;
            engine.set_weights(weights.as_deref())?;
            self.resume = None;
            self.engine = Some(engine.id());
            return Ok(Applied { weights: true, ..Applied::default() });
        }
        let applied = self.call(engine, Some(&[]), None, out)?;
        self.steps = 0;
        Ok(applied)
    }

    /// Keeps the episodes that ended in a step (its outputs `out`), without calling the sampler
    /// (for a host that calls [`Levels::update`] itself).
    ///
    /// # Errors
    /// As [`Levels::after_step`]'s checks; nothing is kept then.
    pub fn record(&mut self, engine: &dyn Engine, out: &StepBuffersMut<'_>) -> Result<(), LevelsError> {
        self.restored()?;
        self.admit(engine, out, "a level sampler's record")?;
        let ended = Self::ended(engine.pool(), out)?;
        let shapes = Self::shapes(engine.pool(), &ended);
        let marks = self.marks(out);
        self.keep(engine.pool().len(), ended, marks, shapes);
        self.engine = Some(engine.id());
        Ok(())
    }

    /// After each step: keeps its ended episodes, and every `update_every` steps calls the
    /// sampler with them and applies its plan (into `out`).
    ///
    /// # Errors
    /// Before anything changes: [`EngineError::NotReset`], [`LevelsError::OtherEngine`], a
    /// buffer of the wrong length ([`EngineError::BufferSize`]), an ended episode's record the
    /// checks refuse ([`LevelsError::Input`]); on the steps that call the sampler, buffers that
    /// are not the engine's last outputs, and then as [`Levels::update`]. A refused call keeps
    /// none of the step's episodes and does not count the step.
    pub fn after_step(
        &mut self,
        engine: &mut dyn Engine,
        mut out: StepBuffersMut<'_>,
    ) -> Result<Option<Applied>, LevelsError> {
        self.restored()?;
        self.admit(engine, &out, "a level sampler's after_step")?;
        let ended = Self::ended(engine.pool(), &out)?;
        let shapes = Self::shapes(engine.pool(), &ended);
        let marks = self.marks(&out);
        let calls = self.update_every != 0 && (self.steps + 1).is_multiple_of(u64::from(self.update_every));
        if !calls {
            self.keep(engine.pool().len(), ended, marks, shapes);
            self.steps += 1;
            self.engine = Some(engine.id());
            return Ok(None);
        }
        engine.check_outputs(&out, None)?;
        // The step's episodes go to the sampler with the kept ones; the step counts once it
        // succeeded.
        let kept = self.pending.len();
        self.hold(ended, &marks);
        match self.call(engine, None, None, out.reborrow()) {
            Ok(applied) => {
                self.advance(engine.pool().len(), marks, shapes);
                self.steps += 1;
                Ok(Some(applied))
            }
            Err(e) => {
                self.drop_pending_from(kept);
                Err(e)
            }
        }
    }

    /// Calls the sampler with `episodes` (`None`: those kept since its last call) and the host's
    /// `scores` of them (one each), and applies its plan to `engine`; `out` holds the last step's
    /// outputs, where refills truncate episodes. Every call that succeeds drops the episodes kept
    /// so far (given episodes stand in for them).
    ///
    /// # Errors
    /// Before anything changes: [`EngineError::NotReset`], [`LevelsError::OtherEngine`], a
    /// buffer of the wrong length or buffers that are not the engine's last outputs
    /// ([`Engine::check_outputs`]); then as [`Levels::decide`], then [`Levels::apply`]'s. The
    /// engine, the source and the kept episodes are as they were when any refuses (the
    /// sampler's own state is the sampler's).
    pub fn update(
        &mut self,
        engine: &mut dyn Engine,
        episodes: Option<&[EpisodeRecord]>,
        scores: Option<&[f32]>,
        out: StepBuffersMut<'_>,
    ) -> Result<Applied, LevelsError> {
        self.restored()?;
        self.admit(engine, &out, "a level sampler's update")?;
        engine.check_outputs(&out, None)?;
        self.call(engine, episodes, scores, out)
    }

    /// The sampler's decision applied to `engine`, once every argument has been checked; the
    /// kept episodes dropped and the engine bound on success.
    fn call(
        &mut self,
        engine: &mut dyn Engine,
        episodes: Option<&[EpisodeRecord]>,
        scores: Option<&[f32]>,
        out: StepBuffersMut<'_>,
    ) -> Result<Applied, LevelsError> {
        let levels = Self::levels(engine)?;
        let (source, edited) = (self.source.clone(), (self.edited, self.edits_failed));
        let decision = self.decision(&levels, episodes, scores, Some(engine.pool()))?;
        match Self::put(engine, &decision, out) {
            Ok(applied) => {
                let t = &mut self.totals;
                t.episodes += applied.episodes;
                t.refilled += applied.refilled;
                t.truncated += applied.truncated;
                t.weights |= applied.weights;
                self.clear_pending();
                self.engine = Some(engine.id());
                Ok(applied)
            }
            Err(e) => {
                self.source = source;
                (self.edited, self.edits_failed) = edited;
                Err(e)
            }
        }
    }

    /// The sampler's decision on the pool `levels` (what [`Levels::levels`] gives of an engine;
    /// shards of one pool sum their `in_play`) for `episodes` (`None`: those kept since its last
    /// call; either way the kept ones are dropped when it succeeds) and the host's `scores`: its
    /// weights, the slots to refill, and their new levels, drawn here. [`Levels::apply`] puts it
    /// into an engine; Ray shards of one pool apply the same decision each, which keeps their
    /// pools the same.
    ///
    /// # Errors
    /// [`LevelsError::Sampler`] for scores of the wrong length or not finite, an episode whose
    /// slot is outside the pool or whose generation the slot has not reached, a sampler that
    /// fails, panics or answers a plan the checks refuse (weights, refill slots, a configuration
    /// outside the level space); [`LevelsError::Generate`] when new levels cannot be made. The
    /// source and the kept episodes are then as they were.
    pub fn decide(
        &mut self,
        levels: &[LevelRecord],
        episodes: Option<&[EpisodeRecord]>,
        scores: Option<&[f32]>,
    ) -> Result<Decision, LevelsError> {
        self.restored()?;
        if let Some((i, l)) = levels.iter().enumerate().find(|(i, l)| l.slot as usize != *i) {
            return Err(LevelsError::Input(format!(
                "level record {i} names slot {}: give the pool's slots in order, as Levels::levels lists them",
                l.slot
            )));
        }
        let decision = self.decision(levels, episodes, scores, None)?;
        self.clear_pending();
        Ok(decision)
    }

    /// [`Levels::decide`], with the kept episodes left as they are; `pool` holds the levels an
    /// editing sampler's edits start from (none for `decide`, which refuses edits).
    fn decision(
        &mut self,
        levels: &[LevelRecord],
        episodes: Option<&[EpisodeRecord]>,
        scores: Option<&[f32]>,
        pool: Option<&InstancePool>,
    ) -> Result<Decision, LevelsError> {
        let sampler_error =
            |name: &str, source: PluginError| LevelsError::Sampler { name: name.to_string(), source };
        let given = episodes.unwrap_or(&self.pending);
        check_update(levels, given, scores).map_err(|e| sampler_error(&self.name, e))?;
        if let Some((i, e)) =
            given.iter().enumerate().find(|(_, e)| e.generation > levels[e.instance as usize].generation)
        {
            let why = format!(
                "episode {i} played generation {} of slot {}, which is at generation {}",
                e.generation, e.instance, levels[e.instance as usize].generation
            );
            return Err(sampler_error(&self.name, PluginError::BadInput(why)));
        }
        let plan = self.sampler.update(levels, given, scores).map_err(|e| sampler_error(&self.name, e))?;
        plan.check(levels.len()).map_err(|e| sampler_error(&self.name, e))?;
        let mut source = self.source.clone();
        if let Some(config) = &plan.config {
            source.set_config(config.clone()).map_err(|e| {
                sampler_error(&self.name, PluginError::BadOutput(format!("its configuration: {e}")))
            })?;
        }
        let mut new = source.draw(plan.refill.len())?;
        let mut refill: Vec<usize> = plan.refill.iter().map(|&s| s as usize).collect();
        if !plan.edits.is_empty() {
            let Some(pool) = pool.filter(|p| p.len() == levels.len()) else {
                let why = "it asks for edited levels (ACCEL), which need the pool's levels: call update or \
                           after_step on the engine, not decide";
                return Err(sampler_error(&self.name, PluginError::BadOutput(why.into())));
            };
            let parents: Vec<(floe_core::Instance, u32)> =
                plan.edits.iter().map(|e| (level_of(pool, e.from as usize), e.edits)).collect();
            let (children, count) = source.edit(&parents)?;
            self.edited += count as u64;
            self.edits_failed += (parents.len() - count) as u64;
            new.extend(children);
            refill.extend(plan.edits.iter().map(|e| e.slot as usize));
        }
        self.source = source;
        Ok(Decision { weights: plan.weights, refill, levels: new, episodes: given.len() })
    }

    /// Puts a decision into `engine`: the weights, then the refills (`out` holds the last step's
    /// outputs, where they truncate episodes).
    ///
    /// # Errors
    /// Buffers that are not the engine's last outputs ([`Engine::check_outputs`], which also
    /// refuses an engine not reset), [`LevelsError::Config`] for new levels that do not fit the
    /// pool's room, the engine's errors; the engine is then as it was.
    pub fn apply(
        engine: &mut dyn Engine,
        decision: &Decision,
        out: StepBuffersMut<'_>,
    ) -> Result<Applied, LevelsError> {
        engine.check_outputs(&out, None)?;
        Self::put(engine, decision, out)
    }

    /// [`Levels::apply`] once the buffers have been checked.
    fn put(
        engine: &mut dyn Engine,
        decision: &Decision,
        out: StepBuffersMut<'_>,
    ) -> Result<Applied, LevelsError> {
        for level in &decision.levels {
            engine.pool().check_fits(level).map_err(|e| {
                LevelsError::Config(format!("{e} (the pool needs the level space's room: LevelSpace::room)"))
            })?;
        }
        // The weights first, so that an episode a refill truncates draws its next level by them;
        // the old ones come back if the refill is refused.
        let old = engine.weights().map(<[f64]>::to_vec);
        if let Some(w) = &decision.weights {
            engine.set_weights(Some(w))?;
        }
        let refilled = if decision.refill.is_empty() {
            Default::default()
        } else {
            match engine.refill(&decision.refill, &decision.levels, out) {
                Ok(r) => r,
                Err(e) => {
                    engine.set_weights(old.as_deref())?;
                    return Err(e.into());
                }
            }
        };
        Ok(Applied {
            episodes: decision.episodes,
            weights: decision.weights.is_some(),
            refilled: decision.refill.len(),
            truncated: refilled.truncated,
        })
    }
}

/// Slot `i`'s level as an instance (its grid, starts and goals; no plan).
fn level_of(pool: &InstancePool, i: usize) -> floe_core::Instance {
    let (_, _, agents) = pool.dims(i);
    let agents = (0..agents as usize)
        .map(|a| {
            let ((sr, sc), (gr, gc)) = (pool.start(i, a), pool.goal(i, a));
            floe_core::Agent { start: floe_core::Pos::new(sr, sc), goal: floe_core::Pos::new(gr, gc) }
        })
        .collect();
    floe_core::Instance { id: None, grid: pool.grid(i), agents, optimal: None, needs_wait: None }
}

/// A recorded step's first-play marks ([`Levels::marks`]).
struct Marks {
    /// Per environment.
    first_play: Vec<bool>,
    /// Per ended episode, in environment order.
    ended: Vec<bool>,
    /// The environment of each ended episode.
    ended_env: Vec<u32>,
    /// The level (slot, generation) of each ended episode.
    levels: Vec<(usize, u32)>,
}

/// Why an episode's record names no level `pool` has had: a slot outside it, or a generation the
/// slot has not reached.
fn check_episode(pool: &InstancePool, e: &EpisodeRecord) -> Result<(), String> {
    let slot = e.instance as usize;
    if slot >= pool.len() {
        return Err(format!("its info names slot {slot}, outside a pool of {} slots", pool.len()));
    }
    if e.generation > pool.generation(slot) {
        return Err(format!(
            "its info names generation {} of slot {slot}, which is at generation {}",
            e.generation,
            pool.generation(slot)
        ));
    }
    Ok(())
}
