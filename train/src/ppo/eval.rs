//! Held-out levels played by a PPO policy (or by uniformly random actions, the baseline): each
//! level `repeats` times, each play one episode from the level's start, actions sampled from the
//! policy as in training. Per level: the plays that succeeded (every agent on its goal with no
//! failure, within the episode limit) and, over those, the sum of costs (each agent's time of its
//! last arrival on its goal) against the level's optimum when the level has one.

use std::sync::Arc;

use floe_core::engine::{
    event, obs_stride, outcome, CpuEngine, Engine, InstancePool, Optima, StepBuffers, NONE,
};
use floe_core::Instance;
use tch::{Kind, Tensor};

use super::policy::ActorCritic;
use super::PpoConfig;
use crate::error::TrainError;

/// One held-out level's results.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelResult {
    /// Plays of it.
    pub plays: u32,
    /// Plays that succeeded.
    pub successes: u32,
    /// Over the successes on a level with a known optimum: the sum of (sum of costs / optimum),
    /// and how many there were.
    pub cost_ratio_sum: f64,
    pub costed: u32,
}

impl LevelResult {
    /// The share of plays that succeeded.
    #[must_use]
    pub fn success_rate(&self) -> f64 {
        f64::from(self.successes) / f64::from(self.plays.max(1))
    }
}

/// Who acts.
#[derive(Debug, Clone, Copy)]
pub enum Actor<'a> {
    /// The policy's sampled actions.
    Policy(&'a ActorCritic),
    /// Uniformly random actions.
    Random,
}

/// Plays every level of `levels` `repeats` times (at most `batch` environments at once), with
/// the engine of `cfg` (its radius and episode limit); libtorch's generator seeded with `seed`.
///
/// # Errors
/// Levels the engine refuses.
pub fn evaluate(
    actor: Actor<'_>,
    levels: &[Instance],
    repeats: u32,
    cfg: &PpoConfig,
    batch: usize,
    seed: u64,
) -> Result<Vec<LevelResult>, TrainError> {
    tch::manual_seed(seed as i64);
    let pool = Arc::new(InstancePool::new(levels, Optima::AsStored)?);
    let plays: Vec<usize> =
        (0..levels.len()).flat_map(|l| std::iter::repeat_n(l, repeats as usize)).collect();
    let mut results = vec![LevelResult::default(); levels.len()];
    let k = pool.max_agents();
    let stride = obs_stride(cfg.radius);
    let mut rng = floe_core::rng::Rng::from_counters(&[seed, 0xe7a1]);
    for chunk in plays.chunks(batch.max(1)) {
        let envs = chunk.len();
        let mut engine = CpuEngine::new(cfg.engine(envs), Arc::clone(&pool))?;
        let mut out = StepBuffers::new(&engine.sizes());
        engine.reset(seed, out.view())?;
        for (e, &l) in chunk.iter().enumerate() {
            engine.reset_to(e, l, out.view())?;
        }
        let mut finished = vec![false; envs];
        // Per agent slot: the step of its last arrival on its goal (NONE while away).
        let mut arrived = vec![NONE; envs * k];
        let mut acts = vec![0u8; envs * k];
        for t in 1..=cfg.episode_limit {
            acts.fill(0);
            match actor {
                Actor::Policy(net) => {
                    let active = net.rows_in_play(&out.obs, stride);
                    if !active.is_empty() {
                        let idx = Tensor::from_slice(&active);
                        let x = net.windows(&out.obs, stride, Some(&idx));
                        let (logits, _) = tch::no_grad(|| net.forward(&x));
                        let a = logits.softmax(-1, Kind::Float).multinomial(1, true).squeeze_dim(-1);
                        for (&row, a) in active.iter().zip(Vec::<i64>::try_from(&a)?) {
                            acts[row as usize] = a as u8;
                        }
                    }
                }
                Actor::Random => acts.iter_mut().for_each(|a| *a = rng.below(5) as u8),
            }
            engine.step(&acts, out.view())?;
            for e in 0..envs {
                if finished[e] {
                    continue;
                }
                let ev = &out.events[e * k..(e + 1) * k];
                for (a, &x) in ev.iter().enumerate() {
                    let slot = &mut arrived[e * k + a];
                    if x & event::AT_GOAL == 0 {
                        *slot = NONE;
                    } else if *slot == NONE {
                        *slot = t;
                    }
                }
                if out.terminated[e] == 0 && out.truncated[e] == 0 {
                    continue;
                }
                finished[e] = true;
                let l = chunk[e];
                let r = &mut results[l];
                r.plays += 1;
                if out.info[e].outcome == outcome::SUCCESS {
                    r.successes += 1;
                    let agents = levels[l].num_agents();
                    let soc: u64 = arrived[e * k..e * k + agents].iter().map(|&x| u64::from(x)).sum();
                    let opt = pool.optimal_soc(l);
                    if opt != NONE && opt > 0 {
                        r.cost_ratio_sum += soc as f64 / f64::from(opt);
                        r.costed += 1;
                    }
                }
            }
            if finished.iter().all(|&f| f) {
                break;
            }
        }
        for (e, &l) in chunk.iter().enumerate() {
            if !finished[e] {
                results[l].plays += 1;
            }
        }
    }
    Ok(results)
}

/// The mean success rate of the worst `alpha` share of levels (SFL's CVaR of the success rate):
/// levels sorted by their success rate, the lowest `⌈alpha · n⌉` averaged.
#[must_use]
pub fn cvar(results: &[LevelResult], alpha: f64) -> f64 {
    if results.is_empty() {
        return 0.0;
    }
    let mut rates: Vec<f64> = results.iter().map(LevelResult::success_rate).collect();
    rates.sort_by(f64::total_cmp);
    let take = ((alpha * rates.len() as f64).ceil() as usize).clamp(1, rates.len());
    rates[..take].iter().sum::<f64>() / take as f64
}

/// The success rate over every play, and the mean cost ratio over the successes with an optimum.
#[must_use]
pub fn summary(results: &[LevelResult]) -> (f64, Option<f64>) {
    let plays: u32 = results.iter().map(|r| r.plays).sum();
    let successes: u32 = results.iter().map(|r| r.successes).sum();
    let costed: u32 = results.iter().map(|r| r.costed).sum();
    let ratio: f64 = results.iter().map(|r| r.cost_ratio_sum).sum();
    (f64::from(successes) / f64::from(plays.max(1)), (costed > 0).then(|| ratio / f64::from(costed)))
}
