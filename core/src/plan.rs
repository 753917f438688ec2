//! Plans: per-agent move strings or per-agent coordinate paths, and their JSON forms
//! `{"moves": ["RRDW", "UL"]}` and `{"paths": [[[0, 0], [0, 1]], [[2, 2]]]}`.

use serde::Deserialize;

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

    /// Parses the JSON plan forms.
    ///
    /// # Errors
    /// Malformed JSON, neither or both of `moves` and `paths`, unknown move letters, empty paths.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        let raw: RawPlan = serde_json::from_str(text).map_err(|e| PlanError::Json(e.to_string()))?;
        match (raw.moves, raw.paths) {
            (Some(m), None) => Self::from_move_strings(&m),
            (None, Some(p)) => {
                if let Some(agent) = p.iter().position(Vec::is_empty) {
                    return Err(PlanError::EmptyPath { agent });
                }
                Ok(Plan::Paths(p.into_iter().map(|v| v.into_iter().map(|[r, c]| (r, c)).collect()).collect()))
            }
            _ => Err(PlanError::Shape),
        }
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
}
