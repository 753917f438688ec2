//! A validation's count: a trainee's answers to a set of instances, verified, summarised per
//! agent count × map size as the paper's tables (valid / optimal rate, and their mean over map
//! sizes per agent count), with the failures counted by kind; pooled per map size, the results
//! the engineer's module F and the curricula read.

use std::collections::BTreeMap;

use floe_core::{FailureKind, Instance};
use floe_plugin_api::{FailureCounts, SizeResult, VerdictRecord};
use serde::{Deserialize, Serialize};

use crate::error::RoundsError;
use crate::verdicts::{verdicts, Answer};

/// One agent count × map size cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalCell {
    pub agents: u32,
    /// N of an N×N map (the larger side of a rectangular one).
    pub size: u32,
    pub instances: u32,
    pub valid: u32,
    pub optimal: u32,
    /// Failures by kind (snake-case names in JSON).
    pub failures: FailureCounts,
}

impl EvalCell {
    #[must_use]
    pub fn valid_rate(&self) -> f64 {
        f64::from(self.valid) / f64::from(self.instances.max(1))
    }
    #[must_use]
    pub fn optimal_rate(&self) -> f64 {
        f64::from(self.optimal) / f64::from(self.instances.max(1))
    }
}

/// An evaluation: its cells in (agents, size) order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub cells: Vec<EvalCell>,
}

/// One instance's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub valid: bool,
    pub optimal: bool,
}

/// Verifies `answers` (one per instance) and counts the outcomes per cell.
///
/// # Errors
/// Engine errors; as many answers as instances are needed.
pub fn score(instances: &[&Instance], answers: &[Answer]) -> Result<EvalReport, RoundsError> {
    score_each(instances, answers).map(|(report, _)| report)
}

/// As [`score`], with each instance's outcome too (in the order of `instances`), for paired
/// comparisons of two trainees on one set.
///
/// # Errors
/// As [`score`].
pub fn score_each(
    instances: &[&Instance],
    answers: &[Answer],
) -> Result<(EvalReport, Vec<Outcome>), RoundsError> {
    let records = verdicts(instances, answers)?;
    Ok(count(instances, &records))
}

/// Counts verdict records (`records[i]` of `instances[i]`) per cell, with each instance's outcome.
#[must_use]
pub fn count(instances: &[&Instance], records: &[VerdictRecord]) -> (EvalReport, Vec<Outcome>) {
    let mut cells: BTreeMap<(u32, u32), EvalCell> = BTreeMap::new();
    let mut each = Vec::with_capacity(records.len());
    for (inst, r) in instances.iter().zip(records) {
        let (k, size) = (inst.num_agents() as u32, inst.grid.width().max(inst.grid.height()));
        let c = cells.entry((k, size)).or_insert_with(|| EvalCell {
            agents: k,
            size,
            instances: 0,
            valid: 0,
            optimal: 0,
            failures: FailureCounts::new(),
        });
        let outcome = Outcome { valid: r.failure == 0, optimal: r.failure == 0 && r.optimal == 1 };
        c.instances += 1;
        c.valid += u32::from(outcome.valid);
        c.optimal += u32::from(outcome.optimal);
        if let Some(kind) = FailureKind::from_code(u32::from(r.failure)) {
            *c.failures.entry(kind).or_default() += 1;
        }
        each.push(outcome);
    }
    (EvalReport { cells: cells.into_values().collect() }, each)
}

impl EvalReport {
    /// The agent counts present.
    #[must_use]
    pub fn agent_counts(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.cells.iter().map(|c| c.agents).collect();
        v.dedup();
        v
    }

    /// The map sizes present, ascending.
    #[must_use]
    pub fn sizes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.cells.iter().map(|c| c.size).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn cell(&self, agents: u32, size: u32) -> Option<&EvalCell> {
        self.cells.iter().find(|c| c.agents == agents && c.size == size)
    }

    /// Mean over map sizes of the (valid, optimal) rates of one agent count (the paper's "mean").
    #[must_use]
    pub fn mean(&self, agents: u32) -> (f64, f64) {
        let cs: Vec<&EvalCell> = self.cells.iter().filter(|c| c.agents == agents).collect();
        let n = cs.len().max(1) as f64;
        (
            cs.iter().map(|c| c.valid_rate()).sum::<f64>() / n,
            cs.iter().map(|c| c.optimal_rate()).sum::<f64>() / n,
        )
    }

    /// (valid, optimal) rates over every instance.
    #[must_use]
    pub fn overall(&self) -> (f64, f64) {
        let n: u32 = self.cells.iter().map(|c| c.instances).sum();
        let v: u32 = self.cells.iter().map(|c| c.valid).sum();
        let o: u32 = self.cells.iter().map(|c| c.optimal).sum();
        (f64::from(v) / f64::from(n.max(1)), f64::from(o) / f64::from(n.max(1)))
    }

    /// Per map size, pooled over agent counts: what a curriculum reads.
    #[must_use]
    pub fn size_results(&self) -> Vec<SizeResult> {
        self.sizes()
            .into_iter()
            .map(|size| {
                let cs: Vec<&EvalCell> = self.cells.iter().filter(|c| c.size == size).collect();
                let n: u32 = cs.iter().map(|c| c.instances).sum();
                let mut failures = FailureCounts::new();
                for c in &cs {
                    for (k, v) in &c.failures {
                        *failures.entry(*k).or_default() += v;
                    }
                }
                SizeResult {
                    size,
                    valid_rate: f64::from(cs.iter().map(|c| c.valid).sum::<u32>()) / f64::from(n.max(1)),
                    optimal_rate: f64::from(cs.iter().map(|c| c.optimal).sum::<u32>()) / f64::from(n.max(1)),
                    instances: n,
                    failures,
                    mean_abs_advantage: None,
                }
            })
            .collect()
    }

    /// The tables as Markdown: valid / optimal % per agent count × map size with the mean, then
    /// the failures by kind per cell.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let sizes = self.sizes();
        let mut s = String::from("| agents |");
        for z in &sizes {
            s.push_str(&format!(" {z}x{z} |"));
        }
        s.push_str(" mean |\n|---|");
        s.push_str(&"---|".repeat(sizes.len() + 1));
        s.push('\n');
        for k in self.agent_counts() {
            s.push_str(&format!("| {k} |"));
            for &z in &sizes {
                match self.cell(k, z) {
                    Some(c) => s.push_str(&format!(
                        " {:.2} / {:.2} |",
                        100.0 * c.valid_rate(),
                        100.0 * c.optimal_rate()
                    )),
                    None => s.push_str(" – |"),
                }
            }
            let (v, o) = self.mean(k);
            s.push_str(&format!(" {:.2} / {:.2} |\n", 100.0 * v, 100.0 * o));
        }
        s.push_str("\nvalid % / optimal %; mean = unweighted mean over map sizes\n\n");
        s.push_str("| agents | size | instances | valid | optimal |");
        for k in FailureKind::ALL {
            s.push_str(&format!(" {} |", k.name()));
        }
        s.push_str("\n|---|---|---|---|---|");
        s.push_str(&"---|".repeat(FailureKind::ALL.len()));
        s.push('\n');
        for c in &self.cells {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |",
                c.agents, c.size, c.instances, c.valid, c.optimal
            ));
            for k in FailureKind::ALL {
                s.push_str(&format!(" {} |", c.failures.get(&k).copied().unwrap_or(0)));
            }
            s.push('\n');
        }
        s
    }

    /// The report as JSON: the cells, the mean per agent count and the overall rates.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let means: Vec<serde_json::Value> = self
            .agent_counts()
            .into_iter()
            .map(|k| {
                let (v, o) = self.mean(k);
                serde_json::json!({"agents": k, "valid_rate": v, "optimal_rate": o})
            })
            .collect();
        let cells: Vec<serde_json::Value> = self
            .cells
            .iter()
            .map(|c| {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                v["valid_rate"] = c.valid_rate().into();
                v["optimal_rate"] = c.optimal_rate().into();
                v
            })
            .collect();
        let (v, o) = self.overall();
        serde_json::json!({"cells": cells, "mean": means, "overall": {"valid_rate": v, "optimal_rate": o}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdicts::DecodedPlan;
    use floe_core::{generate, GeneratorConfig, Move};

    fn optimal_moves(inst: &Instance) -> Vec<Vec<Move>> {
        let opt = inst.optimal.as_ref().unwrap();
        opt.moves.iter().map(|m| floe_core::moves::parse_moves(m).unwrap()).collect()
    }

    #[test]
    fn scores_and_tables_by_hand() {
        let mut insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(4).seed(3)).unwrap();
        insts.extend(
            generate(&GeneratorConfig::default().size(4).agents(3).hole_ratio(0.1).count(2).seed(4)).unwrap(),
        );
        let refs: Vec<&Instance> = insts.iter().collect();
        let mut plans: Vec<DecodedPlan> =
            insts.iter().map(|i| DecodedPlan { moves: optimal_moves(i), finished: true }).collect();
        // 3x3: 3 optimal, 1 with an agent missing. 4x4: 1 optimal, 1 unfinished.
        plans[1].moves.pop();
        plans[5].finished = false;
        // Plan 2 waits once before agent 0 sets off: one more step of cost, so not optimal
        // (valid, unless the delay causes a conflict).
        plans[2].moves[0].insert(0, Move::Wait);
        let mut answers: Vec<Answer> = plans.into_iter().map(Answer::Plan).collect();
        // A written answer beside the plans: the first 4x4 instance's plan as text, counted alike.
        let text: Vec<String> = optimal_moves(&insts[4])
            .iter()
            .enumerate()
            .map(|(a, m)| format!("Agent {a}: {}", m.iter().map(|m| m.word()).collect::<Vec<_>>().join(" ")))
            .collect();
        answers[4] = Answer::Text(text.join("\n"));
        let r = score(&refs, &answers).unwrap();
        assert_eq!(r.cells.len(), 2);
        let c3 = &r.cells[0];
        assert_eq!((c3.agents, c3.size, c3.instances), (2, 3, 4));
        assert_eq!(c3.failures.get(&FailureKind::WrongAgentCount), Some(&1));
        assert_eq!(r.cells[1].failures.get(&FailureKind::ParseError), Some(&1));
        assert_eq!(c3.optimal, 2);
        let (v2, o2) = r.mean(2);
        assert!((o2 - 0.5).abs() < 1e-12 && v2 >= 0.5);
        assert_eq!(r.mean(3), (0.5, 0.5));
        let md = r.to_markdown();
        assert!(md.contains("| 3 | – | 50.00 / 50.00 | 50.00 / 50.00 |"), "{md}");
        let j = r.to_json();
        assert_eq!(j["mean"][1]["agents"], 3);
        assert_eq!(j["cells"][1]["failures"]["parse_error"], 1);
        assert_eq!(r.size_results()[1].instances, 2);
    }
}
