//! The plugin interface of floe (reward functions, curriculum strategies and environment
//! engineers). This crate is a placeholder until the plugin ABI lands; it only re-exports the
//! core types that plugins will exchange.

pub use floe_core::{FailureKind, Verdict};
