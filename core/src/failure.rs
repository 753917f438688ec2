//! What can be wrong with a plan: the kinds of failure, in the verifier's vocabulary, with their
//! codes (the `kind` of the batch records and of the C API's `FLOE_FAILURE_*`), and the first
//! failure of a plan. The rules ([`crate::rules`]), the verifier ([`mod@crate::verify`]) and the
//! engine all speak it; it depends on nothing else in floe.

use serde::{Deserialize, Serialize};

/// "No value" in `u32` result fields: no agent, no time, no cost known.
pub const NONE: u32 = u32::MAX;

/// The kinds of failure, in the verifier's vocabulary (serialised in snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum FailureKind {
    ParseError = 1,
    WrongAgentCount = 2,
    IllegalMove = 3,
    OutOfBounds = 4,
    Hole = 5,
    VertexConflict = 6,
    EdgeConflict = 7,
    GoalNotReached = 8,
}

impl FailureKind {
    /// Every kind, in code order.
    pub const ALL: [FailureKind; 8] = [
        FailureKind::ParseError,
        FailureKind::WrongAgentCount,
        FailureKind::IllegalMove,
        FailureKind::OutOfBounds,
        FailureKind::Hole,
        FailureKind::VertexConflict,
        FailureKind::EdgeConflict,
        FailureKind::GoalNotReached,
    ];

    /// The kind of failure code `code` (1..=8, the `kind` of a [`crate::verify::VerifyOut`] and
    /// the `failure` of a batch record); `None` for 0 (valid) and for codes no kind has. The one
    /// decoder of failure codes.
    #[must_use]
    pub fn from_code(code: u32) -> Option<Self> {
        usize::try_from(code).ok().and_then(|c| c.checked_sub(1)).and_then(|i| Self::ALL.get(i)).copied()
    }

    /// The snake-case name used in JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::ParseError => "parse_error",
            FailureKind::WrongAgentCount => "wrong_agent_count",
            FailureKind::IllegalMove => "illegal_move",
            FailureKind::OutOfBounds => "out_of_bounds",
            FailureKind::Hole => "hole",
            FailureKind::VertexConflict => "vertex_conflict",
            FailureKind::EdgeConflict => "edge_conflict",
            FailureKind::GoalNotReached => "goal_not_reached",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The first thing wrong with a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    /// The agent at fault (for conflicts, the lower-numbered of the two); `None` for
    /// `parse_error` and `wrong_agent_count`.
    pub agent: Option<usize>,
    /// The time step; `None` for `parse_error` and `wrong_agent_count`.
    pub time: Option<u32>,
    /// A sentence for people.
    pub detail: String,
}
