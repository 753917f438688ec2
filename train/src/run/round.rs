//! One GRPO round: its training set (newly generated and replayed), `epochs` passes of GRPO
//! steps over it, the validation, and the checkpoint.

use std::collections::BTreeMap;
use std::time::Instant;

use floe_core::engine::{InstancePool, Optima};
use floe_core::rng::{hash, Rng};
use floe_core::text::count;
use floe_core::Instance;
use floe_plugin_api::{ReplayRequest, RewardFn, RoundConfig, RoundRecord};

use super::data::generate_all;
use super::design::Designer;
use super::replay::{round_seed, Pool};
use super::rollouts::{sample_groups, Sampled};
use super::{charts, persist, Run, Stage, TAG_GRPO, TAG_REPLAY, TAG_ROUND};
use crate::error::TrainError;
use crate::grpo;
use crate::model::Policy;

impl Run<'_> {
    /// Round `r`'s training set: `samples` prompts, of which `round(replay_fraction · samples)`
    /// are replayed from the pool (as many as were played before, at most) and the rest newly
    /// generated and added to the pool. Returns the instances and their pool ids.
    fn round_data(
        &mut self,
        r: u32,
        config: &RoundConfig,
        replay: &mut Pool,
        designer: &mut Designer,
    ) -> Result<(Vec<Instance>, Vec<usize>), TrainError> {
        let cfg = self.cfg;
        let (mut fresh, wanted) = config.split_budget(cfg.rounds.samples);
        let mut replayed = Vec::new();
        if wanted > 0 {
            let count = wanted.min(replay.played());
            if count < wanted {
                self.say(&format!(
                    "round {r}: {wanted} replays asked for, {count} instances played before: {} generated new instead",
                    wanted - count
                ));
                fresh += wanted - count;
            }
            if count > 0 {
                let request = ReplayRequest {
                    round: r,
                    count: count as u32,
                    seed: hash(&[cfg.seed, TAG_REPLAY, r.into()]),
                };
                replayed = designer.sample_replay(&replay.records(), &request)?;
                fresh += count - replayed.len();
            }
        }
        let mut train = generate_all(
            &config.generator_configs(fresh, round_seed(cfg.seed, r)),
            &format!("round {r} data"),
            self.progress,
        )?;
        let mut ids = replay.add(r, &train);
        for &id in &replayed {
            train.push(replay.instances[id as usize].clone());
            ids.push(id as usize);
        }
        self.say(&format!(
            "round {r}: {} training instances ({} new, {} replayed), configuration {}",
            train.len(),
            train.len() - replayed.len(),
            replayed.len(),
            config.to_json()
        ));
        Ok((train, ids))
    }

    #[allow(clippy::too_many_lines)]
    pub(crate) fn round(
        &mut self,
        r: u32,
        config: RoundConfig,
        reference: Option<&Policy>,
        reward: &mut dyn RewardFn,
        replay: &mut Pool,
        designer: &mut Designer,
    ) -> Result<(), TrainError> {
        let cfg = self.cfg;
        let g = cfg.grpo.group_size;
        let (train, train_ids) = self.round_data(r, &config, replay, designer)?;
        let pool = InstancePool::new(&train, Optima::AsStored)?;
        let per_epoch = train.len().div_ceil(cfg.grpo.prompts_per_step);
        let t_stage = Instant::now();
        self.progress.begin(&format!("round {r}"), (per_epoch * cfg.rounds.epochs as usize) as u64);
        let steps0 = self.state.grpo_steps;
        let mut last = (f64::NAN, f64::NAN);
        let mut abs_adv: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
        for epoch in 0..cfg.rounds.epochs {
            let mut order: Vec<usize> = (0..train.len()).collect();
            Rng::from_counters(&[cfg.seed, TAG_ROUND, r.into(), epoch.into()]).shuffle(&mut order);
            let mut at = 0;
            while at < order.len() {
                if let Err(e) = self
                    .check_cancel(&format!("in round {r}, before GRPO step {}", self.state.grpo_steps))
                    .and_then(|()| self.check_stop())
                {
                    self.progress.end(&format!("round {r}: stopped"));
                    return Err(e);
                }
                let t0 = Instant::now();
                tch::manual_seed(hash(&[cfg.seed, TAG_GRPO, self.state.grpo_steps]) as i64);
                let pool_left = &order[at..];
                let mut sampled = Sampled::default();
                let draw = grpo::draw_groups(pool_left.len(), &cfg.grpo, |range| {
                    sample_groups(
                        &self.policy,
                        &pool,
                        &train,
                        &pool_left[range],
                        &mut *reward,
                        cfg,
                        &mut sampled,
                    )
                })?;
                at += draw.drawn;
                for ((&i, &rw), &v) in sampled.idx.iter().zip(&sampled.rewards).zip(&sampled.valid) {
                    replay.record(train_ids[i as usize], r, rw, v);
                }
                let scored = sampled.rollouts(&train, &draw.used, g);
                let sample_s = t0.elapsed().as_secs_f64();
                // The share of the run's prompts drawn before this step.
                let passes = f64::from(cfg.rounds.rounds) * f64::from(cfg.rounds.epochs);
                let done = f64::from(r * cfg.rounds.epochs + epoch)
                    + (at - draw.drawn) as f64 / train.len().max(1) as f64;
                let step_cfg = grpo::GrpoConfig { lr: cfg.grpo.lr_at(done / passes), ..cfg.grpo.clone() };
                let st = grpo::update(
                    &self.policy,
                    reference,
                    &mut self.opt,
                    &scored,
                    &step_cfg,
                    self.workers.as_ref(),
                )?;
                for (inst, a) in scored.instances.iter().zip(&st.advantages) {
                    if let Some(a) = a {
                        let e = abs_adv.entry(inst.grid.width()).or_default();
                        (e.0, e.1) = (e.0 + f64::from(a.abs()), e.1 + 1);
                    }
                }
                let step_s = t0.elapsed().as_secs_f64();
                self.trained += step_s;
                let mut line = serde_json::to_value(&st).unwrap_or_default();
                line["phase"] = "grpo".into();
                line["round"] = r.into();
                line["epoch"] = epoch.into();
                line["lr"] = step_cfg.lr.into();
                line["step"] = self.state.grpo_steps.into();
                line["train_s"] = self.train_s().into();
                line["sample_s"] = sample_s.into();
                line["update_s"] = (step_s - sample_s).into();
                if cfg.grpo.dynamic_sampling {
                    line["groups_sampled"] = draw.drawn.into();
                    line["gen_batches"] = draw.batches.into();
                }
                self.steps.write(&line)?;
                self.state.grpo_curve.push((self.state.grpo_steps, st.reward, st.valid));
                self.state.grpo_steps += 1;
                last = (st.reward, st.valid);
                self.progress
                    .advance(1, &format!("reward {:.3} valid {:.2} kl {:.4}", st.reward, st.valid, st.kl));
            }
        }
        self.progress.end(&format!(
            "round {r}: {} in {:.0} s (last reward {:.3}, sampled valid {:.2})",
            count(self.state.grpo_steps - steps0, "GRPO step", "GRPO steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        // The round's record first, so that the evaluation line carries its configuration.
        self.state.history.rounds.push(RoundRecord { round: r, config, results: Vec::new() });
        let report = self.evaluate(Stage::Round(r))?;
        let mut results = report.size_results();
        for res in &mut results {
            if let Some(&(sum, n)) = abs_adv.get(&res.size) {
                res.mean_abs_advantage = Some(sum / f64::from(n.max(1)));
            }
        }
        if let Some(last) = self.state.history.rounds.last_mut() {
            last.results = results;
        }
        self.state.history.validate()?;
        self.state.rounds_done = r + 1;
        self.state.replay = replay.stats.clone();
        self.checkpoint()?;
        // After the checkpoint: a round's file on disk means the checkpoint holds that round.
        persist::save_model(&self.opts.out_dir.join(format!("round-{r}.safetensors")), &self.policy)?;
        charts::plots(&self.opts.out_dir, &self.state)?;
        Ok(())
    }
}
