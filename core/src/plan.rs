//! Plans: per-agent move strings or per-agent coordinate paths, and their JSON forms:
//! `{"moves": ["RRDW", "UL"]}` and `{"paths": [[[0, 0], [0, 1]], [[2, 2]]]}` (either may carry
//! the solver's `"soc"` and `"makespan"`, as `floe solve` prints them; they are not read), or a
//! bare array with one entry per agent: `["RRDW", "UL"]` or `[[[0, 0], [0, 1]], [[2, 2]]]`.
//! [`crate::reader`] reads these and free-text answers with one function.

use serde::Deserialize;
use serde_json::Value;

use crate::error::PlanError;
use crate::moves::{moves_to_string, parse_moves, Move};

/// A plan for every agent of an instance, as read; the verifier decides whether it is legal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Per agent, its moves from its start.
    Moves(Vec<Vec<Move>>),
    /// Per agent, its (row, col) at times 0, 1, …; the first entry should be its start.
    /// Coordinates are signed so that an answer that leaves the grid can be reported as such.
    Paths(Vec<Vec<(i64, i64)>>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    #[serde(default)]
    moves: Option<Vec<String>>,
    #[serde(default)]
    paths: Option<Vec<Vec<[i64; 2]>>>,
    /// The solver's costs (`floe solve`'s lines, an instance's `optimal` record): allowed, not
    /// read; the verifier computes the plan's own.
    #[serde(default)]
    #[allow(dead_code)]
    soc: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    #[allow(dead_code)]
    makespan: Option<serde::de::IgnoredAny>,
}

impl Plan {
    /// Number of agents the plan covers.
    #[must_use]
    pub fn num_agents(&self) -> usize {
        match self {
            Plan::Moves(m) => m.len(),
            Plan::Paths(p) => p.len(),
        }
    }

    /// The number of time steps the plan spans: its longest agent's moves (a path of `n` entries
    /// spans `n − 1`).
    #[must_use]
    pub fn horizon(&self) -> usize {
        match self {
            Plan::Moves(m) => m.iter().map(Vec::len).max().unwrap_or(0),
            Plan::Paths(p) => p.iter().map(|v| v.len().saturating_sub(1)).max().unwrap_or(0),
        }
    }

    /// Agent `agent`'s (row, col) at times 0, 1, … as the verifier reads the plan: its moves
    /// applied one by one from `start`, off the grid included, or its path as written. Where it
    /// stands at a time after its path ends is [`crate::rules::at`]'s: its last entry. `None`
    /// for an agent the plan does not cover.
    #[must_use]
    pub fn path(&self, agent: usize, start: (i64, i64)) -> Option<Vec<(i64, i64)>> {
        match self {
            Plan::Paths(p) => p.get(agent).cloned(),
            Plan::Moves(m) => m.get(agent).map(|moves| {
                let mut at = start;
                let mut path = Vec::with_capacity(moves.len() + 1);
                path.push(at);
                for mv in moves {
                    let (dr, dc) = mv.delta();
                    at = (at.0 + dr, at.1 + dc);
                    path.push(at);
                }
                path
            }),
        }
    }

    /// A plan from move strings such as `["RRDW", "UL"]`.
    ///
    /// # Errors
    /// [`PlanError::UnknownMove`] for a letter other than U, D, L, R, W.
    pub fn from_move_strings<S: AsRef<str>>(strings: &[S]) -> Result<Self, PlanError> {
        strings
            .iter()
            .enumerate()
            .map(|(agent, s)| {
                parse_moves(s.as_ref()).map_err(|(index, ch)| PlanError::UnknownMove { agent, index, ch })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Plan::Moves)
    }

    /// Parses the JSON plan forms (see the module docs).
    ///
    /// # Errors
    /// Malformed JSON, a value of none of the forms, neither or both of `moves` and `paths`,
    /// unknown move letters, empty paths.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        let value: Value = crate::json::from_str(text).map_err(|e| PlanError::Json(e.to_string()))?;
        match value {
            Value::Object(_) => {
                let raw: RawPlan =
                    serde_json::from_value(value).map_err(|e| PlanError::Json(e.to_string()))?;
                match (raw.moves, raw.paths) {
                    (Some(m), None) => Self::from_move_strings(&m),
                    (None, Some(p)) => Self::from_paths(p),
                    _ => Err(PlanError::Shape),
                }
            }
            Value::Array(items) if items.iter().all(Value::is_string) => {
                let m: Vec<String> =
                    items.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
                Self::from_move_strings(&m)
            }
            Value::Array(items) if items.iter().all(Value::is_array) => {
                let p: Vec<Vec<[i64; 2]>> = serde_json::from_value(Value::Array(items))
                    .map_err(|e| PlanError::Json(format!("an array of paths: {e}")))?;
                Self::from_paths(p)
            }
            _ => Err(PlanError::Shape),
        }
    }

    fn from_paths(p: Vec<Vec<[i64; 2]>>) -> Result<Self, PlanError> {
        if let Some(agent) = p.iter().position(Vec::is_empty) {
            return Err(PlanError::EmptyPath { agent });
        }
        Ok(Plan::Paths(p.into_iter().map(|v| v.into_iter().map(|[r, c]| (r, c)).collect()).collect()))
    }

    /// The plan as JSON in the form it was read.
    #[must_use]
    pub fn to_json(&self) -> String {
        match self {
            Plan::Moves(m) => {
                serde_json::json!({ "moves": m.iter().map(|v| moves_to_string(v)).collect::<Vec<_>>() })
                    .to_string()
            }
            Plan::Paths(p) => serde_json::json!({
                "paths": p.iter().map(|v| v.iter().map(|&(r, c)| [r, c]).collect::<Vec<_>>()).collect::<Vec<_>>()
            })
            .to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_forms_parse_and_errors_are_named() {
        let p = Plan::from_json(r#"{"moves": ["RRDW", ""]}"#).expect("valid");
        assert_eq!(p, Plan::Moves(vec![vec![Move::Right, Move::Right, Move::Down, Move::Wait], vec![]]));
        assert_eq!(Plan::from_json(&p.to_json()), Ok(p));
        let q = Plan::from_json(r#"{"paths": [[[0, 0], [0, 1]], [[2, -1]]]}"#).expect("valid");
        assert_eq!(q, Plan::Paths(vec![vec![(0, 0), (0, 1)], vec![(2, -1)]]));
        assert_eq!(
            Plan::from_json(r#"{"moves": ["RX"]}"#),
            Err(PlanError::UnknownMove { agent: 0, index: 1, ch: 'X' })
        );
        assert_eq!(Plan::from_json(r#"{"paths": [[]]}"#), Err(PlanError::EmptyPath { agent: 0 }));
        assert_eq!(Plan::from_json("{}"), Err(PlanError::Shape));
        assert!(matches!(Plan::from_json("{"), Err(PlanError::Json(_))));
    }

    #[test]
    fn paths_and_horizons_of_both_forms() {
        let m = Plan::from_move_strings(&["RUW", "L"]).expect("moves");
        assert_eq!(m.horizon(), 3);
        // Off the grid included: the verifier reports it, a picture shows it.
        assert_eq!(m.path(0, (0, 0)), Some(vec![(0, 0), (0, 1), (-1, 1), (-1, 1)]));
        assert_eq!(m.path(1, (2, 2)), Some(vec![(2, 2), (2, 1)]));
        assert_eq!(m.path(2, (0, 0)), None);
        let p = Plan::Paths(vec![vec![(0, 0), (0, 1)], vec![(2, 2)]]);
        assert_eq!((p.horizon(), p.path(1, (9, 9))), (1, Some(vec![(2, 2)])));
        assert_eq!(crate::rules::at(&p.path(0, (0, 0)).expect("a path"), 5), (0, 1));
        assert_eq!(Plan::Moves(vec![]).horizon(), 0);
    }

    #[test]
    fn bare_arrays_and_the_solvers_lines_are_plans_too() {
        let moves = Plan::Moves(vec![vec![Move::Right, Move::Right], vec![Move::Down]]);
        assert_eq!(Plan::from_json(r#"["RR", "D"]"#), Ok(moves.clone()));
        assert_eq!(Plan::from_json(r#"{"soc": 3, "makespan": 2, "moves": ["RR", "D"]}"#), Ok(moves));
        assert_eq!(
            Plan::from_json("[[[0, 0], [0, 1]], [[2, 2]]]"),
            Ok(Plan::Paths(vec![vec![(0, 0), (0, 1)], vec![(2, 2)]]))
        );
        assert_eq!(Plan::from_json("[]"), Ok(Plan::Moves(vec![])));
        assert_eq!(Plan::from_json(r#"["RZ"]"#), Err(PlanError::UnknownMove { agent: 0, index: 1, ch: 'Z' }));
        assert_eq!(Plan::from_json("[[[0, 0]], []]"), Err(PlanError::EmptyPath { agent: 1 }));
        // Mixed entries, other values, and fields of no plan are refused with the forms named.
        for bad in [r#"["RR", [[0, 0]]]"#, "3", r#""RR""#, "null"] {
            let e = Plan::from_json(bad).expect_err(bad);
            assert_eq!(e, PlanError::Shape, "{bad}");
            assert!(e.to_string().contains(r#"["RRD", "UL"]"#), "{e}");
        }
        let e = Plan::from_json(r#"{"moves": ["R"], "cost": 1}"#).expect_err("unknown field");
        assert!(e.to_string().contains("unknown field `cost`"), "{e}");
        let e = Plan::from_json(r#"[[[0, "a"]]]"#).expect_err("not a coordinate");
        assert!(e.to_string().contains("an array of paths"), "{e}");
    }
}
