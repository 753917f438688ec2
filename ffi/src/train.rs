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

/// Runs a training configuration (the JSON of `floe train --config`; its plugins are resolved as
/// `floe train` resolves them) into `out_dir` (created if missing; with `resume` non-zero an
/// interrupted run there continues). `progress` (may be NULL) receives the stages; `cancel` (may
/// be NULL; a `uint32_t` valid until the call returns, stored to atomically, e.g. with C11
/// `atomic_store`) is polled: once the caller stores a non-zero value there from another thread,
/// the run stops between stages or before its next GRPO step with FLOE_STATUS_CANCELLED and
/// leaves a folder it can resume from. Blocks until the run ends.
///
/// Errors: FLOE_STATUS_NOT_BUILT without the `train` feature (then for every call); with it,
/// FLOE_STATUS_CONFIG for a configuration (or its plugins) that does not parse or validate,
/// FLOE_STATUS_IO for a folder that cannot be written or a run that cannot be resumed from it,
/// FLOE_STATUS_CANCELLED, FLOE_STATUS_FAILED for a run that fails (libtorch, the engine, the
/// generator), FLOE_STATUS_NULL_POINTER for a NULL `config_json` or `out_dir`,
/// FLOE_STATUS_BAD_UTF8 for a string that is not UTF-8, FLOE_STATUS_BAD_INPUT for a misaligned
/// `cancel`, or a plugin's own status (FLOE_STATUS_FAILED, FLOE_STATUS_PANICKED,
/// FLOE_STATUS_UNSUPPORTED, FLOE_STATUS_BAD_INPUT, FLOE_STATUS_BAD_OUTPUT, FLOE_STATUS_CONFIG or
/// FLOE_STATUS_UNKNOWN_PLUGIN).
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

/// Evaluates a checkpoint (a run folder's `checkpoint.safetensors`, as `floe eval` reads) on
/// every instance of `pool` (for a suite: `floe_pool_from_file` of its JSONL file) with greedy
/// answers, and gives the report as JSON in `*out_report_json` (`floe_string_free`): valid and
/// optimal rates per agent count and map size, as `floe eval --json` writes. `progress` may be
/// NULL.
///
/// Errors: FLOE_STATUS_NOT_BUILT without the `train` feature (then for every call); with it,
/// FLOE_STATUS_BAD_INPUT for a checkpoint that does not load or instances the model cannot read,
/// FLOE_STATUS_FAILED for an evaluation that fails (libtorch, the engine),
/// FLOE_STATUS_NULL_POINTER for a NULL `checkpoint_path`, `pool` or `out_report_json`,
/// FLOE_STATUS_WRONG_HANDLE for a `pool` that is not a live pool, FLOE_STATUS_BAD_UTF8 for a
/// `checkpoint_path` that is not UTF-8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_eval_run(
    checkpoint_path: *const c_char,
    pool: *const crate::pool::floe_pool,
    progress: floe_progress_fn,
    user_data: *mut c_void,
    out_report_json: *mut *mut c_char,
) -> floe_status {
    #[cfg(not(feature = "train"))]
    {
        let _ = (checkpoint_path, pool, progress, user_data, out_report_json);
        guard(|| Err(Error::new(status::NOT_BUILT, "this libfloe was built without the train feature")))
    }
    #[cfg(feature = "train")]
    // SAFETY: forwarded with the same contract.
    unsafe {
        with_train::eval_run(checkpoint_path, pool, progress, user_data, out_report_json)
    }
}

#[cfg(feature = "train")]
mod with_train {
    use std::ffi::{c_char, c_void, CString};
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::Duration;

    use floe_core::progress::Progress;
    use floe_train::error::RoundsError;
    use floe_train::{TrainConfig, TrainError};

    use super::floe_progress_fn;
    use crate::boundary::{c_string, check_out, floe_status, guard, status, str_arg, write_string, Error};
    use crate::handles;
    use crate::pool::floe_pool;

    impl From<TrainError> for Error {
        fn from(e: TrainError) -> Self {
            let code = match &e {
                TrainError::Rounds(RoundsError::Cancelled(_)) => status::CANCELLED,
                TrainError::Rounds(RoundsError::Io { .. }) => status::IO,
                TrainError::Input(_) | TrainError::Rounds(RoundsError::Input(_) | RoundsError::Config(_)) => {
                    status::CONFIG
                }
                TrainError::Rounds(RoundsError::Plugin(p)) => p.code(),
                _ => status::FAILED,
            };
            Error::new(code, e.to_string())
        }
    }

    /// The caller's callback as a [`Progress`]: one call at a time, from whichever thread.
    struct Callback {
        f: floe_progress_fn,
        user: *mut c_void,
        /// The current stage's name and total.
        stage: Mutex<(CString, u64)>,
        done: AtomicU64,
    }

    // SAFETY: the callback's contract (floe.h) lets the run call it from any thread, one call at
    // a time, which the mutex guarantees; `user` is only handed back to it.
    unsafe impl Sync for Callback {}

    impl Callback {
        fn new(f: floe_progress_fn, user: *mut c_void) -> Self {
            Callback { f, user, stage: Mutex::new((CString::default(), 0)), done: AtomicU64::new(0) }
        }

        fn call(&self, stage: &CString, done: u64, total: u64) {
            if let Some(f) = self.f {
                // SAFETY: a function pointer the caller gave for this purpose, with its own user
                // data; `stage` is NUL-terminated and outlives the call.
                unsafe { f(self.user, stage.as_ptr(), done, total) };
            }
        }
    }

    impl Progress for Callback {
        fn begin(&self, stage: &str, total: u64) {
            let mut g = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
            *g = (c_string(stage), total);
            self.done.store(0, Ordering::Relaxed);
            self.call(&g.0, 0, total);
        }

        fn advance(&self, n: u64, _note: &str) {
            let g = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
            let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
            self.call(&g.0, done, g.1);
        }

        fn end(&self, summary: &str) {
            let g = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
            let total = g.1.max(self.done.load(Ordering::Relaxed));
            self.call(&g.0, total, total);
            self.call(&c_string(summary), 0, u64::MAX);
        }

        fn line(&self, text: &str) {
            let _g = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
            self.call(&c_string(text), 0, u64::MAX);
        }
    }

    pub(super) unsafe fn train_run(
        config_json: *const c_char,
        out_dir: *const c_char,
        resume: i32,
        progress: floe_progress_fn,
        user_data: *mut c_void,
        cancel: *const u32,
    ) -> floe_status {
        guard(|| {
            // SAFETY: NUL-terminated strings or NULL (checked).
            let text = unsafe { str_arg(config_json, "config_json") }?;
            // SAFETY: as above.
            let out = unsafe { str_arg(out_dir, "out_dir") }?;
            if !cancel.is_null() && !(cancel as usize).is_multiple_of(std::mem::align_of::<u32>()) {
                return Err(Error::bad_input("cancel is not aligned for a uint32_t"));
            }
            let cfg = TrainConfig::from_json(text)?;
            // The plugins the configuration names, resolved by the registry as `floe train` does.
            let plugins = floe_plugin_registry::rounds_plugins(&cfg.rounds)
                .map_err(|e| Error::new(status::CONFIG, e.to_string()))?;
            let flag = Arc::new(AtomicBool::new(false));
            let mut opts = floe_train::RunOptions::new(out);
            opts.resume = resume != 0;
            opts.cancel = Some(Arc::clone(&flag));
            let finished = AtomicBool::new(false);
            let cb = Callback::new(progress, user_data);
            let cancel_addr = cancel as usize;
            std::thread::scope(|scope| {
                if cancel_addr != 0 {
                    scope.spawn(|| {
                        // SAFETY: the caller keeps `cancel` valid and aligned (checked) until
                        // floe_train_run returns, this thread ends before that, and the caller
                        // stores to it atomically (floe.h).
                        let word = unsafe { AtomicU32::from_ptr(cancel_addr as *mut u32) };
                        while !finished.load(Ordering::Acquire) {
                            if word.load(Ordering::Acquire) != 0 {
                                flag.store(true, Ordering::Release);
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    });
                }
                let result = floe_train::run_with_progress(&cfg, &opts, plugins, &cb);
                finished.store(true, Ordering::Release);
                result.map(|_| ()).map_err(Error::from)
            })
        })
    }

    pub(super) unsafe fn eval_run(
        checkpoint_path: *const c_char,
        pool: *const floe_pool,
        progress: floe_progress_fn,
        user_data: *mut c_void,
        out_report_json: *mut *mut c_char,
    ) -> floe_status {
        guard(|| {
            check_out(out_report_json, "out_report_json")?;
            // SAFETY: a NUL-terminated string or NULL (checked).
            let path = unsafe { str_arg(checkpoint_path, "checkpoint_path") }?;
            let pool = handles::get(pool, "pool")?;
            let policy = floe_train::load_policy(std::path::Path::new(path))
                .map_err(|e| Error::bad_input(e.to_string()))?;
            for (i, inst) in pool.instances.iter().enumerate() {
                policy
                    .config
                    .layout
                    .check(inst)
                    .map_err(|e| Error::bad_input(format!("instance {i}: {e}")))?;
            }
            let refs: Vec<&floe_core::Instance> = pool.instances.iter().collect();
            let cb = Callback::new(progress, user_data);
            cb.begin("evaluation", refs.len() as u64);
            let (report, _) = floe_train::evaluate_each(&policy, &refs, 64, &cb)
                .map_err(|e| Error::new(status::FAILED, e.to_string()))?;
            cb.end("evaluated");
            let json = serde_json::to_string(&report.to_json()).unwrap_or_default();
            // SAFETY: checked not NULL.
            unsafe { write_string(out_report_json, &json, "out_report_json") }
        })
    }
}
