//! Level sampling from C: an engine's sampling weights and slot refills
//! (`floe_engine_set_weights`, `floe_engine_refill`), and `floe_levels`, floe-levels' driver: a
//! level sampler (built in, or a Rust or C plugin library) with the generator that refills the
//! pool, called around the engine's steps.

use std::ffi::c_char;
use std::sync::Mutex;

use ::floe_levels::{Applied, Decision, Levels, LevelsError, LevelsSpec, LevelsState};
use floe_core::engine::{EnvInfo, InstancePool, Optima};
use floe_plugin_api::{EpisodeRecord, LevelRecord, SlotStats};

use crate::boundary::{
    check_out, floe_status, guard, slice, slice_mut, status, str_arg, write_out, write_string, Error, Result,
};
use crate::engine::{floe_engine, floe_step_buffers, step_buffers, with_engine};
use crate::handles::{self, Handle, Kind};
use crate::pool::floe_pool;

/// What `floe_engine_refill` did to the environments that played a refilled slot.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct floe_refilled {
    /// Environments whose running episode was truncated (in the buffers).
    pub truncated: usize,
    /// Environments at the first step of an episode, put on their slot's new level.
    pub restarted: usize,
}

/// What one call of a level sampler did (`floe_levels_start`, `_after_step`, `_update`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct floe_levels_applied {
    /// 1 when the sampler was called (always, but for `floe_levels_after_step` between its calls).
    pub called: u32,
    /// 1 when it set new weights.
    pub weights: u32,
    /// Episodes it was given.
    pub episodes: usize,
    /// Slots refilled with new levels.
    pub refilled: usize,
    /// Episodes the refills truncated (in the buffers).
    pub truncated: usize,
}

impl From<Applied> for floe_levels_applied {
    fn from(a: Applied) -> Self {
        floe_levels_applied {
            called: 1,
            weights: u32::from(a.weights),
            episodes: a.episodes,
            refilled: a.refilled,
            truncated: a.truncated,
        }
    }
}

/// A level-sampling error as a status: a sampler's own code (FLOE_STATUS_BAD_OUTPUT for a plan
/// the checks refuse, FLOE_STATUS_PANICKED for a plugin that panicked, FLOE_STATUS_BAD_INPUT for
/// scores it was not given right), the engine's statuses, FLOE_STATUS_CONFIG for settings and new
/// levels the pool has no room for, FLOE_STATUS_FAILED for levels that cannot be generated.
fn levels_error(e: LevelsError) -> Error {
    match e {
        LevelsError::Sampler { ref source, .. } => Error::new(source.code(), e.to_string()),
        LevelsError::Input(_) | LevelsError::OtherEngine { .. } | LevelsError::State(_) => {
            Error::bad_input(e.to_string())
        }
        LevelsError::Engine(e) => Error::from(e),
        LevelsError::Generate(_) => Error::new(status::FAILED, e.to_string()),
        LevelsError::TooLarge(t) => Error::from(t),
        _ => Error::new(status::CONFIG, e.to_string()),
    }
}

/// Sets the sampling weights of the engine's pool slots: every later draw of a level (each
/// auto-reset, and `floe_engine_reset`) picks slot `i` with probability `weights[i] / Σ weights`,
/// by the same counter-based draw on both backends. `weights` NULL with `len` 0 removes them
/// (every slot alike, as an engine without weights draws); equal weights draw the same. A
/// non-NULL `weights` with `len` 0 is a count of 0 weights, refused as any count other than the
/// pool's. `-0.0` is a weight of zero. The weights may be set before the first reset.
///
/// Errors (nothing changed by a refused call): FLOE_STATUS_BAD_INPUT naming the value for a
/// weights count other than the pool's slots, a negative, NaN or infinite weight, all weights
/// zero, weights whose sum is not finite (two `DBL_MAX`), or a misaligned `weights`;
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, or `weights` with `len` above 0;
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine; FLOE_STATUS_GPU for a
/// device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_set_weights(
    engine: *mut floe_engine,
    weights: *const f64,
    len: usize,
) -> floe_status {
    guard(|| {
        let weights = if weights.is_null() && len == 0 {
            None
        } else {
            // SAFETY: `len` readable doubles at `weights`, by the caller's contract.
            Some(unsafe { slice(weights, len, "weights") }?)
        };
        with_engine(engine, |e| Ok(e.set_weights(weights)?))
    })
}

/// Replaces the levels of pool slots `slots[0..slots_len]` with the instances of `levels` (one
/// each, in order: `levels` holds exactly `slots_len`, with their stored optima), between steps,
/// without making a new engine; each slot counts one more generation (`floe_env_info.generation`).
/// `buffers` holds the last step's (or reset's) outputs: an environment playing a refilled slot
/// at the first step of its episode is put on the new level (its `obs` rewritten); one later in
/// its episode has the episode truncated in `buffers`, as a step would have truncated it
/// (`truncated` 1, `final_obs` its last observation, `info` its record with
/// FLOE_OUTCOME_TRUNCATED), and starts its next episode on a level drawn as every auto-reset
/// draws. `*out` (may be NULL) says how many environments were moved each way. The engine's pool
/// is its own copy from then on (the `floe_pool` it was made from is unchanged). Every level
/// must fit the pool's room (the agents and side of its largest level, or what
/// `floe_levels_pool` made room for).
///
/// What it reads of `buffers`: they must be the engine's last outputs, unchanged (after
/// `floe_engine_reset`, its buffers: a reset writes only `obs`, so there the other arrays are
/// checked for their lengths alone). Every environment's `obs` must be the observation of its
/// state; every environment past the first step of its episode must have `terminated` and
/// `truncated` 0 and its running `info` record, field for field (`floe_engine_check_outputs`).
/// `rewards`, `events` and `final_obs` are checked for their lengths only: the refill neither
/// reads nor writes `rewards` and `events`, and writes `final_obs` only for the episodes it
/// truncates.
///
/// Errors (nothing changed by a refused call; every check runs before any change):
/// FLOE_STATUS_NOT_RESET before the first reset, FLOE_STATUS_BAD_INPUT for a slot out of range
/// or named twice, a `levels` count other than `slots_len`, a level too large for the pool's
/// room, buffers that do not hold the last outputs (the message names the environment and the
/// field), buffers that overlap, or a misaligned `slots`, buffer or `out`;
/// FLOE_STATUS_BUFFER_SIZE for a buffer length other than `floe_engine_sizes` gives;
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, `levels`, `buffers`, buffer of non-zero length,
/// or `slots` with `slots_len` above 0 (a non-NULL `slots` with `slots_len` 0 refills nothing);
/// FLOE_STATUS_WRONG_HANDLE for an `engine` or `levels` that is not a live engine or pool;
/// FLOE_STATUS_GPU for a device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_refill(
    engine: *mut floe_engine,
    slots: *const usize,
    slots_len: usize,
    levels: *const floe_pool,
    buffers: *const floe_step_buffers,
    out: *mut floe_refilled,
) -> floe_status {
    guard(|| {
        if !out.is_null() {
            check_out(out, "out")?;
        }
        // SAFETY: `slots_len` readable values at `slots`, by the caller's contract.
        let slots = unsafe { slice(slots, slots_len, "slots") }?;
        let levels = handles::get(levels, "levels")?;
        // SAFETY: the caller's buffers are valid for writes of their lengths during the call.
        let buffers = unsafe { step_buffers(buffers) }?;
        let done = with_engine(engine, |e| {
            // Every environment's outputs are checked (the refill itself checks those it moves).
            if e.was_reset() {
                e.check_outputs(&buffers, None)?;
            }
            Ok(e.refill(slots, &levels.instances, buffers)?)
        })?;
        if !out.is_null() {
            // SAFETY: not NULL; writable by the caller's contract.
            unsafe {
                write_out(out, floe_refilled { truncated: done.truncated, restarted: done.restarted }, "out")
            }?;
        }
        Ok(())
    })
}

/// Checks that `buffers` hold the engine's last outputs, unchanged, as `floe_engine_refill` and
/// the level sampler's calls need them: every environment's `obs` is the observation of its
/// state, and every environment past the first step of its episode has `terminated` and
/// `truncated` 0 and its running `info` record, field for field (its return included; with a
/// `step_reward` plugin, the return of the plugin's rewards). `rewards`, `events` and `final_obs`
/// are checked for their lengths only, and so are the `info` and flags of environments at the
/// first step of an episode (they describe an episode that ended, or nothing after a reset).
/// Reads only; both backends give the same answer.
///
/// Errors: FLOE_STATUS_NOT_RESET before the first reset; FLOE_STATUS_BUFFER_SIZE for a buffer
/// length other than `floe_engine_sizes` gives; FLOE_STATUS_BAD_INPUT naming the first
/// environment and field that differ, or for buffers that overlap or are misaligned;
/// FLOE_STATUS_NULL_POINTER for a NULL `engine`, `buffers` or buffer of non-zero length;
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine; FLOE_STATUS_GPU for a
/// device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads described above, for the duration of the
/// call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_check_outputs(
    engine: *mut floe_engine,
    buffers: *const floe_step_buffers,
) -> floe_status {
    guard(|| {
        // SAFETY: the caller's buffers are valid for the reads of their lengths during the call.
        let buffers = unsafe { step_buffers(buffers) }?;
        with_engine(engine, |e| Ok(e.check_outputs(&buffers, None)?))
    })
}

/// The engine's pool slots as a level sampler sees them (`floe_level_record`: slot, generation,
/// size, agents, holes, optimal sum of costs or FLOE_UNKNOWN, environments playing it): up to
/// `cap` records into `out`, and the number of slots (which may be more than `cap`) into `*len`.
/// Refilled levels show with their generation.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `engine` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine; FLOE_STATUS_BAD_INPUT for
/// a misaligned `out` or `len`; FLOE_STATUS_GPU for a device error.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_levels(
    engine: *const floe_engine,
    out: *mut LevelRecord,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    guard(|| {
        // SAFETY: forwarded from the caller's contract.
        unsafe {
            hand_out(out, cap, len, || with_engine(engine, |e| Levels::levels(e).map_err(levels_error)))
        }
    })
}

/// The sampling weights set on the engine's pool slots (`floe_engine_set_weights`, or a level
/// sampler's): up to `cap` of them into `out`, and their number into `*len` (one per slot; 0 when
/// none is set and every slot is drawn alike).
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `engine` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for an `engine` that is not a live engine; FLOE_STATUS_BAD_INPUT for
/// a misaligned `out` or `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_weights(
    engine: *const floe_engine,
    out: *mut f64,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    guard(|| {
        // SAFETY: forwarded from the caller's contract.
        unsafe {
            hand_out(out, cap, len, || {
                with_engine(engine, |e| Ok(e.weights().map(<[f64]>::to_vec).unwrap_or_default()))
            })
        }
    })
}

/// The level in the engine's pool slot `slot` now (its map, starts and goals; a refilled slot's
/// new level), as instance JSON without a stored plan, into `*out`.
///
/// Ownership: `*out` is the caller's (`floe_string_free`).
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `engine` or `out`; FLOE_STATUS_WRONG_HANDLE for an
/// `engine` that is not a live engine; FLOE_STATUS_BAD_INPUT for a `slot` out of range or a
/// misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_level_json(
    engine: *const floe_engine,
    slot: usize,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let json = with_engine(engine, |e| Ok(e.pool().level(slot)?.to_json()))?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_string(out, &json, "out") }
    })
}

/// A level sampler with the source of its new levels (opaque): floe-levels' driver. Calls on
/// one are serialised by a lock inside it. A sampler is bound to the engine of its first call
/// that succeeds (`floe_levels_start`, `_after_step` or `_update`) and refuses any other with
/// FLOE_STATUS_BAD_INPUT naming both (make one sampler per engine).
///
/// Every call that acts on an engine checks all of its arguments before it changes anything
/// (the engine reset, the sampler's engine, every buffer's length and alignment, `out`'s
/// alignment, the ended episodes' records, and, where the sampler is called, that the buffers
/// are the engine's last outputs as `floe_engine_refill` describes). A refused call leaves the
/// engine, its pool, the source of new levels and the kept episodes (`floe_levels_pending`) as
/// they were: a retry with the right arguments gives the sampler each episode once. When the
/// sampler itself fails, or its plan is refused, the engine and the kept episodes are as they
/// were too; what the sampler did with the episodes it saw is its own state.
pub struct floe_levels {
    inner: Mutex<Levels>,
}

impl std::fmt::Debug for floe_levels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("floe_levels").finish_non_exhaustive()
    }
}

impl Handle for floe_levels {
    const KIND: Kind = Kind::Levels;
}

fn with_levels<T>(levels: *const floe_levels, f: impl FnOnce(&mut Levels) -> Result<T>) -> Result<T> {
    let l = handles::get(levels, "levels")?;
    let mut guard = handles::lock(&l.inner, "the level sampler")?;
    f(&mut guard)
}

/// Makes a level sampler from its settings (`spec_json`, NULL for the defaults), an object whose
/// fields are all optional:
///
/// ```json
/// {"sampler": {"name": "plr", "params": {"replay_prob": 0.8}, "library": "path/to/lib.so"},
///  "space": {"agents": [2, 4], "size": [5, 10], "hole_ratio": [0, 0.3], "wait_ratio": [0, 1], "solve": true},
///  "seed": 0, "update_every": 0}
/// ```
///
/// `sampler` (a plugin spec; default `uniform`): built in, `uniform` (every slot alike over a
/// fixed pool; with `"max_plays": 1`, domain randomisation),
/// `plr` (robust prioritized level replay), `accel` (ACCEL: `plr` whose replayed levels are also
/// edited into new slots; `params`: `plr`, `edits`, `edit_fraction`, `edit_from` `"replayed"` or
/// `"top"`), `learnability` (sampling for learnability), and the
/// samplers over generator configurations between phases: every built-in curriculum but `plr` by
/// its name (`fixed`, `difficulty-scaling`, `sec`, `frontier`, `schedule`; `params`:
/// `phase_episodes`, `phases`, `curriculum`: its own parameters), `phases` (`params`:
/// `phase_episodes`, `phases`, `designer`: any curriculum's plugin spec, a Rust or C library's
/// included) and `engineer` (`params`: `phase_episodes`, `phases`, `engineer`: a plugin spec,
/// `context`); or a Rust or C level sampler from `library` (`FLOE_PLUGIN_KIND_LEVEL_SAMPLER`). `space`: where new levels come
/// from. `source`, in place of `space` (not with a phase designer): a file of levels,
/// `{"file": {"path": "levels.jsonl", "solve": true}}` (every instance checked now, played in
/// passes each shuffled by the seed), or MovingAI maps with starts and goals drawn,
/// `{"maps": {"files": ["a.map"], "agents": [2, 4], "solve": true}}`; `floe_levels_pool` gives
/// the pool room for every level of it. `seed`: of the new levels. `update_every`: steps between the sampler's calls made by
/// `floe_levels_after_step` (0: only `floe_levels_update` calls it). Unknown fields are errors.
///
/// Ownership: `*out` is the caller's (`floe_levels_free`). Thread-safe.
/// Errors: FLOE_STATUS_CONFIG for settings that do not parse or are out of range, parameters
/// the sampler refuses, or a `source` that does not read (a file or map missing or malformed, an
/// unsolvable instance, a map over the engine's side), naming the file and line; FLOE_STATUS_UNKNOWN_PLUGIN for a name the library (or the built-ins) does
/// not have; FLOE_STATUS_FAILED for a library that does not load; FLOE_STATUS_NULL_POINTER for a
/// NULL `out`; FLOE_STATUS_BAD_UTF8 for a `spec_json` that is not UTF-8; FLOE_STATUS_BAD_INPUT
/// for a misaligned `out`; or the status a loaded plugin's constructor returns.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_new(
    spec_json: *const c_char,
    out: *mut *mut floe_levels,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let spec = if spec_json.is_null() {
            LevelsSpec::default()
        } else {
            // SAFETY: a NUL-terminated string (not NULL here).
            LevelsSpec::from_json(unsafe { str_arg(spec_json, "spec_json") }?).map_err(levels_error)?
        };
        let levels = floe_plugin_registry::levels(&spec).map_err(|e| match e {
            floe_plugin_registry::RegistryError::Levels(l) => levels_error(l),
            other => crate::plugins::registry_error(other),
        })?;
        let handle = handles::new(floe_levels { inner: Mutex::new(levels) });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

/// A pool of `count` new levels from the sampler's level space (or source), with room for every
/// level of it (so that the sampler's refills fit it): the pool to make the engine with. After
/// `floe_levels_load`, until `floe_levels_start`: the saved pool (every slot's level, optimum
/// and generation), whose slot count `count` must be, and no level is drawn.
///
/// Ownership: `*out` is the caller's (`floe_pool_free`). Thread-safe.
/// Errors: FLOE_STATUS_BAD_INPUT for a `count` of 0, another count than a loaded state's
/// slots, or a misaligned `out`; FLOE_STATUS_FAILED
/// when the levels cannot be generated; FLOE_STATUS_TOO_LARGE when they cannot be held;
/// FLOE_STATUS_NULL_POINTER for a NULL `levels` or `out`; FLOE_STATUS_WRONG_HANDLE for a `levels`
/// that is not a live level sampler.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_pool(
    levels: *mut floe_levels,
    count: usize,
    out: *mut *mut floe_pool,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        if count == 0 {
            return Err(Error::bad_input("a pool of 0 levels: count must be at least 1"));
        }
        let (instances, packed) = with_levels(levels, |l| {
            if let Some(saved) = l.loaded_pool() {
                if saved.len() != count {
                    return Err(Error::bad_input(format!(
                        "a pool of {count} levels: the loaded state's pool has {} slots",
                        saved.len()
                    )));
                }
                let instances = (0..count).map(|i| saved.level(i)).collect::<Result<Vec<_>, _>>()?;
                return Ok((instances, saved.clone()));
            }
            let instances = l.draw(count).map_err(levels_error)?;
            let packed = InstancePool::with_room(&instances, Optima::AsStored, l.source().room())?;
            Ok((instances, packed))
        })?;
        let packed = std::sync::Arc::new(packed);
        let handle = handles::new(floe_pool { instances, packed });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

/// The sampler's whole state as JSON text (versioned): its own (scores, staleness, plays per slot
/// and generation), the kept episodes and first-play marks, the source of new levels, and
/// `engine`'s pool (every slot's level, optimum and generation) and weights. `floe_levels_load`
/// puts it back into a sampler made from the same settings. Reads only.
///
/// Ownership: `*out` is the caller's (`floe_string_free`). Thread-safe.
/// Errors: FLOE_STATUS_UNSUPPORTED for a sampler that keeps no saved form (a library's); FLOE_STATUS_BAD_INPUT for an engine other than the
/// sampler's, a loaded state not yet started, or a misaligned `out`; FLOE_STATUS_NULL_POINTER
/// for a NULL `levels`, `engine` or `out`; FLOE_STATUS_WRONG_HANDLE for a handle that is not a
/// live level sampler or engine; FLOE_STATUS_GPU.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_save(
    levels: *const floe_levels,
    engine: *const floe_engine,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let json = with_levels(levels, |l| {
            with_engine(engine, |e| l.save(e).and_then(|s| s.to_json()).map_err(levels_error))
        })?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_string(out, &json, "out") }
    })
}

/// Puts back a state `floe_levels_save` wrote into a sampler made from the same settings: the
/// sampler's, the driver's and the source's now; the pool and weights at the next
/// `floe_levels_start`, which takes an engine made with the saved pool (`floe_levels_pool` gives
/// it until then, or the engine it was saved from) in place of the sampler's first call. Until
/// that start, `_after_step`, `_update` and `floe_levels_save` are refused.
///
/// Errors (nothing changed): FLOE_STATUS_BAD_INPUT naming the value for a state that does not
/// read, of another version, sampler, `update_every` or level space, or whose sampler state the
/// sampler refuses (other parameters; for a phase designer over a curriculum, designs the
/// curriculum does not make again when replayed over the saved history: the curriculum was
/// called, so that sampler refuses to go on, and a new one takes the right state);
/// FLOE_STATUS_UNSUPPORTED for a sampler that keeps no saved form; FLOE_STATUS_NULL_POINTER for
/// a NULL `levels` or `state_json`; FLOE_STATUS_BAD_UTF8;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads described above, for the duration of the
/// call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_load(
    levels: *mut floe_levels,
    state_json: *const c_char,
) -> floe_status {
    guard(|| {
        // SAFETY: a NUL-terminated string by the caller's contract (NULL is refused).
        let text = unsafe { str_arg(state_json, "state_json") }?;
        with_levels(levels, |l| {
            l.load(LevelsState::from_json(text).map_err(levels_error)?).map_err(levels_error)
        })
    })
}

/// The episodes a call gives (`None`: the kept ones) and the scores (`None`: none).
type EpisodesAndScores<'a> = (Option<Vec<EpisodeRecord>>, Option<&'a [f32]>);

/// A call's episodes and scores: `episodes` NULL with `episodes_len` 0 is none given (the kept
/// ones), and so is `scores` NULL with `scores_len` 0 (no scores).
///
/// # Safety
/// `episodes_len` readable records at `episodes` and `scores_len` floats at `scores`, or NULL.
unsafe fn episodes_and_scores<'a>(
    episodes: *const EnvInfo,
    episodes_len: usize,
    scores: *const f32,
    scores_len: usize,
) -> Result<EpisodesAndScores<'a>> {
    let episodes = if episodes.is_null() && episodes_len == 0 {
        None
    } else {
        // SAFETY: `episodes_len` readable records at `episodes`, by the caller's contract.
        Some(unsafe { slice(episodes, episodes_len, "episodes") }?.iter().map(|&i| i.into()).collect())
    };
    let scores = if scores.is_null() && scores_len == 0 {
        None
    } else {
        // SAFETY: `scores_len` readable floats at `scores`, by the caller's contract.
        Some(unsafe { slice(scores, scores_len, "scores") }?)
    };
    Ok((episodes, scores))
}

/// Checks an optional out-pointer (NULL, or aligned) before any work is done.
fn check_report(out: *mut floe_levels_applied) -> Result<()> {
    if out.is_null() {
        Ok(())
    } else {
        check_out(out, "out")
    }
}

/// Writes `*out` when it is not NULL (checked by [`check_report`] before the call's work).
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn report(out: *mut floe_levels_applied, applied: floe_levels_applied) -> Result<()> {
    if out.is_null() {
        return Ok(());
    }
    // SAFETY: not NULL; writable by the caller's contract.
    unsafe { write_out(out, applied, "out") }
}

/// The sampler's first call, with no episodes, after `floe_engine_reset`: its first weights and
/// any refill it asks for (the buffers hold the reset's outputs, and get the refilled slots'
/// observations: of the reset's outputs only `obs` is read, the other arrays are checked for
/// their lengths). Drops the kept episodes when it succeeds. `*out` (may be NULL) says what it
/// did.
///
/// Errors (the engine unchanged by a refused call): the sampler's own status when it fails
/// (FLOE_STATUS_PANICKED for a plugin that panicked), FLOE_STATUS_BAD_OUTPUT for a plan the
/// checks refuse (weights negative, NaN, infinite or all zero, or of another count than the
/// pool's slots; a refill slot out of range or named twice; a configuration outside the level
/// space), FLOE_STATUS_CONFIG for new levels the pool has no room for, FLOE_STATUS_FAILED for
/// levels that cannot be generated, FLOE_STATUS_TOO_LARGE; FLOE_STATUS_NOT_RESET for an engine
/// never reset; FLOE_STATUS_BUFFER_SIZE for a buffer of another length than
/// `floe_engine_sizes` gives; FLOE_STATUS_BAD_INPUT for buffers that are not the reset's or
/// last step's outputs, that overlap or are misaligned, a misaligned `out`, or an engine other
/// than the sampler's; FLOE_STATUS_GPU; FLOE_STATUS_NULL_POINTER for a NULL `levels`, `engine`,
/// `buffers` or buffer of non-zero length; FLOE_STATUS_WRONG_HANDLE for a handle that is not a
/// live level sampler or engine.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_start(
    levels: *mut floe_levels,
    engine: *mut floe_engine,
    buffers: *const floe_step_buffers,
    out: *mut floe_levels_applied,
) -> floe_status {
    guard(|| {
        check_report(out)?;
        // SAFETY: the caller's buffers are valid for writes of their lengths during the call.
        let buffers = unsafe { step_buffers(buffers) }?;
        let applied =
            with_levels(levels, |l| with_engine(engine, |e| l.start(e, buffers).map_err(levels_error)))?;
        // SAFETY: `out` is NULL or writable by the caller's contract.
        unsafe { report(out, applied.into()) }
    })
}

/// After each `floe_engine_step` (with its buffers): keeps the episodes that ended, and every
/// `update_every` steps calls the sampler with them and applies its plan (refills truncate
/// episodes in the buffers, as described at `floe_engine_refill`). `*out` (may be NULL): `called`
/// is 0 between the sampler's calls. Every call checks every buffer's length and the records of
/// the episodes that ended (`terminated` and `truncated` 0 or 1 and not both, an outcome that
/// matches them, a slot of the pool and a generation that slot has had); the calls that call the
/// sampler also check that the buffers are the step's outputs. A refused call keeps none of the
/// step's episodes and does not count the step: the host may call again with the right buffers.
///
/// Errors (the engine and the kept episodes unchanged by a refused call): FLOE_STATUS_BAD_INPUT
/// for an ended episode's record the checks refuse (the message names the environment); as
/// `floe_levels_start`: the sampler's own
/// status (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED,
/// FLOE_STATUS_BAD_INPUT, FLOE_STATUS_CONFIG, FLOE_STATUS_UNKNOWN_PLUGIN), FLOE_STATUS_BAD_OUTPUT
/// for a plan the checks refuse, FLOE_STATUS_CONFIG for new levels the pool has no room for,
/// FLOE_STATUS_FAILED for levels that cannot be generated, FLOE_STATUS_TOO_LARGE; the engine's
/// statuses (FLOE_STATUS_NOT_RESET, FLOE_STATUS_BUFFER_SIZE, FLOE_STATUS_BAD_INPUT for buffers
/// that overlap or are misaligned, FLOE_STATUS_GPU); FLOE_STATUS_NULL_POINTER for a NULL
/// `levels`, `engine`, `buffers` or buffer of non-zero length; FLOE_STATUS_WRONG_HANDLE for a
/// handle that is not a live level sampler or engine.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_after_step(
    levels: *mut floe_levels,
    engine: *mut floe_engine,
    buffers: *const floe_step_buffers,
    out: *mut floe_levels_applied,
) -> floe_status {
    guard(|| {
        check_report(out)?;
        // SAFETY: as in `floe_levels_start`.
        let buffers = unsafe { step_buffers(buffers) }?;
        let applied =
            with_levels(levels, |l| with_engine(engine, |e| l.after_step(e, buffers).map_err(levels_error)))?;
        // SAFETY: as in `floe_levels_start`.
        unsafe { report(out, applied.map(Into::into).unwrap_or_default()) }
    })
}

/// Calls the sampler now and applies its plan. `episodes` (`episodes_len` records, as the
/// engine's `info` gave them) are the episodes to score; NULL gives it those kept by
/// `floe_levels_after_step` since its last call (`floe_levels_pending` lists them); a non-NULL
/// `episodes` with `episodes_len` 0 gives it none. Every call that succeeds drops the episodes
/// kept so far (given episodes stand in for them); a refused one keeps them. `scores` is NULL or
/// one finite score per episode from the host (for `plr`, the episode's positive value loss or
/// MaxMC); `scores_len` is their number. `buffers` hold the last step's outputs, unchanged (as
/// `floe_engine_refill` describes). `*out` (may be NULL) says what the call did.
///
/// Errors (the engine and the kept episodes unchanged by a refused call): FLOE_STATUS_BAD_INPUT
/// for scores of another count than the episodes, a score that is not finite, an episode whose
/// slot is outside the pool or whose generation that slot has not reached, buffers that are not
/// the last outputs, that overlap or are misaligned, a misaligned `episodes`, `scores` or `out`,
/// or an engine other than the sampler's; FLOE_STATUS_NULL_POINTER for `scores` NULL
/// with `scores_len` above 0, `episodes` NULL with `episodes_len` above 0, or a NULL `levels`,
/// `engine`, `buffers` or buffer of non-zero length; FLOE_STATUS_WRONG_HANDLE for a handle that
/// is not a live level sampler or engine; and as `floe_levels_start`: the sampler's own status
/// (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_CONFIG,
/// FLOE_STATUS_UNKNOWN_PLUGIN), FLOE_STATUS_BAD_OUTPUT for a plan the checks refuse,
/// FLOE_STATUS_CONFIG for new levels the pool has no room for, FLOE_STATUS_FAILED for levels
/// that cannot be generated, FLOE_STATUS_TOO_LARGE; the engine's FLOE_STATUS_NOT_RESET,
/// FLOE_STATUS_BUFFER_SIZE and FLOE_STATUS_GPU.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn floe_levels_update(
    levels: *mut floe_levels,
    engine: *mut floe_engine,
    episodes: *const EnvInfo,
    episodes_len: usize,
    scores: *const f32,
    scores_len: usize,
    buffers: *const floe_step_buffers,
    out: *mut floe_levels_applied,
) -> floe_status {
    guard(|| {
        check_report(out)?;
        // SAFETY: forwarded from the caller's contract.
        let (episodes, scores) = unsafe { episodes_and_scores(episodes, episodes_len, scores, scores_len) }?;
        // SAFETY: as in `floe_levels_start`.
        let buffers = unsafe { step_buffers(buffers) }?;
        let applied = with_levels(levels, |l| {
            with_engine(engine, |e| l.update(e, episodes.as_deref(), scores, buffers).map_err(levels_error))
        })?;
        // SAFETY: as in `floe_levels_start`.
        unsafe { report(out, applied.into()) }
    })
}

/// The episodes kept since the sampler's last call, in the order it will get them: up to `cap`
/// records into `out`, and their number (all of them, which may be more than `cap`) into `*len`.
/// A host that scores episodes itself reads them here, then passes its scores in that order to
/// `floe_levels_update`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `out` or `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_pending(
    levels: *const floe_levels,
    out: *mut EnvInfo,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    guard(|| {
        let pending = || {
            with_levels(levels, |l| {
                Ok(l.pending()
                    .iter()
                    .map(|e| EnvInfo {
                        episode_steps: e.episode_steps,
                        outcome: e.outcome,
                        failure_kind: e.failure_kind,
                        failure_agent: e.failure_agent,
                        instance: e.instance,
                        generation: e.generation,
                        episode_return: e.episode_return,
                        agents_on_goal: e.agents_on_goal,
                    })
                    .collect())
            })
        };
        // SAFETY: forwarded from the caller's contract.
        unsafe { hand_out(out, cap, len, pending) }
    })
}

/// Whether the sampler wants the trainer to learn from replayed levels alone (robust PLR: `plr`
/// with `"robust": true`, its default), into `*robust` (1 or 0): a trainer then takes no gradient
/// from the steps `floe_levels_first_play` marks 1.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `robust`; FLOE_STATUS_WRONG_HANDLE for
/// a `levels` that is not a live level sampler.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_robust(levels: *const floe_levels, robust: *mut u8) -> floe_status {
    guard(|| {
        check_out(robust, "robust")?;
        let r = with_levels(levels, |l| Ok(u8::from(l.robust())))?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(robust, r, "robust") }
    })
}

/// Per environment, whether its episode in the last step recorded (`floe_levels_after_step`)
/// plays its level for the first time (1) or replays it (0): a replay when an episode on the same
/// slot and generation ended in a step before the one this episode began in. Up to `cap` marks
/// into `out`, and their number (one per environment; 0 before any step is recorded) into
/// `*len`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_first_play(
    levels: *const floe_levels,
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    // SAFETY: forwarded from the caller's contract.
    guard(|| unsafe { hand_out_marks(levels, Levels::first_play, out, cap, len) })
}

/// Per episode that `floe_levels_pending` lists, in its order, whether it was its level's first
/// play (1) or a replay (0), as `floe_levels_first_play` marked it: up to `cap` marks into
/// `out`, and their number into `*len`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_pending_first_play(
    levels: *const floe_levels,
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    // SAFETY: forwarded from the caller's contract.
    guard(|| unsafe { hand_out_marks(levels, Levels::pending_first_play, out, cap, len) })
}

/// Per episode that `floe_levels_pending` lists, in its order, the environment it ran in: with
/// `floe_levels_pending_end_steps`, the key a host scores an episode by, whatever order its own
/// loops run in. Up to `cap` into `out`, and their number into `*len`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `out` or `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_pending_envs(
    levels: *const floe_levels,
    out: *mut u32,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    // SAFETY: forwarded from the caller's contract.
    guard(|| unsafe { hand_out(out, cap, len, || with_levels(levels, |l| Ok(l.pending_envs().to_vec()))) })
}

/// Per episode that `floe_levels_pending` lists, in its order, the step it ended in, counted as
/// `floe_levels_steps_recorded` counts (the first step recorded is step 0). Up to `cap` into
/// `out`, and their number into `*len`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `out` or `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_pending_end_steps(
    levels: *const floe_levels,
    out: *mut u64,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    // SAFETY: forwarded from the caller's contract.
    guard(|| unsafe {
        hand_out(out, cap, len, || with_levels(levels, |l| Ok(l.pending_end_steps().to_vec())))
    })
}

/// The steps the sampler has recorded (`floe_levels_after_step`): the index the next recorded
/// step will have, into `*out`.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `out`; FLOE_STATUS_WRONG_HANDLE for a
/// `levels` that is not a live level sampler; FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_steps_recorded(
    levels: *const floe_levels,
    out: *mut u64,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let steps = with_levels(levels, |l| Ok(l.steps_recorded()))?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, steps, "out") }
    })
}

/// Each pool slot's statistics as the sampler keeps them, as of its last call
/// (`floe_slot_stats`: the generation they belong to, plays, staleness, score and the sampler's own
/// figure; `plr` and `accel`, `learnability` and `uniform` keep them): up to `cap` records into
/// `out`, and their number into `*len` (0 for a sampler that keeps none: a phase designer, a
/// loaded library's).
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `levels` or `len`, or `out` with `cap` above 0;
/// FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level sampler;
/// FLOE_STATUS_BAD_INPUT for a misaligned `out` or `len`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_slot_stats(
    levels: *const floe_levels,
    out: *mut SlotStats,
    cap: usize,
    len: *mut usize,
) -> floe_status {
    // SAFETY: forwarded from the caller's contract.
    guard(|| unsafe { hand_out(out, cap, len, || with_levels(levels, |l| Ok(l.slot_stats()))) })
}

/// The first-play marks `which` reads off the sampler, handed out as bytes (1 first play, 0
/// replay) by [`hand_out`].
///
/// # Safety
/// As [`hand_out`].
unsafe fn hand_out_marks(
    levels: *const floe_levels,
    which: fn(&Levels) -> &[bool],
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> Result<()> {
    let marks = || with_levels(levels, |l| Ok(which(l).iter().map(|&f| u8::from(f)).collect()));
    // SAFETY: forwarded from the caller's contract.
    unsafe { hand_out(out, cap, len, marks) }
}

/// Copies up to `cap` of the records `items` makes into `out`, and their number (all of them)
/// into `*len`, after checking both pointers.
///
/// # Safety
/// `out` is NULL or has room for `cap` records; `len` is NULL or writable.
unsafe fn hand_out<T: Copy>(
    out: *mut T,
    cap: usize,
    len: *mut usize,
    items: impl FnOnce() -> Result<Vec<T>>,
) -> Result<()> {
    check_out(len, "len")?;
    // SAFETY: room for `cap` records at `out`, by the caller's contract.
    let room = unsafe { slice_mut(out, cap, "out") }?;
    let items = items()?;
    for (o, r) in room.iter_mut().zip(&items) {
        *o = *r;
    }
    // SAFETY: checked not NULL; writable by the caller's contract.
    unsafe { write_out(len, items.len(), "len") }
}

/// A level sampler's decision apart from its application (opaque): its weights, the slots to
/// refill and their new levels, drawn. Shards of one pool in other processes each apply the same
/// decisions (`floe_decision_json` to send one, `floe_decision_from_json` to read it), which keeps
/// their pools the same. Immutable: thread-safe.
pub struct floe_decision {
    inner: Decision,
}

impl std::fmt::Debug for floe_decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("floe_decision").finish_non_exhaustive()
    }
}

impl Handle for floe_decision {
    const KIND: Kind = Kind::Decision;
}

/// The sampler's decision on a pool, without applying it: `records` (`records_len`) are the
/// pool's slots as `floe_engine_levels` gives them (shards of one pool add up their `in_play`);
/// `episodes` and `scores` as for `floe_levels_update` (`episodes` NULL with `episodes_len` 0: the
/// kept ones; either way the kept episodes are dropped when it succeeds). Draws the decision's
/// new levels. `floe_engine_apply` puts it into an engine. A sampler that edits levels (`accel`)
/// needs the pool's levels, which a decision apart from an engine does not have: it is refused.
///
/// Ownership: `*out` is the caller's (`floe_decision_free`). Thread-safe.
/// Errors (the source of new levels and the kept episodes unchanged by a refused call):
/// FLOE_STATUS_BAD_INPUT for scores of another count than the episodes or not finite, an episode
/// whose slot is outside the pool or whose generation that slot has not reached, a loaded state
/// not yet started, or a misaligned `records`, `episodes`, `scores` or `out`;
/// FLOE_STATUS_NULL_POINTER for a NULL `levels` or `out`, or `records`, `episodes` or `scores`
/// NULL with a length above 0; FLOE_STATUS_WRONG_HANDLE for a `levels` that is not a live level
/// sampler; the sampler's own status; FLOE_STATUS_BAD_OUTPUT for a plan the checks refuse (an
/// edit included); FLOE_STATUS_CONFIG for a configuration outside the level space;
/// FLOE_STATUS_FAILED for levels that cannot be generated; FLOE_STATUS_TOO_LARGE.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn floe_levels_decide(
    levels: *mut floe_levels,
    records: *const LevelRecord,
    records_len: usize,
    episodes: *const EnvInfo,
    episodes_len: usize,
    scores: *const f32,
    scores_len: usize,
    out: *mut *mut floe_decision,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: `records_len` readable records at `records`, by the caller's contract.
        let records = unsafe { slice(records, records_len, "records") }?;
        // SAFETY: forwarded from the caller's contract.
        let (episodes, scores) = unsafe { episodes_and_scores(episodes, episodes_len, scores, scores_len) }?;
        let decision =
            with_levels(levels, |l| l.decide(records, episodes.as_deref(), scores).map_err(levels_error))?;
        let handle = handles::new(floe_decision { inner: decision });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

/// Puts a decision (`floe_levels_decide`, or one read by `floe_decision_from_json`) into `engine`:
/// the weights, then the refills, written into `buffers` (the last step's outputs, unchanged) as
/// `floe_engine_refill` writes them. `*out` (may be NULL) says what it did.
///
/// Errors (nothing changed by a refused call): FLOE_STATUS_BAD_INPUT for weights or slots the
/// engine refuses (a decision for another pool), buffers that are not the last outputs, overlap
/// or are misaligned, or a misaligned `out`; FLOE_STATUS_CONFIG for a new level that does not fit
/// the pool's room; FLOE_STATUS_NOT_RESET; FLOE_STATUS_BUFFER_SIZE; FLOE_STATUS_NULL_POINTER for a
/// NULL `engine`, `decision`, `buffers` or buffer of non-zero length; FLOE_STATUS_WRONG_HANDLE for
/// a handle that is not a live engine or decision; FLOE_STATUS_GPU.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_engine_apply(
    engine: *mut floe_engine,
    decision: *const floe_decision,
    buffers: *const floe_step_buffers,
    out: *mut floe_levels_applied,
) -> floe_status {
    guard(|| {
        check_report(out)?;
        let decision = handles::get(decision, "decision")?;
        // SAFETY: as in `floe_levels_start`.
        let buffers = unsafe { step_buffers(buffers) }?;
        let applied =
            with_engine(engine, |e| Levels::apply(e, &decision.inner, buffers).map_err(levels_error))?;
        // SAFETY: as in `floe_levels_start`.
        unsafe { report(out, applied.into()) }
    })
}

/// A decision as JSON text, to send to the shards of one pool: `{"weights": [...] or null,
/// "refill": [slots], "levels": [instances], "episodes": n}`.
///
/// Ownership: `*out` is the caller's (`floe_string_free`). Thread-safe.
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `decision` or `out`; FLOE_STATUS_WRONG_HANDLE for a
/// `decision` that is not a live decision; FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_decision_json(
    decision: *const floe_decision,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        let json = handles::get(decision, "decision")?.inner.to_json();
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_string(out, &json, "out") }
    })
}

/// A decision read from the JSON text `floe_decision_json` wrote, every level checked; its weights
/// and slots are checked against the pool by `floe_engine_apply`.
///
/// Ownership: `*out` is the caller's (`floe_decision_free`). Thread-safe.
/// Errors: FLOE_STATUS_BAD_INPUT naming the value for text that does not read, a level that does
/// not validate, a count of levels other than of slots, or a misaligned `out`;
/// FLOE_STATUS_NULL_POINTER for a NULL `json` or `out`; FLOE_STATUS_BAD_UTF8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn floe_decision_from_json(
    json: *const c_char,
    out: *mut *mut floe_decision,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: a NUL-terminated string by the caller's contract (NULL is refused).
        let text = unsafe { str_arg(json, "json") }?;
        let inner = Decision::from_json(text).map_err(levels_error)?;
        let handle = handles::new(floe_decision { inner });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

/// Frees a decision; NULL is accepted.
///
/// Errors: FLOE_STATUS_WRONG_HANDLE for a handle that is not a live decision.
///
/// # Safety
/// `decision` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_decision_free(decision: *mut floe_decision) -> floe_status {
    guard(|| handles::free(decision, "decision"))
}

/// Frees a level sampler; NULL is accepted.
///
/// Errors: FLOE_STATUS_WRONG_HANDLE for a handle that is not a live level sampler.
///
/// # Safety
/// `levels` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_levels_free(levels: *mut floe_levels) -> floe_status {
    guard(|| handles::free(levels, "levels"))
}
