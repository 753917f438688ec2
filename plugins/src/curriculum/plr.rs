//! `plr`: Prioritized Level Replay (Jiang, Grefenstette and Rocktäschel, 2021) over generated
//! instances.
//!
//! Each round trains on the base configuration with a share `replay_fraction` of the samples
//! replayed (none in round 0, when nothing has been played). The replayed instances are drawn
//! from the pool of instances played before (`samples > 0`), without replacement, with
//!
//! ```text
//! P = (1 − rho) · P_S + rho · P_C
//! P_S(i) = h(i)^(1/beta) / Σ_j h(j)^(1/beta),   h(i) = 1 / rank(S_i)
//! P_C(i) = (c − C_i) / Σ_j (c − C_j)             (uniform when every staleness is 0)
//! ```
//!
//! where `S_i` is the instance's score, ranked from 1 (highest; ties keep pool order), `c` the
//! round being configured and `C_i` the last round the instance was played. Scores (`score`):
//! `learnability` = p(1 − p) with p the instance's success rate (Rutherford et al., 2024, for
//! binary outcomes; the default), `reward_std` (the spread of its rollouts' rewards, which is
//! what gives GRPO a gradient), or `regret` = 1 − mean reward (for rewards at most 1).

use floe_core::rng::Rng;
use floe_plugin_api::{
    ConfigError, Curriculum, History, PluginError, ReplayRecord, ReplayRequest, RoundConfig,
};
use serde::{Deserialize, Serialize};

use super::{in_range, positive};
use crate::sampling;

/// How an instance is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlrScore {
    /// p(1 − p) of the success rate.
    Learnability,
    /// The standard deviation of the rewards.
    RewardStd,
    /// 1 − mean reward.
    Regret,
}

/// Parameters of [`Plr`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlrParams {
    /// The configuration of new instances (its own `replay_fraction` is replaced).
    pub base: RoundConfig,
    /// Share of each round (after round 0) replayed.
    pub replay_fraction: f64,
    /// The score.
    pub score: PlrScore,
    /// Temperature beta of the rank prioritisation.
    pub temperature: f64,
    /// Weight rho of staleness.
    pub staleness_coef: f64,
}

impl Default for PlrParams {
    fn default() -> Self {
        PlrParams {
            base: RoundConfig::round0_default(),
            replay_fraction: 0.5,
            score: PlrScore::Learnability,
            temperature: 0.1,
            staleness_coef: 0.3,
        }
    }
}

/// The PLR curriculum.
#[derive(Debug, Clone)]
pub struct Plr {
    p: PlrParams,
}

impl Plr {
    /// A PLR curriculum with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] or what [`RoundConfig::validate`] finds in `base`.
    pub fn new(p: PlrParams) -> Result<Self, ConfigError> {
        p.base.validate()?;
        in_range("replay_fraction", p.replay_fraction, 0.0, 1.0)?;
        positive("temperature", p.temperature)?;
        in_range("staleness_coef", p.staleness_coef, 0.0, 1.0)?;
        Ok(Plr { p })
    }

    /// An instance's score.
    #[must_use]
    pub fn score(&self, r: &ReplayRecord) -> f64 {
        match self.p.score {
            PlrScore::Learnability => {
                let p = f64::from(r.success_rate);
                p * (1.0 - p)
            }
            PlrScore::RewardStd => f64::from(r.reward_std),
            PlrScore::Regret => (1.0 - f64::from(r.mean_reward)).max(0.0),
        }
    }

    /// The replay distribution over the pool for round `round` (0 for instances never played).
    #[must_use]
    pub fn probabilities(&self, pool: &[ReplayRecord], round: u32) -> Vec<f64> {
        let eligible: Vec<usize> = (0..pool.len()).filter(|&i| pool[i].samples > 0).collect();
        let mut probs = vec![0.0; pool.len()];
        if eligible.is_empty() {
            return probs;
        }
        let mut by_score = eligible.clone();
        // Highest score first; a stable sort keeps pool order among equal scores.
        by_score.sort_by(|&a, &b| self.score(&pool[b]).total_cmp(&self.score(&pool[a])));
        let mut h = vec![0.0; pool.len()];
        for (rank0, &i) in by_score.iter().enumerate() {
            h[i] = (1.0 / (rank0 + 1) as f64).powf(1.0 / self.p.temperature);
        }
        let h_sum: f64 = h.iter().sum();
        let stale: Vec<f64> =
            (0..pool.len())
                .map(|i| {
                    if pool[i].samples > 0 {
                        f64::from(round.saturating_sub(pool[i].last_round))
                    } else {
                        0.0
                    }
                })
                .collect();
        let stale_sum: f64 = stale.iter().sum();
        let rho = self.p.staleness_coef;
        for &i in &eligible {
            let p_s = h[i] / h_sum;
            let p_c = if stale_sum > 0.0 { stale[i] / stale_sum } else { 1.0 / eligible.len() as f64 };
            probs[i] = (1.0 - rho) * p_s + rho * p_c;
        }
        probs
    }
}

impl Curriculum for Plr {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let mut cfg = self.p.base.clone();
        cfg.replay_fraction = if history.rounds.is_empty() { 0.0 } else { self.p.replay_fraction };
        Ok(cfg)
    }

    fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, PluginError> {
        let probs = self.probabilities(pool, request.round);
        let eligible: Vec<bool> = pool.iter().map(|r| r.samples > 0).collect();
        let n = eligible.iter().filter(|&&e| e).count();
        if request.count as usize > n {
            return Err(PluginError::BadInput(format!(
                "{} replays asked for, {n} instances played before",
                request.count
            )));
        }
        let mut rng = Rng::from_counters(&[request.seed, u64::from(request.round), 0x91a7]);
        Ok(sampling::without_replacement(&mut rng, &probs, &eligible, request.count as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u64, success_rate: f32, last_round: u32, samples: u32) -> ReplayRecord {
        ReplayRecord {
            id,
            size: 3,
            agents: 2,
            last_round,
            samples,
            mean_reward: success_rate,
            reward_std: 0.0,
            success_rate,
            reserved: 0,
        }
    }

    fn plr(temperature: f64, staleness_coef: f64) -> Plr {
        Plr::new(PlrParams { temperature, staleness_coef, ..PlrParams::default() }).unwrap()
    }

    #[test]
    fn rank_prioritisation_and_staleness_by_hand() {
        // Learnability 0.25, 0.09, 0.16: ranks 1, 3, 2; h = 1, 1/3, 1/2 (beta = 1), sum 11/6,
        // P_S = 6/11, 2/11, 3/11. Round 4, last played 3, 1, 4: staleness 1, 3, 0, P_C = 1/4,
        // 3/4, 0. rho = 0.5: P = 3/11 + 1/8, 1/11 + 3/8, 3/22.
        let pool = [rec(10, 0.5, 3, 4), rec(11, 0.1, 1, 4), rec(12, 0.2, 4, 4), rec(13, 0.5, 0, 0)];
        let p = plr(1.0, 0.5).probabilities(&pool, 4);
        let want = [3.0 / 11.0 + 0.125, 1.0 / 11.0 + 0.375, 3.0 / 22.0, 0.0];
        for (got, want) in p.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{p:?}");
        }
        // beta = 0.5 squares h: 1, 1/9, 1/4, sum 49/36; no staleness weight.
        let p = plr(0.5, 0.0).probabilities(&pool, 4);
        let want = [36.0 / 49.0, 4.0 / 49.0, 9.0 / 49.0, 0.0];
        for (got, want) in p.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{p:?}");
        }
        // All played this round: staleness is uniform.
        let fresh = [rec(0, 0.5, 2, 1), rec(1, 0.5, 2, 1)];
        let p = plr(1.0, 1.0).probabilities(&fresh, 2);
        assert_eq!(p, vec![0.5, 0.5]);
    }

    #[test]
    fn other_scores_and_sampling() {
        let r = ReplayRecord { reward_std: 0.3, mean_reward: 0.4, ..rec(0, 0.5, 0, 1) };
        let with = |score| Plr::new(PlrParams { score, ..PlrParams::default() }).unwrap();
        assert!((with(PlrScore::RewardStd).score(&r) - 0.3).abs() < 1e-6);
        assert!((with(PlrScore::Regret).score(&r) - 0.6).abs() < 1e-6);
        let mut p = plr(0.1, 0.3);
        let pool = [rec(0, 0.5, 0, 1), rec(1, 0.0, 0, 1), rec(2, 0.5, 0, 0)];
        let req = ReplayRequest { round: 1, count: 2, seed: 3 };
        let mut picked = p.sample_replay(&pool, &req).unwrap();
        picked.sort_unstable();
        assert_eq!(picked, vec![0, 1], "the never-played instance is not replayed");
        assert_eq!(p.sample_replay(&pool, &req).unwrap(), p.sample_replay(&pool, &req).unwrap());
        assert!(p.sample_replay(&pool, &ReplayRequest { count: 3, ..req }).is_err());
        assert_eq!(p.next_config(&History::default()).unwrap().replay_fraction, 0.0);
    }
}
