//! Each round's configuration, and where it came from.
//!
//! - **Round 0**: `rounds.round0` when given; else the curriculum's answer to an empty history;
//!   else (an engineer alone) floe's round-0 default ([`RoundConfig::round0_default`]) clamped
//!   into the design limits. The paper's "GRPO (random)" round.
//! - **Later rounds, with an engineer** (`rounds.engineer`, alone or alongside a curriculum):
//!   the trainer assembles the context from the run's own records ([`ContextOptions`]: F, G, H,
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
//! With an engineer, `engineer/round-<r>/` in the run folder receives `context.md` and
//! `limits.json` (what it was given: the context's text, and the design limits as a value,
//! which the text states too), `reply.txt` (its raw replies, every attempt, or its reply as JSON),
//! `reply-1.txt`, `reply-2.txt`, … (a language-model engineer's raw replies, one a file, as
//! received and in order, also when it gave up; the log's "reply N" is `reply-N.txt`),
//! `config.json` (the configuration applied), `rationale.txt` and `log.txt` (what was clamped
//! or retried, or why the previous configuration stood). The engineer only ever changes the
//! generator configuration; the reward is not part of what it returns.

use std::path::{Path, PathBuf};

use floe_plugin_api::design::{ContextInput, DesignLimits};
use floe_plugin_api::{Curriculum, EnvEngineer, History, Plugins, ReplayRecord, ReplayRequest, RoundConfig};
use serde::{Deserialize, Serialize};

use super::{Run, RunState};
use crate::config::TrainConfig;
use crate::error::TrainError;

/// Where a round's configuration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `rounds.round0`.
    Round0,
    /// floe's round-0 default, clamped into the design limits.
    Default,
    /// The curriculum's `next_config`.
    Curriculum,
    /// The engineer's reply (clamped where needed).
    Engineer,
    /// The engineer gave nothing usable: the previous configuration stood.
    Previous,
}

/// How one round's configuration came about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    pub round: u32,
    pub source: Source,
    /// The engineer's rationale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// What was clamped, retried, or why the previous configuration stood.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The folder of round `r`'s engineer files.
#[must_use]
pub fn engineer_dir(out_dir: &Path, r: u32) -> PathBuf {
    out_dir.join("engineer").join(format!("round-{r}"))
}

/// The curriculum and the engineer of a run.
pub(crate) struct Designer {
    curriculum: Option<Box<dyn Curriculum>>,
    /// Whether the curriculum declared that it replays ([`Plugins::curriculum_replays`]).
    replays: bool,
    engineer: Option<Box<dyn EnvEngineer>>,
    limits: DesignLimits,
    round0_given: bool,
}

impl Designer {
    /// The run's designer from its plugins (the reward stays with the caller).
    pub(crate) fn new(cfg: &TrainConfig, plugins: &mut Plugins) -> Self {
        let curriculum = plugins.curriculum.take();
        let replays = curriculum.is_some() && plugins.curriculum_replays;
        let mut limits = cfg.rounds.design_limits.clone();
        if !replays {
            limits.max_replay_fraction = 0.0;
        }
        Designer {
            curriculum,
            replays,
            engineer: plugins.engineer.take(),
            limits,
            round0_given: cfg.rounds.round0.is_some(),
        }
    }

    /// Brings a stateful curriculum to where it was: it is asked again for every finished round
    /// it designed, on the history it saw then.
    pub(crate) fn catch_up(&mut self, state: &RunState) -> Result<(), TrainError> {
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
    ) -> Result<Vec<u32>, TrainError> {
        let c = self.curriculum.as_mut().ok_or_else(|| {
            TrainError::Input(
                "a configuration asks for replay, but the run has no curriculum to choose the instances"
                    .into(),
            )
        })?;
        if !self.replays {
            return Err(TrainError::Input(format!(
                "round {}: replay_fraction > 0, but the curriculum does not declare that it replays",
                request.round
            )));
        }
        let ids = c.sample_replay(pool, request).map_err(|e| {
            TrainError::Input(format!(
                "round {}: the curriculum could not choose replays: {e}",
                request.round
            ))
        })?;
        floe_plugin_api::traits::check_replay(&ids, pool.len(), request)?;
        Ok(ids)
    }

    /// Round `r`'s configuration; its [`Design`] goes into the run's state.
    pub(crate) fn next(&mut self, run: &mut Run<'_>, r: u32) -> Result<RoundConfig, TrainError> {
        let cfg = run.cfg;
        let history = &run.state.history;
        let (config, design) =
            match (r, &cfg.rounds.round0, self.curriculum.as_mut(), self.engineer.is_some()) {
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
                        .map_err(|e| TrainError::Input(format!("round 0's default configuration: {e}")))?;
                    (config, Design { round: 0, source: Source::Default, rationale: None, notes })
                }
                _ => self.ask_engineer(run, r)?,
            };
        config.validate()?;
        if !design.notes.is_empty() {
            run.say(&format!("round {r} design: {}", design.notes.join("; ")));
        }
        run.state.designs.retain(|d| d.round < r);
        run.state.designs.push(design);
        Ok(config)
    }

    fn ask_engineer(&mut self, run: &Run<'_>, r: u32) -> Result<(RoundConfig, Design), TrainError> {
        let cfg = run.cfg;
        let state = &run.state;
        let previous = state.history.last().map(|l| l.config.clone()).ok_or_else(|| {
            TrainError::Input(format!("round {r}: no earlier round for the engineer to read"))
        })?;
        let previous_rationale =
            state.designs.iter().rev().find(|d| d.round + 1 == r && d.source == Source::Engineer);
        let limits = &self.limits;
        let input = ContextInput {
            history: &state.history,
            round: r,
            rounds: cfg.rounds.rounds,
            epochs: cfg.rounds.epochs,
            samples: cfg.rounds.samples,
            previous_rationale: previous_rationale.and_then(|d| d.rationale.as_deref()),
            hyperparameters: serde_json::json!({"grpo": cfg.grpo, "adam": cfg.adam}),
            limits,
        };
        let context = cfg.rounds.context.assemble(&input)?;
        let dir = engineer_dir(&run.opts.out_dir, r);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| TrainError::io(&dir, e))?;
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(|e| TrainError::io(&p, e))
        };
        write("context.md", &context)?;
        write("limits.json", &(serde_json::to_string_pretty(limits).unwrap_or_default() + "\n"))?;
        let engineer = self.engineer.as_mut().ok_or_else(|| TrainError::Input("no engineer".into()))?;
        let t0 = std::time::Instant::now();
        let asked = engineer.design(&context, limits);
        let took = t0.elapsed().as_secs_f64();
        let adopted = limits.adopt(asked);
        write("reply.txt", &adopted.raw.map(|r| r + "\n").unwrap_or_default())?;
        for (i, text) in adopted.replies.iter().enumerate() {
            write(&format!("reply-{}.txt", i + 1), text)?;
        }
        let (chosen, mut notes) = (adopted.chosen, adopted.notes);
        notes.push(format!("engineer answered in {took:.1} s"));
        let (config, design) = match chosen {
            Some((config, rationale)) => {
                write("rationale.txt", &(rationale.clone() + "\n"))?;
                (config, Design { round: r, source: Source::Engineer, rationale: Some(rationale), notes })
            }
            None => {
                write("rationale.txt", "")?;
                (previous, Design { round: r, source: Source::Previous, rationale: None, notes })
            }
        };
        write("config.json", &(serde_json::to_string_pretty(&config).unwrap_or_default() + "\n"))?;
        write("log.txt", &(design.notes.join("\n") + "\n"))?;
        Ok((config, design))
    }
}
