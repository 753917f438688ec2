//! # floe-core
//!
//! The rules of MAPF-FrozenLake, implemented once: grids of frozen cells and holes, agents with
//! distinct starts and goals, the five moves, conflicts, costs ([`rules`]); an exactly optimal
//! conflict-based search solver ([`solver`]); a plan verifier that names the first failure
//! ([`mod@verify`], in the vocabulary of [`failure`]); the paper's text forms ([`text`]); a
//! deterministic instance generator and the benchmark suite ([`generator`], [`suite`]); the file
//! formats ([`instance`], [`plan`], [`movingai`]); one reader of plans in every written form
//! ([`reader`]); and the instance pool and the batched engine ([`pool`], [`engine`]). It knows
//! nothing of plugins: a reward that scores an engine's steps is the plugin registry's.
//!
//! Everything else in floe (the plugins, the round protocol, the trainer, the CLI) builds on the
//! definitions here, so a rule changes in one place only.

pub mod engine;
pub mod error;
pub mod failure;
pub mod generator;
pub mod grid;
pub mod instance;
pub mod json;
pub mod moves;
pub mod movingai;
pub mod mutate;
pub mod plan;
pub mod pool;
pub mod progress;
pub mod reader;
pub mod rng;
pub mod rules;
pub mod solver;
pub mod suite;
pub mod text;
pub mod verify;
mod words;

pub use error::{InstanceError, PlanError, TooLarge};
pub use failure::{Failure, FailureKind};
pub use generator::{generate, generate_slots, GenerateError, GeneratorConfig};
pub use grid::{Cell, Grid, Pos};
pub use instance::{Agent, Instance, OptimalPlan};
pub use moves::Move;
pub use plan::Plan;
pub use reader::{read_plan, PlanForm, ReadError};
pub use solver::{solve, Solution, SolveError, SolverConfig};
pub use verify::{verify, Answer, Check, Optimum, PartialCredit, Verdict};
