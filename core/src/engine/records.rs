//! The engine's codes and `#[repr(C)]` records, the same on the CPU and GPU backends (and in the
//! WGSL kernels, whose struct layouts a test checks against these): event bits, episode
//! outcomes, and the records of a step's `info` and of the state.

use bytemuck::{Pod, Zeroable};

/// Per-agent event flags written by a step (the step outcome that rewards are computed from).
pub mod event {
    /// The agent moved to another cell.
    pub const MOVED: u32 = 1;
    /// Soft mode: the agent's move would have collided, so it stayed.
    pub const BLOCKED: u32 = 2;
    /// The move would leave the grid (soft: it became a wait; strict: the episode failed).
    pub const OFF_GRID: u32 = 4;
    /// The agent's move led into a hole (soft: it dropped out, or with [`crate::engine::HoleRule::Block`]
    /// it stayed; strict: the episode failed).
    pub const HOLE: u32 = 8;
    /// Strict mode: the agent was part of a vertex or swap conflict.
    pub const CONFLICT: u32 = 16;
    /// The agent arrived on its goal in this step for the first time in the episode: a return
    /// to the goal after leaving it sets only [`AT_GOAL`]. This is the arrival `reach_goal` pays,
    /// so a goal is paid once per agent and episode (the agent word's "arrived" bit remembers it).
    pub const REACHED: u32 = 32;
    /// The agent is on its goal after the step.
    pub const AT_GOAL: u32 = 64;
    /// The slot holds no agent (padding, or dropped earlier).
    pub const INACTIVE: u32 = 128;

    /// Every flag with its name (the WGSL kernels receive them as `EV_<name>`).
    pub const NAMED: [(&str, u32); 8] = [
        ("MOVED", MOVED),
        ("BLOCKED", BLOCKED),
        ("OFF_GRID", OFF_GRID),
        ("HOLE", HOLE),
        ("CONFLICT", CONFLICT),
        ("REACHED", REACHED),
        ("AT_GOAL", AT_GOAL),
        ("INACTIVE", INACTIVE),
    ];
}

/// Episode outcome codes in [`EnvInfo::outcome`].
pub mod outcome {
    pub const RUNNING: u32 = 0;
    pub const SUCCESS: u32 = 1;
    pub const FAILURE: u32 = 2;
    pub const TRUNCATED: u32 = 3;

    /// Every code with its name (the WGSL kernels receive them as `OUT_<name>`).
    pub const NAMED: [(&str, u32); 4] =
        [("RUNNING", RUNNING), ("SUCCESS", SUCCESS), ("FAILURE", FAILURE), ("TRUNCATED", TRUNCATED)];
}

/// Per-environment information after a step. When the episode ended in this step (and the
/// environment was reset), it describes the episode that ended: everything a level sampler
/// scores a level by (its pool slot and the slot's generation, the return, the steps, the
/// outcome and the failure kind), so that a host needs no second pass over the step.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default, Pod, Zeroable)]
pub struct EnvInfo {
    /// Steps taken in the episode (the ended one, if it ended).
    pub episode_steps: u32,
    /// One of [`outcome`].
    pub outcome: u32,
    /// For failures: the [`crate::FailureKind`] code (`out_of_bounds` 4, `hole` 5,
    /// `vertex_conflict` 6, `edge_conflict` 7); else 0.
    pub failure_kind: u32,
    /// For failures: the agent at fault; else `u32::MAX`.
    pub failure_agent: u32,
    /// The pool slot the episode plays ([`crate::engine::InstancePool`] index).
    pub instance: u32,
    /// The slot's generation when the episode played it: 0 for the level the pool was made
    /// with, one more for every refill of the slot ([`crate::engine::Engine::refill`]).
    pub generation: u32,
    /// The episode's return so far (all of it, if it ended): every agent's rewards summed, agent
    /// by agent within a step and step by step, in `f32` (the same bits on every backend).
    pub episode_return: f32,
    /// Agents on their goals after the step (of those still in the episode).
    pub agents_on_goal: u32,
}

pub use crate::failure::NONE;

/// One environment's state, as [`super::Engine::state`] gives it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EnvRecord {
    /// The grid of the instance being played.
    pub width: u32,
    pub height: u32,
    /// Agents of that instance (the first `agents` of the environment's K slots).
    pub agents: u32,
    /// Steps taken in the current episode.
    pub step: u32,
    /// Episodes started since the last reset, minus one (0 in the first episode).
    pub episode: u32,
    /// Pool index of the instance being played.
    pub instance: u32,
}

/// One agent slot's state.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct AgentRecord {
    /// The agent's cell (its last cell when it dropped out; 0 in padding slots).
    pub row: u32,
    pub col: u32,
    /// 1 while the agent takes part in the episode; 0 once it dropped out, and in padding slots.
    pub active: u32,
}
