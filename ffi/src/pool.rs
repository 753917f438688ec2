//! `floe_pool`: the instances environments play and plans are verified against.

use std::ffi::c_char;
use std::sync::Arc;

use floe_core::engine::{InstancePool, Optima};
use floe_core::generator::{generate, random_instances, GenerateError, GeneratorConfig};
use floe_core::instance::{parse_instances, Agent};
use floe_core::pool::MAX_AGENTS;
use floe_core::{Grid, Instance, Pos, TooLarge};
use floe_plugin_api::RoundConfig;

use crate::boundary::{
    check_out, floe_status, guard, slice, status, str_arg, write_out, write_string, Error, Result,
};
use crate::handles::{self, Handle, Kind};

/// A pool of instances (opaque). Immutable once made: any number of threads may read it at
/// once, and engines made from it keep it alive.
#[derive(Debug)]
pub struct floe_pool {
    pub(crate) instances: Vec<Instance>,
    pub(crate) packed: Arc<InstancePool>,
}

impl Handle for floe_pool {
    const KIND: Kind = Kind::Pool;
}

impl floe_pool {
    fn make(instances: Vec<Instance>, solve_missing: bool) -> Result<*mut floe_pool> {
        let packed = Arc::new(InstancePool::new(&instances, Optima::solve_missing(solve_missing))?);
        Ok(handles::new(floe_pool { instances, packed }))
    }

    pub(crate) fn instance(&self, i: usize) -> Result<&Instance> {
        self.instances.get(i).ok_or_else(|| {
            Error::bad_input(format!("instance {i} is out of range: the pool has {}", self.instances.len()))
        })
    }
}

/// One instance described by the caller's own arrays, for [`floe_pool_from_arrays`].
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct floe_instance_view {
    /// Grid width and height, 1..=256 each.
    pub width: u32,
    pub height: u32,
    /// Agents, 1..=255.
    pub num_agents: u32,
    /// `width · height` bytes, row-major: 0 a frozen cell, 1 a hole.
    pub holes: *const u8,
    /// `2 · num_agents` values: each agent's start as (row, col).
    pub starts: *const u32,
    /// `2 · num_agents` values: each agent's goal as (row, col).
    pub goals: *const u32,
}

/// One instance's facts, from [`floe_pool_instance_info`].
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct floe_instance_info {
    pub width: u32,
    pub height: u32,
    pub num_agents: u32,
    /// The optimal sum of costs, or FLOE_UNKNOWN when the pool does not know it.
    pub optimal_soc: u32,
}

fn generator_configs(json: &str, samples: usize, seed: u64) -> Result<Vec<(GeneratorConfig, bool)>> {
    let mut value: serde_json::Value = floe_core::json::from_str(json)
        .map_err(|e| Error::new(status::CONFIG, format!("configuration JSON: {e}")))?;
    if value.get("sizes").is_some() {
        let round = RoundConfig::from_json(json)?;
        return Ok(round.generator_configs(samples, seed).into_iter().map(|c| (c, true)).collect());
    }
    // One setting: GeneratorConfig's fields, but the count and the seed are this call's
    // arguments; "size" is the square's shorthand, and "solve": false draws unsolved instances.
    let obj = value
        .as_object_mut()
        .ok_or_else(|| Error::new(status::CONFIG, "a generator setting must be a JSON object"))?;
    if let Some(key) = ["count", "seed"].into_iter().find(|k| obj.contains_key(*k)) {
        return Err(Error::new(
            status::CONFIG,
            format!("generator setting: \"{key}\" is an argument of the call, not a field of the setting"),
        ));
    }
    if !obj.contains_key("agents") {
        return Err(Error::new(status::CONFIG, "generator setting: \"agents\" is required"));
    }
    let solve = match obj.remove("solve") {
        None => true,
        Some(serde_json::Value::Bool(b)) => b,
        Some(v) => {
            return Err(Error::new(
                status::CONFIG,
                format!("generator setting: \"solve\": {v} is not true or false"),
            ))
        }
    };
    let size = obj.remove("size");
    let sides = (obj.contains_key("width"), obj.contains_key("height"));
    if !matches!((&size, sides), (Some(_), (false, false)) | (None, (true, true))) {
        return Err(Error::new(status::CONFIG, "give either \"size\" or both \"width\" and \"height\""));
    }
    let cfg: GeneratorConfig = serde_json::from_value(value)
        .map_err(|e| Error::new(status::CONFIG, format!("generator setting: {e}")))?;
    let mut cfg = cfg.count(samples).seed(seed);
    if let Some(side) = size {
        let side = serde_json::from_value(side)
            .map_err(|e| Error::new(status::CONFIG, format!("generator setting: size: {e}")))?;
        cfg = cfg.size(side);
    }
    if cfg.agents > MAX_AGENTS {
        return Err(Error::new(status::CONFIG, format!("{} agents: at most {MAX_AGENTS}", cfg.agents)));
    }
    if !solve && cfg.wait_ratio != 0.0 {
        return Err(Error::new(
            status::CONFIG,
            format!(
                "\"solve\": false draws unsolved instances, and \"wait_ratio\": {} needs solved ones (only \
                 an optimal plan tells whether an instance needs a wait): drop \"wait_ratio\" to draw \
                 unsolved instances, or drop \"solve\": false to solve them",
                cfg.wait_ratio
            ),
        ));
    }
    Ok(vec![(cfg, solve)])
}

/// Generates `samples` instances with their optimal plans.
///
/// `config_json` is either a round configuration of the plugin API (what a curriculum's
/// `next_config` returns: `{"sizes": [...], "agents": [...], ...}`, the samples shared among its
/// sizes and agent counts as in training), or one setting:
/// `{"size": 5, "agents": 3, "hole_ratio": 0.2, "wait_ratio": 0.5}` (or `"width"` and
/// `"height"` instead of `"size"`; optional `"max_attempts"`, `"max_nodes"`, and `"solve": false`
/// to draw connected instances without solving them, fast for many agents, optimum unknown; the
/// count and the seed are this call's, never the setting's). The same configuration, samples and
/// seed give the same pool. One agent never needs to wait: a setting with `"agents": 1` needs
/// `"wait_ratio": 0` (the default), and a round configuration whose `agents` include 1 needs
/// `wait_ratio` 0 on every size; otherwise FLOE_STATUS_CONFIG. Keys appear once per object: JSON
/// that names a key twice is FLOE_STATUS_CONFIG, never a silent choice of one value.
///
/// Ownership: `*out` is the caller's, freed with `floe_pool_free`. Thread-safe.
/// Errors: FLOE_STATUS_CONFIG for a configuration that does not parse or validate,
/// FLOE_STATUS_FAILED when the generator cannot draw enough instances, FLOE_STATUS_BAD_INPUT for
/// `samples` 0 or a misaligned `out`, FLOE_STATUS_NULL_POINTER for a NULL `config_json` or
/// `out`, FLOE_STATUS_BAD_UTF8 for a `config_json` that is not UTF-8, FLOE_STATUS_TOO_LARGE
/// when `samples` instances cannot be held (checked before any is made; the message gives the
/// bytes asked for).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_generate(
    config_json: *const c_char,
    samples: usize,
    seed: u64,
    out: *mut *mut floe_pool,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: the caller passes a NUL-terminated string or NULL (checked).
        let json = unsafe { str_arg(config_json, "config_json") }?;
        if samples == 0 {
            return Err(Error::bad_input("samples is 0: a pool holds at least one instance"));
        }
        let configs = generator_configs(json, samples, seed)?;
        for (cfg, _) in &configs {
            cfg.validate().map_err(|e| Error::new(status::CONFIG, e.to_string()))?;
        }
        let mut instances = Vec::new();
        for (cfg, solved) in configs {
            let made = if solved { generate(&cfg) } else { random_instances(&cfg) };
            let made = made.map_err(|e| match e {
                GenerateError::TooLarge(t) => Error::from(t),
                e => Error::new(status::FAILED, e.to_string()),
            })?;
            if instances.is_empty() {
                instances = made;
            } else {
                instances.try_reserve_exact(made.len()).map_err(|_| {
                    TooLarge::of::<Instance>(
                        instances.len().saturating_add(made.len()),
                        "the pool's instances",
                    )
                })?;
                instances.extend(made);
            }
        }
        let pool = floe_pool::make(instances, false)?;
        // SAFETY: `out` was checked not NULL; the caller guarantees it is writable.
        unsafe { write_out(out, pool, "out") }
    })
}

fn parse_text(text: &str, solve_missing: bool) -> Result<*mut floe_pool> {
    let instances = parse_instances(text).map_err(|(line, e)| match line {
        0 => Error::bad_input(format!("instances: {e}")),
        n => Error::bad_input(format!("instance {n}: {e}")),
    })?;
    floe_pool::make(instances, solve_missing)
}

/// A pool from instance JSON text: one object, a JSON array, or JSON Lines (the format of
/// `floe generate`). With `solve_missing` non-zero, instances without a stored optimal plan are
/// solved (that can take long); otherwise their optimum stays unknown.
///
/// Ownership: `*out` is the caller's (`floe_pool_free`). Thread-safe.
/// Errors: FLOE_STATUS_BAD_INPUT naming the line (or array index) of a malformed instance, for
/// text without instances, or for a misaligned `out`; FLOE_STATUS_NULL_POINTER for a NULL `text`
/// or `out`, FLOE_STATUS_BAD_UTF8 for a `text` that is not UTF-8, FLOE_STATUS_TOO_LARGE when the
/// pool's packed arrays cannot be held (each instance takes the room of the largest).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_from_json(
    text: *const c_char,
    solve_missing: i32,
    out: *mut *mut floe_pool,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(text, "text") }?;
        let pool = parse_text(text, solve_missing != 0)?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, pool, "out") }
    })
}

/// As [`floe_pool_from_json`], from a file (UTF-8 path).
///
/// Errors: FLOE_STATUS_IO when the file cannot be read (or is not UTF-8), else as
/// [`floe_pool_from_json`]: FLOE_STATUS_BAD_INPUT, FLOE_STATUS_NULL_POINTER for a NULL `path` or
/// `out`, FLOE_STATUS_BAD_UTF8 for a `path` that is not UTF-8, FLOE_STATUS_TOO_LARGE.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_from_file(
    path: *const c_char,
    solve_missing: i32,
    out: *mut *mut floe_pool,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let path = unsafe { str_arg(path, "path") }?;
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::new(status::IO, format!("{path}: {e}")))?;
        let pool = parse_text(&text, solve_missing != 0)?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, pool, "out") }
    })
}

fn positions(ptr: *const u32, k: usize, what: &str) -> Result<Vec<Pos>> {
    // SAFETY: the caller's view promises 2·k values at `ptr`.
    let v = unsafe { slice(ptr, 2 * k, what) }?;
    Ok(v.chunks_exact(2).map(|p| Pos { row: p[0], col: p[1] }).collect())
}

/// A pool from the caller's own arrays: `count` instance views (see `floe_instance_view`).
/// Every instance is checked (sizes, starts and goals distinct, on the grid and on frozen
/// cells); the arrays are copied and need not outlive the call. `solve_missing` as in
/// [`floe_pool_from_json`].
///
/// Ownership: `*out` is the caller's (`floe_pool_free`). Thread-safe.
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL array (or `out`), FLOE_STATUS_BAD_INPUT naming
/// the instance that breaks a rule, for `count` 0, or for a misaligned array or `out`,
/// FLOE_STATUS_BUFFER_SIZE for a `count` too large to be an array, FLOE_STATUS_TOO_LARGE when
/// the pool cannot be held.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_from_arrays(
    instances: *const floe_instance_view,
    count: usize,
    solve_missing: i32,
    out: *mut *mut floe_pool,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: the caller passes `count` views.
        let views = unsafe { slice(instances, count, "instances") }?;
        let mut made = floe_core::error::try_with_capacity(views.len(), || {
            format!("the records of {} instances", views.len())
        })?;
        for (i, v) in views.iter().enumerate() {
            let bad = |m: String| Error::bad_input(format!("instance {i}: {m}"));
            if v.width == 0 || v.height == 0 || v.width > 256 || v.height > 256 {
                return Err(bad(format!("a {}x{} grid: each side must be in 1..=256", v.width, v.height)));
            }
            let k = v.num_agents as usize;
            if k == 0 || k > MAX_AGENTS {
                return Err(bad(format!("{k} agents: 1..={MAX_AGENTS}")));
            }
            let cells = (v.width * v.height) as usize;
            // SAFETY: the view promises width·height bytes.
            let holes = unsafe { slice(v.holes, cells, "holes") }?;
            let mut grid = Grid::new(v.width, v.height);
            for (c, &h) in holes.iter().enumerate() {
                match h {
                    0 => {}
                    1 => grid.set_hole(c as u32, true),
                    x => return Err(bad(format!("cell {c} is {x}: 0 (frozen) or 1 (hole)"))),
                }
            }
            let starts = positions(v.starts, k, "starts")?;
            let goals = positions(v.goals, k, "goals")?;
            let agents = starts.into_iter().zip(goals).map(|(start, goal)| Agent { start, goal }).collect();
            made.push(Instance::new(grid, agents).map_err(|e| bad(e.to_string()))?);
        }
        let pool = floe_pool::make(made, solve_missing != 0)?;
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, pool, "out") }
    })
}

/// The number of instances. Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a
/// `pool` that is not a live pool, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_count(pool: *const floe_pool, out: *mut usize) -> floe_status {
    guard(|| {
        let p = handles::get(pool, "pool")?;
        // SAFETY: the caller passes a writable `size_t` or NULL (checked).
        unsafe { write_out(out, p.instances.len(), "out") }
    })
}

/// The agent slots per environment of engines on this pool, K: the largest agent count.
/// Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a
/// `pool` that is not a live pool, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_max_agents(pool: *const floe_pool, out: *mut usize) -> floe_status {
    guard(|| {
        let p = handles::get(pool, "pool")?;
        // SAFETY: a writable `size_t` or NULL (checked).
        unsafe { write_out(out, p.packed.max_agents(), "out") }
    })
}

/// The largest grid side in the pool, S (the global state is `B·3·S·S` bytes). Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a
/// `pool` that is not a live pool, FLOE_STATUS_BAD_INPUT for a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_max_side(pool: *const floe_pool, out: *mut u32) -> floe_status {
    guard(|| {
        let p = handles::get(pool, "pool")?;
        // SAFETY: a writable `uint32_t` or NULL (checked).
        unsafe { write_out(out, p.packed.max_side(), "out") }
    })
}

/// Instance `index`'s size, agents and optimum. Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT for an index out of range or a misaligned `out`,
/// FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a `pool`
/// that is not a live pool.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_instance_info(
    pool: *const floe_pool,
    index: usize,
    out: *mut floe_instance_info,
) -> floe_status {
    guard(|| {
        let p = handles::get(pool, "pool")?;
        p.instance(index)?;
        let (width, height, num_agents) = p.packed.dims(index);
        let info = floe_instance_info { width, height, num_agents, optimal_soc: p.packed.optimal_soc(index) };
        // SAFETY: a writable struct or NULL (checked).
        unsafe { write_out(out, info, "out") }
    })
}

/// Instance `index` as JSON (the format `floe_pool_from_json` reads, with its optimal plan when
/// it has one). `*out` is the caller's, freed with `floe_string_free`. Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT for an index out of range or a misaligned `out`,
/// FLOE_STATUS_NULL_POINTER for a NULL `pool` or `out`, FLOE_STATUS_WRONG_HANDLE for a `pool`
/// that is not a live pool.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_instance_json(
    pool: *const floe_pool,
    index: usize,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        let p = handles::get(pool, "pool")?;
        let json = p.instance(index)?.to_json();
        // SAFETY: a writable `char *` or NULL (checked).
        unsafe { write_string(out, &json, "out") }
    })
}

/// Frees a pool. NULL is accepted. Engines made from the pool keep their own reference and stay
/// usable. Must not race with other calls that pass the same handle.
///
/// Errors: FLOE_STATUS_WRONG_HANDLE for a pointer that is not a live pool (freed before, or of
/// another kind).
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_pool_free(pool: *mut floe_pool) -> floe_status {
    guard(|| handles::free(pool.cast_const(), "pool"))
}
