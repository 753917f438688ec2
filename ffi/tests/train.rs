//! Training and evaluation through the C API (feature `train`): a tiny run with progress
//! reported to a C callback, cancelled through the flag and resumed to the end, then its
//! checkpoint evaluated on a pool.
#![cfg(feature = "train")]

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use floe::*;

/// The CLI's training tests' tiny configuration (3 short rounds).
const TINY: &str = include_str!("../../tests/fixtures/tiny-train.json");

struct Seen {
    stages: Mutex<Vec<String>>,
    cancel: AtomicU32,
}

unsafe extern "C" fn on_progress(user: *mut c_void, stage: *const c_char, _done: u64, total: u64) {
    // SAFETY: `user` is the `Seen` passed below, alive for the run; `stage` is NUL-terminated.
    let (seen, stage) = unsafe { (&*(user as *const Seen), CStr::from_ptr(stage)) };
    let stage = stage.to_string_lossy().into_owned();
    if total != u64::MAX {
        let mut s = seen.stages.lock().unwrap();
        // Cancel as soon as the first GRPO round starts.
        if stage.starts_with("round") {
            seen.cancel.store(1, Ordering::Release);
        }
        if s.last() != Some(&stage) {
            s.push(stage);
        }
    }
}

fn message() -> String {
    // SAFETY: library-owned string.
    unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned()
}

#[test]
fn a_run_reports_progress_is_cancelled_resumes_and_evaluates() {
    let dir = std::env::temp_dir().join(format!("floe-ffi-train-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = CString::new(TINY).unwrap();
    let out = CString::new(dir.to_str().unwrap()).unwrap();
    let seen = Seen { stages: Mutex::new(Vec::new()), cancel: AtomicU32::new(0) };
    let user = &seen as *const Seen as *mut c_void;
    // SAFETY: valid strings, callback and flag alive for the call.
    let status = unsafe {
        floe_train_run(
            cfg.as_ptr(),
            out.as_ptr(),
            0,
            Some(on_progress),
            user,
            seen.cancel.as_ptr().cast_const(),
        )
    };
    assert_eq!(status, 15, "cancelled: {}", message());
    let stages = seen.stages.lock().unwrap().clone();
    assert!(stages.iter().any(|s| s.contains("warm")), "{stages:?}");
    assert!(dir.join("checkpoint.safetensors").exists(), "the cancelled run left a checkpoint");

    // Resume to the end, without a callback or flag.
    // SAFETY: as above.
    let status = unsafe { floe_train_run(cfg.as_ptr(), out.as_ptr(), 1, None, ptr::null_mut(), ptr::null()) };
    assert_eq!(status, 0, "{}", message());

    // Evaluate the checkpoint on a small pool.
    let setting = CString::new(r#"{"size": 4, "agents": 2, "hole_ratio": 0.1}"#).unwrap();
    let mut pool: *mut floe_pool = ptr::null_mut();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { floe_pool_generate(setting.as_ptr(), 8, 5, &mut pool) }, 0, "{}", message());
    let ckpt = CString::new(dir.join("checkpoint.safetensors").to_str().unwrap()).unwrap();
    let mut report: *mut c_char = ptr::null_mut();
    // SAFETY: valid arguments.
    let status = unsafe { floe_eval_run(ckpt.as_ptr(), pool, None, ptr::null_mut(), &mut report) };
    assert_eq!(status, 0, "{}", message());
    // SAFETY: a string from the library, read, then freed once.
    let json = unsafe {
        let json = CStr::from_ptr(report).to_string_lossy().into_owned();
        floe_string_free(report);
        json
    };
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON report");
    assert!(value.to_string().contains("valid"), "{json}");

    // Bad input: configuration and checkpoint.
    let bad = CString::new(r#"{"seed": "x"}"#).unwrap();
    // SAFETY: valid arguments.
    let status = unsafe { floe_train_run(bad.as_ptr(), out.as_ptr(), 0, None, ptr::null_mut(), ptr::null()) };
    assert_eq!(status, 6);
    let missing = CString::new("/nonexistent/checkpoint.safetensors").unwrap();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { floe_eval_run(missing.as_ptr(), pool, None, ptr::null_mut(), &mut report) }, 4);
    // SAFETY: freed once.
    unsafe { floe_pool_free(pool) };
    let _ = std::fs::remove_dir_all(&dir);
}
