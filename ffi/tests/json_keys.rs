//! The C API's JSON readers refuse an object that names a key twice, rather than keep one of the
//! two values silently: engine configurations, generator settings, round configurations,
//! histories, plugin parameters, instances and plans alike.

use std::ffi::{CStr, CString};
use std::ptr;

use floe::*;
use floe_core::verify::VerifyOut;

const INSTANCE: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [2, 2]}, {"start": [2, 0], "goal": [0, 2]}]}"#;

fn last_error() -> String {
    // SAFETY: floe_last_error returns a NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned()
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

#[test]
fn a_key_named_twice_is_refused_with_its_name() {
    let duplicate = |message: &str, key: &str| {
        assert!(message.contains(&format!("duplicate key \"{key}\"")), "{message}");
    };
    let mut pool = ptr::null_mut();
    // Generator settings and round configurations.
    for (setting, key) in [
        (r#"{"size": 4, "agents": 2, "agents": 3}"#, "agents"),
        (r#"{"size": 4, "size": 5, "agents": 2}"#, "size"),
        (
            r#"{"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0, "hole_ratio": 0.5, "wait_ratio": 0}], "agents": [2]}"#,
            "hole_ratio",
        ),
    ] {
        // SAFETY: a NUL-terminated string and a writable out-pointer.
        assert_eq!(unsafe { floe_pool_generate(c(setting).as_ptr(), 2, 1, &mut pool) }, 6, "{setting}");
        duplicate(&last_error(), key);
    }
    // Instances.
    let twice = INSTANCE.replacen("\"grid\"", "\"grid\": [\"FF\"], \"grid\"", 1);
    // SAFETY: as above.
    assert_eq!(unsafe { floe_pool_from_json(c(&twice).as_ptr(), 0, &mut pool) }, 4);
    duplicate(&last_error(), "grid");
    // Engine configurations.
    // SAFETY: as above.
    assert_eq!(unsafe { floe_pool_from_json(c(INSTANCE).as_ptr(), 0, &mut pool) }, 0);
    let mut engine = ptr::null_mut();
    for (config, key) in [
        (r#"{"num_envs": 2, "num_envs": 4}"#, "num_envs"),
        (r#"{"rewards": {"step": -1, "step": 0}}"#, "step"),
        (r#"{"backend": "cpu", "backend": "gpu"}"#, "backend"),
    ] {
        // SAFETY: a live pool, a NUL-terminated string and a writable out-pointer.
        assert_eq!(unsafe { floe_engine_new(pool, c(config).as_ptr(), &mut engine) }, 6, "{config}");
        duplicate(&last_error(), key);
    }
    // Plans: a verdict of kind parse_error that names the key.
    let mut verdict = VerifyOut::default();
    let plan = c(r#"{"moves": ["RRDD", "UURR"], "moves": ["DDRR", "RRUU"]}"#);
    // SAFETY: a live pool, a NUL-terminated string and a writable record.
    assert_eq!(unsafe { floe_verify_plan(pool, 0, plan.as_ptr(), FLOE_PLAN_AUTO, &mut verdict) }, 0);
    assert_eq!((verdict.valid, verdict.kind), (0, 1), "invalid, parse_error: {verdict:?}");
    let mut detail = ptr::null_mut();
    // SAFETY: a writable out-pointer; the string is freed once.
    unsafe {
        assert_eq!(floe_verdict_detail(&mut detail), 0);
        duplicate(&CStr::from_ptr(detail).to_string_lossy(), "moves");
        floe_string_free(detail);
    }
    // Plugin parameters and histories.
    let mut plugin = ptr::null_mut();
    // SAFETY: NUL-terminated strings and a writable out-pointer.
    let status = unsafe {
        floe_plugin_new(
            ptr::null(),
            2,
            c("plr").as_ptr(),
            c(r#"{"seed": 1, "seed": 2}"#).as_ptr(),
            &mut plugin,
        )
    };
    assert_eq!(status, 6);
    duplicate(&last_error(), "seed");
    // SAFETY: as above.
    assert_eq!(unsafe { floe_plugin_new(ptr::null(), 2, c("plr").as_ptr(), ptr::null(), &mut plugin) }, 0);
    let mut out = ptr::null_mut();
    // SAFETY: a live plugin, a NUL-terminated string and a writable out-pointer.
    let status =
        unsafe { floe_plugin_next_config(plugin, c(r#"{"rounds": [], "rounds": []}"#).as_ptr(), &mut out) };
    assert_eq!(status, 6);
    duplicate(&last_error(), "rounds");
    // SAFETY: live handles, each freed once.
    unsafe {
        assert_eq!(floe_plugin_free(plugin), 0);
        assert_eq!(floe_pool_free(pool), 0);
    }
}
