//! The tiny whole-run configuration the integration tests start from: a one-layer model of width
//! 16, four warm-start steps, groups of 4 and 4 prompts a step; each test sets its rounds,
//! validation and further GRPO knobs.

use floe_train::config::{TrainConfig, WarmStartConfig};
use floe_train::grpo::GrpoConfig;
use floe_train::model::ModelConfig;
use floe_train::tokens::Layout;
use floe_train::{Plugins, RunOptions};

pub fn tiny(seed: u64) -> TrainConfig {
    TrainConfig {
        seed,
        threads: 1,
        model: ModelConfig { d_model: 16, layers: 1, heads: 2, d_ff: 32, layout: Layout::new(6, 32) },
        warm_start: WarmStartConfig {
            samples: 48,
            steps: 4,
            batch_size: 16,
            warmup_steps: 2,
            ..Default::default()
        },
        grpo: GrpoConfig { group_size: 4, prompts_per_step: 4, lr: 1e-3, ..GrpoConfig::default() },
        eval_batch: 32,
        ..TrainConfig::default()
    }
}

/// A fresh run's options (no resume, no progress bar, no interruption) writing into `dir`.
#[allow(dead_code)] // not every test crate that includes this module uses it
pub fn opts(dir: &std::path::Path) -> RunOptions {
    RunOptions::new(dir)
}

/// The plugins a configuration names, resolved by the registry as the CLI resolves them.
#[allow(dead_code)]
pub fn plugins(cfg: &TrainConfig) -> Plugins {
    floe_plugin_registry::rounds_plugins(&cfg.rounds).unwrap()
}

/// The lines of a JSON Lines file of a run (`steps.jsonl`, `rounds.jsonl`).
#[allow(dead_code)]
pub fn jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}
