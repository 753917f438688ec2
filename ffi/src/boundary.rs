//! What every exported function does at the boundary: catch panics, turn errors into a status
//! and the calling thread's last error message, and read C arguments (pointers, lengths,
//! strings) only after checking them.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use floe_core::engine::{EngineError, OpenError};
use floe_core::TooLarge;
use floe_plugin_api::{ConfigError, PluginError};

/// The status every function returns: `FLOE_STATUS_*` of `floe_types.h`.
pub type floe_status = i32;

/// The codes of `floe_types.h`; 1–7 are the plugin ABI's ([`PluginError::code`]).
pub(crate) mod status {
    use super::floe_status;
    pub(crate) const OK: floe_status = 0;
    pub(crate) const FAILED: floe_status = 1;
    pub(crate) const PANICKED: floe_status = 2;
    pub(crate) const UNSUPPORTED: floe_status = 3;
    pub(crate) const BAD_INPUT: floe_status = 4;
    pub(crate) const BAD_OUTPUT: floe_status = 5;
    pub(crate) const CONFIG: floe_status = 6;
    pub(crate) const NULL_POINTER: floe_status = 8;
    pub(crate) const BUFFER_SIZE: floe_status = 9;
    pub(crate) const WRONG_HANDLE: floe_status = 10;
    pub(crate) const BAD_UTF8: floe_status = 11;
    pub(crate) const IO: floe_status = 12;
    pub(crate) const GPU: floe_status = 13;
    pub(crate) const NOT_RESET: floe_status = 14;
    #[cfg_attr(not(feature = "train"), allow(dead_code))]
    pub(crate) const CANCELLED: floe_status = 15;
    #[cfg_attr(all(feature = "train", feature = "gpu"), allow(dead_code))]
    pub(crate) const NOT_BUILT: floe_status = 16;
    pub(crate) const TOO_LARGE: floe_status = 17;
}

/// A failure on its way to the caller: a status and a message.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) status: floe_status,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn new(status: floe_status, message: impl Into<String>) -> Self {
        Self { status, message: message.into() }
    }

    pub(crate) fn bad_input(message: impl Into<String>) -> Self {
        Self::new(status::BAD_INPUT, message)
    }
}

impl From<EngineError> for Error {
    fn from(e: EngineError) -> Self {
        let status = match &e {
            EngineError::BufferSize { .. } => status::BUFFER_SIZE,
            EngineError::NotReset(_) => status::NOT_RESET,
            EngineError::Gpu(_) => status::GPU,
            EngineError::StepReward(_) => status::FAILED,
            EngineError::TooLarge(_) => status::TOO_LARGE,
            _ => status::BAD_INPUT,
        };
        Self::new(status, e.to_string())
    }
}

/// A refusal to open an engine.
impl From<OpenError> for Error {
    fn from(e: OpenError) -> Self {
        let code = match e {
            OpenError::Config(_) => status::CONFIG,
            OpenError::Gpu(_) => status::GPU,
            OpenError::NotBuilt => status::NOT_BUILT,
            OpenError::TooLarge(_) => status::TOO_LARGE,
        };
        Self::new(code, e.to_string())
    }
}

/// Memory a call needs that cannot be had: FLOE_STATUS_TOO_LARGE, with the bytes asked for.
impl From<TooLarge> for Error {
    fn from(e: TooLarge) -> Self {
        Self::new(status::TOO_LARGE, e.to_string())
    }
}

impl From<PluginError> for Error {
    fn from(e: PluginError) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Self::new(status::CONFIG, e.to_string())
    }
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// A C string of `text`, with any NUL byte inside replaced (messages and JSON never need one).
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{fffd}")).unwrap_or_default()
}

fn set_last_error(message: &str) {
    LAST_ERROR.with_borrow_mut(|e| *e = c_string(message));
}

/// The calling thread's last failure message; valid until that thread's next failing call.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with_borrow(|e| e.as_ptr())
}

/// Runs the body of an exported function: its error becomes the status and the thread's last
/// error; a panic is caught and becomes `FLOE_STATUS_PANICKED`.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> floe_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => status::OK,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            set_last_error(&format!("internal error (a panic was caught at the C boundary): {what}"));
            status::PANICKED
        }
    }
}

/// A required pointer argument.
pub(crate) fn non_null<T>(ptr: *const T, what: &str) -> Result<()> {
    if ptr.is_null() {
        Err(Error::new(status::NULL_POINTER, format!("{what} is NULL")))
    } else {
        Ok(())
    }
}

fn check_array<T>(ptr: *const T, len: usize, what: &str) -> Result<bool> {
    if len == 0 {
        return Ok(false);
    }
    non_null(ptr, what)?;
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::bad_input(format!("{what} is not aligned for its element type")));
    }
    if len.checked_mul(std::mem::size_of::<T>()).is_none_or(|n| n > isize::MAX as usize) {
        return Err(Error::new(status::BUFFER_SIZE, format!("{what}: a length of {len} is too large")));
    }
    Ok(true)
}

/// `len` elements at `ptr` (NULL allowed when `len` is 0).
///
/// # Safety
/// When `len > 0` and `ptr` is not NULL, `ptr` must point to `len` initialised elements that stay
/// valid and unchanged for `'a`.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if !check_array(ptr, len, what)? {
        return Ok(&[]);
    }
    // SAFETY: not NULL, aligned, and the size fits in isize (checked above); the caller
    // guarantees `len` valid elements for 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` writable elements at `ptr` (NULL allowed when `len` is 0).
///
/// # Safety
/// When `len > 0` and `ptr` is not NULL, `ptr` must point to `len` elements writable by this call
/// alone for `'a`, overlapping no other slice made for the same call.
pub(crate) unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize, what: &str) -> Result<&'a mut [T]> {
    if !check_array(ptr, len, what)? {
        return Ok(&mut []);
    }
    // SAFETY: as in `slice`; the caller guarantees exclusive access for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `ptr`, when not NULL, must point to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, what: &str) -> Result<&'a str> {
    non_null(ptr, what)?;
    // SAFETY: not NULL; the caller guarantees a NUL-terminated string valid for 'a.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str().map_err(|e| Error::new(status::BAD_UTF8, format!("{what} is not UTF-8: {e}")))
}

/// An optional string argument: NULL is `None`.
///
/// # Safety
/// As [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(ptr: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { str_arg(ptr, what) }.map(Some)
    }
}

/// Writes `value` through a required out-pointer.
///
/// # Safety
/// `out`, when not NULL, must be valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T, what: &str) -> Result<()> {
    non_null(out, what)?;
    if !(out as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::bad_input(format!("{what} is not aligned")));
    }
    // SAFETY: not NULL and aligned; the caller guarantees it is valid for a write.
    unsafe { out.write(value) };
    Ok(())
}

/// Hands a string to the caller, who frees it with `floe_string_free`.
///
/// # Safety
/// As [`write_out`].
pub(crate) unsafe fn write_string(out: *mut *mut c_char, text: &str, what: &str) -> Result<()> {
    non_null(out, what)?;
    let raw = c_string(text).into_raw();
    // SAFETY: checked not NULL; the caller guarantees it is valid for a write.
    unsafe { write_out(out, raw, what) }.inspect_err(|_| {
        // SAFETY: `raw` came from `CString::into_raw` just above and was not handed out.
        drop(unsafe { CString::from_raw(raw) });
    })
}

/// Checks an out-pointer (not NULL, aligned for `T`) before any work is done, so that a refused
/// call changes nothing and a handle made by the call is never left without an owner.
pub(crate) fn check_out<T>(ptr: *mut T, what: &str) -> Result<()> {
    non_null(ptr, what)?;
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::bad_input(format!("{what} is not aligned")));
    }
    Ok(())
}
