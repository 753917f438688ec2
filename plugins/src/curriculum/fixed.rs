//! `fixed`: the same configuration every round, by default floe's round-0 default
//! ([`RoundConfig::round0_default`]): the baseline every design is compared with (`floe
//! experiment`'s `fixed`, and with a randomly drawn configuration its `fixed-random`). When the
//! configuration asks for replay (`replay_fraction > 0`), instances are replayed uniformly at
//! random among those played before, which makes it the uniform-replay baseline for PLR.

use floe_core::rng::Rng;
use floe_plugin_api::{
    ConfigError, Curriculum, History, PluginError, ReplayRecord, ReplayRequest, RoundConfig,
};
use serde::{Deserialize, Serialize};

use crate::sampling;

/// Parameters of [`Fixed`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FixedParams {
    /// The configuration of every round.
    pub config: RoundConfig,
}

impl Default for FixedParams {
    fn default() -> Self {
        FixedParams { config: RoundConfig::round0_default() }
    }
}

/// The fixed curriculum.
#[derive(Debug, Clone)]
pub struct Fixed {
    config: RoundConfig,
}

impl Fixed {
    /// A fixed curriculum over a checked configuration.
    ///
    /// # Errors
    /// What [`RoundConfig::validate`] finds.
    pub fn new(p: FixedParams) -> Result<Self, ConfigError> {
        p.config.validate()?;
        Ok(Fixed { config: p.config })
    }
}

impl Curriculum for Fixed {
    fn next_config(&mut self, _history: &History) -> Result<RoundConfig, PluginError> {
        Ok(self.config.clone())
    }

    fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, PluginError> {
        let eligible: Vec<bool> = pool.iter().map(|r| r.samples > 0).collect();
        let n = eligible.iter().filter(|&&e| e).count();
        if request.count as usize > n {
            return Err(PluginError::BadInput(format!(
                "{} replays asked for, {n} instances played before",
                request.count
            )));
        }
        let mut rng = Rng::from_counters(&[request.seed, u64::from(request.round), 0x0f1d]);
        Ok(sampling::without_replacement(&mut rng, &vec![1.0; pool.len()], &eligible, request.count as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_config_every_round_and_uniform_replay_of_played_instances() {
        let mut f = Fixed::new(FixedParams::default()).unwrap();
        let c0 = f.next_config(&History::default()).unwrap();
        assert_eq!(c0, RoundConfig::round0_default());
        let pool: Vec<ReplayRecord> = (0..6)
            .map(|i| ReplayRecord {
                id: i,
                size: 3,
                agents: 2,
                last_round: 0,
                samples: u32::from(i % 2 == 0),
                mean_reward: 0.0,
                reward_std: 0.0,
                success_rate: 0.0,
                reserved: 0,
            })
            .collect();
        let req = ReplayRequest { round: 1, count: 3, seed: 5 };
        let mut picked = f.sample_replay(&pool, &req).unwrap();
        picked.sort_unstable();
        assert_eq!(picked, vec![0, 2, 4], "only played instances, each once");
        assert!(f.sample_replay(&pool, &ReplayRequest { count: 4, ..req }).is_err());
        let mut bad = RoundConfig::round0_default();
        bad.agents = vec![];
        assert!(Fixed::new(FixedParams { config: bad }).is_err());
    }
}
