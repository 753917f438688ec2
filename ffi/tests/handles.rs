//! A freed handle stays FLOE_STATUS_WRONG_HANDLE for good: not only until the allocator hands
//! its memory to a new object of the same kind.

use std::ffi::CString;
use std::ptr;

use floe::*;

/// FLOE_STATUS_WRONG_HANDLE of `floe_types.h`.
const WRONG_HANDLE: floe_status = 10;

const ONE: &str = r#"{"grid": ["FF", "FF"], "agents": [{"start": [0, 0], "goal": [1, 1]}]}"#;
const TWO: &str = r#"[{"grid": ["FF", "FF"], "agents": [{"start": [0, 0], "goal": [1, 1]}]},
    {"grid": ["FF", "FF"], "agents": [{"start": [0, 1], "goal": [1, 0]}]}]"#;

fn pool(json: &str) -> *mut floe_pool {
    let text = CString::new(json).unwrap();
    let mut p = ptr::null_mut();
    // SAFETY: a NUL-terminated string and a writable out-pointer.
    assert_eq!(unsafe { floe_pool_from_json(text.as_ptr(), 0, &mut p) }, 0);
    p
}

fn count(p: *const floe_pool) -> Result<usize, floe_status> {
    let mut n = usize::MAX;
    // SAFETY: `n` is writable; the handle is checked by the library.
    match unsafe { floe_pool_count(p, &mut n) } {
        0 => Ok(n),
        s => Err(s),
    }
}

#[test]
fn a_freed_handle_never_reaches_a_later_object() {
    let stale = pool(ONE);
    assert_eq!(count(stale), Ok(1));
    // SAFETY: a live pool, freed once.
    assert_eq!(unsafe { floe_pool_free(stale) }, 0);
    for round in 0..2000 {
        let fresh = pool(TWO);
        assert_ne!(fresh, stale, "round {round}: a new pool was handed the freed one's handle");
        assert_eq!(count(stale), Err(WRONG_HANDLE), "round {round}: the freed handle answered");
        // SAFETY: a freed handle: the library refuses it.
        assert_eq!(unsafe { floe_pool_free(stale) }, WRONG_HANDLE, "round {round}");
        assert_eq!(count(fresh), Ok(2), "round {round}: the new pool was freed through the stale handle");
        // Engines too: a freed engine's handle is not a later engine's.
        let mut engine = ptr::null_mut();
        let cfg = CString::new(r#"{"num_envs": 2}"#).unwrap();
        // SAFETY: a live pool, a NUL-terminated string, a writable out-pointer.
        assert_eq!(unsafe { floe_engine_new(fresh, cfg.as_ptr(), &mut engine) }, 0);
        // SAFETY: live handles, each freed once.
        unsafe {
            assert_eq!(floe_engine_free(engine), 0);
            assert_eq!(floe_engine_free(engine), WRONG_HANDLE);
            assert_eq!(floe_pool_free(fresh), 0);
        }
    }
}
