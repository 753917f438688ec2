//! The supervised warm start: teacher forcing on the generator's CBS-optimal plans, with the
//! cross-entropy of every answer token (moves, separators, end).

use floe_core::Instance;
use tch::{Kind, Reduction};

use crate::error::TrainError;
use crate::model::{Policy, SeqBatch};
use crate::optim::AdamW;
use crate::tokens::{answer, optimal_moves, sequence, Sequence};

/// The teacher-forcing sequences of instances' optimal plans.
///
/// # Errors
/// An instance without an optimal plan or over the model's limits.
pub fn sequences(policy: &Policy, instances: &[Instance]) -> Result<Vec<Sequence>, TrainError> {
    let layout = policy.config.layout;
    instances.iter().map(|i| sequence(&layout, i, &answer(i, &optimal_moves(i)?))).collect()
}

/// What one supervised step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SftStats {
    /// Mean cross-entropy per answer token (nats).
    pub loss: f64,
    /// Share of answer tokens whose most likely output is the target.
    pub accuracy: f64,
    pub grad_norm: f64,
    pub tokens: usize,
}

/// One supervised step on `batch` at learning rate `lr`.
pub fn step(policy: &Policy, opt: &mut AdamW, batch: &[&Sequence], lr: f64, max_grad_norm: f64) -> SftStats {
    let b = SeqBatch::pack(&policy.config.layout, batch);
    let logits = policy.forward(&b);
    let flat = logits.view([-1, logits.size()[2]]);
    let targets = b.targets.view([-1]);
    let loss = flat.cross_entropy_loss::<tch::Tensor>(&targets, None, Reduction::Mean, -1, 0.0);
    opt.zero_grad();
    loss.backward();
    let grad_norm = opt.clip_grad_norm(max_grad_norm);
    opt.step(lr);
    let mask = targets.ge(0);
    let tokens = mask.sum(Kind::Int64).int64_value(&[]) as usize;
    let correct =
        flat.argmax(-1, false).eq_tensor(&targets).logical_and(&mask).sum(Kind::Int64).int64_value(&[]);
    SftStats {
        loss: loss.double_value(&[]),
        accuracy: correct as f64 / tokens.max(1) as f64,
        grad_norm,
        tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;
    use crate::optim::AdamConfig;
    use crate::tokens::Layout;
    use floe_core::{generate, GeneratorConfig};

    #[test]
    fn a_few_steps_lower_the_loss_on_a_small_set() {
        let cfg = ModelConfig {
            d_model: 32,
            layers: 1,
            heads: 2,
            d_ff: 64,
            layout: Layout { max_side: 4, max_time: 16 },
        };
        let p = crate::test_rng::seeded_policy(&cfg, 1);
        let insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(8).seed(5)).unwrap();
        let seqs = sequences(&p, &insts).unwrap();
        let refs: Vec<&Sequence> = seqs.iter().collect();
        let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
        let first = step(&p, &mut opt, &refs, 3e-3, 1.0);
        let mut last = first;
        for _ in 0..30 {
            last = step(&p, &mut opt, &refs, 3e-3, 1.0);
        }
        assert!(last.loss < 0.6 * first.loss, "{} -> {}", first.loss, last.loss);
        assert!(last.accuracy > first.accuracy);
        let answer_tokens: usize = seqs.iter().map(|s| s.targets.iter().filter(|&&t| t >= 0).count()).sum();
        assert_eq!(first.tokens, answer_tokens);
    }
}
