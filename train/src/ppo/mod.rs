//! PPO from scratch on the batched engine, with no Python in the loop: CleanRL's PPO (clipped
//! objective, GAE(λ), a value head, an entropy bonus, advantages normalised per minibatch,
//! global-norm gradient clipping, the learning rate annealed linearly to 2 % of its start, where
//! it stays for the rest of the run) over one actor-critic that
//! every agent shares ([`policy::ActorCritic`]), each agent acting on its own window (independent
//! PPO with shared parameters). Strict collisions and the engine's default rewards, per agent.
//!
//! A level sampler (floe-levels' [`Levels`]) steers the levels played: after each rollout it gets
//! the episodes that ended in it with the PPO's score of each, PLR's positive value loss (the
//! mean of `max(Â, 0)` over the episode's agent-steps in the rollout), and its weights and
//! refills are applied before the next rollout. A robust sampler (robust PLR,
//! [`Levels::robust`]) gets its scores from every episode, but the update learns from the
//! agent-steps of replayed levels alone: those the driver marks as a level's first play
//! ([`Levels::first_play`]) take no gradient.
//!
//! | module | what |
//! |---|---|
//! | [`policy`] | the shared actor-critic over one agent's window |
//! | [`eval`] | held-out levels played by the trained policy: success, cost over the optimum |
//!
//! Environment `e`'s agent slot `a` is row `e·K + a` of every per-agent tensor. Padding slots and
//! agents of smaller levels are rows whose goal plane is empty (every agent in play sees its
//! goal, in the window or on its border): they are left out of the forward passes and the loss.

pub mod bench;
pub mod eval;
pub mod policy;

use std::sync::Arc;

use floe_core::engine::{
    obs_stride, CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers,
};
use floe_levels::Levels;
use serde::{Deserialize, Serialize};
use tch::nn::{self, OptimizerConfig};
use tch::{Kind, Tensor};

use crate::error::TrainError;
use policy::ActorCritic;

/// PPO's settings (serde; defaults in brackets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PpoConfig {
    /// Observation radius r: a `(2r+1)²` window per agent \[3\].
    pub radius: u32,
    /// Units of each hidden layer \[256; about 105 K parameters at radius 3\].
    pub hidden: i64,
    /// Environments stepped together \[256\].
    pub envs: usize,
    /// Steps per environment in a rollout \[32\].
    pub rollout: usize,
    /// Passes over a rollout \[2\].
    pub epochs: usize,
    /// Minibatches a pass \[4\].
    pub minibatches: usize,
    /// Adam's learning rate at the start, annealed linearly over the run to 2 % of it and held
    /// there (never to 0: the run's last updates still move the policy) \[2e-3; at 5e-4, CleanRL's
    /// 2.5e-4 doubled, a run on `floe levels`' training space had not begun to succeed after
    /// 650 K steps, at 2e-3 it succeeded in 38 % of its episodes by then\].
    pub lr: f64,
    /// Discount \[0.99\].
    pub gamma: f64,
    /// GAE's λ \[0.95\].
    pub gae_lambda: f64,
    /// The clip range of the probability ratio \[0.2\].
    pub clip: f64,
    /// Entropy bonus \[0.01\].
    pub ent_coef: f64,
    /// Value loss weight \[0.5\].
    pub vf_coef: f64,
    /// Global gradient norm limit \[0.5\].
    pub max_grad_norm: f64,
    /// Steps before an episode is truncated \[96\].
    pub episode_limit: u32,
}

impl Default for PpoConfig {
    fn default() -> Self {
        PpoConfig {
            radius: 3,
            hidden: 256,
            envs: 256,
            rollout: 32,
            epochs: 2,
            minibatches: 4,
            lr: 2e-3,
            gamma: 0.99,
            gae_lambda: 0.95,
            clip: 0.2,
            ent_coef: 0.01,
            vf_coef: 0.5,
            max_grad_norm: 0.5,
            episode_limit: 96,
        }
    }
}

impl PpoConfig {
    /// Checks every setting.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the setting.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |m: String| Err(TrainError::Input(format!("ppo: {m}")));
        if !(1..=7).contains(&self.radius) {
            return bad(format!("radius {} is outside 1..=7", self.radius));
        }
        if self.hidden < 1 || self.envs == 0 || self.rollout == 0 || self.epochs == 0 || self.minibatches == 0
        {
            return bad("hidden, envs, rollout, epochs and minibatches must be at least 1".into());
        }
        for (name, v) in [("lr", self.lr), ("clip", self.clip), ("max_grad_norm", self.max_grad_norm)] {
            if !(v.is_finite() && v > 0.0) {
                return bad(format!("{name} {v} must be positive"));
            }
        }
        for (name, v) in [("gamma", self.gamma), ("gae_lambda", self.gae_lambda)] {
            if !(0.0..=1.0).contains(&v) {
                return bad(format!("{name} {v} is outside [0, 1]"));
            }
        }
        for (name, v) in [("ent_coef", self.ent_coef), ("vf_coef", self.vf_coef)] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(format!("{name} {v} must be finite and not negative"));
            }
        }
        if self.episode_limit == 0 {
            return bad("episode_limit must be at least 1".into());
        }
        Ok(())
    }

    /// The engine's configuration: strict collisions, the default rewards, bytes observations.
    #[must_use]
    pub fn engine(&self, num_envs: usize) -> EnvConfig {
        EnvConfig {
            num_envs,
            mode: CollisionMode::Strict,
            episode_limit: self.episode_limit,
            obs_radius: self.radius,
            ..EnvConfig::default()
        }
    }
}

/// What one update reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct UpdateReport {
    /// Environment steps so far.
    pub env_steps: u64,
    /// Episodes that ended in the rollout, and the share of them that succeeded.
    pub episodes: usize,
    pub success: f64,
    /// The mean loss terms of the update.
    pub policy_loss: f64,
    pub value_loss: f64,
    pub entropy: f64,
    /// Slots the sampler refilled after the rollout.
    pub refilled: usize,
    /// Agent-steps the rollout played, and those the update learned from (fewer under a robust
    /// sampler: not the first plays).
    pub samples: usize,
    pub trained: usize,
}

/// A PPO run on one engine, its levels steered by a sampler.
pub struct Ppo {
    cfg: PpoConfig,
    vs: nn::VarStore,
    net: ActorCritic,
    opt: nn::Optimizer,
    engine: CpuEngine,
    out: StepBuffers,
    levels: Levels,
    k: usize,
    stride: usize,
    env_steps: u64,
}

impl std::fmt::Debug for Ppo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ppo")
            .field("cfg", &self.cfg)
            .field("env_steps", &self.env_steps)
            .finish_non_exhaustive()
    }
}

/// One episode that ended in a rollout: its environment, the rollout steps of it
/// (`first..=last`), and the step it ended in as the level sampler counts steps (with the
/// environment, the key the sampler's kept episodes are found by).
struct Ended {
    env: usize,
    first: usize,
    last: usize,
    step: u64,
}

/// What a rollout gathered: per step the rows in play, their windows (bytes), actions,
/// log-probabilities; per step and row the values (one step more: where it stopped), rewards,
/// episode ends and rows in play; the episodes that ended; under a robust sampler, per step,
/// which rows in play learn.
struct Rollout {
    rows: Vec<Tensor>,
    windows: Vec<Tensor>,
    actions: Vec<Tensor>,
    logps: Vec<Tensor>,
    values: Tensor,
    rewards: Tensor,
    dones: Tensor,
    in_play: Tensor,
    ended: Vec<Ended>,
    learns: Option<Vec<Vec<bool>>>,
    episodes: usize,
    successes: usize,
    /// Agent rows a step: environments × agent slots.
    n: i64,
}

/// The update's samples: every (step, row in play) of a rollout, but the first plays' under a
/// robust sampler.
struct Batch {
    obs: Tensor,
    act: Tensor,
    old_logp: Tensor,
    adv: Tensor,
    ret: Tensor,
    /// Agent-steps played, and those kept to learn from.
    played: usize,
    samples: i64,
}

impl Batch {
    fn of(r: &Rollout, advantages: &Tensor, returns: &Tensor) -> Self {
        let mut obs = Tensor::cat(&r.windows, 0);
        let mut act = Tensor::cat(&r.actions, 0);
        let mut old_logp = Tensor::cat(&r.logps, 0);
        let flat: Vec<Tensor> = r.rows.iter().enumerate().map(|(t, rows)| rows + (t as i64 * r.n)).collect();
        let mut flat = Tensor::cat(&flat, 0);
        let played = flat.size()[0] as usize;
        if let Some(learns) = &r.learns {
            // The first plays' agent-steps leave the update (their scores went to the sampler).
            let keep: Vec<i64> =
                learns.concat().iter().enumerate().filter(|(_, &l)| l).map(|(i, _)| i as i64).collect();
            let keep = Tensor::from_slice(&keep);
            (obs, act, old_logp, flat) = (
                obs.index_select(0, &keep),
                act.index_select(0, &keep),
                old_logp.index_select(0, &keep),
                flat.index_select(0, &keep),
            );
        }
        let adv = advantages.view([-1]).index_select(0, &flat);
        let ret = returns.view([-1]).index_select(0, &flat);
        let samples = obs.size()[0];
        Batch { obs, act, old_logp, adv, ret, played, samples }
    }
}

/// The mean losses of an update's minibatches.
struct Losses {
    policy: f64,
    value: f64,
    entropy: f64,
}

impl Ppo {
    /// A run of `cfg` on a pool of `pool` levels drawn from `levels`' space (with its room),
    /// libtorch's generator seeded with `seed` (the policy's weights, its sampling) and the
    /// engine with `seed` too.
    ///
    /// # Errors
    /// A configuration [`PpoConfig::validate`] refuses, levels that cannot be drawn, the
    /// engine's or the sampler's errors.
    pub fn new(cfg: PpoConfig, mut levels: Levels, pool: usize, seed: u64) -> Result<Self, TrainError> {
        cfg.validate()?;
        tch::manual_seed(seed as i64);
        let instances = levels.draw(pool).map_err(levels_error)?;
        let room = levels.source().room();
        let pool = Arc::new(InstancePool::with_room(&instances, Optima::AsStored, room)?);
        let mut engine = CpuEngine::new(cfg.engine(cfg.envs), pool)?;
        let mut out = StepBuffers::new(&engine.sizes());
        engine.reset(seed, out.view())?;
        levels.start(&mut engine, out.view()).map_err(levels_error)?;
        let vs = policy::store();
        let net = ActorCritic::new(&vs, cfg.radius, cfg.hidden);
        let opt = nn::Adam { eps: 1e-5, ..nn::Adam::default() }.build(&vs, cfg.lr)?;
        let (k, stride) = (engine.sizes().max_agents, obs_stride(cfg.radius));
        Ok(Ppo { cfg, vs, net, opt, engine, out, levels, k, stride, env_steps: 0 })
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> &ActorCritic {
        &self.net
    }

    /// Its variables.
    #[must_use]
    pub fn store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// The level sampler, with what it did.
    #[must_use]
    pub fn levels(&self) -> &Levels {
        &self.levels
    }

    /// Environment steps taken so far.
    #[must_use]
    pub fn env_steps(&self) -> u64 {
        self.env_steps
    }

    /// One rollout and one update; `total` is the run's planned environment steps (for the
    /// learning rate's annealing). The stages, in order: the learning rate for this point of the
    /// run, the rollout, the advantages and returns, the sampler's scores of the episodes that
    /// ended, the minibatch epochs, and the sampler's call with those scores.
    ///
    /// # Errors
    /// The engine's or the sampler's errors.
    pub fn update(&mut self, total: u64) -> Result<UpdateReport, TrainError> {
        self.anneal(total);
        let rollout = self.rollout()?;
        let (advantages, returns) = self.advantages(&rollout)?;
        let scores = self.scores(&rollout, &advantages)?;
        let batch = Batch::of(&rollout, &advantages, &returns);
        let losses = self.epochs(&batch);
        let applied = self
            .levels
            .update(&mut self.engine, None, Some(&scores), self.out.view())
            .map_err(levels_error)?;
        Ok(UpdateReport {
            env_steps: self.env_steps,
            episodes: rollout.episodes,
            success: rollout.successes as f64 / rollout.episodes.max(1) as f64,
            policy_loss: losses.policy,
            value_loss: losses.value,
            entropy: losses.entropy,
            refilled: applied.refilled,
            samples: batch.played,
            trained: batch.samples as usize,
        })
    }

    /// The learning rate at this point of a run of `total` environment steps: annealed linearly
    /// from `lr` to 2 % of it, and held there.
    fn anneal(&mut self, total: u64) {
        let frac = 1.0 - (self.env_steps as f64 / total.max(1) as f64).min(1.0);
        self.opt.set_lr(self.cfg.lr * frac.max(0.02));
    }

    /// `rollout` steps of every environment with actions sampled from the policy, each step
    /// recorded by the level sampler (no call: the sampler is called once the update is done).
    fn rollout(&mut self) -> Result<Rollout, TrainError> {
        let (t_len, b, k) = (self.cfg.rollout, self.cfg.envs, self.k);
        let n = (b * k) as i64;
        let gamma = self.cfg.gamma as f32;
        let d = self.net.inputs;
        let zeros = |rows: usize| Tensor::zeros([rows as i64, n], (Kind::Float, tch::Device::Cpu));
        let mut r = Rollout {
            rows: Vec::with_capacity(t_len),
            windows: Vec::with_capacity(t_len),
            actions: Vec::with_capacity(t_len),
            logps: Vec::with_capacity(t_len),
            values: zeros(t_len + 1),
            rewards: zeros(t_len),
            dones: zeros(t_len),
            in_play: zeros(t_len),
            ended: Vec::new(),
            learns: self.levels.robust().then(|| Vec::with_capacity(t_len)),
            episodes: 0,
            successes: 0,
            n,
        };
        let mut first = vec![0usize; b];
        for t in 0..t_len {
            let active = self.net.rows_in_play(&self.out.obs, self.stride);
            let idx = Tensor::from_slice(&active);
            let x_bytes = Tensor::from_slice(&self.out.obs)
                .view([n, self.stride as i64])
                .narrow(1, 0, d)
                .index_select(0, &idx);
            let (logits, value) = tch::no_grad(|| self.net.forward(&x_bytes.to_kind(Kind::Float)));
            let action = ActorCritic::sample(&logits);
            let logp =
                logits.log_softmax(-1, Kind::Float).gather(1, &action.unsqueeze(-1), false).squeeze_dim(-1);
            let mut acts = vec![0u8; n as usize];
            ActorCritic::put_actions(&active, &action, &mut acts)?;
            let _ = r.values.get(t as i64).index_put_(&[Some(idx.shallow_clone())], &value, false);
            let _ = r.in_play.get(t as i64).index_fill_(0, &idx, 1.0);
            self.engine.step(&acts, self.out.view())?;
            self.env_steps += b as u64;
            let mut reward = self.out.rewards.clone();
            let mut done = vec![0f32; n as usize];
            let mut truncated: Vec<i64> = Vec::new();
            // The step's index as the sampler records it: an episode's key with its environment.
            let step = self.levels.steps_recorded();
            for e in 0..b {
                let (term, trunc) = (self.out.terminated[e] != 0, self.out.truncated[e] != 0);
                if term || trunc {
                    done[e * k..(e + 1) * k].fill(1.0);
                    r.episodes += 1;
                    r.successes +=
                        usize::from(self.out.info[e].outcome == floe_core::engine::outcome::SUCCESS);
                    r.ended.push(Ended { env: e, first: first[e], last: t, step });
                    first[e] = t + 1;
                    if trunc && !term {
                        truncated.push(e as i64);
                    }
                }
            }
            // A truncated episode is cut, not over: its last reward gets the value of its final
            // observation.
            if !truncated.is_empty() {
                let fin = self.net.rows_in_play(&self.out.final_obs, self.stride);
                let keep: Vec<i64> =
                    fin.into_iter().filter(|&row| truncated.contains(&(row / k as i64))).collect();
                if !keep.is_empty() {
                    let kidx = Tensor::from_slice(&keep);
                    let xf = self.net.windows(&self.out.final_obs, self.stride, Some(&kidx));
                    let (_, vf) = tch::no_grad(|| self.net.forward(&xf));
                    for (&row, v) in keep.iter().zip(Vec::<f32>::try_from(&vf)?) {
                        reward[row as usize] += gamma * v;
                    }
                }
            }
            r.rewards.get(t as i64).copy_(&Tensor::from_slice(&reward));
            r.dones.get(t as i64).copy_(&Tensor::from_slice(&done));
            self.levels.record(&self.engine, &self.out.view()).map_err(levels_error)?;
            if let Some(learns) = &mut r.learns {
                // Under a robust sampler, the rows that learn: replays only.
                let first_play = self.levels.first_play();
                learns.push(active.iter().map(|&row| !first_play[row as usize / k]).collect());
            }
            r.rows.push(idx);
            r.windows.push(x_bytes);
            r.actions.push(action);
            r.logps.push(logp);
        }
        Ok(r)
    }

    /// GAE(λ) per agent row, from the value of where the rollout stopped (taken before any refill
    /// moves an environment), and the returns.
    fn advantages(&self, r: &Rollout) -> Result<(Tensor, Tensor), TrainError> {
        let (cfg, t_len) = (&self.cfg, self.cfg.rollout as i64);
        let last = self.net.rows_in_play(&self.out.obs, self.stride);
        if !last.is_empty() {
            let lidx = Tensor::from_slice(&last);
            let x = self.net.windows(&self.out.obs, self.stride, Some(&lidx));
            let (_, v) = tch::no_grad(|| self.net.forward(&x));
            let _ = r.values.get(t_len).index_put_(&[Some(lidx)], &v, false);
        }
        let advantages = Tensor::zeros([t_len, r.n], (Kind::Float, tch::Device::Cpu));
        let mut next = Tensor::zeros([r.n], (Kind::Float, tch::Device::Cpu));
        for t in (0..t_len).rev() {
            let not_done = r.dones.get(t).neg() + 1.0;
            let delta = r.rewards.get(t) + r.values.get(t + 1) * cfg.gamma * &not_done - r.values.get(t);
            next = delta + next * (cfg.gamma * cfg.gae_lambda) * &not_done;
            advantages.get(t).copy_(&next);
        }
        let returns = &advantages + r.values.narrow(0, 0, t_len);
        Ok((advantages, returns))
    }

    /// PLR's score of each episode that ended (the mean positive advantage of its agent-steps),
    /// in the order the sampler keeps them, found by each kept episode's environment and end
    /// step rather than by the order of the rollout's loops.
    fn scores(&self, r: &Rollout, advantages: &Tensor) -> Result<Vec<f32>, TrainError> {
        let k = self.k;
        let positive = advantages.clamp_min(0.0) * &r.in_play;
        let mut by_key = std::collections::HashMap::with_capacity(r.ended.len());
        for en in &r.ended {
            let span = (en.last - en.first + 1) as i64;
            let part = positive.narrow(0, en.first as i64, span).narrow(1, (en.env * k) as i64, k as i64);
            let count = r
                .in_play
                .narrow(0, en.first as i64, span)
                .narrow(1, (en.env * k) as i64, k as i64)
                .sum(Kind::Float);
            let score = (part.sum(Kind::Float) / count.clamp_min(1.0)).double_value(&[]) as f32;
            by_key.insert((en.env as u32, en.step), score);
        }
        let (envs, steps) = (self.levels.pending_envs(), self.levels.pending_end_steps());
        envs.iter()
            .zip(steps)
            .map(|(&env, &step)| {
                by_key.get(&(env, step)).copied().ok_or_else(|| {
                    TrainError::Input(format!(
                        "the sampler keeps an episode of environment {env} that ended in step {step}, which this rollout did not play"
                    ))
                })
            })
            .collect()
    }

    /// The clipped-objective epochs over the batch's minibatches; the mean losses.
    fn epochs(&mut self, batch: &Batch) -> Losses {
        let cfg = self.cfg.clone();
        let samples = batch.samples;
        let mb = (samples / cfg.minibatches as i64).max(1);
        let (mut pl, mut vl, mut en, mut count) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for _ in 0..cfg.epochs {
            let perm = Tensor::randperm(samples, (Kind::Int64, tch::Device::Cpu));
            let mut start = 0;
            while start < samples {
                let take = mb.min(samples - start);
                let i = perm.narrow(0, start, take);
                start += take;
                let x = batch.obs.index_select(0, &i).to_kind(Kind::Float);
                let (logits, value) = self.net.forward(&x);
                let logp_all = logits.log_softmax(-1, Kind::Float);
                let a = batch.act.index_select(0, &i);
                let logp = logp_all.gather(1, &a.unsqueeze(-1), false).squeeze_dim(-1);
                let entropy = -(logp_all.exp() * &logp_all)
                    .sum_dim_intlist([-1i64].as_slice(), false, Kind::Float)
                    .mean(Kind::Float);
                let ratio = (&logp - batch.old_logp.index_select(0, &i)).exp();
                let mut a_mb = batch.adv.index_select(0, &i);
                if take > 1 {
                    a_mb = (&a_mb - a_mb.mean(Kind::Float)) / (a_mb.std(true) + 1e-8);
                }
                let pg = -(&ratio * &a_mb)
                    .minimum(&(ratio.clamp(1.0 - cfg.clip, 1.0 + cfg.clip) * &a_mb))
                    .mean(Kind::Float);
                let v_loss = (value - batch.ret.index_select(0, &i)).square().mean(Kind::Float) * 0.5;
                let loss = &pg + &v_loss * cfg.vf_coef - &entropy * cfg.ent_coef;
                self.opt.backward_step_clip_norm(&loss, cfg.max_grad_norm);
                pl += pg.double_value(&[]);
                vl += v_loss.double_value(&[]);
                en += entropy.double_value(&[]);
                count += 1.0;
            }
        }
        Losses { policy: pl / count.max(1.0), value: vl / count.max(1.0), entropy: en / count.max(1.0) }
    }

    /// Trains until `env_steps` environment steps are taken, calling `on_update` after each
    /// update.
    ///
    /// # Errors
    /// As [`Ppo::update`].
    pub fn train(
        &mut self,
        env_steps: u64,
        mut on_update: impl FnMut(&Ppo, &UpdateReport),
    ) -> Result<(), TrainError> {
        while self.env_steps < env_steps {
            let report = self.update(env_steps)?;
            on_update(self, &report);
        }
        Ok(())
    }
}

/// A level-sampling error as the trainer's.
/// The level-sampling driver `spec` describes, its sampler made by the registry.
///
/// # Errors
/// A space out of range, a sampler that cannot be made.
pub fn levels_of(spec: &floe_levels::LevelsSpec) -> Result<Levels, TrainError> {
    floe_plugin_registry::levels(spec).map_err(|e| match e {
        floe_plugin_registry::RegistryError::Levels(l) => levels_error(l),
        other => TrainError::Input(other.to_string()),
    })
}

pub(crate) fn levels_error(e: floe_levels::LevelsError) -> TrainError {
    match e {
        floe_levels::LevelsError::Engine(e) => e.into(),
        floe_levels::LevelsError::Generate(e) => e.into(),
        other => TrainError::Input(other.to_string()),
    }
}
