//! Every size a caller can pass is checked before memory is asked for: a request that cannot be
//! had is FLOE_STATUS_TOO_LARGE with the bytes asked for, never an abort of the process (nor
//! FLOE_STATUS_PANICKED, which the header keeps for bugs).

use std::ffi::{CStr, CString};
use std::ptr;

use floe::*;

/// FLOE_STATUS_TOO_LARGE of `floe_types.h`.
const TOO_LARGE: floe_status = 17;

fn last_error() -> String {
    // SAFETY: floe_last_error returns a NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned()
}

fn generate(setting: &str, samples: usize) -> Result<*mut floe_pool, (floe_status, String)> {
    let json = CString::new(setting).unwrap();
    let mut pool = ptr::null_mut();
    // SAFETY: a NUL-terminated string and a writable out-pointer.
    match unsafe { floe_pool_generate(json.as_ptr(), samples, 1, &mut pool) } {
        0 => Ok(pool),
        s => Err((s, last_error())),
    }
}

fn engine(pool: *const floe_pool, config: &str) -> Result<*mut floe_engine, (floe_status, String)> {
    let json = CString::new(config).unwrap();
    let mut engine = ptr::null_mut();
    // SAFETY: a live pool, a NUL-terminated string and a writable out-pointer.
    match unsafe { floe_engine_new(pool, json.as_ptr(), &mut engine) } {
        0 => Ok(engine),
        s => Err((s, last_error())),
    }
}

#[test]
fn a_pool_too_large_to_hold_is_a_status_with_its_bytes() {
    let setting = r#"{"size": 4, "agents": 1, "solve": false}"#;
    for samples in [1usize << 40, 1 << 50, usize::MAX] {
        let (status, message) = generate(setting, samples).expect_err("no machine holds it");
        assert_eq!(status, TOO_LARGE, "{samples}: {message}");
        assert!(message.contains("bytes") && message.contains("cannot be allocated"), "{message}");
        assert!(message.contains(&samples.to_string()), "{samples}: {message}");
    }
    // The solved generator sizes its output the same way, as does a round configuration.
    let (status, message) = generate(r#"{"size": 4, "agents": 1}"#, 1 << 40).expect_err("too large");
    assert_eq!(status, TOO_LARGE, "{message}");
    let round =
        r#"{"sizes": [{"size": 4, "data_ratio": 1.0, "hole_ratio": 0.0, "wait_ratio": 0.0}], "agents": [1]}"#;
    let (status, message) = generate(round, usize::MAX).expect_err("too large");
    assert_eq!(status, TOO_LARGE, "{message}");
}

#[test]
fn an_engine_too_large_to_hold_is_a_status_with_its_bytes() {
    // Many agents per environment make every environment's state large.
    let pool = generate(r#"{"size": 32, "agents": 255, "solve": false}"#, 1).expect("a pool");
    for config in [
        r#"{"num_envs": 4294967295}"#,
        r#"{"num_envs": 4294967295, "obs_radius": 127}"#,
        r#"{"num_envs": 4294967295, "obs_format": "none"}"#,
    ] {
        let (status, message) = engine(pool, config).expect_err("no machine holds it");
        assert_eq!(status, TOO_LARGE, "{config}: {message}");
        assert!(message.contains("bytes") && message.contains("cannot be allocated"), "{message}");
    }
    // The padded maps of a large observation radius are sized before they are made.
    let many = generate(r#"{"size": 2, "agents": 1, "solve": false}"#, 1 << 22).expect("a pool");
    let (status, message) = engine(many, r#"{"num_envs": 1, "obs_radius": 127}"#).expect_err("too large");
    assert_eq!(status, TOO_LARGE, "{message}");
    assert!(message.contains("padded maps"), "{message}");
    // The issue's own case: two agents, every environment the range allows. Whether 100 GB can be
    // had depends on the machine; an abort never.
    let small = generate(r#"{"size": 4, "agents": 2, "solve": false}"#, 1).expect("a pool");
    match engine(small, r#"{"num_envs": 4294967295, "obs_format": "none"}"#) {
        Ok(e) => {
            // SAFETY: a live engine, freed once.
            assert_eq!(unsafe { floe_engine_free(e) }, 0);
        }
        Err((status, message)) => assert_eq!(status, TOO_LARGE, "{message}"),
    }
    // SAFETY: live pools, each freed once.
    unsafe {
        assert_eq!(floe_pool_free(pool), 0);
        assert_eq!(floe_pool_free(many), 0);
        assert_eq!(floe_pool_free(small), 0);
    }
}
