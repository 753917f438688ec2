//! The supervised warm start: teacher forcing on the generator's CBS-optimal plans, with the
//! cross-entropy of every answer token (moves, separators, end).

use std::sync::Arc;

use floe_core::Instance;
use tch::{Kind, Reduction, Tensor};

use crate::error::TrainError;
use crate::model::{Policy, SeqBatch};
use crate::optim::{sum_grads, AdamW};
use crate::tokens::{answer, optimal_moves, sequence, Sequence};
use crate::workers::{Task, Workers};

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
    let (tokens, correct) = counts(&flat, &targets);
    SftStats {
        loss: loss.double_value(&[]),
        accuracy: correct as f64 / tokens.max(1) as f64,
        grad_norm,
        tokens: tokens as usize,
    }
}

/// The answer tokens of flattened logits `[N, V]` against `targets` `[N]` (`-1` where there is
/// none), and how many of them the most likely output gets right.
fn counts(flat: &Tensor, targets: &Tensor) -> (i64, i64) {
    let mask = targets.ge(0);
    let tokens = mask.sum(Kind::Int64).int64_value(&[]);
    let correct =
        flat.argmax(-1, false).eq_tensor(targets).logical_and(&mask).sum(Kind::Int64).int64_value(&[]);
    (tokens, correct)
}

/// What one part of a batch gives: the summed cross-entropy of its answer tokens, how many
/// there are and how many the model gets right, and the gradient of the sum per variable.
struct Part {
    loss: f64,
    tokens: i64,
    correct: i64,
    grads: Vec<Tensor>,
}

fn part(policy: &Policy, vars: &[Tensor], batch: &[&Sequence]) -> Part {
    let b = SeqBatch::pack(&policy.config.layout, batch);
    let logits = policy.forward(&b);
    let flat = logits.view([-1, logits.size()[2]]);
    let targets = b.targets.view([-1]);
    let loss = flat.cross_entropy_loss::<Tensor>(&targets, None, Reduction::Sum, -1, 0.0);
    // The gradients are returned, not added into the variables' own, which the other workers
    // share.
    let grads = Tensor::run_backward(&[&loss], vars, false, false);
    let (tokens, correct) = counts(&flat, &targets);
    Part { loss: loss.double_value(&[]), tokens, correct, grads }
}

/// One supervised step as [`step`], with the batch (indices into `seqs`) cut into one
/// consecutive part per worker: each part's summed cross-entropy and its gradient on a worker
/// ([`crate::workers`]), the gradients summed in part order and divided by the batch's answer
/// tokens. The same for a seed and a worker count; it differs from [`step`] by rounding only.
pub fn step_on(
    workers: &Workers,
    policy: &Policy,
    opt: &mut AdamW,
    seqs: &Arc<Vec<Sequence>>,
    batch: &[usize],
    lr: f64,
    max_grad_norm: f64,
) -> SftStats {
    let chunk = batch.len().div_ceil(workers.len()).max(1);
    let jobs: Vec<Task<Part>> = batch
        .chunks(chunk)
        .map(|members| {
            let (handle, seqs, members) = (policy.handle(), Arc::clone(seqs), members.to_vec());
            let job: Task<Part> = Box::new(move || {
                let vars = handle.variables();
                let refs: Vec<&Sequence> = members.iter().map(|&i| &seqs[i]).collect();
                part(&handle, &vars, &refs)
            });
            job
        })
        .collect();
    let parts = workers.run(jobs);
    let tokens: i64 = parts.iter().map(|p| p.tokens).sum();
    let correct: i64 = parts.iter().map(|p| p.correct).sum();
    let loss: f64 = parts.iter().map(|p| p.loss).sum();
    let scale = 1.0 / tokens.max(1) as f64;
    let mut grads = tch::no_grad(|| {
        let mut sum = sum_grads(parts.into_iter().map(|p| p.grads));
        for g in sum.iter_mut().filter(|g| g.defined()) {
            let _ = g.g_mul_scalar_(scale);
        }
        sum
    });
    let grad_norm = opt.step_with(&mut grads, lr, max_grad_norm);
    SftStats {
        loss: loss * scale,
        accuracy: correct as f64 / tokens.max(1) as f64,
        grad_norm,
        tokens: tokens as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;
    use crate::optim::AdamConfig;
    use crate::tokens::Layout;
    use floe_core::{generate, GeneratorConfig};

    /// A one-layer model for 3×3 boards.
    fn small_model() -> ModelConfig {
        ModelConfig { d_model: 32, layers: 1, heads: 2, d_ff: 64, layout: Layout::new(4, 16) }
    }

    /// A step over two workers is the step on this thread, up to rounding, and the same twice.
    #[test]
    fn a_step_on_workers_is_the_step_here() {
        let cfg = small_model();
        let insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(9).seed(5)).unwrap();
        let workers = Workers::start(2);
        let run = |w: Option<&Workers>| {
            let p = crate::test_rng::seeded_policy(&cfg, 1);
            let seqs = Arc::new(sequences(&p, &insts).unwrap());
            let mut opt = AdamW::new(p.named_variables(), AdamConfig::default());
            let batch: Vec<usize> = (0..seqs.len()).collect();
            let stats: Vec<SftStats> = (0..3)
                .map(|_| match w {
                    Some(w) => step_on(w, &p, &mut opt, &seqs, &batch, 3e-3, 1.0),
                    None => step(&p, &mut opt, &seqs.iter().collect::<Vec<_>>(), 3e-3, 1.0),
                })
                .collect();
            let flat = crate::test_rng::flat(&p);
            (stats, flat)
        };
        let p_start = crate::test_rng::flat(&crate::test_rng::seeded_policy(&cfg, 1));
        let (here, p_here) = run(None);
        let (there, p_there) = run(Some(&workers));
        for (a, b) in here.iter().zip(&there) {
            assert_eq!((a.tokens, a.accuracy), (b.tokens, b.accuracy));
            assert!(
                (a.loss - b.loss).abs() < 1e-5 * a.loss
                    && (a.grad_norm - b.grad_norm).abs() < 1e-4 * a.grad_norm
            );
        }
        // Adam moves a variable by about the learning rate whatever the size of its gradient,
        // so a rounding difference in a near-zero gradient moves it differently: compare the
        // directions the variables moved in.
        assert!(
            crate::test_rng::cosine(&p_start, &p_here, &p_there) > 0.999,
            "{}",
            crate::test_rng::cosine(&p_start, &p_here, &p_there)
        );
        assert_eq!(run(Some(&workers)).1, p_there, "the same for a worker count");
    }

    #[test]
    fn a_few_steps_lower_the_loss_on_a_small_set() {
        let cfg = small_model();
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
