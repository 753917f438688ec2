//! libfloe: floe's C API. Pools of instances, batched engines on the CPU or the GPU stepped
//! with caller-owned buffers, batched plan verification, the optimal solver, the paper's prompt
//! and answer parser, plugins (reward functions, curricula, environment engineers; built in or
//! loaded from Rust or C libraries), and, with the `train` feature, training and evaluation.
//!
//! The header `include/floe.h` is generated from this crate by cbindgen (`cbindgen.toml`) and
//! includes `floe_types.h` (shared with the plugin ABI's `floe_plugin.h`): a test regenerates
//! it and fails on any difference.
//!
//! # Conventions of every function
//! - Names are `floe_<noun>_<verb>`; handles are opaque (`floe_pool`, `floe_engine`,
//!   `floe_plugin`), made by `_new` / `_from_*` / `_generate` functions and freed by `_free`,
//!   which accepts NULL.
//! - Every function but `floe_version`, `floe_abi_version`, `floe_last_error` and
//!   `floe_string_free` returns a `floe_status`; results come through out-pointers, which are
//!   written only on success. On failure, `floe_last_error()` gives the message, on the calling
//!   thread, until that thread's next failing call. Each function's comment lists, after
//!   "Errors:", every status it returns on failure but FLOE_STATUS_PANICKED from a bug of
//!   libfloe's own (`tests/statuses.rs` calls every function on its error paths against the
//!   header's lists).
//! - Every public name in the header begins with `floe_` or `FLOE_` (the C suite checks it).
//! - Every argument is checked before anything changes: NULL pointers, lengths against what is
//!   required, UTF-8, handle kinds (a registry of live handles with their kind tags: a freed
//!   handle or one of another kind is FLOE_STATUS_WRONG_HANDLE), overlapping output buffers.
//!   Panics are caught (FLOE_STATUS_PANICKED); a handle whose call panicked refuses later calls.
//! - Ownership: input arrays and strings are read only during the call; output arrays are the
//!   caller's and written only during the call; strings handed out are the caller's, freed with
//!   `floe_string_free`.
//! - Threads: pools are immutable and may be used from any number of threads at once; calls on
//!   one engine or plugin are serialised by a lock inside it, different ones run in parallel. A
//!   handle freed while another thread's call uses it stays valid until that call returns.

// The C names are the API: `floe_pool`, not `FloePool`.
#![allow(non_camel_case_types)]

mod boundary;
mod engine;
mod handles;
mod levels;
mod plugins;
mod pool;
mod train;
mod verify;

use std::ffi::{c_char, CString};

// Everything exported to C is also this crate's Rust API (the tests call it as C does).
pub use boundary::floe_status;
pub use engine::*;
pub use levels::*;
pub use plugins::*;
pub use pool::*;
pub use train::*;
pub use verify::*;

/// The version of this C API; `floe_abi_version()` returns the library's. A program built
/// against this header should check that they are equal. It grows when a function or struct
/// changes incompatibly (2: `floe_plugin_design` takes the engineer's design limits).
pub const FLOE_ABI_VERSION: u32 = 2;

/// Marks the end of an agent's moves in `floe_verify_moves`' move array.
pub const FLOE_MOVES_END: u8 = 255;

/// Event flags of `floe_step_buffers.events`, per agent and step.
pub const FLOE_EVENT_MOVED: u32 = 1;
pub const FLOE_EVENT_BLOCKED: u32 = 2;
pub const FLOE_EVENT_OFF_GRID: u32 = 4;
pub const FLOE_EVENT_HOLE: u32 = 8;
pub const FLOE_EVENT_CONFLICT: u32 = 16;
pub const FLOE_EVENT_REACHED: u32 = 32;
pub const FLOE_EVENT_AT_GOAL: u32 = 64;
pub const FLOE_EVENT_INACTIVE: u32 = 128;

// The header needs literal values; these are floe-core's.
const _: () = {
    assert!(FLOE_MOVES_END == floe_core::verify::batch::END);
    assert!(FLOE_EVENT_MOVED == floe_core::engine::event::MOVED);
    assert!(FLOE_EVENT_BLOCKED == floe_core::engine::event::BLOCKED);
    assert!(FLOE_EVENT_OFF_GRID == floe_core::engine::event::OFF_GRID);
    assert!(FLOE_EVENT_HOLE == floe_core::engine::event::HOLE);
    assert!(FLOE_EVENT_CONFLICT == floe_core::engine::event::CONFLICT);
    assert!(FLOE_EVENT_REACHED == floe_core::engine::event::REACHED);
    assert!(FLOE_EVENT_AT_GOAL == floe_core::engine::event::AT_GOAL);
    assert!(FLOE_EVENT_INACTIVE == floe_core::engine::event::INACTIVE);
};

/// The library's ABI version (compare with FLOE_ABI_VERSION).
#[no_mangle]
pub extern "C" fn floe_abi_version() -> u32 {
    FLOE_ABI_VERSION
}

/// The library's version, e.g. `"0.1.0"`: a static string, never freed.
#[no_mangle]
pub extern "C" fn floe_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The message of the calling thread's last failed call (`""` if none failed yet). Owned by the
/// library; valid until the thread's next failing call.
#[no_mangle]
pub extern "C" fn floe_last_error() -> *const c_char {
    boundary::last_error()
}

/// Frees a string the library handed out. NULL is accepted.
///
/// # Safety
/// `s` is NULL or a string from this library not freed before.
#[no_mangle]
pub unsafe extern "C" fn floe_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the caller passes a string made by `CString::into_raw` in this library, once.
        drop(unsafe { CString::from_raw(s) });
    }
}
