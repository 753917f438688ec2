//! Training and evaluation (feature `train`, which links libtorch through floe-train). Without
//! the feature both functions are FLOE_STATUS_NOT_BUILT.

use std::ffi::{c_char, c_void};

use crate::boundary::floe_status;
#[cfg(not(feature = "train"))]
use crate::boundary::{guard, status, Error};

/// Progress of a run: called with a stage's name (valid during the call), units done so far and
/// the stage's total (0 when unknown); `done == total` ends a stage, and a line of text (a
/// stage's summary) comes with `total == UINT64_MAX`. It may be called from any thread of the
/// run, one call at a time. Its return value is ignored; cancel with the cancel flag.
pub type floe_progress_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, stage: *const c_char, done: u64, total: u64)>;

/// Runs a training configuration (the JSON of `floe train --config`) into `out_dir` (created if
/// missing; with `resume` non-zero an interrupted run there continues). `progress` (may be NULL)
/// receives the stages; `cancel` (may be NULL) is polled: once the caller stores a non-zero value
/// there (from any thread), the run stops at the next step with FLOE_STATUS_CANCELLED and leaves
/// a folder it can resume from. Blocks until the run ends.
///
/// Errors: FLOE_STATUS_CONFIG, FLOE_STATUS_IO, FLOE_STATUS_CANCELLED, FLOE_STATUS_NOT_BUILT
/// without the `train` feature.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_train_run(
    config_json: *const c_char,
    out_dir: *const c_char,
    resume: i32,
    progress: floe_progress_fn,
    user_data: *mut c_void,
    cancel: *const u32,
) -> floe_status {
    #[cfg(not(feature = "train"))]
    {
        let _ = (config_json, out_dir, resume, progress, user_data, cancel);
        guard(|| Err(Error::new(status::NOT_BUILT, "this libfloe was built without the train feature")))
    }
    #[cfg(feature = "train")]
    // SAFETY: forwarded with the same contract.
    unsafe {
        with_train::train_run(config_json, out_dir, resume, progress, user_data, cancel)
    }
}

/// Evaluates the checkpoint of the run folder `run_dir` on the suite file `suite_path` (JSONL, as
/// `floe suite` writes) and gives the report as JSON in `*out_report_json` (`floe_string_free`):
/// valid and optimal rates per agent count and map size.
///
/// Errors: FLOE_STATUS_IO, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_NOT_BUILT without the `train`
/// feature.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_eval_run(
    run_dir: *const c_char,
    suite_path: *const c_char,
    out_report_json: *mut *mut c_char,
) -> floe_status {
    #[cfg(not(feature = "train"))]
    {
        let _ = (run_dir, suite_path, out_report_json);
        guard(|| Err(Error::new(status::NOT_BUILT, "this libfloe was built without the train feature")))
    }
    #[cfg(feature = "train")]
    // SAFETY: forwarded with the same contract.
    unsafe {
        with_train::eval_run(run_dir, suite_path, out_report_json)
    }
}
