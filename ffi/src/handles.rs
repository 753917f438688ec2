//! Opaque handles. A handle is the address of an `Arc` the library keeps in a registry of live
//! handles together with its kind tag. Every call looks the address up first: a handle of
//! another kind, a freed one or a pointer the library never made is `FLOE_STATUS_WRONG_HANDLE`,
//! never a read of foreign memory. The call then holds its own reference, so a handle freed by
//! another thread meanwhile stays valid until the call returns.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use crate::boundary::{status, Error, Result};

/// The kind tag of a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Pool,
    Engine,
    Plugin,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pool => "floe_pool",
            Kind::Engine => "floe_engine",
            Kind::Plugin => "floe_plugin",
        }
    }
}

/// A type handed to C as an opaque handle.
pub(crate) trait Handle: Send + Sync + 'static {
    const KIND: Kind;
}

/// The live handles. A `BTreeMap`, not a hash map: its nodes are pointed to at their start, so a
/// leak checker at exit (valgrind) sees the registry as reachable, where a hash table's pointer
/// into the middle of its allocation reads as "possibly lost".
fn registry() -> MutexGuard<'static, BTreeMap<usize, Kind>> {
    static LIVE: LazyLock<Mutex<BTreeMap<usize, Kind>>> = LazyLock::new(Mutex::default);
    // The map is only inserted into and removed from; a panic cannot leave it inconsistent.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Makes a handle of `value`.
pub(crate) fn new<T: Handle>(value: T) -> *mut T {
    let ptr = Arc::into_raw(Arc::new(value));
    registry().insert(ptr as usize, T::KIND);
    ptr.cast_mut()
}

fn wrong(ptr: usize, want: Kind, found: Option<Kind>, what: &str) -> Error {
    let found = match found {
        Some(k) => format!("a {}", k.name()),
        None if ptr == 0 => "NULL".into(),
        None => "not a live handle (freed, or not made by libfloe)".into(),
    };
    let status = if ptr == 0 { status::NULL_POINTER } else { status::WRONG_HANDLE };
    Error::new(status, format!("{what}: expected a {}, got {found}", want.name()))
}

/// The object behind a handle argument.
pub(crate) fn get<T: Handle>(ptr: *const T, what: &str) -> Result<Arc<T>> {
    let live = registry();
    match live.get(&(ptr as usize)) {
        Some(&k) if k == T::KIND => {
            // SAFETY: the registry holds the address of a live `Arc<T>` made by `new` (its kind
            // is T's); the registry's lock keeps `free` from releasing it before this call has
            // taken a reference of its own.
            Ok(unsafe {
                Arc::increment_strong_count(ptr);
                Arc::from_raw(ptr)
            })
        }
        found => Err(wrong(ptr as usize, T::KIND, found.copied(), what)),
    }
}

/// Frees a handle; NULL is accepted and does nothing.
pub(crate) fn free<T: Handle>(ptr: *const T, what: &str) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let mut live = registry();
    match live.get(&(ptr as usize)) {
        Some(&k) if k == T::KIND => {
            live.remove(&(ptr as usize));
            drop(live);
            // SAFETY: the address was live with T's kind and is now out of the registry, so this
            // is the one release of the reference `new` handed out.
            drop(unsafe { Arc::from_raw(ptr) });
            Ok(())
        }
        found => Err(wrong(ptr as usize, T::KIND, found.copied(), what)),
    }
}

/// Locks a handle's mutable part. A panic inside an earlier call poisons it: the handle may be
/// half-changed, so every later call but `_free` is refused.
pub(crate) fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<MutexGuard<'a, T>> {
    m.lock().map_err(|_| {
        Error::new(status::PANICKED, format!("{what} is unusable: an earlier call on it panicked"))
    })
}
