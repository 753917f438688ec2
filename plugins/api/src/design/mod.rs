//! The environment engineer's side of the loop, as data and text, in three parts:
//!
//! - [`context`]: the context a trainer assembles for the engineer (the paper's modules F, G, H,
//!   S, T and presets V1–V6) from an editable template and guidelines file;
//! - [`limits`]: the limits of what it may design ([`DesignLimits`]) and the strict reading of
//!   its reply (parse, clamp with reasons, validate), and what the trainer adopts;
//! - [`grammar`]: the reply's JSON schema and GBNF grammar, which a language-model engineer
//!   derives from the same limits, so that what it is asked for and what is accepted never
//!   disagree.
//!
//! Every public item is also here, at `floe_plugin_api::design::*`.
//!
//! # Context modules
//! | module | what | from |
//! |---|---|---|
//! | F | failure counts by kind, valid and optimal rates, per map size, on the validation set after the last round | the last [`crate::RoundRecord`] |
//! | G | design guidelines | an editable file (default `templates/guidelines.md`) |
//! | H | earlier configurations with their failures, with or without round 0's default | the history |
//! | S | the engineer's previous rationale | the run's designs |
//! | T | training details: round and epochs ("bookkeeping", the default), or also the hyperparameters ("full") | the run's configuration |
//!
//! Presets (our reading of the paper's ablation, each adding to the one before, V4 replacing
//! V3's H): V1 = F; V2 = F G; V3 = F G H (with round 0); V4 = F G H (without round 0); V5 = V4 +
//! S; V6 = V5 + T, the default.
//!
//! The prompt is a template file (default `templates/context.md`) with the placeholders
//! `{{F}}`, `{{G}}`, `{{H}}`, `{{S}}`, `{{T}}` (each module's text, or nothing when the preset
//! leaves it out), `{{round}}` and `{{limits}}` (the [`DesignLimits`] as JSON, which the
//! template must contain: a language model reads them there). An engineer receives the same
//! limits as a value beside the context ([`crate::EnvEngineer::design`]); nothing reads them
//! back out of the text.

pub mod context;
pub mod grammar;
pub mod limits;

pub use context::{
    ContextInput, ContextOptions, Module, Preset, TrainingDetails, CONTEXT_TEMPLATE, GUIDELINES,
    HISTORY_FENCE,
};
pub use limits::{Adopted, DesignLimits, DesignLimitsRecord, EngineerReply};
