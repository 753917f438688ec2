//! What an environment engineer receives and returns, as a plugin author meets it: the design
//! limits ([`DesignLimits`], and [`DesignLimitsRecord`] as they cross a plugin ABI), its answer
//! ([`EngineerReply`]), and [`HISTORY_FENCE`], which opens the history as JSON in a context that
//! carries it. How the context is assembled and how a reply is read, clamped and adopted is the
//! protocol's: floe-rounds' `context` and `limits`.

pub mod limits;

pub use limits::{DesignLimits, DesignLimitsRecord, EngineerReply};

/// The fence that opens the history (as `History` JSON) in a context assembled with
/// `history_json` (floe-rounds' `ContextOptions::history_json`); the `rules` engineer reads it.
pub const HISTORY_FENCE: &str = "```json history";
