//! The root module's type. Its fields after `last_prefix_field` were appended later; abi_stable's
//! derive reads them, when a library has them, with `unsafe` blocks of its own making, which this
//! module allows (nothing here is written with `unsafe`; a test checks the crate for it).

#![allow(unsafe_code)]

use abi_stable::std_types::{RResult, RStr, RVec};
use abi_stable::{
    declare_root_module_statics, library::RootModule, package_version_strings, sabi_types::VersionStrings,
    StableAbi,
};

use super::{FfiCurriculum, FfiEnvEngineer, FfiError, FfiLevelSampler, FfiPluginInfo, FfiRewardFn};

/// The root module of a floe plugin library.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = FloePluginLibRef)))]
pub struct FloePluginLib {
    /// Every plugin of the library.
    pub plugins: extern "C" fn() -> RResult<RVec<FfiPluginInfo>, FfiError>,
    /// Makes a reward function: (name, parameters as JSON; empty for defaults).
    pub new_reward: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiRewardFn, FfiError>,
    /// Makes a curriculum: (name, parameters as JSON).
    pub new_curriculum: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiCurriculum, FfiError>,
    /// Makes an environment engineer: (name, parameters as JSON).
    #[sabi(last_prefix_field)]
    pub new_engineer: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiEnvEngineer, FfiError>,
    /// Appended: the [`Capabilities`](crate::Capabilities) code of every plugin, in the order of
    /// `plugins()`. A host reads it as an `Option`; a library built before it was appended is
    /// read with [`legacy_capabilities`](super::legacy_capabilities).
    pub capabilities: extern "C" fn() -> RResult<RVec<u32>, FfiError>,
    /// Appended: makes a level sampler: (name, parameters as JSON). A library built before it
    /// was appended has no level samplers.
    pub new_level_sampler: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiLevelSampler, FfiError>,
}

impl std::fmt::Debug for FloePluginLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FloePluginLib").finish_non_exhaustive()
    }
}

impl RootModule for FloePluginLibRef {
    declare_root_module_statics! {FloePluginLibRef}
    const BASE_NAME: &'static str = "floe_plugin";
    const NAME: &'static str = "floe_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
