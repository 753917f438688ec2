//! Error types for malformed instances and plans, and the words of floe's messages.

use thiserror::Error;

/// `n` and a noun, singular for one: `count(1, "hole", "holes")` is `"1 hole"`.
#[must_use]
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// An instance that breaks the rules of MAPF-FrozenLake or cannot be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceError {
    /// The text is not valid JSON of the instance shape.
    #[error("malformed instance JSON: {0}")]
    Json(String),
    /// The grid has no rows or no columns.
    #[error("the grid is empty")]
    EmptyGrid,
    /// Grid rows differ in length.
    #[error("grid row {row} has {len} cells, expected {expected}")]
    RaggedGrid { row: usize, len: usize, expected: usize },
    /// A grid character other than `F` or `H`.
    #[error("grid row {row}, column {col}: unexpected character {ch:?} (expected 'F' or 'H')")]
    BadCell { row: usize, col: usize, ch: char },
    /// The grid is larger than floe supports.
    #[error("grid of {width}x{height} is too large (at most {max} cells per side)")]
    GridTooLarge { width: usize, height: usize, max: usize },
    /// An instance with no agents.
    #[error("the instance has no agents")]
    NoAgents,
    /// A start or goal outside the grid.
    #[error("agent {agent}: {what} ({row}, {col}) is outside the {width}x{height} grid")]
    OutOfGrid { agent: usize, what: &'static str, row: i64, col: i64, width: u32, height: u32 },
    /// A start or goal on a hole.
    #[error("agent {agent}: {what} ({row}, {col}) is a hole")]
    OnHole { agent: usize, what: &'static str, row: u32, col: u32 },
    /// Two agents share a start or a goal.
    #[error("agents {first} and {second} share the {what} ({row}, {col})")]
    Duplicate { first: usize, second: usize, what: &'static str, row: u32, col: u32 },
    /// The stored optimal plan does not fit the instance.
    #[error("the stored optimal plan is inconsistent: {0}")]
    BadOptimal(String),
}

/// A plan that cannot be read (as opposed to a readable plan that breaks the rules, which the
/// verifier reports as a [`crate::Failure`]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// The text is not valid JSON of a plan shape.
    #[error("malformed plan JSON: {0}")]
    Json(String),
    /// A move letter other than U, D, L, R, W.
    #[error("agent {agent}, move {index}: unknown move letter {ch:?} (expected U, D, L, R or W)")]
    UnknownMove { agent: usize, index: usize, ch: char },
    /// A coordinate path with no positions.
    #[error("agent {agent}: the path is empty (it must start with the agent's start cell)")]
    EmptyPath { agent: usize },
    /// Not one of the plan forms: neither `moves` nor `paths`, or both, or a value that is not
    /// an object or an array of one move string (or one path) per agent.
    #[error(
        "a plan is {{\"moves\": [...]}} or {{\"paths\": [...]}} (exactly one of the two), or an array with \
         one move string (or one path) per agent, such as [\"RRD\", \"UL\"]"
    )]
    Shape,
}

/// Why a pool, an engine or a batch of plans could not be built or used.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    #[error("the instance pool is empty")]
    EmptyPool,
    #[error("instance {index}: {what}")]
    Instance { index: usize, what: String },
    #[error("{what}: expected {expected} entries, got {got}")]
    BufferSize { what: &'static str, expected: usize, got: usize },
    #[error("{0}")]
    Invalid(String),
    #[error("GPU backend: {0}")]
    Gpu(String),
    #[error("the engine has not been reset: call reset before {0}")]
    NotReset(&'static str),
    /// The step-reward plugin failed on a step's outcomes (the step itself happened: the state,
    /// observations, events and flags are the step's, the rewards are not).
    #[error("step reward: {0}")]
    StepReward(String),
}
