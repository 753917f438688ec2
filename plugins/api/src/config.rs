//! The generator configuration a curriculum or engineer writes for the next round: per map size a
//! `data_ratio`, `hole_ratio` and `wait_ratio` (the paper's three knobs), the agent counts to train
//! on, and the share of the round replayed from earlier instances.
//!
//! [`RoundConfig::validate`] is the one place these rules live; every way in (JSON from a plugin,
//! a file, a built-in) goes through it:
//! - at least one map size; sizes distinct, each in `2..=256`;
//! - `data_ratio` in `[0, 1]`, the data ratios adding up to 1 within `1e-6`;
//! - `hole_ratio` in `[0, 1)`; `wait_ratio` in `[0, 1]`;
//! - at least one agent count; counts distinct, each at least 1;
//! - every size has room for the largest agent count: `2k` distinct free cells after its
//!   `round(hole_ratio · size²)` holes (the generator's rule);
//! - agent count 1 only with `wait_ratio` 0 on every size (one agent never waits);
//! - `replay_fraction` in `[0, 1]`.
//!
//! Every number must be finite. JSON field names are those of the structs; unknown fields are
//! rejected, so a misspelt knob is an error rather than a silent default.

use floe_core::GeneratorConfig;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// The tolerance on the sum of the data ratios.
pub const DATA_RATIO_TOLERANCE: f64 = 1e-6;

/// One map size's settings for a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeConfig {
    /// N, for an N×N map.
    pub size: u32,
    /// Share of the round's newly generated samples given to this size.
    pub data_ratio: f64,
    /// Hole density.
    pub hole_ratio: f64,
    /// Share of this size's instances whose optimal plans need a wait.
    pub wait_ratio: f64,
}

/// The next round's generator configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundConfig {
    /// Per map size settings.
    pub sizes: Vec<SizeConfig>,
    /// The agent counts to train on (the paper trains on 2).
    pub agents: Vec<u32>,
    /// Share of the round's samples replayed from earlier instances (chosen by
    /// [`crate::Curriculum::sample_replay`]) instead of newly generated; 0 when absent.
    #[serde(default)]
    pub replay_fraction: f64,
}

impl RoundConfig {
    /// floe's round-0 default, the "GRPO (random)" baseline: map sizes 3 to 10 with equal data
    /// ratios (1/8 each), hole ratio 0.2, wait ratio 0.5, two agents, no replay. The paper gives
    /// no numbers for its random default; these are floe's choice.
    #[must_use]
    pub fn round0_default() -> Self {
        RoundConfig {
            sizes: (3..=10)
                .map(|size| SizeConfig { size, data_ratio: 0.125, hole_ratio: 0.2, wait_ratio: 0.5 })
                .collect(),
            agents: vec![2],
            replay_fraction: 0.0,
        }
    }

    /// Checks every rule in the module docs.
    ///
    /// # Errors
    /// The first rule broken, as a [`ConfigError`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.sizes.is_empty() {
            return Err(ConfigError::NoSizes);
        }
        if self.agents.is_empty() {
            return Err(ConfigError::NoAgents);
        }
        // A set, not a scan of the earlier counts: that took seconds for a long list.
        let mut seen = std::collections::HashSet::with_capacity(self.agents.len());
        for &k in &self.agents {
            if k == 0 {
                return Err(ConfigError::AgentCount(k));
            }
            if !seen.insert(k) {
                return Err(ConfigError::DuplicateAgents(k));
            }
        }
        let max_agents = self.agents.iter().copied().max().unwrap_or(1);
        let mut sum = 0.0;
        for (i, s) in self.sizes.iter().enumerate() {
            if !(2..=256).contains(&s.size) {
                return Err(ConfigError::SizeOutOfRange(s.size));
            }
            if self.sizes[..i].iter().any(|o| o.size == s.size) {
                return Err(ConfigError::DuplicateSize(s.size));
            }
            let ratio = |field, value: f64, ok: bool, range| {
                if value.is_finite() && ok {
                    Ok(())
                } else {
                    Err(ConfigError::Ratio { size: s.size, field, value, range })
                }
            };
            ratio("data_ratio", s.data_ratio, (0.0..=1.0).contains(&s.data_ratio), "[0, 1]")?;
            ratio("hole_ratio", s.hole_ratio, (0.0..1.0).contains(&s.hole_ratio), "[0, 1)")?;
            ratio("wait_ratio", s.wait_ratio, (0.0..=1.0).contains(&s.wait_ratio), "[0, 1]")?;
            sum += s.data_ratio;
            let cells = s.size * s.size;
            let free =
                cells - GeneratorConfig::default().size(s.size).hole_ratio(s.hole_ratio).holes().min(cells);
            if u64::from(free) < 2 * u64::from(max_agents) {
                return Err(ConfigError::TooCrowded {
                    size: s.size,
                    agents: max_agents,
                    hole_ratio: s.hole_ratio,
                    free,
                });
            }
            if self.agents.contains(&1) && s.wait_ratio > 0.0 {
                return Err(ConfigError::SingleAgentWait { size: s.size, wait_ratio: s.wait_ratio });
            }
        }
        if (sum - 1.0).abs() > DATA_RATIO_TOLERANCE {
            return Err(ConfigError::DataRatioSum(sum));
        }
        if !(self.replay_fraction.is_finite() && (0.0..=1.0).contains(&self.replay_fraction)) {
            return Err(ConfigError::ReplayFraction(self.replay_fraction));
        }
        Ok(())
    }

    /// Parses and validates a configuration.
    ///
    /// # Errors
    /// [`ConfigError::Json`] for malformed JSON or unknown fields, else what
    /// [`RoundConfig::validate`] finds.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let cfg: RoundConfig = floe_core::json::from_str(text)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The configuration as one line of JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The settings of one map size.
    #[must_use]
    pub fn size(&self, size: u32) -> Option<&SizeConfig> {
        self.sizes.iter().find(|s| s.size == size)
    }

    /// Splits a round's sample budget into (newly generated, replayed):
    /// `replayed = round(replay_fraction · budget)`.
    #[must_use]
    pub fn split_budget(&self, budget: usize) -> (usize, usize) {
        let replayed = ((self.replay_fraction * budget as f64).round() as usize).min(budget);
        (budget - replayed, replayed)
    }

    /// The generator jobs for `samples` newly generated instances: the samples are shared among
    /// the sizes by `data_ratio`, and each size's share evenly among the agent counts, both by
    /// largest remainder ([`apportion`]); jobs with no samples are left out. Each job's seed is
    /// `floe_core::rng::hash([seed, size, agents])`, so a job's instances do not depend on the
    /// other jobs.
    #[must_use]
    pub fn generator_configs(&self, samples: usize, seed: u64) -> Vec<GeneratorConfig> {
        let per_size = apportion(samples, &self.sizes.iter().map(|s| s.data_ratio).collect::<Vec<_>>());
        let mut jobs = Vec::new();
        for (s, &n) in self.sizes.iter().zip(&per_size) {
            let per_agents = apportion(n, &vec![1.0; self.agents.len()]);
            for (&k, &count) in self.agents.iter().zip(&per_agents) {
                if count == 0 {
                    continue;
                }
                let job_seed = floe_core::rng::hash(&[seed, u64::from(s.size), u64::from(k)]);
                jobs.push(
                    GeneratorConfig::default()
                        .size(s.size)
                        .agents(k as usize)
                        .hole_ratio(s.hole_ratio)
                        .wait_ratio(s.wait_ratio)
                        .count(count)
                        .seed(job_seed),
                );
            }
        }
        jobs
    }
}

/// Shares `total` among `weights` in proportion, in whole numbers adding up to `total`: each
/// gets the floor of its exact share, and the remainder goes one by one to the largest
/// fractional parts (ties to the lower index). Weights must be finite and non-negative; if they
/// add up to 0, everything is 0.
#[must_use]
pub fn apportion(total: usize, weights: &[f64]) -> Vec<usize> {
    let sum: f64 = weights.iter().sum();
    if weights.is_empty() || sum <= 0.0 || !sum.is_finite() {
        return vec![0; weights.len()];
    }
    let exact: Vec<f64> = weights.iter().map(|w| w / sum * total as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    // Saturating: for a `total` near `usize::MAX` the floors of the shares, cast back, may overshoot.
    let given = counts.iter().fold(0usize, |sum, &c| sum.saturating_add(c));
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = exact[a] - exact[a].floor();
        let fb = exact[b] - exact[b].floor();
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &i in order.iter().cycle().take(total.saturating_sub(given)) {
        counts[i] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_sizes() -> RoundConfig {
        RoundConfig {
            sizes: vec![
                SizeConfig { size: 3, data_ratio: 0.25, hole_ratio: 0.1, wait_ratio: 0.5 },
                SizeConfig { size: 5, data_ratio: 0.75, hole_ratio: 0.3, wait_ratio: 0.25 },
            ],
            agents: vec![2, 3],
            replay_fraction: 0.0,
        }
    }

    #[test]
    fn the_default_is_valid_and_round_trips_through_json() {
        let d = RoundConfig::round0_default();
        d.validate().unwrap();
        assert_eq!(RoundConfig::from_json(&d.to_json()).unwrap(), d);
        assert_eq!(d.sizes.len(), 8);
    }

    #[test]
    fn each_rule_is_enforced() {
        let ok = two_sizes();
        ok.validate().unwrap();
        let with = |f: &dyn Fn(&mut RoundConfig)| {
            let mut c = two_sizes();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert_eq!(with(&|c| c.sizes.clear()), ConfigError::NoSizes);
        assert_eq!(with(&|c| c.agents.clear()), ConfigError::NoAgents);
        assert_eq!(with(&|c| c.agents = vec![0]), ConfigError::AgentCount(0));
        assert_eq!(with(&|c| c.agents = vec![2, 2]), ConfigError::DuplicateAgents(2));
        assert_eq!(with(&|c| c.sizes[0].size = 1), ConfigError::SizeOutOfRange(1));
        assert_eq!(with(&|c| c.sizes[1].size = 3), ConfigError::DuplicateSize(3));
        assert!(matches!(
            with(&|c| c.sizes[0].hole_ratio = 1.0),
            ConfigError::Ratio { field: "hole_ratio", size: 3, .. }
        ));
        assert!(matches!(
            with(&|c| c.sizes[1].wait_ratio = -0.1),
            ConfigError::Ratio { field: "wait_ratio", size: 5, .. }
        ));
        assert!(matches!(
            with(&|c| c.sizes[1].data_ratio = f64::NAN),
            ConfigError::Ratio { field: "data_ratio", .. }
        ));
        assert_eq!(with(&|c| c.sizes[1].data_ratio = 0.7), ConfigError::DataRatioSum(0.95));
        // 0.25 + 0.75 + 5e-7 is within the tolerance, 0.25 + 0.75 + 2e-6 is not.
        let mut c = two_sizes();
        c.sizes[1].data_ratio += 5e-7;
        c.validate().unwrap();
        c.sizes[1].data_ratio += 1.5e-6;
        assert!(matches!(c.validate(), Err(ConfigError::DataRatioSum(_))));
        // 3x3 with round(0.4 * 9) = 4 holes leaves 5 free cells: 3 agents need 6.
        assert_eq!(
            with(&|c| c.sizes[0].hole_ratio = 0.4),
            ConfigError::TooCrowded { size: 3, agents: 3, hole_ratio: 0.4, free: 5 }
        );
        assert_eq!(
            with(&|c| c.agents = vec![1, 2]),
            ConfigError::SingleAgentWait { size: 3, wait_ratio: 0.5 }
        );
        assert_eq!(with(&|c| c.replay_fraction = 1.5), ConfigError::ReplayFraction(1.5));
    }

    #[test]
    fn json_errors_are_reported_not_panicked() {
        assert!(matches!(RoundConfig::from_json("{"), Err(ConfigError::Json(_))));
        let typo =
            r#"{"sizes": [{"size": 3, "data_ratio": 1, "hole_rate": 0.1, "wait_ratio": 0}], "agents": [2]}"#;
        let e = RoundConfig::from_json(typo).unwrap_err();
        assert!(e.to_string().contains("hole_rate"), "{e}");
        let ok =
            r#"{"sizes": [{"size": 3, "data_ratio": 1, "hole_ratio": 0.1, "wait_ratio": 0}], "agents": [2]}"#;
        assert_eq!(RoundConfig::from_json(ok).unwrap().replay_fraction, 0.0);
    }

    #[test]
    fn apportion_uses_largest_remainders() {
        // 10 * (0.25, 0.75) = 2.5, 7.5: floors 2 + 7 = 9, one left; equal fractions: lower index.
        assert_eq!(apportion(10, &[0.25, 0.75]), vec![3, 7]);
        // 7 / 3 each = 2.33: floors 6, one left to index 0.
        assert_eq!(apportion(7, &[1.0, 1.0, 1.0]), vec![3, 2, 2]);
        // 10 * (0.14, 0.46, 0.4) = 1.4, 4.6, 4: floors 9, the largest fraction (0.6) gets it.
        assert_eq!(apportion(10, &[0.14, 0.46, 0.4]), vec![1, 5, 4]);
        assert_eq!(apportion(5, &[0.0, 0.0]), vec![0, 0]);
    }

    #[test]
    fn generator_jobs_follow_the_ratios() {
        let c = two_sizes();
        let jobs = c.generator_configs(10, 7);
        let summary: Vec<(u32, usize, usize)> = jobs.iter().map(|j| (j.width, j.agents, j.count)).collect();
        // size 3 gets 3 (split 2 + 1), size 5 gets 7 (4 + 3).
        assert_eq!(summary, vec![(3, 2, 2), (3, 3, 1), (5, 2, 4), (5, 3, 3)]);
        assert_eq!(jobs[2].hole_ratio, 0.3);
        assert_eq!(jobs[2].wait_ratio, 0.25);
        assert_ne!(jobs[0].seed, jobs[1].seed);
        assert_eq!(jobs, c.generator_configs(10, 7));
        let mut r = two_sizes();
        r.replay_fraction = 0.25;
        assert_eq!(r.split_budget(4000), (3000, 1000));
        assert_eq!(r.split_budget(3), (2, 1));
    }
}
