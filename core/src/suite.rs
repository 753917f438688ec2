//! The benchmark suite in the paper's layout: agent counts × map sizes k…N × wait-ratio subsets,
//! a fixed number of instances per cell.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::generator::{generate, GenerateError, GeneratorConfig};
use crate::instance::Instance;
use crate::rng::hash;

/// The suite's layout. The default is the paper's: agents 3, 4, 5 × map sizes k…10 × wait
/// ratios 0.25 / 0.50 / 0.75, 50 instances per cell, hole ratio 0.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteConfig {
    pub agents: Vec<usize>,
    /// Smallest map side; 0 (the default): the agent count. Sizes run from the larger of the two,
    /// so a hole ratio that leaves a k×k map too few free cells for k agents can skip it.
    #[serde(default)]
    pub min_size: u32,
    /// Map sizes run from the agent count (or `min_size`) up to this.
    pub max_size: u32,
    pub wait_ratios: Vec<f64>,
    pub per_cell: usize,
    pub hole_ratio: f64,
    pub seed: u64,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        Self {
            agents: vec![3, 4, 5],
            min_size: 0,
            max_size: 10,
            wait_ratios: vec![0.25, 0.5, 0.75],
            per_cell: 50,
            hole_ratio: 0.1,
            seed: 0,
        }
    }
}

/// One cell of the suite: an agent count, a map size and a wait ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteCell {
    pub agents: usize,
    pub size: u32,
    pub wait_ratio: f64,
    pub instances: Vec<Instance>,
}

impl SuiteCell {
    /// The cell's file name, e.g. `3ag_5x5_wr0.50.jsonl`.
    #[must_use]
    pub fn file_name(&self) -> String {
        format!("{}ag_{}x{}_wr{:.2}.jsonl", self.agents, self.size, self.size, self.wait_ratio)
    }
}

impl SuiteConfig {
    /// The generator settings of every cell, in (agents, size, wait ratio) order.
    #[must_use]
    pub fn cells(&self) -> Vec<GeneratorConfig> {
        let mut out = Vec::new();
        for &k in &self.agents {
            for size in (k as u32).max(self.min_size).max(1)..=self.max_size {
                for &w in &self.wait_ratios {
                    let seed = hash(&[self.seed, k as u64, u64::from(size), (w * 1e6).round() as u64]);
                    out.push(GeneratorConfig::square(size, k, self.hole_ratio, w, self.per_cell, seed));
                }
            }
        }
        out
    }
}

/// Generates every cell of the suite.
///
/// # Errors
/// The first cell that could not be generated.
pub fn build_suite(config: &SuiteConfig) -> Result<Vec<SuiteCell>, GenerateError> {
    config
        .cells()
        .into_iter()
        .map(|g| {
            Ok(SuiteCell {
                agents: g.agents,
                size: g.width,
                wait_ratio: g.wait_ratio,
                instances: generate(&g)?,
            })
        })
        .collect()
}

/// Writes the suite as one JSONL file per cell plus `suite.json` (the configuration and the file
/// list).
///
/// # Errors
/// File-system errors.
pub fn write_suite(dir: &Path, config: &SuiteConfig, cells: &[SuiteCell]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    for cell in cells {
        let mut text = String::new();
        for inst in &cell.instances {
            text.push_str(&inst.to_json());
            text.push('\n');
        }
        std::fs::write(dir.join(cell.file_name()), text)?;
        files.push(serde_json::json!({
            "file": cell.file_name(),
            "agents": cell.agents,
            "size": cell.size,
            "wait_ratio": cell.wait_ratio,
            "count": cell.instances.len(),
        }));
    }
    let manifest = serde_json::json!({ "config": config, "cells": files });
    std::fs::write(dir.join("suite.json"), serde_json::to_string_pretty(&manifest)? + "\n")
}
