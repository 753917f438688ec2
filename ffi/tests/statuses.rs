//! Every function of floe.h on its error paths (NULL pointers, handles of another kind, freed and
//! foreign handles, short buffers, misaligned pointers, bad enums, bad JSON, bad UTF-8, indices
//! out of range, plugins that refuse), held to the header: each call must fail with the status
//! the case names, and the header's comment for that function must list that status after
//! "Errors:". The lists are read from `include/floe.h` itself and the codes from `floe_types.h`,
//! so a status the header does not document fails here, and so does a function of the header
//! that has no case.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::ptr;

use floe::*;
use floe_core::engine::{AgentRecord, BufferSizes, EnvRecord};
use floe_core::verify::VerifyOut;
use floe_plugin_api::design::{DesignLimits, DesignLimitsRecord};
use floe_plugin_api::{ReplayRecord, ReplayRequest, SlotStats, StepOutcome, VerdictRecord};

/// What the headers say: every `FLOE_STATUS_*` code, and per function of floe.h that returns a
/// `floe_status` the names its comment lists after "Errors:".
struct Header {
    codes: BTreeMap<String, floe_status>,
    listed: BTreeMap<String, BTreeSet<String>>,
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `FLOE_STATUS_*` names in the "Errors:" paragraph of a comment (up to its `# Safety`).
fn errors_paragraph(comment: &str) -> BTreeSet<String> {
    let Some(start) = comment.lines().position(|l| l.trim_start().starts_with("Errors")) else {
        return BTreeSet::new();
    };
    comment
        .lines()
        .skip(start)
        .take_while(|l| !l.trim_start().starts_with("# Safety"))
        .flat_map(|l| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|w| w.starts_with("FLOE_STATUS_"))
        .map(str::to_string)
        .collect()
}

fn header() -> Header {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let types = read(&dir.join("../plugins/api/include/floe_types.h"));
    let codes: BTreeMap<String, floe_status> = types
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == "#define").then_some(())?;
            let name = w.next()?;
            let value = w.next()?.parse().ok()?;
            name.starts_with("FLOE_STATUS_").then(|| (name.to_string(), value))
        })
        .collect();
    assert!(codes.len() >= 17 && codes["FLOE_STATUS_OK"] == 0, "floe_types.h: {codes:?}");
    let text = read(&dir.join("include/floe.h"));
    let mut listed = BTreeMap::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("/*") {
        let end = start + rest[start..].find("*/").expect("every comment is closed");
        let comment = &rest[start + 2..end];
        rest = &rest[end + 2..];
        let decl_end = rest.find(';').unwrap_or(rest.len()).min(rest.find("/*").unwrap_or(rest.len()));
        if let Some(sig) = rest[..decl_end].trim().strip_prefix("floe_status ") {
            let name = sig[..sig.find('(').expect("a function")].trim().to_string();
            let names = errors_paragraph(comment);
            for n in &names {
                assert!(
                    codes.contains_key(n),
                    "{name}'s comment names {n}, which floe_types.h does not define"
                );
            }
            listed.insert(name, names);
        }
    }
    assert!(listed.len() >= 30, "found only {} functions in floe.h", listed.len());
    Header { codes, listed }
}

/// One call on an error path: the function (as floe.h names it), the status it must return
/// (`FLOE_STATUS_` left out), what the case is, and the call.
struct Case {
    function: &'static str,
    expect: &'static str,
    what: &'static str,
    call: Box<dyn Fn() -> floe_status>,
}

fn last_error() -> String {
    // SAFETY: floe_last_error returns a NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned()
}

fn ok(status: floe_status, what: &str) {
    assert_eq!(status, 0, "{what}: {}", last_error());
}

/// A C string that lives as long as the test.
fn c(text: &str) -> *const c_char {
    CString::new(text).expect("no NUL").into_raw()
}

/// A string that is not UTF-8.
const BAD_UTF8: *const c_char = c"\xff\xfe".as_ptr();

/// Memory that lives as long as the test, for out-pointers and handles that are not handles.
fn scratch() -> *mut u64 {
    Box::leak(Box::new([0u64; 64])).as_mut_ptr()
}

/// A pointer one byte past an aligned one: misaligned for any `T` wider than a byte.
fn misaligned<T>() -> *mut T {
    (scratch() as usize + 1) as *mut T
}

fn leak<T: Clone>(v: Vec<T>) -> *mut T {
    v.leak().as_mut_ptr()
}

const INSTANCE: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [2, 2]}, {"start": [2, 0], "goal": [0, 2]}]}"#;

/// Buffers of the lengths `floe_engine_sizes` gives (leaked: they outlive the cases).
fn buffers(engine: *mut floe_engine) -> floe_step_buffers {
    let mut s = BufferSizes::default();
    // SAFETY: a live engine and a writable struct.
    ok(unsafe { floe_engine_sizes(engine, &mut s) }, "sizes");
    floe_step_buffers {
        obs: leak(vec![0u8; s.obs]),
        obs_len: s.obs,
        final_obs: leak(vec![0u8; s.obs]),
        final_obs_len: s.obs,
        rewards: leak(vec![0f32; s.agents]),
        rewards_len: s.agents,
        events: leak(vec![0u32; s.agents]),
        events_len: s.agents,
        terminated: leak(vec![0u8; s.envs]),
        terminated_len: s.envs,
        truncated: leak(vec![0u8; s.envs]),
        truncated_len: s.envs,
        info: leak(vec![floe_core::engine::EnvInfo::default(); s.envs]),
        info_len: s.envs,
    }
}

fn boxed<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Every case. `train` and `gpu` say which features this library was built with, for the calls
/// whose answer depends on them.
#[allow(clippy::too_many_lines)]
fn cases() -> Vec<Case> {
    let train = cfg!(feature = "train");
    let gpu = cfg!(feature = "gpu");
    let mut cases = Vec::new();
    macro_rules! case {
        ($function:ident, $expect:expr, $what:expr, $call:expr) => {{
            // Name the function, so that a case for a function that no longer exists does not
            // compile.
            let _ = $function;
            cases.push(Case {
                function: stringify!($function),
                expect: $expect,
                what: $what,
                call: Box::new(move || {
                    // SAFETY: every pointer is NULL, valid for what the call reads and writes,
                    // or deliberately wrong in a way the library checks before it reads
                    // (handles are looked up in its registry, alignment and lengths checked
                    // first, strings only read up to their NUL).
                    unsafe { $call }
                }),
            });
        }};
    }

    // Fixtures.
    let pool: *mut floe_pool = {
        let mut p = ptr::null_mut();
        // SAFETY: a valid string and out-pointer.
        ok(unsafe { floe_pool_from_json(c(INSTANCE), 1, &mut p) }, "pool");
        p
    };
    // 255 agents per environment: an engine of every environment the range allows needs terabytes.
    let crowded: *mut floe_pool = {
        let mut p = ptr::null_mut();
        let setting = c(r#"{"size": 32, "agents": 255, "solve": false}"#);
        // SAFETY: a valid string and out-pointer.
        ok(unsafe { floe_pool_generate(setting, 1, 1, &mut p) }, "crowded pool");
        p
    };
    let freed_pool: *mut floe_pool = {
        let mut p = ptr::null_mut();
        // SAFETY: as above; the pool is freed once.
        ok(unsafe { floe_pool_from_json(c(INSTANCE), 0, &mut p) }, "pool");
        // SAFETY: a live pool, freed once.
        ok(unsafe { floe_pool_free(p) }, "free");
        p
    };
    let new_engine = |json: &str| {
        let mut e = ptr::null_mut();
        // SAFETY: a live pool, a valid string and out-pointer.
        ok(unsafe { floe_engine_new(pool, c(json), &mut e) }, "engine");
        e
    };
    let fresh = new_engine(r#"{"num_envs": 3}"#);
    let engine = new_engine(r#"{"num_envs": 3}"#);
    let b = buffers(engine);
    // SAFETY: a live engine and buffers of its sizes.
    ok(unsafe { floe_engine_reset(engine, 1, &b) }, "reset");
    let fresh_b = buffers(fresh);
    let freed_engine = new_engine("{}");
    // SAFETY: a live engine, freed once.
    ok(unsafe { floe_engine_free(freed_engine) }, "free");
    let plugin = |kind: u32, name: &str| {
        let mut p = ptr::null_mut();
        // SAFETY: valid strings and out-pointer.
        ok(unsafe { floe_plugin_new(ptr::null(), kind, c(name), ptr::null(), &mut p) }, name);
        p
    };
    let (reward, shaped) = (plugin(1, "tiered"), plugin(1, "shaped"));
    let curriculum = plugin(2, "plr");
    let engineer = plugin(3, "rules");
    let freed_plugin = plugin(1, "tiered");
    // SAFETY: a live plugin, freed once.
    ok(unsafe { floe_plugin_free(freed_plugin) }, "free");
    let foreign = scratch();
    let (as_engine, as_pool, as_plugin) =
        (pool.cast::<floe_engine>(), engine.cast::<floe_pool>(), pool.cast::<floe_plugin>());
    let dir = std::env::temp_dir().join(format!("floe-statuses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let bad_file = dir.join("bad.jsonl");
    std::fs::write(&bad_file, "{\"grid\": [\"FQ\"]}\n").expect("writes");
    let bad_file = c(bad_file.to_str().expect("UTF-8"));
    let missing = c(dir.join("missing.jsonl").to_str().expect("UTF-8"));
    let out_pool = boxed(ptr::null_mut::<floe_pool>());
    let out_engine = boxed(ptr::null_mut::<floe_engine>());
    let out_plugin = boxed(ptr::null_mut::<floe_plugin>());
    let out_str = boxed(ptr::null_mut::<c_char>());
    let out_usize = boxed(0usize);
    let out_u32 = boxed(0u32);
    let out_sizes = boxed(BufferSizes::default());
    let out_info = boxed(floe_instance_info { width: 0, height: 0, num_agents: 0, optimal_soc: 0 });
    let out_verdict = boxed(VerifyOut::default());
    let record = VerdictRecord {
        failure: 0,
        optimal: 1,
        reserved: [0; 2],
        num_agents: 2,
        agents_on_goal: 2,
        legal_steps: 4,
        horizon: 4,
        soc: 8,
        optimal_soc: 8,
    };
    let records = leak(vec![record; 2]);
    let bad_record = leak(vec![VerdictRecord { failure: 42, ..record }]);
    let steps = leak(vec![StepOutcome { prev_distance: 3, new_distance: 2, flags: 0 }; 2]);
    let bad_step = leak(vec![StepOutcome { prev_distance: 3, new_distance: 2, flags: 1 << 20 }]);
    let rewards = leak(vec![0f32; 4]);
    let replay = ReplayRecord {
        id: 1,
        size: 3,
        agents: 2,
        last_round: 0,
        samples: 4,
        mean_reward: 0.5,
        reward_std: 0.1,
        success_rate: 0.5,
        reserved: 0,
    };
    let replays = leak(vec![replay, ReplayRecord { id: 2, ..replay }, ReplayRecord { id: 3, ..replay }]);
    let bad_replays = leak(vec![ReplayRecord { success_rate: 2.0, ..replay }; 3]);
    let request = boxed(ReplayRequest { round: 1, count: 2, seed: 9 });
    let picked = leak(vec![0u32; 4]);
    let envs = leak(vec![EnvRecord::default(); 3]);
    let agents = leak(vec![AgentRecord::default(); 6]);
    let global = leak(vec![0u8; 4096]);
    let actions = leak(vec![0u8; 6]);
    let bad_actions = leak(vec![5u8; 6]);
    let bits = leak(vec![0u8; 64]);
    let bytes = leak(vec![0u8; 4096]);
    let instances = leak(vec![0u32; 2]);
    let far = leak(vec![9u32; 2]);
    let two = leak(vec![2u32; 2]);
    let three = leak(vec![3u32; 2]);
    let moves = leak(vec![255u8; 2 * 2 * 4]);
    let answers = leak(vec![c("Agent 0: RIGHT\nAgent 1: UP"); 2]);
    let null_answers = leak(vec![ptr::null::<c_char>(); 1]);
    let bad_answers = leak(vec![BAD_UTF8; 1]);
    let holes = leak(vec![0u8; 9]);
    let starts = leak(vec![0u32, 0, 2, 0]);
    let goals = leak(vec![2u32, 2, 0, 2]);
    let view = floe_instance_view { width: 3, height: 3, num_agents: 2, holes, starts, goals };
    let views = leak(vec![view]);
    let no_holes = leak(vec![floe_instance_view { holes: ptr::null(), ..view }]);
    let flat = leak(vec![floe_instance_view { width: 0, ..view }]);
    let short = |mut b: floe_step_buffers| {
        b.rewards_len -= 1;
        boxed(b)
    };
    let (b, fresh_b) = (boxed(b), boxed(fresh_b));
    // SAFETY: `b` was made just above and is never freed.
    let (short_b, overlap_b, null_b) = unsafe {
        let mut overlap = *b;
        overlap.truncated = overlap.terminated;
        let mut null = *b;
        null.events = ptr::null_mut();
        (short(*b), boxed(overlap), boxed(null))
    };
    let gen = r#"{"size": 4, "agents": 2}"#;
    let six = r#"{"grid": ["FFFFFF"], "agents": [{"start": [0, 0], "goal": [0, 0]}, {"start": [0, 1], "goal": [0, 1]}, {"start": [0, 2], "goal": [0, 2]}, {"start": [0, 3], "goal": [0, 3]}, {"start": [0, 4], "goal": [0, 4]}, {"start": [0, 5], "goal": [0, 5]}]}"#;
    let unsolvable = r#"{"grid": ["FH", "HF"], "agents": [{"start": [0, 0], "goal": [1, 1]}]}"#;

    // Pools.
    case!(floe_pool_generate, "NULL_POINTER", "NULL config", floe_pool_generate(ptr::null(), 3, 1, out_pool));
    case!(floe_pool_generate, "NULL_POINTER", "NULL out", floe_pool_generate(c(gen), 3, 1, ptr::null_mut()));
    case!(floe_pool_generate, "BAD_INPUT", "misaligned out", floe_pool_generate(c(gen), 3, 1, misaligned()));
    case!(floe_pool_generate, "BAD_UTF8", "config not UTF-8", floe_pool_generate(BAD_UTF8, 3, 1, out_pool));
    case!(floe_pool_generate, "CONFIG", "config not JSON", floe_pool_generate(c("{"), 3, 1, out_pool));
    case!(floe_pool_generate, "CONFIG", "no agents", floe_pool_generate(c(r#"{"size": 4}"#), 3, 1, out_pool));
    case!(floe_pool_generate, "BAD_INPUT", "0 samples", floe_pool_generate(c(gen), 0, 1, out_pool));
    case!(floe_pool_generate, "TOO_LARGE", "2^40 samples", floe_pool_generate(c(gen), 1 << 40, 1, out_pool));
    case!(
        floe_pool_generate,
        "TOO_LARGE",
        "SIZE_MAX samples",
        floe_pool_generate(c(gen), usize::MAX, 1, out_pool)
    );
    case!(
        floe_pool_generate,
        "CONFIG",
        "a key twice",
        floe_pool_generate(c(r#"{"size": 4, "agents": 2, "agents": 3}"#), 3, 1, out_pool)
    );
    case!(
        floe_pool_from_json,
        "BAD_INPUT",
        "a key twice",
        floe_pool_from_json(c(r#"{"grid": ["FF"], "grid": ["F"], "agents": []}"#), 0, out_pool)
    );
    case!(floe_pool_from_json, "NULL_POINTER", "NULL text", floe_pool_from_json(ptr::null(), 0, out_pool));
    case!(
        floe_pool_from_json,
        "NULL_POINTER",
        "NULL out",
        floe_pool_from_json(c(INSTANCE), 0, ptr::null_mut())
    );
    case!(
        floe_pool_from_json,
        "BAD_INPUT",
        "misaligned out",
        floe_pool_from_json(c(INSTANCE), 0, misaligned())
    );
    case!(floe_pool_from_json, "BAD_UTF8", "text not UTF-8", floe_pool_from_json(BAD_UTF8, 0, out_pool));
    case!(floe_pool_from_json, "BAD_INPUT", "empty text", floe_pool_from_json(c(""), 0, out_pool));
    case!(floe_pool_from_json, "BAD_INPUT", "not JSON", floe_pool_from_json(c("{"), 0, out_pool));
    case!(floe_pool_from_file, "NULL_POINTER", "NULL path", floe_pool_from_file(ptr::null(), 0, out_pool));
    case!(floe_pool_from_file, "NULL_POINTER", "NULL out", floe_pool_from_file(bad_file, 0, ptr::null_mut()));
    case!(floe_pool_from_file, "BAD_UTF8", "path not UTF-8", floe_pool_from_file(BAD_UTF8, 0, out_pool));
    case!(floe_pool_from_file, "IO", "missing file", floe_pool_from_file(missing, 0, out_pool));
    case!(floe_pool_from_file, "BAD_INPUT", "bad instance", floe_pool_from_file(bad_file, 0, out_pool));
    case!(
        floe_pool_from_arrays,
        "NULL_POINTER",
        "NULL views",
        floe_pool_from_arrays(ptr::null(), 1, 0, out_pool)
    );
    case!(
        floe_pool_from_arrays,
        "NULL_POINTER",
        "NULL out",
        floe_pool_from_arrays(views, 1, 0, ptr::null_mut())
    );
    case!(
        floe_pool_from_arrays,
        "NULL_POINTER",
        "NULL holes",
        floe_pool_from_arrays(no_holes, 1, 0, out_pool)
    );
    case!(floe_pool_from_arrays, "BAD_INPUT", "0 views", floe_pool_from_arrays(views, 0, 0, out_pool));
    case!(floe_pool_from_arrays, "BAD_INPUT", "0 wide", floe_pool_from_arrays(flat, 1, 0, out_pool));
    case!(
        floe_pool_from_arrays,
        "BAD_INPUT",
        "misaligned views",
        floe_pool_from_arrays(misaligned(), 1, 0, out_pool)
    );
    case!(
        floe_pool_from_arrays,
        "BUFFER_SIZE",
        "count too large",
        floe_pool_from_arrays(views, usize::MAX, 0, out_pool)
    );
    case!(floe_pool_count, "NULL_POINTER", "NULL pool", floe_pool_count(ptr::null(), out_usize));
    case!(floe_pool_count, "NULL_POINTER", "NULL out", floe_pool_count(pool, ptr::null_mut()));
    case!(floe_pool_count, "BAD_INPUT", "misaligned out", floe_pool_count(pool, misaligned()));
    case!(floe_pool_count, "WRONG_HANDLE", "an engine", floe_pool_count(as_pool, out_usize));
    case!(floe_pool_count, "WRONG_HANDLE", "freed", floe_pool_count(freed_pool, out_usize));
    case!(floe_pool_count, "WRONG_HANDLE", "not a handle", floe_pool_count(foreign.cast(), out_usize));
    case!(floe_pool_max_agents, "NULL_POINTER", "NULL pool", floe_pool_max_agents(ptr::null(), out_usize));
    case!(floe_pool_max_agents, "NULL_POINTER", "NULL out", floe_pool_max_agents(pool, ptr::null_mut()));
    case!(floe_pool_max_agents, "BAD_INPUT", "misaligned out", floe_pool_max_agents(pool, misaligned()));
    case!(floe_pool_max_agents, "WRONG_HANDLE", "freed", floe_pool_max_agents(freed_pool, out_usize));
    case!(floe_pool_max_side, "NULL_POINTER", "NULL pool", floe_pool_max_side(ptr::null(), out_u32));
    case!(floe_pool_max_side, "NULL_POINTER", "NULL out", floe_pool_max_side(pool, ptr::null_mut()));
    case!(floe_pool_max_side, "BAD_INPUT", "misaligned out", floe_pool_max_side(pool, misaligned()));
    case!(floe_pool_max_side, "WRONG_HANDLE", "an engine", floe_pool_max_side(as_pool, out_u32));
    case!(floe_pool_instance_info, "BAD_INPUT", "index", floe_pool_instance_info(pool, 1, out_info));
    case!(
        floe_pool_instance_info,
        "BAD_INPUT",
        "misaligned out",
        floe_pool_instance_info(pool, 0, misaligned())
    );
    case!(
        floe_pool_instance_info,
        "NULL_POINTER",
        "NULL out",
        floe_pool_instance_info(pool, 0, ptr::null_mut())
    );
    case!(
        floe_pool_instance_info,
        "NULL_POINTER",
        "NULL pool",
        floe_pool_instance_info(ptr::null(), 0, out_info)
    );
    case!(floe_pool_instance_info, "WRONG_HANDLE", "freed", floe_pool_instance_info(freed_pool, 0, out_info));
    case!(floe_pool_instance_json, "BAD_INPUT", "index", floe_pool_instance_json(pool, 1, out_str));
    case!(
        floe_pool_instance_json,
        "BAD_INPUT",
        "misaligned out",
        floe_pool_instance_json(pool, 0, misaligned())
    );
    case!(
        floe_pool_instance_json,
        "NULL_POINTER",
        "NULL out",
        floe_pool_instance_json(pool, 0, ptr::null_mut())
    );
    case!(floe_pool_instance_json, "WRONG_HANDLE", "an engine", floe_pool_instance_json(as_pool, 0, out_str));
    case!(floe_pool_free, "WRONG_HANDLE", "an engine", floe_pool_free(as_pool));
    case!(floe_pool_free, "WRONG_HANDLE", "freed", floe_pool_free(freed_pool));
    case!(floe_pool_free, "WRONG_HANDLE", "not a handle", floe_pool_free(foreign.cast()));

    // Engines.
    let new = |json: &'static str| c(json);
    case!(
        floe_engine_new,
        "NULL_POINTER",
        "NULL pool",
        floe_engine_new(ptr::null(), ptr::null(), out_engine)
    );
    case!(floe_engine_new, "NULL_POINTER", "NULL out", floe_engine_new(pool, ptr::null(), ptr::null_mut()));
    case!(floe_engine_new, "BAD_INPUT", "misaligned out", floe_engine_new(pool, ptr::null(), misaligned()));
    case!(floe_engine_new, "WRONG_HANDLE", "an engine", floe_engine_new(as_pool, ptr::null(), out_engine));
    case!(floe_engine_new, "WRONG_HANDLE", "freed", floe_engine_new(freed_pool, ptr::null(), out_engine));
    case!(floe_engine_new, "BAD_UTF8", "config not UTF-8", floe_engine_new(pool, BAD_UTF8, out_engine));
    case!(floe_engine_new, "CONFIG", "config not JSON", floe_engine_new(pool, new("{"), out_engine));
    case!(floe_engine_new, "CONFIG", "not an object", floe_engine_new(pool, new("[1]"), out_engine));
    case!(
        floe_engine_new,
        "CONFIG",
        "radius",
        floe_engine_new(pool, new(r#"{"obs_radius": 500}"#), out_engine)
    );
    case!(
        floe_engine_new,
        "CONFIG",
        "backend",
        floe_engine_new(pool, new(r#"{"backend": "tpu"}"#), out_engine)
    );
    case!(floe_engine_new, "CONFIG", "0 envs", floe_engine_new(pool, new(r#"{"num_envs": 0}"#), out_engine));
    case!(
        floe_engine_new,
        "CONFIG",
        "a key twice",
        floe_engine_new(pool, new(r#"{"num_envs": 2, "num_envs": 3}"#), out_engine)
    );
    case!(
        floe_engine_new,
        "TOO_LARGE",
        "2^32-1 envs of 255 agents",
        floe_engine_new(crowded, new(r#"{"num_envs": 4294967295}"#), out_engine)
    );
    case!(
        floe_engine_new,
        "UNKNOWN_PLUGIN",
        "step reward golden",
        floe_engine_new(pool, new(r#"{"step_reward": {"name": "golden"}}"#), out_engine)
    );
    case!(
        floe_engine_new,
        "CONFIG",
        "plan-only step reward",
        floe_engine_new(pool, new(r#"{"step_reward": {"name": "tiered"}}"#), out_engine)
    );
    case!(
        floe_engine_new,
        "FAILED",
        "step reward library",
        floe_engine_new(
            pool,
            new(r#"{"step_reward": {"name": "x", "library": "/nonexistent/libx.so"}}"#),
            out_engine
        )
    );
    case!(
        floe_engine_new,
        if gpu { "CONFIG" } else { "NOT_BUILT" },
        "GPU radius 8",
        floe_engine_new(pool, new(r#"{"backend": "gpu", "obs_radius": 8}"#), out_engine)
    );
    case!(floe_engine_sizes, "NULL_POINTER", "NULL engine", floe_engine_sizes(ptr::null(), out_sizes));
    case!(floe_engine_sizes, "NULL_POINTER", "NULL out", floe_engine_sizes(engine, ptr::null_mut()));
    case!(floe_engine_sizes, "BAD_INPUT", "misaligned out", floe_engine_sizes(engine, misaligned()));
    case!(floe_engine_sizes, "WRONG_HANDLE", "a pool", floe_engine_sizes(as_engine, out_sizes));
    case!(floe_engine_sizes, "WRONG_HANDLE", "freed", floe_engine_sizes(freed_engine, out_sizes));
    case!(floe_engine_backend, "NULL_POINTER", "NULL engine", floe_engine_backend(ptr::null(), out_str));
    case!(floe_engine_backend, "NULL_POINTER", "NULL out", floe_engine_backend(engine, ptr::null_mut()));
    case!(floe_engine_backend, "BAD_INPUT", "misaligned out", floe_engine_backend(engine, misaligned()));
    case!(floe_engine_backend, "WRONG_HANDLE", "a pool", floe_engine_backend(as_engine, out_str));
    case!(floe_engine_reset, "NULL_POINTER", "NULL engine", floe_engine_reset(ptr::null_mut(), 1, b));
    case!(floe_engine_reset, "NULL_POINTER", "NULL buffers", floe_engine_reset(engine, 1, ptr::null()));
    case!(floe_engine_reset, "NULL_POINTER", "a NULL buffer", floe_engine_reset(engine, 1, null_b));
    case!(floe_engine_reset, "BUFFER_SIZE", "short buffers", floe_engine_reset(engine, 1, short_b));
    case!(floe_engine_reset, "BAD_INPUT", "overlapping buffers", floe_engine_reset(engine, 1, overlap_b));
    case!(floe_engine_reset, "WRONG_HANDLE", "a pool", floe_engine_reset(as_engine, 1, b));
    case!(floe_engine_reset, "WRONG_HANDLE", "freed", floe_engine_reset(freed_engine, 1, b));
    case!(floe_engine_reset_to, "NOT_RESET", "not reset", floe_engine_reset_to(fresh, 0, 0, fresh_b));
    case!(floe_engine_reset_to, "BAD_INPUT", "env", floe_engine_reset_to(engine, 3, 0, b));
    case!(floe_engine_reset_to, "BAD_INPUT", "instance", floe_engine_reset_to(engine, 0, 1, b));
    case!(floe_engine_reset_to, "BUFFER_SIZE", "short buffers", floe_engine_reset_to(engine, 0, 0, short_b));
    case!(
        floe_engine_reset_to,
        "NULL_POINTER",
        "NULL buffers",
        floe_engine_reset_to(engine, 0, 0, ptr::null())
    );
    case!(floe_engine_reset_to, "WRONG_HANDLE", "a pool", floe_engine_reset_to(as_engine, 0, 0, b));
    case!(floe_engine_step, "NOT_RESET", "not reset", floe_engine_step(fresh, actions, 6, fresh_b));
    case!(floe_engine_step, "BAD_INPUT", "action 5", floe_engine_step(engine, bad_actions, 6, b));
    case!(floe_engine_step, "BUFFER_SIZE", "short actions", floe_engine_step(engine, actions, 5, b));
    case!(floe_engine_step, "BUFFER_SIZE", "short buffers", floe_engine_step(engine, actions, 6, short_b));
    case!(
        floe_engine_step,
        "BAD_INPUT",
        "overlapping buffers",
        floe_engine_step(engine, actions, 6, overlap_b)
    );
    case!(floe_engine_step, "NULL_POINTER", "NULL actions", floe_engine_step(engine, ptr::null(), 6, b));
    case!(
        floe_engine_step,
        "NULL_POINTER",
        "NULL buffers",
        floe_engine_step(engine, actions, 6, ptr::null())
    );
    case!(floe_engine_step, "WRONG_HANDLE", "freed", floe_engine_step(freed_engine, actions, 6, b));
    case!(floe_engine_state, "BUFFER_SIZE", "short envs", floe_engine_state(engine, envs, 2, agents, 6));
    case!(floe_engine_state, "BUFFER_SIZE", "short agents", floe_engine_state(engine, envs, 3, agents, 5));
    case!(
        floe_engine_state,
        "NULL_POINTER",
        "NULL envs",
        floe_engine_state(engine, ptr::null_mut(), 3, agents, 6)
    );
    case!(
        floe_engine_state,
        "BAD_INPUT",
        "misaligned envs",
        floe_engine_state(engine, misaligned(), 3, agents, 6)
    );
    case!(floe_engine_state, "WRONG_HANDLE", "a pool", floe_engine_state(as_engine, envs, 3, agents, 6));
    case!(floe_engine_global_state, "BUFFER_SIZE", "short", floe_engine_global_state(engine, global, 7));
    case!(
        floe_engine_global_state,
        "NULL_POINTER",
        "NULL out",
        floe_engine_global_state(engine, ptr::null_mut(), 9)
    );
    case!(
        floe_engine_global_state,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_global_state(ptr::null(), global, 9)
    );
    case!(
        floe_engine_global_state,
        "WRONG_HANDLE",
        "freed",
        floe_engine_global_state(freed_engine, global, 9)
    );
    case!(floe_engine_free, "WRONG_HANDLE", "a pool", floe_engine_free(as_engine));
    case!(floe_engine_free, "WRONG_HANDLE", "freed", floe_engine_free(freed_engine));
    case!(floe_engine_free, "WRONG_HANDLE", "not a handle", floe_engine_free(foreign.cast()));
    // Radius 1: 3 planes of 9 cells, 4 bytes a plane packed, 28 bytes unpacked.
    case!(floe_obs_unpack_bits, "BAD_INPUT", "radius 128", floe_obs_unpack_bits(128, bits, 12, bytes, 28));
    case!(
        floe_obs_unpack_bits,
        "BUFFER_SIZE",
        "part of an observation",
        floe_obs_unpack_bits(1, bits, 11, bytes, 28)
    );
    case!(
        floe_obs_unpack_bits,
        "BUFFER_SIZE",
        "out for another count",
        floe_obs_unpack_bits(1, bits, 12, bytes, 56)
    );
    case!(
        floe_obs_unpack_bits,
        "NULL_POINTER",
        "NULL bits",
        floe_obs_unpack_bits(1, ptr::null(), 12, bytes, 28)
    );
    case!(
        floe_obs_unpack_bits,
        "NULL_POINTER",
        "NULL out",
        floe_obs_unpack_bits(1, bits, 12, ptr::null_mut(), 28)
    );
    case!(
        floe_obs_unpack_bits,
        "BAD_INPUT",
        "overlap",
        floe_obs_unpack_bits(1, bytes, 12, bytes.wrapping_add(4), 28)
    );

    // Plugins.
    let name = |n: &'static str| c(n);
    case!(
        floe_plugin_new,
        "UNKNOWN_PLUGIN",
        "unknown",
        floe_plugin_new(ptr::null(), 1, name("golden"), ptr::null(), out_plugin)
    );
    case!(
        floe_plugin_new,
        "CONFIG",
        "bad params",
        floe_plugin_new(ptr::null(), 1, name("tiered"), c(r#"{"valid": "yes"}"#), out_plugin)
    );
    case!(
        floe_plugin_new,
        "CONFIG",
        "params not JSON",
        floe_plugin_new(ptr::null(), 1, name("tiered"), c("{"), out_plugin)
    );
    case!(
        floe_plugin_new,
        "CONFIG",
        "params with a key twice",
        floe_plugin_new(ptr::null(), 2, name("plr"), c(r#"{"seed": 1, "seed": 2}"#), out_plugin)
    );
    case!(
        floe_plugin_new,
        "BAD_INPUT",
        "kind 9",
        floe_plugin_new(ptr::null(), 9, name("tiered"), ptr::null(), out_plugin)
    );
    case!(
        floe_plugin_new,
        "FAILED",
        "no library",
        floe_plugin_new(c("/nonexistent/libx.so"), 1, name("x"), ptr::null(), out_plugin)
    );
    case!(
        floe_plugin_new,
        "NULL_POINTER",
        "NULL name",
        floe_plugin_new(ptr::null(), 1, ptr::null(), ptr::null(), out_plugin)
    );
    case!(
        floe_plugin_new,
        "NULL_POINTER",
        "NULL out",
        floe_plugin_new(ptr::null(), 1, name("tiered"), ptr::null(), ptr::null_mut())
    );
    case!(
        floe_plugin_new,
        "BAD_INPUT",
        "misaligned out",
        floe_plugin_new(ptr::null(), 1, name("tiered"), ptr::null(), misaligned())
    );
    case!(
        floe_plugin_new,
        "BAD_UTF8",
        "name not UTF-8",
        floe_plugin_new(ptr::null(), 1, BAD_UTF8, ptr::null(), out_plugin)
    );
    case!(floe_plugin_kind, "NULL_POINTER", "NULL plugin", floe_plugin_kind(ptr::null(), out_u32));
    case!(floe_plugin_kind, "NULL_POINTER", "NULL out", floe_plugin_kind(reward, ptr::null_mut()));
    case!(floe_plugin_kind, "BAD_INPUT", "misaligned out", floe_plugin_kind(reward, misaligned()));
    case!(floe_plugin_kind, "WRONG_HANDLE", "a pool", floe_plugin_kind(as_plugin, out_u32));
    case!(floe_plugin_kind, "WRONG_HANDLE", "freed", floe_plugin_kind(freed_plugin, out_u32));
    case!(
        floe_plugin_rewards,
        "BUFFER_SIZE",
        "room for 2, 1 record",
        floe_plugin_rewards(reward, records, 1, rewards, 2)
    );
    case!(
        floe_plugin_rewards,
        "BUFFER_SIZE",
        "room for 1, 2 records",
        floe_plugin_rewards(reward, records, 2, rewards, 1)
    );
    case!(
        floe_plugin_rewards,
        "BAD_INPUT",
        "failure code 42",
        floe_plugin_rewards(reward, bad_record, 1, rewards, 1)
    );
    case!(
        floe_plugin_rewards,
        "BAD_INPUT",
        "misaligned records",
        floe_plugin_rewards(reward, misaligned(), 1, rewards, 1)
    );
    case!(
        floe_plugin_rewards,
        "UNSUPPORTED",
        "a curriculum",
        floe_plugin_rewards(curriculum, records, 2, rewards, 2)
    );
    case!(
        floe_plugin_rewards,
        "NULL_POINTER",
        "NULL records",
        floe_plugin_rewards(reward, ptr::null(), 2, rewards, 2)
    );
    case!(
        floe_plugin_rewards,
        "NULL_POINTER",
        "NULL plugin",
        floe_plugin_rewards(ptr::null_mut(), records, 2, rewards, 2)
    );
    case!(
        floe_plugin_rewards,
        "WRONG_HANDLE",
        "a pool",
        floe_plugin_rewards(as_plugin, records, 2, rewards, 2)
    );
    case!(
        floe_plugin_step_rewards,
        "BUFFER_SIZE",
        "room for 2, 1 step",
        floe_plugin_step_rewards(shaped, steps, 1, rewards, 2)
    );
    case!(
        floe_plugin_step_rewards,
        "BAD_INPUT",
        "undefined flags",
        floe_plugin_step_rewards(shaped, bad_step, 1, rewards, 1)
    );
    case!(
        floe_plugin_step_rewards,
        "UNSUPPORTED",
        "verdicts only",
        floe_plugin_step_rewards(reward, steps, 2, rewards, 2)
    );
    case!(
        floe_plugin_step_rewards,
        "NULL_POINTER",
        "NULL out",
        floe_plugin_step_rewards(shaped, steps, 2, ptr::null_mut(), 2)
    );
    case!(
        floe_plugin_step_rewards,
        "WRONG_HANDLE",
        "freed",
        floe_plugin_step_rewards(freed_plugin, steps, 2, rewards, 2)
    );
    case!(
        floe_plugin_next_config,
        "CONFIG",
        "bad history",
        floe_plugin_next_config(curriculum, c(r#"{"rounds": 3}"#), out_str)
    );
    case!(
        floe_plugin_next_config,
        "CONFIG",
        "history with a key twice",
        floe_plugin_next_config(curriculum, c(r#"{"rounds": [], "rounds": []}"#), out_str)
    );
    case!(
        floe_plugin_next_config,
        "BAD_UTF8",
        "history not UTF-8",
        floe_plugin_next_config(curriculum, BAD_UTF8, out_str)
    );
    case!(
        floe_plugin_next_config,
        "UNSUPPORTED",
        "a reward",
        floe_plugin_next_config(reward, c(r#"{"rounds": []}"#), out_str)
    );
    case!(
        floe_plugin_next_config,
        "NULL_POINTER",
        "NULL history",
        floe_plugin_next_config(curriculum, ptr::null(), out_str)
    );
    case!(
        floe_plugin_next_config,
        "NULL_POINTER",
        "NULL out",
        floe_plugin_next_config(curriculum, c(r#"{"rounds": []}"#), ptr::null_mut())
    );
    case!(
        floe_plugin_next_config,
        "BAD_INPUT",
        "misaligned out",
        floe_plugin_next_config(curriculum, c(r#"{"rounds": []}"#), misaligned())
    );
    case!(
        floe_plugin_next_config,
        "WRONG_HANDLE",
        "an engine",
        floe_plugin_next_config(engine.cast(), c(r#"{"rounds": []}"#), out_str)
    );
    case!(
        floe_plugin_sample_replay,
        "BUFFER_SIZE",
        "room for 1 of 2",
        floe_plugin_sample_replay(curriculum, replays, 3, request, picked, 1, out_usize)
    );
    case!(
        floe_plugin_sample_replay,
        "BAD_INPUT",
        "success rate 2",
        floe_plugin_sample_replay(curriculum, bad_replays, 3, request, picked, 4, out_usize)
    );
    case!(
        floe_plugin_sample_replay,
        "UNSUPPORTED",
        "a reward",
        floe_plugin_sample_replay(reward, replays, 3, request, picked, 4, out_usize)
    );
    case!(
        floe_plugin_sample_replay,
        "NULL_POINTER",
        "NULL request",
        floe_plugin_sample_replay(curriculum, replays, 3, ptr::null(), picked, 4, out_usize)
    );
    case!(
        floe_plugin_sample_replay,
        "NULL_POINTER",
        "NULL out_len",
        floe_plugin_sample_replay(curriculum, replays, 3, request, picked, 4, ptr::null_mut())
    );
    case!(
        floe_plugin_sample_replay,
        "BAD_INPUT",
        "misaligned request",
        floe_plugin_sample_replay(curriculum, replays, 3, misaligned(), picked, 4, out_usize)
    );
    case!(
        floe_plugin_sample_replay,
        "WRONG_HANDLE",
        "freed",
        floe_plugin_sample_replay(freed_plugin, replays, 3, request, picked, 4, out_usize)
    );
    let none = ptr::null();
    case!(
        floe_plugin_design,
        "BAD_INPUT",
        "no history",
        floe_plugin_design(engineer, c("no history here"), none, out_str)
    );
    case!(
        floe_plugin_design,
        "UNSUPPORTED",
        "a curriculum",
        floe_plugin_design(curriculum, c("x"), none, out_str)
    );
    case!(
        floe_plugin_design,
        "BAD_UTF8",
        "context not UTF-8",
        floe_plugin_design(engineer, BAD_UTF8, none, out_str)
    );
    case!(
        floe_plugin_design,
        "NULL_POINTER",
        "NULL context",
        floe_plugin_design(engineer, ptr::null(), none, out_str)
    );
    case!(
        floe_plugin_design,
        "NULL_POINTER",
        "NULL out",
        floe_plugin_design(engineer, c("x"), none, ptr::null_mut())
    );
    case!(floe_plugin_design, "WRONG_HANDLE", "a pool", floe_plugin_design(as_plugin, c("x"), none, out_str));
    // Design limits: no agent counts, agent counts at NULL, a misaligned record.
    let default_limits = Box::leak(Box::new(DesignLimits::default()));
    let no_agents = leak(vec![default_limits.record().with_agents(&[])]);
    case!(
        floe_plugin_design,
        "CONFIG",
        "limits without agent counts",
        floe_plugin_design(engineer, c("x"), no_agents, out_str)
    );
    let mut agents_at_null = default_limits.record();
    // SAFETY: a raw slice of NULL and 2 is never read as a slice here; it is the C caller's
    // `agents = NULL, agents_len = 2`, which the library refuses before reading.
    agents_at_null.agents = unsafe { abi_stable::std_types::RSlice::from_raw_parts(ptr::null(), 2) };
    let agents_at_null = leak(vec![agents_at_null]);
    case!(
        floe_plugin_design,
        "NULL_POINTER",
        "limits->agents NULL",
        floe_plugin_design(engineer, c("x"), agents_at_null, out_str)
    );
    let misaligned_limits = no_agents.cast::<u8>().wrapping_add(1).cast::<DesignLimitsRecord<'_>>();
    case!(
        floe_plugin_design,
        "BAD_INPUT",
        "misaligned limits",
        floe_plugin_design(engineer, c("x"), misaligned_limits, out_str)
    );
    case!(floe_plugin_free, "WRONG_HANDLE", "a pool", floe_plugin_free(as_plugin));
    case!(floe_plugin_free, "WRONG_HANDLE", "freed", floe_plugin_free(freed_plugin));
    case!(floe_plugin_free, "WRONG_HANDLE", "not a handle", floe_plugin_free(foreign.cast()));

    // Verification, the solver, the prompt, the answer parser.
    let vr = leak(vec![record; 2]);
    case!(
        floe_verify_moves,
        "BUFFER_SIZE",
        "short moves",
        floe_verify_moves(pool, instances, two, 2, moves, 15, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "BUFFER_SIZE",
        "short out",
        floe_verify_moves(pool, instances, two, 2, moves, 16, 2, 4, vr, 1)
    );
    case!(
        floe_verify_moves,
        "BAD_INPUT",
        "instance 9",
        floe_verify_moves(pool, far, two, 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "BAD_INPUT",
        "3 agents of 2",
        floe_verify_moves(pool, instances, three, 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "BAD_INPUT",
        "misaligned agents",
        floe_verify_moves(pool, instances, misaligned(), 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "NULL_POINTER",
        "NULL instances",
        floe_verify_moves(pool, ptr::null(), two, 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "NULL_POINTER",
        "NULL pool",
        floe_verify_moves(ptr::null(), instances, two, 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_moves,
        "WRONG_HANDLE",
        "an engine",
        floe_verify_moves(as_pool, instances, two, 2, moves, 16, 2, 4, vr, 2)
    );
    case!(
        floe_verify_answers,
        "NULL_POINTER",
        "NULL answer",
        floe_verify_answers(pool, instances, null_answers, 1, vr, 1)
    );
    case!(
        floe_verify_answers,
        "BAD_UTF8",
        "answer not UTF-8",
        floe_verify_answers(pool, instances, bad_answers, 1, vr, 1)
    );
    case!(floe_verify_answers, "BAD_INPUT", "instance 9", floe_verify_answers(pool, far, answers, 2, vr, 2));
    case!(
        floe_verify_answers,
        "BUFFER_SIZE",
        "short out",
        floe_verify_answers(pool, instances, answers, 2, vr, 1)
    );
    case!(
        floe_verify_answers,
        "WRONG_HANDLE",
        "freed",
        floe_verify_answers(freed_pool, instances, answers, 2, vr, 2)
    );
    let rr = c(r#"["RRDD", "UURR"]"#);
    case!(floe_verify_plan, "BAD_INPUT", "format 7", floe_verify_plan(pool, 0, rr, 7, out_verdict));
    case!(
        floe_verify_plan,
        "BAD_INPUT",
        "instance 1",
        floe_verify_plan(pool, 1, rr, FLOE_PLAN_JSON, out_verdict)
    );
    case!(
        floe_verify_plan,
        "BAD_INPUT",
        "misaligned out",
        floe_verify_plan(pool, 0, rr, FLOE_PLAN_JSON, misaligned())
    );
    case!(
        floe_verify_plan,
        "NULL_POINTER",
        "NULL plan",
        floe_verify_plan(pool, 0, ptr::null(), FLOE_PLAN_JSON, out_verdict)
    );
    case!(
        floe_verify_plan,
        "NULL_POINTER",
        "NULL out",
        floe_verify_plan(pool, 0, rr, FLOE_PLAN_JSON, ptr::null_mut())
    );
    case!(
        floe_verify_plan,
        "BAD_UTF8",
        "plan not UTF-8",
        floe_verify_plan(pool, 0, BAD_UTF8, FLOE_PLAN_AUTO, out_verdict)
    );
    case!(
        floe_verify_plan,
        "WRONG_HANDLE",
        "a plugin",
        floe_verify_plan(reward.cast(), 0, rr, FLOE_PLAN_JSON, out_verdict)
    );
    case!(floe_verdict_detail, "NULL_POINTER", "NULL out", floe_verdict_detail(ptr::null_mut()));
    case!(floe_verdict_detail, "BAD_INPUT", "misaligned out", floe_verdict_detail(misaligned()));
    let corridor = r#"{"grid": ["FFFFF"], "agents": [{"start": [0, 0], "goal": [0, 4]}, {"start": [0, 4], "goal": [0, 0]}]}"#;
    case!(floe_mutate, "BAD_INPUT", "not an instance", floe_mutate(c("{}"), ptr::null(), out_str));
    case!(floe_mutate, "BAD_INPUT", "misaligned out", floe_mutate(c(INSTANCE), ptr::null(), misaligned()));
    case!(floe_mutate, "NULL_POINTER", "NULL instance", floe_mutate(ptr::null(), ptr::null(), out_str));
    case!(floe_mutate, "NULL_POINTER", "NULL out", floe_mutate(c(INSTANCE), ptr::null(), ptr::null_mut()));
    case!(floe_mutate, "BAD_UTF8", "instance not UTF-8", floe_mutate(BAD_UTF8, ptr::null(), out_str));
    case!(floe_mutate, "BAD_UTF8", "settings not UTF-8", floe_mutate(c(INSTANCE), BAD_UTF8, out_str));
    case!(floe_mutate, "CONFIG", "settings not JSON", floe_mutate(c(INSTANCE), c("{"), out_str));
    case!(floe_mutate, "CONFIG", "an unknown field", floe_mutate(c(INSTANCE), c(r#"{"edit": 1}"#), out_str));
    case!(floe_mutate, "CONFIG", "no edits", floe_mutate(c(INSTANCE), c(r#"{"edits": 0}"#), out_str));
    case!(
        floe_mutate,
        "FAILED",
        "a corridor no edit keeps solvable",
        floe_mutate(c(corridor), c(r#"{"edits": 1, "max_attempts": 4}"#), out_str)
    );
    let (soc, makespan) = (out_u32, boxed(0u32));
    case!(floe_solve, "BAD_INPUT", "not an instance", floe_solve(c("{}"), 0, out_str, soc, makespan));
    case!(floe_solve, "FAILED", "unsolvable", floe_solve(c(unsolvable), 0, out_str, soc, makespan));
    case!(floe_solve, "NULL_POINTER", "NULL instance", floe_solve(ptr::null(), 0, out_str, soc, makespan));
    case!(
        floe_solve,
        "NULL_POINTER",
        "NULL soc",
        floe_solve(c(INSTANCE), 0, out_str, ptr::null_mut(), makespan)
    );
    case!(
        floe_solve,
        "BAD_INPUT",
        "misaligned makespan",
        floe_solve(c(INSTANCE), 0, out_str, soc, misaligned())
    );
    case!(floe_solve, "BAD_UTF8", "instance not UTF-8", floe_solve(BAD_UTF8, 0, out_str, soc, makespan));
    case!(floe_render_prompt, "BAD_INPUT", "not an instance", floe_render_prompt(c("{}"), out_str));
    case!(floe_render_prompt, "BAD_INPUT", "six agents", floe_render_prompt(c(six), out_str));
    case!(floe_render_prompt, "NULL_POINTER", "NULL out", floe_render_prompt(c(INSTANCE), ptr::null_mut()));
    case!(floe_render_prompt, "BAD_UTF8", "instance not UTF-8", floe_render_prompt(BAD_UTF8, out_str));
    case!(
        floe_parse_answer,
        "BAD_INPUT",
        "one agent of two",
        floe_parse_answer(c(INSTANCE), c("Agent 0: RIGHT"), out_str)
    );
    case!(
        floe_parse_answer,
        "BAD_INPUT",
        "not an instance",
        floe_parse_answer(c("{}"), c("Agent 0: RIGHT"), out_str)
    );
    case!(
        floe_parse_answer,
        "NULL_POINTER",
        "NULL answer",
        floe_parse_answer(c(INSTANCE), ptr::null(), out_str)
    );
    case!(
        floe_parse_answer,
        "BAD_UTF8",
        "answer not UTF-8",
        floe_parse_answer(c(INSTANCE), BAD_UTF8, out_str)
    );

    // Training and evaluation: NOT_BUILT for everything without the feature.
    let nb = |status: &'static str| if train { status } else { "NOT_BUILT" };
    let nowhere = c("/nonexistent/floe-run");
    case!(
        floe_train_run,
        nb("NULL_POINTER"),
        "NULL config",
        floe_train_run(ptr::null(), nowhere, 0, None, ptr::null_mut(), ptr::null())
    );
    case!(
        floe_train_run,
        nb("NULL_POINTER"),
        "NULL folder",
        floe_train_run(c("{}"), ptr::null(), 0, None, ptr::null_mut(), ptr::null())
    );
    case!(
        floe_train_run,
        nb("BAD_UTF8"),
        "config not UTF-8",
        floe_train_run(BAD_UTF8, nowhere, 0, None, ptr::null_mut(), ptr::null())
    );
    case!(
        floe_train_run,
        nb("CONFIG"),
        "config not JSON",
        floe_train_run(c("{"), nowhere, 0, None, ptr::null_mut(), ptr::null())
    );
    case!(
        floe_train_run,
        nb("BAD_INPUT"),
        "misaligned cancel",
        floe_train_run(c("{"), nowhere, 0, None, ptr::null_mut(), misaligned())
    );
    // Level sampling.
    let levels_of = |json: &str| {
        let mut l = ptr::null_mut();
        // SAFETY: a valid string and out-pointer.
        ok(unsafe { floe_levels_new(c(json), &mut l) }, json);
        l
    };
    let space = r#"{"space": {"agents": [2, 2], "size": [3, 4], "hole_ratio": [0, 0.1], "solve": false}}"#;
    let levels = levels_of(space);
    let freed_levels = levels_of("{}");
    // SAFETY: a live level sampler, freed once.
    ok(unsafe { floe_levels_free(freed_levels) }, "free");
    let roomy: *mut floe_pool = {
        let mut p = ptr::null_mut();
        // SAFETY: a live level sampler and a writable out-pointer.
        ok(unsafe { floe_levels_pool(levels, 4, &mut p) }, "a pool with room");
        p
    };
    let sampled = {
        let mut e = ptr::null_mut();
        // SAFETY: a live pool, a valid string and out-pointer.
        ok(unsafe { floe_engine_new(roomy, c(r#"{"num_envs": 3}"#), &mut e) }, "engine");
        e
    };
    let sb = boxed(buffers(sampled));
    // SAFETY: a live engine and buffers of its sizes.
    ok(unsafe { floe_engine_reset(sampled, 1, sb) }, "reset");
    let short_sb = {
        // SAFETY: `sb` was made just above and is never freed.
        let mut s = unsafe { *sb };
        s.obs_len -= 1;
        boxed(s)
    };
    let unsampled = {
        let mut e = ptr::null_mut();
        // SAFETY: a live pool, a valid string and out-pointer.
        ok(unsafe { floe_engine_new(roomy, c(r#"{"num_envs": 3}"#), &mut e) }, "engine");
        e
    };
    let unsampled_b = boxed(buffers(unsampled));
    let weights = leak(vec![1.0f64, 2.0, 0.0, 1.0]);
    let negative = leak(vec![1.0f64, -2.0, 0.0, 1.0]);
    let zeros = leak(vec![0.0f64; 4]);
    let slot = leak(vec![1usize]);
    let far_slot = leak(vec![9usize]);
    let twice = leak(vec![1usize, 1]);
    let out_refilled = boxed(floe_refilled::default());
    let out_applied = boxed(floe_levels_applied::default());
    let infos = leak(vec![floe_core::engine::EnvInfo::default(); 4]);
    let far_infos = leak(vec![floe_core::engine::EnvInfo { instance: 99, ..Default::default() }; 2]);
    let level_records = leak(
        (0..4).map(|slot| floe_plugin_api::LevelRecord { slot, ..Default::default() }).collect::<Vec<_>>(),
    );
    let scores = leak(vec![0.5f32; 4]);
    let nan_scores = leak(vec![f32::NAN; 2]);
    let out_weights = leak(vec![0f64; 4]);
    let out_slots = leak(vec![0u32; 4]);
    let sampler = plugin(4, "plr");
    case!(
        floe_engine_set_weights,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_set_weights(ptr::null_mut(), weights, 4)
    );
    case!(
        floe_engine_set_weights,
        "WRONG_HANDLE",
        "freed engine",
        floe_engine_set_weights(freed_engine, weights, 4)
    );
    case!(
        floe_engine_set_weights,
        "NULL_POINTER",
        "NULL weights, 4 of them",
        floe_engine_set_weights(sampled, ptr::null(), 4)
    );
    case!(
        floe_engine_set_weights,
        "BAD_INPUT",
        "3 weights for 4 slots",
        floe_engine_set_weights(sampled, weights, 3)
    );
    case!(
        floe_engine_set_weights,
        "BAD_INPUT",
        "a negative weight",
        floe_engine_set_weights(sampled, negative, 4)
    );
    case!(
        floe_engine_set_weights,
        "BAD_INPUT",
        "all weights zero",
        floe_engine_set_weights(sampled, zeros, 4)
    );
    case!(
        floe_engine_set_weights,
        "BAD_INPUT",
        "misaligned weights",
        floe_engine_set_weights(sampled, misaligned(), 1)
    );
    case!(
        floe_engine_refill,
        "NOT_RESET",
        "before reset",
        floe_engine_refill(unsampled, slot, 1, pool, unsampled_b, out_refilled)
    );
    case!(
        floe_engine_refill,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_refill(ptr::null_mut(), slot, 1, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_refill(as_engine, slot, 1, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "NULL_POINTER",
        "NULL slots",
        floe_engine_refill(sampled, ptr::null(), 1, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "NULL_POINTER",
        "NULL levels",
        floe_engine_refill(sampled, slot, 1, ptr::null(), sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "WRONG_HANDLE",
        "freed levels",
        floe_engine_refill(sampled, slot, 1, freed_pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "slot out of range",
        floe_engine_refill(sampled, far_slot, 1, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "a slot twice",
        floe_engine_refill(sampled, twice, 2, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "1 level for 2 slots",
        floe_engine_refill(sampled, weights.cast(), 0, pool, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "a level over the room",
        floe_engine_refill(sampled, slot, 1, crowded, sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "NULL_POINTER",
        "NULL buffers",
        floe_engine_refill(sampled, slot, 1, pool, ptr::null(), out_refilled)
    );
    case!(
        floe_engine_refill,
        "BUFFER_SIZE",
        "short buffers",
        floe_engine_refill(sampled, slot, 1, pool, short_sb, out_refilled)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "misaligned out",
        floe_engine_refill(sampled, slot, 1, pool, sb, misaligned())
    );
    // Buffers of the right sizes that are not the engine's last outputs (zeros, not its
    // observations).
    let stale_sb = boxed(buffers(sampled));
    case!(
        floe_engine_check_outputs,
        "NOT_RESET",
        "before reset",
        floe_engine_check_outputs(unsampled, unsampled_b)
    );
    case!(
        floe_engine_check_outputs,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_check_outputs(ptr::null_mut(), sb)
    );
    case!(
        floe_engine_check_outputs,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_check_outputs(as_engine, sb)
    );
    case!(
        floe_engine_check_outputs,
        "NULL_POINTER",
        "NULL buffers",
        floe_engine_check_outputs(sampled, ptr::null())
    );
    case!(
        floe_engine_check_outputs,
        "BUFFER_SIZE",
        "short buffers",
        floe_engine_check_outputs(sampled, short_sb)
    );
    case!(
        floe_engine_check_outputs,
        "BAD_INPUT",
        "buffers that are not its outputs",
        floe_engine_check_outputs(sampled, stale_sb)
    );
    case!(
        floe_engine_refill,
        "BAD_INPUT",
        "buffers that are not its outputs",
        floe_engine_refill(sampled, slot, 1, pool, stale_sb, out_refilled)
    );
    let records = leak(vec![floe_plugin_api::LevelRecord::default(); 4]);
    let count = boxed(0usize);
    case!(
        floe_engine_levels,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_levels(ptr::null(), records, 4, count)
    );
    case!(
        floe_engine_levels,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_levels(as_engine, records, 4, count)
    );
    case!(
        floe_engine_levels,
        "NULL_POINTER",
        "NULL len",
        floe_engine_levels(sampled, records, 4, ptr::null_mut())
    );
    case!(
        floe_engine_levels,
        "NULL_POINTER",
        "NULL out",
        floe_engine_levels(sampled, ptr::null_mut(), 4, count)
    );
    case!(
        floe_engine_levels,
        "BAD_INPUT",
        "misaligned out",
        floe_engine_levels(sampled, misaligned(), 1, count)
    );
    case!(
        floe_engine_levels,
        "BAD_INPUT",
        "misaligned len",
        floe_engine_levels(sampled, records, 4, misaligned())
    );
    let read_weights = leak(vec![0.0f64; 4]);
    case!(
        floe_engine_weights,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_weights(ptr::null(), read_weights, 4, count)
    );
    case!(
        floe_engine_weights,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_weights(as_engine, read_weights, 4, count)
    );
    case!(
        floe_engine_weights,
        "NULL_POINTER",
        "NULL len",
        floe_engine_weights(sampled, read_weights, 4, ptr::null_mut())
    );
    case!(
        floe_engine_weights,
        "NULL_POINTER",
        "NULL out",
        floe_engine_weights(sampled, ptr::null_mut(), 4, count)
    );
    case!(
        floe_engine_weights,
        "BAD_INPUT",
        "misaligned out",
        floe_engine_weights(sampled, misaligned(), 1, count)
    );
    case!(
        floe_engine_weights,
        "BAD_INPUT",
        "misaligned len",
        floe_engine_weights(sampled, read_weights, 4, misaligned())
    );
    case!(
        floe_engine_level_json,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_level_json(ptr::null(), 0, out_str)
    );
    case!(
        floe_engine_level_json,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_level_json(as_engine, 0, out_str)
    );
    case!(
        floe_engine_level_json,
        "NULL_POINTER",
        "NULL out",
        floe_engine_level_json(sampled, 0, ptr::null_mut())
    );
    case!(
        floe_engine_level_json,
        "BAD_INPUT",
        "misaligned out",
        floe_engine_level_json(sampled, 0, misaligned())
    );
    case!(
        floe_engine_level_json,
        "BAD_INPUT",
        "a slot out of range",
        floe_engine_level_json(sampled, 1 << 20, out_str)
    );
    case!(floe_levels_new, "NULL_POINTER", "NULL out", floe_levels_new(ptr::null(), ptr::null_mut()));
    let out_levels = boxed(ptr::null_mut::<floe_levels>());
    case!(floe_levels_new, "BAD_INPUT", "misaligned out", floe_levels_new(ptr::null(), misaligned()));
    case!(floe_levels_new, "BAD_UTF8", "spec not UTF-8", floe_levels_new(BAD_UTF8, out_levels));
    case!(floe_levels_new, "CONFIG", "spec not JSON", floe_levels_new(c("{"), out_levels));
    case!(
        floe_levels_new,
        "CONFIG",
        "an unknown field",
        floe_levels_new(c(r#"{"sampler_": {}}"#), out_levels)
    );
    case!(
        floe_levels_new,
        "CONFIG",
        "a space out of range",
        floe_levels_new(c(r#"{"space": {"size": [9, 3]}}"#), out_levels)
    );
    case!(
        floe_levels_new,
        "CONFIG",
        "parameters refused",
        floe_levels_new(c(r#"{"sampler": {"name": "plr", "params": {"fresh": 2}}}"#), out_levels)
    );
    case!(
        floe_levels_new,
        "UNKNOWN_PLUGIN",
        "an unknown sampler",
        floe_levels_new(c(r#"{"sampler": {"name": "nope"}}"#), out_levels)
    );
    case!(
        floe_levels_new,
        "FAILED",
        "a missing library",
        floe_levels_new(c(r#"{"sampler": {"name": "x", "library": "/no/such/lib.so"}}"#), out_levels)
    );
    case!(floe_levels_pool, "BAD_INPUT", "0 levels", floe_levels_pool(levels, 0, out_pool));
    case!(floe_levels_pool, "NULL_POINTER", "NULL levels", floe_levels_pool(ptr::null_mut(), 2, out_pool));
    case!(floe_levels_pool, "WRONG_HANDLE", "freed levels", floe_levels_pool(freed_levels, 2, out_pool));
    case!(floe_levels_pool, "NULL_POINTER", "NULL out", floe_levels_pool(levels, 2, ptr::null_mut()));
    case!(floe_levels_pool, "BAD_INPUT", "misaligned out", floe_levels_pool(levels, 2, misaligned()));
    case!(floe_levels_pool, "TOO_LARGE", "SIZE_MAX levels", floe_levels_pool(levels, usize::MAX, out_pool));
    case!(
        floe_levels_start,
        "NULL_POINTER",
        "NULL levels",
        floe_levels_start(ptr::null_mut(), sampled, sb, out_applied)
    );
    case!(
        floe_levels_start,
        "WRONG_HANDLE",
        "an engine as the sampler",
        floe_levels_start(engine.cast(), sampled, sb, out_applied)
    );
    case!(
        floe_levels_start,
        "WRONG_HANDLE",
        "freed engine",
        floe_levels_start(levels, freed_engine, sb, out_applied)
    );
    case!(
        floe_levels_start,
        "NULL_POINTER",
        "NULL buffers",
        floe_levels_start(levels, sampled, ptr::null(), out_applied)
    );
    case!(
        floe_levels_start,
        "BUFFER_SIZE",
        "short buffers",
        floe_levels_start(levels, sampled, short_sb, out_applied)
    );
    case!(
        floe_levels_start,
        "BAD_INPUT",
        "misaligned out",
        floe_levels_start(levels, sampled, sb, misaligned())
    );
    case!(
        floe_levels_after_step,
        "NULL_POINTER",
        "NULL levels",
        floe_levels_after_step(ptr::null_mut(), sampled, sb, out_applied)
    );
    case!(
        floe_levels_after_step,
        "WRONG_HANDLE",
        "freed levels",
        floe_levels_after_step(freed_levels, sampled, sb, out_applied)
    );
    case!(
        floe_levels_after_step,
        "NULL_POINTER",
        "NULL engine",
        floe_levels_after_step(levels, ptr::null_mut(), sb, out_applied)
    );
    case!(
        floe_levels_after_step,
        "BAD_INPUT",
        "overlapping buffers",
        floe_levels_after_step(levels, sampled, overlap_b, out_applied)
    );
    case!(
        floe_levels_update,
        "BAD_INPUT",
        "scores for 3 of 4 episodes",
        floe_levels_update(levels, sampled, infos, 4, scores, 3, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "BAD_INPUT",
        "a score that is NaN",
        floe_levels_update(levels, sampled, infos, 2, nan_scores, 2, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "BAD_INPUT",
        "an episode outside the pool",
        floe_levels_update(levels, sampled, far_infos, 2, ptr::null(), 0, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "NULL_POINTER",
        "NULL scores, 4 of them",
        floe_levels_update(levels, sampled, infos, 4, ptr::null(), 4, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "NULL_POINTER",
        "NULL episodes, 4 of them",
        floe_levels_update(levels, sampled, ptr::null(), 4, ptr::null(), 0, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_levels_update(levels, as_engine, ptr::null(), 0, ptr::null(), 0, sb, out_applied)
    );
    case!(
        floe_levels_update,
        "BUFFER_SIZE",
        "short buffers",
        floe_levels_update(levels, sampled, ptr::null(), 0, ptr::null(), 0, short_sb, out_applied)
    );
    case!(
        floe_levels_pending,
        "NULL_POINTER",
        "NULL len",
        floe_levels_pending(levels, infos, 4, ptr::null_mut())
    );
    case!(
        floe_levels_pending,
        "NULL_POINTER",
        "NULL out, room for 4",
        floe_levels_pending(levels, ptr::null_mut(), 4, out_usize)
    );
    case!(
        floe_levels_pending,
        "WRONG_HANDLE",
        "freed levels",
        floe_levels_pending(freed_levels, infos, 4, out_usize)
    );
    case!(
        floe_levels_pending,
        "BAD_INPUT",
        "misaligned len",
        floe_levels_pending(levels, infos, 4, misaligned())
    );
    let robust = boxed(0u8);
    case!(floe_levels_robust, "NULL_POINTER", "NULL levels", floe_levels_robust(ptr::null(), robust));
    case!(floe_levels_robust, "NULL_POINTER", "NULL robust", floe_levels_robust(levels, ptr::null_mut()));
    case!(floe_levels_robust, "WRONG_HANDLE", "freed levels", floe_levels_robust(freed_levels, robust));
    let marks = boxed([0u8; 4]).cast::<u8>();
    let stats = boxed([SlotStats::default(); 4]).cast::<SlotStats>();
    // The record lists handed out per environment, episode or slot: room for 4 in `$out`.
    macro_rules! list_cases {
        ($f:ident, $out:expr) => {
            case!($f, "NULL_POINTER", "NULL levels", $f(ptr::null(), $out, 4, out_usize));
            case!($f, "NULL_POINTER", "NULL len", $f(levels, $out, 4, ptr::null_mut()));
            case!($f, "NULL_POINTER", "NULL out, room for 4", $f(levels, ptr::null_mut(), 4, out_usize));
            case!($f, "WRONG_HANDLE", "freed levels", $f(freed_levels, $out, 4, out_usize));
            case!($f, "BAD_INPUT", "misaligned len", $f(levels, $out, 4, misaligned()));
        };
    }
    list_cases!(floe_levels_first_play, marks);
    list_cases!(floe_levels_pending_first_play, marks);
    list_cases!(floe_levels_slot_stats, stats);
    let envs = boxed([0u32; 4]).cast::<u32>();
    let steps = boxed([0u64; 4]).cast::<u64>();
    list_cases!(floe_levels_pending_envs, envs);
    list_cases!(floe_levels_pending_end_steps, steps);
    let recorded = boxed(0u64);
    case!(
        floe_levels_steps_recorded,
        "NULL_POINTER",
        "NULL levels",
        floe_levels_steps_recorded(ptr::null(), recorded)
    );
    case!(
        floe_levels_steps_recorded,
        "NULL_POINTER",
        "NULL out",
        floe_levels_steps_recorded(levels, ptr::null_mut())
    );
    case!(
        floe_levels_steps_recorded,
        "WRONG_HANDLE",
        "freed levels",
        floe_levels_steps_recorded(freed_levels, recorded)
    );
    case!(
        floe_levels_steps_recorded,
        "BAD_INPUT",
        "misaligned out",
        floe_levels_steps_recorded(levels, misaligned())
    );
    case!(
        floe_levels_slot_stats,
        "BAD_INPUT",
        "misaligned out",
        floe_levels_slot_stats(levels, misaligned(), 4, out_usize)
    );
    case!(floe_levels_save, "NULL_POINTER", "NULL levels", floe_levels_save(ptr::null(), sampled, out_str));
    case!(floe_levels_save, "NULL_POINTER", "NULL engine", floe_levels_save(levels, ptr::null(), out_str));
    case!(floe_levels_save, "NULL_POINTER", "NULL out", floe_levels_save(levels, sampled, ptr::null_mut()));
    case!(floe_levels_save, "BAD_INPUT", "misaligned out", floe_levels_save(levels, sampled, misaligned()));
    case!(floe_levels_save, "WRONG_HANDLE", "freed levels", floe_levels_save(freed_levels, sampled, out_str));
    case!(
        floe_levels_save,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_levels_save(levels, as_engine, out_str)
    );
    case!(floe_levels_load, "NULL_POINTER", "NULL levels", floe_levels_load(ptr::null_mut(), c("{}")));
    case!(floe_levels_load, "NULL_POINTER", "NULL state", floe_levels_load(levels, ptr::null()));
    case!(floe_levels_load, "BAD_UTF8", "state not UTF-8", floe_levels_load(levels, BAD_UTF8));
    case!(floe_levels_load, "BAD_INPUT", "state not JSON", floe_levels_load(levels, c("{")));
    case!(floe_levels_load, "BAD_INPUT", "version 2", floe_levels_load(levels, c(r#"{"version": 2}"#)));
    case!(floe_levels_load, "WRONG_HANDLE", "freed levels", floe_levels_load(freed_levels, c("{}")));
    let empty_decision = c(r#"{"weights": null, "refill": [], "levels": [], "episodes": 0}"#);
    let decision_of = |json: *const c_char| {
        let mut d = ptr::null_mut();
        // SAFETY: a valid string and out-pointer.
        ok(unsafe { floe_decision_from_json(json, &mut d) }, "a decision");
        d
    };
    let decision = decision_of(empty_decision);
    let freed_decision = decision_of(empty_decision);
    // SAFETY: a live decision, freed once.
    ok(unsafe { floe_decision_free(freed_decision) }, "free");
    let out_decision = boxed(ptr::null_mut::<floe_decision>());
    let one_score = leak(vec![1.0f32]);
    case!(
        floe_levels_decide,
        "NULL_POINTER",
        "NULL levels",
        floe_levels_decide(ptr::null_mut(), level_records, 4, ptr::null(), 0, ptr::null(), 0, out_decision)
    );
    case!(
        floe_levels_decide,
        "NULL_POINTER",
        "NULL out",
        floe_levels_decide(levels, level_records, 4, ptr::null(), 0, ptr::null(), 0, ptr::null_mut())
    );
    case!(
        floe_levels_decide,
        "NULL_POINTER",
        "NULL records, 4 of them",
        floe_levels_decide(levels, ptr::null(), 4, ptr::null(), 0, ptr::null(), 0, out_decision)
    );
    case!(
        floe_levels_decide,
        "BAD_INPUT",
        "misaligned out",
        floe_levels_decide(levels, level_records, 4, ptr::null(), 0, ptr::null(), 0, misaligned())
    );
    case!(
        floe_levels_decide,
        "WRONG_HANDLE",
        "freed levels",
        floe_levels_decide(freed_levels, level_records, 4, ptr::null(), 0, ptr::null(), 0, out_decision)
    );
    case!(
        floe_levels_decide,
        "BAD_INPUT",
        "a score for no episode",
        floe_levels_decide(levels, level_records, 4, infos, 0, one_score, 1, out_decision)
    );
    case!(
        floe_engine_apply,
        "NULL_POINTER",
        "NULL engine",
        floe_engine_apply(ptr::null_mut(), decision, sb, out_applied)
    );
    case!(
        floe_engine_apply,
        "NULL_POINTER",
        "NULL decision",
        floe_engine_apply(sampled, ptr::null(), sb, out_applied)
    );
    case!(
        floe_engine_apply,
        "WRONG_HANDLE",
        "freed decision",
        floe_engine_apply(sampled, freed_decision, sb, out_applied)
    );
    case!(
        floe_engine_apply,
        "WRONG_HANDLE",
        "a pool as the engine",
        floe_engine_apply(as_engine, decision, sb, out_applied)
    );
    case!(
        floe_engine_apply,
        "NULL_POINTER",
        "NULL buffers",
        floe_engine_apply(sampled, decision, ptr::null(), out_applied)
    );
    case!(
        floe_engine_apply,
        "BUFFER_SIZE",
        "short buffers",
        floe_engine_apply(sampled, decision, short_sb, out_applied)
    );
    case!(
        floe_engine_apply,
        "BAD_INPUT",
        "misaligned out",
        floe_engine_apply(sampled, decision, sb, misaligned())
    );
    case!(floe_decision_json, "NULL_POINTER", "NULL decision", floe_decision_json(ptr::null(), out_str));
    case!(floe_decision_json, "NULL_POINTER", "NULL out", floe_decision_json(decision, ptr::null_mut()));
    case!(floe_decision_json, "WRONG_HANDLE", "freed decision", floe_decision_json(freed_decision, out_str));
    case!(floe_decision_json, "BAD_INPUT", "misaligned out", floe_decision_json(decision, misaligned()));
    case!(
        floe_decision_from_json,
        "NULL_POINTER",
        "NULL json",
        floe_decision_from_json(ptr::null(), out_decision)
    );
    case!(
        floe_decision_from_json,
        "NULL_POINTER",
        "NULL out",
        floe_decision_from_json(empty_decision, ptr::null_mut())
    );
    case!(
        floe_decision_from_json,
        "BAD_UTF8",
        "json not UTF-8",
        floe_decision_from_json(BAD_UTF8, out_decision)
    );
    case!(
        floe_decision_from_json,
        "BAD_INPUT",
        "json not JSON",
        floe_decision_from_json(c("{"), out_decision)
    );
    case!(
        floe_decision_from_json,
        "BAD_INPUT",
        "misaligned out",
        floe_decision_from_json(empty_decision, misaligned())
    );
    case!(floe_decision_free, "WRONG_HANDLE", "an engine as the decision", floe_decision_free(engine.cast()));
    case!(floe_decision_free, "WRONG_HANDLE", "freed twice", floe_decision_free(freed_decision));
    case!(floe_levels_free, "WRONG_HANDLE", "an engine as the sampler", floe_levels_free(engine.cast()));
    case!(floe_levels_free, "WRONG_HANDLE", "freed twice", floe_levels_free(freed_levels));
    for (p, scores, cap, expect, what) in [
        (reward, ptr::null(), 4, "UNSUPPORTED", "a reward"),
        (sampler, ptr::null(), 3, "BUFFER_SIZE", "room for 3 slots of 4"),
        (sampler, nan_scores.cast_const(), 4, "BAD_INPUT", "a NaN score"),
        (freed_plugin, ptr::null(), 4, "WRONG_HANDLE", "freed plugin"),
    ] {
        case!(
            floe_plugin_update_levels,
            expect,
            what,
            floe_plugin_update_levels(
                p,
                level_records,
                4,
                infos,
                2,
                scores,
                out_weights,
                out_u32,
                out_slots,
                cap,
                out_usize,
                out_str
            )
        );
    }
    case!(
        floe_plugin_update_levels,
        "NULL_POINTER",
        "NULL out_has_weights",
        floe_plugin_update_levels(
            sampler,
            level_records,
            4,
            infos,
            2,
            ptr::null(),
            out_weights,
            ptr::null_mut(),
            out_slots,
            4,
            out_usize,
            out_str
        )
    );
    let ckpt = c("/nonexistent/checkpoint.safetensors");
    case!(
        floe_eval_run,
        nb("NULL_POINTER"),
        "NULL checkpoint",
        floe_eval_run(ptr::null(), pool, None, ptr::null_mut(), out_str)
    );
    case!(
        floe_eval_run,
        nb("NULL_POINTER"),
        "NULL out",
        floe_eval_run(ckpt, pool, None, ptr::null_mut(), ptr::null_mut())
    );
    case!(
        floe_eval_run,
        nb("WRONG_HANDLE"),
        "freed pool",
        floe_eval_run(ckpt, freed_pool, None, ptr::null_mut(), out_str)
    );
    case!(
        floe_eval_run,
        nb("BAD_INPUT"),
        "no checkpoint",
        floe_eval_run(ckpt, pool, None, ptr::null_mut(), out_str)
    );
    cases
}

#[test]
fn every_function_fails_only_with_the_statuses_its_header_comment_lists() {
    let header = header();
    let name_of: BTreeMap<floe_status, &str> = header.codes.iter().map(|(n, &v)| (v, n.as_str())).collect();
    let cases = cases();
    let mut wrong = Vec::new();
    for case in &cases {
        let listed = header.listed.get(case.function).unwrap_or_else(|| {
            panic!("{} is not a function of floe.h that returns a floe_status", case.function)
        });
        let expect = format!("FLOE_STATUS_{}", case.expect);
        let code = *header.codes.get(&expect).unwrap_or_else(|| panic!("{expect} is not in floe_types.h"));
        let got = (case.call)();
        let got_name = name_of.get(&got).map_or_else(|| format!("status {got}"), |n| (*n).to_string());
        let message = last_error();
        if !listed.contains(&got_name) {
            wrong.push(format!(
                "{} ({}): returned {got_name}, which its comment in floe.h does not list ({}): {message}",
                case.function,
                case.what,
                listed.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        } else if got != code {
            wrong.push(format!(
                "{} ({}): returned {got_name}, the case expects {expect}: {message}",
                case.function, case.what
            ));
        } else if message.is_empty() {
            wrong.push(format!("{} ({}): failed with no message", case.function, case.what));
        }
    }
    assert!(wrong.is_empty(), "{} of {} cases:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    // Every function of the header has its error paths here, and lists what it returns.
    let covered: BTreeSet<&str> = cases.iter().map(|c| c.function).collect();
    let missing: Vec<&String> = header.listed.keys().filter(|f| !covered.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "functions of floe.h with no error-path case: {missing:?}");
    let silent: Vec<&String> = header.listed.iter().filter(|(_, s)| s.is_empty()).map(|(f, _)| f).collect();
    assert!(
        silent.is_empty(),
        "functions whose comment in floe.h lists no status after \"Errors:\": {silent:?}"
    );
}

#[test]
fn the_header_parser_reads_the_errors_paragraph_only() {
    let comment = "\n A call. FLOE_STATUS_GPU is mentioned here.\n\n Errors: FLOE_STATUS_NULL_POINTER for a NULL\n `out`, FLOE_STATUS_BAD_INPUT.\n\n # Safety\n FLOE_STATUS_IO\n";
    let found: Vec<String> = errors_paragraph(comment).into_iter().collect();
    assert_eq!(found, ["FLOE_STATUS_BAD_INPUT", "FLOE_STATUS_NULL_POINTER"]);
    assert!(errors_paragraph(" No list here: FLOE_STATUS_IO.\n").is_empty());
}
