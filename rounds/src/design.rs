//! Each round's configuration, and where it came from.
//!
//! - **Round 0**: `rounds.round0` when given; else the curriculum's answer to an empty history;
//!   else (an engineer alone) floe's round-0 default ([`RoundConfig::round0_default`]) clamped
//!   into the design limits. ([`random_config`] draws the paper's "GRPO (random)" round 0.)
//! - **Later rounds, with an engineer** (`rounds.engineer`, alone or alongside a curriculum):
//!   the driver assembles the context from the run's own records ([`ContextOptions`](crate::context::ContextOptions): F, G, H,
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
use floe_core::rng::Rng;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{
    Curriculum, EnvEngineer, History, Plugins, ReplayRecord, ReplayRequest, RoundConfig, SizeConfig,
};

use crate::config::RoundsConfig;
use crate::context::ContextInput;
use crate::error::RoundsError;
use crate::folder::RunFolder;
use crate::limits::{Adopted, Adoption};
use crate::state::RunState;

pub use crate::state::{Design, Source};

/// A configuration drawn at random from `limits` with `seed`: the paper's "GRPO (random)"
/// default, which a `fixed` baseline keeps every round. The same limits and seed give the same
/// configuration.
///
/// The draw: the sizes `min_size..=max_size` (when there are more than `max_sizes`, that many of
/// them, uniformly without replacement); data ratios from a flat Dirichlet distribution (each
/// size's weight `−ln u`, normalised), so that every share of the data among the sizes is as
/// likely as another; per size a hole ratio uniform in `[0, max_hole_ratio]` and a wait ratio
/// uniform in `[0, 1]`, both to two decimals; every agent count of the limits; no replay. The
/// result is clamped into the limits as an engineer's reply would be.
///
/// # Errors
/// Limits that admit no configuration.
pub fn random_config(limits: &DesignLimits, seed: u64) -> Result<RoundConfig, RoundsError> {
    let mut rng = Rng::from_counters(&[seed, 0x7a4d_0c0f]);
    let mut unit = move || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let mut sizes: Vec<u32> = (limits.min_size..=limits.max_size).collect();
    while sizes.len() > limits.max_sizes.max(1) {
        let drop = ((unit() * sizes.len() as f64) as usize).min(sizes.len() - 1);
        sizes.remove(drop);
    }
    let weights: Vec<f64> = sizes.iter().map(|_| -unit().ln()).collect();
    let total: f64 = weights.iter().sum();
    let two = |x: f64| (x * 100.0).round() / 100.0;
    let config = RoundConfig {
        sizes: sizes
            .iter()
            .zip(&weights)
            .map(|(&size, w)| SizeConfig {
                size,
                data_ratio: w / total,
                hole_ratio: two(unit() * limits.max_hole_ratio).min(limits.max_hole_ratio),
                wait_ratio: two(unit()),
            })
            .collect(),
        agents: limits.agents.clone(),
        replay_fraction: 0.0,
    };
    let (config, _) = limits
        .clamp(&config)
        .map_err(|e| RoundsError::Input(format!("a random configuration within the design limits: {e}")))?;
    Ok(config)
}

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

/// The design limits as a run applies them: without a curriculum that declares that it replays
/// (`replays`), nothing can choose instances to replay, so `max_replay_fraction` is 0.
#[must_use]
pub fn run_limits(limits: &DesignLimits, replays: bool) -> DesignLimits {
    let mut limits = limits.clone();
    if !replays {
        limits.max_replay_fraction = 0.0;
    }
    limits
}

/// Round 0's configuration when nothing else gives it: floe's round-0 default
/// ([`RoundConfig::round0_default`]) clamped into `limits`, and the notes saying what was
/// clamped.
///
/// # Errors
/// Limits that do not validate, or that the default cannot be made to fit.
pub fn default_round0(limits: &DesignLimits) -> Result<(RoundConfig, Vec<String>), RoundsError> {
    limits.validate().map_err(|e| RoundsError::Input(format!("design_limits: {e}")))?;
    limits
        .clamp(&RoundConfig::round0_default())
        .map_err(|e| RoundsError::Input(format!("round 0's default configuration: {e}")))
}

/// One answer of an engineer, as the driver adopts it.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The configuration adopted: the engineer's, clamped into the limits, or the previous
    /// round's when it gave none usable.
    pub config: RoundConfig,
    /// Where it came from ([`Source::Engineer`] or [`Source::Previous`]), the rationale, and
    /// the notes (what was clamped or retried, the time the engineer took).
    pub design: Design,
    /// The reply read and clamped.
    pub adopted: Adopted,
}

/// Asks `engineer` for round `r`'s configuration on `context` within `limits` and adopts its
/// reply ([`Adoption::adopt`]); an unusable reply leaves `previous` standing. The one design step
/// of the driver, and of the step-by-step API (`floe.Engineer.next_config`).
pub fn ask_engineer(
    engineer: &mut dyn EnvEngineer,
    r: u32,
    context: &str,
    limits: &DesignLimits,
    previous: RoundConfig,
) -> Asked {
    let t0 = std::time::Instant::now();
    let asked = engineer.design(context, limits);
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
    Asked { config, design, adopted }
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
        let limits = run_limits(&rounds.design_limits, replays);
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
                    let (config, notes) = default_round0(&self.limits)?;
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
        let Asked { config, design, adopted } =
            ask_engineer(engineer.as_mut(), r, &context, limits, previous);
        folder.write_engineer_answer(r, &adopted, &config, &design.notes)?;
        Ok((config, design))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_random_configuration_is_the_seeds_and_within_the_limits() {
        let limits = DesignLimits {
            min_size: 3,
            max_size: 10,
            agents: vec![2],
            max_sizes: 8,
            ..DesignLimits::default()
        };
        let a = random_config(&limits, 7).unwrap();
        assert_eq!(a, random_config(&limits, 7).unwrap());
        assert_ne!(a, random_config(&limits, 8).unwrap());
        a.validate().unwrap();
        assert_eq!(a.sizes.iter().map(|s| s.size).collect::<Vec<_>>(), (3..=10).collect::<Vec<_>>());
        assert_eq!(a.agents, vec![2]);
        // Not the uniform configuration: the data ratios differ between sizes.
        let ratios: Vec<f64> = a.sizes.iter().map(|s| s.data_ratio).collect();
        assert!(ratios.iter().any(|&r| (r - 0.125).abs() > 0.01), "{ratios:?}");
        for seed in 0..50 {
            let c = random_config(&limits, seed).unwrap();
            assert!(c.sizes.iter().all(|s| s.hole_ratio <= 0.4 && (0.0..=1.0).contains(&s.wait_ratio)));
        }
        // Fewer sizes allowed than the range holds: that many, all within the range.
        let few = DesignLimits { max_sizes: 3, ..limits };
        let c = random_config(&few, 1).unwrap();
        assert_eq!(c.sizes.len(), 3);
        assert!(c.sizes.iter().all(|s| (3..=10).contains(&s.size)));
    }
}
