//! Verdicts of a trainee's answers, in batches: plans of moves (floe's own trainee) through the
//! batched verifier with its partial credit, written answers (a language model's) through the
//! reader and the single verifier; both as the [`VerdictRecord`]s that reward plugins read and
//! that a validation counts.

use floe_core::engine::InstancePool;
use floe_core::verify::{verify, verify_batch, Answer as Written, Check, PlanBatch, VerifyOut};
use floe_core::{FailureKind, Instance, Move, PartialCredit, PlanForm};
use floe_plugin_api::VerdictRecord;
use rayon::prelude::*;

use crate::error::RoundsError;

/// A trainee's answer to one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A plan as decoded from the trainee's tokens.
    Plan(DecodedPlan),
    /// A written answer in the paper's format (`Agent 0: UP RIGHT …`), read strictly.
    Text(String),
}

/// A plan as decoded from an answer: per agent its moves; `finished` is false for an answer
/// that never wrote `END` (a `parse_error`, like a truncated text answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPlan {
    pub moves: Vec<Vec<Move>>,
    pub finished: bool,
}

/// Verifies `plans[i]` against `instances[i]` (with `pool` packed from `instances`' distinct
/// entries and `pool_index[i]` its row), writing one result and one reward record per plan.
///
/// # Errors
/// Engine errors for a malformed batch.
pub fn verify_plans(
    pool: &InstancePool,
    pool_index: &[u32],
    instances: &[&Instance],
    plans: &[DecodedPlan],
) -> Result<(Vec<VerifyOut>, Vec<VerdictRecord>), RoundsError> {
    let n = plans.len();
    let mut out = vec![VerifyOut::default(); n];
    // Plans decided before simulation keep the default (unread) credit.
    let mut credit = vec![PartialCredit::default(); n];
    // Plans with the right agent count that ended go through the batch; the rest are decided here
    // exactly as the verifier decides them (wrong_agent_count before anything else is read).
    let mut batch_rows = Vec::new();
    let t = plans.iter().flat_map(|p| p.moves.iter().map(Vec::len)).max().unwrap_or(0).max(1);
    let mut batch = PlanBatch::new(pool.max_agents(), t);
    for (i, p) in plans.iter().enumerate() {
        let opt = pool.optimal_soc(pool_index[i] as usize);
        if !p.finished {
            out[i] =
                VerifyOut { kind: FailureKind::ParseError as u32, optimal_soc: opt, ..VerifyOut::default() };
        } else if p.moves.len() != instances[i].num_agents() {
            out[i] = VerifyOut {
                kind: FailureKind::WrongAgentCount as u32,
                optimal_soc: opt,
                ..VerifyOut::default()
            };
        } else {
            batch.push(pool_index[i], &p.moves)?;
            batch_rows.push(i);
        }
    }
    if !batch.is_empty() {
        let mut res = vec![VerifyOut::default(); batch.len()];
        let mut res_credit = vec![PartialCredit::default(); batch.len()];
        verify_batch(pool, &batch, &mut res, Some(&mut res_credit))?;
        for ((r, c), i) in res.into_iter().zip(res_credit).zip(batch_rows) {
            (out[i], credit[i]) = (r, c);
        }
    }
    // The records are what `VerdictRecord::from_plan` gives for the single verifier's verdict (a
    // test checks that they agree).
    let records = out
        .iter()
        .zip(&credit)
        .zip(instances)
        .map(|((o, c), inst)| VerdictRecord::from_results(o, c, inst.num_agents() as u32))
        .collect();
    Ok((out, records))
}

/// The verdict records of written answers: each read in the paper's format and verified against
/// its instance's optimum (stored, or the solver's), with its partial credit; on every core.
#[must_use]
pub fn verify_texts(instances: &[&Instance], texts: &[&str]) -> Vec<VerdictRecord> {
    instances
        .par_iter()
        .zip(texts)
        .map(|(inst, text)| {
            let check = Check::against(floe_core::solver::optimum(inst)).with_credit();
            let verdict = verify(inst, Written::Written(text, PlanForm::Text), check);
            VerdictRecord::from_verdict(&verdict, inst.num_agents() as u32)
        })
        .collect()
}

/// The verdict records of `answers[i]` against `instances[i]`, plans and texts alike.
///
/// # Errors
/// Engine errors for a malformed batch; `answers` and `instances` of different lengths.
pub fn verdicts(instances: &[&Instance], answers: &[Answer]) -> Result<Vec<VerdictRecord>, RoundsError> {
    if instances.len() != answers.len() {
        return Err(RoundsError::Input(format!(
            "{} answers to {} instances",
            answers.len(),
            instances.len()
        )));
    }
    let mut out: Vec<Option<VerdictRecord>> = vec![None; answers.len()];
    // The answers split by kind, each with its row: plans go through one batch, texts through
    // the reader.
    let mut plans: Vec<(usize, &DecodedPlan)> = Vec::new();
    let mut texts: Vec<(usize, &str)> = Vec::new();
    for (i, a) in answers.iter().enumerate() {
        match a {
            Answer::Plan(p) => plans.push((i, p)),
            Answer::Text(t) => texts.push((i, t.as_str())),
        }
    }
    if !plans.is_empty() {
        let insts: Vec<&Instance> = plans.iter().map(|&(i, _)| instances[i]).collect();
        let owned: Vec<Instance> = insts.iter().map(|&i| i.clone()).collect();
        let pool = InstancePool::new(&owned, floe_core::engine::Optima::AsStored)?;
        let index: Vec<u32> = (0..insts.len() as u32).collect();
        let decoded: Vec<DecodedPlan> = plans.iter().map(|&(_, p)| p.clone()).collect();
        let (_, recs) = verify_plans(&pool, &index, &insts, &decoded)?;
        for (r, &(i, _)) in recs.into_iter().zip(&plans) {
            out[i] = Some(r);
        }
    }
    if !texts.is_empty() {
        let insts: Vec<&Instance> = texts.iter().map(|&(i, _)| instances[i]).collect();
        let written: Vec<&str> = texts.iter().map(|&(_, t)| t).collect();
        for (r, &(i, _)) in verify_texts(&insts, &written).into_iter().zip(&texts) {
            out[i] = Some(r);
        }
    }
    Ok(out.into_iter().flatten().collect())
}
