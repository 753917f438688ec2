//! abi_stable libraries: found by their root-module symbol, loaded without abi_stable's
//! per-type cache, and checked (interface version, then layout) before any call. No `unsafe`.

use std::path::Path;

use abi_stable::library::{lib_header_from_path, LibraryError, ROOT_MODULE_LOADER_NAME_WITH_NUL};
use floe_plugin_api::abi::FloePluginLibRef;
use floe_plugin_api::{Curriculum, EnvEngineer, PluginError, PluginInfo, RewardFn};

use crate::LoadFailure;

/// Whether the library exports an abi_stable root module.
pub(crate) fn has_root_module(lib: &libloading::Library) -> bool {
    crate::dl::has_symbol(lib, ROOT_MODULE_LOADER_NAME_WITH_NUL.as_bytes())
}

fn failure(e: LibraryError) -> LoadFailure {
    match e {
        LibraryError::OpenError { err, .. } => LoadFailure::Open(err.to_string()),
        LibraryError::GetSymbolError { .. } => LoadFailure::NoEntryPoint,
        e @ (LibraryError::ParseVersionError(_) | LibraryError::IncompatibleVersionNumber { .. }) => {
            LoadFailure::Version(e.to_string())
        }
        e @ (LibraryError::AbiInstability(_)
        | LibraryError::InvalidAbiHeader(_)
        | LibraryError::InvalidCAbi { .. }) => {
            let report = e.to_string();
            LoadFailure::Layout { summary: summary(&report), report }
        }
        e @ LibraryError::RootModule { .. } => LoadFailure::RootModule(e.to_string()),
        LibraryError::Many(errors) => {
            let first = errors.into_iter().next();
            first.map_or(LoadFailure::RootModule("unknown error".into()), failure)
        }
    }
}

/// abi_stable's layout report on one line: the text from its last `Error:`, whitespace
/// collapsed, at most 300 characters.
fn summary(report: &str) -> String {
    let tail = report.rfind("Error:").map_or(report, |i| &report[i + "Error:".len()..]);
    let line = tail.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line,
    }
}

/// A loaded abi_stable library.
pub(crate) struct RustLibrary {
    root: FloePluginLibRef,
}

impl std::fmt::Debug for RustLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustLibrary").finish_non_exhaustive()
    }
}

impl RustLibrary {
    /// Loads and checks the library, and lists its plugins (and those of unknown kinds).
    pub(crate) fn load(path: &Path) -> Result<(Self, Vec<PluginInfo>, Vec<String>), LoadFailure> {
        let header = lib_header_from_path(path).map_err(failure)?;
        let root = header.init_root_module::<FloePluginLibRef>().map_err(failure)?;
        let listed = root.plugins()().into_result().map_err(|e| LoadFailure::Plugins(e.into()))?;
        let mut plugins = Vec::new();
        let mut skipped = Vec::new();
        for p in listed.iter() {
            match p.to_info() {
                Ok(info) => plugins.push(info),
                Err(code) => skipped.push(format!("plugin {:?}: unknown kind code {code}", p.name.as_str())),
            }
        }
        Ok((RustLibrary { root }, plugins, skipped))
    }

    pub(crate) fn new_reward(&self, name: &str, params: &str) -> Result<Box<dyn RewardFn>, PluginError> {
        let r = self.root.new_reward()(name.into(), params.into()).into_result()?;
        Ok(Box::new(r))
    }

    pub(crate) fn new_curriculum(
        &self,
        name: &str,
        params: &str,
    ) -> Result<Box<dyn Curriculum>, PluginError> {
        let c = self.root.new_curriculum()(name.into(), params.into()).into_result()?;
        Ok(Box::new(c))
    }

    pub(crate) fn new_engineer(&self, name: &str, params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
        let e = self.root.new_engineer()(name.into(), params.into()).into_result()?;
        Ok(Box::new(e))
    }
}
