//! `floe_engine`: a batch of environments on the CPU or the GPU, stepped with caller-owned
//! buffers.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use floe_core::engine::{AgentRecord, BufferSizes, Engine, EnvInfo, EnvRecord, StepBuffersMut};
use floe_plugin_registry as registry;
use floe_plugin_registry::EngineSpec;

use crate::boundary::{
    check_out, floe_status, guard, non_null, slice, slice_mut, status, str_arg, write_out, write_string,
    Error, Result,
};
use crate::handles::{self, Handle, Kind};
use crate::pool::floe_pool;

/// A batch of environments (opaque). Calls on one engine are serialised by a lock inside it;
/// different engines may be used from different threads at once.
#[derive(Debug)]
pub struct floe_engine {
    inner: Mutex<Box<dyn Engine>>,
}

impl Handle for floe_engine {
    const KIND: Kind = Kind::Engine;
}

/// The caller's output buffers for one call: seven arrays with their lengths in elements (the
/// lengths `floe_engine_sizes` gives). The arrays must not overlap. They are written only during
/// the call; the engine keeps no pointer to them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct floe_step_buffers {
    /// Observations: agent `a` of environment `e` at byte `(e·K + a)·obs_stride`; 3 planes of
    /// (2r+1)² cells (holes and cells off the grid, other agents, the agent's goal), a byte per
    /// cell, or with `"obs_format": "bits"` a bit per cell, each plane in ⌈(2r+1)²/32⌉
    /// little-endian `uint32_t` words (`floe_obs_unpack_bits` gives the bytes); with `"none"`,
    /// empty (length 0, NULL allowed).
    pub obs: *mut u8,
    pub obs_len: usize,
    /// The final observation of environments whose episode ended in this step.
    pub final_obs: *mut u8,
    pub final_obs_len: usize,
    /// `B·K` rewards.
    pub rewards: *mut f32,
    pub rewards_len: usize,
    /// `B·K` event flags (`FLOE_EVENT_*`).
    pub events: *mut u32,
    pub events_len: usize,
    /// `B` bytes, 1 where the episode terminated in this step.
    pub terminated: *mut u8,
    pub terminated_len: usize,
    /// `B` bytes, 1 where the episode was truncated in this step.
    pub truncated: *mut u8,
    pub truncated_len: usize,
    /// `B` records about the episode that ran (or ended) in this step.
    pub info: *mut EnvInfo,
    pub info_len: usize,
}

fn overlaps(ranges: &[(usize, usize, &'static str)]) -> Result<()> {
    let mut ranges: Vec<_> = ranges.iter().copied().filter(|r| r.1 > r.0).collect();
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(Error::bad_input(format!("buffers {} and {} overlap", w[0].2, w[1].2)));
        }
    }
    Ok(())
}

/// The caller's buffers as slices, after checking every pointer, alignment and overlap.
///
/// # Safety
/// Each non-NULL pointer of `b` must be valid for writes of its length, for the duration of the
/// call.
pub(crate) unsafe fn step_buffers<'a>(b: *const floe_step_buffers) -> Result<StepBuffersMut<'a>> {
    non_null(b, "buffers")?;
    // SAFETY: not NULL; the caller passes a readable struct.
    let b = unsafe { b.read() };
    let span = |p: usize, n: usize, size: usize, what: &'static str| {
        (p, p.saturating_add(n.saturating_mul(size)), what)
    };
    overlaps(&[
        span(b.obs as usize, b.obs_len, 1, "obs"),
        span(b.final_obs as usize, b.final_obs_len, 1, "final_obs"),
        span(b.rewards as usize, b.rewards_len, 4, "rewards"),
        span(b.events as usize, b.events_len, 4, "events"),
        span(b.terminated as usize, b.terminated_len, 1, "terminated"),
        span(b.truncated as usize, b.truncated_len, 1, "truncated"),
        span(b.info as usize, b.info_len, std::mem::size_of::<EnvInfo>(), "info"),
    ])?;
    // SAFETY: (this and the six slices below) lengths from the caller's struct, pointers checked by
    // `slice_mut`; the ranges were checked not to overlap, so each slice is the only reference
    // to its memory during the call.
    let obs = unsafe { slice_mut(b.obs, b.obs_len, "buffers.obs") }?;
    // SAFETY: as above.
    let final_obs = unsafe { slice_mut(b.final_obs, b.final_obs_len, "buffers.final_obs") }?;
    // SAFETY: as above.
    let rewards = unsafe { slice_mut(b.rewards, b.rewards_len, "buffers.rewards") }?;
    // SAFETY: as above.
    let events = unsafe { slice_mut(b.events, b.events_len, "buffers.events") }?;
    // SAFETY: as above.
    let terminated = unsafe { slice_mut(b.terminated, b.terminated_len, "buffers.terminated") }?;
    // SAFETY: as above.
    let truncated = unsafe { slice_mut(b.truncated, b.truncated_len, "buffers.truncated") }?;
    // SAFETY: as above.
    let info = unsafe { slice_mut(b.info, b.info_len, "buffers.info") }?;
    Ok(StepBuffersMut { obs, final_obs, rewards, events, terminated, truncated, info })
}

/// Makes an engine of `num_envs` environments playing `pool`'s instances.
///
/// `config_json` (NULL for the defaults) is an object whose fields are all optional:
/// `"backend"`: `"cpu"` (default) or `"gpu"`; `"num_envs"` (1024); `"mode"`: `"strict"`
/// (default, the paper's rules: a failure ends the episode) or `"soft"`; `"holes"` (soft mode):
/// `"drop"` (default) or `"block"`; `"episode_limit"` (64); `"obs_radius"` (2; at most 127 on
/// the CPU, 7 on the GPU); `"obs_format"`: `"bytes"` (default), `"bits"` or `"none"`; `"rewards"`: `{"reach_goal": 1.0, "step": -0.0625, "blocked": -0.125,
/// "off_grid": -1.0, "hole": -1.0, "conflict": -1.0}` (any subset; `reach_goal` is paid on an
/// agent's first arrival of the episode only, FLOE_EVENT_REACHED); `"step_reward"`: a reward
/// plugin that scores every step in place of `"rewards"`, `{"name": "shaped", "params": {...},
/// "library": "path/to/lib.so"}` (`params` and `library` optional; the plugin must declare
/// FLOE_PLUGIN_CAP_SCORES_STEPS), called once per step with one `floe_step_outcome` per agent in
/// play (distances to the goal before and after, FLOE_STEP_* flags from the events), its rewards
/// written to those agents' slots and 0 elsewhere. Unknown fields are errors.
/// Both backends give bit-identical outputs. The GPU backend takes at most 64 agents per
/// environment.
///
/// Ownership: `*out` is the caller's (`floe_engine_free`); the engine keeps its own reference to
/// the pool. Thread-safe.
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a
/// `pool` that is not a live pool, FLOE_STATUS_BAD_UTF8 for a `config_json` that is not UTF-8,
/// FLOE_STATUS_CONFIG for a configuration that does not parse or is out of range (an
/// `obs_radius` over 7, or more than 64 agents, on the GPU included), FLOE_STATUS_GPU when no
/// GPU adapter can be opened or the device cannot hold the buffers, FLOE_STATUS_NOT_BUILT for
/// `"gpu"` in a build without it, FLOE_STATUS_BAD_INPUT for a misaligned `out`; for the
/// `step_reward`: FLOE_STATUS_UNKNOWN_PLUGIN for a name the library or the built-ins do not
/// have, FLOE_STATUS_CONFIG for parameters the plugin refuses or a reward that does not score
/// steps, FLOE_STATUS_FAILED for a library that does not load; FLOE_STATUS_TOO_LARGE when the
/// engine's own memory cannot be had (its state, `B·K` agent words and `B` environment records,
/// and the padded maps of the pool for the observation radius; sized before anything is
/// allocated, the message gives the bytes asked for). The buffers of a step
/// (`floe_engine_sizes`) are the caller's.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_new(
    pool: *const floe_pool,
    config_json: *const c_char,
    out: *mut *mut floe_engine,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let pool = handles::get(pool, "pool")?;
        let spec = if config_json.is_null() {
            EngineSpec::default()
        } else {
            // SAFETY: a NUL-terminated string (not NULL here).
            let text = unsafe { str_arg(config_json, "config_json") }?;
            EngineSpec::from_json_text(text).map_err(Error::from)?
        };
        let engine =
            registry::open_engine(&spec, Arc::clone(&pool.packed)).map_err(crate::plugins::registry_error)?;
        let handle = handles::new(floe_engine { inner: Mutex::new(engine) });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

pub(crate) fn with_engine<T>(
    engine: *const floe_engine,
    f: impl FnOnce(&mut dyn Engine) -> Result<T>,
) -> Result<T> {
    let e = handles::get(engine, "engine")?;
    let mut guard = handles::lock(&e.inner, "the engine")?;
    f(guard.as_mut())
}

/// The length of every buffer (see `floe_buffer_sizes`). Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `engine` or `out`, FLOE_STATUS_WRONG_HANDLE for
/// an `engine` that is not a live engine, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_sizes(engine: *const floe_engine, out: *mut BufferSizes) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let sizes = with_engine(engine, |e| Ok(e.sizes()))?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, sizes, "out") }
    })
}

/// The backend in use: `"cpu"`, or `"gpu (<adapter>)"`. `*out` is the caller's
/// (`floe_string_free`).
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `engine` or `out`, FLOE_STATUS_WRONG_HANDLE for
/// an `engine` that is not a live engine, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_backend(
    engine: *const floe_engine,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let name = with_engine(engine, |e| Ok(e.backend()))?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_string(out, &name, "out") }
    })
}

/// Starts episode 0 in every environment (environment `e` plays the pool instance picked by
/// `seed + e`) and writes the first observations into `buffers->obs`; nothing else is written.
/// The same seed gives the same episodes on both backends, for any batch size and thread count.
///
/// Errors (nothing changed by a refused call): FLOE_STATUS_NULL_POINTER for a NULL `engine`,
/// `buffers` or buffer of non-zero length, FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a
/// live engine, FLOE_STATUS_BUFFER_SIZE for a length other than `floe_engine_sizes` gives,
/// FLOE_STATUS_BAD_INPUT for buffers that overlap or are misaligned, FLOE_STATUS_GPU for a
/// device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_reset(
    engine: *mut floe_engine,
    seed: u64,
    buffers: *const floe_step_buffers,
) -> floe_status {
    guard(|| {
        // SAFETY: the caller's buffers are valid for writes of their lengths during the call.
        let out = unsafe { step_buffers(buffers) }?;
        with_engine(engine, |e| Ok(e.reset(seed, out)?))
    })
}

/// Puts environment `env` on pool instance `instance` (to replay an exact level), step 0, and
/// writes that environment's observation into its part of `buffers->obs`.
///
/// Errors (nothing changed by a refused call): FLOE_STATUS_NOT_RESET before the first reset,
/// FLOE_STATUS_BAD_INPUT for an index out of range or buffers that overlap or are misaligned,
/// FLOE_STATUS_BUFFER_SIZE for a length other than `floe_engine_sizes` gives,
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, `buffers` or buffer of non-zero length,
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine, FLOE_STATUS_GPU for a
/// device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_reset_to(
    engine: *mut floe_engine,
    env: usize,
    instance: usize,
    buffers: *const floe_step_buffers,
) -> floe_status {
    guard(|| {
        // SAFETY: as in `floe_engine_reset`.
        let out = unsafe { step_buffers(buffers) }?;
        with_engine(engine, |e| Ok(e.reset_to(env, instance, out)?))
    })
}

/// One step of every environment: `actions` holds `B·K` codes (0 wait, 1 up, 2 down, 3 left,
/// 4 right; padding slots are ignored). Writes every output; an environment whose episode ended
/// is reset in the same step (its final observation in `final_obs`, the new episode's first in
/// `obs`).
///
/// Errors (nothing changed by a refused call): FLOE_STATUS_NOT_RESET before the first reset,
/// FLOE_STATUS_BUFFER_SIZE for an `actions_len` or buffer length other than `floe_engine_sizes`
/// gives, FLOE_STATUS_BAD_INPUT for a code above 4 or buffers that overlap or are misaligned,
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, `actions`, `buffers` or buffer of non-zero
/// length, FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine, FLOE_STATUS_GPU
/// for a device error. With a `step_reward`: FLOE_STATUS_FAILED when the plugin fails on the
/// step's outcomes, after the step (every output but `rewards` is the step's, `rewards` the
/// configuration's weights).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_step(
    engine: *mut floe_engine,
    actions: *const u8,
    actions_len: usize,
    buffers: *const floe_step_buffers,
) -> floe_status {
    guard(|| {
        // SAFETY: `actions_len` readable bytes at `actions`, by the caller's contract.
        let actions = unsafe { slice(actions, actions_len, "actions") }?;
        // SAFETY: as in `floe_engine_reset`.
        let out = unsafe { step_buffers(buffers) }?;
        with_engine(engine, |e| Ok(e.step(actions, out)?))
    })
}

/// Every environment's and agent slot's state: `envs` gets `B` records, `agents` `B·K`
/// (zeros before the first reset).
///
/// Errors: FLOE_STATUS_BUFFER_SIZE for other lengths, FLOE_STATUS_NULL_POINTER for a NULL
/// `engine` or array of non-zero length, FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a
/// live engine, FLOE_STATUS_BAD_INPUT for a misaligned array, FLOE_STATUS_GPU for a device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_state(
    engine: *const floe_engine,
    envs: *mut EnvRecord,
    envs_len: usize,
    agents: *mut AgentRecord,
    agents_len: usize,
) -> floe_status {
    guard(|| {
        // SAFETY: writable arrays of the given lengths, by the caller's contract.
        let envs_out = unsafe { slice_mut(envs, envs_len, "envs") }?;
        // SAFETY: as above.
        let agents_out = unsafe { slice_mut(agents, agents_len, "agents") }?;
        with_engine(engine.cast_mut(), |e| {
            let sizes = e.sizes();
            for (what, got, expected) in
                [("envs", envs_len, sizes.envs), ("agents", agents_len, sizes.agents)]
            {
                if got != expected {
                    return Err(Error::new(
                        status::BUFFER_SIZE,
                        format!("{what}: expected {expected} entries, got {got}"),
                    ));
                }
            }
            let state = e.state()?;
            envs_out.copy_from_slice(&state.envs);
            agents_out.copy_from_slice(&state.agents);
            Ok(())
        })
    })
}

/// The global state: `B·3·S·S` bytes (S from `floe_buffer_sizes.global_side`): per environment
/// plane 0 holes (1) and cells outside its grid (2), plane 1 agent index + 1 on its cell,
/// plane 2 agent index + 1 on its goal.
///
/// Errors: FLOE_STATUS_BUFFER_SIZE for a `len` other than `floe_buffer_sizes.global_state`,
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, or `out` with `len` non-zero,
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine, FLOE_STATUS_GPU for a
/// device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_global_state(
    engine: *const floe_engine,
    out: *mut u8,
    len: usize,
) -> floe_status {
    guard(|| {
        // SAFETY: `len` writable bytes, by the caller's contract.
        let out = unsafe { slice_mut(out, len, "out") }?;
        with_engine(engine.cast_mut(), |e| Ok(e.global_state(out)?))
    })
}

/// Frees an engine. NULL is accepted. Must not race with other calls on the same handle.
///
/// Errors: FLOE_STATUS_WRONG_HANDLE for a pointer that is not a live engine (freed before, or of
/// another kind).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_free(engine: *mut floe_engine) -> floe_status {
    guard(|| handles::free(engine.cast_const(), "engine"))
}

/// Unpacks observations written with `"obs_format": "bits"` at radius `radius` into the
/// `"bytes"` layout: `bits` holds whole observations (`bits_len` a multiple of the bits engine's
/// `obs_stride`), `out` as many in bytes (`out_len` = that count times the bytes engine's
/// `obs_stride`, padding written as 0). Bit `j % 32` of word `c·P + j / 32` (P = ⌈(2r+1)²/32⌉
/// little-endian words a plane) becomes byte `c·(2r+1)² + j`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL array of non-zero length,
/// FLOE_STATUS_BAD_INPUT for a radius over 127 or arrays that overlap,
/// FLOE_STATUS_BUFFER_SIZE for a `bits_len` that is not whole observations or an `out_len` for
/// another count. `out` is written only on success.
///
/// # Safety
/// `bits` is valid for `bits_len` reads and `out` for `out_len` writes, not overlapping, for the
/// duration of the call.
#[no_mangle]
pub unsafe extern "C" fn floe_obs_unpack_bits(
    radius: u32,
    bits: *const u8,
    bits_len: usize,
    out: *mut u8,
    out_len: usize,
) -> floe_status {
    guard(|| {
        overlaps(&[
            (bits as usize, (bits as usize).saturating_add(bits_len), "bits"),
            (out as usize, (out as usize).saturating_add(out_len), "out"),
        ])?;
        // SAFETY: the caller's lengths; pointers checked by `slice` and `slice_mut`, ranges not
        // overlapping.
        let src = unsafe { slice(bits, bits_len, "bits") }?;
        // SAFETY: as above.
        let dst = unsafe { slice_mut(out, out_len, "out") }?;
        if radius > floe_core::engine::MAX_OBS_RADIUS {
            return Err(Error::bad_input(format!(
                "observation radius {radius} is over the limit {}",
                floe_core::engine::MAX_OBS_RADIUS
            )));
        }
        // With the radius in range, what `unpack_bits` refuses is a length.
        floe_core::engine::unpack_bits(radius, src, dst).map_err(|e| Error::new(status::BUFFER_SIZE, e))
    })
}
