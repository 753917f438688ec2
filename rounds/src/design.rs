//! Each round's configuration, and where it came from.
//!
//! - **Round 0**: `rounds.round0` when given; else the curriculum's answer to an empty history;
//!   else (an engineer alone) floe's round-0 default ([`RoundConfig::round0_default`]) clamped
//!   into the design limits. The paper's "GRPO (random)" round.
//! - **Later rounds, with an engineer** (`rounds.engineer`, alone or alongside a curriculum):
//!   the driver assembles the context from the run's own records ([`ContextOptions`]: F, G, H,
//!   S, T), asks the engineer, clamps its configuration into `rounds.design_limits` (noting
//!   why), and applies it. If the engineer gives no usable configuration (its error after its
//!   own retries, or one that stays invalid), the previous round's configuration stands and the
//!   round's log says why. A curriculum alongside it gives round 0 and chooses the instances to
//!   replay; without a curriculum that declares that it replays (no curriculum, or one without
//!   the `replays` capability in its info, such as difficulty scaling) nothing can replay, so
//!   `max_replay_fraction` is taken as 0: the context and the grammar offer no replay, and a
//!   reply's is clamped to 0.
//! - **Later rounds, with a curriculum alone**: its `next_config` on the history.
//!
//! With an engineer, `engineer/round-<r>/` in the run folder receives what it was given and
//! what it answered ([`crate::folder`]; the log's "reply N" is `reply-N.txt`). The engineer only
//! ever changes the generator configuration; the reward is not part of what it returns.

use floe_core::progress::Progress;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{Curriculum, EnvEngineer, History, Plugins, ReplayRecord, ReplayRequest, RoundConfig};

use crate::config::RoundsConfig;
use crate::context::ContextInput;
use crate::error::RoundsError;
use crate::folder::RunFolder;
use crate::limits::Adoption;
use crate::state::RunState;

pub use crate::state::{Design, Source};

/// Who designs a run's rounds: its curriculum and its environment engineer, when the settings
/// name them.
#[derive(Default)]
pub struct Designers {
    /// `rounds.curriculum`.
    pub curriculum: Option<Box<dyn Curriculum>>,
    /// Whether the curriculum declared that it chooses instances to replay.
    pub curriculum_replays: bool,
    /// `rounds.engineer`.
    pub engineer: Option<Box<dyn EnvEngineer>>,
}

impl std::fmt::Debug for Designers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Designers")
            .field("curriculum", &self.curriculum.is_some())
            .field("curriculum_replays", &self.curriculum_replays)
            .field("engineer", &self.engineer.is_some())
            .finish()
    }
}

impl Designers {
    /// A run's plugins as its designers and its reward (the trainee's).
    #[must_use]
    pub fn split(plugins: Plugins) -> (Self, Box<dyn floe_plugin_api::RewardFn>) {
        let Plugins { reward, curriculum, curriculum_replays, engineer } = plugins;
        (Designers { curriculum, curriculum_replays, engineer }, reward)
    }
}

/// The curriculum and the engineer of a run.
pub(crate) struct Designer {
    rounds: RoundsConfig,
    curriculum: Option<Box<dyn Curriculum>>,
    /// Whether the curriculum declared that it replays ([`Plugins::curriculum_replays`]).
    replays: bool,
    engineer: Option<Box<dyn EnvEngineer>>,
    limits: DesignLimits,
    round0_given: bool,
}

impl Designer {
    /// The run's designer from its plugins (their reward is not the designer's).
    pub(crate) fn new(rounds: &RoundsConfig, plugins: Designers) -> Self {
        let curriculum = plugins.curriculum;
        let replays = curriculum.is_some() && plugins.curriculum_replays;
        let mut limits = rounds.design_limits.clone();
        if !replays {
            limits.max_replay_fraction = 0.0;
        }
        Designer {
            rounds: rounds.clone(),
            curriculum,
            replays,
            engineer: plugins.engineer,
            limits,
            round0_given: rounds.round0.is_some(),
        }
    }

    /// Brings a stateful curriculum to where it was: it is asked again for every finished round
    /// it designed, on the history it saw then.
    pub(crate) fn catch_up(&mut self, state: &RunState) -> Result<(), RoundsError> {
        let Some(c) = self.curriculum.as_mut() else { return Ok(()) };
        let by_curriculum: Vec<u32> = if state.designs.is_empty() {
            // A checkpoint written before designs were recorded: its curriculum designed every
            // round but a given round 0.
            (0..state.rounds_done).filter(|&r| r > 0 || !self.round0_given).collect()
        } else {
            state.designs.iter().filter(|d| d.source == Source::Curriculum).map(|d| d.round).collect()
        };
        for r in by_curriculum {
            let past = History { rounds: state.history.rounds[..r as usize].to_vec() };
            c.next_config(&past)?;
        }
        Ok(())
    }

    /// Chooses `request.count` instances of the pool to replay.
    ///
    /// # Errors
    /// No curriculum (a configuration asked for replay that nothing can choose), or the
    /// curriculum's error (one that does not replay says so).
    pub(crate) fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, RoundsError> {
        let c = self.curriculum.as_mut().ok_or_else(|| {
            RoundsError::Input(
                "a configuration asks for replay, but the run has no curriculum to choose the instances"
                    .into(),
            )
        })?;
        if !self.replays {
            return Err(RoundsError::Input(format!(
                "round {}: replay_fraction > 0, but the curriculum does not declare that it replays",
                request.round
            )));
        }
        let ids = c.sample_replay(pool, request).map_err(|e| {
            RoundsError::Input(format!(
                "round {}: the curriculum could not choose replays: {e}",
                request.round
            ))
        })?;
        floe_plugin_api::traits::check_replay(&ids, pool.len(), request)?;
        Ok(ids)
    }

    /// Round `r`'s configuration; its [`Design`] goes into the run's state.
    pub(crate) fn next(
        &mut self,
        state: &mut RunState,
        folder: &RunFolder,
        progress: &dyn Progress,
        r: u32,
        details: &serde_json::Value,
    ) -> Result<RoundConfig, RoundsError> {
        let history = &state.history;
        let (config, design) =
            match (r, &self.rounds.round0, self.curriculum.as_mut(), self.engineer.is_some()) {
                (0, Some(c), _, _) => {
                    (c.clone(), Design { round: 0, source: Source::Round0, rationale: None, notes: vec![] })
                }
                (0, None, Some(c), _) | (_, _, Some(c), false) => {
                    let config = c.next_config(history)?;
                    (config, Design { round: r, source: Source::Curriculum, rationale: None, notes: vec![] })
                }
                (0, None, None, _) => {
                    let (config, notes) = self
                        .limits
                        .clamp(&RoundConfig::round0_default())
                        .map_err(|e| RoundsError::Input(format!("round 0's default configuration: {e}")))?;
                    (config, Design { round: 0, source: Source::Default, rationale: None, notes })
                }
                _ => self.ask_engineer(state, folder, r, details)?,
            };
        config.validate()?;
        if !design.notes.is_empty() {
            progress.line(&format!("round {r} design: {}", design.notes.join("; ")));
        }
        state.designs.retain(|d| d.round < r);
        state.designs.push(design);
        Ok(config)
    }

    fn ask_engineer(
        &mut self,
        state: &RunState,
        folder: &RunFolder,
        r: u32,
        details: &serde_json::Value,
    ) -> Result<(RoundConfig, Design), RoundsError> {
        let cfg = &self.rounds;
        let previous = state.history.last().map(|l| l.config.clone()).ok_or_else(|| {
            RoundsError::Input(format!("round {r}: no earlier round for the engineer to read"))
        })?;
        let previous_rationale =
            state.designs.iter().rev().find(|d| d.round + 1 == r && d.source == Source::Engineer);
        let limits = &self.limits;
        let input = ContextInput {
            history: &state.history,
            round: r,
            rounds: cfg.rounds,
            epochs: cfg.epochs,
            samples: cfg.samples,
            previous_rationale: previous_rationale.and_then(|d| d.rationale.as_deref()),
            hyperparameters: details.clone(),
            limits,
        };
        let context = cfg.context.assemble(&input)?;
        folder.write_engineer_context(r, &context, limits)?;
        let engineer = self.engineer.as_mut().ok_or_else(|| RoundsError::Input("no engineer".into()))?;
        let t0 = std::time::Instant::now();
        let asked = engineer.design(&context, limits);
        let took = t0.elapsed().as_secs_f64();
        let adopted = limits.adopt(asked);
        let mut notes = adopted.notes.clone();
        notes.push(format!("engineer answered in {took:.1} s"));
        let (config, design) = match &adopted.chosen {
            Some((config, rationale)) => (
                config.clone(),
                Design { round: r, source: Source::Engineer, rationale: Some(rationale.clone()), notes },
            ),
            None => (previous, Design { round: r, source: Source::Previous, rationale: None, notes }),
        };
        folder.write_engineer_answer(r, &adopted, &config, &design.notes)?;
        Ok((config, design))
    }
}
