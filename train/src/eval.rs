//! Evaluation of the policy: greedy answers to a set of instances, counted by floe-rounds'
//! [`EvalReport`] (the paper's tables: valid / optimal rate per agent count × map size, their
//! mean over map sizes, the failures by kind).

use floe_core::progress::{Progress, Silent};
use floe_core::Instance;
pub use floe_rounds::report::{score, score_each, EvalCell, EvalReport, Outcome};
use floe_rounds::Answer;

use crate::error::TrainError;
use crate::model::Policy;
use crate::sample::{decode_with_progress, Decode};

/// Greedy answers from `policy` to every instance, as the protocol's answers.
///
/// # Errors
/// An instance the model cannot read.
pub fn answers(
    policy: &Policy,
    instances: &[&Instance],
    batch: usize,
    progress: &dyn Progress,
) -> Result<Vec<Answer>, TrainError> {
    let decoded = decode_with_progress(policy, instances, Decode::Greedy, batch, progress)?;
    Ok(decoded.into_iter().map(|a| Answer::Plan(a.plan)).collect())
}

/// Greedy answers from `policy` to every instance, scored.
///
/// # Errors
/// An instance the model cannot read; engine errors.
pub fn evaluate(policy: &Policy, instances: &[&Instance], batch: usize) -> Result<EvalReport, TrainError> {
    evaluate_each(policy, instances, batch, &Silent).map(|(report, _)| report)
}

/// As [`evaluate`], with each instance's outcome too, advancing `progress` by the instances
/// answered (the caller begins and ends the stage).
///
/// # Errors
/// An instance the model cannot read; engine errors.
pub fn evaluate_each(
    policy: &Policy,
    instances: &[&Instance],
    batch: usize,
    progress: &dyn Progress,
) -> Result<(EvalReport, Vec<Outcome>), TrainError> {
    let answers = answers(policy, instances, batch, progress)?;
    Ok(score_each(instances, &answers)?)
}
