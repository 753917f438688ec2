//! The paper-style tiered verification reward over [`VerdictRecord`]s.
//!
//! Four tiers, strictly ordered: **unparseable** (`parse_error`) < **invalid** (every other
//! failure, `wrong_agent_count` included) < **valid** < **valid and optimal**. Two optional
//! partial credits lift an invalid plan within its tier, and one lifts a valid, non-optimal plan:
//!
//! ```text
//! parse_error        unparseable
//! other failures     invalid + prefix_credit · legal_steps / horizon
//!                            + goal_credit   · agents_on_goal / num_agents
//! valid              valid   + soc_credit    · optimal_soc / soc
//! valid and optimal  optimal
//! ```
//!
//! A credit counts only when the record carries what it needs (the fields are not
//! [`UNKNOWN`] and the denominator is positive): a record built from a verdict alone knows the
//! legal prefix only for `goal_not_reached`, and agents on goal only for valid plans; built with
//! the verification kernel's partial credit, it knows the horizon for every simulated plan and the agents on goal when the
//! plan ran to its end. Nothing is guessed. The parameters are checked so that the tiers stay
//! strictly ordered even with full credit: `unparseable < invalid`,
//! `invalid + prefix_credit + goal_credit < valid`, `valid + soc_credit < optimal`.
//!
//! Defaults: unparseable 0, invalid 0.1, valid 0.6, optimal 1, prefix and goal credit 0.1
//! each, no SoC credit (so an invalid plan earns 0.1 to 0.3).

use floe_plugin_api::{ConfigError, PluginError, RewardFn, VerdictRecord, UNKNOWN};
use serde::{Deserialize, Serialize};

use super::{finite, non_negative};

/// Parameters of [`TieredReward`] (JSON fields of the same names; all optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TieredParams {
    /// Reward of an unreadable answer.
    pub unparseable: f32,
    /// Base reward of a readable but invalid plan.
    pub invalid: f32,
    /// Reward of a valid, non-optimal plan (before SoC credit).
    pub valid: f32,
    /// Reward of a valid plan with the optimal sum of costs.
    pub optimal: f32,
    /// Weight of the legal-prefix share of an invalid plan.
    pub prefix_credit: f32,
    /// Weight of the share of agents on goal of an invalid plan.
    pub goal_credit: f32,
    /// Weight of `optimal_soc / soc` of a valid, non-optimal plan.
    pub soc_credit: f32,
}

impl Default for TieredParams {
    fn default() -> Self {
        TieredParams {
            unparseable: 0.0,
            invalid: 0.1,
            valid: 0.6,
            optimal: 1.0,
            prefix_credit: 0.1,
            goal_credit: 0.1,
            soc_credit: 0.0,
        }
    }
}

impl TieredParams {
    /// Checks finiteness, non-negative credits and the strict order of the tiers.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        finite("unparseable", self.unparseable)?;
        let invalid = finite("invalid", self.invalid)?;
        let valid = finite("valid", self.valid)?;
        let optimal = finite("optimal", self.optimal)?;
        let credit = non_negative("prefix_credit", self.prefix_credit)?
            + non_negative("goal_credit", self.goal_credit)?;
        let soc = non_negative("soc_credit", self.soc_credit)?;
        if self.unparseable >= invalid {
            return Err(ConfigError::param("invalid", "must be above unparseable"));
        }
        if invalid + credit >= valid {
            return Err(ConfigError::param("valid", "must be above invalid + prefix_credit + goal_credit"));
        }
        if valid + soc >= optimal {
            return Err(ConfigError::param("optimal", "must be above valid + soc_credit"));
        }
        Ok(())
    }
}

/// The tiered reward (see the module docs).
#[derive(Debug, Clone)]
pub struct TieredReward {
    p: TieredParams,
}

fn share(num: u32, den: u32) -> f32 {
    if num == UNKNOWN || den == UNKNOWN || den == 0 {
        0.0
    } else {
        (num as f32 / den as f32).min(1.0)
    }
}

impl TieredReward {
    /// A tiered reward with checked parameters.
    ///
    /// # Errors
    /// What [`TieredParams::validate`] finds.
    pub fn new(p: TieredParams) -> Result<Self, ConfigError> {
        p.validate()?;
        Ok(TieredReward { p })
    }

    /// The reward of one record.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] for a record that fails [`VerdictRecord::check`].
    pub fn reward(&self, r: &VerdictRecord) -> Result<f32, PluginError> {
        r.check()?;
        let p = &self.p;
        Ok(match r.failure {
            0 if r.optimal == 1 => p.optimal,
            0 => p.valid + p.soc_credit * share(r.optimal_soc, r.soc),
            1 => p.unparseable,
            _ => {
                p.invalid
                    + p.prefix_credit * share(r.legal_steps, r.horizon)
                    + p.goal_credit * share(r.agents_on_goal, r.num_agents)
            }
        })
    }
}

impl RewardFn for TieredReward {
    fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        floe_plugin_api::traits::check_lengths(records.len(), out.len())?;
        for (r, o) in records.iter().zip(out.iter_mut()) {
            *o = self.reward(r)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(failure: u8, optimal: u8) -> VerdictRecord {
        VerdictRecord {
            failure,
            optimal,
            reserved: [0; 2],
            num_agents: 2,
            agents_on_goal: UNKNOWN,
            legal_steps: UNKNOWN,
            horizon: UNKNOWN,
            soc: UNKNOWN,
            optimal_soc: UNKNOWN,
        }
    }

    fn close(a: f32, b: f32) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn tiers_and_partial_credit_by_hand() {
        let mut t = TieredReward::new(TieredParams::default()).unwrap();
        let batch = [
            rec(1, 0),                                                 // unparseable: 0
            rec(2, 0),                                                 // wrong count, nothing known: 0.1
            VerdictRecord { legal_steps: 2, horizon: 4, ..rec(6, 0) }, // 0.1 + 0.1 * 2/4 = 0.15
            // goal_not_reached after a full legal run, 1 of 2 on goal: 0.1 + 0.1 + 0.05 = 0.25
            VerdictRecord { legal_steps: 3, horizon: 3, agents_on_goal: 1, ..rec(8, 0) },
            VerdictRecord { soc: 6, optimal_soc: 5, agents_on_goal: 2, ..rec(0, 0) }, // valid: 0.6
            VerdictRecord { soc: 5, optimal_soc: 5, agents_on_goal: 2, ..rec(0, 1) }, // optimal: 1
        ];
        let mut out = [0.0; 6];
        t.verdict_rewards(&batch, &mut out).unwrap();
        for (got, want) in out.iter().zip([0.0, 0.1, 0.15, 0.25, 0.6, 1.0]) {
            close(*got, want);
        }
        // With SoC credit 0.2: valid + 0.2 * 5/6.
        let with_soc =
            TieredReward::new(TieredParams { soc_credit: 0.2, ..TieredParams::default() }).unwrap();
        close(with_soc.reward(&batch[4]).unwrap(), 0.6 + 0.2 * 5.0 / 6.0);
        // The order holds at the edges: the best invalid plan is below the worst valid one.
        let best_invalid =
            VerdictRecord { legal_steps: 5, horizon: 5, agents_on_goal: 1, num_agents: 1, ..rec(8, 0) };
        assert!(t.reward(&best_invalid).unwrap() < t.reward(&batch[4]).unwrap());
    }

    #[test]
    fn bad_records_and_parameters_are_errors() {
        let mut t = TieredReward::new(TieredParams::default()).unwrap();
        assert!(matches!(t.verdict_rewards(&[rec(9, 0)], &mut [0.0]), Err(PluginError::BadInput(_))));
        assert!(matches!(t.verdict_rewards(&[rec(0, 0)], &mut []), Err(PluginError::BadInput(_))));
        let overlapping = TieredParams { prefix_credit: 0.3, goal_credit: 0.3, ..TieredParams::default() };
        assert!(matches!(TieredReward::new(overlapping), Err(ConfigError::Param { name: "valid", .. })));
        let nan = TieredParams { invalid: f32::NAN, ..TieredParams::default() };
        assert!(TieredReward::new(nan).is_err());
        let negative = TieredParams { goal_credit: -0.1, ..TieredParams::default() };
        assert!(TieredReward::new(negative).is_err());
        assert!(matches!(t.step_rewards(&[], &mut []), Err(PluginError::Unsupported(_))));
    }
}
