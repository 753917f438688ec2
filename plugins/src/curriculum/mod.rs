//! Built-in curricula.

pub mod difficulty;
pub mod fixed;
pub mod frontier;
pub mod plr;
pub mod schedule;
pub mod sec;

pub use difficulty::{DifficultyParams, DifficultyScaling};
pub use fixed::{Fixed, FixedParams};
pub use frontier::{Frontier, FrontierParams};
pub use plr::{Plr, PlrParams, PlrScore};
pub use schedule::{Schedule, ScheduleParams};
pub use sec::{Sec, SecParams};

use floe_plugin_api::ConfigError;

/// A finite parameter in `lo..=hi`, or an error naming it.
pub(crate) fn in_range(name: &'static str, v: f64, lo: f64, hi: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(ConfigError::param(name, format!("{v} is outside [{lo}, {hi}]")))
    }
}

/// A finite, strictly positive parameter, or an error naming it.
pub(crate) fn positive(name: &'static str, v: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(ConfigError::param(name, format!("{v} is not a positive number")))
    }
}

/// A validation result of `size` at `valid_rate` (100 instances, nothing else recorded), for
/// the curricula's tests.
#[cfg(test)]
pub(crate) fn result(size: u32, valid_rate: f64) -> floe_plugin_api::SizeResult {
    floe_plugin_api::SizeResult {
        size,
        valid_rate,
        optimal_rate: 0.0,
        instances: 100,
        failures: Default::default(),
        mean_abs_advantage: None,
    }
}
