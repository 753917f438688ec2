//! `sec`: Self-Evolving Curriculum (Chen et al., 2025) over map sizes: a non-stationary
//! multi-armed bandit whose arms are the base configuration's sizes.
//!
//! The value `Q(c)` of each size starts at 0. For every finished round, each size the round
//! trained on (data ratio > 0) that has a result updates by TD(0) with learning rate `alpha`:
//!
//! ```text
//! Q(c) ← alpha · r(c) + (1 − alpha) · Q(c)
//! ```
//!
//! The reward `r(c)` is the round's mean absolute advantage of that size's rollouts
//! (`mean_abs_advantage`, recorded by the trainer): how much learning signal the size gave. When
//! a result does not carry it, `r(c) = 2 · v · (1 − v)` with `v` the size's valid rate, the
//! mean absolute deviation of a 0/1 reward with success rate `v` (a proxy, said so here).
//! The next round's data ratios are the Boltzmann distribution `softmax(Q / tau)`; with
//! `draws > 0`, they are instead the shares of `draws` sizes sampled from it (seeded by `seed`
//! and the round), as SEC samples a category per batch. The hole and wait ratios and agent
//! counts are the base configuration's. Values are recomputed from the history on every call,
//! so the curriculum keeps no state and replays the same way every time.

use floe_core::rng::Rng;
use floe_plugin_api::{ConfigError, Curriculum, History, PluginError, RoundConfig};
use serde::{Deserialize, Serialize};

use super::{in_range, positive};
use crate::sampling;

/// Parameters of [`Sec`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecParams {
    /// The arms (its sizes) and their hole and wait ratios.
    pub base: RoundConfig,
    /// Learning rate alpha of the TD(0) update, in `(0, 1]`.
    pub learning_rate: f64,
    /// Temperature tau of the Boltzmann distribution.
    pub temperature: f64,
    /// Sizes sampled per round to set the data ratios (0: use the probabilities).
    pub draws: u32,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for SecParams {
    fn default() -> Self {
        SecParams {
            base: RoundConfig::round0_default(),
            learning_rate: 0.5,
            temperature: 0.25,
            draws: 0,
            seed: 0,
        }
    }
}

/// The SEC curriculum.
#[derive(Debug, Clone)]
pub struct Sec {
    p: SecParams,
}

impl Sec {
    /// A SEC curriculum with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] or what [`RoundConfig::validate`] finds in `base`.
    pub fn new(p: SecParams) -> Result<Self, ConfigError> {
        p.base.validate()?;
        if in_range("learning_rate", p.learning_rate, 0.0, 1.0)? == 0.0 {
            return Err(ConfigError::param("learning_rate", "must be above 0"));
        }
        positive("temperature", p.temperature)?;
        Ok(Sec { p })
    }

    /// The reward of a size in a round (see the module docs).
    #[must_use]
    pub fn reward(result: &floe_plugin_api::SizeResult) -> f64 {
        result.mean_abs_advantage.unwrap_or(2.0 * result.valid_rate * (1.0 - result.valid_rate))
    }

    /// `Q(c)` for each base size, after every round of the history.
    #[must_use]
    pub fn values(&self, history: &History) -> Vec<f64> {
        let alpha = self.p.learning_rate;
        let mut q = vec![0.0; self.p.base.sizes.len()];
        for round in &history.rounds {
            for (arm, s) in self.p.base.sizes.iter().enumerate() {
                let trained = round.config.size(s.size).is_some_and(|c| c.data_ratio > 0.0);
                if let (true, Some(res)) = (trained, round.result(s.size)) {
                    q[arm] = alpha * Self::reward(res) + (1.0 - alpha) * q[arm];
                }
            }
        }
        q
    }

    /// The Boltzmann distribution over the base sizes.
    #[must_use]
    pub fn probabilities(&self, history: &History) -> Vec<f64> {
        let q = self.values(history);
        let top = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = q.iter().map(|v| ((v - top) / self.p.temperature).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|v| v / sum).collect()
    }
}

impl Curriculum for Sec {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let probs = self.probabilities(history);
        let ratios = if self.p.draws == 0 {
            probs
        } else {
            let mut rng = Rng::from_counters(&[self.p.seed, u64::from(history.next_round()), 0x5ec]);
            let mut counts = vec![0_u32; probs.len()];
            let all = vec![true; probs.len()];
            for _ in 0..self.p.draws {
                if let Some(i) = sampling::weighted(&mut rng, &probs, &all) {
                    counts[i] += 1;
                }
            }
            counts.iter().map(|&c| f64::from(c) / f64::from(self.p.draws)).collect()
        };
        let mut cfg = self.p.base.clone();
        for (s, r) in cfg.sizes.iter_mut().zip(ratios) {
            s.data_ratio = r;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_plugin_api::{RoundRecord, SizeConfig, SizeResult};

    fn base() -> RoundConfig {
        RoundConfig {
            sizes: vec![
                SizeConfig { size: 3, data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.5 },
                SizeConfig { size: 4, data_ratio: 0.5, hole_ratio: 0.2, wait_ratio: 0.5 },
            ],
            agents: vec![2],
            replay_fraction: 0.0,
        }
    }

    fn res(size: u32, valid_rate: f64, adv: Option<f64>) -> SizeResult {
        SizeResult {
            size,
            valid_rate,
            optimal_rate: 0.0,
            instances: 50,
            failures: Default::default(),
            mean_abs_advantage: adv,
        }
    }

    #[test]
    fn bandit_update_by_hand() {
        let sec = Sec::new(SecParams {
            base: base(),
            learning_rate: 0.5,
            temperature: 1.0,
            ..SecParams::default()
        })
        .unwrap();
        assert_eq!(sec.values(&History::default()), vec![0.0, 0.0]);
        // Round 0 trains both: r(3) = 0.8 (measured), r(4) = 2 * 0.5 * 0.5 = 0.5 (proxy).
        // Q = 0.5 * 0.8 = 0.4 and 0.5 * 0.5 = 0.25.
        let mut h = History {
            rounds: vec![RoundRecord {
                round: 0,
                config: base(),
                results: vec![res(3, 0.2, Some(0.8)), res(4, 0.5, None)],
            }],
        };
        let q = sec.values(&h);
        assert!((q[0] - 0.4).abs() < 1e-12 && (q[1] - 0.25).abs() < 1e-12, "{q:?}");
        // Round 1 trains only size 3 (r = 0.2): Q(3) = 0.5 * 0.2 + 0.5 * 0.4 = 0.3; Q(4) stays.
        let mut only3 = base();
        only3.sizes[0].data_ratio = 1.0;
        only3.sizes[1].data_ratio = 0.0;
        h.rounds.push(RoundRecord {
            round: 1,
            config: only3,
            results: vec![res(3, 0.9, Some(0.2)), res(4, 0.0, Some(5.0))],
        });
        let q = sec.values(&h);
        assert!((q[0] - 0.3).abs() < 1e-12 && (q[1] - 0.25).abs() < 1e-12, "{q:?}");
        // softmax([0.3, 0.25]) = 1 / (1 + e^-0.05), 1 / (1 + e^0.05).
        let mut sec = sec;
        let c = sec.next_config(&h).unwrap();
        let p3 = 1.0 / (1.0 + (-0.05_f64).exp());
        assert!((c.sizes[0].data_ratio - p3).abs() < 1e-12);
        assert!((c.sizes[1].data_ratio - (1.0 - p3)).abs() < 1e-12);
        c.validate().unwrap();
        assert_eq!(c.sizes[1].hole_ratio, 0.2);
    }

    #[test]
    fn sampled_ratios_are_shares_of_draws() {
        let mut sec =
            Sec::new(SecParams { base: base(), draws: 40, seed: 9, ..SecParams::default() }).unwrap();
        let c = sec.next_config(&History::default()).unwrap();
        let share = c.sizes[0].data_ratio * 40.0;
        assert!((share - share.round()).abs() < 1e-9, "a whole number of the 40 draws");
        c.validate().unwrap();
        assert_eq!(c, sec.next_config(&History::default()).unwrap());
        assert!(Sec::new(SecParams { learning_rate: 0.0, ..SecParams::default() }).is_err());
        assert!(Sec::new(SecParams { temperature: 0.0, ..SecParams::default() }).is_err());
    }
}
