//! The C interface to floe (`libfloe`). Placeholder until the FFI lands.

pub use floe_core as core;
