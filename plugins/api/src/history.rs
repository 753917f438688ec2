//! What a curriculum sees of the past: for each finished round, the configuration it trained on
//! and, per map size, the validation results (valid and optimal rates, failure counts by kind)
//! and, when the trainer measured it, the mean absolute GRPO advantage of that size's training
//! rollouts.
//!
//! [`History::validate`] is the one place the rules live: rounds strictly increasing and below
//! `u32::MAX` (so that [`History::next_round`] has a number to give); each round's configuration
//! valid ([`crate::RoundConfig::validate`]); per round at most one result per map size, sizes in
//! `2..=256`; rates finite, in `[0, 1]`, optimal at most valid; `mean_abs_advantage` finite and
//! non-negative. Results may cover sizes the round did not train on (the validation set is fixed).

use std::collections::BTreeMap;

use floe_core::FailureKind;
use serde::{Deserialize, Serialize};

use crate::config::RoundConfig;
use crate::error::ConfigError;

/// Failure counts by kind; JSON is an object keyed by the snake-case kind names
/// (`{"vertex_conflict": 12, "hole": 3}`); kinds with no failures may be left out.
pub type FailureCounts = BTreeMap<FailureKind, u32>;

/// The validation results of one map size after a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeResult {
    /// N, for N×N maps.
    pub size: u32,
    /// Share of validation instances answered with a valid plan.
    pub valid_rate: f64,
    /// Share answered with a valid plan of optimal sum of costs.
    pub optimal_rate: f64,
    /// Validation instances of this size (0 when not recorded).
    #[serde(default)]
    pub instances: u32,
    /// Failures by kind.
    #[serde(default)]
    pub failures: FailureCounts,
    /// Mean |advantage| of this size's training rollouts in the round, when the trainer recorded
    /// it (the learning signal Self-Evolving Curriculum uses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_abs_advantage: Option<f64>,
}

/// One finished round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundRecord {
    /// The round's number (round 0 is the default configuration's round).
    pub round: u32,
    /// The configuration the round trained on.
    pub config: RoundConfig,
    /// Validation results after the round, per map size.
    pub results: Vec<SizeResult>,
}

impl RoundRecord {
    /// The result of one map size.
    #[must_use]
    pub fn result(&self, size: u32) -> Option<&SizeResult> {
        self.results.iter().find(|r| r.size == size)
    }
}

/// Every finished round, oldest first. An empty history asks for round 0's configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct History {
    /// The rounds.
    pub rounds: Vec<RoundRecord>,
}

impl History {
    /// The number of the round to configure next: one past the last, 0 when empty.
    ///
    /// # Panics
    /// If the last round is `u32::MAX` (with overflow checks on); [`History::validate`] rejects that.
    #[must_use]
    pub fn next_round(&self) -> u32 {
        self.rounds.last().map_or(0, |r| r.round + 1)
    }

    /// The last finished round.
    #[must_use]
    pub fn last(&self) -> Option<&RoundRecord> {
        self.rounds.last()
    }

    /// Checks every rule in the module docs.
    ///
    /// # Errors
    /// The first rule broken.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (i, r) in self.rounds.iter().enumerate() {
            if i > 0 && r.round <= self.rounds[i - 1].round {
                return Err(ConfigError::RoundOrder { previous: self.rounds[i - 1].round, round: r.round });
            }
            if r.round == u32::MAX {
                return Err(ConfigError::NoNextRound(r.round));
            }
            r.config
                .validate()
                .map_err(|e| ConfigError::RoundConfig { round: r.round, source: Box::new(e) })?;
            for (j, res) in r.results.iter().enumerate() {
                let bad =
                    |problem: String| Err(ConfigError::Result { round: r.round, size: res.size, problem });
                if !(2..=256).contains(&res.size) {
                    return bad("map size outside 2..=256".into());
                }
                if r.results[..j].iter().any(|o| o.size == res.size) {
                    return bad("two results for one map size".into());
                }
                for (name, v) in [("valid_rate", res.valid_rate), ("optimal_rate", res.optimal_rate)] {
                    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                        return bad(format!("{name} {v} is outside [0, 1]"));
                    }
                }
                if res.optimal_rate > res.valid_rate {
                    return bad(format!(
                        "optimal_rate {} is above valid_rate {}",
                        res.optimal_rate, res.valid_rate
                    ));
                }
                if let Some(a) = res.mean_abs_advantage {
                    if !(a.is_finite() && a >= 0.0) {
                        return bad(format!("mean_abs_advantage {a} is not a finite non-negative number"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses and validates a history.
    ///
    /// # Errors
    /// [`ConfigError::Json`] for malformed JSON, else what [`History::validate`] finds.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let h: History = floe_core::json::from_str(text)?;
        h.validate()?;
        Ok(h)
    }

    /// The history as one line of JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_round() -> History {
        History {
            rounds: vec![RoundRecord {
                round: 0,
                config: RoundConfig::round0_default(),
                results: vec![SizeResult {
                    size: 3,
                    valid_rate: 0.6,
                    optimal_rate: 0.4,
                    instances: 150,
                    failures: [(FailureKind::VertexConflict, 30), (FailureKind::Hole, 30)].into(),
                    mean_abs_advantage: Some(0.5),
                }],
            }],
        }
    }

    #[test]
    fn round_trips_with_failure_names_as_keys() {
        let h = one_round();
        let json = h.to_json();
        assert!(json.contains(r#""failures":{"hole":30,"vertex_conflict":30}"#), "{json}");
        assert_eq!(History::from_json(&json).unwrap(), h);
        assert_eq!(h.next_round(), 1);
        assert_eq!(History::default().next_round(), 0);
    }

    #[test]
    fn rejects_bad_histories() {
        let mut h = one_round();
        h.rounds[0].results[0].optimal_rate = 0.7;
        assert!(h.validate().unwrap_err().to_string().contains("above valid_rate"));
        let mut h = one_round();
        h.rounds[0].results[0].valid_rate = 1.2;
        assert!(matches!(h.validate(), Err(ConfigError::Result { round: 0, size: 3, .. })));
        let mut h = one_round();
        h.rounds.push(h.rounds[0].clone());
        assert_eq!(h.validate(), Err(ConfigError::RoundOrder { previous: 0, round: 0 }));
        let mut h = one_round();
        h.rounds[0].round = u32::MAX;
        assert_eq!(h.validate(), Err(ConfigError::NoNextRound(u32::MAX)));
        let mut h = one_round();
        h.rounds[0].config.agents.clear();
        assert!(matches!(h.validate(), Err(ConfigError::RoundConfig { round: 0, .. })));
        let mut h = one_round();
        h.rounds[0].results[0].mean_abs_advantage = Some(-1.0);
        assert!(h.validate().is_err());
        let unknown_kind = r#"{"rounds": [{"round": 0, "config": {"sizes": [{"size": 3, "data_ratio": 1,
            "hole_ratio": 0, "wait_ratio": 0}], "agents": [2]}, "results": [{"size": 3, "valid_rate": 0.5,
            "optimal_rate": 0.5, "failures": {"teleport": 1}}]}]}"#;
        assert!(matches!(History::from_json(unknown_kind), Err(ConfigError::Json(_))));
    }
}
