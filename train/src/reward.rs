//! From sampled plans to rewards: the plans are verified in one batch by the engine
//! ([`verify_batch`] with its credit, the single verifier's kernel and results exactly), each
//! result becomes a [`VerdictRecord`] with the partial-credit fields (legal prefix, horizon,
//! agents on goal) the same run of the kernel gave, and the reward plugin turns the batch of
//! records into rewards.

use floe_core::engine::NONE;
use floe_core::verify::VerifyOut;
use floe_core::FailureKind;
use floe_plugin_api::{RewardFn, VerdictRecord};
pub use floe_rounds::verdicts::{verify_plans, DecodedPlan};

use crate::error::TrainError;

/// The time steps before a failure the verifier located at a step (out of bounds, illegal move,
/// hole, vertex or edge conflict at step t: t − 1, every agent's moves before it being legal);
/// 0 for a valid plan and for failures without a step (parse error, wrong agent count, goal not
/// reached).
#[must_use]
pub fn located_legal_steps(o: &VerifyOut) -> u32 {
    match FailureKind::from_code(o.kind) {
        Some(
            FailureKind::OutOfBounds
            | FailureKind::IllegalMove
            | FailureKind::Hole
            | FailureKind::VertexConflict
            | FailureKind::EdgeConflict,
        ) if o.time != NONE => o.time.saturating_sub(1),
        _ => 0,
    }
}

/// Rewards of a batch of records from the reward plugin.
///
/// # Errors
/// The plugin's error, or a non-finite reward.
pub fn rewards(plugin: &mut dyn RewardFn, records: &[VerdictRecord]) -> Result<Vec<f32>, TrainError> {
    let mut out = vec![0.0; records.len()];
    plugin.verdict_rewards(records, &mut out)?;
    floe_plugin_api::traits::check_rewards(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::engine::InstancePool;
    use floe_core::rng::Rng;
    use floe_core::{generate, verify, Check, GeneratorConfig, Move, Plan};

    #[test]
    fn located_failures_by_hand() {
        let out =
            |kind: FailureKind, time: u32| VerifyOut { kind: kind as u32, time, ..VerifyOut::default() };
        assert_eq!(located_legal_steps(&out(FailureKind::Hole, 3)), 2);
        assert_eq!(located_legal_steps(&out(FailureKind::VertexConflict, 1)), 0);
        assert_eq!(located_legal_steps(&out(FailureKind::EdgeConflict, 4)), 3);
        assert_eq!(located_legal_steps(&out(FailureKind::GoalNotReached, 5)), 0);
        assert_eq!(located_legal_steps(&out(FailureKind::ParseError, NONE)), 0);
        assert_eq!(located_legal_steps(&VerifyOut { valid: 1, time: 4, ..VerifyOut::default() }), 0);
    }

    #[test]
    fn records_match_the_single_verifier() {
        let instances = generate(
            &GeneratorConfig::default().size(4).agents(3).hole_ratio(0.2).wait_ratio(0.5).count(12).seed(7),
        )
        .unwrap();
        let pool = InstancePool::new(&instances, floe_core::engine::Optima::AsStored).unwrap();
        let mut rng = Rng::from_counters(&[11]);
        let (mut idx, mut insts, mut plans) = (Vec::new(), Vec::new(), Vec::new());
        for (i, inst) in instances.iter().enumerate() {
            for trial in 0..20 {
                let opt: Vec<Vec<Move>> = crate::tokens::optimal_moves(inst).unwrap();
                let mut moves = opt.clone();
                // Perturb: random moves, truncations, an extra or a missing agent.
                match trial % 5 {
                    0 => {}
                    1 => moves.iter_mut().for_each(|m| m.truncate(m.len() / 2)),
                    2 => moves[0] = (0..6).map(|_| Move::ALL[rng.below(5) as usize]).collect(),
                    3 => moves.iter_mut().for_each(|m| m.push(Move::ALL[rng.below(5) as usize])),
                    _ => {
                        if trial % 2 == 0 {
                            moves.pop();
                        } else {
                            moves.push(vec![Move::Wait]);
                        }
                    }
                }
                idx.push(i as u32);
                insts.push(inst);
                plans.push(DecodedPlan { moves, finished: true });
            }
        }
        plans.push(DecodedPlan { moves: vec![vec![]; 3], finished: false });
        idx.push(0);
        insts.push(&instances[0]);
        let (outs, recs) = verify_plans(&pool, &idx, &insts, &plans).unwrap();
        let mut kinds = std::collections::BTreeSet::new();
        for ((inst, p), (o, r)) in insts.iter().zip(&plans).zip(outs.iter().zip(&recs)) {
            if !p.finished {
                assert_eq!(o.kind, FailureKind::ParseError as u32);
                continue;
            }
            let plan = Plan::Moves(p.moves.clone());
            let v = verify(inst, &plan, Check::default());
            assert_eq!(*o, VerifyOut::from_verdict(&v));
            assert_eq!(*r, VerdictRecord::from_plan(inst, &plan, &v), "{:?}", p.moves);
            kinds.insert(o.kind);
        }
        assert!(kinds.len() >= 4, "too few outcomes exercised: {kinds:?}");
        let mut tiered =
            floe_plugin_api::catalog::new_reward(&floe_plugins::catalog(), "tiered", "").unwrap();
        let r = rewards(tiered.as_mut(), &recs).unwrap();
        assert!(r.iter().all(|v| (0.0..=1.0).contains(v)));
        assert_eq!(r[0], 1.0); // the optimal plan, unperturbed
    }
}
