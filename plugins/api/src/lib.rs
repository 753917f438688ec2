//! # floe-plugin-api
//!
//! The plugin interface of floe: four plugin kinds, the data they exchange, and two ABIs to
//! load them from shared libraries.
//!
//! - **Kinds** ([`traits`], [`levels`]): [`RewardFn`] (verdicts or step outcomes in, rewards
//!   out, whole batches per call), [`Curriculum`] (the history of rounds in, the next round's
//!   [`RoundConfig`] out; may pick instances to replay), [`EnvEngineer`] (a text context in, a
//!   configuration and its rationale out), [`LevelSampler`] (a batched engine's ended episodes
//!   and the host's scores in, the pool's sampling weights and slots to refill out).
//! - **Data**: [`RoundConfig`] and [`History`] (serde, validated in one place each: [`config`],
//!   [`history`]), and the `#[repr(C)]` batch records of [`records`].
//! - **What an engineer receives and returns** ([`design`]): [`design::DesignLimits`] (and
//!   their ABI record), [`EngineerReply`]. The context's assembly and the reading, clamping and
//!   adoption of replies are the protocol's (floe-rounds).
//! - **Specs**: [`PluginSpec`], a plugin named in a configuration ([`spec`]; resolved by
//!   `floe-plugin-registry`).
//! - **Stepping** ([`stepping`]): [`stepping::RewardedEngine`], an engine whose rewards come
//!   from a reward plugin's `step_rewards`, fed the [`StepOutcome`]s of each step.
//! - **Libraries** ([`catalog`]): a library lists [`Entry`]s, each a named constructor taking
//!   parameters as JSON, with the [`Capabilities`] the plugin declares (scores plans, scores
//!   steps, replays): callers read them, never probe.
//! - **Rust ABI** ([`abi`]): an abi_stable root module, [`abi::FloePluginLib`], that only grows
//!   by appending fields. Configurations cross it as JSON text; batches as slices of records.
//!   Panics are caught inside the library and come back as errors.
//! - **C ABI**: `include/floe_plugin.h`, a versioned struct of function pointers returned by
//!   `floe_plugin_entry_v1`. The host side of both lives in `floe-plugin-host`.
//!
//! A Rust plugin library, complete (see "Writing a plugin" in docs/plugins.md):
//!
//! ```
//! use floe_plugin_api::abi::{root_module, FloePluginLibRef};
//! use floe_plugin_api::{Capabilities, Constructor, Entry, PluginError, PluginLibrary, RewardFn, VerdictRecord};
//!
//! struct ValidOnly;
//!
//! impl RewardFn for ValidOnly {
//!     fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
//!         for (r, o) in records.iter().zip(out.iter_mut()) {
//!             *o = if r.failure == 0 { 1.0 } else { 0.0 };
//!         }
//!         Ok(())
//!     }
//! }
//!
//! struct Library;
//!
//! impl PluginLibrary for Library {
//!     fn catalog() -> Vec<Entry> {
//!         vec![Entry {
//!             name: "valid-only",
//!             version: "0.1.0",
//!             description: "1 for a valid plan, else 0",
//!             capabilities: Capabilities::SCORES_PLANS,
//!             make: Constructor::Reward(|_params| Ok(Box::new(ValidOnly))),
//!         }]
//!     }
//! }
//!
//! #[abi_stable::export_root_module]
//! pub fn floe_root_module() -> FloePluginLibRef {
//!     root_module::<Library>()
//! }
//! # fn main() {}
//! ```

pub mod abi;
pub mod catalog;
pub mod config;
pub mod design;
pub mod error;
pub mod history;
pub mod levels;
pub mod records;
pub mod spec;
pub mod stepping;
pub mod traits;

pub use catalog::{
    parse_params, Capabilities, Constructor, CurriculumCtor, EngineerCtor, Entry, LevelSamplerCtor,
    PluginInfo, PluginKind, PluginLibrary, RewardCtor,
};
pub use config::{RoundConfig, SizeConfig};
pub use design::EngineerReply;
pub use error::{ConfigError, PluginError};
pub use floe_core::{FailureKind, Verdict};
pub use history::{FailureCounts, History, RoundRecord, SizeResult};
pub use levels::{EpisodeRecord, LevelEdit, LevelPlan, LevelRecord, LevelSampler, PhaseDesign, SlotStats};
pub use records::{step_flags, ReplayRecord, ReplayRequest, StepOutcome, VerdictRecord, UNKNOWN};
pub use spec::PluginSpec;
pub use traits::{Curriculum, EnvEngineer, Plugins, RewardFn};

/// The version of the C ABI this crate describes (`FLOE_PLUGIN_ABI_VERSION` in
/// `floe_plugin.h`).
pub const C_ABI_VERSION: u32 = 1;
