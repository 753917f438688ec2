//! One GRPO round of the policy: `epochs` passes of GRPO steps over the round's training set
//! (the protocol gives it, newly generated and replayed, and validates after it).

use std::time::Instant;

use floe_core::engine::{InstancePool, Optima};
use floe_core::rng::{hash, Rng};
use floe_core::text::count;
use floe_rounds::{RoundData, Session, Trained};

use super::rollouts::{sample_groups, Sampled};
use super::{load_policy, PolicyTrainee, TAG_GRPO, TAG_ROUND};
use crate::error::TrainError;
use crate::grpo;

impl PolicyTrainee<'_> {
    /// `epochs` passes of GRPO over `round`'s instances.
    #[allow(clippy::too_many_lines)]
    pub(crate) fn grpo_round(
        &mut self,
        round: &RoundData<'_>,
        s: &mut Session<'_>,
    ) -> Result<Trained, TrainError> {
        let cfg = self.cfg;
        let (r, train) = (round.round, round.instances);
        if self.reference.is_none() && cfg.grpo.beta > 0.0 {
            self.reference = Some(load_policy(&s.folder().join("reference.safetensors"))?);
        }
        let g = cfg.grpo.group_size;
        let pool = InstancePool::new(train, Optima::AsStored)?;
        let per_epoch = train.len().div_ceil(cfg.grpo.prompts_per_step);
        let t_stage = Instant::now();
        s.progress().begin(&format!("round {r}"), (per_epoch * cfg.rounds.epochs as usize) as u64);
        let steps0 = s.state.grpo_steps;
        let mut last = (f64::NAN, f64::NAN);
        let mut trained = Trained::default();
        for epoch in 0..cfg.rounds.epochs {
            let mut order: Vec<usize> = (0..train.len()).collect();
            Rng::from_counters(&[cfg.seed, TAG_ROUND, r.into(), epoch.into()]).shuffle(&mut order);
            let mut at = 0;
            while at < order.len() {
                let step = s.state.grpo_steps;
                if let Err(e) = s
                    .check_cancel(&format!("in round {r}, before GRPO step {step}"))
                    .map_err(TrainError::from)
                    .and_then(|()| self.check_stop(step))
                {
                    s.progress().end(&format!("round {r}: stopped"));
                    return Err(e);
                }
                let t0 = Instant::now();
                tch::manual_seed(hash(&[cfg.seed, TAG_GRPO, step]) as i64);
                let pool_left = &order[at..];
                let mut sampled = Sampled::default();
                let reward = &mut *self.reward;
                let policy = &self.policy;
                let draw = grpo::draw_groups(pool_left.len(), &cfg.grpo, |range| {
                    sample_groups(policy, &pool, train, &pool_left[range], &mut *reward, cfg, &mut sampled)
                })?;
                at += draw.drawn;
                for ((&i, &rw), &v) in sampled.idx.iter().zip(&sampled.rewards).zip(&sampled.valid) {
                    trained.samples.push((i, rw, v));
                }
                let scored = sampled.rollouts(train, &draw.used, g);
                let sample_s = t0.elapsed().as_secs_f64();
                // The share of the run's prompts drawn before this step.
                let passes = f64::from(cfg.rounds.rounds) * f64::from(cfg.rounds.epochs);
                let done = f64::from(r * cfg.rounds.epochs + epoch)
                    + (at - draw.drawn) as f64 / train.len().max(1) as f64;
                let lr = cfg.grpo.lr_at(done / passes);
                let st = grpo::update(
                    &self.policy,
                    self.reference.as_ref(),
                    &mut self.opt,
                    &scored,
                    &cfg.grpo,
                    lr,
                    self.workers.as_ref(),
                )?;
                for (inst, a) in scored.instances.iter().zip(&st.advantages) {
                    if let Some(a) = a {
                        let e = trained.abs_advantage.entry(inst.grid.width()).or_default();
                        (e.0, e.1) = (e.0 + f64::from(a.abs()), e.1 + 1);
                    }
                }
                let step_s = t0.elapsed().as_secs_f64();
                s.add_training(step_s);
                let mut line = serde_json::to_value(&st).unwrap_or_default();
                line["phase"] = "grpo".into();
                line["round"] = r.into();
                line["epoch"] = epoch.into();
                line["lr"] = lr.into();
                line["step"] = step.into();
                line["train_s"] = s.train_s().into();
                line["sample_s"] = sample_s.into();
                line["update_s"] = (step_s - sample_s).into();
                if cfg.grpo.dynamic_sampling {
                    line["groups_sampled"] = draw.drawn.into();
                    line["gen_batches"] = draw.batches.into();
                }
                s.step_line(&line)?;
                s.state.grpo_curve.push((step, st.reward, st.valid));
                s.state.grpo_steps += 1;
                last = (st.reward, st.valid);
                s.progress()
                    .advance(1, &format!("reward {:.3} valid {:.2} kl {:.4}", st.reward, st.valid, st.kl));
            }
        }
        s.progress().end(&format!(
            "round {r}: {} in {:.0} s (last reward {:.3}, sampled valid {:.2})",
            count(s.state.grpo_steps - steps0, "GRPO step", "GRPO steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        trained.figures.insert("grpo_steps".into(), (s.state.grpo_steps - steps0).into());
        Ok(trained)
    }
}
