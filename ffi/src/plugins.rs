//! `floe_plugin`: reward functions, curricula and environment engineers, built in or loaded from
//! a library (Rust or C), called from C.

use std::ffi::c_char;
use std::sync::Mutex;

use floe_core::engine::EnvInfo;
use floe_plugin_api::design::{DesignLimits, DesignLimitsRecord};
use floe_plugin_api::traits::{check_replay, check_rewards};
use floe_plugin_api::{
    Curriculum, EnvEngineer, EpisodeRecord, History, LevelRecord, LevelSampler, PluginError, PluginSpec,
    ReplayRecord, ReplayRequest, RewardFn, StepOutcome, VerdictRecord,
};
use floe_plugin_registry::{self as registry, RegistryError};

use crate::boundary::{
    check_out, floe_status, guard, non_null, opt_str_arg, slice, slice_mut, status, str_arg, write_out,
    write_string, Error, Result,
};
use crate::handles::{self, Handle, Kind};

// `floe_plugin_new`'s kinds: FLOE_PLUGIN_KIND_* of floe_types.h.
const FLOE_PLUGIN_REWARD: u32 = 1;
const FLOE_PLUGIN_CURRICULUM: u32 = 2;
const FLOE_PLUGIN_ENGINEER: u32 = 3;
const FLOE_PLUGIN_LEVEL_SAMPLER: u32 = 4;

enum Object {
    Reward(Box<dyn RewardFn>),
    Curriculum(Box<dyn Curriculum>),
    Engineer(Box<dyn EnvEngineer>),
    LevelSampler(Box<dyn LevelSampler>),
}

/// A registry error as a status: the plugin's own code when it refused, FLOE_STATUS_FAILED for a
/// library that does not load, FLOE_STATUS_CONFIG for a step-only reward asked to score plans
/// (or a plan-only one asked to score steps), and an engine that did not open as
/// `floe_engine_new` reports it.
pub(crate) fn registry_error(e: RegistryError) -> Error {
    if let RegistryError::Engine(e) = e {
        return Error::from(e);
    }
    if let RegistryError::Levels(e) = e {
        return Error::new(status::CONFIG, e.to_string());
    }
    let code = match &e {
        RegistryError::Plugin { source, .. } => source.code(),
        RegistryError::Load(_) => status::FAILED,
        _ => status::CONFIG,
    };
    Error::new(code, e.to_string())
}

/// `out_len` against the `len` inputs a reward is asked to score: FLOE_STATUS_BUFFER_SIZE, like
/// every other length check of the API.
fn rewards_room(inputs: usize, what: &str, out_len: usize) -> Result<()> {
    if inputs == out_len {
        Ok(())
    } else {
        Err(Error::new(
            status::BUFFER_SIZE,
            format!("out_len must equal len (one reward per {what}): {out_len} for {inputs}"),
        ))
    }
}

/// A plugin instance (opaque). Calls on one plugin are serialised by a lock inside it.
pub struct floe_plugin {
    inner: Mutex<Object>,
    kind: u32,
}

impl std::fmt::Debug for floe_plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("floe_plugin").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl Handle for floe_plugin {
    const KIND: Kind = Kind::Plugin;
}

/// Makes a plugin instance of `kind` (FLOE_PLUGIN_KIND_REWARD, _CURRICULUM, _ENV_ENGINEER or
/// _LEVEL_SAMPLER) named `name`, with `params_json` (NULL for its defaults), resolved as a
/// training configuration's plugin spec is (floe-plugin-host's registry). With `library` NULL,
/// `name` is a built-in (rewards `tiered`, `shaped`; curricula `fixed`, `difficulty-scaling`,
/// `plr`, `sec`, `frontier`, `schedule`; level samplers `uniform`, `plr`, `learnability`, every
/// curriculum but `plr` by its name and `phases` (`params`: `designer`, any curriculum's spec)
/// designing phases of level sampling, and `engineer` (`params`: `engineer`, `context`), all
/// with `phase_episodes` and `phases`, within the default level space's design limits
/// (`floe_levels_new` takes a space); engineers
/// `rules`, `endpoint` (an OpenAI-compatible server, parameters as in `floe train`), and
/// `embedded` in builds with the `embedded` feature); otherwise `library` is the path of a plugin
/// library, Rust or C (as `floe plugin inspect` reads), which stays loaded while the plugin
/// lives.
///
/// Ownership: `*out` is the caller's (`floe_plugin_free`). Thread-safe.
/// Errors: FLOE_STATUS_UNKNOWN_PLUGIN for a name the library (or the built-ins) does not have,
/// FLOE_STATUS_CONFIG for parameters that are not JSON or that the plugin refuses,
/// FLOE_STATUS_FAILED for a library that does not load (the message names the path and the
/// reason), FLOE_STATUS_BAD_INPUT for an unknown kind or a misaligned `out`,
/// FLOE_STATUS_NULL_POINTER for a NULL `name` or `out`, FLOE_STATUS_BAD_UTF8 for a string that is
/// not UTF-8, or the status a loaded plugin's constructor returns (FLOE_STATUS_FAILED,
/// FLOE_STATUS_PANICKED for a Rust plugin that panicked, FLOE_STATUS_UNSUPPORTED,
/// FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT, FLOE_STATUS_CONFIG or
/// FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_new(
    library: *const c_char,
    kind: u32,
    name: *const c_char,
    params_json: *const c_char,
    out: *mut *mut floe_plugin,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: NUL-terminated strings or NULL (checked where required).
        let name = unsafe { str_arg(name, "name") }?;
        // SAFETY: as above.
        let params = unsafe { opt_str_arg(params_json, "params_json") }?.unwrap_or("");
        // SAFETY: as above.
        let library = unsafe { opt_str_arg(library, "library") }?;
        let params = if params.trim().is_empty() {
            serde_json::Value::Null
        } else {
            floe_core::json::from_str(params)
                .map_err(|e| Error::new(status::CONFIG, format!("params_json: {e}")))?
        };
        let spec = PluginSpec { name: name.to_string(), params, library: library.map(Into::into) };
        let object = match kind {
            FLOE_PLUGIN_REWARD => registry::reward(&spec).map(Object::Reward),
            FLOE_PLUGIN_CURRICULUM => registry::curriculum(&spec).map(Object::Curriculum),
            FLOE_PLUGIN_ENGINEER => registry::engineer(&spec).map(Object::Engineer),
            FLOE_PLUGIN_LEVEL_SAMPLER => {
                let limits = floe_levels::LevelSpace::default().limits();
                registry::level_sampler(&spec, &limits).map(Object::LevelSampler)
            }
            k => {
                return Err(Error::bad_input(format!(
                    "plugin kind {k}: 1 reward, 2 curriculum, 3 engineer, 4 level sampler"
                )))
            }
        }
        .map_err(registry_error)?;
        let handle = handles::new(floe_plugin { inner: Mutex::new(object), kind });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, handle, "out") }
    })
}

fn with_plugin<T>(plugin: *const floe_plugin, f: impl FnOnce(&mut Object) -> Result<T>) -> Result<T> {
    let p = handles::get(plugin, "plugin")?;
    let mut guard = handles::lock(&p.inner, "the plugin")?;
    f(&mut guard)
}

fn wrong_kind(want: &str) -> Error {
    Error::new(status::UNSUPPORTED, format!("this plugin is not a {want}"))
}

/// The plugin's kind (FLOE_PLUGIN_KIND_REWARD, _CURRICULUM, _ENV_ENGINEER or _LEVEL_SAMPLER).
/// Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `plugin` or `out`, FLOE_STATUS_WRONG_HANDLE for a
/// `plugin` that is not a live plugin, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_kind(plugin: *const floe_plugin, out: *mut u32) -> floe_status {
    guard(|| {
        let p = handles::get(plugin, "plugin")?;
        // SAFETY: a writable `uint32_t` or NULL (checked).
        unsafe { write_out(out, p.kind, "out") }
    })
}

/// A reward plugin's rewards for `len` verdict records (from `floe_verify_moves` or
/// `floe_verify_answers`): `out_len` must be `len`. Records are checked first (known failure
/// codes, consistent counts); every reward is checked to be finite.
///
/// Errors (the caller's `out` left as it was): FLOE_STATUS_BUFFER_SIZE for an `out_len` other
/// than `len`, FLOE_STATUS_UNSUPPORTED (not a reward, or one that rewards only steps),
/// FLOE_STATUS_BAD_INPUT for a record that does not check or a misaligned array,
/// FLOE_STATUS_BAD_OUTPUT for a reward that is not finite, FLOE_STATUS_NULL_POINTER for a NULL
/// `plugin` or array of non-zero length, FLOE_STATUS_WRONG_HANDLE for a `plugin` that is not a
/// live plugin, or the plugin's own status (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED for a Rust
/// plugin that panicked, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT,
/// FLOE_STATUS_CONFIG or FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_rewards(
    plugin: *mut floe_plugin,
    records: *const VerdictRecord,
    len: usize,
    out: *mut f32,
    out_len: usize,
) -> floe_status {
    guard(|| {
        // SAFETY: arrays of the given lengths, by the caller's contract.
        let records = unsafe { slice(records, len, "records") }?;
        // SAFETY: as above.
        let out = unsafe { slice_mut(out, out_len, "out") }?;
        rewards_room(records.len(), "record", out.len())?;
        records.iter().try_for_each(VerdictRecord::check)?;
        with_plugin(plugin, |o| match o {
            Object::Reward(r) => Ok(rewards_checked(out, |o| r.verdict_rewards(records, o))?),
            _ => Err(wrong_kind("reward")),
        })
    })
}

/// Runs a reward call into a scratch buffer and copies it out only when every value is finite,
/// so that a failing plugin leaves the caller's buffer as it was.
fn rewards_checked(
    out: &mut [f32],
    call: impl FnOnce(&mut [f32]) -> Result<(), PluginError>,
) -> Result<(), PluginError> {
    let mut scratch = vec![0.0; out.len()];
    call(&mut scratch)?;
    check_rewards(&scratch)?;
    out.copy_from_slice(&scratch);
    Ok(())
}

/// A reward plugin's rewards for `len` step outcomes (`floe_step_outcome`, one per agent and
/// step): `out_len` must be `len`.
///
/// Errors (the caller's `out` left as it was): as [`floe_plugin_rewards`]
/// (FLOE_STATUS_UNSUPPORTED for a plugin that rewards only verdicts): FLOE_STATUS_BUFFER_SIZE,
/// FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT,
/// FLOE_STATUS_NULL_POINTER, FLOE_STATUS_WRONG_HANDLE, or the plugin's own status
/// (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT,
/// FLOE_STATUS_BAD_OUTPUT, FLOE_STATUS_CONFIG or FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_step_rewards(
    plugin: *mut floe_plugin,
    steps: *const StepOutcome,
    len: usize,
    out: *mut f32,
    out_len: usize,
) -> floe_status {
    guard(|| {
        // SAFETY: arrays of the given lengths, by the caller's contract.
        let steps = unsafe { slice(steps, len, "steps") }?;
        // SAFETY: as above.
        let out = unsafe { slice_mut(out, out_len, "out") }?;
        rewards_room(steps.len(), "step outcome", out.len())?;
        steps.iter().try_for_each(StepOutcome::check)?;
        with_plugin(plugin, |o| match o {
            Object::Reward(r) => Ok(rewards_checked(out, |o| r.step_rewards(steps, o))?),
            _ => Err(wrong_kind("reward")),
        })
    })
}

/// A curriculum's configuration for the next round: `history_json` is the history of finished
/// rounds (`{"rounds": [...]}` as floe-plugin-api's `History`; `{"rounds": []}` for round 0).
/// `*out_config_json` gets the validated configuration (`floe_string_free`), ready for
/// `floe_pool_generate`.
///
/// Errors: FLOE_STATUS_CONFIG for a history that does not parse or validate,
/// FLOE_STATUS_UNSUPPORTED when the plugin is not a curriculum, FLOE_STATUS_BAD_OUTPUT for a
/// configuration from the plugin that does not validate, FLOE_STATUS_NULL_POINTER for a NULL
/// argument, FLOE_STATUS_WRONG_HANDLE for a `plugin` that is not a live plugin,
/// FLOE_STATUS_BAD_UTF8 for a `history_json` that is not UTF-8, FLOE_STATUS_BAD_INPUT for a
/// misaligned `out_config_json`, or the plugin's own status (FLOE_STATUS_FAILED,
/// FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT,
/// FLOE_STATUS_CONFIG or FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_next_config(
    plugin: *mut floe_plugin,
    history_json: *const c_char,
    out_config_json: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out_config_json, "out_config_json")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(history_json, "history_json") }?;
        let history = History::from_json(text)?;
        let cfg = with_plugin(plugin, |o| match o {
            Object::Curriculum(c) => Ok(c.next_config(&history)?),
            _ => Err(wrong_kind("curriculum")),
        })?;
        cfg.validate()
            .map_err(|e| Error::new(status::BAD_OUTPUT, format!("the curriculum's configuration: {e}")))?;
        // SAFETY: checked not NULL.
        unsafe { write_string(out_config_json, &cfg.to_json(), "out_config_json") }
    })
}

/// A curriculum's choice of instances to replay: at most `request->count` distinct indices into
/// `records` (`len` of them) are written to `out_indices` (room for `out_cap`, at least
/// `request->count`) and their number to `*out_len`.
///
/// Errors: FLOE_STATUS_UNSUPPORTED for a plugin that is not a curriculum or a curriculum that
/// does not replay, FLOE_STATUS_BAD_INPUT for records out of range or a misaligned array,
/// FLOE_STATUS_BUFFER_SIZE when `out_cap` is smaller than the count asked for,
/// FLOE_STATUS_BAD_OUTPUT for indices the plugin got wrong, FLOE_STATUS_NULL_POINTER for a NULL
/// `plugin`, `request`, `out_len` or array of non-zero length, FLOE_STATUS_WRONG_HANDLE for a
/// `plugin` that is not a live plugin, or the plugin's own status (FLOE_STATUS_FAILED,
/// FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT,
/// FLOE_STATUS_CONFIG or FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_sample_replay(
    plugin: *mut floe_plugin,
    records: *const ReplayRecord,
    len: usize,
    request: *const ReplayRequest,
    out_indices: *mut u32,
    out_cap: usize,
    out_len: *mut usize,
) -> floe_status {
    guard(|| {
        non_null(request, "request")?;
        check_out(out_len, "out_len")?;
        if !(request as usize).is_multiple_of(std::mem::align_of::<ReplayRequest>()) {
            return Err(Error::bad_input("request is not aligned"));
        }
        // SAFETY: not NULL; the caller passes a readable request.
        let request = unsafe { request.read() };
        // SAFETY: arrays of the given lengths, by the caller's contract.
        let records = unsafe { slice(records, len, "records") }?;
        // SAFETY: as above.
        let out = unsafe { slice_mut(out_indices, out_cap, "out_indices") }?;
        if out.len() < request.count as usize {
            return Err(Error::new(
                status::BUFFER_SIZE,
                format!(
                    "out_indices has room for {} indices, the request asks for {}",
                    out.len(),
                    request.count
                ),
            ));
        }
        records.iter().try_for_each(|r| r.check(&request))?;
        let picked = with_plugin(plugin, |o| match o {
            Object::Curriculum(c) => Ok(c.sample_replay(records, &request)?),
            _ => Err(wrong_kind("curriculum")),
        })?;
        check_replay(&picked, records.len(), &request)?;
        out[..picked.len()].copy_from_slice(&picked);
        // SAFETY: checked not NULL.
        unsafe { write_out(out_len, picked.len(), "out_len") }
    })
}

/// A level sampler's plan: `levels` (`levels_len` records, one per pool slot, `levels[i].slot ==
/// i`) and the episodes that ended (`episodes_len` records, as the engine's `info` gave them) in,
/// with `scores` NULL or one finite score per episode from the host. Out: when
/// `*out_has_weights` is 1, `out_weights` (room for `levels_len`) holds the slots' new weights;
/// `out_refill` (room for `levels_len`) gets `*out_refill_len` distinct slots to refill with new
/// levels; `*out_config_json` gets the generator configuration of the refilled levels, or NULL
/// (`floe_string_free`). Everything is checked (the weights as `floe_engine_set_weights` takes
/// them) before it is written: a refused plan leaves the outputs as they were. To steer an
/// engine with a sampler, `floe_levels` calls this and applies the plan.
///
/// Errors: FLOE_STATUS_UNSUPPORTED when the plugin is not a level sampler,
/// FLOE_STATUS_BAD_INPUT for scores that are not finite, an episode whose slot is outside the
/// pool, or a misaligned array; FLOE_STATUS_BUFFER_SIZE for `out_cap` below `levels_len`;
/// FLOE_STATUS_BAD_OUTPUT for a plan the checks refuse; FLOE_STATUS_NULL_POINTER for a NULL
/// `plugin`, `out_has_weights`, `out_refill_len`, `out_config_json`, or array of non-zero
/// length; FLOE_STATUS_WRONG_HANDLE for a `plugin` that is not a live plugin; or the plugin's own
/// status (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED,
/// FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT, FLOE_STATUS_CONFIG or
/// FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn floe_plugin_update_levels(
    plugin: *mut floe_plugin,
    levels: *const LevelRecord,
    levels_len: usize,
    episodes: *const EnvInfo,
    episodes_len: usize,
    scores: *const f32,
    out_weights: *mut f64,
    out_has_weights: *mut u32,
    out_refill: *mut u32,
    out_cap: usize,
    out_refill_len: *mut usize,
    out_config_json: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out_has_weights, "out_has_weights")?;
        check_out(out_refill_len, "out_refill_len")?;
        check_out(out_config_json, "out_config_json")?;
        // SAFETY: arrays of the given lengths, by the caller's contract.
        let levels = unsafe { slice(levels, levels_len, "levels") }?;
        // SAFETY: as above.
        let episodes: Vec<EpisodeRecord> =
            unsafe { slice(episodes, episodes_len, "episodes") }?.iter().map(|&i| i.into()).collect();
        let scores = if scores.is_null() {
            None
        } else {
            // SAFETY: one score per episode, by the caller's contract.
            Some(unsafe { slice(scores, episodes_len, "scores") }?)
        };
        // SAFETY: as above.
        let weights = unsafe { slice_mut(out_weights, out_cap, "out_weights") }?;
        // SAFETY: as above.
        let refill = unsafe { slice_mut(out_refill, out_cap, "out_refill") }?;
        if out_cap < levels_len {
            return Err(Error::new(
                status::BUFFER_SIZE,
                format!(
                    "out_weights and out_refill have room for {out_cap}, the pool has {levels_len} slots"
                ),
            ));
        }
        floe_plugin_api::levels::check_update(levels, &episodes, scores)?;
        let plan = with_plugin(plugin, |o| match o {
            Object::LevelSampler(s) => Ok(s.update(levels, &episodes, scores)?),
            _ => Err(wrong_kind("level sampler")),
        })?;
        plan.check(levels.len())?;
        let config = plan.config.as_ref().map(floe_plugin_api::RoundConfig::to_json);
        if let Some(w) = &plan.weights {
            weights[..w.len()].copy_from_slice(w);
        }
        refill[..plan.refill.len()].copy_from_slice(&plan.refill);
        // SAFETY: (these three) checked not NULL; writable by the caller's contract.
        unsafe { write_out(out_has_weights, u32::from(plan.weights.is_some()), "out_has_weights") }?;
        // SAFETY: as above.
        unsafe { write_out(out_refill_len, plan.refill.len(), "out_refill_len") }?;
        match config {
            // SAFETY: as above.
            Some(text) => unsafe { write_string(out_config_json, &text, "out_config_json") },
            // SAFETY: as above.
            None => unsafe { write_out(out_config_json, std::ptr::null_mut(), "out_config_json") },
        }
    })
}

/// An environment engineer's reply to a context (the text the trainer assembles: failures,
/// guidelines, history, summary, training details), designed within `limits` (the design limits
/// the engineer is given as a value; the caller clamps the reply into them; NULL: floe's
/// defaults, those of a run without `rounds.design_limits`). `*out_reply_json` gets
/// `{"config": <validated configuration>, "rationale": "..."}` (`floe_string_free`).
///
/// The context's format: what an engineer reads of it is its own. The built-in `rules` engineer
/// reads no prose: it takes the history of rounds as JSON, `{"rounds": [{"round": 0, "config":
/// {"sizes": [{"size": 4, "data_ratio": 1.0, "hole_ratio": 0.2, "wait_ratio": 0.5}], "agents":
/// [2]}, "results": [{"size": 4, "valid_rate": 0.5, "optimal_rate": 0.25}]}]}` (`{"rounds": []}`
/// asks for round 0; `results` entries may also carry `"instances"`, `"failures"` by kind and
/// `"mean_abs_advantage"`), found as the block fenced with ```` ```json history ```` (what
/// the trainer's context ends with), else the last block fenced with ```` ```json ````, else
/// the whole context; a context without a valid history is FLOE_STATUS_BAD_INPUT. A language
/// model engineer reads the whole text (failures, guidelines, history, summary, training
/// details), as the trainer assembles it.
///
/// Errors: FLOE_STATUS_UNSUPPORTED when the plugin is not an engineer, FLOE_STATUS_BAD_OUTPUT
/// for a configuration that does not validate, FLOE_STATUS_NULL_POINTER for a NULL argument
/// (`limits->agents` when `agents_len` is not 0), FLOE_STATUS_CONFIG for `limits` that are not
/// valid design limits, FLOE_STATUS_WRONG_HANDLE for a `plugin` that is not a live plugin,
/// FLOE_STATUS_BAD_UTF8 for a `context` that is not UTF-8, FLOE_STATUS_BAD_INPUT for a
/// misaligned `out_reply_json`, `limits` or `limits->agents`, FLOE_STATUS_BUFFER_SIZE for an
/// `agents_len` too large to address, or the plugin's own status (FLOE_STATUS_FAILED,
/// FLOE_STATUS_PANICKED, FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT for a context it cannot
/// read, FLOE_STATUS_BAD_OUTPUT, FLOE_STATUS_CONFIG or FLOE_STATUS_UNKNOWN_PLUGIN).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_design(
    plugin: *mut floe_plugin,
    context: *const c_char,
    limits: *const DesignLimitsRecord<'_>,
    out_reply_json: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out_reply_json, "out_reply_json")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let context = unsafe { str_arg(context, "context") }?;
        // SAFETY: NULL or one record, its agents NULL or `agents_len` counts (checked).
        let limits = unsafe { design_limits(limits) }?;
        let reply = with_plugin(plugin, |o| match o {
            Object::Engineer(e) => Ok(e.design(context, &limits)?),
            _ => Err(wrong_kind("engineer")),
        })?;
        reply
            .config
            .validate()
            .map_err(|e| Error::new(status::BAD_OUTPUT, format!("the engineer's configuration: {e}")))?;
        // SAFETY: checked not NULL.
        unsafe { write_string(out_reply_json, &reply.to_json(), "out_reply_json") }
    })
}

/// The design limits a C caller gave, validated; floe's defaults for NULL.
///
/// # Safety
/// `ptr` is NULL or valid for one read; its `agents` NULL or valid for `agents_len` reads.
unsafe fn design_limits(ptr: *const DesignLimitsRecord<'_>) -> Result<DesignLimits> {
    if ptr.is_null() {
        return Ok(DesignLimits::default());
    }
    // SAFETY: not NULL; the caller guarantees one record (alignment is checked).
    let record = unsafe { slice(ptr, 1, "limits") }?[0];
    // SAFETY: the caller guarantees `agents_len` counts at `agents` when it is not NULL.
    let agents = unsafe { slice(record.agents.as_ptr(), record.agents.len(), "limits->agents") }?;
    DesignLimits::from_record(&record.with_agents(agents))
        .map_err(|e| Error::new(status::CONFIG, format!("limits: {e}")))
}

/// Frees a plugin (and unloads its library when no other plugin uses it). NULL is accepted.
///
/// Errors: FLOE_STATUS_WRONG_HANDLE for a pointer that is not a live plugin (freed before, or of
/// another kind).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_plugin_free(plugin: *mut floe_plugin) -> floe_status {
    guard(|| handles::free(plugin.cast_const(), "plugin"))
}
