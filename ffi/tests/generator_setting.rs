//! `floe_pool_generate`'s one-setting form: a setting that cannot be met is refused with a
//! message that names the conflict and a change that works.

use std::ffi::{CStr, CString};
use std::ptr;

use floe::*;

/// FLOE_STATUS_CONFIG of `floe_types.h`.
const STATUS_CONFIG: floe_status = 6;

/// Generates `count` instances from `setting`: the pool's size, or the status and message.
fn generate(setting: &str, count: usize) -> Result<usize, (floe_status, String)> {
    let json = CString::new(setting).unwrap();
    let mut pool: *mut floe_pool = ptr::null_mut();
    // SAFETY: a NUL-terminated string and a writable out-pointer.
    let status = unsafe { floe_pool_generate(json.as_ptr(), count, 3, &mut pool) };
    if status != 0 {
        // SAFETY: floe_last_error returns a NUL-terminated string owned by the library.
        let message = unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned();
        return Err((status, message));
    }
    let mut n = 0usize;
    // SAFETY: `pool` came from floe_pool_generate; `n` is writable.
    assert_eq!(unsafe { floe_pool_count(pool, &mut n) }, 0);
    // SAFETY: `pool` came from floe_pool_generate and is freed once.
    assert_eq!(unsafe { floe_pool_free(pool) }, 0);
    Ok(n)
}

#[test]
fn a_wait_ratio_with_unsolved_instances_names_both_ways_out_and_each_works() {
    let (status, message) =
        generate(r#"{"size": 8, "agents": 4, "wait_ratio": 0.5, "solve": false}"#, 4).expect_err("refused");
    assert_eq!(status, STATUS_CONFIG, "{message}");
    // The conflict: unsolved instances, and a wait ratio that needs solved ones.
    assert!(message.contains("\"solve\": false draws unsolved instances"), "{message}");
    assert!(message.contains("\"wait_ratio\": 0.5 needs solved ones"), "{message}");
    // Its way out for unsolved instances comes first, and it works...
    assert!(message.contains("drop \"wait_ratio\" to draw unsolved instances"), "{message}");
    assert_eq!(generate(r#"{"size": 8, "agents": 4, "solve": false}"#, 4), Ok(4));
    // ...and so does the other one.
    assert!(message.contains("or drop \"solve\": false to solve them"), "{message}");
    assert_eq!(generate(r#"{"size": 8, "agents": 4, "wait_ratio": 0.5}"#, 4), Ok(4));
}

#[test]
fn a_setting_is_the_generators_own_fields_with_the_count_and_seed_left_to_the_call() {
    // Every field of the generator's configuration, "size" or both sides.
    let full = r#"{"width": 6, "height": 5, "agents": 3, "hole_ratio": 0.1, "wait_ratio": 0.5,
                   "max_attempts": 500, "max_nodes": 2000}"#;
    assert_eq!(generate(full, 4), Ok(4));
    let refused = |setting: &str, needle: &str| {
        let (status, message) = generate(setting, 2).expect_err(setting);
        assert_eq!(status, STATUS_CONFIG, "{setting}: {message}");
        assert!(message.contains(needle), "{setting}: {message}");
    };
    refused(r#"{"size": 5, "agents": 2, "count": 9}"#, "\"count\" is an argument of the call");
    refused(r#"{"size": 5, "agents": 2, "seed": 9}"#, "\"seed\" is an argument of the call");
    refused(r#"{"size": 5}"#, "\"agents\" is required");
    refused(r#"{"width": 5, "agents": 2}"#, "both \"width\" and \"height\"");
    refused(r#"{"size": 5, "width": 5, "height": 5, "agents": 2}"#, "either \"size\"");
    refused(r#"{"size": 5, "agents": 2, "holes": 0.1}"#, "unknown field `holes`");
    refused(r#"{"size": 5, "agents": 2, "solve": "no"}"#, "\"solve\"");
    refused(r#"{"size": -5, "agents": 2}"#, "size");
    refused("[5, 2]", "JSON object");
}
