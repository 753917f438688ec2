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
pub use floe_rounds::{RoundsConfig, ValidationConfig};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::model::ModelConfig;
use crate::optim::AdamConfig;

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
            seed: floe_rounds::data::DEFAULT_SEED,
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
        self.rounds.validate()?;
        self.validate_design()?;
        self.validation.validate()?;
        let v = &self.validation;
        let l = &self.model.layout;
        let sizes = v.sizes.iter().chain(w.data.sizes.iter().map(|s| &s.size));
        if let Some(s) = sizes.into_iter().find(|&&s| s > l.max_side) {
            return bad(format!("map size {s} is larger than model.layout.max_side {}", l.max_side));
        }
        if v.agents.iter().chain(&w.data.agents).any(|&k| k == 0) {
            return bad("agent counts must be at least 1".into());
        }
        if self.eval_batch == 0 {
            return bad("eval_batch must be at least 1".into());
        }
        Ok(())
    }

    fn validate_design(&self) -> Result<(), TrainError> {
        let r = &self.rounds;
        if r.engineer.is_some() && r.design_limits.max_size > self.model.layout.max_side {
            return Err(TrainError::Input(format!(
                "rounds.design_limits.max_size {} is larger than model.layout.max_side {}",
                r.design_limits.max_size, self.model.layout.max_side
            )));
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

// ---- The GRPO update's knobs (the update itself is in `grpo.rs`) ----

/// How per-token losses are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAgg {
    /// Per answer, the mean over its tokens; then the mean over answers (the GRPO paper).
    Grpo,
    /// The sum over tokens over (answers × a constant length) (Dr. GRPO).
    DrGrpo,
    /// The mean over all tokens of the batch (DAPO's token-level loss).
    Dapo,
}

/// Every knob of the GRPO update (serde; defaults in brackets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpoConfig {
    /// Answers sampled per prompt, G \[8\].
    pub group_size: usize,
    /// Prompts per step \[16\] (so 128 answers a step).
    pub prompts_per_step: usize,
    /// Sampling temperature \[1.0\].
    pub temperature: f64,
    /// AdamW learning rate \[5e-5\]: constant, or the start of a cosine decay (`min_lr_ratio`).
    pub lr: f64,
    /// Cosine decay of the learning rate over the run's GRPO rounds down to this fraction of `lr`
    /// \[1: constant\]. The decay follows the share of the run's prompts drawn before a step
    /// (rounds × epochs × the round's prompts), not the step count, which dynamic sampling
    /// makes unknown in advance.
    pub min_lr_ratio: f64,
    /// Lower clip range ε_low \[0.2\].
    pub clip_eps_low: f64,
    /// Upper clip range ε_high \[0.28\] (DAPO's clip-higher; set equal to ε_low for the symmetric
    /// clip).
    pub clip_eps_high: f64,
    /// Weight β of the KL penalty to the reference \[0.02\]; 0 turns it (and the reference's
    /// forward pass) off.
    pub beta: f64,
    /// Divide advantages by the group's standard deviation \[true\].
    pub scale_rewards: bool,
    /// Added to the standard deviation \[1e-4\].
    pub adv_eps: f64,
    /// Loss aggregation \[`grpo`\].
    pub loss_agg: LossAgg,
    /// Optimizer steps per batch of rollouts, μ \[1\].
    pub mu: usize,
    /// Leave out groups whose rewards are all equal \[true\].
    pub skip_zero_variance: bool,
    /// Gradient clipping by global norm \[1.0\]; 0 turns it off.
    pub max_grad_norm: f64,
    /// Weight λ of a supervised term added to the loss \[0\]: the mean cross-entropy per answer
    /// token of the step's prompts' CBS-optimal plans (teacher forcing, at temperature 1), so the
    /// loss is `ℓ_GRPO + λ·CE`. 0 turns it (and its forward pass) off: pure GRPO.
    pub sft_coef: f64,
    /// Credit a failed answer's legal prefix \[false\]: an answer with a negative advantage whose
    /// failure the verifier located at time step t (out of bounds, illegal move, hole, vertex or
    /// edge conflict) is not pushed down on its moves of steps 1..t−1, which were legal for every
    /// agent; its penalty falls on the moves from step t on and the separators and end (and the
    /// `grpo` aggregation averages over those tokens only). Unlocated failures (parse errors,
    /// wrong agent count, goal not reached) are blamed whole.
    pub blame_failure: bool,
    /// DAPO's dynamic sampling \[false\]: draw more prompts from the round's pool until the step
    /// has `prompts_per_step` groups whose rewards are not all equal (see [`crate::grpo::draw_groups`]). Off:
    /// a step samples exactly `prompts_per_step` prompts, some of whose groups may be flat.
    pub dynamic_sampling: bool,
    /// With `dynamic_sampling`, the most generation batches one step may sample, the first
    /// included \[4\]; 0: no bound but the round's prompts (verl's `max_num_gen_batches`).
    pub max_num_gen_batches: usize,
    /// PODS's max-variance down-sampling \[0: off\]: of each group's `group_size` answers the
    /// update trains on only this many, the subset whose rewards vary most (see
    /// [`crate::grpo::max_variance_subset`]), and normalises advantages within that subset. Sampling is
    /// cheaper than updating, so this buys more prompts per second. 0, or `group_size`: every
    /// answer.
    pub keep_per_group: usize,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        GrpoConfig {
            group_size: 8,
            prompts_per_step: 16,
            temperature: 1.0,
            lr: 5e-5,
            min_lr_ratio: 1.0,
            clip_eps_low: 0.2,
            clip_eps_high: 0.28,
            beta: 0.02,
            scale_rewards: true,
            adv_eps: 1e-4,
            loss_agg: LossAgg::Grpo,
            mu: 1,
            skip_zero_variance: true,
            max_grad_norm: 1.0,
            sft_coef: 0.0,
            blame_failure: false,
            dynamic_sampling: false,
            max_num_gen_batches: 4,
            keep_per_group: 0,
        }
    }
}

impl GrpoConfig {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the field.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |m: &str| Err(TrainError::Input(format!("grpo: {m}")));
        if self.group_size < 2 {
            return bad("group_size must be at least 2 (advantages compare answers within a group)");
        }
        if self.prompts_per_step == 0 || self.mu == 0 {
            return bad("prompts_per_step and mu must be at least 1");
        }
        let pos = |v: f64| v.is_finite() && v > 0.0;
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        if !pos(self.temperature) || !pos(self.lr) || !pos(self.adv_eps) {
            return bad("temperature, lr and adv_eps must be positive");
        }
        if !nonneg(self.beta) || !nonneg(self.max_grad_norm) || !nonneg(self.sft_coef) {
            return bad("beta, max_grad_norm and sft_coef must be non-negative");
        }
        if !(nonneg(self.clip_eps_low) && self.clip_eps_low < 1.0 && nonneg(self.clip_eps_high)) {
            return bad("clip_eps_low must be in [0, 1) and clip_eps_high non-negative");
        }
        if !(self.min_lr_ratio.is_finite() && (0.0..=1.0).contains(&self.min_lr_ratio)) {
            return bad("min_lr_ratio must be in [0, 1]");
        }
        if self.keep_per_group == 1 || self.keep_per_group > self.group_size {
            return bad("keep_per_group must be 0 (every answer) or between 2 and group_size");
        }
        Ok(())
    }

    /// The learning rate after `progress` (0 to 1) of the run's GRPO prompts: `lr` decaying along
    /// a half cosine to `lr · min_lr_ratio`.
    #[must_use]
    pub fn lr_at(&self, progress: f64) -> f64 {
        let p = progress.clamp(0.0, 1.0);
        let r = self.min_lr_ratio;
        self.lr * (r + (1.0 - r) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()))
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
