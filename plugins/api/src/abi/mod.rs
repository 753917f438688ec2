//! The abi_stable interface: the root module a Rust plugin library exports, and the objects that
//! carry plugin instances across it.
//!
//! # Shape
//! - [`FloePluginLib`] is the root module (a prefix type): `plugins()` lists the library's
//!   plugins, `new_reward` / `new_curriculum` / `new_engineer` make one by name from its
//!   parameters (JSON text), `capabilities()` (appended) gives what each plugin declares, and
//!   `new_level_sampler` (appended) makes a level sampler. It **only grows by appending fields** after the one marked
//!   `#[sabi(last_prefix_field)]`; a host reads appended fields as `Option`s, so an older
//!   library still loads in a newer host.
//! - A plugin instance is an [`FfiRewardFn`], [`FfiCurriculum`] or [`FfiEnvEngineer`]: an
//!   opaque state (`DynTrait` over the library's boxed plugin) and a `'static` table of
//!   `extern "C"` functions, itself a prefix type that grows the same way. The state is dropped
//!   by the library that made it.
//! - Batches cross as slices of the `#[repr(C)]` records of [`crate::records`]; configurations,
//!   histories and engineer replies cross as **JSON text** (`RStr` in, `RString` out), parsed
//!   and validated on both sides by [`crate::RoundConfig::validate`] and
//!   [`crate::History::validate`]. JSON keeps the structured types free to grow without an
//!   ABI break, and is the same representation the C ABI uses.
//! - Every exported function runs the plugin under `catch_unwind`: a panic becomes an
//!   [`FfiError`] with code 2, and the instance is poisoned (later calls fail the same way)
//!   because its state may be half-updated. (A library built with `panic = "abort"` cannot be
//!   protected this way.)
//!
//! This module uses no `unsafe`: the layouts are checked by abi_stable when the host calls
//! `init_root_module`, and calls through the tables are safe `extern "C"` function pointers.

// abi_stable's types are `#[repr(C)]` and checked by its own layout checker; the compiler's
// FFI-safety lint does not know that the phantom types inside `DynTrait` are zero-sized.
#![allow(improper_ctypes_definitions)]

mod engineer_table;
mod export;
mod objects;
mod root;
mod sampler_table;
mod state;
#[cfg(test)]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};

use abi_stable::std_types::{RResult, RString};
use abi_stable::StableAbi;

pub use engineer_table::{EngineerVTable, EngineerVTableRef};
pub use export::root_module;
pub use objects::{
    CurriculumVTable, CurriculumVTableRef, FfiCurriculum, FfiEnvEngineer, FfiRewardFn, RewardVTable,
    RewardVTableRef,
};
pub use root::{FloePluginLib, FloePluginLibRef};
pub use sampler_table::{FfiLevelPlan, FfiLevelSampler, SamplerVTable, SamplerVTableRef};
pub use state::{FfiState, StateInterface};

use crate::catalog::{Capabilities, PluginInfo, PluginKind};
use crate::error::PluginError;

/// What a plugin of a library without the root module's `capabilities` field is taken to
/// declare: every call its kind's function table offers (a reward scores plans and steps, a
/// curriculum replays), as the host called them before capabilities were declared; a call the
/// plugin does not implement still answers [`PluginError::Unsupported`].
#[must_use]
pub fn legacy_capabilities(kind: PluginKind) -> Capabilities {
    match kind {
        PluginKind::Reward => Capabilities::SCORES_PLANS.with(Capabilities::SCORES_STEPS),
        PluginKind::Curriculum => Capabilities::REPLAYS,
        PluginKind::EnvEngineer | PluginKind::LevelSampler => Capabilities::NONE,
    }
}

/// An error crossing the abi_stable boundary: a [`PluginError`] code and its message.
#[repr(C)]
#[derive(Debug, Clone, PartialEq, Eq, StableAbi)]
pub struct FfiError {
    /// [`PluginError::code`].
    pub code: i32,
    /// [`PluginError::message`].
    pub message: RString,
}

impl From<PluginError> for FfiError {
    fn from(e: PluginError) -> Self {
        FfiError { code: e.code(), message: e.message().into() }
    }
}

impl From<FfiError> for PluginError {
    fn from(e: FfiError) -> Self {
        PluginError::from_code(e.code, e.message.into_string())
    }
}

/// A plugin's description as it crosses the boundary (`kind` is a [`PluginKind`] code, so a
/// newer library's unknown kind reads as a number rather than breaking the layout).
#[repr(C)]
#[derive(Debug, Clone, PartialEq, Eq, StableAbi)]
pub struct FfiPluginInfo {
    /// [`PluginKind::code`].
    pub kind: u32,
    /// Name.
    pub name: RString,
    /// Version.
    pub version: RString,
    /// One line for people.
    pub description: RString,
}

impl From<PluginInfo> for FfiPluginInfo {
    fn from(i: PluginInfo) -> Self {
        FfiPluginInfo {
            kind: i.kind.code(),
            name: i.name.into(),
            version: i.version.into(),
            description: i.description.into(),
        }
    }
}

impl FfiPluginInfo {
    /// The description with the capabilities the library declared (the code from its
    /// `capabilities()`, or `None` for a library without that field: [`legacy_capabilities`]).
    ///
    /// # Errors
    /// A message for a kind this host does not know, or capabilities that do not fit the kind
    /// ([`Capabilities::check`]).
    pub fn to_info(&self, capabilities: Option<u32>) -> Result<PluginInfo, String> {
        let kind =
            PluginKind::from_code(self.kind).ok_or_else(|| format!("unknown kind code {}", self.kind))?;
        let capabilities = capabilities.map_or(legacy_capabilities(kind), Capabilities::from_bits);
        capabilities.check(kind)?;
        Ok(PluginInfo {
            kind,
            name: self.name.to_string(),
            version: self.version.to_string(),
            description: self.description.to_string(),
            capabilities,
        })
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// Runs `f` with panics caught, as an ABI result.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T, PluginError>) -> RResult<T, FfiError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => RResult::ROk(v),
        Ok(Err(e)) => RResult::RErr(e.into()),
        Err(payload) => RResult::RErr(PluginError::Panicked(panic_message(&*payload)).into()),
    }
}

/// A plugin inside a library: poisoned after a panic; dropped with panics caught.
pub(crate) struct Holder<T: ?Sized> {
    inner: Option<Box<T>>,
    poisoned: Option<String>,
}

impl<T: ?Sized> Holder<T> {
    pub(crate) fn new(inner: Box<T>) -> Self {
        Holder { inner: Some(inner), poisoned: None }
    }

    /// Runs `f` on the plugin with panics caught; a panic poisons the holder.
    pub(crate) fn call<R>(
        &mut self,
        f: impl FnOnce(&mut T) -> Result<R, PluginError>,
    ) -> Result<R, PluginError> {
        if let Some(m) = &self.poisoned {
            return Err(PluginError::Panicked(format!("an earlier call panicked ({m})")));
        }
        let Some(inner) = self.inner.as_deref_mut() else {
            return Err(PluginError::Failed("the plugin is gone".into()));
        };
        match catch_unwind(AssertUnwindSafe(|| f(inner))) {
            Ok(r) => r,
            Err(payload) => {
                let m = panic_message(&*payload);
                self.poisoned = Some(m.clone());
                Err(PluginError::Panicked(m))
            }
        }
    }
}

impl<T: ?Sized> Drop for Holder<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            // A panic in the plugin's destructor must not unwind out of the library.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(inner)));
        }
    }
}
