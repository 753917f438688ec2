//! Opening shared libraries and probing their symbols.

#![allow(unsafe_code)]

use std::path::Path;

/// Opens a shared library.
pub(crate) fn open(path: &Path) -> Result<libloading::Library, libloading::Error> {
    // SAFETY: loading a library runs its initialisers, which may do anything; that is the trust
    // a user gives a plugin by naming it. Nothing else is called or read from the library here.
    unsafe { libloading::Library::new(path) }
}

/// Whether the library exports `symbol` (NUL-terminated).
pub(crate) fn has_symbol(lib: &libloading::Library, symbol: &[u8]) -> bool {
    // SAFETY: only the symbol's presence is checked; the address is never read or called, and the
    // type named for it is a plain pointer.
    unsafe { lib.get::<*const ()>(symbol) }.is_ok()
}
