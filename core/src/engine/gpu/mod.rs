//! The wgpu backend: the same step, observation and verification as [`super::cpu`], as WGSL
//! compute kernels (`shaders/`). State stays on the device across steps; outputs are read back
//! only when asked ([`GpuEngine::read_outputs`], through staging buffers and `map_async`).
//! Pipelines, layouts and bind groups are built once per engine.
//!
//! Limits of this backend: at most [`GPU_MAX_AGENTS`] agents per environment and an observation
//! radius of at most [`GPU_MAX_RADIUS`].
//!
//! `context.rs` holds the device and what the engine and the verifier share (the pool's upload,
//! the binding checks), `engine.rs` the stepping engine, `verify.rs` the batched verifier.

mod context;
mod engine;
mod verify;

pub use super::shaders::{wgsl, Params, GPU_MAX_AGENTS, GPU_MAX_RADIUS, WORKGROUP_SIZE};
pub use context::{no_adapter_message, GpuContext, Tried, VULKAN_ICD_VARIABLES};
pub use engine::GpuEngine;
pub use verify::GpuVerifier;
