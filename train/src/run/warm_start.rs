//! The supervised warm start: teacher forcing on the generator's CBS-optimal plans, standing in
//! for the paper's pretrained language model.

use std::sync::Arc;
use std::time::Instant;

use floe_core::rng::Rng;
use floe_core::text::count;
use floe_rounds::data::warm_start_data;
use floe_rounds::{Session, Stage, Trainee};
use serde_json::json;

use super::{PolicyTrainee, TAG_SFT};
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::model::Policy;
use crate::optim::AdamW;
use crate::sft::{self, SftStats};
use crate::tokens::Sequence;

/// One warm-start step: the policy, its optimizer, the batch (indices into the sequences), the
/// learning rate.
type StepFn<'a> = dyn FnMut(&Policy, &mut AdamW, &[usize], f64) -> SftStats + 'a;

impl PolicyTrainee<'_> {
    pub(crate) fn run_warm_start(&mut self, session: &mut Session<'_>) -> Result<(), TrainError> {
        let cfg: &TrainConfig = self.cfg;
        let w = &cfg.warm_start;
        let seed = self.cfg.seed;
        let data = warm_start_data(&w.data, w.samples, seed, session.progress())?;
        let seqs = Arc::new(sft::sequences(&self.policy, &data)?);
        let clip = w.max_grad_norm;
        // The workers run the parts of each batch; without them (one thread) libtorch runs
        // the whole batch.
        match self.workers.take() {
            Some(workers) => {
                let done = self.warm_steps(session, &seqs, &mut |policy, opt, batch, lr| {
                    sft::step_on(&workers, policy, opt, &seqs, batch, lr, clip)
                });
                self.workers = Some(workers);
                done
            }
            None => self.warm_steps(session, &seqs, &mut |policy, opt, batch, lr| {
                let batch: Vec<&Sequence> = batch.iter().map(|&i| &seqs[i]).collect();
                sft::step(policy, opt, &batch, lr, clip)
            }),
        }
    }

    /// The warm start's steps on `seqs`, each taken by `take` (policy, optimizer, the batch's
    /// indices into `seqs`, learning rate).
    fn warm_steps(
        &mut self,
        s: &mut Session<'_>,
        seqs: &[Sequence],
        take: &mut StepFn<'_>,
    ) -> Result<(), TrainError> {
        let (w, seed) = (&self.cfg.warm_start, self.cfg.seed);
        let t_stage = Instant::now();
        s.progress().begin("warm start", w.steps as u64);
        let mut last = (f64::NAN, f64::NAN);
        // Sorted by prompt length, then answer length: a batch's prompts are padded to its
        // longest prompt and its answers to its longest answer (SeqBatch).
        let lens: Vec<usize> = seqs.iter().map(|s| (s.plan_at << 16) + s.tokens.len()).collect();
        let (mut batches, mut epoch, mut at) = (Vec::new(), 0u64, 0usize);
        for step in 0..w.steps {
            if step % 50 == 0 {
                if let Err(e) = s.check_cancel(&format!("in the warm start, at step {step}")) {
                    s.progress().end("warm start: cancelled");
                    return Err(e.into());
                }
            }
            if at == batches.len() {
                batches = epoch_batches(&lens, w.batch_size, seed, epoch);
                (epoch, at) = (epoch + 1, 0);
            }
            let batch = &batches[at];
            at += 1;
            let t0 = Instant::now();
            let lr = w.lr_at(step);
            let st = take(&self.policy, &mut self.opt, batch, lr);
            let dt = t0.elapsed().as_secs_f64();
            s.add_training(dt);
            s.step_line(&json!({
                "phase": "warm_start", "step": step, "loss": st.loss, "accuracy": st.accuracy, "lr": lr,
                "grad_norm": st.grad_norm, "tokens": st.tokens, "tokens_per_s": st.tokens as f64 / dt.max(1e-9),
                "train_s": s.train_s(),
            }))?;
            s.state.sft_curve.push((step as u64, st.loss));
            s.state.sft_steps = step as u64 + 1;
            last = (st.loss, st.accuracy);
            s.progress().advance(1, &format!("loss {:.3} acc {:.3}", st.loss, st.accuracy));
            if w.eval_every > 0 && (step + 1) % w.eval_every == 0 && step + 1 < w.steps {
                s.evaluate(self as &mut dyn Trainee, Stage::WarmStartAt(step as u64 + 1))?;
            }
        }
        s.progress().end(&format!(
            "warm start: {} in {:.0} s (last loss {:.3}, token accuracy {:.3})",
            count(w.steps as u64, "step", "steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        Ok(())
    }
}

/// Batches of one warm-start epoch drawn this many at a time are sorted by length among
/// themselves, so that a batch holds sequences of about one length and pads little.
const LENGTH_POOL: usize = 16;

/// The batches of one epoch over sequences of sort keys `lens` (lengths, or any key that puts
/// sequences which pad little together next to each other): a seeded shuffle; then, pool by
/// pool of [`LENGTH_POOL`] batches, the sequences sorted by key and cut into full batches
/// (a remainder smaller than a batch waits for the next epoch's shuffle); then the batches in a
/// seeded order. Every sequence is in at most one batch of an epoch.
fn epoch_batches(lens: &[usize], batch_size: usize, seed: u64, epoch: u64) -> Vec<Vec<usize>> {
    let batch_size = batch_size.clamp(1, lens.len().max(1));
    let mut order: Vec<usize> = (0..lens.len()).collect();
    Rng::from_counters(&[seed, TAG_SFT, epoch]).shuffle(&mut order);
    let mut batches = Vec::new();
    for pool in order.chunks(batch_size * LENGTH_POOL) {
        let mut pool = pool.to_vec();
        pool.sort_by_key(|&i| lens[i]);
        batches.extend(pool.chunks_exact(batch_size).map(<[usize]>::to_vec));
    }
    if batches.is_empty() {
        batches.push(order);
    }
    Rng::from_counters(&[seed, TAG_SFT, epoch, 1]).shuffle(&mut batches);
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epoch_batches_by_length_and_uses_each_sequence_once() {
        let lens: Vec<usize> = (0..1000).map(|i| 20 + (i * 37) % 180).collect();
        let b = epoch_batches(&lens, 16, 3, 0);
        assert_eq!(b.len(), 62, "pools of 256, 256, 256 and 232: 16 + 16 + 16 + 14 batches, 8 left out");
        let mut seen: Vec<usize> = b.iter().flatten().copied().collect();
        assert!(b.iter().all(|x| x.len() == 16));
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), b.len() * 16);
        // Sorting within pools: the mean spread of lengths in a batch is a fraction of the range.
        let spread: usize = b
            .iter()
            .map(|x| {
                let l: Vec<usize> = x.iter().map(|&i| lens[i]).collect();
                l.iter().max().unwrap() - l.iter().min().unwrap()
            })
            .sum::<usize>()
            / b.len();
        assert!(spread < 40, "{spread}");
        assert_eq!(b, epoch_batches(&lens, 16, 3, 0), "seeded");
        assert_ne!(b, epoch_batches(&lens, 16, 3, 1));
        // Fewer sequences than a batch: one batch of all.
        assert_eq!(epoch_batches(&[5, 6, 7], 16, 0, 0).concat().len(), 3);
    }
}
