//! Held-out levels played to measure a policy, whoever acts: each level `plays` times, each play
//! one episode from the level's start, the actions from the host's callback. Per level: the plays
//! that succeeded (every agent on its goal with no failure, within the episode limit) and, over
//! those, the sum of costs (each agent's time of its last arrival on its goal) against the level's
//! optimum when the level has one. `floe levels`' PPO is measured with it, and Python's
//! `floe.evaluate` runs a Python policy through it; [`cvar`] reads the tail.

use std::sync::Arc;

use floe_core::engine::{
    event, outcome, CpuEngine, Engine, EngineError, EnvConfig, InstancePool, Optima, StepBuffers, NONE,
};
use floe_core::Instance;

/// The actions of one step: the step's buffers in, one action per agent slot out.
pub type Act<'a, E> = dyn FnMut(&StepBuffers, &mut [u8]) -> Result<(), E> + 'a;

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

    /// The mean sum of costs over the optimum of its successes, where it has one.
    #[must_use]
    pub fn cost_ratio(&self) -> Option<f64> {
        (self.costed > 0).then(|| self.cost_ratio_sum / f64::from(self.costed))
    }
}

/// Plays every level of `levels` `plays` times, `env.num_envs` environments at a time (every
/// other field of `env` as given: its collision mode, episode limit and observation), on the
/// CPU engine reset with `seed`. Before each step `act` gets the step's buffers (the
/// observations of every environment's agent slots) and writes one action per agent slot
/// (`num_envs × max_agents`, zeroed before each call). Optima are read as the levels store them.
///
/// # Errors
/// [`EngineError`] for levels or a configuration the engine refuses (no environments among
/// them), and what `act` returns.
pub fn play<E: From<EngineError>>(
    levels: &[Instance],
    plays: u32,
    env: &EnvConfig,
    seed: u64,
    act: &mut Act<'_, E>,
) -> Result<Vec<LevelResult>, E> {
    let pool = Arc::new(InstancePool::new(levels, Optima::AsStored)?);
    let order: Vec<usize> = (0..levels.len()).flat_map(|l| std::iter::repeat_n(l, plays as usize)).collect();
    let mut results = vec![LevelResult::default(); levels.len()];
    let k = pool.max_agents();
    for chunk in order.chunks(env.num_envs.max(1)) {
        let envs = chunk.len();
        let mut engine = CpuEngine::new(EnvConfig { num_envs: envs, ..env.clone() }, Arc::clone(&pool))?;
        let mut out = StepBuffers::new(&engine.sizes());
        engine.reset(seed, out.view())?;
        for (e, &l) in chunk.iter().enumerate() {
            engine.reset_to(e, l, out.view())?;
        }
        let mut finished = vec![false; envs];
        // Per agent slot: the step of its last arrival on its goal (NONE while away).
        let mut arrived = vec![NONE; envs * k];
        let mut acts = vec![0u8; envs * k];
        for t in 1..=env.episode_limit {
            acts.fill(0);
            act(&out, &mut acts)?;
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

/// The mean of the worst `alpha` share of `rates` (SFL's CVaR of the success rate): the rates
/// sorted, the lowest `⌈alpha · n⌉` (at least one) averaged; 0 for no rates. NaN rates sort
/// above every number.
#[must_use]
pub fn cvar(rates: &[f64], alpha: f64) -> f64 {
    if rates.is_empty() {
        return 0.0;
    }
    let mut rates = rates.to_vec();
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

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::generator::GeneratorConfig;

    #[test]
    fn plays_count_every_level_and_an_action_callback_fails_the_call() {
        let levels = floe_core::generator::generate(&GeneratorConfig::default().size(5).count(3).seed(4))
            .expect("levels");
        let env = EnvConfig { num_envs: 2, episode_limit: 4, ..EnvConfig::default() };
        let mut calls = 0;
        let got = play::<EngineError>(&levels, 3, &env, 1, &mut |_, acts| {
            calls += 1;
            acts.fill(0);
            Ok(())
        })
        .expect("played");
        // Standing still on a 5×5 level succeeds nowhere within 4 steps: every play counted, none won.
        assert_eq!(got.iter().map(|r| (r.plays, r.successes)).collect::<Vec<_>>(), vec![(3, 0); 3]);
        assert_eq!(calls, 5 * 4, "9 plays in chunks of 2: 5 chunks of 4 steps");
        let failing: Result<_, EngineError> =
            play(&levels, 1, &env, 1, &mut |_, _| Err(EngineError::Invalid("no actions".into())));
        assert!(failing.unwrap_err().to_string().contains("no actions"));
    }

    #[test]
    fn cvar_averages_the_worst_share() {
        assert_eq!(cvar(&[], 0.1), 0.0);
        assert_eq!(cvar(&[1.0, 0.0, 0.5, 0.25], 0.5), 0.125);
        assert_eq!(cvar(&[1.0, 0.0, 0.5, 0.25], 0.01), 0.0, "at least one level");
        assert_eq!(cvar(&[0.5, 1.0], 1.0), 0.75);
    }
}
