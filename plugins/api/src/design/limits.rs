//! What an engineer may design ([`DesignLimits`]), as a value and as the record that crosses a
//! plugin ABI, and what it answers ([`EngineerReply`]). How a reply is read, clamped and adopted
//! is the protocol's (floe-rounds' `limits`).

use abi_stable::std_types::RSlice;
use abi_stable::StableAbi;
use serde::{Deserialize, Serialize};

use crate::config::RoundConfig;
use crate::error::ConfigError;

/// What an engineer may design: every configuration it returns is clamped into these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DesignLimits {
    /// Smallest map size \[3\].
    pub min_size: u32,
    /// Largest map size \[6\].
    pub max_size: u32,
    /// The agent counts it may choose from \[2, 3\].
    pub agents: Vec<u32>,
    /// Largest hole ratio \[0.4\].
    pub max_hole_ratio: f64,
    /// Most map sizes in one configuration \[4\].
    pub max_sizes: usize,
    /// Largest replay fraction \[0.5\]; a trainer with nothing that can replay sets it to 0.
    pub max_replay_fraction: f64,
}

impl Default for DesignLimits {
    fn default() -> Self {
        DesignLimits {
            min_size: 3,
            max_size: 6,
            agents: vec![2, 3],
            max_hole_ratio: 0.4,
            max_sizes: 4,
            max_replay_fraction: 0.5,
        }
    }
}

/// An engineer's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineerReply {
    /// The next round's configuration.
    pub config: RoundConfig,
    /// Why, in the engineer's words.
    pub rationale: String,
    /// A language-model engineer's raw replies, every attempt in order (absent for others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<String>,
    /// What the engineer corrected or retried, and why (values clamped, replies refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl EngineerReply {
    /// Parses a reply and validates its configuration.
    ///
    /// # Errors
    /// [`ConfigError::Json`] for malformed JSON, else what [`RoundConfig::validate`] finds.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let r: EngineerReply = serde_json::from_str(text)?;
        r.config.validate()?;
        Ok(r)
    }

    /// The reply as one line of JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// [`DesignLimits`] as an engineer receives them across a plugin ABI: `floe_design_limits` of
/// `floe_types.h` for a C plugin (`design_with_limits`), the same layout for an abi_stable one.
/// Made by [`DesignLimits::record`], read back by [`DesignLimits::from_record`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, StableAbi)]
pub struct DesignLimitsRecord<'a> {
    /// Smallest map size.
    pub min_size: u32,
    /// Largest map size.
    pub max_size: u32,
    /// Most map sizes in one configuration.
    pub max_sizes: u32,
    /// Always 0.
    pub reserved: u32,
    /// Largest hole ratio.
    pub max_hole_ratio: f64,
    /// Largest replay fraction (0: nothing can replay).
    pub max_replay_fraction: f64,
    /// The agent counts it may choose from (`agents` and `agents_len` in C).
    pub agents: RSlice<'a, u32>,
}

impl DesignLimitsRecord<'_> {
    /// The same limits over other agent counts (a host that checked a C caller's array).
    #[must_use]
    pub fn with_agents(self, agents: &[u32]) -> DesignLimitsRecord<'_> {
        DesignLimitsRecord { agents: RSlice::from_slice(agents), ..self }
    }
}

impl DesignLimits {
    /// Checks the limits themselves.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(format!("design limits: {m}")));
        if !(2..=256).contains(&self.min_size) || self.max_size < self.min_size || self.max_size > 256 {
            return bad("need 2 <= min_size <= max_size <= 256");
        }
        if self.agents.is_empty() || self.agents.contains(&0) {
            return bad("agents must be a non-empty list of counts of at least 1");
        }
        if !(self.max_hole_ratio.is_finite() && (0.0..1.0).contains(&self.max_hole_ratio)) {
            return bad("max_hole_ratio must be in [0, 1)");
        }
        if !(self.max_replay_fraction.is_finite() && (0.0..=1.0).contains(&self.max_replay_fraction)) {
            return bad("max_replay_fraction must be in [0, 1]");
        }
        if self.max_sizes == 0 {
            return bad("max_sizes must be at least 1");
        }
        // The smallest size must hold the largest agent count even at no holes.
        let k = self.agents.iter().copied().max().unwrap_or(1);
        if self.max_size * self.max_size < 2 * k {
            return bad("max_size is too small for the largest agent count");
        }
        Ok(())
    }

    /// The limits as they cross the plugin ABIs, borrowing the agent counts.
    #[must_use]
    pub fn record(&self) -> DesignLimitsRecord<'_> {
        DesignLimitsRecord {
            min_size: self.min_size,
            max_size: self.max_size,
            max_sizes: u32::try_from(self.max_sizes).unwrap_or(u32::MAX),
            reserved: 0,
            max_hole_ratio: self.max_hole_ratio,
            max_replay_fraction: self.max_replay_fraction,
            agents: RSlice::from_slice(&self.agents),
        }
    }

    /// The limits of a record that crossed a plugin ABI, validated.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for limits that [`DesignLimits::validate`] refuses.
    pub fn from_record(record: &DesignLimitsRecord<'_>) -> Result<Self, ConfigError> {
        let limits = DesignLimits {
            min_size: record.min_size,
            max_size: record.max_size,
            agents: record.agents.to_vec(),
            max_hole_ratio: record.max_hole_ratio,
            max_sizes: record.max_sizes as usize,
            max_replay_fraction: record.max_replay_fraction,
        };
        limits.validate()?;
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_cross_as_a_record_and_come_back_validated() {
        let l = DesignLimits {
            min_size: 4,
            max_size: 9,
            agents: vec![2, 5],
            max_sizes: 3,
            ..DesignLimits::default()
        };
        let r = l.record();
        assert_eq!((r.min_size, r.max_size, r.max_sizes, r.agents.as_slice()), (4, 9, 3, &[2, 5][..]));
        assert_eq!(DesignLimits::from_record(&r).as_ref(), Ok(&l));
        let none = [];
        let bad = DesignLimitsRecord { agents: RSlice::from_slice(&none), ..r };
        assert!(DesignLimits::from_record(&bad).unwrap_err().to_string().contains("agents"));
        // The C header's layout: four u32, two f64, a pointer and a length.
        assert_eq!(std::mem::size_of::<DesignLimitsRecord<'_>>(), 32 + 2 * std::mem::size_of::<usize>());
    }
}
