//! GRPO training for floe. Placeholder until the trainer lands; it will depend on libtorch
//! through `tch`, which stays out of every other crate.

pub use floe_core as core;
