//! abi_stable libraries: found by their root-module symbol, loaded without abi_stable's
//! per-type cache, and checked (interface version, then layout) before any call. No `unsafe`.

use std::path::Path;

use abi_stable::library::{lib_header_from_path, LibraryError, ROOT_MODULE_LOADER_NAME_WITH_NUL};
use floe_plugin_api::abi::{FfiPluginInfo, FloePluginLibRef};
use floe_plugin_api::{Curriculum, EnvEngineer, LevelSampler, PluginError, PluginInfo, RewardFn};

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

/// The library's plugins with the capabilities it declared (`None`: a library without the root
/// module's `capabilities` field, read with the api's `legacy_capabilities`), and messages for
/// those this host cannot use (an unknown kind, capabilities that do not fit the kind).
fn describe(
    listed: &[FfiPluginInfo],
    declared: Option<&[u32]>,
) -> Result<(Vec<PluginInfo>, Vec<String>), LoadFailure> {
    if let Some(d) = declared.filter(|d| d.len() != listed.len()) {
        return Err(LoadFailure::Malformed(format!(
            "{} plugins listed but capabilities for {}",
            listed.len(),
            d.len()
        )));
    }
    let mut plugins = Vec::new();
    let mut skipped = Vec::new();
    for (i, p) in listed.iter().enumerate() {
        match p.to_info(declared.map(|d| d[i])) {
            Ok(info) => plugins.push(info),
            Err(why) => skipped.push(format!("plugin {:?}: {why}", p.name.as_str())),
        }
    }
    Ok((plugins, skipped))
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
        // A library built before the root module declared capabilities has no such field.
        let declared = match root.capabilities() {
            Some(f) => Some(f().into_result().map_err(|e| LoadFailure::Plugins(e.into()))?.into_vec()),
            None => None,
        };
        let (plugins, skipped) = describe(&listed, declared.as_deref())?;
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

    pub(crate) fn new_level_sampler(
        &self,
        name: &str,
        params: &str,
    ) -> Result<Box<dyn LevelSampler>, PluginError> {
        // A library built before level samplers were appended to the root module has none.
        let make = self.root.new_level_sampler().ok_or_else(|| {
            PluginError::UnknownPlugin(format!("level_sampler {name} (the library has no level samplers)"))
        })?;
        let s = make(name.into(), params.into()).into_result()?;
        Ok(Box::new(s))
    }
}

#[cfg(test)]
mod tests {
    use floe_plugin_api::{Capabilities, PluginKind};

    use super::*;

    fn listed(kind: PluginKind, name: &str) -> FfiPluginInfo {
        FfiPluginInfo { kind: kind.code(), name: name.into(), version: "1".into(), description: "".into() }
    }

    #[test]
    fn declared_capabilities_are_read_and_a_library_without_them_gets_the_default() {
        let list = [listed(PluginKind::Reward, "r"), listed(PluginKind::Curriculum, "c")];
        let (infos, skipped) = describe(&list, Some(&[2, 0][..])).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(infos[0].capabilities, Capabilities::SCORES_STEPS);
        assert_eq!(infos[1].capabilities, Capabilities::NONE);
        // Without the field: what the kind's table offers.
        let (infos, _) = describe(&list, None).unwrap();
        assert_eq!(infos[0].capabilities, Capabilities::SCORES_PLANS.with(Capabilities::SCORES_STEPS));
        assert_eq!(infos[1].capabilities, Capabilities::REPLAYS);
        // A declaration that does not fit its kind skips that plugin; a list of another length
        // is a malformed library.
        let (infos, skipped) = describe(&list, Some(&[0, 4][..])).unwrap();
        assert_eq!(infos.len(), 1);
        assert!(skipped[0].contains("must declare scores_plans"), "{skipped:?}");
        assert!(matches!(describe(&list, Some(&[1][..])), Err(LoadFailure::Malformed(_))));
    }
}
