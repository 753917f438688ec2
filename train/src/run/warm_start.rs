//! The supervised warm start: teacher forcing on the generator's CBS-optimal plans, standing in
//! for the paper's pretrained language model.

use std::time::Instant;

use floe_core::rng::{hash, Rng};
use floe_core::text::count;
use serde_json::json;

use super::data::generate_all;
use super::{Run, Stage, TAG_SFT};
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::sft;

impl Run<'_> {
    pub(crate) fn warm_start(&mut self) -> Result<(), TrainError> {
        let cfg: &TrainConfig = self.cfg;
        let w = &cfg.warm_start;
        let seed = self.cfg.seed;
        let data = generate_all(
            &w.data.generator_configs(w.samples, hash(&[seed, TAG_SFT])),
            "warm-start data",
            self.progress,
        )?;
        let seqs = sft::sequences(&self.policy, &data)?;
        let t_stage = Instant::now();
        self.progress.begin("warm start", w.steps as u64);
        let mut last = (f64::NAN, f64::NAN);
        let (mut order, mut epoch, mut at) = (Vec::new(), 0u64, usize::MAX);
        for step in 0..w.steps {
            if step % 50 == 0 {
                if let Err(e) = self.check_cancel(&format!("in the warm start, at step {step}")) {
                    self.progress.end("warm start: cancelled");
                    return Err(e);
                }
            }
            if at + w.batch_size > seqs.len() || at == usize::MAX {
                order = (0..seqs.len()).collect();
                Rng::from_counters(&[seed, TAG_SFT, epoch]).shuffle(&mut order);
                (epoch, at) = (epoch + 1, 0);
            }
            let batch: Vec<&crate::tokens::Sequence> =
                order[at..(at + w.batch_size).min(seqs.len())].iter().map(|&i| &seqs[i]).collect();
            at += w.batch_size;
            let t0 = Instant::now();
            let lr = w.lr_at(step);
            let s = sft::step(&self.policy, &mut self.opt, &batch, lr, w.max_grad_norm);
            let dt = t0.elapsed().as_secs_f64();
            self.trained += dt;
            self.steps.write(&json!({
                "phase": "warm_start", "step": step, "loss": s.loss, "accuracy": s.accuracy, "lr": lr,
                "grad_norm": s.grad_norm, "tokens": s.tokens, "tokens_per_s": s.tokens as f64 / dt.max(1e-9),
                "train_s": self.train_s(),
            }))?;
            self.state.sft_curve.push((step as u64, s.loss));
            self.state.sft_steps = step as u64 + 1;
            last = (s.loss, s.accuracy);
            self.progress.advance(1, &format!("loss {:.3} acc {:.3}", s.loss, s.accuracy));
            if w.eval_every > 0 && (step + 1) % w.eval_every == 0 && step + 1 < w.steps {
                self.evaluate(Stage::WarmStartAt(step as u64 + 1))?;
            }
        }
        self.progress.end(&format!(
            "warm start: {} in {:.0} s (last loss {:.3}, token accuracy {:.3})",
            count(w.steps as u64, "step", "steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        Ok(())
    }
}
