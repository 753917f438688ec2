//! Held-out levels played by a PPO policy (or by uniformly random actions, the baseline), through
//! floe-levels' [`floe_levels::eval::play`]: each level `repeats` times, each play one episode
//! from the level's start, actions sampled from the policy as in training.

use floe_core::engine::obs_stride;
use floe_core::Instance;
pub use floe_levels::eval::{summary, LevelResult};
use tch::Tensor;

use super::policy::ActorCritic;
use super::PpoConfig;
use crate::error::TrainError;

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
    let stride = obs_stride(cfg.radius);
    let mut rng = floe_core::rng::Rng::from_counters(&[seed, 0xe7a1]);
    let mut act = |out: &floe_core::engine::StepBuffers, acts: &mut [u8]| -> Result<(), TrainError> {
        match actor {
            Actor::Policy(net) => {
                let active = net.rows_in_play(&out.obs, stride);
                if !active.is_empty() {
                    let idx = Tensor::from_slice(&active);
                    let x = net.windows(&out.obs, stride, Some(&idx));
                    let (logits, _) = tch::no_grad(|| net.forward(&x));
                    ActorCritic::put_actions(&active, &ActorCritic::sample(&logits), acts)?;
                }
            }
            Actor::Random => acts.iter_mut().for_each(|a| *a = rng.below(5) as u8),
        }
        Ok(())
    };
    floe_levels::eval::play(levels, repeats, &cfg.engine(batch), seed, &mut act)
}

/// The mean success rate of the worst `alpha` share of levels ([`floe_levels::eval::cvar`] of
/// their success rates).
#[must_use]
pub fn cvar(results: &[LevelResult], alpha: f64) -> f64 {
    let rates: Vec<f64> = results.iter().map(LevelResult::success_rate).collect();
    floe_levels::eval::cvar(&rates, alpha)
}
