//! Opaque handles. A handle is a token, never an address: a number the library hands out once
//! and never again (a counter), kept in a registry of live handles together with the object
//! and its kind tag. Every call looks the token up first: a handle of another kind, a freed one
//! or a pointer the library never made is `FLOE_STATUS_WRONG_HANDLE`, never a read of foreign
//! memory; and since no token is reused, a freed handle can never reach an object made after
//! it, whatever memory that object took. The call then holds its own reference, so a handle
//! freed by another thread meanwhile stays valid until the call returns.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use crate::boundary::{status, Error, Result};

/// The kind tag of a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Pool,
    Engine,
    Plugin,
    Levels,
    Decision,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pool => "floe_pool",
            Kind::Engine => "floe_engine",
            Kind::Plugin => "floe_plugin",
            Kind::Levels => "floe_levels",
            Kind::Decision => "floe_decision",
        }
    }
}

/// A type handed to C as an opaque handle.
pub(crate) trait Handle: Send + Sync + 'static {
    const KIND: Kind;
}

/// A live handle's object and kind.
struct Entry {
    kind: Kind,
    object: Arc<dyn Any + Send + Sync>,
}

/// Tokens are multiples of this, so that they look like the aligned pointers C expects.
const STEP: usize = 16;

/// The live handles, by token. A `BTreeMap`, not a hash map: its nodes are pointed to at their
/// start, so a leak checker at exit (valgrind, LSan) sees the registry and every object in it as
/// reachable (and so does not report handles a host forgot to free), where a hash table's
/// pointer into the middle of its allocation reads as "possibly lost".
fn registry() -> MutexGuard<'static, BTreeMap<usize, Entry>> {
    static LIVE: LazyLock<Mutex<BTreeMap<usize, Entry>>> = LazyLock::new(Mutex::default);
    // The map is only inserted into and removed from; a panic cannot leave it inconsistent.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The next token: each is handed out once. (On a 64-bit machine the counter would take
/// centuries to wrap at a billion handles a second; should it wrap, tokens of live handles are
/// skipped, so two live handles never share one.)
fn next_token(live: &BTreeMap<usize, Entry>) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    loop {
        let token = NEXT.fetch_add(1, Ordering::Relaxed).wrapping_mul(STEP);
        if token != 0 && !live.contains_key(&token) {
            return token;
        }
    }
}

/// Makes a handle of `value`.
pub(crate) fn new<T: Handle>(value: T) -> *mut T {
    let mut live = registry();
    let token = next_token(&live);
    live.insert(token, Entry { kind: T::KIND, object: Arc::new(value) });
    // A token, never dereferenced: a pointer without provenance.
    std::ptr::without_provenance_mut(token)
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
    let token = ptr.addr();
    let live = registry();
    match live.get(&token) {
        Some(e) if e.kind == T::KIND => {
            Arc::clone(&e.object).downcast::<T>().map_err(|_| wrong(token, T::KIND, Some(e.kind), what))
        }
        found => Err(wrong(token, T::KIND, found.map(|e| e.kind), what)),
    }
}

/// Frees a handle; NULL is accepted and does nothing.
pub(crate) fn free<T: Handle>(ptr: *const T, what: &str) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let token = ptr.addr();
    let mut live = registry();
    match live.get(&token) {
        Some(e) if e.kind == T::KIND => {
            let entry = live.remove(&token);
            drop(live);
            // The object goes when the last call that holds it returns.
            drop(entry);
            Ok(())
        }
        found => Err(wrong(token, T::KIND, found.map(|e| e.kind), what)),
    }
}

/// Locks a handle's mutable part. A panic inside an earlier call poisons it: the handle may be
/// half-changed, so every later call but `_free` is refused.
pub(crate) fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<MutexGuard<'a, T>> {
    m.lock().map_err(|_| {
        Error::new(status::PANICKED, format!("{what} is unusable: an earlier call on it panicked"))
    })
}
