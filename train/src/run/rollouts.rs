//! Rollouts: sampling groups of answers to a step's prompts, verifying and scoring them.

use floe_core::engine::InstancePool;
use floe_core::Instance;

use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::grpo::{self, ScoredRollouts};
use crate::model::Policy;
use crate::reward::{located_legal_steps, rewards, verify_plans, DecodedPlan};
use crate::sample::{decode, Decode};

/// Answers sampled in one batch.
const SAMPLE_BATCH: usize = 64;

/// The groups sampled for one step, in draw order: per answer, its instance (an index into the
/// round's training set), tokens, reward and verdict.
#[derive(Default)]
pub(crate) struct Sampled {
    pub(crate) idx: Vec<u32>,
    tokens: Vec<Vec<i64>>,
    pub(crate) rewards: Vec<f32>,
    pub(crate) valid: Vec<bool>,
    optimal: Vec<bool>,
    legal_steps: Vec<u32>,
}

impl Sampled {
    /// The rollouts of the groups `used` (positions in draw order) of `g` answers each.
    pub(crate) fn rollouts<'a>(&self, train: &'a [Instance], used: &[usize], g: usize) -> ScoredRollouts<'a> {
        let rows: Vec<usize> = used.iter().flat_map(|&u| u * g..(u + 1) * g).collect();
        ScoredRollouts {
            instances: rows.iter().map(|&i| &train[self.idx[i] as usize]).collect(),
            answers: rows.iter().map(|&i| self.tokens[i].clone()).collect(),
            rewards: rows.iter().map(|&i| self.rewards[i]).collect(),
            valid: rows.iter().map(|&i| self.valid[i]).collect(),
            optimal: rows.iter().map(|&i| self.optimal[i]).collect(),
            legal_steps: rows.iter().map(|&i| self.legal_steps[i]).collect(),
        }
    }
}

/// Samples `group_size` answers to each of `prompts` (indices into `train`), verifies and scores
/// them, appends them to `out`, and tells for each group whether its rewards have a spread.
pub(crate) fn sample_groups(
    policy: &Policy,
    pool: &InstancePool,
    train: &[Instance],
    prompts: &[usize],
    reward: &mut dyn floe_plugin_api::RewardFn,
    cfg: &TrainConfig,
    out: &mut Sampled,
) -> Result<Vec<bool>, TrainError> {
    let g = cfg.grpo.group_size;
    let idx: Vec<u32> = prompts.iter().flat_map(|&i| std::iter::repeat_n(i as u32, g)).collect();
    let insts: Vec<&Instance> = idx.iter().map(|&i| &train[i as usize]).collect();
    // Batches of SAMPLE_BATCH answers (prompts sorted by length, so a batch pads little): on
    // 2 cores they sampled faster than one batch of a whole step's answers.
    let answers = decode(policy, &insts, Decode::Sample { temperature: cfg.grpo.temperature }, SAMPLE_BATCH)?;
    let (plans, tokens): (Vec<DecodedPlan>, Vec<Vec<i64>>) =
        answers.into_iter().map(|a| (a.plan, a.tokens)).unzip();
    let (outs, records) = verify_plans(pool, &idx, &insts, &plans)?;
    let rw = rewards(reward, &records)?;
    let spread = rw.chunks(g).map(grpo::has_spread).collect();
    out.idx.extend(idx);
    out.tokens.extend(tokens);
    out.rewards.extend(rw);
    out.valid.extend(outs.iter().map(|o| o.valid == 1));
    out.optimal.extend(outs.iter().map(|o| o.optimal == 1));
    out.legal_steps.extend(outs.iter().map(located_legal_steps));
    Ok(spread)
}
