//! # floe-train
//!
//! GRPO training of a planner policy for MAPF-FrozenLake on libtorch (through `tch`; no other
//! floe crate links libtorch), round by round on a generator configuration that a curriculum
//! plugin or an environment engineer redesigns between rounds, as in "From Trainee to Trainer".
//!
//! | module | what |
//! |---|---|
//! | [`tokens`] | instances and plans as tokens, for any agent count |
//! | [`model`] | the policy: a small decoder-only transformer with row/column embeddings |
//! | [`sample`] | greedy and temperature decoding with a key/value cache |
//! | [`reward`] | batched verification, reward records with partial credit, the reward plugin |
//! | [`sft`] | the supervised warm start on CBS-optimal plans |
//! | [`grpo`] | the GRPO update (advantages, clipped objective, KL, aggregation) |
//! | [`optim`] | AdamW with gradient clipping and a saveable state |
//! | [`run`] | the policy as floe-rounds' trainee: warm start, GRPO round, rollouts, persistence, charts (plotters on floe-canvas) |
//! | [`experiment`] | the paper's comparison of environment designs from one warm start, and its table |
//! | [`ppo`] | PPO from scratch on the batched engine, its levels steered by a level sampler; `floe levels`' comparison of samplers ([`ppo::bench`]) |
//! | [`eval`] | the policy's greedy answers, counted by floe-rounds' tables |
//! | [`config`] | every knob, with documented defaults |
//! | [`checkpoint`] | safetensors files |
//!
//! The paper trains a pretrained 4 B-parameter language model; floe trains a small transformer
//! from scratch, starting from a supervised warm start on the generator's optimal plans.

pub mod checkpoint;
pub mod config;
pub mod error;
pub mod eval;
pub mod experiment;
pub mod grpo;
pub mod model;
pub mod optim;
pub mod ppo;
pub mod reward;
pub mod run;
pub mod sample;
pub mod sft;
pub mod tokens;
pub mod workers;

pub use config::TrainConfig;
pub use error::TrainError;
pub use eval::{evaluate, evaluate_each, EvalReport, Outcome};
pub use model::{ModelConfig, Policy};
pub use run::{load_policy, run, run_with_progress, Plugins, RunOptions, RunState, Stage};

/// Sets libtorch's CPU thread count; 0: one per core this process may run on (its CPU
/// affinity and quota, not the machine's core count).
pub fn set_threads(n: usize) {
    tch::set_num_threads(i32::try_from(thread_count(n)).unwrap_or(i32::MAX));
}

/// The thread count a configuration's `threads` stands for: itself, or for 0 one per core this
/// process may run on.
#[must_use]
pub fn thread_count(n: usize) -> usize {
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }
}

#[cfg(test)]
pub(crate) mod test_rng {
    //! libtorch's global generator is shared by the unit tests that run side by side. A test
    //! whose draws must repeat holds [`lock`] while it seeds and draws, and so does every test
    //! that draws from the generator (a new policy's weights, sampling), so that no other test's
    //! draw lands in between.

    use std::sync::{Mutex, MutexGuard, PoisonError};

    use crate::model::{ModelConfig, Policy};

    static GLOBAL: Mutex<()> = Mutex::new(());

    pub(crate) fn lock() -> MutexGuard<'static, ()> {
        GLOBAL.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every variable's values, one after the other in name order.
    pub(crate) fn flat(p: &Policy) -> Vec<f32> {
        p.named_variables()
            .iter()
            .flat_map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap())
            .collect()
    }

    /// The cosine of the angle between the moves from `start` to `a` and to `b`.
    pub(crate) fn cosine(start: &[f32], a: &[f32], b: &[f32]) -> f64 {
        let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
        for ((s, x), y) in start.iter().zip(a).zip(b) {
            let (dx, dy) = (f64::from(x - s), f64::from(y - s));
            (ab, aa, bb) = (ab + dx * dy, aa + dx * dx, bb + dy * dy);
        }
        ab / (aa * bb).sqrt().max(f64::MIN_POSITIVE)
    }

    /// A new policy with the weights `tch::manual_seed(seed)` gives.
    pub(crate) fn seeded_policy(cfg: &ModelConfig, seed: i64) -> Policy {
        let _held = lock();
        tch::manual_seed(seed);
        Policy::new(cfg).unwrap()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn libtorch_runs() {
        let t = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
        let s = (&t * &t).sum(tch::Kind::Float).double_value(&[]);
        assert!((s - 14.0).abs() < 1e-9);
    }
}
