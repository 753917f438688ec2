//! The GRPO update, in one place: rollouts, rewards, group-normalised advantages, the clipped
//! surrogate with a KL penalty to a frozen reference, loss aggregation, and the optimizer step.
//!
//! For a batch of prompts, each is answered `group_size` times by sampling at `temperature`.
//! The answers are verified in one batch and scored by the reward plugin
//! ([`crate::reward`]). Within each group of G answers to one prompt,
//!
//! ```text
//! A_i = (r_i − mean(r)) / (std(r) + adv_eps)     (scale_rewards = true; std with n − 1)
//! A_i =  r_i − mean(r)                           (scale_rewards = false, as Dr. GRPO)
//! ```
//!
//! and groups whose rewards are all equal carry no signal and are left out
//! (`skip_zero_variance`). Every answer token t of answer i then has, with
//! `ρ = exp(logp_new − logp_old)` and `δ = logp_ref − logp_new`,
//!
//! ```text
//! pg = −min(ρ·A_i, clip(ρ, 1 − clip_eps_low, 1 + clip_eps_high)·A_i)
//! kl = exp(δ) − δ − 1                                (the k3 estimator, ≥ 0)
//! ℓ  = pg + beta·kl
//! ```
//!
//! aggregated as (`loss_agg`): `grpo`: the mean over each answer's tokens, then over answers;
//! `dr_grpo`: the sum over all tokens divided by (answers × the batch's answer cap), a constant
//! length that does not favour short or long answers; `dapo`: the sum over all tokens divided
//! by the number of tokens. Log-probabilities are those of `softmax(logits / temperature)`, the
//! distribution that was sampled. `logp_old` is the policy that sampled (detached); with
//! `mu` > 1 the same rollouts are reused for `mu` optimizer steps, and the ratio then moves away
//! from 1 and the clip acts. Gradients are clipped to `max_grad_norm` before each AdamW step.

use floe_core::Instance;
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

use crate::error::TrainError;
use crate::model::{mean_entropy, target_log_probs, Policy, SeqBatch};
use crate::optim::AdamW;
use crate::tokens::sequence;

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
    /// AdamW learning rate \[5e-5\] (constant).
    pub lr: f64,
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
}

impl Default for GrpoConfig {
    fn default() -> Self {
        GrpoConfig {
            group_size: 8,
            prompts_per_step: 16,
            temperature: 1.0,
            lr: 5e-5,
            clip_eps_low: 0.2,
            clip_eps_high: 0.28,
            beta: 0.02,
            scale_rewards: true,
            adv_eps: 1e-4,
            loss_agg: LossAgg::Grpo,
            mu: 1,
            skip_zero_variance: true,
            max_grad_norm: 1.0,
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
        if !nonneg(self.beta) || !nonneg(self.max_grad_norm) {
            return bad("beta and max_grad_norm must be non-negative");
        }
        if !(nonneg(self.clip_eps_low) && self.clip_eps_low < 1.0 && nonneg(self.clip_eps_high)) {
            return bad("clip_eps_low must be in [0, 1) and clip_eps_high non-negative");
        }
        Ok(())
    }
}

/// Group-normalised advantages of `rewards` (consecutive groups of `group`), and for each group
/// whether it is kept (some reward differs, or `skip_zero_variance` is off).
#[must_use]
pub fn advantages(rewards: &[f32], group: usize, cfg: &GrpoConfig) -> (Vec<f32>, Vec<bool>) {
    let mut adv = Vec::with_capacity(rewards.len());
    let mut keep = Vec::new();
    for g in rewards.chunks(group) {
        let n = g.len() as f64;
        let mean = g.iter().map(|&r| f64::from(r)).sum::<f64>() / n;
        let var = g.iter().map(|&r| (f64::from(r) - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let std = var.sqrt();
        let flat = g.iter().all(|&r| r == g[0]);
        keep.push(!(flat && cfg.skip_zero_variance));
        for &r in g {
            let a = f64::from(r) - mean;
            adv.push(if cfg.scale_rewards { a / (std + cfg.adv_eps) } else { a } as f32);
        }
    }
    (adv, keep)
}

/// The loss and its parts (means over answer tokens, for logging).
#[derive(Debug)]
pub struct Loss {
    pub loss: Tensor,
    /// Mean policy-gradient term per token.
    pub pg: f64,
    /// Mean k3 KL per token (0 without a reference).
    pub kl: f64,
    /// Share of tokens whose ratio was clipped.
    pub clip_frac: f64,
}

/// The GRPO loss from per-token log-probabilities `[N, T]` (new with gradient; old and reference
/// detached), advantages `[N]` and the answer-token mask `[N, T]` (float). `norm_len` is the
/// constant length of `dr_grpo`.
#[must_use]
pub fn grpo_loss(
    new_logp: &Tensor,
    old_logp: &Tensor,
    ref_logp: Option<&Tensor>,
    adv: &Tensor,
    mask: &Tensor,
    norm_len: f64,
    cfg: &GrpoConfig,
) -> Loss {
    let a = adv.unsqueeze(-1);
    let ratio = (new_logp - old_logp).exp();
    let unclipped = &ratio * &a;
    let clipped = ratio.clamp(1.0 - cfg.clip_eps_low, 1.0 + cfg.clip_eps_high) * &a;
    let pg = -unclipped.minimum(&clipped);
    let kl = match ref_logp {
        Some(r) if cfg.beta > 0.0 => {
            let d = r - new_logp;
            d.exp() - &d - 1.0
        }
        _ => new_logp.zeros_like(),
    };
    let per_tok = (&pg + &kl * cfg.beta) * mask;
    let n = mask.size()[0] as f64;
    let loss = match cfg.loss_agg {
        LossAgg::Grpo => {
            let per_seq = per_tok.sum_dim_intlist(1, false, Kind::Float)
                / mask.sum_dim_intlist(1, false, Kind::Float).clamp_min(1.0);
            per_seq.mean(Kind::Float)
        }
        LossAgg::DrGrpo => per_tok.sum(Kind::Float) / (n * norm_len.max(1.0)),
        LossAgg::Dapo => per_tok.sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0),
    };
    let tokens = mask.sum(Kind::Float).double_value(&[]).max(1.0);
    let mean = |t: &Tensor| (t * mask).sum(Kind::Float).double_value(&[]) / tokens;
    let was_clipped = unclipped.gt_tensor(&clipped).to_kind(Kind::Float);
    Loss { pg: mean(&pg.detach()), kl: mean(&kl.detach()), clip_frac: mean(&was_clipped), loss }
}

/// What one GRPO step did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepStats {
    pub loss: f64,
    pub pg: f64,
    pub kl: f64,
    pub clip_frac: f64,
    pub entropy: f64,
    pub grad_norm: f64,
    /// Mean reward over every answer sampled.
    pub reward: f64,
    /// Share of sampled answers that are valid / optimal plans.
    pub valid: f64,
    pub optimal: f64,
    /// Groups kept and sampled.
    pub groups_kept: usize,
    pub groups: usize,
    /// Mean |advantage| over every answer.
    pub mean_abs_adv: f64,
}

/// Rollouts of one step, scored: the prompts' instances, answers (output tokens), rewards and
/// whether each answer was valid / optimal. Built by the caller, which owns sampling and
/// verification ([`crate::rounds`]).
#[derive(Debug)]
pub struct ScoredRollouts<'a> {
    /// One per answer: groups of `group_size` consecutive answers share an instance.
    pub instances: Vec<&'a Instance>,
    pub answers: Vec<Vec<i64>>,
    pub rewards: Vec<f32>,
    pub valid: Vec<bool>,
    pub optimal: Vec<bool>,
}

/// One GRPO update on scored rollouts: advantages, then `mu` optimizer steps on the kept groups.
///
/// # Errors
/// An instance the model cannot read.
pub fn update(
    policy: &Policy,
    reference: Option<&Policy>,
    opt: &mut AdamW,
    rollouts: &ScoredRollouts<'_>,
    cfg: &GrpoConfig,
) -> Result<StepStats, TrainError> {
    let g = cfg.group_size;
    let n = rollouts.answers.len();
    let (adv, keep) = advantages(&rollouts.rewards, g, cfg);
    let mut stats = StepStats {
        reward: rollouts.rewards.iter().map(|&r| f64::from(r)).sum::<f64>() / n.max(1) as f64,
        valid: rollouts.valid.iter().filter(|&&v| v).count() as f64 / n.max(1) as f64,
        optimal: rollouts.optimal.iter().filter(|&&v| v).count() as f64 / n.max(1) as f64,
        groups: keep.len(),
        groups_kept: keep.iter().filter(|&&k| k).count(),
        mean_abs_adv: adv.iter().map(|a| f64::from(a.abs())).sum::<f64>() / n.max(1) as f64,
        ..StepStats::default()
    };
    let rows: Vec<usize> = (0..n).filter(|&i| keep[i / g]).collect();
    if rows.is_empty() {
        return Ok(stats);
    }
    let layout = policy.config.layout;
    let seqs = rows
        .iter()
        .map(|&i| sequence(&layout, rollouts.instances[i], &rollouts.answers[i]))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<_> = seqs.iter().collect();
    let batch = SeqBatch::pack(&layout, &refs);
    let adv_t = Tensor::from_slice(&rows.iter().map(|&i| adv[i]).collect::<Vec<f32>>());
    let norm_len = rows.iter().map(|&i| layout.answer_cap(rollouts.instances[i])).max().unwrap_or(1) as f64;
    let ref_logp = match reference {
        Some(r) if cfg.beta > 0.0 => Some(tch::no_grad(|| {
            target_log_probs(&r.forward(&batch.features), &batch.targets, cfg.temperature).0
        })),
        _ => None,
    };
    let mut old_logp: Option<Tensor> = None;
    for it in 0..cfg.mu {
        let logits = policy.forward(&batch.features);
        let (new_logp, mask) = target_log_probs(&logits, &batch.targets, cfg.temperature);
        let old = old_logp.get_or_insert_with(|| new_logp.detach()).shallow_clone();
        let l = grpo_loss(&new_logp, &old, ref_logp.as_ref(), &adv_t, &mask, norm_len, cfg);
        opt.zero_grad();
        l.loss.backward();
        let norm = opt.clip_grad_norm(cfg.max_grad_norm);
        opt.step(cfg.lr);
        if it == 0 {
            stats.entropy = mean_entropy(&logits, &mask, cfg.temperature);
            stats.loss = l.loss.double_value(&[]);
            (stats.pg, stats.kl, stats.clip_frac, stats.grad_norm) = (l.pg, l.kl, l.clip_frac, norm);
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32], rows: i64) -> Tensor {
        Tensor::from_slice(v).reshape([rows, v.len() as i64 / rows])
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-5, "{a} != {b}");
    }

    #[test]
    fn advantages_by_hand() {
        let cfg = GrpoConfig { adv_eps: 1e-4, ..GrpoConfig::default() };
        // Group 1: rewards 1, 0, 0, 1 — mean 0.5, sample std sqrt(1/3).
        // Group 2: all 0.6 — no signal (advantages 0), skipped.
        let (a, keep) = advantages(&[1.0, 0.0, 0.0, 1.0, 0.6, 0.6, 0.6, 0.6], 4, &cfg);
        let s = (1.0f64 / 3.0).sqrt() + 1e-4;
        for (got, want) in a.iter().zip([0.5 / s, -0.5 / s, -0.5 / s, 0.5 / s, 0.0, 0.0, 0.0, 0.0]) {
            close(f64::from(*got), want);
        }
        assert_eq!(keep, vec![true, false]);
        let unscaled = GrpoConfig { scale_rewards: false, skip_zero_variance: false, ..cfg };
        let (a, keep) = advantages(&[0.2, 0.6, 1.0, 1.0], 2, &unscaled);
        for (got, want) in a.iter().zip([-0.2, 0.2, 0.0, 0.0]) {
            close(f64::from(*got), want);
        }
        assert_eq!(keep, vec![true, true]);
    }

    /// Two answers: answer 0 has 2 tokens, answer 1 has 1 token (its second position is
    /// padding). Advantages +1 and −2.
    fn case() -> (Tensor, Tensor, Tensor, Tensor, Tensor) {
        let r: f32 = 1.5;
        let new = t(&[r.ln(), 0.0, 0.5f32.ln(), 7.0], 2); // ratios 1.5, 1, 0.5 (pad ignored)
        let old = t(&[0.0, 0.0, 0.0, 0.0], 2);
        let refp = t(&[0.0, 0.0, 0.0, 0.0], 2);
        let adv = Tensor::from_slice(&[1.0f32, -2.0]);
        let mask = t(&[1.0, 1.0, 1.0, 0.0], 2);
        (new, old, refp, adv, mask)
    }

    #[test]
    fn clipped_objective_by_hand() {
        let (new, old, refp, adv, mask) = case();
        let cfg = GrpoConfig { beta: 0.0, clip_eps_low: 0.2, clip_eps_high: 0.3, ..GrpoConfig::default() };
        // Token (0,0): ratio 1.5, A = 1: min(1.5, clip 1.3) = 1.3 → pg −1.3 (clipped).
        // Token (0,1): ratio 1, A = 1 → pg −1.
        // Token (1,0): ratio 0.5, A = −2: min(−1, clip 0.8·−2 = −1.6) = −1.6 → pg 1.6 (clipped).
        let l = grpo_loss(&new, &old, Some(&refp), &adv, &mask, 4.0, &cfg);
        // grpo: answer 0 mean (−1.3 − 1)/2 = −1.15, answer 1: 1.6; mean 0.225.
        close(l.loss.double_value(&[]), 0.225);
        close(l.clip_frac, 2.0 / 3.0);
        close(l.pg, (-1.3 - 1.0 + 1.6) / 3.0);
        let dapo = GrpoConfig { loss_agg: LossAgg::Dapo, ..cfg.clone() };
        close(grpo_loss(&new, &old, None, &adv, &mask, 4.0, &dapo).loss.double_value(&[]), -0.7 / 3.0);
        let dr = GrpoConfig { loss_agg: LossAgg::DrGrpo, ..cfg };
        close(grpo_loss(&new, &old, None, &adv, &mask, 4.0, &dr).loss.double_value(&[]), -0.7 / (2.0 * 4.0));
    }

    #[test]
    fn k3_kl_by_hand_and_its_gradient() {
        let (new, old, refp, adv, mask) = case();
        let new = new.set_requires_grad(true);
        let cfg = GrpoConfig { beta: 0.5, clip_eps_low: 0.2, clip_eps_high: 0.3, ..GrpoConfig::default() };
        let l = grpo_loss(&new, &old, Some(&refp), &adv, &mask, 4.0, &cfg);
        // δ = ref − new: −ln 1.5, 0, ln 2; k3 = e^δ − δ − 1.
        let k3 = |d: f64| d.exp() - d - 1.0;
        let kls = [k3(-(1.5f64.ln())), 0.0, k3(2f64.ln())];
        close(l.kl, kls.iter().sum::<f64>() / 3.0);
        let want = ((-1.3 + 0.5 * kls[0] + -1.0 + 0.5 * kls[1]) / 2.0 + (1.6 + 0.5 * kls[2])) / 2.0;
        close(l.loss.double_value(&[]), want);
        // Gradient at token (0,1): unclipped pg = −ρ·A with ρ = e^(new − old) → ∂/∂new = −1 at
        // ρ = 1; KL: ∂(e^(ref−new) + new)/∂new = 1 − e^(ref−new) = 0; averaged over 2 tokens and
        // 2 answers → −0.25. Token (0,0) is clipped: only the KL part, 0.5·(1 − 1/1.5)/4.
        l.loss.backward();
        let g = new.grad();
        close(g.double_value(&[0, 1]), -0.25);
        close(g.double_value(&[0, 0]), 0.5 * (1.0 - 1.0 / 1.5) / 4.0);
        close(g.double_value(&[1, 1]), 0.0);
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(GrpoConfig { group_size: 1, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { clip_eps_low: 1.0, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { beta: -0.1, ..GrpoConfig::default() }.validate().is_err());
        GrpoConfig::default().validate().unwrap();
        let json = r#"{"loss_agg": "dr_grpo", "beta": 0}"#;
        let c: GrpoConfig = serde_json::from_str(json).unwrap();
        assert_eq!((c.loss_agg, c.beta, c.group_size), (LossAgg::DrGrpo, 0.0, 8));
        assert!(serde_json::from_str::<GrpoConfig>(r#"{"betta": 0}"#).is_err());
    }
}
