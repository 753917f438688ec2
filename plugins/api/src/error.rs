//! The errors of the plugin interface: [`ConfigError`] for configurations, histories and plugin
//! parameters (checked in one place, [`crate::config`] and [`crate::history`]), and
//! [`PluginError`] for what a plugin call can return.

use thiserror::Error;

/// Why a configuration, a history or a plugin's parameters were rejected.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not JSON of the expected shape.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// A round configuration lists no map size.
    #[error("the configuration lists no map size")]
    NoSizes,
    /// A map size is outside `2..=256`.
    #[error("map size {0} is outside 2..=256")]
    SizeOutOfRange(u32),
    /// A map size appears twice.
    #[error("map size {0} appears twice")]
    DuplicateSize(u32),
    /// A ratio is not a finite number in its range.
    #[error("{field} of map size {size} is {value}, outside {range}")]
    Ratio {
        /// The map size whose setting is wrong.
        size: u32,
        /// `data_ratio`, `hole_ratio` or `wait_ratio`.
        field: &'static str,
        /// The value found.
        value: f64,
        /// The allowed range, for people.
        range: &'static str,
    },
    /// The data ratios do not add up to 1.
    #[error("the data ratios add up to {0}, not 1 (within 1e-6)")]
    DataRatioSum(f64),
    /// No agent count to train on.
    #[error("the configuration lists no agent count")]
    NoAgents,
    /// An agent count is 0.
    #[error("agent count {0} is below 1")]
    AgentCount(u32),
    /// An agent count appears twice.
    #[error("agent count {0} appears twice")]
    DuplicateAgents(u32),
    /// A map is too small (after its holes) for the largest agent count.
    #[error("{agents} agents need {} distinct free cells; a {size}x{size} map with hole_ratio {hole_ratio} has {free}", 2 * u64::from(*agents))]
    TooCrowded {
        /// The map size.
        size: u32,
        /// The agent count that does not fit.
        agents: u32,
        /// The hole ratio of that size.
        hole_ratio: f64,
        /// Free cells left.
        free: u32,
    },
    /// One agent never needs to wait, so a single-agent board cannot meet a wait ratio above 0.
    #[error(
        "agent count 1 cannot meet wait_ratio {wait_ratio} of map size {size}: a single agent never waits"
    )]
    SingleAgentWait {
        /// The map size.
        size: u32,
        /// Its wait ratio.
        wait_ratio: f64,
    },
    /// `replay_fraction` is outside `[0, 1]`.
    #[error("replay_fraction {0} is outside [0, 1]")]
    ReplayFraction(f64),
    /// A validation result is out of range.
    #[error("round {round}, map size {size}: {problem}")]
    Result {
        /// The round of the result.
        round: u32,
        /// The map size of the result.
        size: u32,
        /// What is wrong.
        problem: String,
    },
    /// Rounds of a history are not in strictly increasing order.
    #[error("round {round} follows round {previous}: rounds must increase")]
    RoundOrder {
        /// The earlier round.
        previous: u32,
        /// The round that follows it.
        round: u32,
    },
    /// A round numbered `u32::MAX`: no round number could follow it.
    #[error("round {0} is the largest round number: no round could follow it")]
    NoNextRound(u32),
    /// A round of the history carries an invalid configuration.
    #[error("round {round}: {source}")]
    RoundConfig {
        /// The round.
        round: u32,
        /// What is wrong with its configuration.
        #[source]
        source: Box<ConfigError>,
    },
    /// A plugin parameter is out of range.
    /// Engineer design settings (limits, context files) that cannot be used.
    #[error("{0}")]
    Invalid(String),
    #[error("parameter {name}: {problem}")]
    Param {
        /// The parameter's name.
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl ConfigError {
    /// A parameter error.
    pub fn param(name: &'static str, problem: impl Into<String>) -> Self {
        ConfigError::Param { name, problem: problem.into() }
    }
}

impl From<serde_json::Error> for ConfigError {
    fn from(e: serde_json::Error) -> Self {
        ConfigError::Json(e.to_string())
    }
}

/// What a plugin call can fail with. The variants cross both ABIs as a code and a message
/// ([`PluginError::code`], [`PluginError::from_code`]); the codes are those of
/// `floe_plugin.h`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginError {
    /// The plugin reported a failure.
    #[error("the plugin failed: {0}")]
    Failed(String),
    /// The plugin panicked; the panic was caught at the boundary.
    #[error("the plugin panicked: {0}")]
    Panicked(String),
    /// The plugin does not implement this call.
    #[error("the plugin does not support {0}")]
    Unsupported(String),
    /// The input handed to the plugin was rejected (records out of range, lengths that differ).
    #[error("bad input: {0}")]
    BadInput(String),
    /// The plugin returned something malformed (bad JSON, a NaN reward, an index out of range).
    #[error("bad output from the plugin: {0}")]
    BadOutput(String),
    /// A configuration, history or parameter was rejected (see [`ConfigError`]).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The library has no plugin of that kind and name.
    #[error("no plugin named {0:?} of this kind in the library")]
    UnknownPlugin(String),
    /// An engineer gave up: none of its replies was a usable configuration. `raw` holds every
    /// reply it received, unchanged and in order, so that they can be filed. On the ABIs it is
    /// [`PluginError::BadOutput`] with the message (the replies stay on this side).
    #[error("bad output from the plugin: {message}")]
    NoUsableReply {
        /// Why each attempt failed.
        message: String,
        /// The raw replies, every attempt's, in order.
        raw: Vec<String>,
    },
}

impl From<ConfigError> for PluginError {
    fn from(e: ConfigError) -> Self {
        PluginError::Config(e.to_string())
    }
}

impl PluginError {
    /// The status code of this error on the ABI (`FLOE_STATUS_*` in `floe_plugin.h`).
    #[must_use]
    pub fn code(&self) -> i32 {
        match self {
            PluginError::Failed(_) => 1,
            PluginError::Panicked(_) => 2,
            PluginError::Unsupported(_) => 3,
            PluginError::BadInput(_) => 4,
            PluginError::BadOutput(_) | PluginError::NoUsableReply { .. } => 5,
            PluginError::Config(_) => 6,
            PluginError::UnknownPlugin(_) => 7,
        }
    }

    /// The message without the variant's prefix.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            PluginError::Failed(m)
            | PluginError::Panicked(m)
            | PluginError::Unsupported(m)
            | PluginError::BadInput(m)
            | PluginError::BadOutput(m)
            | PluginError::Config(m)
            | PluginError::UnknownPlugin(m)
            | PluginError::NoUsableReply { message: m, .. } => m,
        }
    }

    /// Rebuilds an error from its code and message; unknown codes become [`PluginError::Failed`].
    #[must_use]
    pub fn from_code(code: i32, message: String) -> Self {
        match code {
            2 => PluginError::Panicked(message),
            3 => PluginError::Unsupported(message),
            4 => PluginError::BadInput(message),
            5 => PluginError::BadOutput(message),
            6 => PluginError::Config(message),
            7 => PluginError::UnknownPlugin(message),
            _ => PluginError::Failed(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        let all = [
            PluginError::Failed("a".into()),
            PluginError::Panicked("b".into()),
            PluginError::Unsupported("c".into()),
            PluginError::BadInput("d".into()),
            PluginError::BadOutput("e".into()),
            PluginError::Config("f".into()),
            PluginError::UnknownPlugin("g".into()),
        ];
        for e in all {
            assert_eq!(PluginError::from_code(e.code(), e.message().to_string()), e);
        }
        assert_eq!(PluginError::from_code(42, "x".into()), PluginError::Failed("x".into()));
        // An engineer's give-up crosses as bad output with its message; its replies stay behind.
        let gave_up = PluginError::NoUsableReply { message: "h".into(), raw: vec!["r".into()] };
        assert_eq!(gave_up.to_string(), PluginError::BadOutput("h".into()).to_string());
        assert_eq!(
            PluginError::from_code(gave_up.code(), gave_up.message().to_string()),
            PluginError::BadOutput("h".into())
        );
    }

    #[test]
    fn the_cells_a_crowd_needs_do_not_overflow() {
        let e = ConfigError::TooCrowded { size: 256, agents: u32::MAX, hole_ratio: 0.5, free: 32768 };
        assert!(e.to_string().starts_with("4294967295 agents need 8589934590 distinct free cells"), "{e}");
    }
}
