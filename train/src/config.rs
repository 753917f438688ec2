//! The run's configuration: one serde document with a documented default for every field
//! (`floe train --print-config` prints it). Unknown fields are rejected, so a misspelt knob is
//! an error rather than a silent default.
//!
//! The defaults are scaled so that `floe train` finishes in about 17 minutes on an idle 2-core
//! CPU (`configs/demo.json` cuts them for the 15-minute demo):
//! a 0.8 M-parameter transformer, a supervised warm start on 20,000 optimal plans (2 and 3
//! agents on 3×3 to 5×5 maps), then 3 GRPO rounds of 2 epochs over 1,536 prompts each (the
//! paper: 4,000 samples a round on a 4 B-parameter model), each followed by a validation on a
//! fixed set and the curriculum's next configuration.

use floe_plugin_api::{RoundConfig, SizeConfig};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::grpo::GrpoConfig;
use crate::model::ModelConfig;
use crate::optim::AdamConfig;
use crate::reward::PluginSpec;

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Seed of every random choice (initial weights, data, batches, sampling) \[0\]. A run is
    /// reproducible on one machine with one thread count.
    pub seed: u64,
    /// libtorch CPU threads; 0 = every core \[0\].
    pub threads: usize,
    /// The network \[see [`ModelConfig`]\].
    pub model: ModelConfig,
    /// AdamW, for both phases \[see [`AdamConfig`]\].
    pub adam: AdamConfig,
    /// The supervised warm start.
    pub warm_start: WarmStartConfig,
    /// The GRPO update \[see [`GrpoConfig`]\].
    pub grpo: GrpoConfig,
    /// The rounds of the loop.
    pub rounds: RoundsConfig,
    /// The fixed validation set.
    pub validation: ValidationConfig,
    /// Sequences decoded together in evaluation \[256\].
    pub eval_batch: usize,
    /// Start from this checkpoint's weights (e.g. another run's `reference.safetensors`, with the
    /// same model configuration) instead of a random initialisation \[absent\].
    pub init_checkpoint: Option<std::path::PathBuf>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            seed: 0,
            threads: 0,
            model: ModelConfig::default(),
            adam: AdamConfig::default(),
            warm_start: WarmStartConfig::default(),
            grpo: GrpoConfig::default(),
            rounds: RoundsConfig::default(),
            validation: ValidationConfig::default(),
            eval_batch: 256,
            init_checkpoint: None,
        }
    }
}

/// The supervised warm start (teacher forcing on the generator's CBS-optimal plans), standing in
/// for the paper's pretrained language model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WarmStartConfig {
    /// Training instances, generated once \[20000\].
    pub samples: usize,
    /// Their generator configuration \[sizes 3, 4, 5 with equal shares, wait ratio 0.5, hole
    /// ratio 0.2 (0.1 on 3×3, one hole: two holes on a 3×3 map make many candidates unsolvable,
    /// which slows the generator down about fiftyfold); 2 and 3 agents\].
    pub data: RoundConfig,
    /// Optimizer steps \[2000\]; 0 skips the warm start.
    pub steps: usize,
    /// Sequences per step \[64\].
    pub batch_size: usize,
    /// Peak learning rate \[1e-3\]: linear warm-up, then a cosine decay to a tenth of it.
    pub lr: f64,
    /// Warm-up steps \[100\].
    pub warmup_steps: usize,
    /// Gradient clipping by global norm \[1.0\]; 0 turns it off.
    pub max_grad_norm: f64,
    /// Validate every this many steps during the warm start too; 0: only at its end \[0\].
    pub eval_every: usize,
}

impl Default for WarmStartConfig {
    fn default() -> Self {
        WarmStartConfig {
            samples: 20_000,
            data: RoundConfig {
                sizes: (3..=5)
                    .map(|size| SizeConfig {
                        size,
                        data_ratio: 1.0 / 3.0,
                        hole_ratio: if size == 3 { 0.1 } else { 0.2 },
                        wait_ratio: 0.5,
                    })
                    .collect(),
                agents: vec![2, 3],
                replay_fraction: 0.0,
            },
            steps: 2000,
            batch_size: 64,
            lr: 1e-3,
            warmup_steps: 100,
            max_grad_norm: 1.0,
            eval_every: 0,
        }
    }
}

impl WarmStartConfig {
    /// The learning rate at step `step` (0-based).
    #[must_use]
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let p = ((step - self.warmup_steps) as f64 / span).min(1.0);
        self.lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()))
    }
}

/// The rounds: per round, a training set from the curriculum's configuration, `epochs` passes of
/// GRPO over it, a validation, and the next configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundsConfig {
    /// Rounds \[3\]; 0 = warm start only.
    pub rounds: u32,
    /// Passes over the round's training set \[2\].
    pub epochs: u32,
    /// Training prompts generated per round, shared among map sizes by `data_ratio` \[1536\].
    pub samples: usize,
    /// The curriculum \[`difficulty-scaling`, starting on sizes 3–5 with 2 and 3 agents at hole
    /// ratio 0.2 and wait ratio 0.5 (the validation set's), growing up to size 6\].
    pub curriculum: PluginSpec,
    /// Round 0's configuration; absent: the curriculum's answer to an empty history \[absent\].
    pub round0: Option<RoundConfig>,
    /// The reward \[`tiered` with `prefix_credit` and `goal_credit` 0.2: an invalid plan earns
    /// 0.1 plus up to 0.4 for its legal prefix and agents on goal; valid 0.6, optimal 1\].
    pub reward: PluginSpec,
}

impl Default for RoundsConfig {
    fn default() -> Self {
        RoundsConfig {
            rounds: 3,
            epochs: 2,
            samples: 1536,
            curriculum: PluginSpec {
                name: "difficulty-scaling".into(),
                params: serde_json::json!({
                    "start_sizes": [3, 4, 5], "agents": [2, 3], "max_size": 6,
                    "entry_hole_ratio": 0.2, "entry_wait_ratio": 0.5
                }),
                library: None,
            },
            round0: None,
            reward: PluginSpec {
                name: "tiered".into(),
                params: serde_json::json!({"prefix_credit": 0.2, "goal_credit": 0.2}),
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

impl TrainConfig {
    /// Checks every part.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the bad field.
    pub fn validate(&self) -> Result<(), TrainError> {
        self.model.validate()?;
        self.grpo.validate()?;
        let bad = |m: String| Err(TrainError::Input(m));
        let w = &self.warm_start;
        if w.steps > 0 {
            w.data.validate().map_err(|e| TrainError::Input(format!("warm_start.data: {e}")))?;
            if w.samples == 0 || w.batch_size == 0 {
                return bad("warm_start: samples and batch_size must be at least 1".into());
            }
            if !(w.lr.is_finite() && w.lr > 0.0) {
                return bad("warm_start: lr must be positive".into());
            }
        }
        if let Some(r0) = &self.rounds.round0 {
            r0.validate().map_err(|e| TrainError::Input(format!("rounds.round0: {e}")))?;
        }
        if self.rounds.rounds > 0 && (self.rounds.epochs == 0 || self.rounds.samples == 0) {
            return bad("rounds: epochs and samples must be at least 1".into());
        }
        let v = &self.validation;
        if v.sizes.is_empty() || v.agents.is_empty() || v.per_cell == 0 {
            return bad("validation: sizes, agents and per_cell must not be empty or 0".into());
        }
        let l = &self.model.layout;
        let sizes = v.sizes.iter().chain(w.data.sizes.iter().map(|s| &s.size));
        if let Some(s) = sizes.into_iter().find(|&&s| s > l.max_side) {
            return bad(format!("map size {s} is larger than model.layout.max_side {}", l.max_side));
        }
        let agents = v.agents.iter().chain(&w.data.agents);
        if let Some(k) = agents.into_iter().find(|&&k| k > l.max_agents) {
            return bad(format!("{k} agents are more than model.layout.max_agents {}", l.max_agents));
        }
        if self.eval_batch == 0 {
            return bad("eval_batch must be at least 1".into());
        }
        Ok(())
    }

    /// Parses and validates a configuration (JSON; absent fields take their defaults).
    ///
    /// # Errors
    /// Malformed JSON, unknown fields, or what [`TrainConfig::validate`] finds.
    pub fn from_json(text: &str) -> Result<Self, TrainError> {
        let c: TrainConfig = serde_json::from_str(text).map_err(|e| TrainError::Input(e.to_string()))?;
        c.validate()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_round_trip_and_reject_typos() {
        let d = TrainConfig::default();
        d.validate().unwrap();
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(TrainConfig::from_json(&json).unwrap(), d);
        assert_eq!(TrainConfig::from_json("{}").unwrap(), d);
        assert!(TrainConfig::from_json(r#"{"grpo": {"group_sise": 4}}"#).is_err());
        let big = r#"{"validation": {"sizes": [12]}}"#;
        assert!(TrainConfig::from_json(big).unwrap_err().to_string().contains("max_side"));
    }

    #[test]
    fn the_learning_rate_warms_up_then_decays_to_a_tenth() {
        let w = WarmStartConfig { lr: 1.0, warmup_steps: 10, steps: 110, ..WarmStartConfig::default() };
        assert!((w.lr_at(0) - 0.1).abs() < 1e-12);
        assert!((w.lr_at(9) - 1.0).abs() < 1e-12);
        assert!((w.lr_at(10) - 1.0).abs() < 1e-12);
        assert!((w.lr_at(60) - 0.55).abs() < 1e-12);
        assert!((w.lr_at(110) - 0.1).abs() < 1e-12);
    }
}
