//! # floe-plugin-host
//!
//! Loads floe plugins from shared libraries by path and hands them out as the traits of
//! `floe-plugin-api` ([`RewardFn`], [`Curriculum`], [`EnvEngineer`], [`LevelSampler`]), whatever
//! their ABI:
//!
//! - **Rust (abi_stable)** libraries export the root module `FloePluginLib` and may hold several
//!   plugins. They are loaded with `lib_header_from_path(path)?.init_root_module()`, which checks
//!   the interface version and the layout of every type reachable from the root module; not
//!   with abi_stable's caching `load_from_file`, so any number of libraries of one interface
//!   load side by side. abi_stable never unloads a library.
//! - **C** libraries export `floe_plugin_entry_v1` (`floe_plugin.h`) and hold one plugin. The
//!   host reads the ABI version before anything else, checks the struct's size, kind, strings,
//!   function pointers and declared capabilities, reads only the fields the struct's size
//!   covers (a field appended after the plugin was built takes its documented default), and
//!   keeps the library loaded while any instance lives.
//!
//! [`load`] tells the two apart by their symbols (the C entry point first), and every failure
//! (no such file, not a shared library, no entry point, wrong ABI version, layout mismatch, a
//! failing entry point) is a [`LoadError`] with the path and the reason: the caller reports it
//! and goes on. Calls into a plugin return `Result`s: a Rust plugin's panic is caught inside its
//! library, a C plugin's error code comes back with its message, and everything a plugin returns
//! is checked (lengths, finite rewards, valid configurations, indices in range).
//!
//! `floe-plugin-registry` resolves a [`PluginSpec`] (a built-in name or a library path, with
//! parameters) into a plugin, loading libraries here; this crate only loads.
//!
//! `unsafe` is denied in this crate except in the dynamic loading and the C ABI (`dl.rs`,
//! `c.rs`), where each block has a `SAFETY` note; the abi_stable side needs none.

#![deny(unsafe_code)]

mod c;
mod dl;
mod rust;

use std::path::{Path, PathBuf};

use floe_plugin_api::{Curriculum, EnvEngineer, LevelSampler, PluginInfo, PluginKind, RewardFn};
pub use floe_plugin_api::{PluginError, PluginSpec};
use serde::Serialize;
use thiserror::Error;

/// The ABI of a loaded library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Abi {
    /// A Rust library with an abi_stable root module.
    AbiStable,
    /// A C library with `floe_plugin_entry_v1`.
    C,
}

impl Abi {
    /// The snake-case name (as in JSON).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Abi::AbiStable => "abi_stable",
            Abi::C => "c",
        }
    }
}

/// Why a library could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LoadFailure {
    /// No file at the path.
    #[error("no such file")]
    NotFound,
    /// The file is not a loadable shared library.
    #[error("cannot open as a shared library: {0}")]
    Open(String),
    /// Neither `floe_plugin_entry_v1` nor an abi_stable root module is exported.
    #[error(
        "no floe plugin entry point: the library exports neither `floe_plugin_entry_v1` nor an abi_stable root module"
    )]
    NoEntryPoint,
    /// A C plugin reports an ABI version this host does not speak.
    #[error("C plugin ABI version {found}, this host speaks version {expected}")]
    AbiVersion {
        /// The plugin's `abi_version`.
        found: u32,
        /// [`floe_plugin_api::C_ABI_VERSION`].
        expected: u32,
    },
    /// A C plugin's struct is smaller than version 1's first release.
    #[error(
        "C plugin struct_size {found} is smaller than the first release of floe_plugin_v1 ({expected} bytes)"
    )]
    StructSize {
        /// The plugin's `struct_size`.
        found: u32,
        /// The size this host expects at least.
        expected: u32,
    },
    /// An abi_stable library was built against an incompatible version of the interface.
    #[error("incompatible interface version: {0}")]
    Version(String),
    /// An abi_stable library's root module does not have the layout this host expects.
    #[error("root module layout mismatch: {summary}")]
    Layout {
        /// abi_stable's verdict, on one line.
        summary: String,
        /// abi_stable's full report (both layouts, many lines).
        report: String,
    },
    /// An abi_stable library's root module function failed or panicked.
    #[error("the root module could not be initialised: {0}")]
    RootModule(String),
    /// A C plugin's entry point returned an error.
    #[error("the entry point failed with status {code}: {message}")]
    Entry {
        /// The status it returned.
        code: i32,
        /// Its message.
        message: String,
    },
    /// The plugin describes itself wrongly (NULL or non-UTF-8 strings, unknown kind, missing
    /// functions).
    #[error("malformed plugin: {0}")]
    Malformed(String),
    /// The library could not list its plugins.
    #[error("the library could not list its plugins: {0}")]
    Plugins(PluginError),
}

/// A library that could not be loaded, and why.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{}: {reason}", path.display())]
pub struct LoadError {
    /// The library's path.
    pub path: PathBuf,
    /// Why it failed.
    pub reason: LoadFailure,
}

impl LoadError {
    fn new(path: &Path, reason: LoadFailure) -> Self {
        LoadError { path: path.to_path_buf(), reason }
    }
}

/// A loaded plugin library.
#[derive(Debug)]
pub struct Library {
    path: PathBuf,
    plugins: Vec<PluginInfo>,
    skipped: Vec<String>,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Rust(rust::RustLibrary),
    C(c::CLibrary),
}

/// Loads the plugin library at `path`: an abi_stable Rust library or a C library (see the crate
/// docs for how they are told apart and checked).
///
/// # Errors
/// A [`LoadError`] with the path and the reason; nothing is left half-loaded that the caller
/// must clean up.
pub fn load(path: impl AsRef<Path>) -> Result<Library, LoadError> {
    let given = path.as_ref();
    if !given.is_file() {
        return Err(LoadError::new(given, LoadFailure::NotFound));
    }
    // A path is a path: the dynamic loader would look a bare name such as `libfoo.so` up on the
    // library search path instead of in the current folder.
    let absolute = std::path::absolute(given);
    let path = absolute.as_deref().unwrap_or(given);
    let fail = |reason| LoadError::new(path, reason);
    let lib = dl::open(path).map_err(|e| fail(LoadFailure::Open(e.to_string())))?;
    if c::has_entry(&lib) {
        let c = c::CLibrary::load(lib).map_err(fail)?;
        let plugins = vec![c.info().clone()];
        return Ok(Library { path: path.to_path_buf(), plugins, skipped: Vec::new(), inner: Inner::C(c) });
    }
    if !rust::has_root_module(&lib) {
        return Err(fail(LoadFailure::NoEntryPoint));
    }
    drop(lib);
    let (r, plugins, skipped) = rust::RustLibrary::load(path).map_err(fail)?;
    Ok(Library { path: path.to_path_buf(), plugins, skipped, inner: Inner::Rust(r) })
}

impl Library {
    /// The path it was loaded from.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its ABI.
    #[must_use]
    pub fn abi(&self) -> Abi {
        match self.inner {
            Inner::Rust(_) => Abi::AbiStable,
            Inner::C(_) => Abi::C,
        }
    }

    /// Its plugins (a C library has exactly one).
    #[must_use]
    pub fn plugins(&self) -> &[PluginInfo] {
        &self.plugins
    }

    /// The description of its plugin `name` of `kind`, capabilities included.
    #[must_use]
    pub fn info(&self, kind: PluginKind, name: &str) -> Option<&PluginInfo> {
        self.plugins.iter().find(|p| p.kind == kind && p.name == name)
    }

    /// Plugins of a Rust library that this host cannot use (a kind it does not know, or
    /// capabilities that do not fit the kind), as messages.
    #[must_use]
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// A plugin of a Rust library is made only if it is listed among those this host can use
    /// (one it skipped is refused with the reason).
    fn listed(&self, kind: PluginKind, name: &str) -> Result<(), PluginError> {
        if self.info(kind, name).is_some() {
            return Ok(());
        }
        let why = self.skipped.iter().find(|s| s.starts_with(&format!("plugin {name:?}:")));
        Err(PluginError::UnknownPlugin(match why {
            Some(w) => format!("{kind} {name} (skipped: {w})"),
            None => format!("{kind} {name}"),
        }))
    }

    /// Makes the reward function `name` with its parameters (JSON; empty for defaults).
    ///
    /// # Errors
    /// [`PluginError::UnknownPlugin`] if the library has no reward function of that name (or
    /// this host skipped it), or what the plugin's constructor returns.
    pub fn new_reward(&self, name: &str, params: &str) -> Result<Box<dyn RewardFn>, PluginError> {
        match &self.inner {
            Inner::Rust(r) => {
                self.listed(PluginKind::Reward, name)?;
                r.new_reward(name, params)
            }
            Inner::C(c) => Ok(Box::new(c.instance(PluginKind::Reward, name, params)?)),
        }
    }

    /// Makes the curriculum `name` with its parameters.
    ///
    /// # Errors
    /// As [`Library::new_reward`].
    pub fn new_curriculum(&self, name: &str, params: &str) -> Result<Box<dyn Curriculum>, PluginError> {
        match &self.inner {
            Inner::Rust(r) => {
                self.listed(PluginKind::Curriculum, name)?;
                r.new_curriculum(name, params)
            }
            Inner::C(c) => Ok(Box::new(c.instance(PluginKind::Curriculum, name, params)?)),
        }
    }

    /// Makes the environment engineer `name` with its parameters.
    ///
    /// # Errors
    /// As [`Library::new_reward`].
    pub fn new_engineer(&self, name: &str, params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
        match &self.inner {
            Inner::Rust(r) => {
                self.listed(PluginKind::EnvEngineer, name)?;
                r.new_engineer(name, params)
            }
            Inner::C(c) => Ok(Box::new(c.instance(PluginKind::EnvEngineer, name, params)?)),
        }
    }

    /// Makes the level sampler `name` with its parameters.
    ///
    /// # Errors
    /// As [`Library::new_reward`].
    pub fn new_level_sampler(&self, name: &str, params: &str) -> Result<Box<dyn LevelSampler>, PluginError> {
        match &self.inner {
            Inner::Rust(r) => {
                self.listed(PluginKind::LevelSampler, name)?;
                r.new_level_sampler(name, params)
            }
            Inner::C(c) => Ok(Box::new(c.instance(PluginKind::LevelSampler, name, params)?)),
        }
    }
}
