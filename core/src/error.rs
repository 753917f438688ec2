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
    /// The memory the request needs cannot be had.
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
}

/// A request for more memory than can be had: what the memory was for, and the bytes asked
/// for (`None` when that count itself overflows). Sizes are checked before memory is asked for,
/// so an impossible request is this error, never an abort.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{what} would take {}, which cannot be allocated", bytes_text(*.bytes))]
pub struct TooLarge {
    /// What the memory was for, e.g. "the state of 4294967295 environments".
    pub what: String,
    /// The bytes asked for; `None` when they overflow a `usize`.
    pub bytes: Option<usize>,
}

fn bytes_text(bytes: Option<usize>) -> String {
    match bytes {
        Some(n) => format!("{n} bytes"),
        None => format!("more than {} bytes (the count overflows)", usize::MAX),
    }
}

impl TooLarge {
    /// The error for `n` values of `T`.
    #[must_use]
    pub fn of<T>(n: usize, what: impl Into<String>) -> Self {
        Self { what: what.into(), bytes: n.checked_mul(std::mem::size_of::<T>()) }
    }
}

/// The product of `factors`, or `None` when it overflows a `usize`.
#[must_use]
pub fn checked_product(factors: &[usize]) -> Option<usize> {
    factors.iter().try_fold(1usize, |acc, &f| acc.checked_mul(f))
}

/// An empty vector with room for `n` values, or [`TooLarge`] naming `what` when that memory
/// cannot be had (the size overflows, or the allocator refuses it).
///
/// # Errors
/// [`TooLarge`].
pub fn try_with_capacity<T>(n: usize, what: impl FnOnce() -> String) -> Result<Vec<T>, TooLarge> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| TooLarge::of::<T>(n, what()))?;
    Ok(v)
}

/// `n` copies of `value`, as `vec![value; n]` but [`TooLarge`] where that would abort.
///
/// # Errors
/// [`TooLarge`].
pub fn try_vec<T: Clone>(n: usize, value: T, what: impl FnOnce() -> String) -> Result<Vec<T>, TooLarge> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// `n` is the count of `factors`' product, or [`TooLarge`] naming `what` when it overflows.
///
/// # Errors
/// [`TooLarge`] with no byte count.
pub fn checked_count(factors: &[usize], what: impl FnOnce() -> String) -> Result<usize, TooLarge> {
    checked_product(factors).ok_or_else(|| TooLarge { what: what(), bytes: None })
}
