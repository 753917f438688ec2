//! The protocol's settings: the rounds ([`RoundsConfig`]: how many, their budget, who designs
//! them, the reward) and the fixed validation set ([`ValidationConfig`]). `floe train` reads them
//! as the `rounds` and `validation` sections of its configuration; `floe.rounds` and `floe.verl`
//! as the same keys of theirs.

use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{PluginSpec, RoundConfig};
use serde::{Deserialize, Serialize};

use crate::context::ContextOptions;
use crate::error::RoundsError;

/// The rounds: per round, a training set from the round's configuration (by the curriculum or
/// the engineer), `epochs` passes of GRPO over it, a validation, and the next configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundsConfig {
    /// Rounds \[3\]; 0 = warm start only.
    pub rounds: u32,
    /// Passes over the round's training set \[2\].
    pub epochs: u32,
    /// Training prompts per round, shared among map sizes by `data_ratio` (a share
    /// `replay_fraction` of them replayed) \[1536\].
    pub samples: usize,
    /// The curriculum \[`difficulty-scaling`, starting on sizes 3–5 with 2 and 3 agents at hole
    /// ratio 0.2 and wait ratio 0.5 (the validation set's), growing up to size 6\]; `null` for
    /// none (then `engineer` designs every round after round 0). With an engineer too, the
    /// curriculum gives round 0 (unless `round0` does) and chooses replayed instances, and the
    /// engineer designs every later round.
    pub curriculum: Option<PluginSpec>,
    /// The environment engineer \[absent\]: after each round it reads a context assembled from
    /// the run's records (`context`) and writes the next configuration, clamped into
    /// `design_limits` (see [`crate::design`]).
    pub engineer: Option<PluginSpec>,
    /// How the engineer's context is assembled: preset V1–V6, guidelines and template files,
    /// training details \[V6, the built-in files, bookkeeping\]. Used only with `engineer`.
    pub context: ContextOptions,
    /// What the engineer may design \[sizes 3–6, agents 2 and 3, hole ratio at most 0.4, at most
    /// 4 sizes, replay at most 0.5 (0 without a curriculum)\]. Used only with `engineer`.
    pub design_limits: DesignLimits,
    /// Round 0's configuration; absent: the curriculum's answer to an empty history, or with an
    /// engineer alone floe's round-0 default clamped into `design_limits` \[absent\].
    pub round0: Option<RoundConfig>,
    /// The reward \[`tiered` without partial credit (`prefix_credit` and `goal_credit` 0): an
    /// unreadable answer 0, an invalid plan 0.1, valid 0.6, optimal 1\]. It pays for validity
    /// and optimality and for nothing a policy could reach instead: with the partial credit a
    /// weak policy learned to wander legally and never arrive (docs/training-results.md, "A
    /// reward that cannot be gamed"); the shipped configurations that pin figures set the
    /// credit they were measured with. It must score verified plans: a reward that scores only
    /// steps is refused when the configuration's plugins are resolved.
    pub reward: PluginSpec,
}

impl Default for RoundsConfig {
    fn default() -> Self {
        RoundsConfig {
            rounds: 3,
            epochs: 2,
            samples: 1536,
            curriculum: Some(PluginSpec {
                name: "difficulty-scaling".into(),
                params: serde_json::json!({
                    "start_sizes": [3, 4, 5], "agents": [2, 3], "max_size": 6,
                    "entry_hole_ratio": 0.2, "entry_wait_ratio": 0.5
                }),
                library: None,
            }),
            engineer: None,
            context: ContextOptions::default(),
            design_limits: DesignLimits::default(),
            round0: None,
            reward: PluginSpec {
                name: "tiered".into(),
                params: serde_json::json!({"prefix_credit": 0.0, "goal_credit": 0.0}),
                library: None,
            },
        }
    }
}

/// The fixed validation set: every agent count × size, `per_cell` instances each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ValidationConfig {
    /// Map sizes \[3, 4, 5, 6\].
    pub sizes: Vec<u32>,
    /// Agent counts \[2, 3\].
    pub agents: Vec<u32>,
    /// Instances per cell \[100\].
    pub per_cell: usize,
    /// Hole ratio \[0.2\].
    pub hole_ratio: f64,
    /// Wait ratio \[0.5\].
    pub wait_ratio: f64,
    /// Seed, independent of the run's \[1\].
    pub seed: u64,
}

impl Default for ValidationConfig {
    fn default() -> Self {
        ValidationConfig {
            sizes: vec![3, 4, 5, 6],
            agents: vec![2, 3],
            per_cell: 100,
            hole_ratio: 0.2,
            wait_ratio: 0.5,
            seed: 1,
        }
    }
}

impl RoundsConfig {
    /// Checks what the protocol needs: a designer for every round after round 0, a valid round
    /// 0, a budget, and with an engineer its limits and context.
    ///
    /// # Errors
    /// [`RoundsError::Input`] naming the bad field.
    pub fn validate(&self) -> Result<(), RoundsError> {
        let bad = |m: String| Err(RoundsError::Input(m));
        if let Some(r0) = &self.round0 {
            r0.validate().map_err(|e| RoundsError::Input(format!("rounds.round0: {e}")))?;
        }
        if self.rounds > 0 && (self.epochs == 0 || self.samples == 0) {
            return bad("rounds: epochs and samples must be at least 1".into());
        }
        if self.rounds > 0 && self.curriculum.is_none() && self.engineer.is_none() {
            return bad("rounds: name a curriculum, an engineer, or both (both are null)".into());
        }
        let Some(e) = &self.engineer else { return Ok(()) };
        self.design_limits
            .validate()
            .map_err(|e| RoundsError::Input(format!("rounds.design_limits: {e}")))?;
        self.context.validate().map_err(|e| RoundsError::Input(format!("rounds.context: {e}")))?;
        self.context.check_reader(e).map_err(|e| RoundsError::Input(format!("rounds.{e}")))
    }
}

impl ValidationConfig {
    /// Checks that the set is not empty.
    ///
    /// # Errors
    /// [`RoundsError::Input`] naming the bad field.
    pub fn validate(&self) -> Result<(), RoundsError> {
        if self.sizes.is_empty() || self.agents.is_empty() || self.per_cell == 0 {
            return Err(RoundsError::Input(
                "validation: sizes, agents and per_cell must not be empty or 0".into(),
            ));
        }
        if self.agents.contains(&0) {
            return Err(RoundsError::Input("agent counts must be at least 1".into()));
        }
        Ok(())
    }
}
