//! The benchmark suite in the paper's layout: agent counts × map sizes k…N × wait-ratio subsets,
//! a fixed number of instances per cell.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::generator::{generate_with_progress, GenerateError, GeneratorConfig, MAX_SIDE};
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
                    out.push(
                        GeneratorConfig::default()
                            .size(size)
                            .agents(k)
                            .hole_ratio(self.hole_ratio)
                            .wait_ratio(w)
                            .count(self.per_cell)
                            .seed(seed),
                    );
                }
            }
        }
        out
    }
}

impl SuiteConfig {
    /// Refuses, before any work, a layout that cannot give a whole suite: no agent counts, no
    /// wait ratios, no instances per cell, an agent count with no map size in range, or a cell
    /// the generator would refuse (a map side over 256, ratios out of range, too few free cells).
    ///
    /// # Errors
    /// [`GenerateError::Config`] naming the setting.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let bad = |m: String| Err(GenerateError::Config(m));
        if self.agents.is_empty() || self.agents.contains(&0) {
            return bad("agent counts must be given, each at least 1".into());
        }
        if self.wait_ratios.is_empty() {
            return bad("at least one wait ratio is needed".into());
        }
        if self.per_cell == 0 {
            return bad("instances per cell must be at least 1".into());
        }
        if self.min_size > self.max_size {
            return bad(format!(
                "the smallest map side {} is larger than the largest {}",
                self.min_size, self.max_size
            ));
        }
        if self.max_size > MAX_SIDE {
            return bad(format!(
                "the largest map side {} is over the generator's limit {MAX_SIDE}",
                self.max_size
            ));
        }
        for &k in &self.agents {
            let first = (k as u32).max(self.min_size).max(1);
            if first > self.max_size {
                return bad(format!(
                    "{k} agents get no map size: sizes run from {first} (the larger of the agent count and the smallest side) to {}",
                    self.max_size
                ));
            }
        }
        self.cells().iter().try_for_each(GeneratorConfig::validate)
    }

    /// Instances in the whole suite.
    #[must_use]
    pub fn total(&self) -> usize {
        self.cells().iter().map(|c| c.count).sum()
    }
}

/// Generates every cell of the suite.
///
/// # Errors
/// A layout that [`SuiteConfig::validate`] refuses, or the first cell that could not be
/// generated.
pub fn build_suite(config: &SuiteConfig) -> Result<Vec<SuiteCell>, GenerateError> {
    build_suite_with_progress(config, &crate::progress::Silent)
}

/// As [`build_suite`], advancing `progress` by one for each instance as it is finished. The
/// caller begins and ends the stage (of [`SuiteConfig::total`] units).
///
/// # Errors
/// As [`build_suite`].
pub fn build_suite_with_progress(
    config: &SuiteConfig,
    progress: &dyn crate::progress::Progress,
) -> Result<Vec<SuiteCell>, GenerateError> {
    config.validate()?;
    config
        .cells()
        .into_iter()
        .map(|g| {
            Ok(SuiteCell {
                agents: g.agents,
                size: g.width,
                wait_ratio: g.wait_ratio,
                instances: generate_with_progress(&g, progress)?,
            })
        })
        .collect()
}

/// The manifest `suite.json`: the configuration and, per cell, its file and instance count (as
/// pretty JSON with a final newline). Cells are given with their counts, so that a suite built
/// in shards elsewhere can write the same manifest.
#[must_use]
pub fn manifest<'a>(config: &SuiteConfig, cells: impl IntoIterator<Item = (&'a SuiteCell, usize)>) -> String {
    let files: Vec<serde_json::Value> = cells
        .into_iter()
        .map(|(cell, count)| {
            serde_json::json!({
                "file": cell.file_name(),
                "agents": cell.agents,
                "size": cell.size,
                "wait_ratio": cell.wait_ratio,
                "count": count,
            })
        })
        .collect();
    let manifest = serde_json::json!({ "config": config, "cells": files });
    serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n"
}

/// Writes the suite as one JSONL file per cell plus `suite.json` ([`manifest`]).
///
/// # Errors
/// File-system errors.
pub fn write_suite(dir: &Path, config: &SuiteConfig, cells: &[SuiteCell]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for cell in cells {
        let mut text = String::new();
        for inst in &cell.instances {
            text.push_str(&inst.to_json());
            text.push('\n');
        }
        std::fs::write(dir.join(cell.file_name()), text)?;
    }
    std::fs::write(dir.join("suite.json"), manifest(config, cells.iter().map(|c| (c, c.instances.len()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(change: impl FnOnce(&mut SuiteConfig)) -> String {
        let mut c = SuiteConfig::default();
        change(&mut c);
        match c.validate() {
            Err(GenerateError::Config(m)) => m,
            other => panic!("{c:?} should be refused, got {other:?}"),
        }
    }

    #[test]
    fn layouts_that_give_nothing_are_refused_up_front() {
        SuiteConfig::default().validate().unwrap();
        assert!(refused(|c| c.per_cell = 0).contains("at least 1"));
        assert!(refused(|c| (c.min_size, c.max_size) = (20, 10)).contains("20 is larger than the largest 10"));
        assert!(refused(|c| c.max_size = 300).contains("300 is over the generator's limit 256"));
        assert!(refused(|c| c.max_size = 4).contains("5 agents get no map size"));
        assert!(refused(|c| c.hole_ratio = 0.9).contains("distinct free cells"));
        assert!(refused(|c| c.wait_ratios = vec![]).contains("wait ratio"));
        assert!(refused(|c| c.hole_ratio = -0.1).contains("hole_ratio -0.1"));
        // Refused before any instance is generated, not at the first cell out of range.
        let c = SuiteConfig { agents: vec![2], max_size: 300, per_cell: 1, ..SuiteConfig::default() };
        struct Count(std::sync::atomic::AtomicU64);
        impl crate::progress::Progress for Count {
            fn begin(&self, _: &str, _: u64) {}
            fn advance(&self, n: u64, _: &str) {
                self.0.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
            fn end(&self, _: &str) {}
            fn line(&self, _: &str) {}
        }
        let made = Count(std::sync::atomic::AtomicU64::new(0));
        let got = build_suite_with_progress(&c, &made);
        assert!(matches!(got, Err(GenerateError::Config(_))), "{got:?}");
        assert_eq!(made.0.load(std::sync::atomic::Ordering::Relaxed), 0);
        // The same layout one size smaller is generated, and every instance is counted.
        let ok = SuiteConfig {
            agents: vec![2],
            min_size: 3,
            max_size: 3,
            wait_ratios: vec![0.5],
            per_cell: 2,
            ..c
        };
        let cells = build_suite_with_progress(&ok, &made).unwrap();
        assert_eq!(made.0.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert_eq!(cells.iter().map(|c| c.instances.len()).sum::<usize>(), ok.total());
    }
}
