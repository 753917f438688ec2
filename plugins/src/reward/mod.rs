//! Built-in reward functions.

pub mod shaped;
pub mod tiered;

pub use shaped::{ShapedParams, ShapedReward};
pub use tiered::{TieredParams, TieredReward};

use floe_plugin_api::ConfigError;

/// A finite parameter, or an error naming it.
pub(crate) fn finite(name: &'static str, v: f32) -> Result<f32, ConfigError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ConfigError::param(name, format!("{v} is not finite")))
    }
}

/// A finite, non-negative parameter, or an error naming it.
pub(crate) fn non_negative(name: &'static str, v: f32) -> Result<f32, ConfigError> {
    if finite(name, v)? < 0.0 {
        return Err(ConfigError::param(name, format!("{v} is negative")));
    }
    Ok(v)
}
