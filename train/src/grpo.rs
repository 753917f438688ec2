//! The GRPO update, in one place: on scored rollouts (sampled and scored by the round,
//! `run/rollouts.rs`), group-normalised advantages, the clipped surrogate with a KL penalty to a
//! frozen reference, loss aggregation, and the optimizer step.
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
//!
//! With `sft_coef` λ > 0 the step's loss is `ℓ_GRPO + λ·CE`, where CE is the mean cross-entropy
//! per answer token of the step's prompts' CBS-optimal plans (teacher forcing at temperature 1,
//! each prompt once): a hybrid of GRPO and supervised training on the same prompts. λ = 0 is
//! pure GRPO.
//!
//! With `dynamic_sampling` (DAPO's dynamic sampling; verl's `filter_groups`) a step whose groups
//! fall short of `prompts_per_step` groups with a reward spread draws more prompts from the
//! round's pool and samples their groups, until it has `prompts_per_step` such groups, the pool
//! is used up, or it has generated `max_num_gen_batches` batches ([`draw_groups`]). The step
//! then trains on the first `prompts_per_step` groups with a spread; surplus ones are dropped,
//! and a step that still falls short is filled up with flat groups (which only the supervised
//! term uses). Prompts drawn are used up, so a round takes fewer, fuller steps.

use floe_core::Instance;
use serde::Serialize;
use tch::{Kind, Tensor};

pub use crate::config::{GrpoConfig, LossAgg};
use crate::error::TrainError;
use crate::model::{mean_entropy, target_log_probs, Policy, SeqBatch};
use crate::optim::{sum_grads, AdamW};
use crate::tokens::{answer, optimal_moves, sequence, Sequence, OUT_SEP};
use crate::workers::{run_jobs, Task, Workers};

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

/// The positions of the `m` rewards whose variance is largest (PODS's max-variance
/// down-sampling; Xu et al. 2025, "Not All Rollouts are Useful"), ascending. Such a subset is
/// always the `k` largest and the `m − k` smallest rewards for some `k`, so this sorts once and
/// tries every `k`. Ties: rewards are ordered by value then position, and the smallest `k`
/// with the largest variance wins. `m ≥ rewards.len()` keeps them all.
#[must_use]
pub fn max_variance_subset(rewards: &[f32], m: usize) -> Vec<usize> {
    let n = rewards.len();
    if m >= n {
        return (0..n).collect();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| rewards[a].total_cmp(&rewards[b]).then(a.cmp(&b)));
    let spread = |k: usize| {
        let picked = order[..m - k].iter().chain(&order[n - k..]);
        let v: Vec<f64> = picked.map(|&i| f64::from(rewards[i])).collect();
        let mean = v.iter().sum::<f64>() / m as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
    };
    let mut best = 0;
    let mut best_spread = spread(0);
    for k in 1..=m {
        let s = spread(k);
        if s > best_spread {
            (best, best_spread) = (k, s);
        }
    }
    let mut out: Vec<usize> = order[..m - best].iter().chain(&order[n - best..]).copied().collect();
    out.sort_unstable();
    out
}

/// Whether a group's rewards are not all equal (it carries a learning signal).
#[must_use]
pub fn has_spread(rewards: &[f32]) -> bool {
    rewards.iter().any(|&r| r != rewards[0])
}

/// The groups one step trains on: see [`draw_groups`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepDraw {
    /// Prompts taken from the front of the pool (all sampled).
    pub drawn: usize,
    /// Generation batches sampled.
    pub batches: usize,
    /// The groups the step trains on, as positions among the drawn prompts, in draw order.
    pub used: Vec<usize>,
}

/// Chooses one step's groups from the front of a pool of `pool_len` prompts. `sample(range)`
/// samples the groups of the pool's prompts in `range` and tells for each whether it has a
/// reward spread ([`has_spread`]).
///
/// Without `dynamic_sampling`: one batch of the first `prompts_per_step` prompts, all used. With
/// it: after each batch, while fewer than `prompts_per_step` groups have a spread, the pool has
/// prompts left and `max_num_gen_batches` (0: no bound) is not reached, another batch of
/// prompts is sampled: as many as the missing groups need at the spread rate seen so far in this
/// step (all `prompts_per_step` while none had one). The step uses the first `prompts_per_step`
/// groups with a spread; short of that, the earliest flat groups fill it up to
/// `prompts_per_step`.
///
/// # Errors
/// Those of `sample`.
pub fn draw_groups<E>(
    pool_len: usize,
    cfg: &GrpoConfig,
    mut sample: impl FnMut(std::ops::Range<usize>) -> Result<Vec<bool>, E>,
) -> Result<StepDraw, E> {
    let want = cfg.prompts_per_step;
    let first = want.min(pool_len);
    let mut spread = sample(0..first)?;
    let mut batches = 1;
    if !cfg.dynamic_sampling {
        return Ok(StepDraw { drawn: first, batches, used: (0..first).collect() });
    }
    loop {
        let kept = spread.iter().filter(|&&s| s).count();
        let drawn = spread.len();
        let bound = cfg.max_num_gen_batches > 0 && batches >= cfg.max_num_gen_batches;
        if kept >= want || drawn == pool_len || bound {
            break;
        }
        let n = if kept == 0 { want } else { ((want - kept) * drawn).div_ceil(kept).min(want) };
        let n = n.min(pool_len - drawn);
        spread.extend(sample(drawn..drawn + n)?);
        batches += 1;
    }
    let mut used: Vec<usize> = (0..spread.len()).filter(|&i| spread[i]).take(want).collect();
    let fill = want.min(spread.len()).saturating_sub(used.len());
    used.extend((0..spread.len()).filter(|&i| !spread[i]).take(fill));
    used.sort_unstable();
    Ok(StepDraw { drawn: spread.len(), batches, used })
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
    let whole = Whole { answers: mask.size()[0] as f64, tokens: mask.sum(Kind::Float).double_value(&[]) };
    grpo_loss_part(new_logp, old_logp, ref_logp, adv, mask, norm_len, whole, cfg)
}

/// [`grpo_loss`] of one part of a batch: its loss is the part's share of the whole batch's, so
/// the parts' losses add up to the whole's (and so do their gradients). The logged means are
/// the part's own.
#[must_use]
#[allow(clippy::too_many_arguments)]
pub fn grpo_loss_part(
    new_logp: &Tensor,
    old_logp: &Tensor,
    ref_logp: Option<&Tensor>,
    adv: &Tensor,
    mask: &Tensor,
    norm_len: f64,
    whole: Whole,
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
    let loss = match cfg.loss_agg {
        LossAgg::Grpo => {
            let per_seq = per_tok.sum_dim_intlist(1, false, Kind::Float)
                / mask.sum_dim_intlist(1, false, Kind::Float).clamp_min(1.0);
            per_seq.sum(Kind::Float) / whole.answers.max(1.0)
        }
        LossAgg::DrGrpo => per_tok.sum(Kind::Float) / (whole.answers.max(1.0) * norm_len.max(1.0)),
        LossAgg::Dapo => per_tok.sum(Kind::Float) / whole.tokens.max(1.0),
    };
    let tokens = mask.sum(Kind::Float).double_value(&[]).max(1.0);
    let mean = |t: &Tensor| (t * mask).sum(Kind::Float).double_value(&[]) / tokens;
    let was_clipped = unclipped.gt_tensor(&clipped).to_kind(Kind::Float);
    Loss { pg: mean(&pg.detach()), kl: mean(&kl.detach()), clip_frac: mean(&was_clipped), loss }
}

/// The size of a whole update's batch, which the losses of its parts are divided by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Whole {
    /// Answers trained on.
    pub answers: f64,
    /// Answer tokens counted by the loss.
    pub tokens: f64,
}

/// The supervised term: the mean cross-entropy (nats) per target token of `logits` `[B, L, V]`
/// against `targets` `[B, L]` (`-1` where there is none), at temperature 1.
pub fn supervised_ce(logits: &Tensor, targets: &Tensor) -> Tensor {
    let (lp, mask) = target_log_probs(logits, targets, 1.0);
    -lp.sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0)
}

/// Per answer token (output indices), whether a negative advantage applies to it under
/// [`GrpoConfig::blame_failure`]: every token except the moves of time steps `1..=legal` (each
/// agent's j-th move is its step j; separators and the end are always blamed).
#[must_use]
pub fn blamed(answer: &[i64], legal: u32) -> Vec<bool> {
    let mut step = 0u32;
    answer
        .iter()
        .map(|&o| {
            if o < OUT_SEP {
                step += 1;
                step > legal
            } else {
                step = 0;
                true
            }
        })
        .collect()
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
    /// Mean |advantage| over every answer, or with `keep_per_group` over the answers kept.
    pub mean_abs_adv: f64,
    /// Mean cross-entropy per token of the prompts' optimal plans (0 when `sft_coef` is 0).
    pub sft_ce: f64,
    /// Per answer (in the rollouts' order), the advantage the update computed for it: `None` for
    /// an answer it did not train on (left out by `keep_per_group`, or in a flat group that was
    /// skipped). The trainer's per-size log reads these; advantages are computed only here.
    #[serde(skip)]
    pub advantages: Vec<Option<f32>>,
}

/// Rollouts of one step, scored: the prompts' instances, answers (output tokens), rewards and
/// whether each answer was valid / optimal. Built by the caller, which owns sampling and
/// verification (the round's rollouts, `run/rollouts.rs`).
#[derive(Debug)]
pub struct ScoredRollouts<'a> {
    /// One per answer: groups of `group_size` consecutive answers share an instance.
    pub instances: Vec<&'a Instance>,
    pub answers: Vec<Vec<i64>>,
    pub rewards: Vec<f32>,
    pub valid: Vec<bool>,
    pub optimal: Vec<bool>,
    /// Per answer, the time steps before its located failure (0 when valid or not located):
    /// see [`GrpoConfig::blame_failure`] and [`crate::reward::located_legal_steps`].
    pub legal_steps: Vec<u32>,
}

/// Most answers in one part of an update's batch.
const PART_ROWS: usize = 32;

/// One part of an update's batch: its answers packed, their advantages `[n]`, the reference's
/// log-probabilities, the blame weights, and the log-probabilities before the first step.
struct Part {
    batch: SeqBatch,
    adv: Tensor,
    ref_logp: Option<Tensor>,
    blame: Option<Tensor>,
    old_logp: Option<Tensor>,
}

/// What one job of an update's step computes: a part of the batch, or the supervised term.
enum Work {
    Part(Part),
    Sft(SeqBatch),
}

/// A job's answer: its work back (a part with its reference and first log-probabilities
/// kept), its loss, its token-weighted sums of the logged means at the first step (pg, kl,
/// clip fraction, entropy, their token counts), and the gradient of its loss per variable.
struct Done {
    work: Work,
    loss: f64,
    logged: [f64; 6],
    grads: Vec<Tensor>,
}

impl Work {
    fn run(
        mut self,
        policy: &Policy,
        reference: Option<&Policy>,
        cfg: &GrpoConfig,
        whole: Whole,
        norm_len: f64,
        first: bool,
    ) -> Done {
        let vars = policy.variables();
        let mut logged = [0.0; 6];
        let loss = match &mut self {
            Work::Part(part) => {
                let b = &part.batch;
                if let (Some(rp), None) = (reference.filter(|_| cfg.beta > 0.0), &part.ref_logp) {
                    part.ref_logp = Some(tch::no_grad(|| {
                        target_log_probs(&rp.forward(b), &b.targets, cfg.temperature).0
                    }));
                }
                let logits = policy.forward(b);
                let (new_logp, mask) = target_log_probs(&logits, &b.targets, cfg.temperature);
                let old = part.old_logp.get_or_insert_with(|| new_logp.detach()).shallow_clone();
                let loss_mask = match &part.blame {
                    Some(w) => &mask * w,
                    None => mask.shallow_clone(),
                };
                let l = grpo_loss_part(
                    &new_logp,
                    &old,
                    part.ref_logp.as_ref(),
                    &part.adv,
                    &loss_mask,
                    norm_len,
                    whole,
                    cfg,
                );
                if first {
                    let n = loss_mask.sum(Kind::Float).double_value(&[]);
                    let n_ent = mask.sum(Kind::Float).double_value(&[]);
                    let ent = mean_entropy(&logits, &mask, cfg.temperature) * n_ent;
                    logged = [l.pg * n, l.kl * n, l.clip_frac * n, ent, n, n_ent];
                }
                l.loss
            }
            Work::Sft(b) => supervised_ce(&policy.forward(b), &b.targets) * cfg.sft_coef,
        };
        let grads = Tensor::run_backward(&[&loss], &vars, false, false);
        Done { work: self, loss: loss.double_value(&[]), logged, grads }
    }
}

/// One GRPO update on scored rollouts: advantages, then `mu` optimizer steps on the kept groups
/// at learning rate `lr` (the schedule's, [`GrpoConfig::lr_at`]).
///
/// # Errors
/// An instance the model cannot read.
pub fn update(
    policy: &Policy,
    reference: Option<&Policy>,
    opt: &mut AdamW,
    rollouts: &ScoredRollouts<'_>,
    cfg: &GrpoConfig,
    lr: f64,
    workers: Option<&Workers>,
) -> Result<StepStats, TrainError> {
    let (mut stats, picked) = pick(rollouts, cfg);
    let layout = policy.config.layout;
    // The supervised term's batch: each prompt's optimal plan, once.
    let sft_batch = if cfg.sft_coef > 0.0 {
        let seqs = rollouts
            .instances
            .iter()
            .step_by(cfg.group_size)
            .map(|inst| sequence(&layout, inst, &answer(inst, &optimal_moves(inst)?)))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<_> = seqs.iter().collect();
        Some(SeqBatch::pack(&layout, &refs))
    } else {
        None
    };
    if picked.is_empty() && sft_batch.is_none() {
        return Ok(stats);
    }
    let parts = parts(&layout, rollouts, &picked, cfg)?;
    let whole = Whole {
        answers: picked.len() as f64,
        tokens: parts
            .iter()
            .map(|p| {
                let mask = p.batch.targets.ge(0).to_kind(Kind::Float);
                let mask = match &p.blame {
                    Some(w) => mask * w,
                    None => mask,
                };
                mask.sum(Kind::Float).double_value(&[])
            })
            .sum(),
    };
    let norm_len =
        picked.iter().map(|&(i, _)| layout.answer_cap(rollouts.instances[i])).max().unwrap_or(1) as f64;
    let mut works: Vec<Work> = parts.into_iter().map(Work::Part).collect();
    works.extend(sft_batch.map(Work::Sft));
    // The jobs run on worker threads and own what they read: one copy of the knobs, shared.
    let shared = std::sync::Arc::new(cfg.clone());
    for it in 0..cfg.mu {
        let first = it == 0;
        // Each part (and the supervised term) runs on a worker, or here in order; the
        // gradients add up in that order.
        let jobs: Vec<Task<Done>> = works
            .drain(..)
            .map(|work| {
                let (p, r, cfg) =
                    (policy.handle(), reference.map(Policy::handle), std::sync::Arc::clone(&shared));
                let job: Task<Done> =
                    Box::new(move || work.run(&p, r.as_ref(), &cfg, whole, norm_len, first));
                job
            })
            .collect();
        let done = run_jobs(workers, jobs);
        if first {
            log_first_step(&mut stats, &done, cfg);
        }
        let mut grads = Vec::with_capacity(done.len());
        for d in done {
            grads.push(d.grads);
            works.push(d.work);
        }
        let mut grads = tch::no_grad(|| sum_grads(grads));
        let norm = opt.step_with(&mut grads, lr, cfg.max_grad_norm);
        if first {
            stats.grad_norm = norm;
        }
    }
    Ok(stats)
}

/// The answers an update trains on, with their advantages: `keep_per_group` of a group by
/// [`max_variance_subset`] (all without it), in the groups [`advantages`] keeps; and the step's
/// statistics so far (rewards, rates, groups, advantages).
fn pick(rollouts: &ScoredRollouts<'_>, cfg: &GrpoConfig) -> (StepStats, Vec<(usize, f32)>) {
    let g = cfg.group_size;
    let n = rollouts.answers.len();
    // The answers the update may train on (original positions), `m` per group.
    let m = if cfg.keep_per_group >= 2 && cfg.keep_per_group < g { cfg.keep_per_group } else { g };
    let sel: Vec<usize> = if m < g {
        (0..n.div_ceil(g))
            .flat_map(|q| {
                let group = &rollouts.rewards[q * g..((q + 1) * g).min(n)];
                max_variance_subset(group, m).into_iter().map(move |i| q * g + i)
            })
            .collect()
    } else {
        (0..n).collect()
    };
    let sel_rewards: Vec<f32> = sel.iter().map(|&i| rollouts.rewards[i]).collect();
    let (sel_adv, keep) = advantages(&sel_rewards, m, cfg);
    let mut stats = StepStats {
        reward: rollouts.rewards.iter().map(|&r| f64::from(r)).sum::<f64>() / n.max(1) as f64,
        valid: rollouts.valid.iter().filter(|&&v| v).count() as f64 / n.max(1) as f64,
        optimal: rollouts.optimal.iter().filter(|&&v| v).count() as f64 / n.max(1) as f64,
        groups: keep.len(),
        groups_kept: keep.iter().filter(|&&k| k).count(),
        mean_abs_adv: sel_adv.iter().map(|a| f64::from(a.abs())).sum::<f64>() / sel.len().max(1) as f64,
        ..StepStats::default()
    };
    // Trained answers: (original position, advantage), in kept groups.
    let picked: Vec<(usize, f32)> =
        (0..sel.len()).filter(|&j| keep[j / m]).map(|j| (sel[j], sel_adv[j])).collect();
    stats.advantages = vec![None; n];
    for &(i, a) in &picked {
        stats.advantages[i] = Some(a);
    }
    (stats, picked)
}

/// The `picked` answers in parts of at most [`PART_ROWS`], sorted by prompt length, then group,
/// then answer length: a part pads little, and a group's answers share their prompt's run
/// through the network ([`SeqBatch`]); the parts' losses add up to the whole batch's.
fn parts(
    layout: &crate::tokens::Layout,
    rollouts: &ScoredRollouts<'_>,
    picked: &[(usize, f32)],
    cfg: &GrpoConfig,
) -> Result<Vec<Part>, TrainError> {
    let seqs = picked
        .iter()
        .map(|&(i, _)| sequence(layout, rollouts.instances[i], &rollouts.answers[i]))
        .collect::<Result<Vec<_>, _>>()?;
    let g = cfg.group_size;
    let mut by_len: Vec<usize> = (0..picked.len()).collect();
    by_len.sort_by_key(|&r| (seqs[r].plan_at, picked[r].0 / g, seqs[r].tokens.len()));
    Ok(by_len
        .chunks(PART_ROWS)
        .map(|members| {
            let refs: Vec<&Sequence> = members.iter().map(|&r| &seqs[r]).collect();
            let batch = SeqBatch::pack(layout, &refs);
            let adv = Tensor::from_slice(&members.iter().map(|&r| picked[r].1).collect::<Vec<f32>>());
            let blame = cfg.blame_failure.then(|| blame_weights(&batch, members, picked, rollouts));
            Part { batch, adv, ref_logp: None, blame, old_logp: None }
        })
        .collect())
}

/// With `blame_failure`, a part's `[n, L]` weight that is 0 on the legal prefix of failed
/// answers with a negative advantage, 1 elsewhere.
fn blame_weights(
    batch: &SeqBatch,
    members: &[usize],
    picked: &[(usize, f32)],
    rollouts: &ScoredRollouts<'_>,
) -> Tensor {
    let len = batch.targets.size()[1] as usize;
    let mut w = vec![1f32; members.len() * len];
    for (k, &r) in members.iter().enumerate() {
        let (i, a) = picked[r];
        if a < 0.0 && rollouts.legal_steps[i] > 0 {
            let at = k * len;
            for (j, b) in blamed(&rollouts.answers[i], rollouts.legal_steps[i]).into_iter().enumerate() {
                w[at + j] = f32::from(u8::from(b));
            }
        }
    }
    Tensor::from_slice(&w).reshape([members.len() as i64, len as i64])
}

/// The first optimizer step's logged values: the loss, and the token-weighted means of the
/// parts' pg, KL, clip fraction and entropy, and the supervised term's cross-entropy.
fn log_first_step(stats: &mut StepStats, done: &[Done], cfg: &GrpoConfig) {
    stats.loss = done.iter().map(|d| d.loss).sum();
    let mut sums = [0.0; 6];
    for d in done {
        for (s, x) in sums.iter_mut().zip(d.logged) {
            *s += x;
        }
    }
    let [pg, kl, clip, ent, toks, ent_toks] = sums;
    if done.iter().any(|d| matches!(d.work, Work::Part(_))) {
        let t = toks.max(1.0);
        (stats.pg, stats.kl, stats.clip_frac) = (pg / t, kl / t, clip / t);
        stats.entropy = ent / ent_toks.max(1.0);
    }
    if let Some(d) = done.iter().find(|d| matches!(d.work, Work::Sft(_))) {
        stats.sft_ce = d.loss / cfg.sft_coef;
    }
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
    fn the_parts_of_a_batch_add_up_to_the_whole() {
        // Answers 0 and 1 as two parts of one batch: the losses (and so the gradients) add up to
        // the whole batch's, for every aggregation.
        let (new, old, refp, adv, mask) = case();
        let whole = Whole { answers: 2.0, tokens: 3.0 };
        for agg in [LossAgg::Grpo, LossAgg::DrGrpo, LossAgg::Dapo] {
            let cfg = GrpoConfig { beta: 0.5, loss_agg: agg, ..GrpoConfig::default() };
            let w = new.copy().set_requires_grad(true);
            grpo_loss(&w, &old, Some(&refp), &adv, &mask, 4.0, &cfg).loss.backward();
            let p = new.copy().set_requires_grad(true);
            let mut sum = 0.0;
            for r in 0..2 {
                let row = |t: &Tensor| t.narrow(0, r, 1);
                let l = grpo_loss_part(
                    &row(&p),
                    &row(&old),
                    Some(&row(&refp)),
                    &adv.narrow(0, r, 1),
                    &row(&mask),
                    4.0,
                    whole,
                    &cfg,
                );
                sum += l.loss.double_value(&[]);
                l.loss.backward();
            }
            close(sum, grpo_loss(&new, &old, Some(&refp), &adv, &mask, 4.0, &cfg).loss.double_value(&[]));
            let diff = (w.grad() - p.grad()).abs().max().double_value(&[]);
            assert!(diff < 1e-6, "{agg:?}: {diff}");
        }
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
    fn supervised_ce_by_hand() {
        // Row 0: one target (output 1 at probability 3/4); row 1: two targets, output 0 at 1/4
        // and output 2 at 1/2 (the other outputs at -1e9, probability 0). Mean over the 3 target tokens.
        let v = crate::tokens::NUM_OUT as usize;
        let mut l = vec![-1e9f32; 4 * v]; // finite: the padded position must not give NaN
        (l[0], l[1]) = (0.0, 3f32.ln()); // row 0, position 0: (1/4, 3/4)
        (l[2 * v], l[2 * v + 1]) = (0.0, 3f32.ln()); // row 1, position 0: (1/4, 3/4)
        (l[3 * v + 2], l[3 * v + 3]) = (0.0, 0.0); // row 1, position 1: (1/2, 1/2)
        let logits = Tensor::from_slice(&l).reshape([2, 2, v as i64]).set_requires_grad(true);
        let targets = Tensor::from_slice(&[1i64, -1, 0, 2]).reshape([2, 2]);
        let ce = supervised_ce(&logits, &targets);
        let want = -(0.75f64.ln() + 0.25f64.ln() + 0.5f64.ln()) / 3.0;
        close(ce.double_value(&[]), want);
        // d CE / d logit = (softmax − onehot) / 3 at a target position; 0 at the padded one.
        ce.backward();
        let g = logits.grad();
        close(g.double_value(&[0, 0, 0]), 0.25 / 3.0);
        close(g.double_value(&[0, 0, 1]), (0.75 - 1.0) / 3.0);
        close(g.double_value(&[1, 0, 0]), (0.25 - 1.0) / 3.0);
        close(g.double_value(&[0, 1, 0]), 0.0);
    }

    /// A one-layer model small enough for exact checks on 3×3 boards with 2 agents.
    fn tiny_model() -> crate::model::ModelConfig {
        crate::model::ModelConfig {
            d_model: 16,
            layers: 1,
            heads: 2,
            d_ff: 32,
            layout: crate::tokens::Layout::new(4, 16),
        }
    }

    /// Rollouts whose groups all have one reward: pure GRPO skips the step; with `sft_coef` the
    /// supervised term alone moves the policy, and its logged value is the optimal plans' CE.
    #[test]
    fn the_supervised_term_trains_on_the_prompts_optimal_plans() {
        use crate::optim::AdamConfig;
        use floe_core::{generate, GeneratorConfig};
        let cfg = tiny_model();
        let p = crate::test_rng::seeded_policy(&cfg, 2);
        let insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(2).seed(9)).unwrap();
        let g = 2;
        let refs: Vec<&Instance> = insts.iter().flat_map(|i| [i, i]).collect();
        // Every answer is the optimal plan, every reward 1: no group has any signal.
        let answers: Vec<Vec<i64>> = refs.iter().map(|i| answer(i, &optimal_moves(i).unwrap())).collect();
        let rollouts = ScoredRollouts {
            instances: refs.clone(),
            answers,
            rewards: vec![1.0; refs.len()],
            valid: vec![true; refs.len()],
            optimal: vec![true; refs.len()],
            legal_steps: vec![0; refs.len()],
        };
        let seqs: Vec<_> = insts
            .iter()
            .map(|i| sequence(&cfg.layout, i, &answer(i, &optimal_moves(i).unwrap())).unwrap())
            .collect();
        let batch = SeqBatch::pack(&cfg.layout, &seqs.iter().collect::<Vec<_>>());
        let ce =
            |p: &Policy| tch::no_grad(|| supervised_ce(&p.forward(&batch), &batch.targets)).double_value(&[]);
        let before = ce(&p);
        let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
        // Adam's first step moves every weight by about the learning rate: small enough that it
        // lowers the loss from any start (61 seeds tried), not just from this one.
        let pure = GrpoConfig { group_size: g, lr: 1e-3, ..GrpoConfig::default() };
        let st = update(&p, None, &mut opt, &rollouts, &pure, pure.lr, None).unwrap();
        assert_eq!((st.groups_kept, st.sft_ce), (0, 0.0));
        close(ce(&p), before);
        let hybrid = GrpoConfig { sft_coef: 0.5, ..pure };
        let st = update(&p, None, &mut opt, &rollouts, &hybrid, hybrid.lr, None).unwrap();
        close(st.sft_ce, before);
        close(st.loss, 0.5 * before);
        assert!(ce(&p) < before - 1e-3, "{} -> {}", before, ce(&p));
    }

    /// An update whose parts (over PART_ROWS answers, with a reference, the supervised term and
    /// two steps) run on two workers gives what it gives on this thread, up to the rounding of
    /// the thread counts; and the same twice.
    #[test]
    fn an_update_on_workers_is_the_update_here() {
        use crate::optim::AdamConfig;
        use floe_core::{generate, GeneratorConfig, Move};
        let cfg = tiny_model();
        let insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(6).seed(3)).unwrap();
        let g = 8;
        let refs: Vec<&Instance> = insts.iter().flat_map(|i| std::iter::repeat_n(i, g)).collect();
        let moves = [Move::Right, Move::Down, Move::Wait, Move::Left, Move::Up];
        let answers: Vec<Vec<i64>> = refs
            .iter()
            .enumerate()
            .map(|(k, i)| {
                if k % 3 == 0 {
                    answer(i, &optimal_moves(i).unwrap())
                } else {
                    answer(i, &[vec![moves[k % 5], moves[(k / 5) % 5]], vec![moves[(k + 2) % 5]]])
                }
            })
            .collect();
        let n = refs.len();
        assert!(n > PART_ROWS, "more than one part");
        let rollouts = ScoredRollouts {
            instances: refs,
            answers,
            rewards: (0..n).map(|k| if k % 3 == 0 { 1.0 } else { 0.1 * (k % 4) as f32 }).collect(),
            valid: (0..n).map(|k| k % 3 == 0).collect(),
            optimal: (0..n).map(|k| k % 3 == 0).collect(),
            legal_steps: vec![0; n],
        };
        let c =
            GrpoConfig { group_size: g, mu: 2, beta: 0.05, sft_coef: 0.3, lr: 1e-2, ..GrpoConfig::default() };
        let workers = crate::workers::Workers::start(2);
        let run = |w: Option<&crate::workers::Workers>| {
            let p = crate::test_rng::seeded_policy(&cfg, 7);
            // A new policy draws its weights before the copy overwrites them: held, so that no
            // other test's seeded start sees the draw.
            let reference = {
                let _held = crate::test_rng::lock();
                p.duplicate().unwrap()
            };
            let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
            let st = update(&p, Some(&reference), &mut opt, &rollouts, &c, c.lr, w).unwrap();
            let flat = crate::test_rng::flat(&p);
            (st, flat)
        };
        let p_start = crate::test_rng::flat(&crate::test_rng::seeded_policy(&cfg, 7));
        let (here, p_here) = run(None);
        let (there, p_there) = run(Some(&workers));
        assert!(here.groups_kept > 0 && here.kl.abs() < 1e-6 && here.sft_ce > 0.0);
        for (a, b) in [
            (here.loss, there.loss),
            (here.pg, there.pg),
            (here.entropy, there.entropy),
            (here.sft_ce, there.sft_ce),
            (here.grad_norm, there.grad_norm),
        ] {
            assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "{a} vs {b}");
        }
        // Adam moves a variable by about the learning rate whatever the size of its gradient,
        // so a rounding difference in a near-zero gradient moves it differently: compare the
        // directions the variables moved in.
        assert!(
            crate::test_rng::cosine(&p_start, &p_here, &p_there) > 0.999,
            "{}",
            crate::test_rng::cosine(&p_start, &p_here, &p_there)
        );
        let (again, p_again) = run(Some(&workers));
        assert_eq!((again.loss, p_again), (there.loss, p_there), "the same for a worker count");
    }

    #[test]
    fn blamed_tokens_by_hand() {
        // Agent 0: R R D SEP; agent 1: U W SEP; END. Failure located at step 2 (legal: step 1).
        let ans = [4, 4, 2, OUT_SEP, 1, 0, OUT_SEP, crate::tokens::OUT_END];
        let want = [false, true, true, true, false, true, true, true];
        assert_eq!(blamed(&ans, 1), want);
        // Nothing legal: every token; everything legal up to step 3: only separators and end.
        assert!(blamed(&ans, 0).into_iter().all(|b| b));
        assert_eq!(blamed(&ans, 3), [false, false, false, true, false, false, true, true]);
    }

    /// One group of two answers: the optimal plan (reward 1) and a failed one (reward 0, its
    /// failure located at step 2). At the first step every ratio is 1, so a token's pg term is
    /// −A of its answer and the logged pg is their mean over the tokens the loss counts.
    #[test]
    fn blame_leaves_the_legal_prefix_of_a_failed_answer_out_of_the_loss() {
        use crate::optim::AdamConfig;
        use floe_core::{generate, GeneratorConfig, Move};
        let cfg = tiny_model();
        let inst = generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(1).seed(4))
            .unwrap()
            .remove(0);
        let good = answer(&inst, &optimal_moves(&inst).unwrap());
        // R D SEP W SEP END: 6 tokens, of which the step-1 moves R and W are the legal prefix.
        let bad = answer(&inst, &[vec![Move::Right, Move::Down], vec![Move::Wait]]);
        let rollouts = ScoredRollouts {
            instances: vec![&inst, &inst],
            answers: vec![good.clone(), bad],
            rewards: vec![1.0, 0.0],
            valid: vec![true, false],
            optimal: vec![true, false],
            legal_steps: vec![0, 1],
        };
        // Rewards 1, 0: mean 0.5, sample std √0.5; A = ±0.5 / (√0.5 + 1e-4).
        let a = 0.5 / (0.5f64.sqrt() + 1e-4);
        let n = good.len() as f64;
        for (blame, counted) in [(false, 6.0), (true, 4.0)] {
            let p = crate::test_rng::seeded_policy(&cfg, 5);
            let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
            let c = GrpoConfig { group_size: 2, beta: 0.0, blame_failure: blame, ..GrpoConfig::default() };
            let st = update(&p, None, &mut opt, &rollouts, &c, c.lr, None).unwrap();
            let want = (-a * n + a * counted) / (n + counted);
            assert!((st.pg - want).abs() < 1e-4, "blame {blame}: {} vs {want}", st.pg);
        }
    }

    #[test]
    fn max_variance_subset_by_hand_and_against_every_subset() {
        // Sorted: 0.1 (pos 0), 0.1 (3), 0.3 (5), 0.6 (2), 1.0 (1), 1.0 (4).
        let r = [0.1f32, 1.0, 0.6, 0.1, 1.0, 0.3];
        assert_eq!(max_variance_subset(&r, 2), [0, 4]);
        assert_eq!(max_variance_subset(&r, 4), [0, 1, 3, 4]);
        assert_eq!(max_variance_subset(&r, 6), [0, 1, 2, 3, 4, 5]);
        assert_eq!(max_variance_subset(&r, 9).len(), 6);
        // Three high values and one low: the best three are the low one and the two highest.
        assert_eq!(max_variance_subset(&[0.0, 1.0, 0.9, 0.95], 3), [0, 1, 3]);
        let sq = |v: &[f32]| {
            let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
            v.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum::<f64>()
        };
        let mut x = 12345u64;
        for case in 0..300 {
            let n = 2 + case % 7;
            let rewards: Vec<f32> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    f32::from(((x >> 33) % 6) as u8) / 5.0
                })
                .collect();
            for m in 2..=n {
                let got = max_variance_subset(&rewards, m);
                assert_eq!(got.len(), m);
                assert!(got.windows(2).all(|w| w[0] < w[1]));
                let best = (0u32..1 << n)
                    .filter(|b| b.count_ones() as usize == m)
                    .map(|b| sq(&(0..n).filter(|i| b >> i & 1 == 1).map(|i| rewards[i]).collect::<Vec<_>>()))
                    .fold(0.0, f64::max);
                let mine = sq(&got.iter().map(|&i| rewards[i]).collect::<Vec<_>>());
                assert!((mine - best).abs() < 1e-9, "{rewards:?} m {m}: {mine} < {best}");
            }
        }
    }

    /// Down-sampling a group of four to two is the update on those two answers alone.
    #[test]
    fn down_sampling_trains_on_the_chosen_answers_only() {
        use crate::optim::AdamConfig;
        use floe_core::{generate, GeneratorConfig, Move};
        let cfg = tiny_model();
        let inst = generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(1).seed(4))
            .unwrap()
            .remove(0);
        let good = answer(&inst, &optimal_moves(&inst).unwrap());
        let bad = answer(&inst, &[vec![Move::Right, Move::Down], vec![Move::Wait]]);
        let other = answer(&inst, &[vec![Move::Up], vec![Move::Left, Move::Left]]);
        let four = ScoredRollouts {
            instances: vec![&inst; 4],
            answers: vec![other.clone(), good.clone(), other, bad.clone()],
            rewards: vec![0.3, 1.0, 0.4, 0.1],
            valid: vec![false, true, false, false],
            optimal: vec![false, true, false, false],
            legal_steps: vec![0; 4],
        };
        let two = ScoredRollouts {
            instances: vec![&inst; 2],
            answers: vec![good, bad],
            rewards: vec![1.0, 0.1],
            valid: vec![true, false],
            optimal: vec![true, false],
            legal_steps: vec![0; 2],
        };
        // Every run starts from a copy of one policy.
        let start = crate::test_rng::seeded_policy(&cfg, 7);
        let run = |rollouts: &ScoredRollouts<'_>, c: &GrpoConfig| {
            let p = {
                let _held = crate::test_rng::lock();
                start.duplicate().unwrap()
            };
            let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
            let st = update(&p, None, &mut opt, rollouts, c, c.lr, None).unwrap();
            let w: Vec<f32> = p
                .named_variables()
                .iter()
                .flat_map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap())
                .collect();
            (st, w)
        };
        let base = GrpoConfig { beta: 0.0, lr: 1e-2, ..GrpoConfig::default() };
        let (st4, w4) = run(&four, &GrpoConfig { group_size: 4, keep_per_group: 2, ..base.clone() });
        let (st2, w2) = run(&two, &GrpoConfig { group_size: 2, ..base.clone() });
        let (st_all, w_all) = run(&four, &GrpoConfig { group_size: 4, ..base });
        assert_eq!((st4.loss, st4.pg, st4.mean_abs_adv), (st2.loss, st2.pg, st2.mean_abs_adv));
        assert_eq!(w4, w2);
        assert_ne!(w4, w_all, "every answer trained on must differ from two");
        assert!(
            (st4.reward - 0.45).abs() < 1e-6 && (st_all.reward - 0.45).abs() < 1e-6,
            "reward is over all sampled"
        );
    }

    #[test]
    fn the_learning_rate_decays_along_a_cosine_over_the_run() {
        let c = GrpoConfig { lr: 1e-4, min_lr_ratio: 0.1, ..GrpoConfig::default() };
        close(c.lr_at(0.0), 1e-4);
        close(c.lr_at(0.5), 0.55e-4);
        close(c.lr_at(1.0), 1e-5);
        close(c.lr_at(2.0), 1e-5);
        assert!(c.lr_at(0.3) > c.lr_at(0.31));
        let constant = GrpoConfig::default();
        assert!([0.0, 0.4, 1.0].iter().all(|&p| constant.lr_at(p) == constant.lr));
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(GrpoConfig { group_size: 1, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { clip_eps_low: 1.0, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { beta: -0.1, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { sft_coef: -0.1, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { keep_per_group: 1, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { min_lr_ratio: 1.5, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { min_lr_ratio: f64::NAN, ..GrpoConfig::default() }.validate().is_err());
        assert!(GrpoConfig { keep_per_group: 9, ..GrpoConfig::default() }.validate().is_err());
        GrpoConfig { keep_per_group: 8, ..GrpoConfig::default() }.validate().unwrap();
        let json = r#"{"dynamic_sampling": true, "max_num_gen_batches": 0}"#;
        let c: GrpoConfig = serde_json::from_str(json).unwrap();
        assert!(c.dynamic_sampling && c.max_num_gen_batches == 0);
        assert!(!GrpoConfig::default().dynamic_sampling);
        GrpoConfig::default().validate().unwrap();
        let json = r#"{"loss_agg": "dr_grpo", "beta": 0}"#;
        let c: GrpoConfig = serde_json::from_str(json).unwrap();
        assert_eq!((c.loss_agg, c.beta, c.group_size), (LossAgg::DrGrpo, 0.0, 8));
        assert!(serde_json::from_str::<GrpoConfig>(r#"{"betta": 0}"#).is_err());
    }

    /// A fake sampler over a pool whose prompt i has a reward spread when `spread(i)`: records
    /// the ranges it was asked for.
    fn fake<'a>(
        spread: impl Fn(usize) -> bool + 'a,
        calls: &'a mut Vec<std::ops::Range<usize>>,
    ) -> impl FnMut(std::ops::Range<usize>) -> Result<Vec<bool>, ()> + 'a {
        move |r| {
            calls.push(r.clone());
            Ok(r.map(&spread).collect())
        }
    }

    #[test]
    fn without_dynamic_sampling_a_step_is_its_first_prompts() {
        let cfg = GrpoConfig { prompts_per_step: 4, ..GrpoConfig::default() };
        let mut calls = Vec::new();
        let d = draw_groups(10, &cfg, fake(|i| i % 2 == 0, &mut calls)).unwrap();
        assert_eq!(d, StepDraw { drawn: 4, batches: 1, used: vec![0, 1, 2, 3] });
        assert_eq!(calls, vec![0..4]);
        // The pool's last, short step.
        let mut calls = Vec::new();
        let d = draw_groups(3, &cfg, fake(|_| false, &mut calls)).unwrap();
        assert_eq!(d, StepDraw { drawn: 3, batches: 1, used: vec![0, 1, 2] });
    }

    #[test]
    fn dynamic_sampling_fills_the_step_with_groups_that_have_a_spread() {
        let cfg = GrpoConfig { prompts_per_step: 4, dynamic_sampling: true, ..GrpoConfig::default() };
        // Every third prompt is flat: the first batch keeps 0, 1, 3 (2 is flat); one group is
        // missing at a rate of 3 in 4, so 2 more prompts (4, 5) are drawn; 4 has a spread, 5 is
        // flat and not needed.
        let spread = |i: usize| i % 3 != 2;
        let mut calls = Vec::new();
        let d = draw_groups(100, &cfg, fake(spread, &mut calls)).unwrap();
        assert_eq!(calls, vec![0..4, 4..6]);
        assert_eq!(d, StepDraw { drawn: 6, batches: 2, used: vec![0, 1, 3, 4] });
        assert!(d.used.iter().all(|&i| spread(i)));
        // Surplus groups with a spread are dropped: the step has exactly prompts_per_step.
        let mut calls = Vec::new();
        let d = draw_groups(100, &cfg, fake(|i| i != 0, &mut calls)).unwrap();
        assert_eq!(calls, vec![0..4, 4..6]);
        assert_eq!(d.used, vec![1, 2, 3, 4]);
        // Nothing with a spread in the first batch: a whole batch more.
        let mut calls = Vec::new();
        let d = draw_groups(100, &cfg, fake(|i| i >= 4, &mut calls)).unwrap();
        assert_eq!(calls, vec![0..4, 4..8]);
        assert_eq!(d.used, vec![4, 5, 6, 7]);
    }

    #[test]
    fn dynamic_sampling_stops_at_its_bound_or_the_end_of_the_pool_and_fills_up_with_flat_groups() {
        let cfg = GrpoConfig {
            prompts_per_step: 4,
            dynamic_sampling: true,
            max_num_gen_batches: 2,
            ..GrpoConfig::default()
        };
        // Only prompt 1 has a spread: two batches (the bound), then the earliest flat groups.
        let mut calls = Vec::new();
        let d = draw_groups(100, &cfg, fake(|i| i == 1, &mut calls)).unwrap();
        assert_eq!(calls, vec![0..4, 4..8]);
        assert_eq!(d, StepDraw { drawn: 8, batches: 2, used: vec![0, 1, 2, 3] });
        // No bound: it goes on to the end of the pool (10 prompts).
        let unbounded = GrpoConfig { max_num_gen_batches: 0, ..cfg };
        let mut calls = Vec::new();
        let d = draw_groups(10, &unbounded, fake(|i| i == 1 || i == 9, &mut calls)).unwrap();
        assert_eq!(calls, vec![0..4, 4..8, 8..10]);
        assert_eq!(d, StepDraw { drawn: 10, batches: 3, used: vec![0, 1, 2, 9] });
        // A sampler's error passes through.
        let err: Result<StepDraw, &str> = draw_groups(10, &unbounded, |_| Err("boom"));
        assert_eq!(err, Err("boom"));
    }
}
