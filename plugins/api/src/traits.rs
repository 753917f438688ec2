//! The three plugin kinds as plain Rust traits. Built-in plugins implement them and are used
//! in-process; plugins loaded from a library (Rust or C) are wrapped by the host into the same
//! traits, so a caller never needs to know where a plugin came from.
//!
//! Every call takes a whole batch. Methods take `&mut self`: a plugin may keep state between
//! calls, and the host never calls one instance from two threads at once.

use crate::config::RoundConfig;
use crate::design::{DesignLimits, EngineerReply};
use crate::error::PluginError;
use crate::history::History;
use crate::records::{ReplayRecord, ReplayRequest, StepOutcome, VerdictRecord};

/// Turns verification results or step outcomes into rewards.
pub trait RewardFn: Send {
    /// Writes one reward per record into `out` (`out.len() == records.len()`).
    ///
    /// # Errors
    /// [`PluginError::Unsupported`] if the plugin rewards only steps; [`PluginError::BadInput`]
    /// for records out of range.
    fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        let _ = (records, out);
        Err(PluginError::Unsupported("verdict rewards".into()))
    }

    /// Writes one reward per step outcome into `out` (`out.len() == steps.len()`).
    ///
    /// # Errors
    /// [`PluginError::Unsupported`] if the plugin rewards only verdicts; [`PluginError::BadInput`]
    /// for outcomes out of range.
    fn step_rewards(&mut self, steps: &[StepOutcome], out: &mut [f32]) -> Result<(), PluginError> {
        let _ = (steps, out);
        Err(PluginError::Unsupported("step rewards".into()))
    }
}

/// Chooses the next round's generator configuration from the history of rounds, and may pick
/// earlier instances to replay (Syllabus-style: the curriculum sees outcomes, the trainer asks
/// it for tasks).
pub trait Curriculum: Send {
    /// The configuration of round `history.next_round()`; `history` has been validated.
    ///
    /// # Errors
    /// Whatever the plugin cannot do; a returned configuration is validated by the caller.
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError>;

    /// Chooses `request.count` distinct instances of `pool` to replay, as indices into `pool`.
    ///
    /// # Errors
    /// [`PluginError::Unsupported`] if the curriculum does not replay; [`PluginError::BadInput`]
    /// for records out of range or a count above what the pool can give.
    fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, PluginError> {
        let _ = (pool, request);
        Err(PluginError::Unsupported("replay sampling".into()))
    }
}

/// A curriculum that works from a text context (the paper's environment engineer): it reads
/// the context the host assembled (failure counts, guidelines, history, …) and answers with a
/// configuration and its rationale.
pub trait EnvEngineer: Send {
    /// The next configuration and why. `limits` are the design limits the caller clamps the
    /// reply's configuration into (floe-rounds' `Adoption::adopt`); the context's text states them
    /// too, for a language model to read.
    ///
    /// # Errors
    /// Whatever the engineer cannot do; the reply's configuration is validated by the caller.
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError>;
}

/// Checks that a reward batch's output has the batch's length.
///
/// # Errors
/// [`PluginError::BadInput`] when the lengths differ.
pub fn check_lengths(inputs: usize, outputs: usize) -> Result<(), PluginError> {
    if inputs == outputs {
        Ok(())
    } else {
        Err(PluginError::BadInput(format!("{inputs} records but room for {outputs} rewards")))
    }
}

/// Checks rewards a plugin wrote: all finite.
///
/// # Errors
/// [`PluginError::BadOutput`] naming the first non-finite reward.
pub fn check_rewards(out: &[f32]) -> Result<(), PluginError> {
    match out.iter().position(|r| !r.is_finite()) {
        None => Ok(()),
        Some(i) => Err(PluginError::BadOutput(format!("reward {i} is {}", out[i]))),
    }
}

/// Checks replay indices a plugin returned: at most `request.count`, in range, distinct.
///
/// # Errors
/// [`PluginError::BadOutput`] naming the problem.
pub fn check_replay(indices: &[u32], pool_len: usize, request: &ReplayRequest) -> Result<(), PluginError> {
    if indices.len() > request.count as usize {
        return Err(PluginError::BadOutput(format!(
            "{} replay indices for a request of {}",
            indices.len(),
            request.count
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for &i in indices {
        if i as usize >= pool_len {
            return Err(PluginError::BadOutput(format!("replay index {i} is outside a pool of {pool_len}")));
        }
        if !seen.insert(i) {
            return Err(PluginError::BadOutput(format!("replay index {i} appears twice")));
        }
    }
    Ok(())
}

/// The plugins of a training run: the reward that scores verified plans, and the curriculum and
/// the environment engineer when the configuration names them.
pub struct Plugins {
    /// Scores verified plans (`rounds.reward`).
    pub reward: Box<dyn RewardFn>,
    /// `rounds.curriculum`.
    pub curriculum: Option<Box<dyn Curriculum>>,
    /// Whether the curriculum declared that it chooses instances to replay
    /// ([`crate::Capabilities::REPLAYS`] in its info); `false` without a curriculum. The trainer
    /// asks for replays only then.
    pub curriculum_replays: bool,
    /// `rounds.engineer`.
    pub engineer: Option<Box<dyn EnvEngineer>>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins")
            .field("curriculum", &self.curriculum.is_some())
            .field("curriculum_replays", &self.curriculum_replays)
            .field("engineer", &self.engineer.is_some())
            .finish_non_exhaustive()
    }
}
