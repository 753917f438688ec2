//! MAPF-FrozenLake instances and their JSON form.
//!
//! ```json
//! {"id": "3ag_4x4_wr0.50_000", "grid": ["FFHF", "FFFF", "HFFF", "FFFF"],
//!  "agents": [{"start": [0, 0], "goal": [3, 3]}, {"start": [3, 0], "goal": [0, 3]}],
//!  "optimal": {"soc": 12, "makespan": 6, "moves": ["RDDRRD", "UUURRR"]},
//!  "needs_wait": false}
//! ```
//! Rows run top to bottom; coordinates are `[row, col]`, 0-based from the top-left. `id`,
//! `optimal` and `needs_wait` are optional; other keys are ignored.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::InstanceError;
use crate::grid::{Cell, Grid, Pos};
use crate::moves::parse_moves;

/// One agent's start and goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Agent {
    pub start: Pos,
    pub goal: Pos,
}

/// The ground truth a generated instance carries: a CBS-optimal plan and its costs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OptimalPlan {
    /// Optimal sum of costs.
    pub soc: u32,
    /// Makespan of the stored plan (the largest agent cost).
    pub makespan: u32,
    /// Per-agent move strings of an optimal plan.
    pub moves: Vec<String>,
}

/// A validated instance: the grid, k agents with distinct starts and distinct goals on frozen
/// cells, and optional ground truth.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Instance {
    pub id: Option<String>,
    pub grid: Grid,
    pub agents: Vec<Agent>,
    pub optimal: Option<OptimalPlan>,
    pub needs_wait: Option<bool>,
}

#[derive(Serialize, Deserialize)]
struct RawAgent {
    start: [i64; 2],
    goal: [i64; 2],
}

#[derive(Serialize, Deserialize)]
struct RawInstance {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    grid: Vec<String>,
    agents: Vec<RawAgent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    optimal: Option<OptimalPlan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    needs_wait: Option<bool>,
}

impl Instance {
    /// Builds and validates an instance.
    ///
    /// # Errors
    /// Any broken rule: see [`InstanceError`].
    pub fn new(grid: Grid, agents: Vec<Agent>) -> Result<Self, InstanceError> {
        let inst = Self { id: None, grid, agents, optimal: None, needs_wait: None };
        inst.validate()?;
        Ok(inst)
    }

    /// Checks every rule an instance must satisfy: at least one agent; starts and goals on the
    /// grid, on frozen cells, pairwise distinct; a stored optimal plan with one valid move string
    /// per agent.
    ///
    /// # Errors
    /// The first broken rule.
    pub fn validate(&self) -> Result<(), InstanceError> {
        if self.agents.is_empty() {
            return Err(InstanceError::NoAgents);
        }
        let (w, h) = (self.grid.width(), self.grid.height());
        // Each start and goal with the first agent that has it: one lookup per agent instead of
        // a comparison with every earlier agent, which took seconds for tens of thousands.
        let mut starts: HashMap<Pos, usize> = HashMap::with_capacity(self.agents.len());
        let mut goals: HashMap<Pos, usize> = HashMap::with_capacity(self.agents.len());
        for (i, a) in self.agents.iter().enumerate() {
            for (what, p) in [("start", a.start), ("goal", a.goal)] {
                if p.row >= h || p.col >= w {
                    return Err(InstanceError::OutOfGrid {
                        agent: i,
                        what,
                        row: i64::from(p.row),
                        col: i64::from(p.col),
                        width: w,
                        height: h,
                    });
                }
                if self.grid.is_hole(self.grid.cell(p)) {
                    return Err(InstanceError::OnHole { agent: i, what, row: p.row, col: p.col });
                }
            }
            // The lowest-numbered earlier agent sharing the start or the goal; the start on a tie.
            let clash = match (starts.get(&a.start), goals.get(&a.goal)) {
                (Some(&s), Some(&g)) if g < s => Some((g, "goal", a.goal)),
                (Some(&s), _) => Some((s, "start", a.start)),
                (None, Some(&g)) => Some((g, "goal", a.goal)),
                (None, None) => None,
            };
            if let Some((first, what, p)) = clash {
                return Err(InstanceError::Duplicate { first, second: i, what, row: p.row, col: p.col });
            }
            starts.insert(a.start, i);
            goals.insert(a.goal, i);
        }
        if let Some(opt) = &self.optimal {
            if opt.moves.len() != self.agents.len() {
                return Err(InstanceError::BadOptimal(format!(
                    "{} move strings for {} agents",
                    opt.moves.len(),
                    self.agents.len()
                )));
            }
            for (i, m) in opt.moves.iter().enumerate() {
                if let Err((idx, ch)) = parse_moves(m) {
                    return Err(InstanceError::BadOptimal(format!(
                        "agent {i}, move {idx}: unknown letter {ch:?}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Number of agents, k.
    #[must_use]
    pub fn num_agents(&self) -> usize {
        self.agents.len()
    }

    /// Start cells in agent order.
    #[must_use]
    pub fn start_cells(&self) -> Vec<Cell> {
        self.agents.iter().map(|a| self.grid.cell(a.start)).collect()
    }

    /// Goal cells in agent order.
    #[must_use]
    pub fn goal_cells(&self) -> Vec<Cell> {
        self.agents.iter().map(|a| self.grid.cell(a.goal)).collect()
    }

    /// Parses and validates one instance from JSON.
    ///
    /// # Errors
    /// Malformed JSON or a broken rule.
    pub fn from_json(text: &str) -> Result<Self, InstanceError> {
        let raw: RawInstance = crate::json::from_str(text).map_err(|e| InstanceError::Json(e.to_string()))?;
        Self::from_raw(raw)
    }

    /// Parses and validates one instance from a JSON value.
    ///
    /// # Errors
    /// Malformed JSON or a broken rule.
    pub fn from_value(value: serde_json::Value) -> Result<Self, InstanceError> {
        let raw: RawInstance =
            serde_json::from_value(value).map_err(|e| InstanceError::Json(e.to_string()))?;
        Self::from_raw(raw)
    }

    fn from_raw(raw: RawInstance) -> Result<Self, InstanceError> {
        let grid = Grid::from_rows(&raw.grid)?;
        let (w, h) = (grid.width(), grid.height());
        let mut agents = Vec::with_capacity(raw.agents.len());
        for (i, a) in raw.agents.iter().enumerate() {
            let conv = |what: &'static str, [row, col]: [i64; 2]| {
                if grid.in_bounds(row, col) {
                    Ok(Pos::new(row as u32, col as u32))
                } else {
                    Err(InstanceError::OutOfGrid { agent: i, what, row, col, width: w, height: h })
                }
            };
            agents.push(Agent { start: conv("start", a.start)?, goal: conv("goal", a.goal)? });
        }
        let inst = Self { id: raw.id, grid, agents, optimal: raw.optimal, needs_wait: raw.needs_wait };
        inst.validate()?;
        Ok(inst)
    }

    /// The instance as a JSON value in the file format above.
    #[must_use]
    pub fn to_value(&self) -> serde_json::Value {
        let raw = RawInstance {
            id: self.id.clone(),
            grid: self.grid.to_rows(),
            agents: self
                .agents
                .iter()
                .map(|a| RawAgent {
                    start: [i64::from(a.start.row), i64::from(a.start.col)],
                    goal: [i64::from(a.goal.row), i64::from(a.goal.col)],
                })
                .collect(),
            optimal: self.optimal.clone(),
            needs_wait: self.needs_wait,
        };
        serde_json::to_value(raw).expect("instances always serialise")
    }

    /// The instance as one line of JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// Reads one instance (a JSON object) or many (JSON Lines, or a JSON array) from text. Errors
/// carry the 1-based line number for JSON Lines.
///
/// # Errors
/// Malformed JSON or a broken rule, with the line (or array index) where it occurred.
pub fn parse_instances(text: &str) -> Result<Vec<Instance>, (usize, InstanceError)> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let values: Vec<serde_json::Value> =
            crate::json::from_str(text).map_err(|e| (0, InstanceError::Json(e.to_string())))?;
        if values.is_empty() {
            return Err((0, InstanceError::Json("no instance in the input".into())));
        }
        return values
            .into_iter()
            .enumerate()
            .map(|(i, v)| Instance::from_value(v).map_err(|e| (i + 1, e)))
            .collect();
    }
    // A single pretty-printed object spans several lines: try the whole text first.
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        crate::json::unique_keys(text).map_err(|e| (1, InstanceError::Json(e.to_string())))?;
        return Instance::from_value(value).map(|i| vec![i]).map_err(|e| (1, e));
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(Instance::from_json(line).map_err(|e| (n + 1, e))?);
    }
    if out.is_empty() {
        return Err((0, InstanceError::Json("no instance in the input".into())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [2, 2]}, {"start": [2, 0], "goal": [0, 2]}]}"#;

    #[test]
    fn json_round_trips() {
        let inst = Instance::from_json(TWO).expect("valid");
        assert_eq!(inst.num_agents(), 2);
        assert_eq!(Instance::from_json(&inst.to_json()).expect("valid"), inst);
        let many = parse_instances(&format!("{TWO}\n\n{TWO}\n")).expect("valid");
        assert_eq!(many.len(), 2);
    }

    #[test]
    fn broken_rules_are_named() {
        let bad = |s: &str| Instance::from_json(s).expect_err("must fail");
        assert!(matches!(
            bad(&TWO.replace("[2, 2]", "[3, 2]")),
            InstanceError::OutOfGrid { agent: 0, what: "goal", .. }
        ));
        assert!(matches!(
            bad(&TWO.replace("[2, 0]", "[0, 0]")),
            InstanceError::Duplicate { first: 0, second: 1, what: "start", .. }
        ));
        assert!(matches!(
            bad(&TWO.replace("[2, 2]", "[1, 1]")),
            InstanceError::OnHole { agent: 0, what: "goal", .. }
        ));
        // The first clash is with the lowest-numbered earlier agent, its start before its goal.
        let three =
            |agents: &str| bad(&format!(r#"{{"grid": ["FFF", "FFF", "FFF"], "agents": [{agents}]}}"#));
        let (a, b) = (r#"{"start": [0, 0], "goal": [2, 2]}"#, r#"{"start": [0, 1], "goal": [2, 1]}"#);
        assert!(matches!(
            three(&format!(r#"{a}, {b}, {{"start": [0, 0], "goal": [2, 1]}}"#)),
            InstanceError::Duplicate { first: 0, second: 2, what: "start", .. }
        ));
        assert!(matches!(
            three(&format!(r#"{a}, {b}, {{"start": [0, 1], "goal": [2, 2]}}"#)),
            InstanceError::Duplicate { first: 0, second: 2, what: "goal", row: 2, col: 2 }
        ));
        assert!(matches!(
            three(&format!(r#"{a}, {b}, {{"start": [0, 1], "goal": [2, 1]}}"#)),
            InstanceError::Duplicate { first: 1, second: 2, what: "start", .. }
        ));
        assert!(matches!(bad(&TWO.replace("[0, 0]", "[-1, 0]")), InstanceError::OutOfGrid { row: -1, .. }));
        assert!(matches!(bad(&TWO.replace("FHF", "FXF")), InstanceError::BadCell { ch: 'X', .. }));
        assert!(matches!(bad("{\"grid\": "), InstanceError::Json(_)));
        let err = parse_instances(&format!("{TWO}\n{{oops\n")).expect_err("line 2 is bad");
        assert_eq!(err.0, 2);
        // No instance at all is an error in every form, an empty array included.
        for empty in ["", "\n\n", "[]", " [ ]\n"] {
            assert_eq!(parse_instances(empty).expect_err("no instance").0, 0, "{empty:?}");
        }
    }
}
