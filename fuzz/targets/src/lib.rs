//! # floe-fuzz-targets
//!
//! The bodies of floe's fuzz targets: one `pub fn <target>(data: &[u8])` per parser that the C
//! API exposes. Each parses the bytes and, when the parse succeeds, checks what the parse
//! promises (the validated rules hold, the value survives a round trip through its own output,
//! the functions that consume it do not panic). A broken promise panics, so a fuzzer reports it
//! as a crash; a parse error is an `Err` and is fine.
//!
//! The cargo-fuzz crate in `fuzz/` calls these functions; `tests/replay.rs` replays every file
//! under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` through them on stable Rust.
//! Inputs that are not UTF-8 are skipped by the parsers' targets (every parser takes `&str`);
//! `level_driver` reads raw bytes: the calls a C host makes to the level-sampling driver.

mod answer;
mod instance;
mod levels;
mod movingai;
mod plan;
mod plugin;

pub use answer::text_answer;
pub use instance::{instance_json, instance_jsonl};
pub use levels::{level_driver, level_driver_run, DriverRun};
pub use movingai::movingai;
pub use plan::plan_json;
pub use plugin::{engineer_reply, history, round_config};

/// A fuzz target: takes any bytes, panics only on a bug.
pub type Target = fn(&[u8]);

/// Every target by name; the names are those of `fuzz/fuzz_targets/<name>.rs` and of the
/// corpus and regression folders.
pub const TARGETS: &[(&str, Target)] = &[
    ("instance_json", instance_json),
    ("instance_jsonl", instance_jsonl),
    ("plan_json", plan_json),
    ("text_answer", text_answer),
    ("movingai", movingai),
    ("round_config", round_config),
    ("history", history),
    ("engineer_reply", engineer_reply),
    ("level_driver", level_driver),
];
